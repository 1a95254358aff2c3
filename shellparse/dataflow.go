package shellparse

import (
	"path"
	"strings"

	"github.com/tether-dev/tether/grammar"
	"mvdan.cc/sh/v3/syntax"
)

// Files the command line writes and then runs. The walker keeps, besides
// the variables (vars.go), what the line has put into files so far: a
// program copied, moved, linked or installed to another name (cp /bin/rm x,
// cat /bin/rm > x, dd if=/bin/rm of=x), text written by a redirection, tee or
// a here-document (printf 'reboot\n' > s.sh, cat > s.sh <<EOF … EOF), or
// content the line cannot know (curl -o x …, cp "$1" x). When the same line
// later runs such a file — as a program (./x, sudo /tmp/x), as a shell's or
// an interpreter's script (sh s.sh, python3 s.py) or with source/. — the
// command is read as what the file holds: a copy of rm is rm, known text is
// a script walked like bash -c's, and unknown content is an opaque
// written-file segment (approval).
//
// A symbolic link the line makes (ln -s T L, ln -sfn, cp -s, -t DIR) is a
// second name for its target: every later command whose argument,
// redirection target or KEY=PATH value starts with the link's name is
// recorded once more with the target in its place (linkReadings), so that
// "ln -s /proc/sysrq-trigger t; echo b > t" is also read as the write to
// /proc/sysrq-trigger. A computed target (ln -s "$x" t) makes those paths
// unknown.
//
// Files are not shell state: what a subshell, a substitution or a pipeline
// stage writes stays written, so the store is shared by the whole walk and
// only grows. A path matches by its last element, which over-approximates
// across cd and relative spellings (cp /bin/rm /tmp/x; cd /tmp; ./x) and
// can only rate higher. When a file is written after a command that runs it
// was walked (a loop's later pass, a function body walked at its
// definition), the whole source is walked once more with every write known
// from the start (see Parse).

// maxFacts bounds the writes remembered; past it every later lookup of a
// written name sees unknown content.
const maxFacts = 64

// factKind is what a write put into a file.
type factKind uint8

const (
	factText    factKind = iota // known text
	factCopy                    // a copy of the file at src (a program, usually)
	factUnknown                 // content the analysis cannot know
)

// fileFact is one write of the command line.
type fileFact struct {
	path   string // cleaned, as written ("/tmp/x", "s.sh", "~/bin/x")
	kind   factKind
	text   string // factText: the text; factCopy: the source path
	append bool   // >> or tee -a: text added to what the file held
	// enc is the encoding stack the bytes went through (codec.go): ""
	// when the file holds the text or copy itself.
	enc string
}

// fileStore is the writes of one Parse, shared by every walker of it.
type fileStore struct {
	facts    []fileFact
	overflow bool
	// looked are the base names looked up so far, late that a write to
	// one of them came after its lookup.
	looked map[string]bool
	late   bool
	// runs counts the written files being resolved as programs, so that
	// copies of copies cannot recurse without end.
	runs int
	// links are the symbolic links the line made so far, in order.
	links []symlink
	// pathDirs are the directories the line assigned into PATH.
	pathDirs map[string]bool
}

// symlink is a symbolic link the line made (ln -s TARGET LINK, cp -s): a
// second name for its target. A later path through it reaches the target,
// so each such path is also judged with the target in its place (see
// linkReadings).
type symlink struct {
	path   string // the link, cleaned as written
	target Word   // what it points at, relative to path's directory; Unknown when computed
	// by and text locate the command that made it, which is not read
	// through its own link (ln -s /etc e does not write into /etc), also
	// on a second walk where every link is known from the start.
	by   Span
	text string
}

// maxLinks bounds the links remembered, as maxFacts the writes.
const maxLinks = 32

// store returns the script's file store, creating it.
func (w *walker) store() *fileStore {
	if w.script.files == nil {
		w.script.files = &fileStore{}
	}
	return w.script.files
}

// addFact records a write to p (a literal path).
func (w *walker) addFact(f fileFact) {
	if f.path == "" || f.path == "/dev/null" || strings.HasPrefix(f.path, "/dev/") {
		return
	}
	f.path = path.Clean(f.path)
	st := w.store()
	for _, g := range st.facts {
		if g == f {
			return // the same write seen again (a loop's pass, a second walk)
		}
	}
	if len(st.facts) >= maxFacts {
		st.overflow = true
		return
	}
	if st.looked[path.Base(f.path)] {
		st.late = true
	}
	st.facts = append(st.facts, f)
}

