package shellparse

import (
	"strings"

	"github.com/tether-dev/tether/grammar"
	"mvdan.cc/sh/v3/syntax"
)

// readOpts reads the words after ws[i] with program's grammar up to end
// or the first word that is not literal and not an option's value, where
// option reading stops (that word then starts the command, which makes it
// opaque rather than guessed). It returns the invocation and the index in ws of its first
// operand (the stopping word when there is none).
func readOpts(program string, ws []Word, i, end int) (*grammar.Invocation, int) {
	stop := i + 1
	var inv *grammar.Invocation
	for {
		for stop < end && ws[stop].Literal {
			stop++
		}
		inv = grammar.Parse(program, values(ws[i+1:stop]))
		// A word that is not literal but is the value of the option
		// before it ("script -c "$x"") is read on.
		if stop >= end || len(inv.Options) == 0 || !inv.Options[len(inv.Options)-1].Missing {
			break
		}
		stop++
	}
	switch {
	case inv.Command >= 0:
		return inv, i + 1 + inv.Command
	case len(inv.Operands) > 0:
		return inv, i + 1 + inv.Operands[0].Arg
	}
	return inv, stop
}

// subWord returns the index in ws of the word naming inv's first
// subcommand (inv read from the words after ws[i]), -1 when none: the
// first word with that value that is no option's word or value.
func subWord(inv *grammar.Invocation, i int) int {
	if len(inv.Sub) == 0 {
		return -1
	}
next:
	for k, a := range inv.Args {
		if a != inv.Sub[0] {
			continue
		}
		for _, o := range inv.Options {
			if o.Arg == k || o.ValueArg == k {
				continue next
			}
		}
		return i + 1 + k
	}
	return -1
}

