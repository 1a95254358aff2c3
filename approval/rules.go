package approval

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// This file holds the matchers behind the catalog. Every matcher works on
// shellparse's structure (the peeled program, its argument words, its
// redirections, wrappers, opaque segments and functions); string matching is
// used only on single, already-parsed word values (a flag, a path, a payload
// that shellparse could not parse because it is not shell).

// analyzer collects the findings for one command string.
type analyzer struct {
	src      string
	opts     AnalyzeOptions
	home     string // cleaned opts.Home
	cwd      string // canonical opts.Cwd
	depth    int    // nesting of sub-analyses (normalised variants, argument texts)
	script   *shellparse.Script
	findings []Finding
	dry      bool // the current command is a --dry-run/--help form
	// posix is set when POSIXLY_CORRECT may be in the environment of the
	// script's commands: GNU programs then stop reading options at their
	// first operand (grammar.ParsePosix).
	posix bool
	// envTemplate is set while checking the destination of a copy whose
	// sources are all templates (.env.example): instantiating a committed
	// template is how projects are set up, not a secret being planted.
	envTemplate bool
	// devLinks are the canonical names of links the script made to disk
	// devices (followLink).
	devLinks map[string]bool
	// dirBuf holds commandDirs' result.
	dirBuf [1 + len(anywhere)]string
}

// maxSubDepth bounds the analyses nested inside one Analyze call.
const maxSubDepth = 2

// hit records a finding for rule id at text/span, once per rule and span.
func (a *analyzer) hit(id, text string, span shellparse.Span) {
	r := ruleIndex()[id]
	if r == nil {
		panic("approval: unknown rule id " + id) // a programming error, caught by tests
	}
	for i := range a.findings {
		if a.findings[i].Rule == id && a.findings[i].Span == span {
			return
		}
	}
	a.findings = append(a.findings, Finding{Rule: id, Tier: r.Tier, Description: r.Description, Text: text, Span: span})
}

// hitCmd records a finding for the whole command c. In the --dry-run form of
// a command, approval-tier command findings are dropped (hardline never is).
func (a *analyzer) hitCmd(id string, c *shellparse.Command) {
	if a.dry && ruleIndex()[id].Tier == TierApproval {
		return
	}
	a.hit(id, c.Text, c.Span)
}

// sub analyses text (an argument or a normalised variant) with the same
// options, or returns nil when the nesting budget is spent.
func (a *analyzer) sub(text string) *Analysis {
	if a.depth >= maxSubDepth || text == "" {
		return nil
	}
	// The text runs where the command does: python3 -c 'os.system("rm
	// -rf *")' after cd / runs its rm in /.
	opts := a.opts
	switch {
	case strings.HasPrefix(a.cwd, "/"):
		opts.Cwd = a.cwd
	case strings.HasPrefix(a.cwd, "~") && a.home != "":
		opts.Cwd = a.home + a.cwd[1:]
	}
	an, err := analyze(text, opts, a.depth+1, a.posix)
	if err != nil {
		return nil
	}
	return an
}

// run applies every rule to the parsed script.
func (a *analyzer) run() {
	s := a.script
	for i := range s.Opaque {
		a.opaque(&s.Opaque[i])
	}
	for i := range s.Functions {
		f := &s.Functions[i]
		if f.Invoked && (f.SelfPipe || f.SelfBackground || f.SelfSpawn) {
			a.hit(RuleForkBomb, a.text(f.Span), f.Span)
		}
	}
	for _, sp := range s.ForkLoops {
		a.hit(RuleForkBomb, a.text(sp), sp)
	}
	// shellparse follows bash's directory (Command.Dirs): a command whose
	// directory is not one known is checked in each it may run in, and
	// its worst finding counts.
	cwd := a.cwd
	for i := range s.Commands {
		c := &s.Commands[i]
		for _, d := range a.commandDirs(c, cwd) {
			a.cwd = d
			a.command(c)
		}
		a.cwd = cwd
		a.followLink(c)
	}
}

// anywhere are the directories a command whose directory is not known is
// checked in besides the start directory: where relative names are most at
// stake (every entry of the root or of the home, its rc files). Not /dev:
// there every relative name with one slash (a/b) would read as an LVM
// volume.
var anywhere = [...]string{"/", "~"}

// commandDirs returns the canonical directories c may run in (see
// shellparse.Command.Dirs), start being the script's ("" when not known:
// relative names then stay relative).
func (a *analyzer) commandDirs(c *shellparse.Command, start string) []string {
	out := a.dirBuf[:0]
	if c.AnyDir {
		return append(append(out, start), anywhere[:]...)
	}
	if c.Dirs == nil {
		return append(out, start)
	}
	for _, d := range c.Dirs {
		switch {
		case d == "":
			d = start
		case d[0] == '/' || d[0] == '~':
			d = a.fold(d)
		case start != "":
			d = cleanPath(start + "/" + d)
		default:
			d = "" // relative to a start not known
		}
		out = append(out, d)
	}
	return out
}

// followLink tracks "ln [-s] DEVICE NAME": a later write to NAME writes the
// disk ("ln -sf /dev/sda out; echo x > out"), so the names a link to a
// block device (or to such a name) creates are devices for the commands
// after it (isDevice). A name given as a directory ("ln -s /dev/sda d/",
// -t d, one operand) gets the device's base name in it; a last operand
// that may be a directory counts both ways.
func (a *analyzer) followLink(c *shellparse.Command) {
	if c.Program != "ln" {
		return
	}
	args := make([]string, len(c.Args))
	for i, w := range c.Args {
		if w.Unknown {
			return
		}
		args[i] = w.Value
	}
	inv := grammar.Parse("ln", args)
	targets := make([]string, 0, len(inv.Operands))
	for _, op := range inv.Operands {
		targets = append(targets, op.Value)
	}
	var dirs, names []string
	if d, ok := inv.Value("--target-directory"); ok {
		dirs = append(dirs, d)
	} else if len(targets) == 1 {
		dirs = append(dirs, ".")
	} else if len(targets) > 1 {
		last := targets[len(targets)-1]
		targets = targets[:len(targets)-1]
		dirs = append(dirs, last)
		if len(targets) == 1 && !inv.Has("--no-target-directory") {
			names = append(names, last)
		} else if len(targets) == 1 {
			dirs, names = nil, []string{last}
		}
	}
	for _, t := range targets {
		if !a.isDevice(a.fold(t)) {
			continue
		}
		for _, d := range dirs {
			names = append(names, strings.TrimSuffix(d, "/")+"/"+path.Base(t))
		}
		for _, n := range names {
			if a.devLinks == nil {
				a.devLinks = map[string]bool{}
			}
			a.devLinks[a.fold(n)] = true
		}
	}
}

