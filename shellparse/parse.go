package shellparse

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// maxNesting bounds how deep the walker descends into nested statements and
// words. Anything deeper is recorded as an opaque depth-limit segment rather
// than analysed, so hostile input cannot exhaust the stack or the CPU.
const maxNesting = 200

// maxFuncNesting bounds function definitions nested in function bodies.
const maxFuncNesting = 16

// parserPool reuses bash parsers: a Parser carries kilobytes of buffers that
// would otherwise be allocated for every command.
var parserPool = sync.Pool{New: func() any {
	return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))}
}}

type pooledParser struct {
	p *syntax.Parser
	r strings.Reader
}

// parseBash parses src as bash with a pooled parser.
//
// Bash reads a carriage return as an ordinary word character, whereas
// mvdan/sh reads it as a blank (and drops it before a newline), which would
// turn "printf SAFE\r#x; reboot" into a comment. Carriage returns are
// therefore replaced, byte for byte, by a control byte absent from src that
// both read as a word character; cr returns that byte (0 if src had none)
// so that word values can be mapped back.
func parseBash(src string) (f *syntax.File, cr byte, err error) {
	if f, ok := parseSimple(src); ok {
		return f, 0, nil
	}
	if strings.IndexByte(src, '\r') >= 0 {
		cr = unusedControl(src)
		if cr == 0 {
			return nil, 0, fmt.Errorf("%w: carriage returns alongside every control byte", ErrUnsupported)
		}
		src = strings.ReplaceAll(src, "\r", string(rune(cr)))
	}
	pp := parserPool.Get().(*pooledParser)
	pp.r.Reset(src)
	f, err = pp.p.Parse(&pp.r, "")
	pp.r.Reset("")
	parserPool.Put(pp)
	return f, cr, err
}

// unusedControl returns a C0 control byte (other than tab, newline, vertical
// tab, form feed, carriage return and escape) that does not occur in s, or 0.
func unusedControl(s string) byte {
	var seen [32]bool
	for i := 0; i < len(s); i++ {
		if s[i] < 32 {
			seen[s[i]] = true
		}
	}
	for b := byte(1); b < 32; b++ {
		switch b {
		case '\t', '\n', '\v', '\f', '\r', 0x1b:
			continue
		}
		if !seen[b] {
			return b
		}
	}
	return 0
}

// ErrUnsupported is returned (wrapped) by Parse for input it cannot analyse
// faithfully.
var ErrUnsupported = errors.New("shellparse: unsupported input")

// Parse parses src as bash and returns every simple command reachable in it,
// the opaque segments and the functions it defines. It returns an error
// wrapping ErrTooLarge for input over the size limit and one wrapping the
// *syntax.ParseError (or *syntax.LangError) for input that does not parse;
// the Script is nil in both cases. Parse is safe for concurrent use.
func Parse(src string, opts Options) (*Script, error) {
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if len(src) > maxBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(src), maxBytes)
	}
	if err := checkNesting(src); err != nil {
		return nil, err
	}
	f, cr, err := parseBash(src)
	if err != nil {
		return nil, fmt.Errorf("parsing command: %w", err)
	}
	maxDepth := opts.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	s := walkSource(src, f, cr, maxDepth, nil)
	if st := s.files; st != nil && st.late {
		// A file was written after a command that runs it had been
		// walked (a later pass of a loop, a function body walked where
		// it is defined): walk again with every write known from the
		// start (dataflow.go).
		st.late, st.looked = false, nil
		s = walkSource(src, f, cr, maxDepth, st)
	}
	return s, nil
}

// walkSource walks the parsed source f of src, with the file writes of
// files known from the start (nil: none).
func walkSource(src string, f *syntax.File, cr byte, maxDepth int, files *fileStore) *Script {
	s := &Script{Source: src, files: files}
	w := &walker{src: src, script: s, maxDepth: maxDepth, cr: cr, file: f, codeChars: hasCodeChar(src)}
	w.stmts(f.Stmts, ctx{})
	w.finishFunctions()
	if continuedComment(src) {
		w.addOpaque(OpaqueDivergence, "", src, Span{Start: 0, End: len(src)})
	}
	return s
}

// ErrTooDeep is returned (wrapped) by Parse for input whose brackets nest so
// deeply that parsing it would be unreasonably expensive.
var ErrTooDeep = errors.New("shellparse: command nests too deeply")

