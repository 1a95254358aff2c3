package grammar

import (
	"regexp"
	"strings"
)

// The kill family: kill's pid -1 signals every process (signal 0 only
// checks); pkill and killall kill by name, and everything when the pattern
// matches every name or only a user is given.
func kills() []*Spec {
	match := join(ops(arg("--signal -s", 0), arg("--uid -u", 0), arg("--euid -U", 0), arg("--group -G", 0), arg("--pgroup -g", 0),
		arg("--parent -P", 0), arg("--session", 0), arg("--terminal -t", 0), arg("--ns", 0), arg("--nslist", 0), arg("--cgroup", 0),
		arg("--pidfile -F", 0), arg("--older -o", 0), arg("--younger -y", 0), arg("--context -Z", 0), arg("--delimiter -d", 0),
		flag("--full -f", 0), flag("--ignore-case -i", 0), flag("--exact -x", 0), flag("--inverse -v", 0), flag("--newest -n", 0),
		flag("--oldest", 0), flag("--echo -e", 0), flag("--count -c", 0), flag("--list-name -l", 0), flag("--list-full -a", 0),
		flag("--wait -w", 0), flag("--regexp -r", 0), flag("--interactive -I", 0), flag("--quiet -q", 0), flag("--verbose", 0),
		flag("--process-group", 0)), gnuHelp())
	return []*Spec{
		{Name: "kill", Refine: refineKill},
		{Name: "killall5", Effects: KillAll},
		{Name: "pkill", Aliases: []string{"killall", "pgrep", "pidwait", "skill", "snice"}, Options: match, Refine: refinePkill},
	}
}

// refineKill reads kill's signal and pids as bash's kill and procps kill do:
// "-SIG", "-s SIG", "-n NUM", "--signal SIG", "-l" and "-L" list. A pid of
// -1 signals every process, unless the signal is 0 (a check).
func refineKill(inv *Invocation) {
	args := inv.Args
	sig, pids := "", []string(nil)
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "--":
			pids = append(pids, args[i+1:]...)
			i = len(args)
		case v == "-l" || v == "-L" || v == "--list" || v == "--table" || strings.HasPrefix(v, "--list="):
			inv.Effects |= DryRun
			return
		case v == "-s" || v == "-n" || v == "--signal":
			if i+1 < len(args) {
				sig = args[i+1]
			}
			i++
		case strings.HasPrefix(v, "--signal="):
			sig = v[len("--signal="):]
		case len(v) > 1 && v[0] == '-' && sig == "" && len(pids) == 0 && len(args) > 1 && i < len(args)-1:
			sig = v[1:]
		case len(v) > 1 && v[0] == '-' && sig == "" && len(pids) == 0 && len(args) == 1:
			// "kill -1" alone: a usage error in bash, but procps kill reads
			// -1 as the pid; count it as one.
			pids = append(pids, v)
		default:
			pids = append(pids, v)
		}
	}
	s := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(sig), "SIG"))
	if len(pids) > 0 && s != "0" {
		inv.Effects |= Signal
	}
	for _, p := range pids {
		inv.Operands = append(inv.Operands, Operand{Value: p, Effects: Target})
		if p == "-1" && s != "0" {
			inv.Effects |= KillAll
		}
	}
	if s == "9" || s == "KILL" {
		inv.Effects |= Kill
	}
}

// sampleNames are process names a pattern matching all of them is taken to
// match every process.
var sampleNames = []string{"init", "systemd", "bash", "sshd", "kworker/0:1", "python3", "A", "1", "x"}

// refinePkill: pgrep and pidwait only list or wait; pkill, killall, skill
// and snice signal what matches, every process when the pattern matches every
// name (or there is none and a user, group or session selects them), or
// with --inverse.
func refinePkill(inv *Invocation) {
	switch inv.Program {
	case "pgrep", "pidwait":
		inv.Effects |= DryRun
		return
	}
	if inv.Has("--list-name") && inv.Program == "killall" {
		inv.Effects |= DryRun
		return
	}
	inv.Effects |= Kill
	if inv.Has("--inverse") && inv.Program == "pkill" {
		inv.Effects |= KillAll
		return
	}
	if len(inv.Operands) == 0 {
		if inv.Has("--uid") || inv.Has("--euid") || inv.Has("--group") || inv.Has("--session") || inv.Has("--pgroup") || inv.Has("--parent") || inv.Has("--terminal") {
			inv.Effects |= KillAll
		}
		return
	}
	regex := inv.Program == "pkill" || inv.Has("--regexp")
	for _, op := range inv.Operands {
		if matchesAll(op.Value, regex, inv.Has("--ignore-case")) {
			inv.Effects |= KillAll
			return
		}
	}
}

// matchesAll reports whether pattern selects every process name.
func matchesAll(pattern string, regex, fold bool) bool {
	if !regex {
		return pattern == ""
	}
	if fold {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return false // the program refuses it too
	}
	if re.MatchString("") {
		return true
	}
	for _, n := range sampleNames {
		if !re.MatchString(n) {
			return false
		}
	}
	return true
}