// isDevice reports whether canonical path p names a disk device: by its
// name (isBlockDevice), or as a link the script made to one (followLink).
func (a *analyzer) isDevice(p string) bool {
	return isBlockDevice(p) || a.devLinks[p]
}

// text returns the source text at span, or the whole source when the span
// does not fit it.
func (a *analyzer) text(sp shellparse.Span) string {
	if sp.Start >= 0 && sp.Start <= sp.End && sp.End <= len(a.src) {
		return a.src[sp.Start:sp.End]
	}
	return a.src
}

// opaque maps an opaque segment to its rule: one finding per segment.
func (a *analyzer) opaque(o *shellparse.Opaque) {
	id := RuleOpaque
	switch o.Kind {
	case shellparse.OpaqueDynamicProgram:
		id = RuleDynamicProg
	case shellparse.OpaqueEval:
		id = RuleEval
	case shellparse.OpaqueSource:
		id = RuleSource
	case shellparse.OpaqueWritten:
		id = RuleRunWritten
	case shellparse.OpaquePayload:
		id = RuleOpaquePay
	case shellparse.OpaquePipedShell:
		id = RulePipeShell
	case shellparse.OpaqueHeredoc:
		id = RuleHeredocInt
	case shellparse.OpaqueDepth:
		id = RuleDepthLimit
	case shellparse.OpaqueDivergence:
		id = RuleDivergence
	case shellparse.OpaquePartialExpansion:
		id = RulePartialExp
	}
	a.hit(id, o.Text, o.Span)
}

// opaqueCovers reports whether an opaque segment overlaps span, so that a
// command-level rule does not report the same segment twice.
func (a *analyzer) opaqueCovers(sp shellparse.Span) bool {
	for i := range a.script.Opaque {
		o := a.script.Opaque[i].Span
		if o.Start < sp.End && sp.Start < o.End {
			return true
		}
	}
	return false
}

// argv returns the argument values of c.
func argv(c *shellparse.Command) []string {
	out := make([]string, len(c.Args))
	for i, w := range c.Args {
		out[i] = w.Value
	}
	return out
}

// command applies the command rules to one simple command.
func (a *analyzer) command(c *shellparse.Command) {
	args := argv(c)
	a.dry = false
	if dir, ok := wrapperChdir(c); ok {
		// env -C DIR, sudo -D DIR …: the command runs in DIR.
		saved := a.cwd
		a.cwd = ""
		if p := a.fold(dir); strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
			a.cwd = p
		}
		defer func() { a.cwd = saved }()
	}
	for i := range c.Wrappers {
		a.wrapper(c, &c.Wrappers[i])
	}
	a.redirs(c, args)
	a.runsFound(c)
	if len(args) > 0 && (args[0] == "--help" || args[0] == "--version") {
		// The program still starts with its environment: the loader
		// reads LD_PRELOAD, git writes GIT_TRACE's file.
		a.env(c, nil)
		return
	}
	var inv *grammar.Invocation
	if g := grammarName(c.Program); c.Program != "" && grammar.Lookup(g) != nil {
		if a.posix {
			inv = grammar.ParsePosix(g, args)
		} else {
			inv = grammar.Parse(g, args)
		}
	}
	if inv != nil && inv.Spec != nil {
		a.dry = inv.Effects.Has(grammar.DryRun)
	} else {
		a.dry = !forwardsArgs()[c.Program] && (isDryRun(args) || hasLong(args, "--help"))
	}
	a.env(c, inv)
	prog := c.Program
	if inv != nil && inv.Spec != nil {
		a.invocation(c, inv)
	}
	a.deviceUse(c, inv, args)
	a.program(c, prog, args, inv)
	a.interpreter(c, args, inv)
	a.secretRead(c, args)
	a.hardlineText(c)
	a.dry = false
	a.overFound(c)
}

// overFound: a command find -exec, -execdir, -ok or -okdir runs on "{}" runs
// on every path find visits, from each start point down. When find selects
// every path (grammar.FindVisitsAll), the command is also rated with "{}"
// replaced by each start point ("find / -exec mv {} /tmp \;" moves / away),
// and over a start point that is "/", a system directory or a home as the
// same command applied recursively there ("find / -exec chmod 000 {} +" is
// "chmod -R 000 /"). A start point of the workspace is not read as
// recursive: "find . -exec chmod 644 {} +" stays the plain chmod. Filtered
// finds (-name, -type …) keep their one reading; the delete rules read them
// apart (deletesFound).
func (a *analyzer) overFound(c *shellparse.Command) {
	fw := -1
	for i := range c.Wrappers {
		if c.Wrappers[i].Program == "find" {
			fw = i
		}
	}
	if fw < 0 || c.Program == "find" || c.Program == "" ||
		!slices.ContainsFunc(c.Args, func(w shellparse.Word) bool { return strings.Contains(w.Value, "{}") }) ||
		!grammar.FindVisitsAll(c.Wrappers[fw].Args) {
		return
	}
	starts, _, _, _ := findActions(c.Wrappers[fw].Args)
	if len(starts) == 0 {
		starts = []string{"."} // GNU find's default start point
	}
	for _, s := range starts {
		sub := *c
		// Without this find: the reading is the command run on s, and is
		// not read over found paths again.
		sub.Wrappers = slices.Delete(slices.Clone(c.Wrappers), fw, fw+1)
		sub.Args = make([]shellparse.Word, len(c.Args))
		for j, w := range c.Args {
			sub.Args[j] = w
			if strings.Contains(w.Value, "{}") {
				sub.Args[j].Value = strings.ReplaceAll(w.Value, "{}", s)
			}
		}
		a.command(&sub)
		if !isCatastrophicTarget(a.fold(s)) {
			continue
		}
		g := grammarName(sub.Program)
		if grammar.Lookup(g) == nil {
			continue
		}
		inv := grammar.Parse(g, argv(&sub))
		if inv.Spec == nil || inv.Effects.Has(grammar.DryRun) {
			continue
		}
		inv.Effects |= grammar.Recursive
		a.invocation(&sub, inv)
	}
}

