package shellparse

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell variables. The walker follows the values bash gives variables in
// the script itself, so that "x=~; rm -rf "$x"" and "d=/; rm -rf $d" are
// read as the commands bash runs. A variable is known from an assignment of
// a value with no unknown expansion in it (x=~, d=/, "export D=/", "local
// d=/", "declare d=~"), in the order bash runs the script:
//
//   - assignments in a subshell, a command or process substitution, a
//     pipeline stage or a background command do not outlive it;
//   - after an if, a case, an && / || chain or a loop, only the values every
//     way through agree on stay known;
//   - in a loop, a variable the loop assigns anywhere is unknown throughout
//     it (the next pass sees the last pass's value); "for d in / ~" walks
//     its body once per item with d bound to it;
//   - a function body starts with nothing known where it is defined; a call
//     with known arguments is walked from the caller's values and leaves
//     the body's assignments to names it did not declare local
//     (callFunction), any other call forgets everything;
//   - read and mapfile bind what they read from a known input (readin.go),
//     printf -v a known output; otherwise they, getopts, unset, ${x:=v} and
//     arithmetic forget what they may assign; namerefs with a known target
//     are followed (refs.go); eval, source, trap, a computed program name,
//     declare's value-changing attributes (-i, -l, -u …) and IFS
//     assignments stop the tracking for the rest of the script.
//
// A use of a known variable is replaced by its value: quoted, or unquoted
// when the value is one field (no blank, not empty); an unquoted value with
// glob characters makes the word a glob. Any other expansion keeps its source
// text and marks the word Unknown, so that the analysis can refuse to let a
// destructive use of it through.

// maxLoopItems bounds the for-loop items walked one by one.
const maxLoopItems = 8

// maxProbeDepth bounds nested loops walked pass by pass (see loop and
// touchedIn); deeper ones are walked once with nothing known.
const maxProbeDepth = 2

// probeSet records the variables a probed region assigns.
type probeSet struct {
	names map[string]bool
	all   bool
	jumps bool // a break or continue was seen
}

// shellManaged are variables bash itself sets while the script runs; their
// values are never taken from an assignment.
var shellManaged = map[string]bool{
	"PWD": true, "OLDPWD": true, "REPLY": true, "OPTARG": true, "OPTIND": true, "RANDOM": true, "SRANDOM": true,
	"SECONDS": true, "LINENO": true, "BASHPID": true, "FUNCNAME": true, "PIPESTATUS": true, "HISTCMD": true,
	"EPOCHSECONDS": true, "EPOCHREALTIME": true, "MAPFILE": true, "COPROC": true, "_": true, "COLUMNS": true, "LINES": true,
	"GROUPS": true, "DIRSTACK": true, "UID": true, "EUID": true, "PPID": true, "SHLVL": true,
}

func (w *walker) tracking() bool { return !w.script.untracked }

// stopTracking forgets every value and ignores assignments for the rest of
// the script.
func (w *walker) stopTracking() {
	w.script.untracked = true
	w.forgetAll()
}

// runsUnknownCode records that the shell itself runs code not known here
// (a computed program, a function call not walked whose body changes
// directory): it may be in any directory after it.
func (w *walker) runsUnknownCode() {
	w.stopTracking()
	w.unknownDirs()
}

// setVar records that name now holds v (forgotten when v is not known).
// An assignment to a nameref assigns its target (refs.go).
func (w *walker) setVar(name string, v Word) {
	name, ok := w.assignRef(name, v)
	if !ok {
		return
	}
	if name == "IFS" && (v.Unknown || !v.Literal || !w.tracking()) {
		w.stopTracking() // field splitting changes for every later use
		return
	}
	if name == "PATH" {
		w.notePath(v.Value) // dataflow.go: a planted program runs by its bare name
	}
	if _, arr := w.vars[arrayKey(name)]; arr {
		w.forget(name) // a=v sets a[0] of an array: its other elements stay (not followed)
		return
	}
	if !w.tracking() || v.Unknown || shellManaged[name] || strings.HasPrefix(name, "BASH") {
		w.forget(name)
		return
	}
	w.touch(name)
	if w.vars == nil {
		w.vars = make(map[string]Word)
	}
	w.vars[name] = Word{Value: v.Value, Literal: v.Literal}
}

func (w *walker) forget(name string) {
	if t, ok := w.namerefs[name]; ok {
		if t == "" || t == refUnknown {
			w.forgetAll()
			return
		}
		name = w.deref(name)
	}
	w.touch(name)
	delete(w.vars, name)
	for k := range w.vars {
		// The elements of an array read from known input (readin.go).
		if len(k) > len(name) && k[len(name)] == '[' && k[:len(name)] == name {
			delete(w.vars, k)
		}
	}
}

