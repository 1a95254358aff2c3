package approval

import (
	"path"
	"slices"
	"strings"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// The catalog's program rules are read from package grammar: how a program
// reads its arguments and what each option, operand and variable does is
// data there (one entry per program); this file maps those effects to rule
// ids. An effect the grammar reports always leads to a finding; a program
// the grammar does not know gets only the generic rules (paths, redirections,
// environment, payloads), so adding a dangerous program is one grammar entry.

// effectRules maps invocation effects to the rule each one produces, for
// effects whose rule needs no look at the targets. Dry runs skip them.
var effectRules = []struct {
	eff  grammar.Effect
	rule string
}{
	{grammar.Power, RulePower},
	{grammar.KillAll, RuleKillAll},
	{grammar.Kill, RuleKill},
	{grammar.ServiceStop, RuleServiceStop},
	{grammar.PkgRemove, RulePkgRemove},
	{grammar.ContainerStop, RuleContainer},
	{grammar.Privileged, RulePrivileged},
	{grammar.DBDrop, RuleDBDrop},
	{grammar.ForcePush, RuleGitPushForce},
	{grammar.BranchDelete, RuleGitBranchDel},
	{grammar.HistoryRewrite, RuleGitHistory},
	{grammar.ConfigWrite, RuleGitConfig},
	{grammar.Firewall, RuleFirewall},
	{grammar.Accounts, RuleAccounts},
	{grammar.Mount, RuleMount},
	{grammar.Schedule, RuleCrontab},
	{grammar.Remote, RuleRemoteExec},
	{grammar.Listen, RuleReverseShell},
	{grammar.DiskChange, RuleDiskChange},
	{grammar.Kernel, RuleKernel},
}

// invocation applies the grammar-driven rules to c, read as inv.
func (a *analyzer) invocation(c *shellparse.Command, inv *grammar.Invocation) {
	e := inv.Effects
	dry := e.Has(grammar.DryRun)
	if !dry {
		for _, r := range effectRules {
			if e.Has(r.eff) {
				a.hitCmd(r.rule, c)
			}
		}
		if e.Has(grammar.Discard) {
			if len(inv.Sub) > 0 && inv.Sub[0] == "reset" {
				a.hitCmd(RuleGitReset, c)
			} else {
				a.hitCmd(RuleGitDiscard, c)
			}
		}
		if e.Has(grammar.Delete) {
			a.deletes(c, inv)
			a.deletesFound(c, inv)
		}
		if e.Any(grammar.Format | grammar.DeviceWrite | grammar.Truncate) {
			a.deviceTargets(c, inv)
		}
		if e.Has(grammar.Perms) && (e.Has(grammar.Recursive) || a.permsCatastrophic(c, inv)) {
			if c.Program == "chmod" {
				a.hitCmd(RuleChmod, c)
			} else {
				a.hitCmd(RuleChown, c)
			}
		}
		if e.Has(grammar.Interactive) || inv.ScriptFromStdin() {
			// stdinFed records the input itself only where shellparse
			// did not (opaqueCovers), but rates known text either way.
			a.stdinFed(c, c.Program, inv)
		}
		a.unknownTargets(c, inv)
		a.copyInto(c, inv)
	}
	for i := range inv.Options {
		o := &inv.Options[i]
		if !o.HasValue {
			continue
		}
		v := o.Value
		if o.ValueEffects.Has(grammar.EnvRef) {
			v = envRef(c, v)
		}
		a.value(c, inv, v, o.ValueEffects, dry)
	}
	if inv.Spec.Name == "ssh" && !dry {
		a.sshLoopback(c, inv)
	}
	a.envTemplate = copiesTemplates(inv)
	defer func() { a.envTemplate = false }()
	for i := range inv.Operands {
		op := &inv.Operands[i]
		if op.Effects.Has(grammar.Delete) && !dry {
			a.moveSource(c, *op)
		}
		if op.Effects.Has(grammar.Env) {
			if name := grammar.AssignName(op.Value); name != "" {
				switch v, eff := op.Value[strings.IndexByte(op.Value, '=')+1:], grammar.EnvEffects(inv.Program, name); {
				case eff.Has(grammar.Exec):
					a.execOption(c, v)
				case eff.Has(grammar.Program):
					a.wrapperExec(c, v, 0) // make CC=gcc: rated as the compiler it names
				}
			}
			continue
		}
		if inv.Effects.Has(grammar.Remote) && op.Effects.Has(grammar.Exec) {
			continue // the remote command: RuleRemoteExec
		}
		a.value(c, inv, op.Value, op.Effects, dry)
	}
}

// value applies the rules for one option value or operand with effects e.
func (a *analyzer) value(c *shellparse.Command, inv *grammar.Invocation, v string, e grammar.Effect, dry bool) {
	if a.pipeValue(c, v, e) {
		return
	}
	if e.Has(grammar.Exec) && !inv.Effects.Has(grammar.NoCommand) {
		if e.Has(grammar.Config) {
			// "key=value" or "Key value": the value runs.
			if i := strings.IndexAny(v, "= \t"); i >= 0 {
				v = v[i+1:]
			}
		}
		a.execOption(c, v)
	}
	if e.Has(grammar.Program) {
		a.commandValue(c, v)
	}
	if e.Has(grammar.Code) {
		a.code(c, inv, v)
	}
	if e.Has(grammar.Write) && !dry {
		a.writeTarget(c, v, false)
	}
}

// deletesFound: a deleting command run by find -exec on "{}" deletes what
// find visits, however it got the "{}" ("find ~ -exec sh -c 'rm -rf "$1"' _
// {} \;" binds it to the script's $1). It is read as find reads the direct
// form, "find … -exec PROG ARGS… ;", whose delete rules then apply.
func (a *analyzer) deletesFound(c *shellparse.Command, inv *grammar.Invocation) {
	var fw *shellparse.Wrapper
	for i := range c.Wrappers {
		if c.Wrappers[i].Program == "find" {
			fw = &c.Wrappers[i]
		}
	}
	if fw == nil || c.Program == "find" || len(c.Wrappers) == 0 || c.Wrappers[len(c.Wrappers)-1].Program == "find" {
		return // none, or find ran it directly: find's own reading has it
	}
	found := false
	for _, op := range inv.Operands {
		found = found || (op.Effects.Has(grammar.Target) && strings.Contains(op.Value, "{}"))
	}
	if !found {
		return
	}
	args := make([]string, 0, len(fw.Args)+len(c.Args)+3)
	args = append(append(args, fw.Args...), "-exec", c.Program)
	for _, w := range c.Args {
		args = append(args, w.Value)
	}
	if fi := grammar.Parse("find", append(args, ";")); fi.Effects.Has(grammar.Delete) {
		a.deletes(c, fi)
	}
}

// permsCatastrophic reports whether a mode or owner change names "/", a
// system directory or a home itself: "chmod 000 /" or "chown nobody /usr"
// locks every other user out of (or hands over) the whole tree below as a
// recursive change of the files would, so it needs the same approval.
func (a *analyzer) permsCatastrophic(c *shellparse.Command, inv *grammar.Invocation) bool {
	for _, op := range inv.Operands {
		if op.Effects.Has(grammar.Target) && a.catastrophicWord(c, op) {
			return true
		}
	}
	return false
}

// blockDevice reports whether word value v names a disk device: the path
// itself, or "{}" in a command find -exec runs whose start points reach
// /dev ("find /dev -name 'sd*' -exec mkfs.ext4 {} \;" formats the disks it
// finds).
func (a *analyzer) blockDevice(c *shellparse.Command, v string) bool {
	if a.isDevice(a.fold(v)) {
		return true
	}
	if !strings.Contains(v, "{}") {
		return false
	}
	for _, w := range c.Wrappers {
		if w.Program != "find" {
			continue
		}
		starts, _, _, _ := findActions(w.Args)
		if len(starts) == 0 {
			starts = []string{"."}
		}
		for _, s := range starts {
			p := a.fold(s)
			if p == "/" || p == "/dev" || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc") {
				return true
			}
		}
	}
	return false
}

