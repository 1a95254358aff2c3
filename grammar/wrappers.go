package grammar

import "strings"

// Wrappers: programs that run a command named on their command line. Their
// options stop at the first operand (the command), after Wrap.Operands
// operands of their own; NoCommand options mean no command runs. Package
// shellparse peels them with this table.
func wrappers() []*Spec {
	w := func(name string, o []Option, wr *Wrap, aliases ...string) *Spec {
		if wr == nil {
			wr = &Wrap{}
		}
		return &Spec{Name: name, Aliases: aliases, StopAtOperand: true, Options: o, Wrap: wr}
	}
	nc := NoCommand
	return []*Spec{
		w("env", gnu(ops(arg("--unset -u", Env), arg("--chdir -C", Chdir), arg("--split-string -S", Exec), arg("--argv0 -a", 0),
			flag("--ignore-environment -i", 0), flag("--null -0", nc), opt("--block-signal", 0), opt("--default-signal", 0),
			opt("--ignore-signal", 0), flag("--list-signal-handling", 0), flag("--debug -v", 0))), &Wrap{Assigns: true}),
		w("sudo", ops(arg("--user -u", 0), arg("--group -g", 0), arg("--host -h", 0), arg("--prompt -p", 0), arg("--close-from -C", 0),
			arg("--chdir -D", Chdir), arg("--role -r", 0), arg("--type -t", 0), arg("--other-user -U", 0), arg("--command-timeout -T", 0),
			arg("--chroot -R", 0), flag("--edit -e", nc), flag("--list -l", nc), flag("--validate -v", nc), flag("--remove-timestamp -K", nc),
			flag("--version -V", nc|DryRun), flag("--help", nc|DryRun), flag("--askpass -A", 0), flag("--background -b", 0), flag("--bell -B", 0),
			opt("--preserve-env -E", 0), flag("--set-home -H", 0), flag("--login -i", Interactive), flag("--reset-timestamp -k", 0),
			flag("--non-interactive -n", 0), flag("--preserve-groups -P", 0), flag("--stdin -S", 0), flag("--shell -s", Interactive)), &Wrap{Assigns: true}, "sudo-rs"),
		// run0 (systemd ≥ 256) runs the command as root in a transient
		// service, as sudo does.
		w("run0", ops(arg("--user -u", 0), arg("--group -g", 0), arg("--nice", 0), arg("--chdir -D", Chdir), arg("--setenv", Env),
			arg("--unit", 0), arg("--property", 0), arg("--description", 0), arg("--slice", 0), arg("--machine", 0), arg("--background", 0),
			arg("--shell-prompt-prefix", 0), flag("--slice-inherit", 0), flag("--no-ask-password", 0), flag("--pty", 0), flag("--pipe", 0),
			flag("--via-shell", 0), flag("-i", 0), flag("--help -h", nc|DryRun), flag("--version -V", nc|DryRun)), nil),
		// dtach -n/-c/-A/-N SOCKET CMD… starts CMD in a session; -a and -p
		// attach to or feed an existing one.
		w("dtach", ops(arg("-n", 0), arg("-c", 0), arg("-A", 0), arg("-N", 0), argE("-a", 0, nc), argE("-p", 0, nc), arg("-e", 0), arg("-r", 0),
			flag("-E", 0), flag("-z", 0), flag("--help -h", nc|DryRun)), nil),
		// entr runs its utility once at start and on every change; with -s
		// the utility is a shell script (shellparse reads it so).
		w("entr", ops(flag("-s", 0), flag("-a", 0), flag("-c", 0), flag("-d", 0), flag("-n", 0), flag("-p", 0), flag("-r", 0), flag("-x", 0), flag("-z", 0)), nil),
		// The daemontools, runit and s6 chain-loaders exec the rest of
		// their arguments after their own operands.
		w("softlimit", ops(arg("-m", 0), arg("-a", 0), arg("-d", 0), arg("-s", 0), arg("-l", 0), arg("-f", 0), arg("-c", 0), arg("-o", 0), arg("-p", 0), arg("-t", 0), arg("-r", 0)), nil, "s6-softlimit"),
		w("envdir", nil, &Wrap{Operands: 1}, "setuidgid", "envuidgid", "s6-envdir", "s6-setuidgid", "s6-envuidgid"),
		w("setlock", ops(flag("-n", 0), flag("-N", 0), flag("-x", 0), flag("-X", 0)), &Wrap{Operands: 1}, "s6-setlock"),
		w("pgrphack", nil, nil, "fghack", "argv0", "s6-setsid"),
		w("doas", ops(arg("-u", 0), arg("-C", nc), flag("-L", nc), flag("-n", 0), flag("-s", Interactive)), nil),
		w("pkexec", ops(arg("--user", 0), flag("--disable-internal-agent", 0), flag("--keep-cwd", 0), flag("--version", nc), flag("--help", nc)), nil),
		w("nice", gnu(args("--adjustment -n")), nil),
		w("nohup", gnuHelp(), nil),
		w("setsid", gnu(flags("--ctty -c --fork -f --wait -w")), nil),
		w("timeout", gnu(args("--signal -s --kill-after -k"), flags("--foreground --preserve-status --verbose -v")), &Wrap{Operands: 1}),
		w("time", gnu(ops(arg("--format -f", 0), arg("--output -o", Write)), flags("--append -a --portability -p --verbose -v --quiet -q")), nil),
		w("stdbuf", gnu(args("--input -i --output -o --error -e")), nil),
		w("ionice", gnu(ops(arg("--class -c", 0), arg("--classdata -n", 0), argE("--pid -p", 0, nc), argE("--pgid -P", 0, nc), argE("--uid -u", 0, nc)), flags("--ignore -t")), nil),
		w("chrt", gnu(ops(flag("--pid -p", nc), flag("--max -m", nc)), args("--sched-runtime -T --sched-period -P --sched-deadline -D"),
			flags("--all-tasks -a --batch -b --deadline -d --fifo -f --idle -i --other -o --rr -r --reset-on-fork -R --verbose -v --ext -e")), &Wrap{Operands: 1}),
		w("taskset", gnu(ops(flag("--pid -p", nc)), flags("--all-tasks -a --cpu-list -c")), &Wrap{Operands: 1}),
		w("exec", ops(arg("-a", 0), flag("-c", 0), flag("-l", 0)), nil),
		w("command", ops(flag("-v", nc), flag("-V", nc), flag("-p", 0)), nil),
		w("builtin", nil, nil),
		w("xargs", gnu(ops(flag("--null -0", 0), arg("--arg-file -a", Read), arg("--delimiter -d", 0), arg("-E", 0), opt("--eof -e", 0),
			arg("-I", 0), opt("--replace -i", 0), arg("--max-lines -L", 0), opt("-l", 0), arg("--max-args -n", 0), arg("--max-procs -P", 0),
			flag("--interactive -p", 0), arg("--process-slot-var", 0), flag("--no-run-if-empty -r", 0), arg("--max-chars -s", 0),
			flag("--show-limits", 0), flag("--verbose -t", 0), flag("--exit -x", 0), flag("--open-tty -o", 0))), &Wrap{ExtraArgs: true}),
		w("nsenter", gnu(ops(arg("--target -t", 0), arg("--setuid -S", 0), arg("--setgid -G", 0), arg("--wdns -W", 0), arg("--env -e", 0),
			opt("--mount -m", 0), opt("--uts -u", 0), opt("--ipc -i", 0), opt("--net -n", 0), opt("--pid -p", 0), opt("--user -U", 0),
			opt("--cgroup -C", 0), opt("--time -T", 0), opt("--root -r", 0), opt("--wd -w", Chdir)),
			flags("--all -a --preserve-credentials --no-fork -F --follow-context -Z --keep-caps --join-cgroup -c --user-parent")), nil),
		w("unshare", gnu(ops(opt("--mount -m", 0), opt("--uts -u", 0), opt("--ipc -i", 0), opt("--net -n", 0), opt("--pid -p", 0),
			opt("--user -U", 0), opt("--cgroup -C", 0), opt("--time -T", 0), opt("--kill-child", 0), opt("--mount-proc", 0),
			opt("--map-user", 0), opt("--map-group", 0), opt("--map-users", 0), opt("--map-groups", 0)),
			ops(arg("--wd -w", Chdir)), args("--propagation --setgroups --root -R --setuid -S --setgid -G --monotonic --boottime --load-interp -l"),
			flags("--fork -f --map-root-user -r --map-current-user -c --map-auto --keep-caps")), nil),
		w("chroot", gnu(args("--userspec --groups"), flags("--skip-chdir")), &Wrap{Operands: 1}),
		w("strace", ops(arg("-o --output", Write|Pipe), arg("-e", 0), arg("-p --attach", 0), arg("-u --user", 0), arg("-E --env", Env),
			arg("-a --columns", 0), arg("-b --detach-on", 0), arg("-I", 0), arg("-O", 0), arg("-P --trace-path", 0), arg("-s --string-limit", 0),
			arg("-S --summary-sort-by", 0), arg("-X", 0), arg("-U --summary-columns", 0), opt("--trace", 0), opt("--signal", 0),
			flag("-V --version", nc|DryRun), flag("-h --help", nc|DryRun), flag("-f", 0), flag("-F", 0), flag("-ff", 0), flag("-q", 0), flag("-c", 0),
			flag("-C", 0), flag("-d", 0), flag("-D", 0), flag("-i", 0), flag("-k", 0), flag("-n", 0), flag("-r", 0), flag("-t", 0), flag("-T", 0),
			flag("-v", 0), flag("-w", 0), flag("-x", 0), flag("-y", 0), flag("-z", 0), flag("-Z", 0), flag("--follow-forks", 0)), nil),
		w("ltrace", ops(arg("-o --output", Write), arg("-e", 0), arg("-p", 0), arg("-a --align", 0), arg("-A", 0), arg("-F --config", Config),
			arg("-l --library", 0), arg("-n --indent", 0), arg("-s", 0), arg("-u", 0), arg("-w --where", 0), arg("-x", 0), arg("-X", 0),
			arg("-L", 0), flag("-V --version", nc|DryRun), flag("-h --help", nc|DryRun), flag("-b", 0), flag("-c", 0), flag("-C", 0), flag("-D", 0),
			flag("-f", 0), flag("-i", 0), flag("-r", 0), flag("-S", 0), flag("-t", 0), flag("-tt", 0), flag("-ttt", 0), flag("-T", 0)), nil),
		w("valgrind", ops(opt("--log-file", Write), opt("--xml-file", Write), opt("--db-command", Exec), opt("--vgdb-prefix", Exec),
			flag("--version", nc|DryRun), flag("--help -h", nc|DryRun), flag("-q --quiet", 0), flag("-v --verbose", 0)), nil),
		permute(w("setarch", gnu(flags("--uname-2.6 -v --verbose -R --addr-no-randomize -F --fdpic-funcptrs -Z --mmap-page-zero -L --addr-compat-layout "+
			"-X --read-implies-exec -B --32bit -I --short-inode -S --whole-seconds -T --sticky-timeouts -3 --3gb --4gb --list")), &Wrap{Operands: 1})),
		w("linux32", gnu(flags("--uname-2.6 -v --verbose -R --addr-no-randomize -F -Z -L -X -B -I -S -T -3 --3gb --4gb")), nil, "linux64", "i386", "x86_64"),
		w("prlimit", gnu(ops(argE("--pid -p", 0, nc), opt("--as -v", 0), opt("--core -c", 0), opt("--cpu -t", 0), opt("--data -d", 0),
			opt("--fsize -f", 0), opt("--locks -x", 0), opt("--memlock -l", 0), opt("--msgqueue -q", 0), opt("--nice -e", 0),
			opt("--nofile -n", 0), opt("--nproc -u", 0), opt("--rss -m", 0), opt("--rtprio -r", 0), opt("--rttime -y", 0),
			opt("--sigpending -i", 0), opt("--stack -s", 0), arg("--output -o", 0)), flags("--noheadings --raw --verbose --json")), nil),
		w("choom", gnu(ops(argE("--pid -p", 0, nc), arg("--adjust -n", 0))), nil),
		w("ssh-agent", ops(arg("-a", 0), arg("-E", 0), arg("-P", 0), arg("-t", 0), arg("-O", 0), flag("-k", nc), flag("-c", 0), flag("-s", 0), flag("-D", 0), flag("-d", 0)), nil),
		w("gosu", nil, &Wrap{Operands: 1}, "su-exec"),
		w("setpriv", gnu(ops(flag("--dump -d", nc), flag("--list-caps", nc)),
			args("--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set --securebits --selinux-label --apparmor-profile --landlock-access --landlock-rule --pdeathsig"),
			flags("--clear-groups --keep-groups --init-groups --nnp --no-new-privs --reset-env")), nil),
		w("numactl", gnu(ops(flag("--show -s", nc), flag("--hardware -H", nc)), args("--physcpubind -C --cpunodebind -N --membind -m --preferred -p --interleave -i --preferred-many -P --weighted-interleave -w"),
			flags("--localalloc -l --all -a --balancing -b --touch -t --strict --offset")), nil),
		w("cgexec", ops(arg("-g", 0), flag("--sticky", 0)), nil),
		w("faketime", ops(arg("-p", 0), arg("--date-prog", Exec), flag("-f", 0), flag("-m", 0), flag("--exclude-monotonic", 0)), &Wrap{Operands: 1}),
		w("fakeroot", ops(arg("--lib -l", 0), arg("--faked", Exec), arg("-s", Write), arg("-i", Read), arg("-b", 0), flag("--unknown-is-real -u", 0), flag("-v --version", nc), flag("-h --help", nc)), nil),
		w("eatmydata", nil, nil, "catchsegv", "tsocks", "firejail", "dbus-launch"),
		w("unbuffer", ops(flag("-p", 0)), nil),
		w("dbus-run-session", ops(arg("--config-file", Config), arg("--dbus-daemon", Exec), flag("--version", nc), flag("--help", nc)), nil),
		w("torsocks", ops(arg("-u --user", 0), arg("-p --pass", 0), arg("-a --address", 0), arg("-P --port", 0), flag("-i --isolate", 0), flag("-d --debug", 0), flag("-q --quiet", 0), flag("--shell", Interactive)), nil),
		w("proxychains", ops(arg("-f", Config), flag("-q", 0)), nil, "proxychains4"),
		w("caffeinate", ops(arg("-t", 0), arg("-w", 0), flag("-d", 0), flag("-i", 0), flag("-m", 0), flag("-s", 0), flag("-u", 0)), nil),
		// systemd-run's unit properties run commands (ExecStartPost=…)
		// or act on the machine when the unit ends (SuccessAction=reboot).
		systemdRun(w("systemd-run", gnu(ops(arg("--unit -u", 0), arg("--property -p", Config), arg("--setenv -E", Env), arg("--host -H", 0), arg("--machine -M", 0),
			arg("--description", 0), arg("--slice", 0), arg("--uid", 0), arg("--gid", 0), arg("--working-directory", Chdir), arg("--on-calendar", 0),
			arg("--on-active", 0), arg("--on-boot", 0), arg("--on-startup", 0), arg("--on-unit-active", 0), arg("--on-unit-inactive", 0),
			arg("--timer-property", Config), arg("--path-property", Config), arg("--socket-property", Config), arg("--service-type", 0), arg("--nice", 0),
			arg("--capsule -C", 0), opt("--expand-environment", 0), flag("--shell -S", Interactive)),
			flags("--user --system --scope --pty -t --pipe -P --collect -G --quiet -q --wait --no-block --remain-after-exit -r --same-dir -d --no-ask-password --send-sighup --json")), nil)),
		w("systemd-inhibit", gnu(ops(arg("--what", 0), arg("--who", 0), arg("--why", 0), arg("--mode", 0), flag("--list", nc)), flags("--no-pager --no-legend --no-ask-password")), nil),
		w("flatpak-spawn", ops(arg("--env", Env), arg("--directory", 0), flag("--host", 0), flag("--clear-env", 0)), nil),
		w("run-one", nil, nil, "run-this-one", "keep-one-running"),
		w("chpst", ops(arg("-u", 0), arg("-U", 0), arg("-e", 0), arg("-/", 0), arg("-n", 0), arg("-l", 0), arg("-L", 0), arg("-m", 0), arg("-d", 0), arg("-o", 0), arg("-p", 0), arg("-f", 0), arg("-c", 0), arg("-r", 0), arg("-t", 0), flag("-P", 0), flag("-v", 0)), nil),
		// machinectl shell [USER@]MACHINE CMD…: ".host" is this machine.
		{Name: "machinectl", Persistent: true, Options: gnu(args("--host -H --machine -M --property -p --signal -s --kill-whom --uid --setenv -E --output -o --lines -n --format --verify"),
			flags("--all -a --value -l --full --no-pager --no-legend --no-ask-password --quiet -q --read-only --mkdir --force")),
			Subs: []*Spec{{Name: "shell", StopAtOperand: true, Wrap: &Wrap{Operands: 1}}}},
		// Environment and version managers run a command with their tools
		// on PATH. mise exec takes TOOL@VERSION words before "--"; they
		// are read as the command when "--" is missing, which is also
		// what mise does with a word it cannot resolve as a tool.
		{Name: "mise", Aliases: []string{"rtx"}, Persistent: true, Options: gnu(args("--cd -C --env -E --jobs -j"), flags("--quiet -q --verbose -v --yes -y")),
			Subs: []*Spec{refined(runSub("exec x", ops(arg("--command -c", Exec), arg("--jobs -j", 0), flag("--raw", 0), flag("--fresh-env", 0))), afterDashDash),
				runSub("run r", ops(arg("--jobs -j", 0), flag("--raw", 0), flag("--force -f", 0)))}},
		{Name: "asdf", Subs: []*Spec{runSub("exec", nil)}},
		{Name: "rbenv", Aliases: []string{"pyenv", "nodenv", "goenv", "jenv", "plenv"}, Subs: []*Spec{runSub("exec", nil)}},
		{Name: "opam", Subs: []*Spec{runSub("exec", gnu(args("--switch --root"), flags("--set-switch --set-root")))}},
		{Name: "stack", Persistent: true, Options: gnu(args("--stack-yaml --resolver --work-dir")), Subs: []*Spec{runSub("exec", gnu(args("--package --cwd"), flags("--no-ghc-package-path --rts-options")))}},
		{Name: "direnv", Subs: []*Spec{runSub("exec", nil, 1)}},
		{Name: "pixi", Aliases: []string{"rye"}, Persistent: true, Options: gnu(args("--manifest-path --environment -e --color")), Subs: []*Spec{runSub("run", flags("--frozen --locked --clean-env"))}},
		// nix develop / nix shell run the command after -c/--command (and
		// an interactive shell without it); nix-shell is in system.go.
		{Name: "nix", Persistent: true, Options: gnu(args("--option --extra-experimental-features --experimental-features --store -I --include")),
			Subs: []*Spec{nixCommand("develop"), nixCommand("shell")}},
		// The dynamic loader run as a program runs its first operand.
		w("ld.so", ops(arg("--library-path", 0), arg("--inhibit-rpath", 0), arg("--audit", Exec), arg("--preload", Exec), arg("--argv0", 0),
			arg("--glibc-hwcaps-prepend", 0), arg("--glibc-hwcaps-mask", 0), flag("--inhibit-cache", 0), flag("--verify", nc), flag("--list", nc),
			flag("--list-tunables", nc), flag("--list-diagnostics", nc), flag("--help", nc|DryRun), flag("--version", nc|DryRun)), nil,
			"ld-linux.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld-linux-armhf.so.3", "ld-linux-riscv64-lp64d.so.1", "ld-musl-x86_64.so.1", "ld-musl-aarch64.so.1", "ld64.so.2"),
		// perf record/stat/trace and rr record run the workload command.
		{Name: "perf", Subs: []*Spec{
			runSub("stat", ops(arg("--output -o", Write), arg("--event -e", 0), arg("--pid -p", 0), arg("--tid -t", 0), arg("--cpu -C", 0), arg("--repeat -r", 0),
				arg("-x --field-separator", 0), arg("--delay -D", 0), arg("--interval-print -I", 0), flag("--all-cpus -a", 0), flag("--verbose -v", 0),
				flag("--scale -c", 0), flag("--detailed -d", 0), flag("--no-inherit -i", 0), flag("--append", 0))),
			runSub("record", ops(arg("--output -o", Write), arg("--event -e", 0), arg("--pid -p", 0), arg("--tid -t", 0), arg("--cpu -C", 0), arg("--freq -F", 0),
				arg("--count -c", 0), opt("--call-graph", 0), arg("--mmap-pages -m", 0), flag("-g", 0), flag("--all-cpus -a", 0), flag("--quiet -q", 0),
				flag("--verbose -v", 0), flag("--stat -s", 0), flag("--no-inherit -i", 0))),
			runSub("trace", ops(arg("--output -o", Write), arg("--event -e", 0), arg("--pid -p", 0), flag("--all-cpus -a", 0))),
		}},
		{Name: "rr", Subs: []*Spec{runSub("record", ops(arg("--output-trace-dir -o", 0), flag("--chaos -h", 0), flag("-n", 0)))}},
		// bubblewrap's mount options take one or two values; the command
		// is its first operand.
		refined(w("bwrap", join(args("--args --argv0 --userns --userns2 --pidns --uid --gid --hostname --chdir --unsetenv --lock-file --sync-fd --dev --proc --tmpfs --mqueue "+
			"--dir --remount-ro --seccomp --add-seccomp-fd --info-fd --json-status-fd --block-fd --userns-block-fd --cap-add --cap-drop --perms --size --exec-label --file-label"),
			flags("--unshare-all --share-net --unshare-user --unshare-user-try --unshare-ipc --unshare-pid --unshare-net --unshare-uts --unshare-cgroup --unshare-cgroup-try "+
				"--clearenv --new-session --die-with-parent --as-pid-1 --disable-userns --assert-userns-disabled --help --version")), nil), refineBwrap),
		// The moreutils, SELinux, AppArmor and other one-word wrappers
		// exec their command; logsave, lckdo and runcon take one operand
		// first (the log file, the lock file, the context).
		w("chronic", ops(flag("-e", 0), flag("-v", 0)), nil, "ifne", "nocache", "rlwrap", "fakechroot", "xvfb-run", "trickle", "daemonize",
			"qemu-x86_64", "qemu-i386", "qemu-aarch64", "qemu-arm", "qemu-riscv64", "qemu-x86_64-static", "qemu-aarch64-static", "qemu-arm-static"),
		w("logsave", ops(flag("-a", 0), flag("-s", 0), flag("-v", 0)), &Wrap{Operands: 1}, "lckdo"),
		// runcon CONTEXT CMD, or runcon -t TYPE … CMD without a context.
		refined(w("runcon", gnu(args("--user -u --role -r --type -t --range -l"), flags("--compute -c")), &Wrap{Operands: 1}), func(inv *Invocation) {
			if inv.Command < 0 && len(inv.Options) > 0 && len(inv.Operands) > 0 && !inv.Effects.Has(DryRun) {
				inv.Command = inv.Operands[0].Arg
			}
		}),
		w("aa-exec", ops(arg("--profile -p", 0), arg("--namespace -n", 0), flag("--immediate -i", 0), flag("--verbose -v", 0), flag("--debug -d", 0), flag("--help -h", nc|DryRun)), nil),
		w("cpulimit", ops(arg("--limit -l", 0), arg("--pid -p", nc), arg("--exe -e", nc), arg("--path -P", nc), flag("--lazy -z", 0), flag("--include-children -i", 0), flag("--verbose -v", 0)), nil),
		w("proot", ops(arg("-r --rootfs", 0), arg("-b --bind -m --mount", 0), arg("-w --pwd --cwd", Chdir), arg("-q --qemu", Exec), flag("-0 --root-id", 0), flag("-i", 0), flag("-v --verbose", 0)), nil),
		// hyperfine runs each operand (and its hook options) through the
		// shell, several times: each is as dangerous as that command.
		{Name: "hyperfine", Operands: []OperandRule{{All: true, Effects: Program}}, Options: gnu(
			argsV("--prepare -p --conclude --setup -s --cleanup -c", Program), argsV("--shell -S", Exec),
			argsV("--export-csv --export-json --export-markdown --export-asciidoc --export-orgmode --output", Write),
			args("--warmup -w --min-runs -m --max-runs -M --runs -r --parameter-scan -P --parameter-step-size -D --parameter-list -L --style --sort --time-unit -u --command-name -n --input"),
			flags("-N --ignore-failure -i --show-output"))},
		// execline's execlineb -c SCRIPT runs a script (its -P/-p/-S
		// forms read a file).
		w("execlineb", ops(arg("-c", Exec), flag("-P", 0), flag("-p", 0), arg("-S", 0), flag("-q", 0), flag("-w", 0), flag("-W", 0)), nil),
		// cmake -E env [NAME=VALUE…] CMD and cmake -E time CMD run CMD.
		{Name: "cmake", Wrap: &Wrap{}, Refine: refineCmake, Stdin: &Script{Lang: "cmake", Shell: CMakeCommands, From: []string{"-P"}}, Options: ops(arg("-P", Read), arg("-D", 0), arg("-C", Read), arg("-G", 0), arg("-S", 0), arg("-B", 0),
			arg("-T", 0), arg("-A", 0), arg("--build", 0), arg("--install", 0), flag("--version", DryRun), flag("--help", DryRun), flag("-E", 0))},
		{Name: "ip", Subs: []*Spec{{Name: "netns", Subs: []*Spec{{Name: "exec", StopAtOperand: true, Wrap: &Wrap{Operands: 1}}}},
			{Name: "vrf", Subs: []*Spec{{Name: "exec", StopAtOperand: true, Wrap: &Wrap{Operands: 1}}}}}},
	}
}

