package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmdState is a simple command being resolved: its words, and what peeled
// wrappers have contributed so far.
type cmdState struct {
	stmt     *syntax.Stmt
	words    []Word
	nodes    []*syntax.Word
	env      []Assign
	envFlags []string
	redirs   []Redir
	wrappers []Wrapper
	extra    bool // the program receives run-time arguments (xargs …)
	// replace is the string a wrapper replaces with run-time data in the
	// command's words (xargs -I, find -exec's {}), "" if none.
	replace string
	// stdin is the command's known standard input, nil when not known;
	// feed the arguments xargs builds from it (see feed.go).
	stdin *feed
	feed  []Word
	// stdinBytes are the known bytes on its standard input when they are
	// not text (a copy of a file, perhaps encoded: codec.go), nil if not
	// known.
	stdinBytes *output
	// positional are the words a shell -c script gets as $0, $1 … ("sh -c
	// 'rm -rf "$1"' _ ~"), nil when none or one is not known.
	positional []Word
	// lastWrap is the word index of the innermost peeled wrapper, -1 if none.
	lastWrap int
	// ctx is the context the command was found in.
	ctx ctx
	// dirs and anyDir are where the shell is when the command starts
	// (Command.Dirs).
	dirs   []string
	anyDir bool
}

// call walks a simple command: first the commands inside its words (they run
// before it), then the command itself with its wrappers peeled. It returns
// the shell or interpreter reading its program from stdin, if any.
func (w *walker) call(s *syntax.Stmt, ce *syntax.CallExpr, redirs []Redir, c ctx) string {
	var env []Assign
	if len(ce.Assigns) > 0 {
		env = make([]Assign, 0, len(ce.Assigns))
		for _, a := range ce.Assigns {
			as := w.assign(a, c)
			w.startupFeed(s, a, c)
			if len(ce.Args) == 0 {
				// A standalone assignment sets the shell's variable, in
				// order ("a=/ b=$a"); before a command it is only that
				// command's environment.
				w.bindAssign(a, as)
			}
			env = append(env, as)
		}
	}
	if len(ce.Args) == 0 {
		w.addBare(s, env, redirs, c)
		return ""
	}
	for _, a := range ce.Args {
		w.walkWord(a, c)
	}
	if names := w.choiceNames(ce.Args); len(names) > 0 {
		return w.paramChoices(names, func() string { return w.callWords(s, ce, env, redirs, c) })
	}
	return w.callWords(s, ce, env, redirs, c)
}

// callWords converts a simple command's words as bash expands them now and
// walks the command. An unquoted word that expands to nothing is no word at
// all ("$empty rm -rf /" runs rm).
func (w *walker) callWords(s *syntax.Stmt, ce *syntax.CallExpr, env []Assign, redirs []Redir, c ctx) string {
	words := make([]Word, 0, len(ce.Args))
	nodes, copied := ce.Args, false // nodes stays aligned with words
	var one [1]Word
	for i, a := range ce.Args {
		// A list expansion or a known value split by IFS is several
		// words, or none (expand.go).
		fields, partial, split := w.argFields(a)
		if partial {
			w.addOpaque(OpaquePartialExpansion, "", w.stmtText(s), w.stmtSpan(s))
		}
		if !split {
			one[0] = w.convWord(a)
			fields = one[:]
			if vanishes(a, one[0]) {
				fields = nil
			}
		}
		if len(fields) != 1 && !copied {
			nodes, copied = append([]*syntax.Word(nil), ce.Args[:i]...), true
		}
		if copied {
			for range fields {
				nodes = append(nodes, a)
			}
		}
		words = append(words, fields...)
	}
	if len(words) == 0 {
		w.addBare(s, env, redirs, c)
		return ""
	}
	cs := &cmdState{
		stmt:       s,
		words:      words,
		nodes:      nodes,
		env:        joinEnv(c.env, env),
		envFlags:   c.envFlags,
		redirs:     joinRedirs(c.redirs, redirs),
		wrappers:   c.wrap,
		lastWrap:   -1,
		ctx:        c,
		stdin:      c.stdin,
		stdinBytes: c.stdinBytes,
	}
	// The command runs where the shell is before it: a cd, or an eval
	// that may cd, moves the commands after it.
	cs.dirs, cs.anyDir = w.commandDirs()
	if f, replaced := ownFeed(s, redirs); replaced {
		cs.stdin, cs.stdinBytes = f, w.redirectedBytes(s, redirs)
	}
	return w.resolve(cs, 0, c)
}