// deletes applies the delete rules: a recursive delete of a catastrophic
// target is hardline; otherwise the program's own approval rule.
func (a *analyzer) deletes(c *shellparse.Command, inv *grammar.Invocation) {
	e := inv.Effects
	if !e.Has(grammar.Recursive) && inv.Spec.Name == "find" && a.findSelectsCatastrophic(c, inv) {
		a.hitCmd(RuleRmRoot, c)
		return
	}
	if e.Has(grammar.Recursive) {
		for _, op := range inv.Operands {
			if op.Effects.Has(grammar.Target) && a.catastrophicWord(c, op) {
				a.hitCmd(RuleRmRoot, c)
				return
			}
		}
		// GNU find with no starting point searches "." ("cd ~ && find
		// -delete" deletes the home).
		if inv.Spec.Name == "find" && !slices.ContainsFunc(inv.Operands, func(op grammar.Operand) bool { return op.Effects.Has(grammar.Target) }) &&
			a.catastrophicWord(c, grammar.Operand{Value: ".", Arg: -1, Effects: grammar.Target}) {
			a.hitCmd(RuleRmRoot, c)
			return
		}
	}
	// Deleting a file changes it as a write does (a shell rc, a credential,
	// a file in /etc); a device node removed is a device touched.
	for _, op := range inv.Operands {
		if !op.Effects.Has(grammar.Target) {
			continue
		}
		p := a.fold(op.Value)
		if a.blockDevice(c, op.Value) {
			a.hitCmd(RuleDeviceWrite, c)
		}
		a.checkWrite(c, op.Value, p)
	}
	if c.Program == "rm" || c.Program == "unlink" || c.Program == "shred" || c.Program == "rmdir" {
		for _, w := range c.Wrappers {
			if w.Program == "xargs" || w.Program == "find" || w.Program == "parallel" {
				a.hitCmd(RuleRmIndirect, c)
			}
		}
	}
	switch {
	case c.Program == "find":
		a.hitCmd(RuleFindDelete, c)
	case c.Program == "git":
		if e.Has(grammar.Force) {
			a.hitCmd(RuleGitClean, c)
		}
		if e.Has(grammar.Force|grammar.Recursive) && a.cleansCatastrophic(inv) {
			a.hitCmd(RuleRmRoot, c)
		}
	case e.Has(grammar.Recursive):
		a.hitCmd(RuleRmRecursive, c)
	case e.Has(grammar.Force) && c.Program == "rm":
		a.hitCmd(RuleRmForce, c)
	}
}