func (w *walker) forgetAll() {
	if w.probe != nil {
		w.probe.all = true
	}
	if w.inCall {
		w.callAll = true
	}
	w.vars = keepDirs(w.vars) // what a command assigns does not move the shell
}

func (w *walker) touch(name string) {
	if w.inCall {
		if w.callSets == nil {
			w.callSets = make(map[string]bool)
		}
		w.callSets[name] = true
	}
	if w.probe != nil {
		if w.probe.names == nil {
			w.probe.names = make(map[string]bool)
		}
		w.probe.names[name] = true
	}
}

// saveVars returns a copy of the known values, for restoreVars.
func (w *walker) saveVars() map[string]Word { return maps.Clone(w.vars) }

func (w *walker) restoreVars(m map[string]Word) { w.vars = m }

// joinVars keeps the values a and b agree on: what is known after either of
// two ways through.
// The directory state is the exception (cwd.go): bash may be in either
// way's directory, and a stack the two ways leave differently is not known.
func joinVars(a, b map[string]Word) map[string]Word {
	var out map[string]Word
	for k, v := range a {
		if k == cwdKey || k == stackKey {
			continue
		}
		if bv, ok := b[k]; ok && bv == v {
			if out == nil {
				out = make(map[string]Word)
			}
			out[k] = v
		}
	}
	av, aok := a[cwdKey]
	bv, bok := b[cwdKey]
	if v, ok := joinDirs(av, aok, bv, bok); ok {
		if out == nil {
			out = make(map[string]Word)
		}
		out[cwdKey] = v
	}
	as, asok := a[stackKey]
	bs, bsok := b[stackKey]
	if asok || bsok {
		if out == nil {
			out = make(map[string]Word)
		}
		out[stackKey] = as
		if as != bs || asok != bsok {
			out[stackKey] = unknownDir
		}
	}
	return out
}

// assignValue is the value an assignment word gives its variable: globs and
// braces are not expanded in an assignment, so only a tilde (or a known
// non-literal value) keeps it from being literal.
func assignValue(v Word, tilde bool) Word {
	if v.Unknown {
		return v
	}
	v.Literal = v.Literal || (v.Glob && !tilde)
	v.Glob = false
	return v
}

// bindAssign applies a standalone assignment (x=v, a+=v, a[i]=v, a=(…)) to
// the known values.
func (w *walker) bindAssign(a *syntax.Assign, out Assign) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	switch {
	case a.Array != nil:
		w.arrayAssign(name, a.Array, a.Append)
	case a.Index != nil:
		n, ok := arithInt(a.Index)
		if !ok || a.Append || a.Value == nil {
			w.forget(name)
			return
		}
		w.setElement(name, n, assignValue(out.Value, wordHasTilde(a.Value)))
	case a.Value == nil:
		w.forget(name)
	case a.Append:
		old, ok := w.vars[name]
		if _, arr := w.vars[arrayKey(name)]; !ok || arr {
			w.forget(name)
			return
		}
		v := assignValue(out.Value, wordHasTilde(a.Value))
		w.setVar(name, Word{Value: old.Value + v.Value, Literal: old.Literal && v.Literal, Unknown: v.Unknown})
	default:
		w.setVar(name, assignValue(out.Value, wordHasTilde(a.Value)))
	}
}

// arrayAssign applies a=(…) or a+=(…): each element word is expanded as a
// command's words are (split, and a glob is not known); an element with an
// explicit index or a value not known leaves the array unknown.
func (w *walker) arrayAssign(name string, arr *syntax.ArrayExpr, app bool) {
	var elems []Word
	if app {
		old, partial, ok := w.arrayElems(name)
		idx, _, _ := w.arrayIndices(name)
		if !ok || partial || len(idx) > 0 && idx[len(idx)-1] != len(idx)-1 {
			w.forget(name) // sparse or not known: where the new ones go is not followed
			return
		}
		elems = old
	}
	for _, el := range arr.Elems {
		if el.Index != nil || el.Value == nil {
			w.forget(name)
			return
		}
		if f, partial, ok := w.argFields(el.Value); ok && !partial {
			elems = append(elems, f...)
			continue
		}
		v := w.convWord(el.Value)
		if vanishes(el.Value, v) {
			continue // an unquoted empty value is no element
		}
		if v.Unknown || v.Glob {
			w.forget(name)
			return
		}
		elems = append(elems, v)
	}
	w.setArrayElems(name, elems)
}

// wordHasTilde reports whether an assignment's value word has a tilde bash
// expands (at its start or after a ":").
func wordHasTilde(sw *syntax.Word) bool {
	if len(sw.Parts) == 0 {
		return false
	}
	l, ok := sw.Parts[0].(*syntax.Lit)
	return ok && (strings.HasPrefix(l.Value, "~") || strings.Contains(l.Value, ":~"))
}