// content is one thing a file may hold when it is run.
type content struct {
	kind factKind
	text string // factText: the text; factCopy: the source path
	enc  string // as fileFact.enc
}

// maxCopyChain bounds copies of copies followed (cp /bin/rm a; cp a b),
// and maxContentSteps the writes visited for one lookup.
const (
	maxCopyChain    = 4
	maxContentSteps = 256
)

// written returns what the file p may hold from this line's writes, in
// write order; nil when the line wrote nothing there. Files match by their
// last path element: what it returns are readings to add, not to replace
// the file's own (see writtenAt).
func (w *walker) written(p string) []content {
	st := w.store()
	base := path.Base(path.Clean(p))
	if st.looked == nil {
		st.looked = map[string]bool{}
	}
	st.looked[base] = true
	budget := maxContentSteps
	out := st.contents(base, false, len(st.facts), 0, &budget)
	for k := range out {
		if out[k].enc != "" {
			out[k] = content{kind: factUnknown} // encoded bytes: neither a program nor a script
		}
	}
	if len(out) == 0 && (st.overflow || w.unknownWrite(base)) {
		out = append(out, content{kind: factUnknown})
	}
	return out
}

// writtenAt returns what the line's writes to exactly the path p (cleaned)
// may have put there, for a reading that replaces the file's own (cat FILE
// in a substitution).
func (w *walker) writtenAt(p string) []content {
	budget := maxContentSteps
	st := w.store()
	return st.contents(path.Clean(p), true, len(st.facts), 0, &budget)
}

// contents returns what the writes before fact index end leave in a file
// named key: its last path element, or (exact) its cleaned path. Every
// write is a possible content (the line's control flow is not followed);
// an append adds its text to each text before it.
func (st *fileStore) contents(key string, exact bool, end, depth int, budget *int) []content {
	var out []content
	for _, f := range st.facts[:end] {
		if (exact && f.path != key) || (!exact && path.Base(f.path) != key) {
			continue
		}
		if *budget--; *budget < 0 {
			// Copies of copies past the budget: not followed.
			return append(out, content{kind: factUnknown})
		}
		switch {
		case f.append && f.enc != "":
			out = append(out, content{kind: factUnknown})
		case f.kind == factText && f.append && len(out) > 0:
			for k := range out {
				if out[k].kind == factText && out[k].enc == "" {
					out[k].text += f.text
				} else {
					out[k] = content{kind: factUnknown}
				}
			}
		case f.kind == factCopy:
			// A copy of a file the line wrote holds that file's content.
			src := path.Clean(f.text)
			if !exact {
				src = path.Base(src)
			}
			if depth < maxCopyChain && src != key {
				if prior := st.contents(src, exact, indexOf(st.facts, f), depth+1, budget); len(prior) > 0 {
					for _, pc := range prior {
						if f.enc != "" && pc.kind != factUnknown {
							// A copy of a written file through an encoding.
							pc = through(codec{name: f.enc}, output{kind: pc.kind, text: pc.text, enc: pc.enc}).content()
						}
						out = append(out, pc)
					}
					continue
				}
			}
			out = append(out, content{kind: factCopy, text: f.text, enc: f.enc})
		default:
			out = append(out, content{kind: f.kind, text: f.text, enc: f.enc})
		}
	}
	return out
}

func indexOf(fs []fileFact, f fileFact) int {
	for i := range fs {
		if fs[i] == f {
			return i
		}
	}
	return len(fs)
}

// unknownWrite reports whether a command recorded so far writes a file
// named base through an option or operand the grammar marks as written
// (curl -o x, wget -O x, gcc -o x, tar -xf … are not copies): its content is
// not known. Only commands with a word ending in base are read.
func (w *walker) unknownWrite(base string) bool {
	for k := range w.script.Commands {
		c := &w.script.Commands[k]
		if c.Program == "" || !mentions(c.Args, base) {
			continue
		}
		inv := grammar.Parse(c.Program, values(c.Args))
		for _, o := range inv.Options {
			if o.ValueEffects&grammar.Write != 0 && o.HasValue && path.Base(o.Value) == base {
				return true
			}
		}
		for _, op := range inv.Operands {
			if op.Effects&grammar.Write != 0 && path.Base(op.Value) == base {
				return true
			}
		}
	}
	return false
}