// checkNesting refuses input whose opening brackets nest past a limit before
// the parser (which is recursive) sees it. It counts brackets only, an
// over-estimate of syntactic nesting. Backquotes are not counted: they nest
// only by escaping, which doubles the backslashes at every level.
func checkNesting(src string) error {
	if len(src) <= maxParseNesting {
		return nil // each level takes a byte
	}
	depth, max := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			if depth > max {
				max = depth
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	if max > maxParseNesting {
		return fmt.Errorf("%w: %d open brackets, limit %d", ErrTooDeep, max, maxParseNesting)
	}
	return nil
}

// maxParseNesting is the bracket depth checkNesting allows.
const maxParseNesting = 1000

// ctx is the walker's state for one statement: the public Context plus what
// enclosing constructs impose on the simple commands inside.
type ctx struct {
	Context
	// wrap are wrappers applying to every command inside (time, and the
	// wrapper chain of a payload's shell).
	wrap []Wrapper
	// redirs are redirections of enclosing compound commands.
	redirs []Redir
	// env and envFlags are the environment given to the shell running a
	// payload (sudo X=1 bash -c '…'), inherited by the payload's commands.
	env      []Assign
	envFlags []string
	// nest is the structural nesting depth.
	nest int
	// funcNest counts enclosing function definitions.
	funcNest int
	// stdin is the known standard input of the commands inside (see
	// feed.go), nil when not known.
	stdin *feed
	// stdinBytes are the known bytes of that input when they are not text
	// (codec.go), nil when not known.
	stdinBytes *output
	// dq reports that the word part being walked is inside double quotes
	// or a here-document body, where bash reads some ${…} operands
	// differently from mvdan.cc/sh (see quotedOperand).
	dq bool
}

// substitution returns the context of a command or process substitution
// inside a command in c: it runs in its own process, not piped and not under
// the command's wrappers or redirections.
func (c ctx) substitution() ctx {
	c.Substitution = true
	c.Pipeline, c.PipelineLen = 0, 0
	c.wrap, c.redirs = nil, nil
	c.env, c.envFlags = nil, nil
	c.stdin, c.stdinBytes = nil, nil
	c.ExtraArgs = false
	c.dq = false
	return c
}

// walker walks one parsed source (the top-level command or a payload) and
// appends what it finds to the shared Script.
type walker struct {
	src      string // the source the AST positions refer to
	cr       byte   // stand-in for carriage returns in the AST's values (see parseBash), 0 if none
	script   *Script
	maxDepth int
	// outer, when non-nil, is the span in the top-level source of the payload
	// word this source came from; every span reported is then outer.
	outer *Span
	// funcs are the function definitions found so far, with the command
	// index range of their bodies.
	funcs *[]funcDef
	// file is the parsed source; funcNames the functions it defines
	// (computed when first needed).
	file      *syntax.File
	funcNames map[string]bool
	// vars are the variables whose values are known at this point of the
	// walk (nil when none); probe, when set, records the names assigned
	// while a loop is probed, probeDepth how many probes are open (vars.go).
	// codeChars reports whether src holds "$", a backquote or a backslash
	// at all: without one no literal can spell a substitution opener.
	codeChars  bool
	vars       map[string]Word
	probe      *probeSet
	probeDepth int
	loopDepth  int
	// defs are the functions defined so far in this source, by name, and
	// calls the call walks made (see callFunction).
	defs   map[string]*syntax.FuncDecl
	calls  int
	inCall bool
	// stopsTracking are the functions whose body, walked at its
	// definition, stopped the tracking (a computed program, eval): a call
	// of one that is not walked stops it.
	stopsTracking map[string]bool
	// choice binds, while a command is walked once per way bash may
	// expand it, each unknown variable under ${X:-w}, ${X:+w} … to one
	// state (see paramChoices); nil otherwise.
	choice map[string]paramState
	// hashed are the known entries of bash's command hash table, by
	// command name (hashtable.go); namerefs the names declared -n.
	hashed map[string]Word
	// namerefs are the names declared -n, each with its target (a
	// variable name; refUnknown when not known; "" before the first
	// assignment gives it one). See refs.go.
	namerefs map[string]string
	// callSets and callLocals are, while a function call is walked, the
	// names the body assigns and those it declares local; callAll that it
	// may have assigned any (see callFunction).
	callSets   map[string]bool
	callLocals map[string]bool
	callAll    bool
	// stageBytes are the known bytes the last pipeline stage walked
	// prints, when they are a copy (see emit and codec.go).
	stageBytes *output
	// substOut are the known outputs of command substitutions walked
	// (dataflow.go).
	substOut map[*syntax.CmdSubst]Word
	// cd is the last simple cd statement walked, dirChanges counts the
	// changes of directory state, cdFuncs are the functions whose body
	// changes it (cwd.go).
	cd         cdSeen
	dirChanges int
	cdFuncs    map[string]bool
	// payloadEnd is the directory state the last payload walked ended
	// in, for one the shell runs itself (an alias's expansion).
	payloadEnd struct {
		dirs Word
		set  bool
	}
}

type funcDef struct {
	fn         int // index in script.Functions
	start, end int // command indices of the body
}

func (w *walker) span(n syntax.Node) Span {
	if w.outer != nil {
		return *w.outer
	}
	s, e := offsets(n, len(w.src))
	return Span{Start: s, End: e}
}

func (w *walker) text(n syntax.Node) string {
	s, e := offsets(n, len(w.src))
	return w.src[s:e]
}

// addOpaque records an opaque segment. Text falls back to the whole source
// so that it is never empty.
func (w *walker) addOpaque(kind OpaqueKind, program, text string, sp Span) {
	if text == "" {
		text = w.src
	}
	if text == "" {
		text = string(kind)
	}
	w.script.Opaque = append(w.script.Opaque, Opaque{Kind: kind, Program: program, Text: text, Span: sp})
}

// tooDeep records a depth-limit segment for n when c is nested past the
// limit, and reports whether it did.
func (w *walker) tooDeep(n syntax.Node, c ctx) bool {
	if c.nest <= maxNesting {
		return false
	}
	w.addOpaque(OpaqueDepth, "", w.text(n), w.span(n))
	return true
}

func (w *walker) stmts(list []*syntax.Stmt, c ctx) {
	w.stmtsStdin(list, c)
}

// stmt walks one statement. It returns the name of a shell or interpreter
// that reads its program from standard input in this statement ("" if
// none), used to spot data piped into an interpreter.
func (w *walker) stmt(s *syntax.Stmt, c ctx) string {
	w.cd = cdSeen{}
	c.nest++
	if w.tooDeep(s, c) {
		return ""
	}
	if s.Background || s.Coprocess || s.Disown {
		c.Background = true
		// A background command runs in a subshell: its assignments stay
		// there.
		defer w.restoreVars(w.saveVars())
	}
	var redirs []Redir
	if len(s.Redirs) > 0 {
		redirs = w.redirs(s.Redirs, c)
	}
	switch cmd := s.Cmd.(type) {
	case nil:
		// Only redirections ("> file", which truncates it).
		w.addBare(s, nil, redirs, c)
	case *syntax.CallExpr:
		return w.call(s, cmd, redirs, c)
	default:
		if f, replaced := ownFeed(s, redirs); replaced {
			c.stdin, c.stdinBytes = f, w.redirectedBytes(s, redirs)
		}
		if len(redirs) > 0 {
			c.redirs = append(c.redirs[:len(c.redirs):len(c.redirs)], redirs...)
		}
		return w.compound(cmd, c)
	}
	return ""
}

func (w *walker) compound(cmd syntax.Command, c ctx) string {
	switch cmd := cmd.(type) {
	case *syntax.BinaryCmd:
		if isPipe(cmd) {
			return w.pipeline(cmd, c)
		}
		// a && b || c nests to the left; walk the chain as a list so a long
		// chain costs no nesting depth.
		var buf [8]*syntax.Stmt
		var opBuf [8]syntax.BinCmdOperator
		var r string
		var first map[string]Word
		stmts, ops := flattenOps(cmd, buf[:0], opBuf[:0])
		var firstCd cdSeen
		// The chain may end after any operand: bash is in the directory
		// one of them left.
		var dirs Word
		var dirsSet bool
		for i, st := range stmts {
			if i > 0 && ops[i] == syntax.AndStmt && w.cd.stmt == stmts[i-1] {
				// "cd DIR && …": what follows runs where the cd went.
				w.setDirs(w.cd.ok)
			}
			if x := w.stmt(st, c); r == "" {
				r = x
			}
			d, ok := w.vars[cwdKey]
			if i == 0 {
				first, firstCd = w.saveVars(), w.cd
				dirs, dirsSet = d, ok
			} else {
				dirs, dirsSet = joinDirs(dirs, dirsSet, d, ok)
			}
		}
		// Only the first command of a chain surely ran.
		w.vars = joinVars(first, w.vars)
		if cur, ok := w.vars[cwdKey]; dirsSet && (!ok || cur != dirs) {
			w.setDirs(dirs)
		}
		if len(stmts) == 2 && ops[1] == syntax.OrStmt && firstCd.stmt == stmts[0] && exits(stmts[1]) {
			// "cd DIR || exit": the script goes on only where the cd went.
			w.setDirs(firstCd.ok)
		}
		return r
	case *syntax.Subshell:
		c.Subshell = true
		defer w.restoreVars(w.saveVars())
		return w.stmtsStdin(cmd.Stmts, c)
	case *syntax.Block:
		return w.stmtsStdin(cmd.Stmts, c)
	case *syntax.IfClause:
		var r string
		var outs []map[string]Word
		for cl := cmd; cl != nil; cl = cl.Else {
			if x := w.stmtsStdin(cl.Cond, c); r == "" {
				r = x
			}
			afterCond := w.saveVars()
			if x := w.stmtsStdin(cl.Then, c); r == "" {
				r = x
			}
			outs = append(outs, w.vars)
			w.vars = afterCond
			if cl.Else == nil && len(cl.Cond) > 0 {
				outs = append(outs, afterCond) // no branch taken
			}
		}
		w.vars = joinAll(outs)
		return r
	case *syntax.WhileClause:
		c.Loop = true
		if forkLoop(cmd) {
			w.script.ForkLoops = append(w.script.ForkLoops, w.span(cmd))
		}
		var r string
		w.loop("", nil, false, func() {
			if x := w.stmtsStdin(cmd.Cond, c); r == "" {
				r = x
			}
			if x := w.stmtsStdin(cmd.Do, c); r == "" {
				r = x
			}
		})
		return r
	case *syntax.ForClause:
		c.Loop = true
		if forkLoop(cmd) {
			w.script.ForkLoops = append(w.script.ForkLoops, w.span(cmd))
		}
		return w.forClause(cmd, c)
	case *syntax.CaseClause:
		w.walkWord(cmd.Word, c)
		var r string
		entry := w.saveVars()
		outs := []map[string]Word{entry} // no pattern matched
		prev := entry
		for i, it := range cmd.Items {
			for _, p := range it.Patterns {
				w.walkWord(p, c)
			}
			// An item is entered on a match, and from the item before it
			// when that one ends in ;& or ;;&: its body is walked from each.
			starts := []map[string]Word{entry}
			if i > 0 && cmd.Items[i-1].Op != syntax.Break {
				starts = append(starts, prev)
			}
			var ends []map[string]Word
			for _, st := range starts {
				w.vars = maps.Clone(st)
				if x := w.stmtsStdin(it.Stmts, c); r == "" {
					r = x
				}
				ends = append(ends, w.vars)
			}
			prev = joinAll(ends)
			outs = append(outs, prev)
		}
		w.vars = joinAll(outs)
		return r
	case *syntax.FuncDecl:
		w.funcDecl(cmd, c)
	case *syntax.ArithmCmd:
		w.arithm(cmd.X, c)
	case *syntax.TestClause:
		w.test(cmd.X, c)
	case *syntax.DeclClause:
		w.decl(cmd, c)
	case *syntax.LetClause:
		w.let(cmd, c)
	case *syntax.TimeClause:
		if cmd.Stmt == nil {
			return ""
		}
		tw := Wrapper{Program: "time"}
		if cmd.PosixFormat {
			tw.Args = []string{"-p"}
		}
		c.wrap = append(c.wrap[:len(c.wrap):len(c.wrap)], tw)
		return w.stmt(cmd.Stmt, c)
	case *syntax.CoprocClause:
		if cmd.Name != nil {
			w.walkWord(cmd.Name, c)
			w.forgetAll() // the coprocess's name is an array bash assigns
		}
		c.Background = true
		defer w.restoreVars(w.saveVars())
		return w.stmt(cmd.Stmt, c)
	case *syntax.TestDecl:
		if cmd.Description != nil {
			w.walkWord(cmd.Description, c)
		}
		return w.stmt(cmd.Body, c)
	}
	return ""
}

// stmtsStdin walks a list and returns the first interpreter-from-stdin found.
func (w *walker) stmtsStdin(list []*syntax.Stmt, c ctx) string {
	var r string
	for k, s := range list {
		if ds := w.dirSplit(s); ds != nil {
			// "cd /; cd /x; rm -rf "$PWD"/*": $PWD, ~+ and $(pwd) are
			// the one directory bash is in, so the rest of the list is
			// walked once in each it may be in (cwd.go).
			x := w.dirChoices(ds, func() string { return w.stmtsStdin(list[k:], c) })
			if r == "" {
				r = x
			}
			return r
		}
		if names := w.stmtChoices(s); len(names) > 0 {
			// "D=${D:-~}; rm -rf "$D"", "cd ${X:+/dev} && echo x > sda":
			// what the statement leaves (a variable's value, the working
			// directory) differs in each state of the variables it
			// expands, and is the same state in the commands after it, so
			// the rest of the list is walked once per state (see
			// paramChoices).
			x := w.paramChoices(names, func() string { return w.stmtsStdin(list[k:], c) })
			if r == "" {
				r = x
			}
			return r
		}
		if x := w.stmt(s, c); r == "" {
			r = x
		}
	}
	return r
}

// stmtChoices returns the variables, not known and not bound, that
// statement s expands under a choice operator anywhere in its words
// (arguments, assignments, redirection targets, nested lists; see
// choiceNames). Only a statement whose text holds "${" is searched.
func (w *walker) stmtChoices(s *syntax.Stmt) []string {
	if !strings.Contains(w.text(s), "${") {
		return nil
	}
	var words []*syntax.Word
	syntax.Walk(s, func(n syntax.Node) bool {
		if wd, ok := n.(*syntax.Word); ok {
			words = append(words, wd)
		}
		return true
	})
	return w.choiceNames(words)
}

// pipeline walks a|b|c with each stage's position, and records data piped
// into a shell or interpreter as opaque.
func (w *walker) pipeline(b *syntax.BinaryCmd, c ctx) string {
	var stagesBuf [8]*syntax.Stmt
	stages := flatten(b, stagesBuf[:0], true)
	first := ""
	// Each stage runs in a subshell (the last one in the shell itself with
	// lastpipe): after the pipeline, only values the last stage left
	// unchanged are known.
	entry := w.saveVars()
	for i, st := range stages {
		sc := c
		sc.Pipeline, sc.PipelineLen = i+1, len(stages)
		w.vars = maps.Clone(entry)
		if i > 0 {
			sc.stdin = w.producerFeed(stages[i-1])
			sc.stdinBytes = w.stageBytes
		}
		w.stageBytes = nil
		r := w.stmt(st, sc)
		if i == len(stages)-1 {
			w.vars = joinVars(entry, w.vars)
		}
		if i == 0 {
			first = r
		} else if r != "" {
			w.addOpaque(OpaquePipedShell, r, w.text(b), w.span(b))
		}
	}
	return first
}

// flatten returns the operands of a chain of pipes (pipe true) or of && and
// || (pipe false) in source order, without recursion. An operand that is
// itself negated, redirected or backgrounded stays whole.
func flatten(b *syntax.BinaryCmd, out []*syntax.Stmt, pipe bool) []*syntax.Stmt {
	out, _ = flattenChain(b, out, nil, pipe)
	return out
}

// flattenOps is flatten for a chain of && and ||, with the operator before
// each operand (ops[0], before the first, is 0).
func flattenOps(b *syntax.BinaryCmd, out []*syntax.Stmt, ops []syntax.BinCmdOperator) ([]*syntax.Stmt, []syntax.BinCmdOperator) {
	return flattenChain(b, out, ops, false)
}

func flattenChain(b *syntax.BinaryCmd, out []*syntax.Stmt, ops []syntax.BinCmdOperator, pipe bool) ([]*syntax.Stmt, []syntax.BinCmdOperator) {
	start := len(out)
	for {
		out = append(out, b.Y)
		if !pipe {
			ops = append(ops, b.Op)
		}
		x, ok := b.X.Cmd.(*syntax.BinaryCmd)
		if !ok || isPipe(x) != pipe || b.X.Negated || len(b.X.Redirs) > 0 || b.X.Background {
			out = append(out, b.X)
			if !pipe {
				ops = append(ops, 0)
			}
			break
		}
		b = x
	}
	for i, j := start, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
		if !pipe {
			ops[i], ops[j] = ops[j], ops[i]
		}
	}
	return out, ops
}