// wrapperChdir returns the directory a peeled wrapper makes the command run
// in (the innermost one that sets it), if any.
func wrapperChdir(c *shellparse.Command) (string, bool) {
	dir, ok := "", false
	for _, w := range c.Wrappers {
		if grammar.Lookup(w.Program) == nil {
			continue
		}
		for _, o := range grammar.Parse(w.Program, w.Args).Options {
			if o.HasValue && o.ValueEffects.Has(grammar.Chdir) {
				dir, ok = o.Value, true
			}
		}
	}
	return dir, ok
}

// grammarName is the name the grammar knows a program by: the name itself,
// or folded as interpreters are ("python3.12", "BUN.EXE", "ruby3.2").
func grammarName(prog string) string {
	if grammar.Lookup(prog) != nil {
		return prog
	}
	if n := interpName(prog); grammar.Lookup(n) != nil {
		return n
	}
	return prog
}

// forwardsArgs are programs that hand (some of) their arguments to another
// command, so a "--help" or "--dry-run" among them may belong to that
// command: ssh host 'rm -rf x;' --help runs rm. They get no waiver.
var forwardsArgs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"ssh": true, "mosh": true, "docker": true, "podman": true, "nerdctl": true, "npm": true, "npx": true,
		"yarn": true, "pnpm": true, "bun": true, "cargo": true, "go": true, "make": true, "nix": true, "uv": true,
		"poetry": true, "pipx": true, "just": true, "task": true,
	}
})

// isDryRun reports whether args ask the program only to show what it would do.
func isDryRun(args []string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		if v == "--dry-run" || strings.HasPrefix(v, "--dry-run=") || v == "--simulate" || v == "--just-print" {
			return true
		}
	}
	return false
}

// operands returns the non-option arguments: those not starting with "-"
// and every argument after "--". valued lists options that take the next
// argument as their value.
func operands(args []string, valued ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			return append(out, args[i+1:]...)
		}
		if len(v) > 1 && v[0] == '-' {
			for _, o := range valued {
				if v == o {
					i++
					break
				}
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// hasShort reports whether a short-option cluster before "--" contains any
// of the letters in set ("-rf" has 'r' and 'f').
func hasShort(args []string, set string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], set) {
			return true
		}
	}
	return false
}

// hasLong reports whether one of the long options (or "--opt=value") occurs
// before "--".
func hasLong(args []string, opts ...string) bool {
	for _, v := range args {
		if v == "--" {
			return false
		}
		for _, o := range opts {
			if v == o || (strings.HasPrefix(v, o) && len(v) > len(o) && v[len(o)] == '=') {
				return true
			}
		}
	}
	return false
}

// optValue returns the value of an option given as "opt value", "opt=value"
// (long) or "-Xvalue" (short), and whether it was present.
func optValue(args []string, opts ...string) (string, bool) {
	for i, v := range args {
		if v == "--" {
			break
		}
		for _, o := range opts {
			switch {
			case v == o:
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(v, o+"="):
				return v[len(o)+1:], true
			case len(o) == 2 && o[1] != '-' && strings.HasPrefix(v, o) && len(v) > 2 && v[1] != '-':
				return v[2:], true
			}
		}
	}
	return "", false
}

// firstOperand returns the first non-option argument and the arguments after
// it, skipping the values of the listed options.
func firstOperand(args []string, valued ...string) (string, []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			if i+1 < len(args) {
				return args[i+1], args[i+2:]
			}
			return "", nil
		}
		if len(v) > 1 && v[0] == '-' {
			if !strings.Contains(v, "=") {
				for _, o := range valued {
					if v == o {
						i++
						break
					}
				}
			}
			continue
		}
		return v, args[i+1:]
	}
	return "", nil
}

// program applies the rules that are policy about particular programs
// rather than what the grammar says they do: permission modes, dd itself,
// SQL text, container mounts, agent control planes, environment builtins.
func (a *analyzer) program(c *shellparse.Command, prog string, args []string, inv *grammar.Invocation) {
	switch prog {
	case "xargs", "parallel":
		if op, _ := firstOperand(args, "-I", "-i", "-L", "-n", "-P", "-d", "-E", "-s", "-a"); path.Base(op) == "rm" {
			a.hitCmd(RuleRmIndirect, c)
		}
	case "chmod":
		a.chmod(c, args)
	case "dd":
		a.hitCmd(RuleDD, c)
	case "kill":
		// xargs, parallel or find -exec … + hand kill its pids at run
		// time, as does a substitution ("kill -9 $(ps -e -o pid=)"): a
		// "-1" anywhere in the script may be one of them, and a command
		// that lists every process feeds it all of them.
		if c.Context.ExtraArgs || slices.ContainsFunc(c.Args, func(w shellparse.Word) bool { return !w.Literal }) {
			if a.scriptHasWord("-1") || a.scriptListsEveryProcess() {
				a.hitCmd(RuleKillAll, c)
			}
		}
		if c.Context.ExtraArgs {
			a.hitCmd(RuleKill, c)
		}
	case "sudo":
		a.sudoStdin(c, args)
	case "docker", "podman", "nerdctl":
		a.containerMounts(c, inv)
		a.containerCommand(c, inv)
	case "ssh":
		if c.Context.Pipeline > 1 {
			if host, _ := firstOperand(args, sshValued...); host != "" {
				a.hitCmd(RuleRemoteExec, c)
			}
		}
	case "psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "clickhouse-client", "cockroach":
		for _, v := range args {
			if isDestructiveSQL(v) {
				a.hitCmd(RuleDBDrop, c)
				break
			}
		}
		for _, v := range args {
			for _, f := range grammar.SQLiteOutputs(v) {
				a.writeTarget(c, f, false)
			}
			if grammar.SQLiteDot(v).Has(grammar.Exec) {
				a.hitCmd(RuleInterpPay, c)
				a.keepHardline(c, grammar.SQLiteShell(v))
			}
		}
	case "redis-cli", "valkey-cli":
		for _, v := range args {
			if l := strings.ToLower(v); l == "flushall" || l == "flushdb" {
				a.hitCmd(RuleDBDrop, c)
			}
		}
	case "mysqladmin":
		if hasWord(args, "drop") {
			a.hitCmd(RuleDBDrop, c)
		}
	case "sed":
		a.inPlace(c, args, "sed")
	case "hermes":
		a.hermes(c, args)
	case "tether":
		if sub, _ := firstOperand(args, "--home", "--cwd", "--config"); sub != "" {
			switch sub {
			case "check", "rules", "version", "help", "completion", "status", "show", "list", "log", "explain":
			default:
				a.hitCmd(RuleControlPlane, c)
			}
		}
	case "export", "declare", "typeset", "local", "readonly":
		for _, v := range args {
			if i := strings.IndexByte(v, '='); i > 0 && isExecEnvValue(v[:i], v[i+1:]) {
				a.hitCmd(RuleEnvExec, c)
			}
		}
	case "env":
		if envSplit(args) {
			a.hitCmd(RuleEnvSplit, c)
		}
	case "alias":
		for _, v := range args {
			if _, val, ok := strings.Cut(v, "="); ok && strings.ContainsAny(val, " \t;|&") {
				if sub := a.sub(val); sub != nil && sub.Verdict >= TierApproval {
					a.hitCmd(RuleScriptWrite, c)
				}
			}
		}
	}
}