func mentions(args []Word, base string) bool {
	for _, a := range args {
		if strings.HasSuffix(a.Value, base) {
			return true
		}
	}
	return false
}

// copiers are the programs whose written operand holds the content of
// their read operands: cp SRC… DST, ln, mv, install, rsync. (dd's if= and
// of=, cat's operands and tee are read apart below.)
var copiers = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true, "rsync": true, "scp": true}

// noteWrites records what the command cmd, being emitted from cs, writes into files: its output redirections, tee's files, and the
// destinations of copies.
func (w *walker) noteWrites(cs *cmdState, cmd *Command) {
	var out *output
	for _, r := range cmd.Redirs {
		if (r.Mode != RedirWrite && r.Mode != RedirAppend) || (r.Fd != "" && r.Fd != "1" && r.Fd != "&") {
			continue
		}
		if !r.Target.Literal && !homeWord(r.Target) {
			continue
		}
		if out == nil {
			o := w.commandOutput(cmd, cs.stdin, cs.stdinBytes)
			out = &o
		}
		w.addFact(out.fact(r.Target.Value, r.Mode == RedirAppend))
	}
	switch name := cmd.Program; {
	case name == "tee":
		inv := grammar.Parse("tee", values(cmd.Args))
		in := stdinOutput(cs.stdin, cs.stdinBytes)
		app := inv.Has("--append")
		for _, op := range inv.Operands {
			if op.Value != "-" && cmd.Args[op.Arg].Literal {
				w.addFact(in.fact(op.Value, app))
			}
		}
	case name == "dd":
		var src, dst string
		srcKnown := true
		for _, a := range cmd.Args {
			switch {
			case strings.HasPrefix(a.Value, "if="):
				src, srcKnown = a.Value[3:], a.Literal
			case strings.HasPrefix(a.Value, "of=") && a.Literal:
				dst = a.Value[3:]
			}
		}
		if dst == "" {
			return
		}
		switch {
		case src == "":
			w.addFact(stdinOutput(cs.stdin, cs.stdinBytes).fact(dst, false))
		case !srcKnown:
			w.addFact(fileFact{path: dst, kind: factUnknown})
		default:
			w.addFact(w.fileOutput(src).fact(dst, false))
		}
	case name == "tar":
		w.noteTar(cs, cmd)
	case copiers[name]:
		w.noteCopy(cmd)
	}
}

// noteLinks records the symbolic links ln -s / ln --symbolic and cp -s /
// cp --symbolic-link make: the last operand (or -t DIR) names the link, as
// LINK itself and as LINK/base(TARGET) since LINK may be a directory;
// with one operand the link is base(TARGET) in the current directory.
func (w *walker) noteLinks(cmd *Command) {
	if cmd.Program != "ln" && cmd.Program != "cp" {
		return
	}
	inv := grammar.Parse(cmd.Program, values(cmd.Args))
	if !(cmd.Program == "ln" && inv.Has("--symbolic")) && !(cmd.Program == "cp" && inv.Has("--symbolic-link")) {
		return
	}
	ops := inv.Operands
	dir, hasDir := inv.Value("--target-directory")
	var names []string
	switch {
	case hasDir:
	case len(ops) == 1 && cmd.Program == "ln":
		dir, hasDir = ".", true
	case len(ops) >= 2:
		last := ops[len(ops)-1]
		if !plainPath(cmd.Args[last.Arg]) {
			return // the link's own name is computed: no path names it
		}
		dir, ops = last.Value, ops[:len(ops)-1]
		if len(ops) == 1 {
			names = append(names, dir)
		}
	default:
		return
	}
	st := w.store()
	add := func(link string, target Word) {
		if len(st.links) >= maxLinks {
			return
		}
		l := symlink{path: path.Clean(link), target: target, by: cmd.Span, text: cmd.Text}
		for _, g := range st.links {
			if g == l {
				return
			}
		}
		st.links = append(st.links, l)
		// A command recorded before the link that reaches through it (a
		// function body walked at its definition, a loop's earlier pass)
		// is read again: the walk is redone with every link known.
		for k := range w.script.Commands {
			if len(linkReadingsOf(w.script.Commands[k], st.links[len(st.links)-1:])) > 0 {
				st.late = true
				break
			}
		}
	}
	for _, op := range ops {
		t := cmd.Args[op.Arg]
		target := Word{Value: op.Value, Raw: t.Raw, Literal: t.Literal, Glob: t.Glob, Unknown: t.Unknown || !plainPath(t)}
		for _, n := range names {
			add(n, target)
		}
		add(dir+"/"+path.Base(op.Value), target)
	}
}

