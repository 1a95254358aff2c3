package shellparse

import (
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"mvdan.cc/sh/v3/syntax"
)

// shells are the programs that run a shell script given with -c, a file
// operand or standard input. This and the other tables of the package are
// built on first use, not at init: init work runs in every tether process,
// including the container init that `tether run` re-executes.
var shells = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true,
		"mksh": true, "yash": true, "posh": true, "rbash": true, "fish": true,
		"csh": true, "tcsh": true, "ksh93": true, "oksh": true, "loksh": true,
		// Their -c runs a command line too; simple commands read alike.
		"hush": true, "elvish": true, "nu": true, "xonsh": true, "rc": true, "es": true,
	}
})

// interpSpec describes how an interpreter takes inline code.
type interpSpec struct {
	inline     string   // short options whose argument is code ("c", "e")
	inlineLong []string // long options whose argument is code
	argOpts    string   // short options taking an argument (attached or next word)
	attachOpts string   // short options whose optional argument can only be attached
	argLong    []string // long options taking an argument
	operandOpt string   // short options whose argument replaces the script (python -m)
	inlineSub  string   // a subcommand whose arguments are code (deno eval)
}

// interpreters are the non-shell interpreters whose inline code (-c, -e …)
// is opaque. Lookup is case-insensitive and ignores a ".exe" suffix, so
// "BUN.EXE" and "Python3" are found too.
var interpreters = sync.OnceValue(func() map[string]*interpSpec {
	return map[string]*interpSpec{
		"python":     {inline: "c", argOpts: "WXQ", operandOpt: "m"},
		"pypy":       {inline: "c", argOpts: "WXQ", operandOpt: "m"},
		"perl":       {inline: "eE", argOpts: "I", attachOpts: "MmxlidDC0"},
		"ruby":       {inline: "e", argOpts: "IrCE", attachOpts: "xFTW0"},
		"node":       {inline: "ep", inlineLong: []string{"eval", "print"}, argOpts: "r", argLong: []string{"require", "import", "loader", "input-type", "conditions"}},
		"nodejs":     {inline: "ep", inlineLong: []string{"eval", "print"}, argOpts: "r", argLong: []string{"require", "import", "loader", "input-type"}},
		"bun":        {inline: "ep", inlineLong: []string{"eval", "print"}, argOpts: "r", argLong: []string{"preload", "cwd", "config"}},
		"deno":       {inline: "", inlineSub: "eval"},
		"php":        {inline: "rRBE", argOpts: "cdzt", argLong: []string{"php-ini", "define"}},
		"lua":        {inline: "e", argOpts: "l"},
		"luajit":     {inline: "e", argOpts: "lbjO"},
		"rscript":    {inline: "e", inlineLong: []string{}},
		"r":          {inline: "e"},
		"osascript":  {inline: "e", argOpts: "ls"},
		"julia":      {inline: "eE", inlineLong: []string{"eval", "print"}},
		"elixir":     {inline: "e", inlineLong: []string{"eval"}},
		"guile":      {inline: "c", argOpts: "lLx"},
		"tclsh":      {},
		"expect":     {inline: "c", argOpts: "fD"}, // Tcl: spawn and exec run programs
		"pwsh":       {inlineLong: []string{"c", "command", "encodedcommand", "ec", "e"}},
		"powershell": {inlineLong: []string{"c", "command", "encodedcommand", "ec", "e"}},
	}
})

// interpName folds a program name for interpreter lookup: lower case, no
// ".exe", and versioned pythons ("python3.12") to "python".
func interpName(name string) string {
	n := strings.ToLower(name)
	n = strings.TrimSuffix(n, ".exe")
	switch {
	case strings.HasPrefix(n, "python"):
		return "python"
	case strings.HasPrefix(n, "pypy"):
		return "pypy"
	case strings.HasPrefix(n, "perl5"):
		return "perl"
	case strings.HasPrefix(n, "ruby"), strings.HasPrefix(n, "lua5"):
		return strings.TrimRight(n, "0123456789.")
	}
	return n
}