// scriptListsEveryProcess reports whether the script is a kill fed by one
// command that lists every process id — ps -e/-A or BSD "ax", pgrep matching
// every process (grammar.SelectsEveryProcess: "pgrep .", "pgrep -v x"), the
// pid directories of "ls /proc" — through filters that pass every pid on
// ("ps -eo pid= | xargs kill -9", "kill $(ls /proc | grep '^[0-9]')",
// "ps -e | tail -n +2 | awk '{print $1}' | xargs kill"). With a filter that
// selects ("ps aux | grep node | awk …") which pids reach kill is not known.
func (a *analyzer) scriptListsEveryProcess() bool {
	producer, kills := false, 0
	for i := range a.script.Commands {
		c := &a.script.Commands[i]
		args := argv(c)
		switch {
		case c.Program == "kill":
			kills++
		case listsEveryProcess(c.Program, args):
			if producer {
				return false
			}
			producer = true
		case !passesPids(c.Program, args):
			return false
		}
	}
	return producer && kills == 1
}

// listsEveryProcess reports whether program given args prints every
// process id.
func listsEveryProcess(program string, args []string) bool {
	switch program {
	case "ps":
		for _, v := range args {
			if strings.HasPrefix(v, "--") {
				if v == "--everyone" {
					return true
				}
				continue
			}
			cluster := strings.TrimPrefix(v, "-")
			if cluster == "" || strings.Trim(cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
				continue // an option value ("pid,comm", "pid=")
			}
			if v[0] == '-' && strings.ContainsAny(cluster, "eA") || strings.Contains(cluster, "a") && strings.Contains(cluster, "x") {
				return true
			}
		}
	case "pgrep":
		return grammar.SelectsEveryProcess(grammar.Parse("pgrep", args))
	case "pidof":
		for _, v := range args {
			switch v {
			case ".", "", ".*", "^", "$", "^.*$", ".+":
				return true
			}
		}
	case "ls":
		ops := operands(args)
		return len(ops) == 1 && path.Clean(ops[0]) == "/proc"
	}
	return false
}

// samplePidLines are lines a process lister prints for a pid, which a
// filter that passes pids on keeps.
var samplePidLines = []string{"1", "42", "31337", "  1 ?        00:00:01 init"}

// passesPids reports whether program given args, reading a list of
// processes, passes every pid on: it cuts columns or a header (awk
// '{print $N}', cut, tail -n +N, sed 1d), drops only the lines a "grep -v"
// names, keeps lines a numeric grep pattern matches, or sorts.
func passesPids(program string, args []string) bool {
	switch program {
	case "cut", "sort", "uniq", "tr", "xargs":
		return true
	case "tail":
		v, _ := optValue(args, "-n", "--lines")
		return strings.HasPrefix(v, "+") || len(args) == 1 && strings.HasPrefix(args[0], "+")
	case "sed":
		return len(args) == 1 && (args[0] == "1d" || args[0] == "-e1d")
	case "awk", "gawk", "mawk":
		return len(args) == 1 && awkPrintsField.MatchString(args[0])
	case "grep", "egrep":
		if hasShort(args, "v") || hasLong(args, "--invert-match") {
			return true
		}
		ops := operands(args, "-e", "-f", "-m")
		if len(ops) != 1 {
			return false
		}
		re, err := regexp.Compile(ops[0])
		if err != nil {
			return false
		}
		for _, l := range samplePidLines[:3] {
			if !re.MatchString(l) {
				return false
			}
		}
		return true
	}
	return false
}

// awkPrintsField matches an awk program that prints one field of every
// line: "{print $2}", "{ print $1 }", "NR>1{print $1}".
var awkPrintsField = regexp.MustCompile(`^\s*(NR\s*>\s*1\s*)?\{\s*print\s+\$[0-9]+\s*;?\s*\}\s*$`)

// scriptHasWord reports whether w appears as a word (or a line or
// whitespace-separated field of a literal word, a here-string or a heredoc)
// anywhere in the script.
func (a *analyzer) scriptHasWord(w string) bool {
	field := func(v string) bool {
		for _, f := range strings.Fields(strings.ReplaceAll(v, `\n`, "\n")) {
			if f == w {
				return true
			}
		}
		return false
	}
	for i := range a.script.Commands {
		c := &a.script.Commands[i]
		for _, arg := range c.Args {
			if field(arg.Value) {
				return true
			}
		}
		for _, r := range c.Redirs {
			if field(r.Body) || field(r.Target.Value) {
				return true
			}
		}
	}
	return false
}

// hasWord reports whether args contain w exactly.
func hasWord(args []string, w string) bool {
	for _, v := range args {
		if v == w {
			return true
		}
	}
	return false
}

// findValued are find primaries that take one argument.
var findValued = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true, "-iregex": true,
		"-type": true, "-xtype": true, "-newer": true, "-perm": true, "-user": true, "-group": true,
		"-size": true, "-mtime": true, "-atime": true, "-ctime": true, "-mmin": true, "-amin": true,
		"-cmin": true, "-maxdepth": true, "-mindepth": true, "-wholename": true, "-iwholename": true,
		"-lname": true, "-ilname": true, "-samefile": true, "-inum": true, "-links": true, "-uid": true,
		"-gid": true, "-fstype": true, "-printf": true, "-used": true, "-context": true, "-regextype": true,
		"-newermt": true, "-anewer": true, "-cnewer": true,
	}
})

// findActions scans find's expression: it reports -delete, file-writing
// actions and the command run by -exec/-ok, and returns the start paths.
func findActions(args []string) (starts []string, del, writes bool, execProg string) {
	i := 0
	for i < len(args) && !(strings.HasPrefix(args[i], "-") || args[i] == "(" || args[i] == "!") {
		starts = append(starts, args[i])
		i++
	}
	for ; i < len(args); i++ {
		v := args[i]
		switch {
		case findValued()[v]:
			i++
		case v == "-delete":
			del = true
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			writes = true
			i++
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			if i+1 < len(args) && execProg == "" {
				execProg = path.Base(args[i+1])
			}
			for i < len(args) && args[i] != ";" && args[i] != "+" {
				i++
			}
		}
	}
	return starts, del, writes, execProg
}