// linkReadings returns cmd read through the links the line made before
// it: each argument, redirection target or KEY=PATH value (dd of=) whose
// path starts with a link's name gets the link's target in its place. One
// reading per link that applies; the command as written is kept by the
// caller, so the rewritten paths add to what is judged and never replace
// it. A link to a computed target gives an Unknown word: a write through
// it is a write to an unknown path.
func (w *walker) linkReadings(cmd Command) []Command {
	st := w.script.files
	if st == nil {
		return nil
	}
	return linkReadingsOf(cmd, st.links)
}

// linkReadingsOf is linkReadings over the links given.
func linkReadingsOf(cmd Command, links []symlink) []Command {
	var out []Command
	for _, l := range links {
		if cmd.Span == l.by && cmd.Text == l.text && (cmd.Program == "ln" || cmd.Program == "cp") {
			continue
		}
		c, changed := cmd, false
		args := make([]Word, len(cmd.Args))
		for i, a := range cmd.Args {
			args[i] = a
			if nw, ok := throughLink(a, l); ok {
				args[i], changed = nw, true
			}
		}
		redirs := make([]Redir, len(cmd.Redirs))
		for i, r := range cmd.Redirs {
			redirs[i] = r
			if nw, ok := throughLink(r.Target, l); ok {
				redirs[i].Target, changed = nw, true
			}
		}
		if changed {
			c.Args, c.Redirs = args, redirs
			out = append(out, c)
		}
	}
	return out
}

// throughLink rewrites the path in a (the whole word, or what follows the
// first "=" of KEY=PATH) when it is the link l or a path under it.
func throughLink(a Word, l symlink) (Word, bool) {
	v, key := a.Value, ""
	if i := strings.IndexByte(v, '='); i >= 0 && !strings.HasPrefix(v, "-") {
		key, v = v[:i+1], v[i+1:]
	} else if strings.HasPrefix(v, "-") {
		return a, false
	}
	if v == "" || a.Unknown {
		return a, false
	}
	cv := path.Clean(v)
	var rest string
	switch {
	case cv == l.path:
	case strings.HasPrefix(cv, l.path+"/"):
		rest = cv[len(l.path):]
	case l.path == "." && !path.IsAbs(cv):
		rest = "/" + cv
	default:
		return a, false
	}
	t := l.target.Value
	if !path.IsAbs(t) && !l.target.Unknown {
		t = path.Join(path.Dir(l.path), t)
	}
	nv := key + t + rest
	if !l.target.Unknown {
		nv = key + path.Clean(t+rest)
		if strings.HasSuffix(v, "/") && !strings.HasSuffix(nv, "/") {
			nv += "/"
		}
	}
	return Word{Value: nv, Raw: a.Raw, Literal: a.Literal && l.target.Literal, Glob: a.Glob || l.target.Glob,
		Unknown: l.target.Unknown}, true
}