// declFlagsKeepValues reports whether a declare/local/export option word
// leaves assigned values as written: -x, -r, -g, -p, -t, -f and their
// removal with "+". Others (-i, -l, -u, -n, -a, -A, -c …) transform values
// or make names aliases.
func declFlagsKeepValues(opt string) bool {
	if len(opt) < 2 || (opt[0] != '-' && opt[0] != '+') {
		return false
	}
	for i := 1; i < len(opt); i++ {
		if !strings.ContainsRune("xrgptf", rune(opt[i])) {
			return false
		}
	}
	return true
}

// commandVars applies what running the program name with args does to the
// known values, before the command is resolved further.
func (w *walker) commandVars(name string, args []Word) {
	if w.probe != nil && (name == "break" || name == "continue") {
		w.probe.jumps = true
	}
	switch name {
	case "eval", "source", ".", "trap", "enable", "shopt", "fc":
		// They run text as script or change how later assignments
		// behave: no value is known after them (nor the directory after
		// the text ran: see resolve).
		w.stopTracking()
	case "shift", "set":
		// They change the positional parameters a call walk knows.
		if name == "set" && w.setPositional(args) {
			return
		}
		w.forgetAll()
	case "read", "mapfile", "readarray", "getopts", "printf", "unset", "wait":
		if w.isFunction(name) {
			w.forgetAll() // a function of that name runs instead
			return
		}
		if name == "printf" && w.printfAssign(args) {
			return
		}
		// They assign the variables their arguments name.
		for _, a := range args {
			if !a.Literal || strings.HasPrefix(a.Value, "-") {
				w.forgetAll() // an option may name the variable (-v x, -ax)
				return
			}
			if name == "unset" && w.unsetElement(a.Value) {
				continue
			}
			if base, _, _ := strings.Cut(a.Value, "["); syntax.ValidName(base) {
				w.forget(base) // read 'a[1]': the array is not followed
			}
		}
	default:
		if len(w.vars) > 0 && w.isFunction(name) {
			w.forgetAll()
		}
	}
}

// setPositional applies "set -- WORD…" with known words (at most nine, no
// glob): $1 … are those words ("set -- ~; rm -rf "$1"" deletes the home),
// and "$@" the word when there is one. It reports whether args had that
// form.
func (w *walker) setPositional(args []Word) bool {
	if len(args) == 0 || !args[0].Literal || args[0].Value != "--" || len(args) > 10 {
		return false
	}
	words := args[1:]
	for _, a := range words {
		if a.Unknown || a.Glob {
			return false
		}
	}
	for _, n := range [...]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*", "#"} {
		w.forget(n)
	}
	for i, a := range words {
		w.setVar(strconv.Itoa(i+1), a)
	}
	w.setVar("#", Word{Value: strconv.Itoa(len(words)), Literal: true})
	if len(words) == 1 {
		w.setVar("@", words[0])
		w.setVar("*", words[0])
	}
	return true
}

// printfAssign applies "printf -v NAME FORMAT [WORD…]" whose output is
// known (printOutput: a format alone, or %s-style with words): NAME holds
// it. It reports whether args had that form.
func (w *walker) printfAssign(args []Word) bool {
	if len(args) < 3 || !args[0].Literal || args[0].Value != "-v" || !args[1].Literal || !syntax.ValidName(args[1].Value) {
		return false
	}
	for _, a := range args[2:] {
		if a.Unknown || a.Glob {
			return false
		}
	}
	f := printOutput("printf", args[2:])
	if f == nil {
		return false
	}
	w.setVar(args[1].Value, Word{Value: f.text, Literal: f.lit})
	return true
}

// isFunction reports whether the source defines a function called name
// (anywhere: a loop may call a definition that comes later in its body).
func (w *walker) isFunction(name string) bool {
	if w.funcNames == nil {
		w.funcNames = map[string]bool{}
		if w.file != nil {
			syntax.Walk(w.file, func(n syntax.Node) bool {
				if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
					w.funcNames[fd.Name.Value] = true
				}
				return true
			})
		}
	}
	return w.funcNames[name]
}

