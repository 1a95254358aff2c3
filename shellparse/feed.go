package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Known standard input of xargs. When what xargs reads is known statically
// — the output of an echo, printf or "ls -d" of known words in the pipeline
// stage before it, or a here-string or literal here-document — its
// arguments are those words, and the command it runs is recorded with them
// ("echo ~ | xargs rm -rf" is "rm -rf ~"). Any other input stays run-time
// data (Context.ExtraArgs).

// maxFeedItems bounds the items of a known input that are read.
const maxFeedItems = 64

// feed is text known to arrive on a command's standard input. lit reports
// whether every word that made it was literal (no tilde, glob or variable
// expansion); glob whether one was a glob bash expanded before writing it.
type feed struct {
	text      string
	lit, glob bool
}

// producerFeed returns what the pipeline stage st writes to its standard
// output when that is known: echo, printf '%s<sep>' or "ls -d" of words
// with no unknown expansion, pwd in a known directory (cwd.go), the start
// points of a find that prints them, every entry of the directory for a
// bare ls (a glob).
func (w *walker) producerFeed(st *syntax.Stmt) *feed {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(ce.Assigns) > 0 || len(ce.Args) == 0 {
		return nil
	}
	// Most stages print something else: look at the program before
	// converting any word, so that they cost nothing.
	if len(ce.Args[0].Parts) != 1 {
		return nil
	}
	l, ok := ce.Args[0].Parts[0].(*syntax.Lit)
	if !ok || (l.Value != "echo" && l.Value != "printf" && l.Value != "ls" && l.Value != "pwd" && l.Value != "find") {
		return nil
	}
	if len(ce.Args) < 2 && l.Value != "pwd" && l.Value != "ls" {
		return nil
	}
	words := make([]Word, len(ce.Args))
	for i, a := range ce.Args {
		words[i] = w.convWord(a)
		if words[i].Unknown {
			return nil
		}
	}
	if !words[0].Literal {
		return nil
	}
	switch words[0].Value {
	case "pwd", "find":
		c := Command{Program: words[0].Value, Args: words[1:]}
		if c.Program == "find" {
			return findStarts(words[1:])
		}
		if o := w.commandOutput(&c, nil, nil); o.kind == factText {
			return &feed{text: o.text, lit: o.lit}
		}
		return nil
	case "ls":
		if lsListsNames(words[1:]) {
			// The names of the directory's entries, as "*" expands.
			return &feed{text: "*\n", glob: true}
		}
	}
	if words[0].Value == "ls" {
		args := words[1:]
		if len(args) == 0 || !args[0].Literal || (args[0].Value != "-d" && args[0].Value != "-1d" && args[0].Value != "-d1") {
			return nil
		}
		f := &feed{lit: true}
		var b strings.Builder
		for _, a := range args[1:] {
			b.WriteString(a.Value)
			b.WriteByte('\n')
			f.lit = f.lit && a.Literal
			f.glob = f.glob || a.Glob
		}
		f.text = b.String()
		return f
	}
	return printOutput(words[0].Value, words[1:])
}

// printOutput returns what echo or printf (program) prints given args,
// words with no unknown expansion: echo without options, a printf format
// alone (escapes decoded) or '%s<sep>' with words; nil for anything else.
func printOutput(program string, args []Word) *feed {
	f := &feed{lit: true}
	sep := " "
	switch program {
	case "echo":
		if len(args) > 0 && args[0].Literal && strings.HasPrefix(args[0].Value, "-") {
			return nil // -e, -n …: escapes and newlines change the output
		}
	case "printf":
		if len(args) == 0 || !args[0].Literal {
			return nil
		}
		if len(args) == 1 && !strings.Contains(args[0].Value, "%") {
			// A format alone: its text, escapes decoded.
			return &feed{text: ansiC(args[0].Value), lit: true}
		}
		switch args[0].Value {
		case `%s\n`, `%s\0`, `%s `, `%s\t`, `%s\000`, `%s`:
			sep = ansiC(args[0].Value[2:])
		default:
			return nil
		}
		args = args[1:]
	default:
		return nil
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 && program == "echo" {
			b.WriteString(sep)
		}
		b.WriteString(a.Value)
		if program != "echo" {
			b.WriteString(sep)
		}
		f.lit = f.lit && a.Literal
		f.glob = f.glob || a.Glob
	}
	if program == "echo" {
		b.WriteByte('\n')
	}
	f.text = b.String()
	return f
}