// noteCopy records the destinations of cp, mv, ln, install, rsync and scp:
// the last operand, or the -t/--target-directory directory, holds each
// source (as DST itself and as DST/base(SRC), since DST may be a
// directory).
func (w *walker) noteCopy(cmd *Command) {
	args := braceArgs(cmd.Args)
	inv := grammar.Parse(cmd.Program, values(args))
	ops := inv.Operands
	dir, hasDir := inv.Value("--target-directory")
	if !hasDir {
		if len(ops) < 2 {
			return
		}
		dir, ops = ops[len(ops)-1].Value, ops[:len(ops)-1]
		if !plainPath(args[inv.Operands[len(inv.Operands)-1].Arg]) {
			return
		}
	}
	for _, op := range ops {
		src := args[op.Arg]
		f := fileFact{kind: factCopy, text: op.Value}
		if !src.Literal || strings.Contains(op.Value, ":") {
			f = fileFact{kind: factUnknown} // computed, or remote (rsync h:x, scp)
		}
		if !hasDir {
			f.path = dir
			w.addFact(f)
		}
		if f.kind == factCopy {
			f.path = dir + "/" + path.Base(op.Value)
		} else {
			f.path = dir + "/" + path.Base(dir) // the name is not known: any file there
		}
		w.addFact(f)
	}
}

// braceArgs returns args with each brace expansion bash makes of a word
// into plain words (cp /sbin/reboot{,.x} is cp /sbin/reboot
// /sbin/reboot.x): the words themselves, when every one is plain text;
// other words as they are.
func braceArgs(args []Word) []Word {
	var out []Word
	for i, a := range args {
		var alts []string
		if a.Glob && strings.Contains(a.Raw, "{") {
			alts = braceText(a.Raw)
		}
		if alts == nil {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append([]Word(nil), args[:i]...)
		}
		for _, s := range alts {
			out = append(out, Word{Value: s, Literal: true, Raw: s})
		}
	}
	if out == nil {
		return args
	}
	return out
}

// braceText returns the words bash's brace expansion makes of the word
// whose source is raw, or nil unless there are some and each is plain
// text (no quotes, expansions or patterns left).
func braceText(raw string) []string {
	sw, err := syntax.NewParser().Document(strings.NewReader(raw))
	if err != nil {
		return nil
	}
	words := braceWords(sw)
	for _, s := range words {
		if strings.ContainsAny(s, "$`'\"\\*?[{~") {
			return nil
		}
	}
	return words
}

// output is what a command writes to its standard output. A text output
// that is not lit holds the home as a tilde ("echo ~" prints "~" here):
// known, but not literal text.
type output struct {
	kind factKind
	text string
	lit  bool
	enc  string // the encodings applied (codec.go)
}

func (o output) content() content { return content{kind: o.kind, text: o.text, enc: o.enc} }

// fact is the write of o to p; a text that is not literal is not known as
// a file's content.
func (o output) fact(p string, app bool) fileFact {
	if o.kind == factText && !o.lit {
		return fileFact{path: p, kind: factUnknown}
	}
	return fileFact{path: p, kind: o.kind, text: o.text, append: app && o.kind == factText, enc: o.enc}
}

// commandOutput returns what cmd prints given the known input in (nil when
// not known) or the known bytes on its standard input (a copy of a file,
// perhaps encoded; nil when not known): the text of echo and printf of
// known words, what a filter (cat, tee, base64, gzip, xxd … see codec.go)
// makes of its file or its input, rev and tr of known input; anything else
// is unknown.
func (w *walker) commandOutput(cmd *Command, in *feed, bytes *output) output {
	unknown := output{kind: factUnknown}
	// A function or an alias of that name may run instead, and after
	// eval, source or a computed program name nothing is sure.
	if len(cmd.Wrappers) > 0 || !w.tracking() || w.script.aliases || w.isFunction(cmd.Program) {
		return unknown
	}
	for _, a := range cmd.Args {
		if a.Unknown || a.Glob {
			return unknown
		}
	}
	known := in != nil && in.lit
	switch cmd.Program {
	case "echo", "printf":
		if f := printOutput(cmd.Program, cmd.Args); f != nil && !f.glob {
			return output{kind: factText, text: f.text, lit: f.lit}
		}
		return unknown
	case "pwd":
		// The directory when it is one known (cwd.go); -P prints it
		// without symbolic links, which are not followed here either.
		d, ok := w.vars["PWD"]
		for _, a := range cmd.Args {
			ok = ok && (a.Value == "-L" || a.Value == "-P" || a.Value == "-LP" || a.Value == "-PL")
		}
		if !ok {
			return unknown
		}
		return output{kind: factText, text: d.Value + "\n", lit: d.Literal}
	}
	for _, a := range cmd.Args {
		if !a.Literal {
			return unknown
		}
	}
	if c, file, ok := filterStep(cmd.Program, cmd.Args); ok {
		src := stdinOutput(in, bytes)
		if file != "" {
			src = w.fileOutput(file)
		}
		return through(c, src)
	}
	switch cmd.Program {
	case "tee":
		return stdinOutput(in, bytes) // it prints what it copies
	case "tar":
		t, ok := readTar(cmd.Args)
		switch {
		case ok && t.mode == 'x' && t.stdout:
			// tar xO prints the one file a known archive holds.
			if src := w.tarInput(t, in, bytes); src.kind == factCopy && src.enc == "tar" {
				return output{kind: factCopy, text: src.text}
			}
		case ok && (t.archive == "" || t.archive == "-"):
			return t.stream() // the archive on standard output
		}
	case "dd":
		src := stdinOutput(in, bytes)
		for _, a := range cmd.Args {
			k, v, _ := strings.Cut(a.Value, "=")
			switch k {
			case "if":
				src = w.fileOutput(v)
			case "bs", "status", "ibs", "obs":
			default:
				return unknown // of=, count=, skip=, conv= …
			}
		}
		return src
	case "rev":
		if known && len(cmd.Args) == 0 {
			return output{kind: factText, text: revLines(in.text), lit: true}
		}
	case "tr":
		if known && len(cmd.Args) == 2 {
			if t, ok := trText(in.text, cmd.Args[0].Value, cmd.Args[1].Value); ok {
				return output{kind: factText, text: t, lit: true}
			}
		}
	}
	return unknown
}