// deviceTargets: formatting, raw writes and size changes of a disk device
// are hardline; a size change of a file needs approval.
func (a *analyzer) deviceTargets(c *shellparse.Command, inv *grammar.Invocation) {
	e := inv.Effects
	block := e.Has(grammar.Device)
	for _, op := range inv.Operands {
		if op.Effects.Has(grammar.Target) && a.blockDevice(c, op.Value) {
			block = true
		}
	}
	for _, o := range inv.Options {
		// A formatting tool given a disk device as any option's value
		// (mkfs variants disagree on which options take one: -F is a
		// flag of mke2fs and a value of mkfs.vfat) formats it: an option
		// table that misreads a word never lowers a disk format.
		if o.HasValue && (o.ValueEffects.Has(grammar.Target) || e.Has(grammar.Format)) && a.blockDevice(c, o.Value) {
			block = true
		}
	}
	switch {
	case block && e.Has(grammar.Format):
		a.hitCmd(RuleDiskFormat, c)
	case block:
		a.hitCmd(RuleDiskWrite, c)
	case e.Has(grammar.Truncate) && !allLogs(inv):
		a.hitCmd(RuleTruncate, c)
	}
}

// allLogs reports whether every target of a truncate is a log file
// ("truncate -s0 app.log"): emptying a log is routine housekeeping.
func allLogs(inv *grammar.Invocation) bool {
	n := 0
	for _, op := range inv.Operands {
		if !op.Effects.Has(grammar.Target) {
			continue
		}
		n++
		b := path.Base(op.Value)
		if !(strings.HasSuffix(b, ".log") || strings.Contains(b, ".log.")) || strings.HasPrefix(op.Value, "/dev/") {
			return false
		}
	}
	return n > 0
}

