package grammar

import (
	"regexp"
	"strings"
)

// The kill family: kill's pid -1 signals every process (signal 0 only
// checks); pkill and killall kill by name, and everything when the pattern
// matches every name or only a user is given. procps (pkill, pgrep,
// pidwait, skill, snice) and psmisc (killall) spell their options
// differently (procps -s is --session, psmisc -g a flag), and psmisc reads
// them with getopt_long_only ("killall -us alice" is --user alice): each
// has its own table, as the program declares it.
func kills() []*Spec {
	procps := join(ops(arg("--signal", 0), arg("--euid -u", 0), arg("--uid -U", 0), arg("--group -G", 0), arg("--pgroup -g", 0),
		arg("--parent -P", 0), arg("--session -s", 0), arg("--terminal -t", 0), arg("--ns", 0), arg("--nslist", 0), arg("--cgroup", 0),
		arg("--pidfile -F", 0), arg("--older -O", 0), arg("--delimiter -d", 0), arg("--runstates -r", 0), arg("--queue -q", 0),
		arg("--env", 0), flag("--full -f", 0), flag("--ignore-case -i", 0), flag("--exact -x", 0), flag("--inverse -v", 0),
		flag("--newest -n", 0), flag("--oldest -o", 0), flag("--echo -e", 0), flag("--count -c", 0), flag("--list-name -l", 0),
		flag("--list-full -a", 0), flag("--lightweight -w", 0), flag("--logpidfile -L", 0), flag("--ignore-ancestors -A", 0),
		flag("--require-handler -H", 0), flag("--help -h", DryRun), flag("--version -V", DryRun)))
	psmisc := ops(flag("--exact -e", 0), flag("--ignore-case -I", 0), flag("--process-group -g", 0), arg("--younger-than -y", 0),
		arg("--older-than -o", 0), flag("--interactive -i", 0), flag("--list-signals -l", DryRun), flag("--quiet -q", 0),
		flag("--regexp -r", 0), arg("--signal -s", 0), arg("--user -u", 0), flag("--verbose -v", 0), flag("--wait -w", 0),
		arg("--ns -n", 0), arg("--context -Z", 0), flag("--version -V", DryRun))
	return []*Spec{
		{Name: "kill", Refine: refineKill},
		{Name: "killall5", Effects: KillAll},
		{Name: "pkill", Aliases: []string{"pgrep", "pidwait", "skill", "snice"}, Options: procps, Refine: refinePkill},
		{Name: "killall", Long: LongOnly, Options: psmisc, Refine: refinePkill},
		{Name: "fuser", Operands: allTargets, Refine: refineFuser, Options: join(ops(flag("--kill -k", Kill), flag("--mount -m", 0), flag("--ismountpoint -M", 0),
			flag("--list-signals -l", DryRun), flag("--version -V", DryRun), arg("--namespace -n", 0)),
			flags("--all -a --interactive -i --inode -I --silent -s --user -u --verbose -v -w -4 --ipv4 -6 --ipv6"))},
	}
}

// refineKill reads kill's signal and pids as bash's kill and procps kill do:
// "-SIG", "-s SIG", "-n NUM", "--signal SIG", "-l" and "-L" list. A pid of
// -1 signals every process, unless the signal is 0 (a check).
func refineKill(inv *Invocation) {
	args := inv.Args
	sig, pids := "", []int(nil) // pids: indices in args
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "--":
			for j := i + 1; j < len(args); j++ {
				pids = append(pids, j)
			}
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
			pids = append(pids, i)
		default:
			pids = append(pids, i)
		}
	}
	s := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(sig), "SIG"))
	if len(pids) > 0 && s != "0" {
		inv.Effects |= Signal
	}
	for _, i := range pids {
		p := args[i]
		inv.Operands = append(inv.Operands, Operand{Value: p, Arg: i, Effects: Target})
		if s == "0" {
			continue
		}
		// kill reads a pid as a number (strtol, bash's legal_number):
		// "-0001" is -1 and "01" is 1.
		switch n, ok := pidNumber(p); {
		case ok && n == -1:
			inv.Effects |= KillAll
		case ok && n == 1:
			// Every init halts, reboots or powers off on some signal
			// to pid 1: systemd on SIGINT (ctrl-alt-del.target) and
			// SIGRTMIN+3…+16, busybox init on SIGTERM, SIGUSR1 and
			// SIGUSR2, sysvinit on SIGINT and SIGPWR. SIGHUP only
			// reloads (systemd daemon-reexec, inittab re-read), but it
			// applies whatever was staged for the reload (a changed
			// inittab or default target), and signal numbers differ
			// between architectures: any signal but 0 counts, one rule
			// rather than a list of names to keep in step with every
			// init.
			inv.Effects |= Power
		}
	}
	if s == "9" || s == "KILL" {
		inv.Effects |= Kill
	}
}

// refineFuser: fuser -k signals every process using its targets; with -m
// (or -M) a target names the whole filesystem it is on, so "fuser -km /"
// and "fuser -km /home" kill every process with a file open, a cwd or a
// mapping there. Only removable-media mounts (/mnt, /media, /run/media)
// are taken to be filesystems of their own. A "-SIGNAL" word is a signal
// (psmisc reads it before getopt): "-0" would only check, but fuser has
// no check mode, so it still kills with -k.
func refineFuser(inv *Invocation) {
	if !inv.Has("--kill") || inv.Effects.Has(DryRun) {
		inv.Effects &^= Kill
		return
	}
	if !inv.Has("--mount") && !inv.Has("--ismountpoint") {
		return
	}
	for _, op := range inv.Operands {
		p := op.Value
		if !(strings.HasPrefix(p, "/mnt/") || strings.HasPrefix(p, "/media/") || strings.HasPrefix(p, "/run/media/")) {
			inv.Effects |= KillAll
		}
	}
}