// touchedIn walks region in probe mode (nothing is recorded in the script)
// and returns the variables it assigns; all reports that it may assign any,
// jumps that it holds a break or continue.
func (w *walker) touchedIn(region func()) (names map[string]bool, all, jumps bool) {
	if w.probeDepth >= maxProbeDepth {
		return nil, true, true
	}
	script, funcs, vars, probe := w.script, w.funcs, w.saveVars(), w.probe
	w.script = &Script{Source: script.Source, div: script.div, untracked: script.untracked, files: script.files}
	w.funcs = new([]funcDef)
	w.probe = &probeSet{}
	w.probeDepth++
	region()
	w.probeDepth--
	p, stopped := w.probe, w.script.untracked
	w.script, w.funcs, w.vars, w.probe = script, funcs, vars, probe
	if stopped {
		w.stopTracking()
	}
	if probe != nil {
		// An enclosing probe sees what this region assigns too.
		probe.all = probe.all || p.all
		probe.jumps = probe.jumps || p.jumps
		for n := range p.names {
			w.touch(n)
		}
	}
	return p.names, p.all, p.jumps
}

func (w *walker) dropTouched(names map[string]bool, all bool) map[string]Word {
	if all {
		w.forgetAll()
	}
	for n := range names {
		delete(w.vars, n)
	}
	return w.saveVars()
}

// paramValue returns the value of a parameter expansion whose result is
// known: a known variable or $HOME (the home, which is set), bare or under
// an operator that yields the value itself when it is set and not empty
// (${x:?}, ${x:-w}, ${x=w} …), the alternative of ${x:+w}, or a trim by a
// literal pattern (${x%/}, ${x#pre}). Bash then runs the command with that
// value, so "rm -rf "${HOME:?}"/*" deletes the home's entries.
func (w *walker) paramValue(p *syntax.ParamExp) (Word, bool) {
	if p.Param == nil || p.NestedParam != nil || p.Flags != nil || p.Width || p.Names != 0 {
		return Word{}, false
	}
	if p.Excl {
		if p.Index != nil {
			return Word{}, false // ${!a[@]}: the indices
		}
		return w.indirectValue(p) // ${!y}: the variable y names (expand.go)
	}
	if p.Index != nil {
		// An array element (expand.go), then an operator on it.
		bare := *p
		bare.Exp, bare.Repl, bare.Slice = nil, nil, nil
		v, ok := w.elementValue(&bare)
		if idx, _ := p.Index.(*syntax.Word); idx != nil && (idx.Lit() == "@" || idx.Lit() == "*") {
			if p.Length || !ok || (p.Exp == nil && p.Repl == nil && p.Slice == nil) {
				return v, ok // ${#a[@]}: the count, from elementValue
			}
			// A slice of elements, an operator on each (expand.go).
			elems, star, partial, ok := w.listParam(p)
			if !ok || partial || (!star && len(elems) > 1) {
				return Word{}, false
			}
			sep := ""
			if ifs := w.ifs(); ifs != "" {
				sep = ifs[:1]
			}
			s, lit := joinWith(elems, sep)
			return Word{Value: s, Literal: lit}, true
		}
		if !ok || !valueOpOf(p) && p.Exp == nil {
			return v, ok
		}
		if !valueOpOf(p) {
			return Word{}, false
		}
		return w.valueOp(p, v)
	}
	if valueOpOf(p) {
		// Case, replacement, substring, length of a known value.
		bare := *p
		bare.Exp, bare.Repl, bare.Slice, bare.Length = nil, nil, nil, false
		v, ok := w.paramValue(&bare)
		if !ok {
			return Word{}, false
		}
		return w.valueOp(p, v)
	}
	bare := *p
	bare.Exp = nil
	if !simpleParam(&bare) {
		return Word{}, false
	}
	pname := p.Param.Value
	if _, ref := w.namerefs[pname]; ref {
		if pname = w.deref(pname); pname == "" {
			return Word{}, false
		}
	}
	v, ok := w.vars[pname]
	if !ok {
		if st, bound := w.choice[p.Param.Value]; bound {
			v, ok := w.choiceValue(p, st)
			if assignsDefault(p.Exp, st) {
				w.assignDefault(p.Param.Value, v, ok)
			}
			return v, ok
		}
		if p.Param.Value != "HOME" || p.Exp == nil {
			return Word{}, false // a bare $HOME keeps its spelling (see expansion)
		}
		v = Word{Value: "$HOME"} // the analysis reads "$HOME" as the home
	}
	if p.Exp == nil {
		return v, true
	}
	if v.Value == "" {
		return Word{}, false // set but empty: the operators tell unset and null apart
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull:
		return v, true
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if p.Exp.Word == nil {
			return Word{}, false
		}
		alt := w.convWord(p.Exp.Word)
		if alt.Unknown || alt.Glob {
			return Word{}, false
		}
		return alt, true
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if p.Exp.Word == nil {
			return v, true
		}
		pat := w.convWord(p.Exp.Word)
		if !pat.Literal {
			return Word{}, false // a glob pattern: which part goes is not modelled
		}
		suffix := p.Exp.Op == syntax.RemSmallSuffix || p.Exp.Op == syntax.RemLargeSuffix
		if !v.Literal {
			// The home has no trailing slash: ${HOME%/} is the home.
			if v.Value == "$HOME" && suffix && pat.Value != "" && strings.Trim(pat.Value, "/") == "" {
				return v, true
			}
			return Word{}, false
		}
		if suffix {
			return Word{Value: strings.TrimSuffix(v.Value, pat.Value), Literal: true}, true
		}
		return Word{Value: strings.TrimPrefix(v.Value, pat.Value), Literal: true}, true
	}
	return Word{}, false
}