// copiesTemplates reports whether a copy's sources are all templates
// (".env.example", ".env.sample", ".env.template", ".env.dist").
func copiesTemplates(inv *grammar.Invocation) bool {
	if inv.Spec == nil || (inv.Spec.Name != "cp" && inv.Spec.Name != "install") || len(inv.Operands) < 2 {
		return false
	}
	for _, op := range inv.Operands[:len(inv.Operands)-1] {
		b := path.Base(op.Value)
		ok := false
		for _, suf := range [...]string{".example", ".sample", ".template", ".dist", ".defaults", ".tmpl"} {
			if strings.HasSuffix(b, suf) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// catastrophicWord reports whether a delete target is "/", a system
// directory or a home, as bash will expand it: a quoted "~" or "$HOME" is a
// directory of that name, not the home.
func (a *analyzer) catastrophicWord(c *shellparse.Command, op grammar.Operand) bool {
	if op.Arg >= 0 && op.Arg < len(c.Args) {
		w := c.Args[op.Arg]
		if w.Literal && w.Value == op.Value && (strings.HasPrefix(w.Value, "~") || strings.HasPrefix(w.Value, "$")) {
			return false
		}
		if w.Glob && strings.IndexByte(op.Value, '{') >= 0 {
			// Brace expansion: bash runs the command with every
			// alternative ("~/{*,.*}" is "~/*" and "~/.*").
			for _, alt := range braceExpand(op.Value) {
				if isCatastrophicTarget(a.fold(alt)) {
					return true
				}
			}
		}
	}
	return isCatastrophicTarget(a.fold(op.Value))
}

// code applies the rules for inline code given to an interpreter, editor,
// REPL or debugger: it needs approval, except awk and sed programs that
// run no command and write no file, and SQL (judged by the database rules).
func (a *analyzer) code(c *shellparse.Command, inv *grammar.Invocation, text string) {
	switch inv.Spec.Name {
	case "python":
		if grammar.PythonPrintsOnly(inv) {
			return
		}
		a.keepHardline(c, grammar.CodeCommands("python", text))
	case "awk":
		if !grammar.AwkRunsCommands(text) {
			return
		}
		// A literal command string is a shell payload, as bash -c's is.
		for _, cmd := range grammar.AwkCommandStrings(text) {
			a.keepHardline(c, cmd)
		}
		for _, f := range grammar.AwkOutputFiles(text) {
			a.writeTarget(c, f, false)
		}
	case "sed":
		a.sedScript(c, text)
		return
	case "sqlite3":
		e := grammar.SQLiteDot(text)
		if e.Has(grammar.Exec) {
			a.hitCmd(RuleInterpPay, c)
			a.keepHardline(c, grammar.SQLiteShell(text))
		}
		if isDestructiveSQL(text) {
			a.hitCmd(RuleDBDrop, c)
		}
		return
	case "perl":
		if grammar.PerlFiltersOnly(inv) {
			return
		}
		a.keepHardline(c, grammar.CodeCommands(inv.Spec.Name, text))
		for _, cmd := range grammar.PerlOpenCommands(inv) {
			a.keepHardline(c, cmd)
		}
	case "ruby", "node", "lua", "php":
		a.keepHardline(c, grammar.CodeCommands(inv.Spec.Name, text))
	case "expect", "tclsh":
		a.keepHardline(c, grammar.TclCommands(text))
	case "gdb":
		a.keepHardline(c, grammar.EditorShellText(text))
		if py, ok := grammar.GdbPython(text); ok {
			a.keepHardline(c, grammar.CodeCommands("python", py))
		}
	case "vim", "less", "emacs":
		a.keepHardline(c, grammar.EditorShellText(text))
	default:
		// A program whose script the grammar reads as shell commands
		// (make's --eval text: its recipes and $(shell …) calls).
		if sc := inv.Spec.Stdin; sc != nil && sc.Shell != nil {
			a.keepHardline(c, sc.Shell(text))
		}
	}
	if isForkLoop(text) && inv.Spec.Name != "vim" {
		a.hitCmd(RuleForkBomb, c)
	}
	if !a.opaqueCovers(c.Span) {
		a.hitCmd(RuleInterpPay, c)
	}
}

// keepHardline analyses text as a shell command and keeps its hardline
// findings on c. A leading "!" is dropped: git runs an alias or a config
// value "!cmd" as sh -c cmd (git -c alias.x='!reboot' x), and for bash
// "! cmd" still runs cmd.
func (a *analyzer) keepHardline(c *shellparse.Command, text string) {
	text = strings.TrimPrefix(strings.TrimLeft(text, " \t"), "!")
	if text == "" {
		return
	}
	if sub := a.sub(text); sub != nil {
		for _, f := range sub.Findings {
			if f.Tier == TierHardline {
				a.hit(f.Rule, c.Text, c.Span)
			}
		}
	}
}

// sedScript applies the rules to a sed script: the e command and the e
// flag of s run commands; w, W and the w flag write files.
func (a *analyzer) sedScript(c *shellparse.Command, script string) {
	runs, writes, cmds := sedEffects(script)
	if runs {
		a.hitCmd(RuleInterpPay, c)
	}
	for _, cmd := range cmds {
		a.keepHardline(c, cmd)
	}
	for _, f := range writes {
		a.writeTarget(c, f, false)
	}
}

// sedEffects scans a sed script for commands that run a command (e, s///e)
// and the files it writes (w FILE, W FILE, s///w FILE). An unreadable
// script counts as running one. cmds are the literal command lines: "e
// CMD"'s, and s///e's replacement, which is what runs when the pattern
// covers the line ("s/.*/reboot/e").
func sedEffects(s string) (runs bool, writes, cmds []string) {
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := strings.TrimSpace(s[i : i+j])
		i += j
		return v
	}
	skipDelim := func(d byte) bool { // skips to after the next unescaped d
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			}
			i++
		}
		return false
	}
	for i < len(s) {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '{' || ch == '}' || ch == '!' || ch == ',':
			i++
		case ch >= '0' && ch <= '9' || ch == '$' || ch == '~' || ch == '+':
			i++
		case ch == '/':
			i++
			if !skipDelim('/') {
				return true, writes, cmds
			}
		case ch == '\\':
			if i+1 >= len(s) {
				return true, writes, cmds
			}
			d := s[i+1]
			i += 2
			if !skipDelim(d) {
				return true, writes, cmds
			}
		case ch == 'e':
			i++
			if cmd := restOfLine(); cmd != "" {
				cmds = append(cmds, cmd)
			}
			runs = true
		case ch == 'w' || ch == 'W':
			i++
			writes = append(writes, restOfLine())
		case ch == 'r' || ch == 'R' || ch == 'a' || ch == 'i' || ch == 'c' || ch == ':' || ch == 'b' || ch == 't' || ch == 'T' || ch == '#':
			i++
			restOfLine()
		case ch == 's' || ch == 'y':
			if i+1 >= len(s) {
				return true, writes, cmds
			}
			d := s[i+1]
			i += 2
			// The pattern, then the replacement (or y's second set).
			if !skipDelim(d) {
				return true, writes, cmds
			}
			from := i
			if !skipDelim(d) {
				return true, writes, cmds
			}
			replacement := s[from : i-1]
			if ch == 'y' {
				continue
			}
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				switch s[i] {
				case 'e':
					runs = true
					cmds = append(cmds, replacement)
				case 'w':
					i++
					writes = append(writes, restOfLine())
					continue
				}
				i++
			}
		default:
			i++ // p, d, n, q, l, = … and their arguments
		}
	}
	return runs, writes, cmds
}

