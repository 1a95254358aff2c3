package grammar

import "strings"

// System administration: firewalls, accounts, mounts, schedulers,
// services, databases, and the wrappers whose command is an option's value
// (su -c, script -c, flock -c, start-stop-daemon --exec).
func system() []*Spec {
	acct := []string{"passwd", "chpasswd", "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod",
		"adduser", "deluser", "addgroup", "delgroup", "visudo", "vipw", "vigr", "chsh", "chfn", "chage", "gpasswd", "newusers", "pwconv", "grpconv"}
	iptables := &Spec{Name: "iptables", Aliases: []string{"ip6tables", "iptables-legacy", "iptables-nft", "ip6tables-legacy", "ip6tables-nft", "ebtables", "arptables"},
		Options: gnu(ops(optE("--flush -F", 0, Firewall), optE("--delete-chain -X", 0, Firewall), argE("--policy -P", 0, Firewall), argE("--delete -D", 0, Firewall),
			arg("--table -t", 0), arg("--append -A", 0), arg("--insert -I", 0), arg("--new-chain -N", 0), arg("--rename-chain -E", 0),
			arg("--replace -R", 0), optE("--list -L", 0, DryRun), optE("--list-rules -S", 0, DryRun), opt("--zero -Z", 0), arg("--jump -j", 0), arg("--goto -g", 0),
			arg("--source -s", 0), arg("--destination -d", 0), arg("--protocol -p", 0), arg("--in-interface -i", 0), arg("--out-interface -o", 0),
			arg("--match -m", 0), arg("--wait -w", 0)), args("--dport --sport --to-destination --to-source --to-ports --state --ctstate --comment --set-mark --log-prefix"),
			flags("-n --numeric -v --verbose -x --exact --line-numbers -4 -6"))}
	var out []*Spec
	for _, a := range acct {
		out = append(out, &Spec{Name: a, Effects: Accounts, Options: gnuHelp()})
	}
	mount := func(name string, aliases ...string) *Spec {
		return &Spec{Name: name, Aliases: aliases, Options: gnu(args("-t --types -o --options -L --label -U --uuid -O --test-opts -N --namespace --target --source -B --bind"),
			flags("-a --all -f --fake -n --no-mtab -r --read-only -w --rw -v --verbose -l --lazy -R --recursive --make-private --make-rshared --move -M")),
			Refine: func(inv *Invocation) {
				if len(inv.Operands) > 0 || inv.Has("-a") || inv.Has("--all") {
					inv.Effects |= Mount
				}
			}}
	}
	suOpts := gnu(ops(arg("--command -c", Exec), arg("--session-command", Exec), arg("--shell -s", Exec), arg("--group -g", 0), arg("--supp-group -G", 0),
		arg("--whitelist-environment -w", 0), arg("--user -u", 0)), flags("--login -l --preserve-environment -m -p --pty -P --fast -f"))
	return append(out,
		// Kernel modules: insmod and rmmod always act; modprobe loads the
		// configured modules of its name (routine) unless it removes (-r)
		// or is given a module file.
		&Spec{Name: "insmod", Effects: Kernel, Options: gnu(flags("-f --force -p --syslog -s -v --verbose"))},
		&Spec{Name: "rmmod", Effects: Kernel, Options: gnu(flags("-f --force -s --syslog -v --verbose -w --wait"))},
		&Spec{Name: "modprobe", Refine: func(inv *Invocation) {
			for _, op := range inv.Operands {
				if strings.Contains(op.Value, "/") || strings.HasSuffix(op.Value, ".ko") || strings.Contains(op.Value, ".ko.") {
					inv.Effects |= Kernel
				}
			}
		}, Options: gnu(ops(flag("--remove -r", Kernel), flag("--remove-dependencies", Kernel), flag("--dry-run --show -n", DryRun), flag("--show-depends -D", DryRun),
			flag("--showconfig --show-config -c", DryRun), flag("--force -f", 0), flag("--force-modversion", 0), flag("--force-vermagic", 0),
			arg("--config -C", Config), arg("--dirname -d", 0), arg("--set-version -S", 0)), flags("-a --all -b --use-blacklist -i --ignore-install --ignore-remove -q --quiet -s --syslog -v --verbose --first-time"))},
		iptables,
		&Spec{Name: "nft", Refine: func(inv *Invocation) {
			for _, op := range inv.Operands {
				if op.Value == "flush" || op.Value == "delete" || op.Value == "destroy" {
					inv.Effects |= Firewall
				}
			}
		}, Options: gnu(args("-f --file -I --includepath"), flags("-a --handle -n --numeric -s --stateless -j --json -c --check -e --echo -y -t"))},
		&Spec{Name: "ufw", Subs: []*Spec{sub("disable reset delete", Firewall), sub("status enable allow deny limit app", 0)}, Options: flags("--dry-run --force")},
		mount("mount"), mount("umount", "swapoff", "swapon"),
		&Spec{Name: "crontab", Operands: []OperandRule{{All: true, Invocation: Schedule}}, Refine: refineCrontab,
			Stdin: &Script{Lang: "crontab", Shell: CronCommands}, Options: ops(flag("-r", Schedule), flag("-e", Schedule), flag("-l", DryRun), arg("-u", 0), flag("-i", 0), arg("-s", 0), flag("-n", 0), flag("-c", 0))},
		&Spec{Name: "at", Aliases: []string{"batch"}, Effects: Schedule, Refine: refineAt,
			Stdin: &Script{Lang: "shell", Shell: shellScript, From: []string{"-f"}}, Options: ops(flag("-l", DryRun), arg("-f", Read), arg("-q", 0), arg("-t", 0), flag("-m", 0), flag("-M", 0), flag("-v", 0), flag("-V", DryRun), flag("-c", DryRun), flag("-r -d", 0))},
		&Spec{Name: "service", Aliases: []string{"rc-service"}, Operands: []OperandRule{{Index: 1, Values: values(ServiceStop, "stop restart force-reload zap try-restart condrestart")}, {Index: 0, Effects: Target}}},
		&Spec{Name: "launchctl", Subs: []*Spec{sub("bootout unload remove stop kill disable", ServiceStop)}},
		// Indirect names: "hash -p PATH NAME" and "enable -f LIB NAME" make
		// NAME run other code.
		&Spec{Name: "hash", Options: ops(arg("-p", Exec), flag("-r", 0), flag("-d", 0), flag("-l", 0), flag("-t", 0))},
		&Spec{Name: "enable", Options: ops(arg("-f", Exec), flag("-d", 0), flag("-n", 0), flag("-a", 0), flag("-p", 0), flag("-s", 0))},
		&Spec{Name: "dropdb", Aliases: []string{"dropuser"}, Effects: DBDrop},
		&Spec{Name: "su", Aliases: []string{"runuser"}, Options: suOpts},
		// newgrp execs the user's shell, which reads commands from a
		// standard input that is not a terminal.
		&Spec{Name: "newgrp", Effects: Interactive, Stdin: &Script{Lang: "shell", Shell: shellScript}, Options: flags("-")},
		&Spec{Name: "script", Options: gnu(ops(arg("--command -c", Exec), arg("--echo -E", 0), arg("--log-in -I", Write), arg("--log-out -O", Write),
			arg("--log-io -B", Write), arg("--log-timing -T", Write), opt("--timing -t", Write), arg("--logging-format -m", 0), arg("--output-limit", 0)),
			flags("--append -a --return -e --flush -f --force --quiet -q")), Operands: []OperandRule{{Index: 0, Effects: Write}},
			Refine: func(inv *Invocation) {
				if !inv.Has("--command") {
					inv.Effects |= Interactive
				}
			}},
		// nix-shell --run/--command CMD runs CMD in a shell; it permutes
		// its options.
		&Spec{Name: "nix-shell", Options: ops(arg("--run", Exec), arg("--command", Exec), arg("--packages -p", 0), arg("--attr -A", 0),
			arg("-I --include", 0), arg("--expr -E", 0), arg("--arg", 0), arg("--argstr", 0), arg("--option", 0), arg("--keep", 0),
			arg("--exclude", 0), flag("--pure", 0), flag("--impure", 0))},
		// GNU parallel: options end at the command (Getopt::Long's
		// require_order); the command runs in a shell with each input.
		&Spec{Name: "parallel", StopAtOperand: true, Options: join(
			args("--jobs -j --sshlogin -S -I --delimiter -d -E --arg-file -a -N --max-args -n -L --max-lines -P --colsep --results --joblog --timeout --tmpdir --workdir --env"),
			flags("--keep-order -k --verbose -v --dry-run --halt --line-buffer --tag --quote -q --null -0 --xargs -X -m --pipe --group --ungroup -u --bar --eta --progress"))},
		&Spec{Name: "flock", StopAtOperand: true, Options: gnu(ops(arg("--timeout --wait -w", 0), arg("--conflict-exit-code -E", 0), arg("--command -c", Exec)),
			flags("--shared -s --exclusive -x -e --unlock -u --nonblock --nb -n --close -o --no-fork -F --verbose"))},
		&Spec{Name: "watch", StopAtOperand: true, Options: gnu(ops(arg("--interval -n", 0), opt("--differences -d", 0), arg("--equexit -q", 0), flag("--exec -x", 0)),
			flags("--chgexit -g --no-title -t --beep -b --errexit -e --color -c --no-color -C --precise -p --no-wrap -w --no-rerun -r"))},
		&Spec{Name: "start-stop-daemon", Options: ops(flag("--start -S", 0), flag("--stop -K", Kill), flag("--status -T", DryRun), arg("--exec -x", Exec), arg("--startas -a", Exec),
			arg("--pidfile -p", 0), arg("--name -n", 0), arg("--user -u", 0), arg("--group -g", 0), arg("--chuid -c", 0), arg("--chroot -r", 0),
			arg("--chdir -d", 0), arg("--nicelevel -N", 0), arg("--procsched -P", 0), arg("--iosched -I", 0), arg("--umask -k", 0), arg("--signal -s", 0),
			arg("--retry -R", 0), arg("--ppid", 0), arg("--notify-timeout", 0), arg("--output -O", Write), flag("--background -b", 0), flag("--make-pidfile -m", 0),
			flag("--remove-pidfile", 0), flag("--oknodo -o", 0), flag("--quiet -q", 0), flag("--verbose -v", 0), flag("--test -t", DryRun), flag("--notify-await", 0),
			flag("--help -H", DryRun), flag("--version -V", DryRun))},
		tmux(),
		&Spec{Name: "screen", StopAtOperand: true, Options: ops(arg("-S", 0), arg("-c", Config), arg("-t", 0), arg("-e", 0), arg("-h", 0), arg("-p", 0), arg("-T", 0),
			flag("-X", 0), flag("-r", NoCommand), flag("-R", NoCommand), flag("-x", NoCommand), flag("-l", NoCommand), flag("-Q", NoCommand), flag("-v", NoCommand|DryRun),
			flag("--list -ls -list", NoCommand), flag("-d", 0), flag("-D", 0), flag("-m", 0), flag("-a", 0), flag("-A", 0), flag("-U", 0), flag("-q", 0), flag("-L", 0), flag("-O", 0), flag("-i", 0)),
			Wrap: &Wrap{}},
	)
}