// interpreter handles a program that may run code: shells (-c payloads are
// parsed), interpreters (inline code is opaque), eval and source. It
// reports whether it recorded the command itself, and the name of the
// program when it reads its script from standard input.
func (w *walker) interpreter(name string, cs *cmdState, i int, c ctx) (bool, string) {
	switch name {
	case "eval":
		w.emit(cs, i, c)
		w.addOpaque(OpaqueEval, "eval", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		if i+1 < len(cs.words) {
			// Also expose what a literal eval runs.
			if _, lit := joinValues(cs.words[i+1:]); lit {
				cs.pushWrapper("eval", i, i)
				w.shellString("eval", cs, i+1, len(cs.words), c)
			}
		}
		return true, ""
	case "fc":
		w.emit(cs, i, c)
		w.fc(cs, i, c)
		return true, ""
	case "alias":
		// An alias value is code that runs wherever the name is used
		// later (with expand_aliases, or in an interactive shell): expose
		// it as a payload.
		w.script.aliases = true
		w.emit(cs, i, c)
		for k := i + 1; k < len(cs.words); k++ {
			a, ok := splitAssign(cs.words[k])
			if !ok {
				continue
			}
			if !a.Value.Literal {
				w.addOpaque(OpaquePayload, "alias", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
				continue
			}
			if w.script.aliasDefs == nil {
				w.script.aliasDefs = map[string]string{}
			}
			w.script.aliasDefs[a.Name] = a.Value.Value
			ac := *cs
			ac.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: "alias", Args: []string{a.Name}})
			w.payload("alias", a.Value.Value, cs.nodes[k], cs.nodes[k], &ac, c)
		}
		return true, ""
	case "mapfile", "readarray":
		if w.defs[name] != nil {
			return false, "" // a function of that name runs instead
		}
		w.emit(cs, i, c)
		w.mapfileCallback(name, cs, i, c)
		w.mapfileAssign(cs, i)
		return true, w.stdinReader(cs, i)
	case "source", ".":
		w.emit(cs, i, c)
		if i+1 < len(cs.words) {
			arg := cs.words[i+1]
			switch {
			case !arg.Literal && !homePath(arg, cs.nodes[i+1]):
				w.addOpaque(OpaqueSource, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
				w.procScript(name, cs, i+1, c)
			case isStdinPath(arg.Value):
				return true, w.stdinFed(name, cs)
			default:
				w.writtenScript(name, cs, i+1)
			}
		}
		return true, ""
	}
	switch name {
	case "awk", "gawk", "mawk", "nawk", "sed", "gsed", "make", "gmake":
		// Their program file can come from stdin or a process
		// substitution: awk -f -, sed -f /dev/stdin, make -f <(curl …).
		w.emit(cs, i, c)
		return true, w.programFile(name, cs, i)
	}
	fold := interpName(name)
	if shells()[fold] {
		return w.shell(name, cs, i, c)
	}
	if sp := interpreters()[fold]; sp != nil {
		w.emit(cs, i, c)
		return true, w.interp(name, sp, cs, i)
	}
	return false, ""
}

// homePath reports whether a word's only expansions are a leading tilde or
// plain $HOME / ${HOME} ("~/bin/x.sh", "$HOME/.cargo/env"): a path relative
// to the home directory, which the caller knows, not a computed one.
func homePath(wd Word, sw *syntax.Word) bool {
	if wd.Glob {
		return false
	}
	for i, p := range sw.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.HasPrefix(p.Value, "~") && (i > 0 || !(p.Value == "~" || strings.HasPrefix(p.Value, "~/"))) {
				return false // ~user or a tilde not leading
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok && !isHomeParam(q) {
					return false
				}
			}
		default:
			if !isHomeParam(p) {
				return false
			}
		}
	}
	return true
}

// isHomeParam reports whether p is $HOME or ${HOME} with no operator.
func isHomeParam(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == "HOME" && pe.Exp == nil && pe.Repl == nil &&
		pe.Slice == nil && pe.Index == nil && !pe.Excl && !pe.Length && pe.NestedParam == nil
}

func isStdinPath(p string) bool {
	return p == "-" || p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0"
}