// containerMounts flags bind mounts that hand a container the host: the
// root, a system directory, a home, /etc or the engine's socket.
func (a *analyzer) containerMounts(c *shellparse.Command, inv *grammar.Invocation) {
	if inv == nil {
		return
	}
	for _, o := range inv.Options {
		if o.Name != "--volume" && o.Name != "--mount" || !o.HasValue {
			continue
		}
		src := o.Value
		if o.Name == "--mount" {
			for _, kv := range strings.Split(o.Value, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
					src = v
				}
			}
		} else if j := strings.IndexByte(o.Value, ':'); j >= 0 {
			src = o.Value[:j]
		}
		if strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.HasPrefix(src, "$HOME") {
			p := a.fold(src)
			if isCatastrophicTarget(p) || strings.HasSuffix(p, "docker.sock") || strings.HasSuffix(p, "podman.sock") || isEtc(p) {
				a.hitCmd(RulePrivileged, c)
			}
		}
	}
}

// targetEffects are the invocation effects whose harm depends on what the
// targets are.
const targetEffects = grammar.Delete | grammar.Format | grammar.DeviceWrite | grammar.Truncate | grammar.Perms | grammar.Signal

// unknownTargets holds for approval an invocation that destroys, overwrites
// or signals what a value known only at run time names: the analysis cannot
// tell "rm "$f"" from "rm -rf ~" when f comes from the environment, a
// command substitution or read.
func (a *analyzer) unknownTargets(c *shellparse.Command, inv *grammar.Invocation) {
	destructive := inv.Effects.Any(targetEffects)
	for _, op := range inv.Operands {
		if inv.Effects.Has(grammar.Signal) && op.Effects.Has(grammar.Target) && ownJobs[op.Value] {
			continue // pids of the shell's own background jobs
		}
		if (destructive && op.Effects.Has(grammar.Target) || op.Effects.Has(grammar.Write)) && unknownArg(c, op.Arg) {
			a.hitCmd(RuleUnknownTarget, c)
			return
		}
	}
	for _, o := range inv.Options {
		if o.HasValue && (destructive && o.ValueEffects.Has(grammar.Target) || o.ValueEffects.Has(grammar.Write)) && unknownArg(c, o.ValueArg) {
			a.hitCmd(RuleUnknownTarget, c)
			return
		}
	}
}