// stdinOutput is what a command reads on standard input: the known text
// in, else the known bytes, else unknown.
func stdinOutput(in *feed, bytes *output) output {
	switch {
	case in != nil && in.lit:
		return output{kind: factText, text: in.text, lit: true}
	case bytes != nil:
		return *bytes
	}
	return output{kind: factUnknown}
}

// fileOutput returns the bytes of the file p: what this line wrote there
// when that is one thing, else (the line wrote nothing of that name) a
// copy of the file itself.
func (w *walker) fileOutput(p string) output {
	if strings.HasPrefix(p, "-") || p == "" {
		return output{kind: factUnknown}
	}
	if st := w.script.files; st == nil || len(st.facts) == 0 {
		return output{kind: factCopy, text: p} // the line wrote no file yet
	}
	if cs := w.writtenAt(p); len(cs) == 1 && cs[0].kind != factUnknown {
		return output{kind: cs[0].kind, text: cs[0].text, lit: true, enc: cs[0].enc}
	}
	if len(w.written(p)) > 0 {
		return output{kind: factUnknown} // the line wrote a file of that name: which one is read is not sure
	}
	return output{kind: factCopy, text: p}
}

// revLines reverses the characters of each line, as rev does.
func revLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		r := []rune(strings.TrimSuffix(l, "\n"))
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		b.WriteString(string(r))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// trText translates s as "tr SET1 SET2" does for sets of plain ASCII
// characters and a-z style ranges; other sets (classes, escapes, options)
// are not modelled.
func trText(s, set1, set2 string) (string, bool) {
	a, ok1 := trSet(set1)
	b, ok2 := trSet(set2)
	if !ok1 || !ok2 || len(b) == 0 || strings.HasPrefix(set1, "-") {
		return "", false
	}
	var m [128]byte
	for i := range m {
		m[i] = byte(i)
	}
	for i, c := range a {
		if i < len(b) {
			m[c] = b[i]
		} else {
			m[c] = b[len(b)-1]
		}
	}
	out := []byte(s)
	for i, c := range out {
		if c >= 128 {
			return "", false
		}
		out[i] = m[c]
	}
	return string(out), true
}

func trSet(s string) ([]byte, bool) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 128 || c == '\\' || c == '[' {
			return nil, false
		}
		if i+2 < len(s) && s[i+1] == '-' {
			if s[i+2] < c || s[i+2] >= 128 {
				return nil, false
			}
			for x := c; x <= s[i+2]; x++ {
				out = append(out, x)
			}
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out, true
}