// resolve peels wrappers starting at word i and records the command.
func (w *walker) resolve(cs *cmdState, i int, c ctx) string {
	for {
		if i >= len(cs.words) {
			// A wrapper with nothing to run is itself the program
			// ("env", "sudo -l", "exec 3<>/dev/tcp/h/80").
			if cs.lastWrap < 0 {
				return ""
			}
			i = cs.lastWrap
			cs.wrappers = cs.wrappers[:len(cs.wrappers)-1]
			w.emit(cs, i, c)
			return w.stdinReader(cs, i)
		}
		pw := cs.words[i]
		if !pw.Literal {
			w.runsUnknownCode() // it may be eval, source or cd
			w.addOpaque(OpaqueDynamicProgram, "", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			w.emit(cs, i, c)
			w.staticProgram(cs, i, c)
			return ""
		}
		if i == 0 && pw.Value == "--" && i+1 < len(cs.words) && len(cs.wrappers) > 0 && cs.wrappers[len(cs.wrappers)-1].Program == "time" {
			// bash's time keyword takes "--" before its command.
			i++
			continue
		}
		if i == 0 && len(w.script.aliasDefs) > 0 && len(cs.ctx.wrap) == len(cs.wrappers) {
			w.expandAlias(cs, c)
		}
		if i == 0 {
			// The shell's own lookup: a hash table entry may name
			// another program (hashtable.go).
			pw = w.hashedWord(pw)
			cs.words[i] = pw
		}
		w.runWritten(cs, i, c) // a file this line wrote, also read as what it holds
		name := baseName(pw.Value)
		if name == "hash" {
			w.hashCommand(cs.words[i+1:], cs.stmt)
		}
		var preCall map[string]Word
		if i == 0 && w.defs[name] != nil {
			preCall = w.saveVars() // for the call's walk (callFunction)
		}
		w.commandVars(name, cs.words[i+1:])
		if ownBuiltin := shellDirCommand(cs, i) && (i > 0 || w.defs[name] == nil); ownBuiltin && dirCommands[name] {
			w.chdirCommand(cs.stmt, name, cs.words[i+1:], cs.env)
		} else if ownBuiltin && runsText[name] {
			// The text it runs (walked as a payload, from the
			// directory before it) may cd: after it, bash may be
			// anywhere.
			defer w.unknownDirs()
		} else if ownBuiltin && (name == "history" || name == "set") {
			w.noteHistory(name, cs.words[i+1:])
		} else if name == "shopt" {
			for _, a := range cs.words[i+1:] {
				w.script.cdableVars = w.script.cdableVars || a.Unknown || a.Value == "cdable_vars"
			}
		}
		next, ok := w.peel(name, cs, i, c)
		if next < 0 {
			return "" // the wrapper handled the rest (payload, find -exec)
		}
		if !ok {
			w.scriptFiles(name, cs, i, c) // a script file the line wrote (filescript.go)
			if done, stdin := w.interpreter(name, cs, i, c); done {
				return stdin
			}
			w.emit(cs, i, c)
			if fd := w.defs[name]; fd != nil && i == 0 {
				if walked := w.callFunction(fd, cs.words[1:], preCall, c); !walked && w.cdFuncs[name] {
					w.runsUnknownCode() // a body that changes directory, not followed
				} else if !walked && w.stopsTracking[name] {
					w.stopTracking()
				}
			} else if name == "read" && !w.isFunction(name) {
				w.readAssign(cs, i)
			}
			return w.stdinReader(cs, i)
		}
		cs.lastWrap = i
		i = next
	}
}

// pushWrapper records the wrapper at word i whose own arguments end before
// word next.
func (cs *cmdState) pushWrapper(name string, i, next int) {
	var args []string
	if next > i+1 {
		args = make([]string, 0, next-i-1)
		for _, a := range cs.words[i+1 : next] {
			args = append(args, a.Value)
		}
	}
	cs.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: name, Args: args})
}

// emit records the command whose program is word i.
func (w *walker) emit(cs *cmdState, i int, c ctx) {
	pw := cs.words[i]
	cmd := Command{
		Spelling: pw.Value,
		Env:      cs.env,
		EnvFlags: cs.envFlags,
		Redirs:   cs.redirs,
		Wrappers: cs.wrappers,
		Context:  c.Context,
		Dirs:     cs.dirs,
		AnyDir:   cs.anyDir,
		Text:     w.stmtText(cs.stmt),
		Span:     w.stmtSpan(cs.stmt),
	}
	if pw.Literal {
		cmd.Program = baseName(pw.Value)
		cmd.NonASCII = nonASCII(pw.Value)
	}
	if i+1 < len(cs.words) {
		cmd.Args = cs.words[i+1:]
	}
	cmd.Context.ExtraArgs = cmd.Context.ExtraArgs || cs.extra
	if cs.stdin != nil {
		if w.script.stdins == nil {
			w.script.stdins = map[int]*feed{}
		}
		w.script.stdins[len(w.script.Commands)] = cs.stdin
	}
	w.noteWrites(cs, &cmd)
	if c.Pipeline > 0 && c.Pipeline < c.PipelineLen {
		// A stage's output, for the next stage (codec.go).
		w.stageBytes = nil
		if copies(cmd.Program) {
			if o := w.commandOutput(&cmd, cs.stdin, cs.stdinBytes); o.kind == factCopy || o.enc != "" {
				w.stageBytes = &o
			}
		}
	}
	// The links it makes name paths for the commands after it, not for
	// itself (ln -s /etc e does not write into /etc).
	defer w.noteLinks(&cmd)
	if cs.feed == nil {
		w.addCommand(cmd)
		return
	}
	// xargs given a known input runs the command with its items: each in
	// place of the -I string, or appended.
	if cs.replace == "" {
		cmd.Args = append(cmd.Args[:len(cmd.Args):len(cmd.Args)], cs.feed...)
		w.addCommand(cmd)
		return
	}
	args := cmd.Args
	for _, it := range cs.feed { // at most maxFeedItems: every item is checked
		c2 := cmd
		c2.Args = make([]Word, len(args))
		for j, a := range args {
			c2.Args[j] = a
			if strings.Contains(a.Value, cs.replace) {
				c2.Args[j] = Word{Value: strings.ReplaceAll(a.Value, cs.replace, it.Value), Raw: a.Raw,
					Literal: a.Literal && it.Literal, Glob: a.Glob || it.Glob, Unknown: a.Unknown}
			}
		}
		w.addCommand(c2)
	}
}