// exits reports whether s is a simple exit or return: the script does not
// go on after it.
func exits(s *syntax.Stmt) bool {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || s.Negated || s.Background {
		return false
	}
	n := ce.Args[0].Lit()
	return n == "exit" || n == "return"
}

func isPipe(b *syntax.BinaryCmd) bool { return b.Op == syntax.Pipe || b.Op == syntax.PipeAll }

func (w *walker) funcDecl(fd *syntax.FuncDecl, c ctx) {
	// Every nested definition's span costs a walk down the nested bodies
	// (syntax.FuncDecl.End recurses), so nesting is bounded tightly.
	c.funcNest++
	if c.funcNest > maxFuncNesting {
		w.addOpaque(OpaqueDepth, "", w.text(fd), w.span(fd))
		return
	}
	name := ""
	if fd.Name != nil {
		name = fd.Name.Value
	}
	if w.funcs == nil {
		w.funcs = new([]funcDef)
	}
	w.script.Functions = append(w.script.Functions, Function{Name: name, Span: w.span(fd), SelfSpawn: selfSpawn(fd)})
	def := funcDef{fn: len(w.script.Functions) - 1, start: len(w.script.Commands)}
	c.Function = name
	// A function body runs when the function is called, not where it is
	// defined: nothing of the definition site's pipeline applies.
	c.Pipeline, c.PipelineLen, c.Background = 0, 0, false
	// The body runs when called, with the values of that moment: it starts
	// with nothing known.
	saved, refs := w.saveVars(), maps.Clone(w.namerefs)
	// The directory is the definition's: where the body most likely runs
	// (a call walked with its arguments runs it where the call is).
	w.vars = keepDirs(w.vars)
	if name != "" && w.tracking() {
		// In the body $FUNCNAME is the function's own name: bash sets it
		// for every call, and an assignment to it has no effect.
		if w.vars == nil {
			w.vars = make(map[string]Word, 1)
		}
		w.vars["FUNCNAME"] = Word{Value: name, Literal: true, Raw: name}
	}
	changes := w.dirChanges
	// The body runs when called: a computed program or an eval in it
	// stops the tracking at a call that is not walked with known
	// arguments (see resolve), not at the definition.
	untracked := w.script.untracked
	w.stmt(fd.Body, c)
	if !untracked && w.script.untracked && name != "" {
		w.script.untracked = false
		if w.stopsTracking == nil {
			w.stopsTracking = map[string]bool{}
		}
		w.stopsTracking[name] = true
	}
	w.vars, w.namerefs = saved, refs
	if w.dirChanges != changes && name != "" {
		if w.cdFuncs == nil {
			w.cdFuncs = map[string]bool{}
		}
		w.cdFuncs[name] = true
	}
	def.end = len(w.script.Commands)
	if name != "" {
		if w.defs == nil {
			w.defs = map[string]*syntax.FuncDecl{}
		}
		w.defs[name] = fd
	}
	*w.funcs = append(*w.funcs, def)
}