func (a *analyzer) chmod(c *shellparse.Command, args []string) {
	if hasShort(args, "R") || hasLong(args, "--recursive") {
		a.hitCmd(RuleChmod, c)
		return
	}
	ops := operands(args, "--reference")
	if len(ops) == 0 {
		// A mode like "-w" or "-x" looks like an option; such modes only
		// remove permissions.
		return
	}
	if worldWritable(ops[0]) {
		a.hitCmd(RuleChmod, c)
	}
}

// worldWritable reports whether the chmod mode grants write to others.
func worldWritable(mode string) bool {
	if mode == "" {
		return false
	}
	if mode[0] >= '0' && mode[0] <= '7' {
		last := mode[len(mode)-1]
		return last >= '0' && last <= '7' && (last-'0')&2 != 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who, perms := clause[:i], clause[i+1:]
		if strings.ContainsAny(who, "oa") && strings.ContainsRune(perms, 'w') {
			return true
		}
	}
	return false
}

// gitSplit returns git's -c settings, its subcommand and the subcommand's
// arguments.
func gitSplit(args []string) (configs []string, sub string, rest []string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "-c" && i+1 < len(args) {
			configs = append(configs, args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(v, "-") {
			for _, o := range [...]string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"} {
				if v == o {
					i++
					break
				}
			}
			continue
		}
		return configs, v, args[i+1:]
	}
	return configs, "", nil
}

// sudoStdin flags -S/--stdin in sudo's own options (a cluster such as -kS or
// -nS counts; the values of -u, -g, -p … do not).
func sudoStdin(args []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || len(v) < 2 || v[0] != '-' {
			return false
		}
		if v == "--stdin" {
			return true
		}
		if v[1] == '-' {
			switch v {
			case "--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type", "--host", "--other-user", "--command-timeout", "--chroot":
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if ch == 'S' {
				return true
			}
			if strings.IndexByte("ugpCDhrtTUR", ch) >= 0 {
				if j == len(v)-1 {
					i++
				}
				break
			}
		}
	}
	return false
}

// envSplit reports whether env's own options include -S or --split-string
// (or any unambiguous abbreviation of it, down to "--s"). GNU env re-splits
// that argument with its own quoting and escape rules ("\_" is a space), a
// second parse the analyzer does not trust to match exactly.
func envSplit(args []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || len(v) < 2 || v[0] != '-' {
			if strings.Contains(v, "=") && len(v) > 0 && v[0] != '-' {
				continue // NAME=value
			}
			return false
		}
		if v[1] == '-' {
			name, _, hasVal := strings.Cut(v, "=")
			if len(name) >= 3 && strings.HasPrefix("--split-string", name) {
				return true
			}
			if !hasVal && (name == "--unset" || name == "--chdir" || name == "--argv0") {
				i++
			}
			continue
		}
		if v == "-u" || v == "-C" || v == "-a" {
			i++
			continue
		}
		for j := 1; j < len(v); j++ {
			if v[j] == 'S' {
				return true
			}
			if v[j] == 'u' || v[j] == 'C' || v[j] == 'a' {
				break
			}
		}
	}
	return false
}

func (a *analyzer) sudoStdin(c *shellparse.Command, args []string) {
	if sudoStdin(args) {
		a.hitCmd(RuleSudoStdin, c)
	}
}

// wrapper applies the rules that concern a peeled wrapper's own options.
func (a *analyzer) wrapper(c *shellparse.Command, w *shellparse.Wrapper) {
	switch w.Program {
	case "env":
		if envSplit(w.Args) {
			a.hit(RuleEnvSplit, c.Text, c.Span)
		}
	case "sudo":
		if sudoStdin(w.Args) {
			a.hit(RuleSudoStdin, c.Text, c.Span)
		}
	case "find":
		if _, del, _, _ := findActions(w.Args); del {
			a.hit(RuleFindDelete, c.Text, c.Span)
		}
	}
	if isShell(w.Program) && shellHasC(w.Args) && !plainShellC(w, c) {
		a.hit(RuleShellPayload, c.Text, c.Span)
	}
	// A wrapper's own options and operands may write files (time -o,
	// strace -o, script's typescript), run a command line of their own
	// (systemd-run -p ExecStartPost=…, valgrind --db-command) or act on
	// the machine (systemd-run -p SuccessAction=reboot).
	if grammar.Lookup(w.Program) != nil {
		inv := grammar.Parse(w.Program, w.Args)
		if !inv.Effects.Has(grammar.DryRun) {
			for _, r := range effectRules {
				if inv.Effects.Has(r.eff) {
					a.hitCmd(r.rule, c)
				}
			}
		}
		for _, o := range inv.Options {
			if o.HasValue && a.pipeValue(c, o.Value, o.ValueEffects) {
				continue
			}
			if o.HasValue && o.ValueEffects.Has(grammar.Write) {
				a.writeTarget(c, o.Value, false)
			}
			if o.HasValue && o.ValueEffects.Has(grammar.Exec) {
				a.wrapperExec(c, o.Value, o.ValueEffects)
			}
		}
		for _, op := range inv.Operands {
			if op.Effects.Has(grammar.Write) {
				a.writeTarget(c, op.Value, false)
			}
		}
	}
}

// pipeValue reports whether v, a value with effects e, is a command line
// that the output is piped to ("|cmd" or "!cmd" where e has grammar.Pipe),
// and rates that command as an option that runs a program.
func (a *analyzer) pipeValue(c *shellparse.Command, v string, e grammar.Effect) bool {
	if !e.Has(grammar.Pipe) || v == "" || v[0] != '|' && v[0] != '!' {
		return false
	}
	a.execOption(c, v[1:])
	return true
}

// wrapperExec analyses a command line that a wrapper's option runs besides
// the wrapped command. Only its hardline findings are kept: shellparse
// already peels the wrapper options that name the command itself (flock
// -c, env -S), and those are rated as that command.
func (a *analyzer) wrapperExec(c *shellparse.Command, v string, e grammar.Effect) {
	if e.Has(grammar.Config) {
		if i := strings.IndexAny(v, "= \t"); i >= 0 {
			v = v[i+1:]
		}
	}
	a.keepHardline(c, v)
}