// tmux: global options, then commands separated by ";" words. Commands
// that run a shell command have Wrap{Shell: true}: their words after the
// options are that command. send-keys types its words into a pane.
func tmux() *Spec {
	shell := func(names, argOpts, flagOpts string) *Spec {
		f := strings.Fields(names)
		return &Spec{Name: f[0], Aliases: f[1:], StopAtOperand: true, Wrap: &Wrap{Shell: true}, Options: join(args(argOpts), flags(flagOpts))}
	}
	return &Spec{Name: "tmux", StopAtOperand: true,
		Options: ops(arg("-c", Exec), arg("-f", Config), arg("-L", 0), arg("-S", 0), arg("-T", 0), flag("-2", 0), flag("-C", 0),
			flag("-D", 0), flag("-l", 0), flag("-N", 0), flag("-u", 0), flag("-v", 0), flag("-V", DryRun)),
		Subs: []*Spec{
			shell("new-session new", "-c -e -f -n -s -t -x -y -F", "-A -d -D -E -P -X"),
			shell("new-window neww", "-c -e -n -s -t -F", "-a -b -d -k -P -S"),
			shell("split-window splitw", "-c -e -l -t -F", "-b -d -f -h -I -v -P -Z"),
			shell("respawn-pane respawnp", "-c -e -t", "-k"),
			shell("respawn-window respawnw", "-c -e -t", "-k"),
			shell("run-shell run", "-d -t", "-b -C"),
			shell("display-popup popup", "-b -c -d -e -h -S -s -t -T -w -x -y", "-B -C -E -k -N"),
			shell("if-shell if", "-t", "-b -F"),
			shell("pipe-pane pipep", "-t", "-I -O -o"),
			{Name: "send-keys", Aliases: []string{"send"}, StopAtOperand: true, Options: join(args("-c -N -t"), flags("-F -H -K -l -M -R -X"))},
		}}
}

// refineCrontab: with no file operand, or "-", crontab installs the table
// it reads from its input; -l, -r and -e read no input.
func refineCrontab(inv *Invocation) {
	if inv.Has("-l") || inv.Has("-r") || inv.Has("-e") {
		return
	}
	for _, op := range inv.Operands {
		if !IsStdinPath(op.Value) {
			return
		}
	}
	inv.Effects |= Interactive | Schedule
}

// refineAt: at and batch read the job's commands from their input unless
// -f names a file; listing, showing and removing jobs read none.
func refineAt(inv *Invocation) {
	if inv.Effects.Has(DryRun) || inv.Has("-r") {
		return
	}
	if v, ok := inv.Value("-f"); ok && !IsStdinPath(v) {
		return
	}
	inv.Effects |= Interactive
}