// ownFeed returns what the command's own redirections s.Redirs (converted
// as redirs) put on its standard input: the text of the last here-string or
// here-document when known. replaced reports that they set the input at
// all, known or not (a file, a heredoc with expansions).
func ownFeed(s *syntax.Stmt, redirs []Redir) (f *feed, replaced bool) {
	for k, r := range s.Redirs {
		if k >= len(redirs) {
			return nil, true
		}
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		rd := redirs[k]
		switch r.Op {
		case syntax.WordHdoc:
			// A here-string is expanded (tilde included): keep the
			// word's reading.
			f, replaced = nil, true
			if !rd.Target.Unknown {
				f = &feed{text: rd.Body + "\n", lit: rd.Target.Literal, glob: false}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			f, replaced = nil, true
			if body, ok := literalHeredoc(r, rd); ok {
				f = &feed{text: body, lit: true}
			}
		case syntax.RdrIn, syntax.DplIn, syntax.RdrInOut:
			f, replaced = nil, true
		}
	}
	return f, replaced
}

// xargsSplits reports whether xargs options run the command more than
// once over its items (-n, -L, -l, -s, --replace).
func xargsSplits(opts map[string]string) bool {
	for _, k := range [...]string{"--max-args", "--max-lines", "-l", "--max-chars", "-s", "--replace", "-I", "-i"} {
		if _, ok := opts[k]; ok {
			return true
		}
	}
	return false
}

// xargsItems splits input as xargs reads it: by NUL with --null, by the
// --delimiter character, by lines with -I/--replace, and otherwise at
// blanks with xargs' own quotes and backslashes. It reports false for input
// or options it does not model (an end-of-file string, an argument file).
func xargsItems(in *feed, opts map[string]string) ([]string, bool) {
	if _, ok := opts["-E"]; ok {
		return nil, false
	}
	for _, k := range [...]string{"--eof", "--arg-file"} {
		if _, ok := opts[k]; ok {
			return nil, false
		}
	}
	_, null := opts["--null"]
	d, delim := opts["--delimiter"]
	_, lines := opts["-I"]
	if _, ok := opts["--replace"]; ok {
		lines = true
	}
	var items []string
	switch {
	case null || delim:
		sep := "\x00"
		if delim {
			if sep = ansiC(d); len(sep) != 1 {
				return nil, false
			}
		}
		items = strings.Split(in.text, sep)
		if n := len(items); n > 0 && items[n-1] == "" {
			items = items[:n-1]
		}
	default:
		var cur strings.Builder
		has := false
		var q byte
		for i := 0; i < len(in.text); i++ {
			c := in.text[i]
			switch {
			case q != 0:
				if c == q {
					q = 0
				} else if c == '\n' {
					return nil, false // xargs: unmatched quote
				} else {
					cur.WriteByte(c)
				}
			case c == '\'' || c == '"':
				q, has = c, true
			case c == '\\' && i+1 < len(in.text):
				i++
				cur.WriteByte(in.text[i])
				has = true
			case c == '\n' || (!lines && (c == ' ' || c == '\t')):
				if has {
					items = append(items, cur.String())
				}
				cur.Reset()
				has = false
			case (c == ' ' || c == '\t') && !has:
				// -I: leading blanks of a line are dropped
			default:
				cur.WriteByte(c)
				has = true
			}
		}
		if q != 0 {
			return nil, false
		}
		if has {
			items = append(items, cur.String())
		}
	}
	if len(items) > maxFeedItems {
		return nil, false
	}
	return items, true
}

// feedWords makes the words xargs passes from the items of a known input.
// An item keeps a tilde or glob reading only when some input word had one
// (bash expanded it before xargs read the text).
func feedWords(in *feed, items []string) []Word {
	out := make([]Word, len(items))
	for i, it := range items {
		out[i] = Word{Value: it, Raw: it, Literal: in.lit, Glob: in.glob && strings.ContainsAny(it, "*?[")}
	}
	return out
}

// startupFeed walks the start-up file a shell reads when the assignment a
// sets BASH_ENV or ENV to a process substitution that only prints known
// text ("BASH_ENV=<(echo 'rm -rf ~') bash -c true"): the text is a script
// the started shell runs, a payload like bash -c's.
func (w *walker) startupFeed(s *syntax.Stmt, a *syntax.Assign, c ctx) {
	if a.Name == nil || a.Value == nil || len(a.Value.Parts) != 1 {
		return
	}
	w.startupText(&cmdState{stmt: s, wrappers: c.wrap, redirs: c.redirs, env: c.env, envFlags: c.envFlags},
		a.Name.Value, a.Value.Parts[0], a.Value, c)
}

// startupText walks the known text that process substitution part prints
// as the start-up file variable name names, for the shell cs runs.
func (w *walker) startupText(cs *cmdState, name string, part syntax.WordPart, at syntax.Node, c ctx) {
	if name != "BASH_ENV" && name != "ENV" {
		return
	}
	ps, ok := part.(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || len(ps.Stmts) != 1 {
		return
	}
	f := w.producerFeed(ps.Stmts[0])
	if f == nil {
		return
	}
	w.payload(name, f.text, at, at, cs, c)
}

// procScript walks the known text a shell or source reads as its script
// when word j is one process substitution that only prints known text
// (bash <(echo reboot), source <(printf 'rm -rf ~\n')): a payload like bash
// -c's. The opaque segment the caller records for the operand stays.
func (w *walker) procScript(name string, cs *cmdState, j int, c ctx) {
	sw := cs.nodes[j]
	if len(sw.Parts) != 1 {
		return
	}
	ps, ok := sw.Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || len(ps.Stmts) != 1 {
		return
	}
	if f := w.producerFeed(ps.Stmts[0]); f != nil {
		w.payload(name, f.text, sw, sw, cs, c)
	}
}

// procAssign returns the name and the process substitution of a word
// "NAME=<(…)" (given to env or sudo: bash expands it to one word,
// NAME=/dev/fd/N), or nil.
func procAssign(sw *syntax.Word) (string, *syntax.ProcSubst) {
	if sw == nil || len(sw.Parts) != 2 {
		return "", nil
	}
	l, ok := sw.Parts[0].(*syntax.Lit)
	ps, ok2 := sw.Parts[1].(*syntax.ProcSubst)
	if !ok || !ok2 || ps.Op != syntax.CmdIn || !strings.HasSuffix(l.Value, "=") || !syntax.ValidName(strings.TrimSuffix(l.Value, "=")) {
		return "", nil
	}
	return strings.TrimSuffix(l.Value, "="), ps
}

// lsListsNames reports whether ls with args prints the names of the
// directory's entries and nothing else: no operand, and only options that
// order, lay out or add to them (-1, -A, -a, -F …; not -l, whose other
// columns xargs would pass too).
func lsListsNames(args []Word) bool {
	for _, a := range args {
		if len(a.Value) < 2 || a.Value[0] != '-' || a.Value[1] == '-' || strings.Trim(a.Value[1:], "1AaCxFprtSUXcuv") != "" {
			return false
		}
	}
	return true
}

// findStarts returns what a find prints when its expression holds no test
// or action but -print: each start point first ("find ~ -maxdepth 0 |
// xargs rm -rf" removes the home). Options that only bound the walk
// (-maxdepth, -xdev, -depth …) keep that; -mindepth N>0 does not.
func findStarts(args []Word) *feed {
	f := &feed{lit: true}
	var b strings.Builder
	i := 0
	for i < len(args) && (args[i].Value == "-H" || args[i].Value == "-L" || args[i].Value == "-P") {
		i++
	}
	for ; i < len(args) && !strings.HasPrefix(args[i].Value, "-") && args[i].Value != "(" && args[i].Value != "!"; i++ {
		b.WriteString(args[i].Value)
		b.WriteByte('\n')
		f.lit = f.lit && args[i].Literal
		f.glob = f.glob || args[i].Glob
	}
	if b.Len() == 0 {
		b.WriteString(".\n") // no start point: the directory
	}
	for ; i < len(args); i++ {
		switch args[i].Value {
		case "-xdev", "-mount", "-depth", "-follow", "-print", "-noleaf", "-ignore_readdir_race":
		case "-maxdepth":
			i++
		case "-mindepth":
			if i+1 < len(args) && args[i+1].Value == "0" {
				i++
				continue
			}
			return nil
		default:
			return nil
		}
	}
	f.text = b.String()
	return f
}