// sshValued are ssh options that take a value.
var sshValued = []string{"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P"}

// isDestructiveSQL reports whether a query argument drops or wipes data.
func isDestructiveSQL(v string) bool {
	u := strings.ToUpper(v)
	for _, k := range [...]string{"DROP ", "DROP\t", "TRUNCATE ", "DELETE FROM", "DROPDATABASE(", ".DROP(", "FLUSHALL", "DELETEMANY("} {
		if strings.Contains(u, k) {
			return true
		}
	}
	return false
}

// execOption records an option that runs another program; the program text
// is analysed too, and a hardline payload keeps its hardline findings.
func (a *analyzer) execOption(c *shellparse.Command, v string) {
	a.hit(RuleExecOption, c.Text, c.Span)
	a.keepHardline(c, v)
}

// hermes is the peer agent's control plane; commands that change its
// configuration, schedule, code or gateway need approval.
func (a *analyzer) hermes(c *shellparse.Command, args []string) {
	ops := operands(args)
	if len(ops) == 0 {
		return
	}
	next := ""
	if len(ops) > 1 {
		next = ops[1]
	}
	switch ops[0] {
	case "config", "cron":
		switch next {
		case "", "show", "list", "ls", "get", "status", "path":
		default:
			a.hitCmd(RuleControlPlane, c)
		}
	case "update", "gateway", "setup", "uninstall", "install", "approve", "allowlist", "mandate", "yolo", "reset":
		a.hitCmd(RuleControlPlane, c)
	}
}

// moveSource checks a path that mv takes away: moving a credential
// directory, a shell rc file or /etc content changes it as much as writing;
// moving "/", a system directory or a home away is hardline (the tree is
// gone from where everything looks for it: mv /usr leaves no mv to undo
// it, and a home moved across filesystems is copied then deleted, often
// onto a /tmp cleared at boot).
func (a *analyzer) moveSource(c *shellparse.Command, op grammar.Operand) {
	v := op.Value
	p := a.fold(v)
	if a.catastrophicWord(c, op) {
		a.hitCmd(RuleRmRecursive, c)
		a.hitCmd(RuleMoveRoot, c)
	}
	a.checkWrite(c, v, p)
}

// inPlace handles in-place editors (sed -i, perl -i, ruby -i): the edited
// files are write targets.
func (a *analyzer) inPlace(c *shellparse.Command, args []string, lang string) {
	inplace, script := false, false
	var files []string
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "--") {
			switch {
			case v == "--in-place" || strings.HasPrefix(v, "--in-place="):
				inplace = true
			case v == "--expression" || v == "--file":
				script = true
				i++
			case strings.HasPrefix(v, "--expression=") || strings.HasPrefix(v, "--file="):
				script = true
			case v == "--line-length":
				i++
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
		cluster:
			for j := 1; j < len(v); j++ {
				switch ch := v[j]; {
				case ch == 'i':
					inplace = true
					break cluster // the rest is a backup suffix
				case ch == 'e' || ch == 'f' || ch == 'E' && lang != "sed":
					script = true
					if j == len(v)-1 {
						i++
					}
					break cluster
				case lang == "sed" && ch == 'l', lang != "sed" && strings.IndexByte("IMmrx0lCd", ch) >= 0:
					if j == len(v)-1 && (lang == "sed" || ch == 'I' || ch == 'M' || ch == 'm' || ch == 'r') {
						i++
					}
					break cluster
				}
			}
			continue
		}
		files = append(files, v)
	}
	if !inplace {
		return
	}
	if !script && len(files) > 0 {
		files = files[1:] // the first operand is the script
	}
	for _, f := range files {
		a.writeTarget(c, f, false)
	}
}

// redirs applies the redirection rules: /dev/tcp, disk devices, and the
// destinations of writes.
func (a *analyzer) redirs(c *shellparse.Command, args []string) {
	for i := range c.Redirs {
		r := &c.Redirs[i]
		v := r.Target.Value
		if strings.HasPrefix(v, "/dev/tcp/") || strings.HasPrefix(v, "/dev/udp/") {
			if isShell(c.Program) || isInterpreter(interpName(c.Program)) {
				a.hit(RuleReverseShell, c.Text, c.Span)
			} else {
				a.hit(RuleDevTCP, c.Text, c.Span)
			}
			continue
		}
		switch r.Mode {
		case shellparse.RedirWrite, shellparse.RedirAppend, shellparse.RedirReadWrite:
		case shellparse.RedirDup:
			if v == "-" || isNumber(v) {
				continue
			}
		default:
			continue
		}
		if r.Target.Unknown {
			// "> $f" with f known only at run time may be a disk, an rc
			// file or /etc/passwd.
			a.hit(RuleUnknownTarget, c.Text, c.Span)
		}
		p := a.fold(v)
		if a.isDevice(p) {
			a.hit(RuleDiskWrite, c.Text, c.Span)
			continue
		}
		a.writeTarget(c, v, true)
		if (c.Program == "echo" || c.Program == "printf") && isScriptFile(p) {
			a.scriptWrite(c, args)
		}
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isScriptFile reports whether p names a shell script or a crontab-like
// file whose content is run later.
func isScriptFile(p string) bool {
	for _, suf := range [...]string{".sh", ".bash", ".zsh", ".ksh", ".command"} {
		if strings.HasSuffix(p, suf) {
			return true
		}
	}
	return false
}

// scriptWrite analyses the text echoed into a script file.
func (a *analyzer) scriptWrite(c *shellparse.Command, args []string) {
	var b strings.Builder
	for i, v := range args {
		if i == 0 && (v == "-e" || v == "-n" || v == "-en" || v == "-ne") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v)
	}
	text := strings.ReplaceAll(b.String(), `\n`, "\n")
	if sub := a.sub(text); sub != nil && sub.Verdict >= TierApproval {
		a.hit(RuleScriptWrite, c.Text, c.Span)
	}
}

// writeTarget checks one write destination given as word value v.
func (a *analyzer) writeTarget(c *shellparse.Command, v string, redirect bool) {
	p := a.fold(v)
	if id := sysNodeRule(p); id != "" {
		a.hit(id, c.Text, c.Span)
		return
	}
	if !redirect && a.blockDevice(c, v) {
		// A write to a disk device is hardline wherever it comes from:
		// cp, tee, sort -o, curl -o, tar -f all overwrite the disk.
		a.hit(RuleDeviceWrite, c.Text, c.Span)
		a.hit(RuleDiskWrite, c.Text, c.Span)
		return
	}
	a.checkWrite(c, v, p)
}

// checkWrite applies the protected-destination rules to canonical path p.
func (a *analyzer) checkWrite(c *shellparse.Command, v, p string) {
	if isEtc(p) {
		a.hit(RuleEtcWrite, c.Text, c.Span)
	}
	if rel, ok := homeRel(p); ok {
		switch {
		case inList(rel, credentialDirs):
			a.hit(RuleCredWrite, c.Text, c.Span)
		case inList(rel, shellRCFiles):
			a.hit(RuleRCWrite, c.Text, c.Span)
		case inList(rel, agentDirs):
			a.hit(RuleAgentConfig, c.Text, c.Span)
		case rel == ".gitconfig" || rel == ".config/git/config":
			a.hit(RuleGitConfigFile, c.Text, c.Span)
		}
	}
	if p == ".git/config" || strings.HasSuffix(p, "/.git/config") {
		a.hit(RuleGitConfigFile, c.Text, c.Span)
	}
	if envPrefixed(v, agentEnvDirs) {
		a.hit(RuleAgentConfig, c.Text, c.Span)
	}
	base := path.Base(p)
	if (base == ".env" || strings.HasPrefix(base, ".env.")) && !a.envTemplate {
		a.hit(RuleEnvFile, c.Text, c.Span)
	}
	if base == "config.yaml" || base == "config.yml" {
		a.hit(RuleAgentConfig, c.Text, c.Span)
	}
}

// secretRead flags private keys and password databases among the arguments.
func (a *analyzer) secretRead(c *shellparse.Command, args []string) {
	switch c.Program {
	case "chmod", "chown", "chgrp", "ssh-keygen", "ssh-add", "ssh", "ls", "stat", "file", "test", "[", "touch", "rm", "shred":
		return // these use or inspect a key file without copying its content
	case "curl", "wget", "http", "https":
		a.credentialUpload(c, args)
	}
	for _, v := range args {
		if !strings.Contains(v, "id_") && !strings.Contains(v, "shadow") {
			continue
		}
		p := a.fold(v)
		if p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/shadow-" {
			a.hitCmd(RuleSecretRead, c)
			return
		}
		if rel, ok := homeRel(p); ok && strings.HasPrefix(rel, ".ssh/id_") && !strings.HasSuffix(rel, ".pub") {
			a.hitCmd(RuleSecretRead, c)
			return
		}
	}
}