// pidNumber reads a kill operand as kill does: an optional sign and
// decimal digits ("%1" job specs and names are not pids).
func pidNumber(p string) (int, bool) {
	neg := false
	switch {
	case strings.HasPrefix(p, "-"):
		neg, p = true, p[1:]
	case strings.HasPrefix(p, "+"):
		p = p[1:]
	}
	if p == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1<<20 {
			n = n*10 + int(c-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// sampleNames are process names a pattern matching all of them is taken to
// match every process.
var sampleNames = []string{"init", "systemd", "bash", "sshd", "kworker/0:1", "python3", "A", "1", "x"}

// refinePkill: pgrep and pidwait only list or wait; pkill, killall, skill
// and snice signal what matches, every process when the pattern matches every
// name, with --inverse, or when there is no pattern and an option selects
// processes instead (a user, group, session, namespace, cgroup, age, run
// state: the program refuses to run with neither).
func refinePkill(inv *Invocation) {
	switch inv.Program {
	case "pgrep", "pidwait":
		inv.Effects |= DryRun
		return
	}
	if inv.Effects.Has(DryRun) {
		return // --help, --version, killall --list-signals
	}
	if pkillChecksOnly(inv) {
		return // signal 0 checks that the processes exist, and signals none
	}
	inv.Effects |= Kill
	if SelectsEveryProcess(inv) {
		inv.Effects |= KillAll
	}
}

// SelectsEveryProcess reports whether a pkill, pgrep or killall invocation
// matches every process: with --inverse (procps), with a pattern that
// matches every name or most vital ones, or with no pattern and an option
// that selects processes instead (a user, group, session, namespace,
// cgroup, age, run state: the program refuses to run with neither). pgrep
// then lists every pid, which a kill fed by it signals.
func SelectsEveryProcess(inv *Invocation) bool {
	if inv.Has("--inverse") && inv.Program != "killall" {
		return true
	}
	if len(inv.Operands) == 0 {
		for _, o := range inv.Options {
			if !pkillModifiers[o.Name] && !signalWord(inv, o.Arg) {
				return true
			}
		}
		return false
	}
	regex := inv.Program != "killall" || inv.Has("--regexp")
	for _, op := range inv.Operands {
		if matchesAll(op.Value, regex, inv.Has("--ignore-case")) {
			return true
		}
	}
	return false
}

// pkillChecksOnly reports whether a pkill or killall invocation sends
// signal 0 and no other: procps takes the first signal word and getopt
// then reads another as an option, so when several are given any nonzero
// one counts (fail closed).
func pkillChecksOnly(inv *Invocation) bool {
	zero := false
	for _, o := range inv.Options {
		sig := ""
		switch {
		case o.Name == "--signal" && o.HasValue:
			sig = o.Value
		case signalWord(inv, o.Arg):
			sig = inv.Args[o.Arg][1:]
		default:
			continue
		}
		if strings.TrimPrefix(strings.ToUpper(sig), "SIG") != "0" {
			return false
		}
		zero = true
	}
	return zero
}

// signalWord reports whether argument i of inv is a signal given as an
// option: "-9" anywhere; "-KILL", "-SIGHUP" first (procps reads only its
// first argument so; later, "-HUP" is -H and -U P) or anywhere for killall.
func signalWord(inv *Invocation, i int) bool {
	a := inv.Args[i]
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	digits, upper := true, true
	for _, c := range a[1:] {
		digits = digits && c >= '0' && c <= '9'
		upper = upper && c >= 'A' && c <= 'Z'
	}
	return digits || (upper && len(a) > 2 && (i == 0 || inv.Program == "killall"))
}

// pkillModifiers are the options of pkill and killall that change how
// processes are signalled or matched but select none by themselves;
// --newest and --oldest select one.
var pkillModifiers = map[string]bool{
	"--signal": true, "--full": true, "--ignore-case": true, "--exact": true, "--newest": true, "--oldest": true,
	"--echo": true, "--count": true, "--delimiter": true, "--list-name": true, "--list-full": true, "--lightweight": true,
	"--logpidfile": true, "--require-handler": true, "--queue": true, "--quiet": true, "--interactive": true,
	"--regexp": true, "--verbose": true, "--wait": true, "--process-group": true,
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
	all, vital := true, 0
	for _, n := range sampleNames {
		all = all && re.MatchString(n)
	}
	for _, n := range vitalNames {
		if re.MatchString(n) {
			vital++
		}
	}
	// A pattern that spares an odd name ("1", "A") but takes most of
	// the processes whose loss is the catastrophe ("[a-z]", "s|p|n")
	// is a kill-all too.
	return all || 4*vital >= 3*len(vitalNames)
}

// vitalNames are processes whose loss takes the machine or the session
// down: init, the login and log daemons, the shell, the agent's own
// runtimes, container daemons.
var vitalNames = []string{"init", "systemd", "sshd", "bash", "sh", "tether", "systemd-journald", "dbus-daemon",
	"cron", "dockerd", "containerd", "agetty", "python3", "node"}