// runWritten handles the program word at i when it may name a file this
// line wrote (a path, or a bare name the line put into a directory on
// PATH). It only adds readings: a copy of another file is also resolved as
// that file ("cp /bin/rm x; ./x -rf ~" is rm), known text is walked as the
// script it is, unknown content is an opaque written-file segment. The
// command itself goes on through resolve as written, since a name matched
// by its last element may be another file ("/bin/rm" after a write to
// /tmp/rm).
func (w *walker) runWritten(cs *cmdState, i int, c ctx) {
	pw := cs.words[i]
	if !strings.Contains(pw.Value, "/") && !w.onPath(pw.Value) {
		return
	}
	got := w.written(pw.Value)
	st := w.store()
	if st.runs >= maxCopyChain {
		return
	}
	st.runs++
	defer func() { st.runs-- }()
	if !strings.Contains(pw.Value, "/") {
		// A link planted on PATH under this name runs its target
		// (a path with a "/" is read through links by linkReadings).
		for _, l := range st.links {
			if path.Base(l.path) == pw.Value && w.pathDir(path.Dir(l.path)) && baseName(l.target.Value) != pw.Value {
				alt := *cs
				alt.words = append([]Word(nil), cs.words...)
				alt.words[i] = l.target
				alt.words[i].Literal = plainPath(l.target) // ~/x: a path, not a computed name
				w.resolve(&alt, i, c)
			}
		}
	}
	for _, ct := range got {
		switch ct.kind {
		case factCopy:
			if baseName(ct.text) == baseName(pw.Value) {
				continue // a copy of rm run as rm: the command as written
			}
			alt := *cs
			alt.words = append([]Word(nil), cs.words...)
			alt.words[i] = Word{Value: ct.text, Literal: true, Raw: pw.Raw}
			w.resolve(&alt, i, c)
		case factText:
			w.scriptText(baseName(pw.Value), shebangReader(ct.text), ct.text, cs, i)
		default:
			w.addOpaque(OpaqueWritten, baseName(pw.Value), w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		}
	}
}

// pathDirs are directories a bare command name is looked up in: a file the
// line writes there runs under its bare name.
var pathDirs = map[string]bool{
	"/usr/local/sbin": true, "/usr/local/bin": true, "/usr/sbin": true, "/usr/bin": true, "/sbin": true, "/bin": true,
	"~/bin": true, "~/.local/bin": true, "$HOME/bin": true, "$HOME/.local/bin": true,
}

// onPath reports whether the line wrote a file, or made a link, named name
// in a PATH directory.
func (w *walker) onPath(name string) bool {
	st := w.script.files
	if st == nil || name == "" {
		return false
	}
	for _, f := range st.facts {
		if path.Base(f.path) == name && w.pathDir(path.Dir(f.path)) {
			return true
		}
	}
	for _, l := range st.links {
		if path.Base(l.path) == name && w.pathDir(path.Dir(l.path)) {
			return true
		}
	}
	return false
}

// plainPath reports whether word w names a known path: literal, or a
// home path "~/…" with no other expansion (cp /sbin/reboot ~/bin/ls).
func plainPath(w Word) bool {
	return w.Literal || strings.HasPrefix(w.Raw, "~/") && w.Raw == w.Value && !strings.ContainsAny(w.Raw, "$`*?[{\\'\"")
}

// pathDir reports whether a bare command name may be looked up in dir: one
// of pathDirs, or a directory the line puts on PATH anywhere (its control
// flow is not followed); an empty or "." entry is the current directory,
// which any relative directory may be after a cd.
func (w *walker) pathDir(dir string) bool {
	if pathDirs[dir] {
		return true
	}
	st := w.script.files
	if st == nil {
		return false
	}
	return st.pathDirs[dir] || st.pathDirs["."] && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~")
}

// notePath records the literal directories of a value assigned to PATH.
func (w *walker) notePath(v string) {
	st := w.store()
	for _, d := range strings.Split(v, ":") {
		switch {
		case d == "" || d == ".":
			d = "."
		case strings.ContainsAny(d, "$`"):
			continue // $PATH, a computed entry
		default:
			d = path.Clean(d)
		}
		if st.pathDirs == nil {
			st.pathDirs = map[string]bool{}
		}
		st.pathDirs[d] = true
	}
}

// writtenScript handles the script operand at word j of a shell, an
// interpreter or source (name): a file this line wrote is read as what it
// holds, by name.
func (w *walker) writtenScript(name string, cs *cmdState, j int) {
	if j >= len(cs.words) || !cs.words[j].Literal {
		return
	}
	for _, ct := range w.written(cs.words[j].Value) {
		switch ct.kind {
		case factText:
			w.scriptText(name, name, ct.text, cs, j)
		case factUnknown:
			w.addOpaque(OpaqueWritten, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		}
		// A copy of an existing file runs what that file runs, as it
		// would under its own name.
	}
}

// scriptText walks text, a script the line wrote, read by reader (a shell,
// source, an interpreter) for program, at word j. Shell text is walked like
// bash -c's; Python is read as python3 -c would be; other languages are an
// opaque payload.
func (w *walker) scriptText(program, reader, text string, cs *cmdState, j int) {
	fold := interpName(reader)
	if !shells()[fold] && reader != "source" && reader != "." {
		if g := grammarInterp(reader); g != "" && grammar.PythonPrintsOnly(grammar.Parse(g, []string{"-c", text})) {
			return
		}
		w.addOpaque(OpaquePayload, reader, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return
	}
	sc := *cs
	sc.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: program})
	// The words after the script are its $1 …, bound when known.
	sc.positional = nil
	if args := cs.words[j:]; len(args) <= 10 && allKnown(args) {
		sc.positional = args
	} else {
		sc.extra = true
	}
	w.payload(program, text, cs.nodes[j], cs.nodes[j], &sc, cs.ctx)
}

// shebangReader returns the program that runs a file holding text when the
// file itself is executed: the "#!" line's interpreter (env's operand for
// "#!/usr/bin/env X"), or a shell: bash runs a file without one as a
// script.
func shebangReader(text string) string {
	if !strings.HasPrefix(text, "#!") {
		return "sh"
	}
	line, _, _ := strings.Cut(text[2:], "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return "sh"
	}
	r := baseName(f[0])
	if r == "env" {
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				return baseName(a)
			}
		}
	}
	return r
}