// finishFunctions fills the recursion and invocation facts of each function
// once every command is known. They are computed on the call graph of the
// function names defined in the script (a redefinition shares its name's
// node), so functions that call each other (a calls b, b calls a) are
// recursive too, and a call in a pipeline or in the background anywhere on
// the cycle makes each of them SelfPipe or SelfBackground. The work is
// linear in the number of commands.
func (w *walker) finishFunctions() {
	if w.funcs == nil {
		return
	}
	defs := *w.funcs
	cmds := w.script.Commands
	node := make(map[string]int, len(defs))
	firstEnd := []int{}
	for _, d := range defs {
		name := w.script.Functions[d.fn].Name
		if n, ok := node[name]; ok {
			firstEnd[n] = min(firstEnd[n], d.end)
			continue
		}
		node[name] = len(firstEnd)
		firstEnd = append(firstEnd, d.end)
	}
	g := callGraph{edges: make([][]callEdge, len(firstEnd))}
	inBody := make([]bool, len(cmds))
	for _, d := range defs {
		from := node[w.script.Functions[d.fn].Name]
		for i := d.start; i < d.end; i++ {
			inBody[i] = true
			if to, ok := node[cmds[i].Program]; ok {
				c := cmds[i].Context
				g.edges[from] = append(g.edges[from], callEdge{to: to, pipe: c.Pipeline > 0, bg: c.Background})
			}
		}
	}
	comp := g.components()
	ncomp := 0
	for _, c := range comp {
		ncomp = max(ncomp, c+1)
	}
	cyclic := make([]bool, ncomp)
	pipe := make([]bool, ncomp)
	bg := make([]bool, ncomp)
	for from, es := range g.edges {
		for _, e := range es {
			if comp[from] != comp[e.to] {
				continue
			}
			c := comp[from]
			cyclic[c] = true
			pipe[c] = pipe[c] || e.pipe
			bg[c] = bg[c] || e.bg
		}
	}
	// A function is invoked when a command outside every function body
	// calls it after its definition, or when an invoked function calls it.
	invoked := make([]bool, len(firstEnd))
	var work []int
	for i, c := range cmds {
		if n, ok := node[c.Program]; ok && !inBody[i] && i >= firstEnd[n] && !invoked[n] {
			invoked[n] = true
			work = append(work, n)
		}
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.edges[n] {
			if !invoked[e.to] {
				invoked[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	for _, d := range defs {
		f := &w.script.Functions[d.fn]
		n := node[f.Name]
		c := comp[n]
		f.Recursive, f.SelfPipe, f.SelfBackground, f.Invoked = cyclic[c], pipe[c], bg[c], invoked[n]
	}
}

// callGraph is the graph of calls between defined functions.
type callGraph struct {
	edges [][]callEdge
}

type callEdge struct {
	to       int
	pipe, bg bool // the call runs in a pipeline, in the background
}

// components returns the strongly connected component of each node
// (Tarjan's algorithm).
func (g *callGraph) components() []int {
	n := len(g.edges)
	index := make([]int, n)
	low := make([]int, n)
	comp := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next, ncomp := 0, 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, e := range g.edges[v] {
			switch {
			case index[e.to] < 0:
				visit(e.to)
				low[v] = min(low[v], low[e.to])
			case onStack[e.to]:
				low[v] = min(low[v], index[e.to])
			}
		}
		if low[v] == index[v] {
			for {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[x] = false
				comp[x] = ncomp
				if x == v {
					break
				}
			}
			ncomp++
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	return comp
}

// redirs converts a statement's redirections, walking their words.
func (w *walker) redirs(rs []*syntax.Redirect, c ctx) []Redir {
	out := make([]Redir, 0, len(rs))
	for _, r := range rs {
		rd := Redir{}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.RdrIn:
			rd.Mode = RedirRead
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
			rd.Mode = RedirWrite
		case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
			rd.Mode = RedirAppend
		case syntax.RdrInOut:
			rd.Mode = RedirReadWrite
		case syntax.DplIn, syntax.DplOut:
			rd.Mode = RedirDup
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			rd.Mode = RedirHeredoc
		default:
			rd.Mode = RedirWrite
		}
		if rd.Fd == "" && (r.Op == syntax.RdrAll || r.Op == syntax.AppAll || r.Op == syntax.RdrAllClob || r.Op == syntax.AppAllClob) {
			rd.Fd = "&"
		}
		if r.Word != nil {
			w.walkWord(r.Word, c)
			rd.Target = w.convWord(r.Word)
			if r.Op == syntax.DplOut && rd.Fd == "" && rd.Target.Literal && !isFdWord(rd.Target.Value) {
				// ">& file" is "&> file": both outputs written to file.
				rd.Mode, rd.Fd = RedirWrite, "&"
			}
			if r.Op == syntax.WordHdoc {
				rd.Body = rd.Target.Value
			}
		}
		if r.Hdoc != nil {
			hc := c
			hc.dq = true // a body expands as inside double quotes
			w.walkWord(r.Hdoc, hc)
			rd.Body = heredocBody(w.text(r.Hdoc), rd.Target.Value)
		}
		out = append(out, rd)
	}
	return out
}

// walkWord finds the commands inside a word's substitutions.
func (w *walker) walkWord(sw *syntax.Word, c ctx) {
	if sw == nil {
		return
	}
	w.scanLiterals(sw)
	for _, p := range sw.Parts {
		w.walkPart(p, c)
	}
}

func (w *walker) walkPart(p syntax.WordPart, c ctx) {
	switch p := p.(type) {
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
	case *syntax.DblQuoted:
		c.dq = true
		for _, q := range p.Parts {
			w.walkPart(q, c)
		}
	case *syntax.CmdSubst:
		sc := c.substitution()
		sc.nest++
		if w.tooDeep(p, sc) {
			return
		}
		saved := w.saveVars() // a substitution is a subshell
		start, opaques := len(w.script.Commands), len(w.script.Opaque)
		w.stmts(p.Stmts, sc)
		w.vars = saved
		if out, lit, ok := w.substOutput(p, start, opaques); ok {
			// Its known output is the word's text (dataflow.go).
			if w.substOut == nil {
				w.substOut = map[*syntax.CmdSubst]Word{}
			}
			w.substOut[p] = Word{Value: out, Literal: lit}
		}
	case *syntax.ProcSubst:
		sc := c.substitution()
		sc.nest++
		if w.tooDeep(p, sc) {
			return
		}
		saved := w.saveVars()
		w.stmts(p.Stmts, sc)
		w.vars = saved
	case *syntax.ArithmExp:
		w.arithm(p.X, c)
	case *syntax.ParamExp:
		c.nest++
		if w.tooDeep(p, c) {
			return
		}
		if p.NestedParam != nil {
			w.walkPart(p.NestedParam, c)
		}
		if p.Excl && p.Index == nil && p.Names == 0 {
			// ${!x}: bash expands the variable x names, and a name such
			// as 'a[$(reboot)]' has its subscript evaluated as
			// arithmetic: an arithmetic context (see divergence.go).
			// A known name is also walked as the expansion bash makes
			// of it (reread.go).
			w.markArith()
			bare := *p
			bare.Excl, bare.Exp, bare.Repl, bare.Slice = false, nil, nil, nil
			if v, ok := w.paramValue(&bare); ok && v.Literal && hasCodeChar(v.Value) {
				w.reread(`: "${`+v.Value+`}"`, w.span(p), c)
			}
		}
		if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P" {
			// ${x@P} expands the value as a prompt string, and
			// promptvars runs its command substitutions: unless the value
			// is known to hold none, the analysis cannot see what runs.
			bare := *p
			bare.Exp = nil
			if v, ok := w.paramValue(&bare); !ok || !v.Literal || hasCodeChar(v.Value) {
				w.divergent(p)
				if ok && v.Literal {
					// Prompt escapes are decoded first (hence the
					// divergence); the expansions are those of the text
					// in double quotes.
					w.reread(`: "`+v.Value+`"`, w.span(p), c)
				}
			}
		}
		if p.Index != nil {
			w.arithm(p.Index, c)
		}
		if p.Slice != nil {
			w.arithm(p.Slice.Offset, c)
			w.arithm(p.Slice.Length, c)
		}
		if p.Repl != nil {
			w.walkWord(p.Repl.Orig, c)
			w.walkWord(p.Repl.With, c)
		}
		if p.Exp != nil {
			if c.dq {
				w.quotedOperand(p, c)
			}
			w.walkWord(p.Exp.Word, c)
			if (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && p.Param != nil {
				w.forget(p.Param.Value) // ${x:=v} assigns x
			}
		}
	case *syntax.BraceExp:
		for _, e := range p.Elems {
			w.walkWord(e, c)
		}
	}
}

func (w *walker) arithm(x syntax.ArithmExpr, c ctx) {
	if x == nil {
		return
	}
	w.markArith()
	c.nest++
	if w.tooDeep(x, c) {
		return
	}
	switch x := x.(type) {
	case *syntax.Word:
		w.walkWord(x, c)
		w.arithOperand(x)
	case *syntax.BinaryArithm:
		if wd, ok := x.X.(*syntax.Word); ok && x.Op == syntax.Assgn {
			w.walkWord(wd, c) // a plain assignment does not read its target
		} else {
			w.arithm(x.X, c)
		}
		w.arithm(x.Y, c)
		if x.Op >= syntax.Assgn && x.Op <= syntax.PowAssgn {
			w.arithAssigns(x.X)
		}
	case *syntax.UnaryArithm:
		w.arithm(x.X, c)
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			w.arithAssigns(x.X)
		}
	case *syntax.ParenArithm:
		w.arithm(x.X, c)
	case *syntax.FlagsArithm:
		w.arithm(x.X, c)
	}
}

func (w *walker) test(x syntax.TestExpr, c ctx) {
	if x == nil {
		return
	}
	if testEvaluatesArith(x) {
		w.markArith()
		w.forgetAll() // its operands' values are evaluated, and may assign (vars.go)
	}
	c.nest++
	if w.tooDeep(x, c) {
		return
	}
	switch x := x.(type) {
	case *syntax.Word:
		w.walkWord(x, c)
	case *syntax.BinaryTest:
		w.test(x.X, c)
		w.test(x.Y, c)
	case *syntax.UnaryTest:
		w.test(x.X, c)
	case *syntax.ParenTest:
		w.test(x.X, c)
	}
}

func (w *walker) assign(a *syntax.Assign, c ctx) Assign {
	if a.Index != nil {
		w.arithm(a.Index, c)
	}
	out := Assign{}
	if a.Name != nil {
		out.Name = a.Name.Value
		if out.Name == "BASH_CMDS" {
			w.hashAssign(a)
		}
	}
	if a.Value != nil {
		w.walkWord(a.Value, c)
		out.Value = w.convWord(a.Value)
		if a.Index == nil {
			w.promptText(out.Name, out.Value, a, c)
			if _, ref := w.namerefs[out.Name]; ref && out.Value.Literal && hasCodeChar(out.Value.Value) {
				// An assignment to a nameref without a target sets
				// its target (reread.go).
				w.reread(`: "${`+out.Value.Value+`}"`, w.span(a), c)
			}
		}
	} else if a.Array != nil {
		if _, end := offsets(a.Array, len(w.src)); arrayGlued(w.src, end) {
			w.divergent(a)
		}
		for _, el := range a.Array.Elems {
			if el.Index != nil {
				w.arithm(el.Index, c)
			}
			w.walkWord(el.Value, c)
			if out.Name == "PROMPT_COMMAND" && el.Value != nil {
				w.promptText(out.Name, w.convWord(el.Value), a, c)
			}
		}
		out.Value = Word{Value: w.text(a.Array), Raw: w.text(a.Array)}
	} else {
		out.Value = Word{Literal: true}
	}
	return out
}

// decl reports declare/export/local/readonly/typeset as a command whose
// arguments are its assignments as written, after walking their values.
func (w *walker) decl(d *syntax.DeclClause, c ctx) {
	args := make([]Word, 0, len(d.Args))
	array, nameref := w.declOptions(d)
	unref := d.Variant.Value != "export" && declUnref(w, d)
	if nameref {
		w.markArith() // see declOptions
		// Every use of a nameref expands its target: a known one is
		// walked (reread.go), with the values known before the options
		// stop the tracking.
		for _, a := range d.Args {
			if a.Name == nil {
				continue
			}
			if a.Value == nil {
				continue
			}
			if v := assignValue(w.convWord(a.Value), wordHasTilde(a.Value)); v.Literal && hasCodeChar(v.Value) {
				w.reread(`: "${`+v.Value+`}"`, w.span(a), c)
			}
		}
	}
	for _, a := range d.Args {
		as := w.assign(a, c)
		if array {
			w.declCompound(a, c)
		}

		// export -n removes the export attribute: not a nameref; +n
		// removes the nameref attribute.
		w.declBind(d.Variant.Value, a, as, nameref && !unref && d.Variant.Value != "export", unref, c.Function != "")
		s, e := offsets(a, len(w.src))
		raw := w.src[s:e]
		switch {
		case a.Naked && a.Name == nil && a.Value != nil: // an option such as -x
			args = append(args, as.Value)
		case a.Naked:
			args = append(args, Word{Value: as.Name, Literal: true, Raw: raw})
		default:
			eq := "="
			if a.Append {
				eq = "+="
			}
			args = append(args, Word{Value: as.Name + eq + as.Value.Value, Literal: as.Value.Literal && a.Index == nil, Raw: raw, Glob: as.Value.Glob})
		}
	}
	w.addHere(Command{
		Program:  d.Variant.Value,
		Spelling: d.Variant.Value,
		Args:     args,
		Redirs:   c.redirs,
		Wrappers: c.wrap,
		Context:  c.Context,
		Text:     w.text(d),
		Span:     w.span(d),
	})
}

func (w *walker) let(l *syntax.LetClause, c ctx) {
	args := make([]Word, 0, len(l.Exprs))
	for _, x := range l.Exprs {
		w.arithm(x, c)
		t := w.text(x)
		if letOperators(t) {
			w.divergent(x)
		}
		args = append(args, Word{Value: t, Raw: t})
	}
	w.addHere(Command{
		Program: "let", Spelling: "let", Args: args, Redirs: c.redirs,
		Wrappers: c.wrap, Context: c.Context, Text: w.text(l), Span: w.span(l),
	})
}

// addHere records cmd as run in the shell's directory now (cwd.go).
func (w *walker) addHere(cmd Command) {
	cmd.Dirs, cmd.AnyDir = w.commandDirs()
	w.addCommand(cmd)
}

func (w *walker) addCommand(cmd Command) {
	if commandEvaluatesArith(&cmd) {
		w.markArith()
		w.forgetAll()
	}
	if cmd.Text == "" {
		cmd.Text = w.src
	}
	w.script.Commands = append(w.script.Commands, cmd)
	w.script.Commands = append(w.script.Commands, w.linkReadings(cmd)...)
}

// addBare records a statement without a program: only assignments and/or
// redirections ("X=1", "> file"). Its Program is empty.
func (w *walker) addBare(s *syntax.Stmt, env []Assign, redirs []Redir, c ctx) {
	w.addHere(Command{
		Env:      joinEnv(c.env, env),
		EnvFlags: c.envFlags,
		Redirs:   joinRedirs(c.redirs, redirs),
		Wrappers: c.wrap,
		Context:  c.Context,
		Text:     w.stmtText(s),
		Span:     w.stmtSpan(s),
	})
}

// stmtText is the text of a statement without its terminator (; or &) and
// without heredoc bodies, which follow the line.
func (w *walker) stmtText(s *syntax.Stmt) string {
	a, b := w.stmtRange(s)
	return w.src[a:b]
}

func (w *walker) stmtSpan(s *syntax.Stmt) Span {
	if w.outer != nil {
		return *w.outer
	}
	a, b := w.stmtRange(s)
	return Span{Start: a, End: b}
}

func (w *walker) stmtRange(s *syntax.Stmt) (int, int) {
	start, _ := offsets(s, len(w.src))
	end := start
	if s.Cmd != nil {
		_, end = offsets(s.Cmd, len(w.src))
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			if _, e := offsets(r.Word, len(w.src)); e > end {
				end = e
			}
		}
	}
	return start, end
}

func joinEnv(outer, own []Assign) []Assign {
	if len(outer) == 0 {
		return own
	}
	return append(outer[:len(outer):len(outer)], own...)
}

func joinRedirs(outer, own []Redir) []Redir {
	if len(outer) == 0 {
		return own
	}
	return append(outer[:len(outer):len(outer)], own...)
}

// isFdWord reports whether a dup target names a file descriptor ("1",
// "3-") or closes one ("-").
func isFdWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// heredocBody trims the closing delimiter line, which the parser's position
// for a heredoc body includes.
func heredocBody(text, delim string) string {
	nl := strings.LastIndexByte(text, '\n')
	if strings.TrimLeft(text[nl+1:], "\t") == delim {
		return text[:nl+1]
	}
	return text
}