// afterDashDash: a "--" after the first operand ends the wrapper's own
// words ("mise exec node@20 -- CMD").
func afterDashDash(inv *Invocation) {
	if inv.Command < 0 {
		return
	}
	for i := inv.Command; i+1 < len(inv.Args); i++ {
		if inv.Args[i] == "--" {
			inv.Command = i + 1
			return
		}
	}
}

// refined sets a wrapper's Refine.
func refined(s *Spec, f func(*Invocation)) *Spec {
	s.Refine = f
	return s
}

// permute makes a wrapper read options between its own operands and the
// command ("setarch ARCH -R cmd").
func permute(s *Spec) *Spec {
	s.StopAtOperand = false
	return s
}

// systemdRun adds what systemd-run's unit properties do: the Exec*= ones
// run their command line; SuccessAction=, FailureAction= and the other
// *Action= properties halt, reboot or power off the machine when the
// unit ends ("-p SuccessAction=reboot true").
func systemdRun(s *Spec) *Spec {
	s.ExecKeys = []string{"execstart", "execstop", "execcondition", "execreload"}
	s.Refine = func(inv *Invocation) {
		for _, o := range inv.Options {
			if !o.HasValue || !o.ValueEffects.Has(Config) {
				continue
			}
			k, v, _ := strings.Cut(o.Value, "=")
			if strings.HasSuffix(strings.ToLower(strings.TrimSpace(k)), "action") && powerAction(v) {
				inv.Effects |= Power
			}
		}
	}
	return s
}