// substOutput returns the output of the command substitution whose
// commands were recorded from index start, when known: one command or one
// pipeline of commands whose outputs are known (commandOutput), with no
// opaque segment among them. Bash drops the trailing newlines. lit is false
// when the text holds the home as a tilde.
func (w *walker) substOutput(p *syntax.CmdSubst, start, opaques int) (text string, lit, ok bool) {
	cmds := w.script.Commands[start:]
	if len(p.Stmts) != 1 || len(cmds) == 0 || len(cmds) > maxSimplePipes+1 || len(w.script.Opaque) != opaques {
		return "", false, false
	}
	var in *feed
	for k := range cmds {
		cmd := &cmds[k]
		away := false // its standard output goes elsewhere: "$(echo ls > f)" is ""
		for _, r := range cmd.Redirs {
			switch {
			case r.Mode == RedirHeredoc, r.Mode == RedirRead && (r.Fd == "" || r.Fd == "0"):
			case r.Fd == "" || r.Fd == "1" || r.Fd == "&":
				away = true
			case r.Fd == "2" && r.Mode != RedirDup:
				// Its standard error goes to a file: not captured.
			default:
				return "", false, false
			}
		}
		if cmd.Context.Pipeline != 0 && cmd.Context.Pipeline != k+1 || (cmd.Context.Pipeline == 0 && len(cmds) > 1) {
			return "", false, false
		}
		if f := w.script.stdins[start+k]; f != nil {
			in = f
		}
		o := w.commandOutput(cmd, in, nil)
		if away {
			o = output{kind: factText, lit: true}
		}
		if o.kind != factText || (!o.lit && k < len(cmds)-1) {
			return "", false, false
		}
		in = &feed{text: o.text, lit: o.lit}
	}
	return strings.TrimRight(in.text, "\n"), in.lit, true
}

// homeWord reports whether wd is a path in the home whose only expansion is
// a leading "~/" or "$HOME/" (> ~/.gitconfig): files match by their last
// path element, which such a word names literally.
func homeWord(wd Word) bool {
	rest, ok := strings.CutPrefix(wd.Raw, "~/")
	if !ok {
		rest, ok = strings.CutPrefix(wd.Raw, "$HOME/")
	}
	return ok && !wd.Glob && rest != "" && !strings.ContainsAny(rest, "$`'\"\\~")
}