// shell handles sh/bash/…: a literal -c script is parsed as a payload with
// the shell as its innermost wrapper; anything else is recorded as the
// shell command with an opaque segment where its script is unknowable.
func (w *walker) shell(name string, cs *cmdState, i int, c ctx) (bool, string) {
	j, cmdMode, stdinMode := scanShellOpts(cs.words, i+1)
	for k := i + 1; k+1 < j; k++ {
		if v := cs.words[k].Value; v == "--rcfile" || v == "--init-file" {
			// An interactive shell first runs its start-up file: one the
			// line wrote, or a process substitution printing known text.
			w.procScript(name, cs, k+1, c)
			w.writtenScript(name, cs, k+1)
		}
	}
	if cmdMode {
		if j >= len(cs.words) {
			w.emit(cs, i, c)
			return true, ""
		}
		pw := cs.words[j]
		if !pw.Literal {
			w.emit(cs, i, c)
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return true, ""
		}
		cs.pushWrapper(name, i, j)
		if j+1 < len(cs.words) {
			// bash -c SCRIPT NAME ARG…: the words after the script are
			// its $0, $1 …, run-time arguments of the script's commands.
			// Known ones are bound (under find -exec, "{}" stays "{}":
			// the found paths). They are known values, not run-time
			// data, when the script can see them only as bound words:
			// $0 and one argument ("$@" and "$*" are that word), none
			// of them a wrapper's placeholder.
			args := cs.words[j+1:]
			if len(args) <= 10 && allKnown(args) {
				cs.positional = args
			}
			if cs.positional == nil || len(args) > 2 || holds(args, cs.replace) {
				cs.extra = true
			}
		}
		if cs.replace != "" && strings.Contains(pw.Value, cs.replace) {
			// xargs -I{} sh -c 'x {}': run-time data is spliced into the
			// script itself, so what runs cannot be known.
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		}
		w.payload(name, pw.Value, cs.nodes[j], cs.nodes[j], cs, c)
		return true, ""
	}
	w.emit(cs, i, c)
	if stdinMode || j >= len(cs.words) || (cs.words[j].Literal && isStdinPath(cs.words[j].Value)) {
		return true, w.stdinFed(name, cs)
	}
	w.scriptOperand(name, cs, j)
	w.procScript(name, cs, j, c)
	w.writtenScript(name, cs, j)
	return true, ""
}

// holds reports whether a word's value contains the placeholder ph.
func holds(ws []Word, ph string) bool {
	for _, wd := range ws {
		if ph != "" && strings.Contains(wd.Value, ph) {
			return true
		}
	}
	return false
}

// allKnown reports whether no word holds an unknown expansion.
func allKnown(ws []Word) bool {
	for _, wd := range ws {
		if wd.Unknown {
			return false
		}
	}
	return true
}

// scanShellOpts reads a shell's options from word j on, as bash reads
// them: it returns the index of the first operand (the -c script in
// command mode) and whether -c or -s was given.
func scanShellOpts(ws []Word, j int) (next int, cmdMode, stdinMode bool) {
	for j < len(ws) {
		wd := ws[j]
		v := wd.Value
		if !wd.Literal || len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			break
		}
		j++
		if v == "--" || v == "-" {
			break
		}
		if strings.HasPrefix(v, "--") {
			if (v == "--rcfile" || v == "--init-file") && j < len(ws) {
				j++
			}
			continue
		}
		takesArg := false
		for k := 1; k < len(v); k++ {
			switch v[k] {
			case 'c':
				cmdMode = cmdMode || v[0] == '-'
			case 's':
				stdinMode = stdinMode || v[0] == '-'
			case 'o', 'O':
				takesArg = true
			}
		}
		if takesArg && j < len(ws) {
			j++
		}
	}
	return j, cmdMode, stdinMode
}

// interp records the opaque parts of an interpreter command (already
// emitted) and returns its name when it reads its script from stdin. The
// interpreters package grammar knows are read with it (the same reading
// approval and mandate use); the others with sp.
func (w *walker) interp(name string, sp *interpSpec, cs *cmdState, i int) string {
	if g := grammarInterp(name); g != "" {
		return w.interpGrammar(g, name, cs, i)
	}
	j := i + 1
	if sp.inlineSub != "" && j < len(cs.words) && cs.words[j].Value == sp.inlineSub {
		w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return ""
	}
	for j < len(cs.words) {
		wd := cs.words[j]
		v := wd.Value
		if !wd.Literal || len(v) < 2 || v[0] != '-' {
			break
		}
		j++
		if v == "--" {
			break
		}
		if fold := interpName(name); v[1] == '-' || fold == "pwsh" || fold == "powershell" {
			on := strings.TrimLeft(v, "-")
			if eq := strings.IndexByte(on, '='); eq >= 0 {
				on = on[:eq]
			} else if contains(sp.argLong, on) && j < len(cs.words) {
				j++
			}
			if contains(sp.inlineLong, strings.ToLower(on)) {
				w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
				return ""
			}
			continue
		}
		for k := 1; k < len(v); k++ {
			ch := v[k]
			if strings.IndexByte(sp.inline, ch) >= 0 {
				w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
				return ""
			}
			if strings.IndexByte(sp.operandOpt, ch) >= 0 {
				return "" // python -m module: runs a named module
			}
			if strings.IndexByte(sp.attachOpts, ch) >= 0 {
				break
			}
			if strings.IndexByte(sp.argOpts, ch) >= 0 {
				if k+1 == len(v) && j < len(cs.words) {
					j++
				}
				break
			}
		}
	}
	if j >= len(cs.words) || (cs.words[j].Literal && isStdinPath(cs.words[j].Value)) {
		return w.stdinFed(name, cs)
	}
	w.scriptOperand(name, cs, j)
	return ""
}

