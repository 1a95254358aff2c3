package oracle

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The generator writes commands from a small grammar: a destructive (or
// harmless look-alike) action, with the option spellings its program
// really accepts (abbreviations, clusters, "--", values attached or not),
// a target spelled one of the ways bash resolves to the same thing, the
// program word quoted one of the ways bash removes, inside a wrapper, and
// placed in one of the shell constructs where parsers go wrong. It knows
// nothing of the analyzer's rules; the oracle says what each command did.

// actions are templates: PROG is the program word (quoted by the
// generator), DEV a block device spelling, HOMEDIR a home spelling, SYS a
// system directory spelling, RMOPT an rm option spelling.
var actions = []string{
	"PROG RMOPT HOMEDIR", "PROG RMOPT SYS", "PROG RMOPT ./build", "PROG RMOPT HOMEDIR/projects",
	"PROG -- RMOPT HOMEDIR", "PROG HOMEDIR RMOPT",
	"PROG if=/dev/zero of=DEV bs=1M count=1", "PROG of=DEV if=/dev/urandom", "PROG if=DEV of=disk.img count=1",
	"PROG DEV", "PROG -F DEV", "PROG -t ext4 DEV", "PROG -n DEV",
	"PROG -a DEV", "PROG --all DEV", "PROG --al DEV", "PROG -af DEV", "PROG -n -a DEV",
	"PROG -n1 DEV", "PROG -vzn 1 DEV", "PROG --iterations=1 DEV", "PROG -Z DEV", "PROG --zap-all DEV", "PROG -p DEV",
	"PROG -s DEV mklabel gpt", "PROG DEV print", "PROG -l DEV", "printf 'o\\nw\\n' | PROG DEV", "echo ',,L' | PROG DEV",
	"PROG", "PROG -f", "PROG --force", "PROG now", "PROG -h now", "PROG -r +0", "PROG -c", "PROG --help", "PROG 0", "PROG 6", "PROG 3",
	"PROG SYSOPT VERB", "PROG VERB", "PROG start reboot.target", "PROG isolate poweroff.target", "PROG isolate reboot",
	"PROG --job-mode=replace-irreversibly start halt.target", "PROG status", "PROG --dry-run reboot",
	"PROG call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager Reboot b true",
	"PROG --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.PowerOff boolean:true",
	"PROG call --system --dest org.freedesktop.systemd1 --object-path /org/freedesktop/systemd1 --method org.freedesktop.systemd1.Manager.StartUnit reboot.target replace",
	"PROG KILLSIG -1", "PROG -- -1", "PROG -0 -1", "PROG -1", "PROG KILLSIG -- -1", "echo -1 | xargs PROG -9",
	"PROG -9 .", "PROG -f .", "PROG -u root", "PROG -r .", "PROG -9 -r '.*'", "PROG nginx",
	"echo x > DEV", "cat README.md >> DEV", "tee DEV < README.md", "cp README.md DEV", "truncate -s0 DEV",
	"sort -o DEV README.md", "uniq README.md DEV", ": > DEV", "exec 3>DEV; echo x >&3", "fallocate -l 1M DEV",
	"cd /dev && echo x > DEVREL", "find HOMEDIR -delete", "find HOMEDIR -name notes.txt -delete", "mv HOMEDIR/.bashrc /tmp/",
	"echo 'curl x | sh' >> HOMEDIR/.bashrc", "cp .env.example .env", "truncate -s0 app.log",
	":(){ :|:& };:", "bomb(){ bomb|bomb& };bomb", "f(){ f & f; }; f",
}

// programs that fill PROG for each action, by the action's first option
// shape (chosen at random among those that fit).
var progFor = map[string][]string{
	"RMOPT": {"rm", "/usr/bin/rm", "/bin/rm", "busybox rm"},
	"if=":   {"dd"}, "of=": {"dd"},
	"DEV":    {"mkfs.ext4", "mkfs", "mke2fs", "mkswap", "wipefs", "shred", "blkdiscard", "sgdisk", "parted", "fdisk", "sfdisk", "mkfs.minix"},
	"power":  {"reboot", "halt", "poweroff", "shutdown", "init", "telinit", "/sbin/reboot", "/usr/sbin/shutdown"},
	"VERB":   {"systemctl", "/bin/systemctl"},
	"dbus":   {"busctl", "dbus-send", "gdbus"},
	"kill":   {"kill", "/bin/kill", "env kill"},
	"pkill":  {"pkill", "killall"},
	"noprog": {""},
}

func progKind(action string) string {
	switch {
	case strings.Contains(action, "RMOPT"):
		return "RMOPT"
	case strings.Contains(action, "if=") || strings.Contains(action, "of="):
		return "if="
	case strings.Contains(action, "VERB") || strings.Contains(action, "reboot.target") || strings.Contains(action, "poweroff.target") ||
		strings.Contains(action, "isolate reboot") || strings.Contains(action, "halt.target") || strings.Contains(action, "PROG status") ||
		strings.Contains(action, "--dry-run"):
		return "VERB"
	case strings.Contains(action, "org.freedesktop"):
		return "dbus"
	case strings.Contains(action, "KILLSIG") || strings.Contains(action, "-- -1") || strings.Contains(action, "-0 -1") ||
		action == "PROG -1" || strings.Contains(action, "xargs PROG"):
		return "kill"
	case strings.Contains(action, "PROG -9 .") || strings.Contains(action, "PROG -f .") || strings.Contains(action, "-u root") ||
		strings.Contains(action, "PROG -r .") || strings.Contains(action, "'.*'") || strings.Contains(action, "PROG nginx"):
		return "pkill"
	case strings.Contains(action, "PROG") && strings.Contains(action, "DEV"):
		return "DEV"
	case strings.Contains(action, "PROG"):
		return "power"
	}
	return "noprog"
}

var (
	rmOpts = []string{"-rf", "-fr", "-r -f", "-R", "-r", "--recursive", "--recur", "--rec --force", "-r --", "-rfv",
		"--recursive --no-preserve-root", "-rf --no-preserve-root", "--interactive=never -r", "-d", "-f", "-ri", "-Rf --one-file-system"}
	homes = []string{"~", "~/", "$HOME", `"$HOME"`, "${HOME}", "/home/alice", "/home/alice/", "/home/alice/.", "~/*", `"$HOME"/*`,
		"/home", "~/..", "/home/alice/../alice", "'~'", "./~", `'$HOME'`, "~root", "/root", "/root/*"}
	sysDirs = []string{"/", "/*", "/usr", "/etc", "/var", "/usr/lib", "/boot", "/usr/", "//usr", "/usr/./lib", "/tmp/x", "/var/log", "/opt/x"}
	devs    = []string{"/dev/sda", "/dev/sda1", "/dev/nvme0n1", "/dev/nvme0n1p1", "/dev/vda", "/dev/xvda", "/dev/mmcblk0", "/dev/dm-0",
		"/dev/md0", "/dev/zram0", "/dev/loop0", "/dev/mapper/x", "/dev/vg0/lv0", "/dev/disk/by-id/ata-DISK", "/dev/disk/by-uuid/0a1b",
		"/dev/disk/by-path/pci-0000:00:1f.2-ata-1", "/dev/block/8:0", "/dev/root", "/dev/sd?", "/dev/sd[a-z]", "/dev/nvme0n*",
		"/proc/self/root/dev/sda", "/proc/1/root/dev/sda", "/dev//sda", "/dev/./sda", "/dev/../dev/sda", `/dev/s"d"a`, "disk.img", "/dev/null"}
	devRel           = []string{"sda", "nvme0n1", "mapper/x", "disk/by-id/ata-DISK", "./sda", "null"}
	sysOpts          = []string{"", "--no-block", "-i", "--no-bl", "-q", "--force", "-H host", "--message=bye", "--when=now", "-M m", "--no-wall", "--job-mode=flush"}
	verbs            = []string{"reboot", "poweroff", "halt", "kexec", "soft-reboot", "suspend", "status", "list-units", "restart nginx"}
	killSigs         = []string{"-9", "-KILL", "-s KILL", "-s 9", "-TERM", "-STOP", "-SIGKILL", "-n 9", "--signal KILL", "-HUP"}
	templateWrappers = []string{"", "", "", "sudo ", "sudo -u root ", "sudo -E -- ", "env ", "env -i PATH=$PATH ", "env X=1 ", "nice ", "nice -n 5 ",
		"nice -n5 -- ", "nohup ", "setsid ", "timeout 10 ", "timeout -s KILL 5 ", "timeout --signal=TERM 5 -- ", "time ", "time -p ",
		"stdbuf -oL ", "command ", "exec ", "setarch x86_64 ", "prlimit --nofile=1024 ", "choom -n 0 -- ", "flock /tmp/l ",
		"strace -f -o /dev/null ", "xargs -a /dev/null -r ", "su -c 'CMD'", "bash -c 'CMD'", "sh -c \"CMD\"", "bash -lc 'CMD'",
		"eval 'CMD'", "echo 'CMD' | bash", "bash <<'EOF'\nCMD\nEOF", "find /work -maxdepth 0 -exec CMD \\;"}
	corners = []string{"CMD", "CMD", "true; CMD", "true && CMD", "false || CMD", "{ CMD; }", "( CMD )", "if true; then CMD; fi",
		"for i in 1; do CMD; done", "X=1 CMD", "CMD # note", "echo \"$(CMD)\"", "CMD; wait", "f(){ CMD; }; f", "case x in x) CMD;; esac"}
)

// quote spells a program word one of the ways bash reads as the same word.
func quote(r chooser, w string) string {
	if w == "" || strings.ContainsAny(w, " /") {
		return w
	}
	switch r.IntN(11) {
	case 0:
		return "'" + w + "'"
	case 1:
		return `"` + w + `"`
	case 2:
		return `\` + w
	case 3:
		if len(w) > 1 {
			return w[:1] + `''` + w[1:]
		}
	case 4:
		if len(w) > 1 {
			return w[:1] + `\` + w[1:]
		}
	case 5:
		return "$'" + w + "'"
	case 6:
		return fmt.Sprintf(`$'\x%02x'`, w[0]) + w[1:]
	case 7:
		return `"${x:-` + w + `}"`
	case 8:
		if r.IntN(3) == 0 {
			return choice(r, w)
		}
	}
	return w
}

// choiceNames are the variables of the choice expansions the generator
// writes; the oracle runs each command with them unset, set and empty
// (SetVariants).
var choiceNames = []string{"X", "OPT", "TARGET"}

// choice writes w as a parameter expansion that yields it in some state of
// a variable: only when it is set (${X:+w}, ${X+w}), only when it is unset
// or empty (${X:-w}, ${X:=w}), only when unset (${X-w}, ${X=w}).
func choice(r chooser, w string) string {
	n := pick(r, choiceNames)
	op := pick(r, []string{":+", "+", ":-", "-", ":=", "="})
	if r.IntN(3) == 0 {
		return `"${` + n + op + w + `}"`
	}
	return "${" + n + op + w + "}"
}

func pick(r chooser, xs []string) string { return xs[r.IntN(len(xs))] }

// Generate returns n distinct commands, the same for the same seed: three
// in four from package grammar's data (grammarCommand), the others from the
// templates above (redirections, fork bombs, pipes into kill: shell-level
// effects that no program's grammar holds).
func Generate(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	seen := map[string]bool{}
	var out []string
	for tries := 0; len(out) < n && tries < 50*n; tries++ {
		cmd := command(r)
		if !seen[cmd] {
			seen[cmd] = true
			out = append(out, cmd)
		}
	}
	return out
}

// command writes one command with the choices r makes.
func command(r chooser) string {
	if r.IntN(4) > 0 {
		return grammarCommand(r)
	}
	return templateCommand(r)
}

// dirConstructs leave bash in directory D or S, or either, by the ways bash
// keeps or drops a cd (subshells, pipeline stages, & jobs, substitutions,
// branches not taken, a failed cd, cd -, popd, functions, CDPATH); the
// relative action after them (dirActions, for D) shows which directory
// bash really ended in. Some do end in S: the analysis must not rate those
// as D's either way round only by the last cd it saw.
var (
	dirConstructs = []string{"cd D; (cd S); CMD", "cd D; (cd S) && CMD", "cd D; cd S | cat; CMD", "cd D; { cd S; } | cat; CMD",
		"cd D; cd S & wait; CMD", "cd D; x=$(cd S; pwd); CMD", "cd D; if false; then cd S; fi; CMD", "cd D; false && cd S; CMD",
		"cd D; true || cd S; CMD", "cd D; case x in y) cd S;; esac; CMD", "cd D; for i in; do cd S; done; CMD",
		"cd D; while false; do cd S; done; CMD", "cd D; cd /nonexistent; CMD", "cd D; cd /nonexistent || true; CMD",
		"cd D; cd S S; CMD", "cd D; cd -Z S; CMD", "cd D; cd ''; CMD", "cd D; cd S; cd -; CMD", "cd D; cd S; cd - >/dev/null; CMD",
		"cd D; pushd S; popd; CMD", "cd D; pushd S; pushd; CMD", "cd D; f() { cd S; }; CMD", "cd S; f() { cd D; }; f x; CMD",
		"cd D; eval 'cd S'; cd -; CMD", "cd S; cd D && CMD", "cd D; cd S; CMD", "cd D; (cd S; CMD)", "cd D && cd S && CMD",
		"cd D; cd /nonexistent && CMD", "cd D; builtin cd S; CMD", "cd S; command cd D; CMD", "cd S; sudo cd D; CMD",
		"cd S; bash -c 'cd D'; CMD", "cd S; cd ..; cd D; CMD"}
	dirActions = map[string][]string{
		"/":    {"rm -rf *", "rm -rf ./*", "rm -rf \"$PWD\"/*", "rm -rf ~+/*", "rm -rf \"$(pwd)\"/*", "pwd | xargs -I{} rm -rf {}/usr"},
		"~":    {"rm -rf *", "rm -rf ./*", "rm -rf \"$PWD\"", "rm -rf ~+", "ls | xargs rm -rf", "pwd | xargs rm -rf", "echo 'rm -rf ~' >> .bashrc"},
		"/dev": {"echo x > sda", "dd if=/dev/zero of=sda count=1", "cp README.md sda", ": > ~+/sda", "echo x > \"$PWD\"/sda"},
	}
	dirSafe = []string{"/tmp", "/var/tmp", "/work", "/usr/share"}
)

// dirCommand writes one command from dirConstructs.
func dirCommand(r chooser) string {
	d := pick(r, []string{"/", "~", "/dev"})
	act := pick(r, dirActions[d])
	if d == "~" && r.IntN(2) == 0 {
		d = pick(r, []string{"/home/alice", "$HOME", ""})
	}
	cmd := strings.NewReplacer("CMD", act, "S", pick(r, dirSafe), "D", d).Replace(pick(r, dirConstructs))
	return strings.ReplaceAll(cmd, "cd ;", "cd;")
}

// templateCommand writes one command from the templates.
func templateCommand(r chooser) string {
	if r.IntN(5) == 0 {
		return dirCommand(r)
	}
	{
		a := pick(r, actions)
		prog := pick(r, progFor[progKind(a)])
		if fs := strings.Fields(prog); len(fs) == 2 {
			prog = fs[0] + " " + quote(r, fs[1])
		} else {
			prog = quote(r, prog)
		}
		dev, home, sys := pick(r, devs), pick(r, homes), pick(r, sysDirs)
		switch r.IntN(12) {
		case 0:
			dev = choice(r, dev)
		case 1:
			home = choice(r, home)
		case 2:
			sys = choice(r, sys)
		}
		repl := strings.NewReplacer("PROG", prog, "RMOPT", pick(r, rmOpts), "HOMEDIR", home, "SYS", sys,
			"DEVREL", pick(r, devRel), "DEV", dev, "SYSOPT", pick(r, sysOpts), "VERB", pick(r, verbs), "KILLSIG", pick(r, killSigs))
		cmd := strings.TrimSpace(strings.Join(strings.Fields(repl.Replace(a)), " "))
		if strings.Contains(a, "\\n") || strings.Contains(a, "'") {
			cmd = strings.TrimSpace(repl.Replace(a))
		}
		w := pick(r, templateWrappers)
		switch {
		case strings.Contains(w, "CMD") && strings.ContainsAny(cmd, `'"`+"\n") && !strings.Contains(w, "<<"):
			// Quoting a quoted command inside quotes: keep it plain.
			w = ""
		case strings.Contains(w, "exec CMD") && strings.ContainsAny(cmd, "|;&><(){}"):
			w = ""
		case !strings.Contains(w, "CMD") && strings.ContainsAny(cmd, "|;&><(){}"):
			w = ""
		}
		if strings.Contains(w, "CMD") {
			cmd = strings.ReplaceAll(w, "CMD", cmd)
		} else {
			cmd = w + cmd
		}
		return strings.ReplaceAll(pick(r, corners), "CMD", cmd)
	}
}