// ownJobs are expansions that give only the pids of the shell's own
// background jobs ("trap 'kill $(jobs -p)' EXIT", "kill $!"): the shell's
// children, whatever their number.
var ownJobs = map[string]bool{"$!": true, "${!}": true, "$(jobs -p)": true, "`jobs -p`": true, "$(jobs -pr)": true, "$(jobs -rp)": true}

// unknownArg reports whether argument i of c holds a value known only at
// run time.
func unknownArg(c *shellparse.Command, i int) bool {
	return i >= 0 && i < len(c.Args) && c.Args[i].Unknown
}

// envRef returns a "key=NAME" setting with NAME replaced by the literal
// value the command's environment gives the variable, when it does (git
// --config-env core.fsmonitor=P with P=reboot is core.fsmonitor=reboot);
// otherwise the setting as written, whose value is then not known.
func envRef(c *shellparse.Command, kv string) string {
	k, name, ok := strings.Cut(kv, "=")
	if !ok {
		return kv
	}
	for i := len(c.Env) - 1; i >= 0; i-- {
		if e := c.Env[i]; e.Name == name && e.Value.Literal {
			return k + "=" + e.Value.Value
		}
	}
	return kv
}

// commandValue rates a command line that the program runs as it would run
// on its own (hyperfine's benchmarks): its findings, of every tier, are c's.
// Past the nesting budget it needs approval.
func (a *analyzer) commandValue(c *shellparse.Command, v string) {
	sub := a.sub(v)
	if sub == nil {
		a.hit(RuleExecOption, c.Text, c.Span)
		return
	}
	for _, f := range sub.Findings {
		a.hit(f.Rule, c.Text, c.Span)
	}
}

// cleansCatastrophic reports whether git clean -f -d, as inv, deletes the
// untracked files of a whole home, system directory or "/": its work tree
// (--work-tree, -C, else the tracked working directory) is one and no
// pathspec narrows it, or a pathspec names one. In a home that is a git
// work tree (a dotfiles repository), every file not committed is
// untracked: "cd ~ && git clean -fdx" empties the home.
func (a *analyzer) cleansCatastrophic(inv *grammar.Invocation) bool {
	saved := a.cwd
	defer func() { a.cwd = saved }()
	for _, name := range [...]string{"-C", "--work-tree"} {
		if v, ok := inv.Value(name); ok {
			a.cwd = a.fold(v)
		}
	}
	if len(inv.Operands) == 0 {
		return a.cwd != "" && isCatastrophicTarget(a.cwd)
	}
	for _, op := range inv.Operands {
		if isCatastrophicTarget(a.fold(op.Value)) {
			return true
		}
	}
	return false
}