// scriptOperand records a script path that is not literal: streamed from a
// process substitution (bash <(curl …)) or computed ("$f").
func (w *walker) scriptOperand(name string, cs *cmdState, j int) {
	if cs.words[j].Literal {
		if !shells()[interpName(name)] {
			w.writtenScript(name, cs, j) // shell() reads it with its payload context
		}
		return
	}
	if homePath(cs.words[j], cs.nodes[j]) {
		return
	}
	kind := OpaqueSource
	if hasProcSubst(cs.nodes[j]) {
		kind = OpaquePipedShell
	}
	w.addOpaque(kind, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
}

// programFile looks for a -f/--file option of awk, sed or make naming
// stdin or a process substitution. It records the latter as opaque and
// returns name for the former.
func (w *walker) programFile(name string, cs *cmdState, i int) string {
	for j := i + 1; j < len(cs.words); j++ {
		v := cs.words[j].Value
		k := -1
		switch {
		case v == "--":
			return ""
		case v == "-f" || v == "--file" || v == "--makefile":
			k = j + 1
		case strings.HasPrefix(v, "-f") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			k = j // attached: -f-
			v = v[2:]
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			k = j
			v = v[strings.IndexByte(v, '=')+1:]
		default:
			continue
		}
		if k >= len(cs.words) {
			return ""
		}
		if k != j {
			v = cs.words[k].Value
		}
		switch {
		case hasProcSubst(cs.nodes[k]):
			w.addOpaque(OpaquePipedShell, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return ""
		case cs.words[k].Literal && isStdinPath(v):
			return w.stdinFed(name, cs)
		}
	}
	return ""
}

// stdinReader reports, for a wrapper left as the program because it has no
// command, whether it is an interactive shell reading commands from stdin
// (sudo -s, sudo -i, su, runuser, doas -s).
func (w *walker) stdinReader(cs *cmdState, i int) string {
	name := baseName(cs.words[i].Value)
	switch name {
	case "su", "runuser":
	case "at", "batch":
		// at reads the job's commands from stdin unless -f FILE; its
		// listing and removal modes run nothing.
		for _, a := range cs.words[i+1:] {
			if a.Value == "-f" || strings.HasPrefix(a.Value, "-f") || a.Value == "-l" || a.Value == "-r" || a.Value == "-d" || a.Value == "-c" {
				return ""
			}
		}
	case "crontab":
		// crontab with no file (or "-") installs a table read from stdin.
		for k := i + 1; k < len(cs.words); k++ {
			switch v := cs.words[k].Value; {
			case v == "-u":
				k++ // -u USER
			case v == "-":
			case !strings.HasPrefix(v, "-"), strings.ContainsAny(v[1:], "lre"):
				return "" // a file, or list/remove/edit
			}
		}
	case "sudo", "doas":
		wr := Wrapper{Args: values(cs.words[i+1:])}
		if !wr.HasShortFlag('s') && !wr.HasShortFlag('i') && !contains(wr.Args, "--shell") && !contains(wr.Args, "--login") {
			return ""
		}
	default:
		return ""
	}
	return w.stdinFed(name, cs)
}

// stdinFed is called for a program that reads its script from stdin. If a
// heredoc, here-string or input redirection feeds it, that is recorded as
// opaque and "" returned; otherwise program is returned, so that a pipeline
// feeding it is recorded by the caller.
func (w *walker) stdinFed(program string, cs *cmdState) string {
	// The statement's own redirections are the last of cs.redirs; the
	// others come from enclosing compound commands.
	own := len(cs.redirs) - len(cs.stmt.Redirs)
	for k := len(cs.redirs) - 1; k >= 0; k-- {
		r := cs.redirs[k]
		if r.Fd != "" && r.Fd != "0" {
			continue
		}
		switch r.Mode {
		case RedirHeredoc:
			text, sp := r.Body, w.stmtSpan(cs.stmt)
			if k >= own {
				text, sp = w.heredocText(cs.stmt.Redirs[k-own], r.Body)
			}
			w.addOpaque(OpaqueHeredoc, program, text, sp)
			if k >= own && readsShell(program) {
				// Also expose what a literal script fed to a shell runs.
				if body, ok := literalHeredoc(cs.stmt.Redirs[k-own], r); ok {
					// The script's commands run under the shell, without
					// the heredoc that fed it.
					fed := *cs
					fed.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: program})
					fed.redirs = append(append([]Redir(nil), cs.redirs[:k]...), cs.redirs[k+1:]...)
					w.payloadAt(program, body, sp, &fed, cs.ctx)
				}
			}
			return ""
		case RedirRead, RedirReadWrite:
			w.addOpaque(OpaquePipedShell, program, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			w.redirectedScript(program, r.Target, cs) // a file the line wrote (filescript.go)
			return ""
		}
	}
	if f := cs.stdin; f != nil && readsShell(program) {
		// "echo reboot | at now": the text the stage before prints is
		// known, and is the script; the caller still records the pipe.
		fed := *cs
		fed.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: program})
		fed.stdin, fed.stdinBytes = nil, nil
		w.payloadAt(program, f.text, w.stmtSpan(cs.stmt), &fed, cs.ctx)
	}
	return program
}