// powerAction reports whether a systemd unit action (SuccessAction=,
// FailureAction=, StartLimitAction=, JobTimeoutAction= …) halts, reboots,
// powers off or kexecs the machine: reboot, reboot-force,
// poweroff-immediate, soft-reboot, halt, kexec, exit (in the system
// manager: the same as poweroff).
func powerAction(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, p := range [...]string{"reboot", "poweroff", "halt", "kexec", "soft-reboot", "exit"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// nixCommand is a nix subcommand that runs the command after -c/--command
// and an interactive shell without one; installables may come first.
func nixCommand(name string) *Spec {
	return &Spec{Name: name, Wrap: &Wrap{}, Options: ops(flag("--command -c", 0), flag("--impure", 0), flag("--ignore-environment -i", 0),
		arg("--keep -k", 0), arg("--unset -u", 0), arg("--expr", 0), arg("--file -f", 0), arg("--profile", 0), arg("--phase", 0), flag("--unpack", 0)),
		Refine: func(inv *Invocation) {
			inv.Command = -1
			for i, a := range inv.Args {
				if a == "--" {
					break
				}
				if (a == "-c" || a == "--command") && i+1 < len(inv.Args) {
					inv.Command = i + 1
					return
				}
			}
			inv.Effects |= Interactive
		}}
}

// bwrapArity is how many words follow each bubblewrap option that takes
// values; the command is the first word after all options.
var bwrapArity = func() map[string]int {
	m := map[string]int{}
	for _, n := range strings.Fields("--args --argv0 --userns --userns2 --pidns --uid --gid --hostname --chdir --unsetenv --lock-file --sync-fd --dev --proc " +
		"--tmpfs --mqueue --dir --remount-ro --seccomp --add-seccomp-fd --info-fd --json-status-fd --block-fd --userns-block-fd --cap-add --cap-drop " +
		"--perms --size --exec-label --file-label --overlay-src --tmp-overlay --ro-overlay") {
		m[n] = 1
	}
	for _, n := range strings.Fields("--bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try --symlink --file --bind-data --ro-bind-data --setenv --chmod --overlay") {
		m[n] = 2
	}
	return m
}()

// refineBwrap finds bwrap's command past options with two values.
func refineBwrap(inv *Invocation) {
	inv.Command = -1
	for i := 0; i < len(inv.Args); i++ {
		a := inv.Args[i]
		switch {
		case a == "--":
			if i+1 < len(inv.Args) {
				inv.Command = i + 1
			}
			return
		case strings.HasPrefix(a, "--"):
			i += bwrapArity[a]
		default:
			inv.Command = i
			return
		}
	}
}

// refineCmake reads cmake's command-line tool mode: "-E env
// [NAME=VALUE…] CMD" and "-E time CMD" run CMD; "-P FILE" runs a CMake
// script, read from standard input for /dev/stdin or "-".
func refineCmake(inv *Invocation) {
	inv.Command = -1
	args := inv.Args
	if v, ok := inv.Value("-P"); ok && IsStdinPath(v) {
		inv.Effects |= Interactive
	}
	if len(args) < 2 || args[0] != "-E" {
		return
	}
	switch args[1] {
	case "time":
		if len(args) > 2 {
			inv.Command = 2
		}
	case "env":
		for i := 2; i < len(args); i++ {
			switch a := args[i]; {
			case a == "--":
				if i+1 < len(args) {
					inv.Command = i + 1
				}
				return
			case strings.HasPrefix(a, "--unset") || a == "--modify":
				if a == "--modify" {
					i++
				}
			case isAssign(a):
				inv.Assigns = append(inv.Assigns, a)
			default:
				inv.Command = i
				return
			}
		}
	}
}