// payload parses text, the literal script given to a shell (bash -c, su -c,
// env -S, watch …), and walks it as a nested source. node is the word (or
// first word) that held it, end the last one.
func (w *walker) payload(program, text string, first, last syntax.Node, cs *cmdState, c ctx) {
	s, _ := offsets(first, len(w.src))
	_, e := offsets(last, len(w.src))
	w.payloadAt(program, text, Span{Start: s, End: e}, cs, c)
}

// payloadAt is payload with the span of the payload text in w.src given.
func (w *walker) payloadAt(program, text string, at Span, cs *cmdState, c ctx) {
	w.payloadEnd.dirs, w.payloadEnd.set = w.vars[cwdKey] // a payload not walked moves nothing
	sp := w.outer
	if sp == nil {
		sp = &at
	}
	if c.Payload+1 > w.maxDepth {
		w.addOpaque(OpaqueDepth, program, w.stmtText(cs.stmt), *sp)
		return
	}
	f, cr, err := parseBash(text)
	if err == nil {
		err = checkNesting(text)
	}
	if err != nil {
		w.addOpaque(OpaquePayload, program, w.stmtText(cs.stmt), *sp)
		return
	}
	if continuedComment(text) {
		w.addOpaque(OpaqueDivergence, program, w.stmtText(cs.stmt), *sp)
	}
	sub := &walker{src: text, script: w.script, maxDepth: w.maxDepth, outer: sp, funcs: w.funcs, cr: cr, file: f, codeChars: hasCodeChar(text)}
	if shells()[interpName(program)] {
		// A shell started with X=v in its environment (X=v sh -c '$X',
		// env X=v bash -c …) begins with X known.
		for _, e := range cs.env {
			if !inheritable(e) {
				continue
			}
			if sub.vars == nil {
				sub.vars = make(map[string]Word, len(cs.env)+len(cs.positional)+2)
			}
			sub.vars[e.Name] = Word{Value: e.Value.Value, Literal: e.Value.Literal}
		}
	}
	// The shell starts where the command runs, with no directory stack.
	for _, k := range [...]string{cwdKey, "PWD"} {
		if v, ok := w.vars[k]; ok {
			if sub.vars == nil {
				sub.vars = make(map[string]Word, len(cs.env)+len(cs.positional)+2)
			}
			sub.vars[k] = v
		}
	}
	if cs.positional != nil {
		if sub.vars == nil {
			sub.vars = make(map[string]Word, len(cs.positional)+2)
		}
		sub.vars["0"] = cs.positional[0]
		bindPositionals(sub.vars, cs.positional[1:])
	}
	if sub.funcs == nil {
		w.funcs = new([]funcDef)
		sub.funcs = w.funcs
	}
	pc := ctx{Context: c.Context, wrap: cs.wrappers, redirs: cs.redirs, env: cs.env, envFlags: cs.envFlags, nest: c.nest}
	pc.Payload++
	pc.Pipeline, pc.PipelineLen = 0, 0
	pc.ExtraArgs = pc.ExtraArgs || cs.extra
	sub.stmts(f.Stmts, pc)
	w.payloadEnd.dirs, w.payloadEnd.set = sub.vars[cwdKey]
}

// inheritable reports whether a started shell sees the environment
// assignment e as a known variable: a plain name with a value that has no
// unknown part, and not one bash sets or resets itself (IFS, BASH_*, PWD …).
func inheritable(e Assign) bool {
	return syntax.ValidName(e.Name) && !e.Value.Unknown && !e.Value.Glob && e.Name != "IFS" &&
		!shellManaged[e.Name] && !strings.HasPrefix(e.Name, "BASH") && e.Name != "ENV" && e.Name != "SHELLOPTS"
}

// joinValues joins the values of words with spaces, as watch and ssh do, and
// reports whether they were all literal.
func joinValues(ws []Word) (string, bool) {
	if len(ws) == 1 {
		return ws[0].Value, ws[0].Literal
	}
	var b strings.Builder
	lit := true
	for i, a := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Value)
		lit = lit && a.Literal
	}
	return b.String(), lit
}