// readsShell reports whether a program reading its script from stdin reads
// shell commands (rather than Python, awk …).
func readsShell(program string) bool {
	switch program {
	case "su", "runuser", "sudo", "doas", "source", ".", "at", "batch":
		return true
	}
	return shells()[interpName(program)]
}

// literalHeredoc returns the text a heredoc or here-string feeds, when it
// has no expansion: a quoted heredoc delimiter, or an unquoted body without
// expansions or backslashes; a literal here-string word.
func literalHeredoc(r *syntax.Redirect, rd Redir) (string, bool) {
	if r.Op == syntax.WordHdoc {
		return rd.Target.Value, rd.Target.Literal
	}
	if r.Hdoc == nil {
		return "", false
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			quoted = true
		} else if strings.ContainsRune(p.(*syntax.Lit).Value, '\\') {
			quoted = true
		}
	}
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || (!quoted && strings.ContainsRune(l.Value, '\\')) {
			return "", false
		}
	}
	return rd.Body, true
}

// heredocText returns the exact source text of a heredoc body (body) or a
// here-string word, and its span.
func (w *walker) heredocText(r *syntax.Redirect, body string) (string, Span) {
	var s, e int
	switch {
	case r.Op == syntax.WordHdoc:
		s, e = offsets(r.Word, len(w.src))
	case r.Hdoc != nil:
		s, _ = offsets(r.Hdoc, len(w.src))
		e = s + len(body)
	default: // an empty heredoc: report the operator and delimiter
		s, _ = offsets(r, len(w.src))
		_, e = offsets(r.Word, len(w.src))
	}
	if e > len(w.src) || e < s {
		e = s
	}
	if w.outer != nil {
		return w.src[s:e], *w.outer
	}
	return w.src[s:e], Span{Start: s, End: e}
}

// hasProcSubst reports whether a word holds a process substitution.
func hasProcSubst(sw *syntax.Word) bool {
	for _, p := range sw.Parts {
		if _, ok := p.(*syntax.ProcSubst); ok {
			return true
		}
	}
	return false
}

// grammarInterp returns the grammar's name for interpreter name, or "".
func grammarInterp(name string) string {
	for _, n := range [...]string{name, interpName(name)} {
		if sp := grammar.Lookup(n); sp != nil && (sp.StopAtOperand && len(sp.Operands) > 0 || sp.Name == "deno") {
			return n
		}
	}
	return ""
}

// interpGrammar reads an interpreter's words with the grammar: inline code
// (-c, -e, clusters ending in a code letter, python -m timeit) is opaque; a
// computed script
// operand is opaque; no script operand means it reads standard input. A
// word that cannot be read statically among the options makes the command
// opaque.
func (w *walker) interpGrammar(g, name string, cs *cmdState, i int) string {
	for k := i + 1; k < len(cs.words); k++ {
		if wd := cs.words[k]; !wd.Literal && strings.HasPrefix(wd.Value, "-") {
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return ""
		}
		if !cs.words[k].Literal {
			break
		}
	}
	inv := grammar.Parse(g, values(cs.words[i+1:]))
	if grammar.CodeInert(inv) {
		return "" // python3 -c 'print(1)', perl -ne 'print if /x/': nothing hidden
	}
	for _, o := range inv.Options {
		if o.HasValue && o.ValueEffects.Has(grammar.Code) {
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return ""
		}
	}
	script := -1
	for _, op := range inv.Operands {
		if op.Effects.Has(grammar.Code) {
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return ""
		}
		if script < 0 {
			script = op.Arg
		}
	}
	if _, ok := inv.Value("-m"); ok {
		return "" // python -m module: runs a named module
	}
	if inv.Effects.Has(grammar.DryRun) {
		return ""
	}
	if script < 0 || (cs.words[i+1+script].Literal && isStdinPath(cs.words[i+1+script].Value)) {
		return w.stdinFed(name, cs)
	}
	w.scriptOperand(name, cs, i+1+script)
	return ""
}