// paramState is one way an unknown variable may be when bash expands it.
type paramState uint8

const (
	paramSet   paramState = iota // set to a value that is not known (and not empty)
	paramUnset                   // not set
	paramEmpty                   // set to ""
	paramStates
)

// maxChoiceParams bounds the variables of one command walked in every
// state (3^n walks); further ones stay unknown.
const maxChoiceParams = 3

// choiceOp reports whether op yields a word of the script's own for some
// state of the variable: ${X-w} ${X:-w} ${X=w} ${X:=w} ${X+w} ${X:+w}.
func choiceOp(op syntax.ParExpOperator) bool {
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		return true
	}
	return false
}

// choiceNames returns the variables, not known and not already bound, that
// a command's words expand under a choice operator (nested ones included:
// ${A:-${B:-/}}), so that at most maxChoiceParams are bound at once. $HOME
// is the home and set.
func (w *walker) choiceNames(args []*syntax.Word) []string {
	var names []string
	var scan func(parts []syntax.WordPart)
	scan = func(parts []syntax.WordPart) {
		for _, part := range parts {
			switch p := part.(type) {
			case *syntax.DblQuoted:
				scan(p.Parts)
			case *syntax.ParamExp:
				if p.Exp == nil || p.Param == nil {
					continue
				}
				if p.Exp.Word != nil {
					scan(p.Exp.Word.Parts)
				}
				bare := *p
				bare.Exp = nil
				name := p.Param.Value
				if !choiceOp(p.Exp.Op) || !simpleParam(&bare) || name == "HOME" || len(names)+len(w.choice) >= maxChoiceParams {
					continue
				}
				if _, known := w.vars[name]; known {
					continue
				}
				if _, bound := w.choice[name]; !bound && !contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	for _, a := range args {
		scan(a.Parts)
	}
	return names
}

// paramChoices walks a command (walk) once for each state of each variable
// in names: set to an unknown value, unset, empty. Bash's choice operators
// pick the script's own word in some of them, so each walk records the
// command bash would run then and the verdict is the worst: "rm -rf
// ${D:-/}" is rm -rf / when D is unset or empty, "${X:+sh} -c reboot" runs
// sh when X is set. Identical walks are recorded once.
func (w *walker) paramChoices(names []string, walk func() string) string {
	start, funcs := len(w.script.Commands), w.funcCount()
	outer, entry := w.choice, w.vars
	w.choice = maps.Clone(outer)
	if w.choice == nil {
		w.choice = make(map[string]paramState, len(names))
	}
	n := 1
	for range names {
		n *= int(paramStates)
	}
	ret := ""
	outs := make([]map[string]Word, 0, n)
	// Each walk is another run of the script: one that stopped tracking
	// values (a program named at run time in it) stops it for the rest of
	// that walk only, and for what follows all of them.
	untracked, stopped := w.script.untracked, false
	for k := range n {
		for i, k := 0, k; i < len(names); i, k = i+1, k/int(paramStates) {
			w.choice[names[i]] = paramState(k % int(paramStates))
		}
		w.vars = maps.Clone(entry)
		w.script.untracked = untracked
		if r := walk(); r != "" {
			ret = r
		}
		stopped = stopped || w.script.untracked
		outs = append(outs, w.vars)
	}
	w.script.untracked = stopped
	w.choice = outer
	w.vars = joinAll(outs)
	w.dedupeFrom(start, funcs)
	return ret
}

// choiceValue is what a parameter expansion of a variable bound to state
// st yields, or false when that is not known (a set variable's own value,
// an unknown word, ${X:?} which stops the command). A glob word is the
// pattern bash expands when the result is unquoted ("rm -rf ${X:+~/*}").
func (w *walker) choiceValue(p *syntax.ParamExp, st paramState) (Word, bool) {
	empty := Word{Literal: true}
	word := func() (Word, bool) {
		if p.Exp.Word == nil {
			return empty, true
		}
		v := w.convWord(p.Exp.Word)
		if v.Unknown {
			return Word{}, false
		}
		return v, true
	}
	if p.Exp == nil {
		if st == paramSet {
			return Word{}, false
		}
		return empty, true
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.AssignUnset: // ${X-w}: w only when unset
		switch st {
		case paramUnset:
			return word()
		case paramEmpty:
			return empty, true
		}
	case syntax.DefaultUnsetOrNull, syntax.AssignUnsetOrNull: // ${X:-w}: w when unset or empty
		if st != paramSet {
			return word()
		}
	case syntax.AlternateUnset: // ${X+w}: w when set, even to ""
		if st == paramUnset {
			return empty, true
		}
		return word()
	case syntax.AlternateUnsetOrNull: // ${X:+w}: w when set and not empty
		if st == paramSet {
			return word()
		}
		return empty, true
	case syntax.ErrorUnset:
		if st == paramEmpty {
			return empty, true
		}
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if st != paramSet {
			return empty, true
		}
	}
	return Word{}, false
}

// assignsDefault reports whether bash assigns the word of ${X:=w} or
// ${X=w} to X when X is in state st: ${X=w} when X is unset, ${X:=w} when
// it is unset or empty.
func assignsDefault(e *syntax.Expansion, st paramState) bool {
	if e == nil {
		return false
	}
	switch e.Op {
	case syntax.AssignUnset:
		return st == paramUnset
	case syntax.AssignUnsetOrNull:
		return st != paramSet
	}
	return false
}

// assignDefault records the assignment ${X:=w} makes while a walk binds X
// to a state: X then holds w's value (": ${D:=~}; rm -rf $D" deletes the
// home), or a value not known when w's is not (X leaves its state, so
// later words do not read it as still unset).
func (w *walker) assignDefault(name string, v Word, known bool) {
	if !known {
		v = Word{Unknown: true}
	}
	w.setVar(name, v)
	if !known {
		delete(w.choice, name)
	}
}

// vanishes reports whether bash drops word sw, converted to v: every part
// an unquoted parameter expansion, and the result known and empty.
func vanishes(sw *syntax.Word, v Word) bool {
	if v.Value != "" || v.Unknown {
		return false
	}
	for _, p := range sw.Parts {
		if _, ok := p.(*syntax.ParamExp); !ok {
			return false
		}
	}
	return true
}

// simpleParam reports whether p only names a variable: $x or ${x}.
func simpleParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil && p.NestedParam == nil && p.Flags == nil
}

// homeParam reports whether p is $HOME or ${HOME}, which the analysis reads
// as the user's home directory.
func homeParam(p *syntax.ParamExp) bool {
	return simpleParam(p) && p.Param.Value == "HOME"
}

// joinAll joins the values known at the ends of several ways through.
func joinAll(outs []map[string]Word) map[string]Word {
	if len(outs) == 0 {
		return nil
	}
	j := outs[0]
	for _, o := range outs[1:] {
		j = joinVars(j, o)
	}
	return j
}

// declBind applies one argument of declare/local/export/readonly/typeset to
// the known values: an option that transforms values stops the tracking, a
// name=value sets the name, a bare name of local, declare or typeset makes
// it a new (unknown) variable.
func (w *walker) declBind(variant string, a *syntax.Assign, as Assign, nameref, unref, inFunc bool) {
	local := inFunc && variant != "export" && variant != "readonly"
	switch {
	case a.Naked && a.Name == nil && a.Value != nil:
		opt := as.Value.Value
		if as.Value.Literal && unref && strings.HasPrefix(opt, "+") {
			if opt = strings.ReplaceAll(opt, "n", ""); opt == "+" {
				return // +n: see unref
			}
		}
		if as.Value.Literal && (nameref || variant == "export") && strings.HasPrefix(opt, "-") {
			// declare -n is followed (refs.go), export -n only removes
			// the export attribute: the other letters decide.
			if opt = strings.ReplaceAll(opt, "n", ""); opt == "-" {
				return
			}
		}
		if !as.Value.Literal || !declFlagsKeepValues(opt) {
			w.stopTracking()
		} else if strings.ContainsRune(as.Value.Value, 'g') && nameref && inFunc {
			w.stopTracking() // a global nameref made in a body: not followed
		}
		return
	case nameref && a.Name != nil:
		w.declareRef(a, as, local)
		return
	case unref && a.Name != nil:
		w.unref(a.Name.Value)
		if a.Naked {
			return
		}
	}
	if local && a.Name != nil {
		w.declLocal(a.Name.Value)
	}
	switch {
	case a.Naked:
		if variant != "export" && variant != "readonly" && a.Name != nil {
			w.forget(a.Name.Value)
		}
	default:
		w.bindAssign(a, as)
	}
}

// loop walks a loop whose condition and body are walked by body (one
// pass). Over literal items (for d in / ~: at most maxLoopItems, none a glob
// or unknown, and no break or continue in the body) each pass is walked in
// order with the loop variable bound to its item, which is what bash runs.
// Otherwise three passes are walked: the first from the values known before
// the loop, the second from those the first left, and one from the values
// no pass assigns (every variable the loop assigns unknown), which stands for
// every later pass. After the loop only values that every way agrees on stay
// known.
func (w *walker) loop(name string, items []Word, bindable bool, body func()) {
	_, isRef := w.namerefs[name]
	isRef = isRef && name != ""
	if isRef && !bindable {
		// A for loop over a nameref makes it refer to each item in
		// turn (bound below when the items are known).
		w.namerefs[name] = refUnknown
		w.forgetAll()
	}
	if w.loopDepth >= maxProbeDepth {
		w.forgetAll()
		body()
		w.forgetAll()
		return
	}
	w.loopDepth++
	defer func() { w.loopDepth-- }()
	names, all, jumps := w.touchedIn(func() {
		if name != "" {
			w.forget(name)
		}
		body()
	})
	bind := bindable && !jumps && w.tracking()
	if !bind && len(names) == 0 && !all {
		// The loop assigns nothing: every pass sees the same values.
		if name != "" {
			w.forget(name)
		}
		body()
		return
	}
	defer w.dedupeFrom(len(w.script.Commands), w.funcCount())
	entry := w.saveVars()
	if bind {
		for _, it := range items {
			if isRef {
				w.retarget(name, it)
			} else {
				w.setVar(name, it)
			}
			body()
		}
		return
	}
	if name != "" {
		w.forget(name)
	}
	body()
	d1, ok1 := w.vars[cwdKey]
	body()
	d2, ok2 := w.vars[cwdKey]
	w.vars = maps.Clone(entry)
	general := w.dropTouched(names, all)
	moves := names[cwdKey] || names[stackKey]
	if moves {
		// Any number of passes may have run: bash is where the loop
		// started or where a pass left it. The first two passes give
		// the candidates; when a pass from any of them leaves another,
		// they are not all known (cd .. in a loop).
		d, ok := entry[cwdKey]
		d, ok = joinDirs(d, ok, d1, ok1)
		d, ok = joinDirs(d, ok, d2, ok2)
		w.vars = general
		if ok {
			w.setDirs(d)
		} else {
			w.setDirs(Word{})
		}
		w.setStack("\x02")
		general = w.saveVars()
	}
	if name != "" {
		w.forget(name)
	}
	body()
	before, beforeOK := general[cwdKey]
	w.vars = joinVars(general, w.vars)
	if after, ok := w.vars[cwdKey]; moves && (ok != beforeOK || after != before) {
		w.unknownDirs()
	}
}

// maxCallWalks bounds the function calls walked with their arguments.
const maxCallWalks = 8

// callFunction walks the body of the function fd again for a call with
// known arguments, its positional parameters ($1 … $9) bound to them, so
// that "f() { rm -rf "$1"; }; f ~" is read as the "rm -rf ~" bash runs.
// Calls inside a call walk, and calls past maxCallWalks, are not walked:
// the body's commands were recorded at its definition with nothing known.
//
// The body starts from the values known before the call (before: bash's
// scoping is dynamic, the body reads the caller's variables), with its own
// positional parameters; after it, the names the body assigned and did not
// declare local hold what it left (callEffects). A call not walked leaves
// nothing known (commandVars forgot it).
// It reports whether it walked the call.
func (w *walker) callFunction(fd *syntax.FuncDecl, args []Word, before map[string]Word, c ctx) bool {
	if w.inCall || w.calls >= maxCallWalks || len(args) == 0 || len(args) > 9 || !w.tracking() {
		return false
	}
	for _, a := range args {
		if a.Unknown {
			return false
		}
	}
	w.calls++
	saved := before
	w.vars = make(map[string]Word, len(before)+len(args)+1)
	for k, v := range before {
		if !isNumberLit(k) && k != "@" && k != "*" && k != "#" {
			w.vars[k] = v
		}
	}
	w.vars["FUNCNAME"] = Word{Value: fd.Name.Value, Literal: true, Raw: fd.Name.Value}
	bindPositionals(w.vars, args)
	c.Function = fd.Name.Value
	refs := maps.Clone(w.namerefs)
	w.inCall, w.callSets, w.callLocals, w.callAll = true, nil, nil, false
	w.stmt(fd.Body, c)
	w.inCall = false
	w.vars = w.callEffects(saved, w.vars)
	w.namerefs = refs
	return true
}

// callEffects returns the values known after a walked call: those before
// it (before), with the body's assignments to names it did not declare
// local taken from what the body left (after). Bash's scoping is dynamic,
// and the caller here is the script itself, so they are global.
func (w *walker) callEffects(before, after map[string]Word) map[string]Word {
	if w.callAll {
		return keepDirs(after)
	}
	out := before
	for name := range w.callSets {
		if w.callLocals[name] || name == "FUNCNAME" || isNumberLit(name) || name == "@" || name == "*" || name == "#" {
			continue
		}
		if out == nil {
			out = make(map[string]Word)
		}
		for k := range out {
			if k == name || (len(k) > len(name) && k[len(name)] == '[' && k[:len(name)] == name) {
				delete(out, k)
			}
		}
		for k, v := range after {
			if k == name || (len(k) > len(name) && k[len(name)] == '[' && k[:len(name)] == name) {
				out[k] = v
			}
		}
	}
	return out
}

func (w *walker) funcCount() int {
	if w.funcs == nil {
		return 0
	}
	return len(*w.funcs)
}

// dedupeFrom drops the commands recorded since index start that repeat an
// earlier one of them word for word: a loop walked pass by pass records its
// commands once per pass, and only the passes that differ say something.
// Function bodies are located by command index, so nothing is dropped when
// a function was defined meanwhile.
func (w *walker) dedupeFrom(start, funcs int) {
	if w.funcCount() != funcs {
		return
	}
	cmds := w.script.Commands
	seen := make(map[string]bool)
	out := cmds[:start]
	for _, c := range cmds[start:] {
		k := commandKey(&c)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	w.script.Commands = out
}

// commandKey identifies a command by where it is and the values it runs
// with.
func commandKey(c *Command) string {
	var b strings.Builder
	// One walk's "echo x > sda" after "cd /dev" is not another's after
	// "cd x": the directories are part of the key.
	fmt.Fprintf(&b, "%d:%d:%s:%v:%q:%t", c.Span.Start, c.Span.End, c.Spelling, c.Context, c.Dirs, c.AnyDir)
	for _, a := range c.Args {
		fmt.Fprintf(&b, "\x00%q%t%t%t", a.Value, a.Literal, a.Unknown, a.Glob)
	}
	for _, r := range c.Redirs {
		fmt.Fprintf(&b, "\x01%s%s%q%t", r.Fd, r.Mode, r.Target.Value, r.Target.Unknown)
	}
	for _, e := range c.Env {
		fmt.Fprintf(&b, "\x02%s=%q%t", e.Name, e.Value.Value, e.Value.Unknown)
	}
	return b.String()
}

// forClause walks a for or select loop (see loop).
func (w *walker) forClause(fc *syntax.ForClause, c ctx) string {
	var name string
	var items []Word
	bindable := false
	switch l := fc.Loop.(type) {
	case *syntax.WordIter:
		name = l.Name.Value
		bindable = !fc.Select && len(l.Items) > 0 && len(l.Items) <= maxLoopItems
		for _, it := range l.Items {
			w.walkWord(it, c)
			v := w.convWord(it)
			if v.Unknown || v.Glob || !w.oneField(v.Value) {
				bindable = false
			}
			items = append(items, v)
		}
	case *syntax.CStyleLoop:
		w.arithm(l.Init, c)
		w.arithm(l.Cond, c)
		w.arithm(l.Post, c)
	}
	var r string
	w.loop(name, items, bindable, func() {
		if x := w.stmtsStdin(fc.Do, c); r == "" {
			r = x
		}
	})
	return r
}

// Arithmetic assigns numbers: to the names it assigns (x=1, x+=2, x++), and
// to whatever a variable's value assigns when bash evaluates that value as
// an expression (y='x=5'; (( y ))). So an operand that is a known number
// leaves the values alone; any other variable, or any other word, may
// assign anything and nothing stays known.

// arithOperand applies a word operand of arithmetic to the known values.
func (w *walker) arithOperand(x *syntax.Word) {
	if len(w.vars) == 0 {
		return
	}
	if len(x.Parts) == 1 {
		var name string
		switch p := x.Parts[0].(type) {
		case *syntax.Lit:
			if isNumberLit(p.Value) || p.Value == "@" || p.Value == "*" {
				return // a number, or the subscript of ${a[@]}
			}
			name = p.Value
		case *syntax.ParamExp:
			if simpleParam(p) {
				name = p.Param.Value
			}
		}
		if v, ok := w.vars[name]; ok && isNumberLit(v.Value) {
			return
		}
	}
	w.forgetAll()
}

// arithAssigns forgets the variable an arithmetic assignment assigns.
func (w *walker) arithAssigns(x syntax.ArithmExpr) {
	if wd, ok := x.(*syntax.Word); ok && len(wd.Parts) == 1 {
		if l, ok := wd.Parts[0].(*syntax.Lit); ok && syntax.ValidName(l.Value) {
			w.forget(l.Value)
			return
		}
	}
	w.forgetAll()
}

// isNumberLit reports whether s is a decimal number, as arithmetic reads
// one without evaluating anything else.
func isNumberLit(s string) bool {
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