// credentialUpload flags an HTTP client sending a credential file
// (curl -d @file, --data-binary @file, -F k=@file, -T file, wget --post-file).
func (a *analyzer) credentialUpload(c *shellparse.Command, args []string) {
	for i, v := range args {
		var file string
		switch {
		case strings.HasPrefix(v, "@"):
			file = v[1:]
		case strings.Contains(v, "=@"):
			file = v[strings.Index(v, "=@")+2:]
		case strings.HasPrefix(v, "--post-file=") || strings.HasPrefix(v, "--body-file="):
			file = v[strings.IndexByte(v, '=')+1:]
		case (v == "-T" || v == "--upload-file" || v == "--post-file" || v == "--body-file") && i+1 < len(args):
			file = args[i+1]
		default:
			continue
		}
		if i := strings.IndexByte(file, ';'); i >= 0 {
			file = file[:i] // -F "k=@file;type=text/plain"
		}
		p := a.fold(file)
		if rel, ok := homeRel(p); ok && inList(rel, credentialDirs) || p == "/etc/shadow" || base(p) == ".env" {
			a.hitCmd(RuleSecretRead, c)
			return
		}
	}
}

func base(p string) string { return path.Base(p) }

// execEnv are environment variables that load or run code in the command.
var execEnv = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "DYLD_INSERT_LIBRARIES": true,
		"DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true, "PATH": true, "PROMPT_COMMAND": true,
		"PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_ASKPASS": true,
		"GIT_PROXY_COMMAND": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_PARAMETERS": true,
		"SSH_ASKPASS": true, "SUDO_ASKPASS": true, "EDITOR": true, "VISUAL": true, "PAGER": true, "MANPAGER": true,
		"LESSOPEN": true, "LESSCLOSE": true, "PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true,
		"PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true, "NODE_OPTIONS": true,
		"NODE_PATH": true, "RUBYOPT": true, "RUBYLIB": true, "JAVA_TOOL_OPTIONS": true,
		"_JAVA_OPTIONS": true, "BROWSER": true, "GCONV_PATH": true,
	}
})

func isExecEnv(name string) bool {
	return execEnv()[name] || grammar.EnvEffects("", name).Has(grammar.Exec)
}

// isExecEnvValue reports whether setting name to value makes programs run
// other code. A PATH of absolute directories (or $VAR and ~ ones) outside
// the world-writable temporary directories only changes where programs are
// found among installed ones: "export PATH=$HOME/go/bin:$PATH" is fine,
// "PATH=.:$PATH" and "PATH=/tmp/x:$PATH" are not.
func isExecEnvValue(name, value string) bool {
	if name != "PATH" {
		return isExecEnv(name)
	}
	for _, e := range strings.Split(value, ":") {
		switch {
		case e == "" || !(strings.HasPrefix(e, "/") || strings.HasPrefix(e, "$") || strings.HasPrefix(e, "~")):
			return true
		case strings.Contains(e, "`") || strings.Contains(e, "$("):
			return true
		}
		for _, part := range strings.Split(e, "/") {
			if part == "." || part == ".." {
				return true
			}
		}
		for _, t := range [...]string{"/tmp", "/var/tmp", "/dev/shm", "/run/user"} {
			if under(e, t) {
				return true
			}
		}
	}
	return false
}

// namedDirs reports whether a PATH value lists only absolute literal
// directories, "$PATH" itself and directories in the home ("~/bin",
// "$HOME/go/bin"): no other variable's unknown value.
func namedDirs(v string) bool {
	for _, e := range strings.Split(v, ":") {
		switch {
		case e == "$PATH" || e == "${PATH}":
		case strings.HasPrefix(e, "$HOME/") || strings.HasPrefix(e, "~/"):
			if strings.ContainsAny(e[1:], "$`") {
				return false
			}
		case !strings.HasPrefix(e, "/") || strings.ContainsAny(e, "$`"):
			return false
		}
	}
	return true
}