// optValue returns the value of the option named name in inv and the index
// in ws of the word holding it (inv read from the words after ws[i]); -1
// when the option is absent or has no value.
func optValue(inv *grammar.Invocation, i int, name string) (string, int) {
	for _, o := range inv.Options {
		if o.Name == name && o.HasValue {
			return o.Value, i + 1 + o.ValueArg
		}
	}
	return "", -1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// splitAssign splits a NAME=VALUE word given to env or sudo.
func splitAssign(wd Word) (Assign, bool) {
	eq := strings.IndexByte(wd.Value, '=')
	if eq <= 0 || !syntax.ValidName(wd.Value[:eq]) {
		return Assign{}, false
	}
	raw := wd.Raw
	if k := strings.IndexByte(raw, '='); k >= 0 {
		raw = raw[k+1:]
	}
	return Assign{Name: wd.Value[:eq], Value: Word{Value: wd.Value[eq+1:], Literal: wd.Literal, Raw: raw, Glob: wd.Glob}}, true
}

// peel handles a wrapper program at word i. It returns the index of the
// wrapped command and true when name is a wrapper that runs one; false when
// word i is the program itself; a negative index when peel recorded
// everything itself (payloads, find -exec).
func (w *walker) peel(name string, cs *cmdState, i int, c ctx) (int, bool) {
	switch name {
	case "find":
		w.find(cs, i, c)
		return -1, false
	case "busybox", "toybox":
		if i+1 < len(cs.words) && cs.words[i+1].Literal && !strings.HasPrefix(cs.words[i+1].Value, "-") {
			cs.pushWrapper(name, i, i+1)
			return i + 1, true
		}
		return 0, false
	case "su", "runuser":
		return w.peelSu(name, cs, i, c)
	case "watch":
		return w.peelWatch(cs, i, c)
	case "flock":
		return w.peelFlock(cs, i, c)
	case "parallel":
		return w.peelParallel(cs, i, c)
	case "trap":
		return w.peelTrap(cs, i, c)
	case "tmux":
		return w.peelTmux(cs, i, c)
	case "screen":
		if k, ok, handled := w.peelScreen(cs, i, c); handled {
			return k, ok
		}
	case "start-stop-daemon":
		return w.peelStartStop(cs, i, c)
	case "script", "nix-shell":
		return w.peelRunOpt(name, cs, i, c)
	case "capsh":
		return w.peelCapsh(cs, i, c)
	case "entr":
		// entr -s runs its first operand as a shell script.
		if inv, next := readOpts("entr", cs.words, i, len(cs.words)); inv.Has("-s") && next < len(cs.words) {
			cs.pushWrapper("entr", i, next)
			w.shellString("entr", cs, next, next+1, c)
			return -1, false
		}
	case "sg":
		// sg GROUP [-c] COMMAND: the command is a shell string.
		if i+2 < len(cs.words) {
			j := i + 2
			if cs.words[j].Value == "-c" && j+1 < len(cs.words) {
				j++
			}
			cs.pushWrapper(name, i, j)
			w.shellString(name, cs, j, len(cs.words), c)
			return -1, false
		}
		return 0, false
	}
	inv, end := readWrapper(name, cs.words, cs.nodes, i)
	if inv == nil {
		return 0, false
	}
	if name == "env" {
		// Words after env's first -S are read only once its string is
		// split in front of them (below): a later --null may be an
		// argument of the command the string names.
		for _, o := range inv.Options {
			if o.Name == "--split-string" && o.HasValue {
				if cut := i + 2 + o.ValueArg; cut < len(cs.words) {
					inv, end = grammar.Parse("env", values(cs.words[i+1:cut])), cut
				}
				break
			}
		}
	}
	if inv.Effects.Has(grammar.NoCommand) {
		return 0, false
	}
	next := -1
	if inv.Command >= 0 {
		next = i + 1 + inv.Command
	} else if end < len(cs.words) {
		next = end // a word that cannot be read statically: the command is opaque
	}
	if name == "env" {
		// "env -" is "env -i"; GNU env reads on after it.
		for next >= 0 && next < len(cs.words) && cs.words[next].Literal && cs.words[next].Value == "-" {
			cs.envFlags = append(cs.envFlags[:len(cs.envFlags):len(cs.envFlags)], "-i")
			more, e2 := readWrapper(name, cs.words, cs.nodes, next)
			switch {
			case more.Effects.Has(grammar.NoCommand):
				return 0, false
			case more.Command >= 0:
				next = next + 1 + more.Command
			case e2 < len(cs.words):
				next = e2
			default:
				next = -1
			}
			inv.Options = append(inv.Options, more.Options...)
			inv.Assigns = append(inv.Assigns, more.Assigns...)
		}
	}
	var split *grammar.Opt
	shellMode, replace := false, ""
	var envFlags []string
	for k := range inv.Options {
		o := &inv.Options[k]
		switch name {
		case "xargs":
			switch o.Name {
			case "-I":
				replace = o.Value
			case "--replace":
				replace = o.Value
				if replace == "" {
					replace = "{}"
				}
			}
		case "sudo", "sudo-rs", "doas":
			if o.Effects.Has(grammar.Interactive) || (name == "doas" && o.Name == "-s") {
				shellMode = true
			}
		case "env":
			switch o.Name {
			case "--ignore-environment":
				envFlags = append(envFlags, "-i")
			case "--unset":
				envFlags = append(envFlags, "-u "+o.Value)
			case "--split-string":
				// The first -S is split where getopt meets it; its words
				// stop env's option reading when they start a command,
				// so a later -S or --null may be the command's argument
				// (env -S 'kill -9 -1' --null runs kill -9 -1 --null).
				if split == nil {
					split = o
				}
			}
		}
	}
	if split == nil && next < 0 {
		return 0, false // nothing to run: the wrapper is the program
	}
	if next < 0 {
		next = len(cs.words)
	}
	var env []Assign
	for _, a := range inv.Assigns {
		if as, ok := splitAssign(Word{Value: a, Literal: true, Raw: a}); ok {
			env = append(env, as)
		}
	}
	if len(env) > 0 {
		// Keep the words' own literal flags and raw text.
		env = env[:0]
		for k := i + 1; k < next; k++ {
			if a, ok := splitAssign(cs.words[k]); ok && isAssignWord(inv, cs.words[k].Value) {
				env = append(env, a)
			}
		}
	}
	cs.pushWrapper(name, i, next)
	if len(env) > 0 {
		cs.env = append(cs.env[:len(cs.env):len(cs.env)], env...)
		for k := i + 1; k < next && k < len(cs.nodes); k++ {
			if n, ps := procAssign(cs.nodes[k]); ps != nil {
				// env BASH_ENV=<(echo reboot) bash -c true: the shell
				// runs the text as its start-up file.
				w.startupText(cs, n, ps, cs.nodes[k], c)
			}
		}
	}
	if len(envFlags) > 0 {
		cs.envFlags = append(cs.envFlags[:len(cs.envFlags):len(cs.envFlags)], envFlags...)
	}
	if w := inv.SubSpec.Wrap; w != nil && w.ExtraArgs {
		cs.extra = true
	}
	if replace != "" {
		cs.replace = replace
	}
	if name == "xargs" {
		opts := make(map[string]string, len(inv.Options))
		for _, o := range inv.Options {
			opts[o.Name] = o.Value
		}
		in := cs.stdin
		if f, ok := opts["--arg-file"]; ok {
			// xargs -a FILE reads its items from FILE, and the command
			// keeps the standard input: a file the line wrote with known
			// text gives the items.
			in = nil
			if t, known := w.fileText(f); known {
				in = &feed{text: t, lit: true}
				delete(opts, "--arg-file")
			}
		} else {
			cs.stdin = nil // xargs reads it: the command it runs gets none
		}
		if in != nil {
			if items, ok := xargsItems(in, opts); ok {
				cs.feed = feedWords(in, items)
			}
		}
		if cs.feed != nil && replace == "" && !xargsSplits(opts) && next < len(cs.words) {
			// One run with every item appended: the command's own
			// words, so that a shell or wrapper it is reads them too
			// (echo reboot | xargs sh -c).
			last := cs.nodes[len(cs.nodes)-1]
			cs.words = append(cs.words[:len(cs.words):len(cs.words)], cs.feed...)
			for range cs.feed {
				cs.nodes = append(cs.nodes[:len(cs.nodes):len(cs.nodes)], last)
			}
			cs.feed = nil
		}
	}
	if shellMode && next < len(cs.words) {
		// sudo -s/-i CMD…: the user's shell runs the words with -c.
		w.shellString(name, cs, next, len(cs.words), c)
		return -1, false
	}
	if split != nil {
		// env -S splits its string into arguments that precede the
		// remaining words: parse it as shell words, which covers quoting.
		argIdx := i + 1 + split.ValueArg
		if !split.HasValue || split.ValueArg < 0 {
			return 0, false // env -S without a string fails
		}
		args, ok := envSplit(split.Value)
		if !ok || !cs.words[argIdx].Literal {
			w.addOpaque(OpaquePayload, "env", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		// The split arguments take the place of the -S option in env's own
		// argument list, where options and assignments are still read: run
		// them through env again.
		var b strings.Builder
		b.WriteString("env")
		for _, a := range args {
			b.WriteByte(' ')
			b.WriteString(shellQuote(a))
		}
		for k := argIdx + 1; k < len(cs.words); k++ {
			b.WriteByte(' ')
			b.WriteString(cs.words[k].Raw)
		}
		w.payload("env", b.String(), cs.nodes[argIdx], cs.nodes[len(cs.nodes)-1], cs, c)
		return -1, false
	}
	return next, true
}

// isAssignWord reports whether v is one of the assignments the grammar
// read before the command.
func isAssignWord(inv *grammar.Invocation, v string) bool {
	for _, a := range inv.Assigns {
		if a == v {
			return true
		}
	}
	return false
}

// procAssignWord reports whether sw is a "NAME=<(…)" word (see procAssign).
func procAssignWord(sw *syntax.Word) bool { _, ps := procAssign(sw); return ps != nil }

// readWrapper reads the words after the wrapper at word i with the
// program's grammar (package grammar, the table every reader shares). It
// returns nil when name is not a wrapper there. Reading stops at the first
// word that is not literal, unless it is the value of the option before it:
// end is the index of that word (len(ws) when all are literal), where an
// unknowable command then starts.
func readWrapper(name string, ws []Word, nodes []*syntax.Word, i int) (*grammar.Invocation, int) {
	if !grammar.Lookup(name).Wraps() {
		return nil, len(ws)
	}
	end := i + 1
	for {
		// A "NAME=<(…)" word is one word NAME=/dev/fd/N: an assignment.
		for end < len(ws) && (ws[end].Literal || (end < len(nodes) && nodes[end] != nil && procAssignWord(nodes[end]))) {
			end++
		}
		inv := grammar.Parse(name, values(ws[i+1:end]))
		if inv.SubSpec == nil || inv.SubSpec.Wrap == nil {
			return nil, len(ws)
		}
		valueOf := len(inv.Options) > 0 && inv.Options[len(inv.Options)-1].Missing
		ownOperand := inv.Command < 0 && len(inv.Operands) < inv.SubSpec.Wrap.Operands
		if inv.Command >= 0 || end >= len(ws) || !valueOf && !ownOperand {
			return inv, end
		}
		// The non-literal word is that option's value, or one of the
		// wrapper's own operands ("setarch $(uname -m) cmd"): read on.
		end++
	}
}

// peelSu handles su and runuser, read with their grammar: util-linux
// permutes their options, so "-c CMD", "--command CMD" and "-s PROG" count
// wherever they stand before "--" ("su root --command 'id'"). The words
// after the user (and after "--") are handed to the shell, which is -s PROG
// when given ("su -s /bin/rm root -- -rf /" runs rm). A shell given -c
// parses CMD; another program gets "-c CMD" as arguments. runuser's
// "-u USER CMD…" runs a command directly. Without a command or arguments
// they start an interactive shell and stay the program.
func (w *walker) peelSu(name string, cs *cmdState, i int, c ctx) (int, bool) {
	n := len(cs.words)
	for k := i + 1; k < n; k++ {
		if !cs.words[k].Literal {
			cs.pushWrapper(name, i, k)
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
	}
	inv := grammar.Parse("su", values(cs.words[i+1:]))
	shell, _ := inv.Value("--shell")
	cmd, hasCmd := inv.Value("--command")
	if v, ok := inv.Value("--session-command"); ok {
		cmd, hasCmd = v, true
	}
	ops := inv.Operands
	if len(ops) > 0 && ops[0].Value == "-" && (inv.DashDash < 0 || ops[0].Arg < inv.DashDash) {
		ops = ops[1:] // "su -": a login shell
	}
	if _, ok := inv.Value("--user"); ok && name == "runuser" {
		// runuser -u USER CMD…: the command starts at its first operand.
		if len(ops) == 0 {
			return 0, false
		}
		k := i + 1 + ops[0].Arg
		cs.pushWrapper(name, i, k)
		return k, true
	}
	if len(ops) > 0 && (inv.DashDash < 0 || ops[0].Arg < inv.DashDash) {
		ops = ops[1:] // the user
	}
	var text strings.Builder
	switch {
	case hasCmd && (shell == "" || shells()[baseName(shell)]):
		text.WriteString(cmd)
	case hasCmd:
		text.WriteString(shellQuote(shell) + " -c " + shellQuote(cmd))
	case len(ops) > 0:
		if shell == "" {
			shell = "sh"
		}
		text.WriteString(shellQuote(shell))
		for _, op := range ops {
			text.WriteByte(' ')
			text.WriteString(shellQuote(op.Value))
		}
	default:
		return 0, false // an interactive shell: su is the program
	}
	cs.pushWrapper(name, i, n)
	w.payload(name, text.String(), cs.nodes[i], cs.nodes[n-1], cs, c)
	return -1, false
}

// peelTrap handles trap ACTION SIGNAL…: the action is a shell string run
// later, parsed as a payload with trap as its wrapper.
func (w *walker) peelTrap(cs *cmdState, i int, c ctx) (int, bool) {
	j := i + 1
	if j < len(cs.words) && cs.words[j].Literal && strings.HasPrefix(cs.words[j].Value, "-") && cs.words[j].Value != "-" {
		if cs.words[j].Value != "--" {
			return 0, false // trap -l, trap -p: listings
		}
		j++
	}
	if j+1 >= len(cs.words) || (cs.words[j].Literal && (cs.words[j].Value == "-" || cs.words[j].Value == "")) {
		return 0, false // a reset, or trap SIGNAL alone
	}
	cs.pushWrapper("trap", i, j)
	w.shellString("trap", cs, j, j+1, c)
	return -1, false
}

// tmuxKeyNames are send-keys key names and what a shell reading them sees.
var tmuxKeyNames = map[string]string{"Enter": "\n", "C-m": "\n", "KPEnter": "\n", "C-j": "\n", "Space": " ", "Tab": "\t", "^M": "\n"}

// peelTmux handles tmux command sequences (commands separated by ";"
// words, as "\;" writes them): commands that run a shell command
// (new-session, new-window, split-window, respawn-*, run-shell,
// display-popup, if-shell, pipe-pane) have their trailing words parsed as a
// shell string, and send-keys types its keys into a pane's shell, so they
// are parsed as one too. tmux -c CMD runs CMD. Other tmux commands stay tmux.
func (w *walker) peelTmux(cs *cmdState, i int, c ctx) (int, bool) {
	end := i + 1
	for end < len(cs.words) && cs.words[end].Value != ";" {
		end++
	}
	inv, j := readOpts("tmux", cs.words, i, end)
	sw := subWord(inv, i)
	// tmux's own -c, not a command's ("new-session -c DIR").
	if cmdArg, cmdIdx := optValue(inv, i, "-c"); cmdIdx >= 0 && (sw < 0 || cmdIdx < sw) {
		// tmux -c CMD runs CMD with the default shell.
		cs.pushWrapper("tmux", i, cmdIdx)
		if !cs.words[cmdIdx].Literal {
			w.addOpaque(OpaquePayload, "tmux", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		w.payload("tmux", cmdArg, cs.nodes[cmdIdx], cs.nodes[cmdIdx], cs, c)
		return -1, false
	}
	// The words after tmux's options are commands separated by ";".
	if sw >= 0 {
		j = sw
	}
	found := false
	for j < len(cs.words) {
		end := j
		for end < len(cs.words) && cs.words[end].Value != ";" {
			end++
		}
		if w.tmuxCommand(cs, i, j, end, c) {
			found = true
		}
		j = end + 1
	}
	if !found {
		return 0, false
	}
	return -1, false
}

// tmuxCommand handles one tmux command in words [j, end) and reports
// whether it ran or typed a shell command.
func (w *walker) tmuxCommand(cs *cmdState, i, j, end int, c ctx) bool {
	if j >= end {
		return false
	}
	name := cs.words[j].Value
	sp := grammar.Lookup("tmux").Sub(name)
	if sp == nil || (sp.Wrap == nil && sp.Name != "send-keys") {
		return false
	}
	sub := &cmdState{stmt: cs.stmt, words: cs.words[:end], nodes: cs.nodes[:end], env: cs.env, envFlags: cs.envFlags,
		redirs: cs.redirs, wrappers: cs.wrappers, lastWrap: -1, ctx: cs.ctx, dirs: cs.dirs, anyDir: cs.anyDir}
	// The command's own options, read as tmux NAME OPTIONS…: its first
	// operand starts the shell command (or the keys).
	_, k := readOpts("tmux", sub.words, j-1, end)
	if k >= end {
		return false
	}
	if sp.Name == "send-keys" {
		var b strings.Builder
		lit := true
		for _, wd := range cs.words[k:end] {
			if v, ok := tmuxKeyNames[wd.Value]; ok {
				b.WriteString(v)
				continue
			}
			lit = lit && wd.Literal
			b.WriteString(wd.Value)
		}
		sub.pushWrapper("tmux", i, k)
		if !lit {
			w.addOpaque(OpaquePayload, "tmux", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return true
		}
		w.payload("tmux", strings.ReplaceAll(strings.ReplaceAll(b.String(), "\\n", "\n"), "\\t", "\t"), cs.nodes[k], cs.nodes[end-1], sub, c)
		return true
	}
	sub.pushWrapper("tmux", i, k)
	w.shellString("tmux", sub, k, end, c)
	return true
}

// peelScreen handles screen -X: the operands are a screen command sent to a
// running session. "stuff TEXT" types TEXT into its shell, "exec CMD…" and
// "screen CMD…" run a command; both are parsed. It reports whether it
// handled the command; otherwise screen is read as a wrapper.
func (w *walker) peelScreen(cs *cmdState, i int, c ctx) (int, bool, bool) {
	inv, _ := readWrapper("screen", cs.words, cs.nodes, i)
	if inv == nil || !inv.Has("-X") {
		return 0, false, false
	}
	first := inv.Command
	if first < 0 {
		return 0, false, true
	}
	k := i + 1 + first
	switch cs.words[k].Value {
	case "stuff":
		if k+1 >= len(cs.words) {
			return 0, false, true
		}
		cs.pushWrapper("screen", i, k+1)
		text, lit := joinValues(cs.words[k+1:])
		if !lit {
			w.addOpaque(OpaquePayload, "screen", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false, true
		}
		r := strings.NewReplacer("\\n", "\n", "\\r", "\n", "^M", "\n", "^J", "\n", "\\015", "\n", "\\012", "\n")
		w.payload("screen", r.Replace(text), cs.nodes[k+1], cs.nodes[len(cs.nodes)-1], cs, c)
		return -1, false, true
	case "exec", "screen":
		if k+1 >= len(cs.words) {
			return 0, false, true
		}
		cs.pushWrapper("screen", i, k+1)
		return k + 1, true, true
	}
	return 0, false, true
}

// peelStartStop handles start-stop-daemon --start: the program is the
// --startas (else --exec) value and its arguments are the words after "--".
func (w *walker) peelStartStop(cs *cmdState, i int, c ctx) (int, bool) {
	n := len(cs.words)
	for k := i + 1; k < n; k++ {
		if !cs.words[k].Literal {
			w.addOpaque(OpaquePayload, "start-stop-daemon", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
	}
	inv := grammar.Parse("start-stop-daemon", values(cs.words[i+1:]))
	if !inv.Has("--start") {
		return 0, false
	}
	prog, ok := inv.Value("--startas")
	if !ok {
		if prog, ok = inv.Value("--exec"); !ok {
			return 0, false
		}
	}
	var b strings.Builder
	b.WriteString(shellQuote(prog))
	if inv.DashDash >= 0 {
		for _, a := range inv.Args[inv.DashDash+1:] {
			b.WriteByte(' ')
			b.WriteString(shellQuote(a))
		}
	}
	cs.pushWrapper("start-stop-daemon", i, n)
	w.payload("start-stop-daemon", b.String(), cs.nodes[i], cs.nodes[n-1], cs, c)
	return -1, false
}

// peelRunOpt handles programs with an option whose value is a shell
// string: script -c CMD, nix-shell --run/--command CMD.
func (w *walker) peelRunOpt(name string, cs *cmdState, i int, c ctx) (int, bool) {
	// Both permute their options: every literal word is read.
	inv, _ := readOpts(name, cs.words, i, len(cs.words))
	opt := "--command" // script -c, nix-shell --command
	arg, idx := optValue(inv, i, opt)
	if name == "nix-shell" && idx < 0 {
		arg, idx = optValue(inv, i, "--run")
	}
	if idx < 0 {
		return 0, false
	}
	// The wrapper keeps all its words: script's typescript operand after
	// -c CMD is a file it writes ("script -c true /dev/sda").
	cs.pushWrapper(name, i, len(cs.words))
	if !cs.words[idx].Literal {
		w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return -1, false
	}
	w.payload(name, arg, cs.nodes[idx], cs.nodes[idx], cs, c)
	return -1, false
}

// peelCapsh handles capsh: the words after "--" are the arguments of
// /bin/bash (or of --shell=PROG), so "capsh --caps=… -- -c CMD" runs CMD.
// Without "--" capsh runs nothing of ours.
func (w *walker) peelCapsh(cs *cmdState, i int, c ctx) (int, bool) {
	shell := "/bin/bash"
	for k := i + 1; k < len(cs.words); k++ {
		wd := cs.words[k]
		if !wd.Literal {
			cs.pushWrapper("capsh", i, k)
			w.addOpaque(OpaquePayload, "capsh", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		if v, ok := strings.CutPrefix(wd.Value, "--shell="); ok {
			shell = v
		}
		if wd.Value != "--" {
			continue
		}
		if k+1 >= len(cs.words) {
			return 0, false
		}
		cs.pushWrapper("capsh", i, k+1)
		text := shellQuote(shell)
		for _, a := range cs.words[k+1:] {
			text += " " + shellQuote(a.Value)
		}
		w.payload("capsh", text, cs.nodes[k+1], cs.nodes[len(cs.nodes)-1], cs, c)
		return -1, false
	}
	return 0, false
}

// peelWatch handles watch: without -x it joins its arguments into a string
// run by sh -c.
func (w *walker) peelWatch(cs *cmdState, i int, c ctx) (int, bool) {
	inv, next := readOpts("watch", cs.words, i, len(cs.words))
	if next >= len(cs.words) {
		return 0, false
	}
	cs.pushWrapper("watch", i, next)
	if inv.Has("--exec") {
		// watch -x runs its arguments directly, not through sh -c.
		return next, true
	}
	w.shellString("watch", cs, next, len(cs.words), c)
	return -1, false
}

// peelFlock handles flock [opts] FILE cmd… and flock [opts] FILE -c CMD.
func (w *walker) peelFlock(cs *cmdState, i int, c ctx) (int, bool) {
	inv, file := readOpts("flock", cs.words, i, len(cs.words))
	if file >= len(cs.words) {
		return 0, false // flock FD
	}
	if fw := cs.words[file]; !fw.Literal && strings.HasPrefix(fw.Value, "-") {
		// An option that cannot be read: make the command opaque.
		cs.pushWrapper("flock", i, file)
		return file, true
	}
	cmdArg, cmdIdx := optValue(inv, i, "--command")
	next := file + 1
	if cmdIdx < 0 {
		// flock FILE -c CMD, or flock FILE CMD…: options after FILE.
		var after *grammar.Invocation
		after, next = readOpts("flock", cs.words, file, len(cs.words))
		cmdArg, cmdIdx = optValue(after, file, "--command")
	}
	if cmdIdx >= 0 {
		cs.pushWrapper("flock", i, cmdIdx)
		if !cs.words[cmdIdx].Literal {
			w.addOpaque(OpaquePayload, "flock", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return -1, false
		}
		w.payload("flock", cmdArg, cs.nodes[cmdIdx], cs.nodes[cmdIdx], cs, c)
		return -1, false
	}
	if next >= len(cs.words) {
		return 0, false
	}
	cs.pushWrapper("flock", i, next)
	return next, true
}

// peelParallel handles GNU parallel (best effort): the command words come
// before ":::" and are run by a shell with the inputs appended.
func (w *walker) peelParallel(cs *cmdState, i int, c ctx) (int, bool) {
	_, next := readOpts("parallel", cs.words, i, len(cs.words))
	end := next
	for end < len(cs.words) && !strings.HasPrefix(cs.words[end].Value, ":::") {
		end++
	}
	if end == next {
		if end >= len(cs.words) || cs.words[end].Value != ":::" {
			return 0, false // commands come from stdin or a file
		}
		// parallel ::: CMD…: each input is a command line.
		cs.pushWrapper("parallel", i, end+1)
		for k := end + 1; k < len(cs.words) && !strings.HasPrefix(cs.words[k].Value, ":::"); k++ {
			w.shellString("parallel", cs, k, k+1, c)
		}
		return -1, false
	}
	cs.pushWrapper("parallel", i, next)
	cs.extra = true
	cs.replace = "{"
	w.shellString("parallel", cs, next, end, c)
	// With literal ::: inputs, also parse each command line parallel
	// builds: the command words with the input appended ("{}" replaced).
	cmd, lit := joinValues(cs.words[next:end])
	if !lit || end >= len(cs.words) || cs.words[end].Value != ":::" {
		return -1, false
	}
	for k, n := end+1, 0; k < len(cs.words) && !strings.HasPrefix(cs.words[k].Value, ":::") && n < 16; k, n = k+1, n+1 {
		in := cs.words[k]
		if !in.Literal && !tildeWord(in) {
			continue
		}
		arg := shellQuote(in.Value)
		if tildeWord(in) {
			// bash expanded the "~" before parallel saw it, and parallel
			// expands "~" arguments itself too: it is the home.
			arg = in.Value
		}
		line := cmd + " " + arg
		if strings.Contains(cmd, "{}") {
			line = strings.ReplaceAll(cmd, "{}", arg)
		}
		w.payload("parallel", line, cs.nodes[next], cs.nodes[k], cs, c)
	}
	return -1, false
}

// shellString treats words [from, to) as a string a shell will run: it is
// parsed as a payload when literal, opaque otherwise.
func (w *walker) shellString(program string, cs *cmdState, from, to int, c ctx) {
	text, lit := joinValues(cs.words[from:to])
	if !lit {
		w.addOpaque(OpaquePayload, program, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return
	}
	w.payload(program, text, cs.nodes[from], cs.nodes[to-1], cs, c)
}

// find records find itself and each -exec/-execdir/-ok/-okdir command.
func (w *walker) find(cs *cmdState, i int, c ctx) {
	w.emit(cs, i, c)
	for j := i + 1; j < len(cs.words); j++ {
		switch cs.words[j].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := j + 1
		end := start
		for end < len(cs.words) && cs.words[end].Value != ";" && cs.words[end].Value != "+" {
			end++
		}
		if end > start {
			sub := &cmdState{
				stmt:     cs.stmt,
				words:    cs.words[start:end],
				nodes:    cs.nodes[start:end],
				redirs:   cs.redirs,
				lastWrap: -1,
				ctx:      cs.ctx,
				dirs:     cs.dirs,
				anyDir:   cs.anyDir,
			}
			sub.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: "find", Args: values(cs.words[i+1 : j])})
			sub.extra = end < len(cs.words) && cs.words[end].Value == "+"
			sub.replace = "{}"
			w.resolve(sub, 0, c)
		}
		j = end
	}
}

func values(ws []Word) []string {
	out := make([]string, len(ws))
	for i, wd := range ws {
		out[i] = wd.Value
	}
	return out
}

// tildeWord reports whether wd is an unquoted "~" or "~/path" of plain
// characters, which bash replaces by the home.
func tildeWord(wd Word) bool {
	if wd.Raw != wd.Value || !(wd.Value == "~" || strings.HasPrefix(wd.Value, "~/")) {
		return false
	}
	rest := wd.Value[1:]
	return rest == "" || shellQuote(rest) == rest
}