// env applies the rules for the command's environment assignments: a
// variable that makes programs run code needs approval, and a literal
// command line in it keeps its hardline findings (PAGER=reboot); a build
// tool's variable (CC=…) is rated as the command it names; a variable that
// holds the program's options (GOFLAGS) is read as those options.
func (a *analyzer) env(c *shellparse.Command, inv *grammar.Invocation) {
	g := grammarName(c.Program)
	asked := false
	for _, e := range c.Env {
		eff := grammar.EnvEffects(g, e.Name)
		// A PATH of named directories is judged by them alone
		// (isExecEnvValue), as "export PATH=…" is: "env -i PATH=/usr/bin ls"
		// only picks among installed programs.
		if !asked && (isExecEnvValue(e.Name, e.Value.Value) || eff.Has(grammar.Exec) && !(e.Name == "PATH" && namedDirs(e.Value.Value))) {
			a.hit(RuleEnvExec, c.Text, c.Span)
			asked = true
		}
		if !e.Value.Literal || e.Value.Value == "" {
			if !asked && eff.Has(grammar.Options) && !e.Value.Literal {
				a.hit(RuleEnvExec, c.Text, c.Span) // options not known: any of them
				asked = true
			}
			continue
		}
		if eff.Any(grammar.Exec | grammar.Program) {
			for _, v := range grammar.EnvCommands(e.Name, e.Value.Value) {
				a.wrapperExec(c, v, 0)
			}
		}
		if e.Name == "BASH_ENV" && grammar.IsStdinPath(e.Value.Value) {
			// The started bash reads its start-up file from its input
			// (sh reads $ENV only when interactive).
			a.keepHardline(c, a.fedCommands(c, "", nil))
		}
		if eff.Has(grammar.Write) {
			a.writeTarget(c, e.Value.Value, false)
		}
		if p := grammar.OptionsProgram(e.Name); p != "" && !eff.Has(grammar.Options) {
			// Inherited by the programs this one runs: read as p given them.
			text := p + " " + strings.Join(quotedAll(grammar.SplitOptions(e.Value.Value)), " ")
			if sub := a.sub(text); sub != nil && sub.Verdict > TierAllow {
				a.keepHardline(c, text)
				if !asked {
					a.hit(RuleEnvExec, c.Text, c.Span)
					asked = true
				}
			}
		}
		if eff.Has(grammar.Options) && inv != nil {
			dry := a.dry
			a.command(withEnvOptions(c, inv, e.Name, grammar.SplitOptions(e.Value.Value)))
			a.dry = dry
		}
	}
}

// withEnvOptions returns c as the program reads it when variable name
// holds the options opts (TAR_OPTIONS, ZIPOPT, GOFLAGS …): those options
// given on its command line, after the subcommand if any, and the
// variable no longer set. Every rule then reads them as it reads the
// command line ("TAR_OPTIONS=--to-command=reboot tar xf a.tar" is "tar
// --to-command=reboot xf a.tar").
func withEnvOptions(c *shellparse.Command, inv *grammar.Invocation, name string, opts []string) *shellparse.Command {
	at, j := 0, 0
	for i, w := range c.Args {
		if j < len(inv.Sub) && w.Value == inv.Sub[j] {
			j++
			at = i + 1
		}
	}
	sub := *c
	sub.Env = slices.DeleteFunc(slices.Clone(c.Env), func(a shellparse.Assign) bool { return a.Name == name })
	sub.Args = make([]shellparse.Word, 0, len(c.Args)+len(opts))
	sub.Args = append(sub.Args, c.Args[:at]...)
	for _, o := range opts {
		sub.Args = append(sub.Args, shellparse.Word{Value: o, Literal: true, Raw: o})
	}
	sub.Args = append(sub.Args, c.Args[at:]...)
	return &sub
}

// hardlineText flags an argument whose whole text is one complete hardline
// command ("rm -rf /", "cat x > /dev/sda"): such text is staged for later
// execution more often than it is prose. Search patterns and git's own
// arguments (commit messages, grep patterns) are data kept in place and are
// not checked; neither is text with several commands ("a;reboot"), which
// is prose or data rather than a command line.
func (a *analyzer) hardlineText(c *shellparse.Command) {
	switch c.Program {
	case "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "git", "sed", "awk", "find", "locate":
		return
	}
	for _, w := range c.Args {
		v := w.Value
		if !w.Literal || !strings.ContainsAny(v, " \t") || !mayBeHardline(v) {
			continue
		}
		if a.isHardlineText(v) {
			a.hit(RuleHardlineText, c.Text, c.Span)
			return
		}
	}
}

// isHardlineText reports whether v is one complete hardline command, or
// contains, starting at one of its words, a command that destroys a named
// target (rm -rf /, a disk write or format, kill -1). Hardline rules that
// need no target (reboot, halt) count only when they are the whole text, so
// prose such as "remember to reboot the server" stays allowed.
func (a *analyzer) isHardlineText(v string) bool {
	sub := a.sub(v)
	if sub == nil {
		return false
	}
	if sub.Verdict == TierHardline && sub.Script != nil && len(sub.Script.Commands) == 1 && len(sub.Script.Opaque) == 0 {
		return true
	}
	tries := 0
	for i := 1; i < len(v) && tries < 3; i++ {
		if (v[i-1] != ' ' && v[i-1] != '\t') || v[i] == ' ' {
			continue
		}
		w := v[i:]
		if j := strings.IndexAny(w, " \t"); j >= 0 {
			w = w[:j]
		}
		switch path.Base(w) {
		case "rm", "dd", "wipefs", "shred", "kill", "mkswap", "sgdisk", "mke2fs", "cat":
		default:
			if !strings.HasPrefix(path.Base(w), "mkfs") {
				continue
			}
		}
		tries++
		sub := a.sub(v[i:])
		if sub == nil || sub.Script == nil || len(sub.Script.Commands) != 1 {
			continue
		}
		for _, f := range sub.Findings {
			switch f.Rule {
			case RuleRmRoot, RuleDiskFormat, RuleDiskWrite, RuleKillAll:
				return true
			}
		}
	}
	return false
}

// mayBeHardline is a cheap filter before parsing an argument as a command:
// it reports whether v mentions a word that some hardline rule needs.
func mayBeHardline(v string) bool {
	for _, k := range [...]string{"rm", "/dev/", "mkfs", "mke2fs", "mkswap", "dd", "wipefs", "shred", "kill", "reboot", "shutdown", "halt", "poweroff", "init", "systemctl", "sudo", "(", "fork", "diskutil", "sgdisk", "parted"} {
		if strings.Contains(v, k) {
			return true
		}
	}
	return false
}
