package shellparse

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Expansions of known values. Beside a plain $x (vars.go), the walker
// computes what bash makes of a known value under the operators whose
// result depends on the value alone: case changes (${x,,} ${x^^} ${x,}
// ${x^}), replacement with a literal pattern (${x/a/b} ${x//a/b} ${x/#a/b}
// ${x/%a/b}), substrings with number offsets (${x:0:6} ${x: -3}), the
// length ${#x}, indirection through a known name (${!y}), and arrays.
//
// Arrays are known element by element: "a[N]" holds element N, and "a[@]"
// the indices set, in order (a list of numbers; a leading "?" when element
// 0 may hold a value from the environment, as after a[1]=v with a not known
// before). A scalar x is the array of one element x[0]. A word that is one
// list expansion ("${a[@]}", ${a[*]}, "$@", $*) or one unquoted known value
// with IFS characters in it becomes the fields bash makes of it
// (argFields), so "a=(rm -rf /); "${a[@]}"" is the rm -rf / bash runs.
// IFS itself is followed while its value is known (ifs).
//
// Anything else — a pattern with glob characters, an arithmetic offset, a
// value not known — leaves the expansion unknown, as before: the command
// gets approval, never a verdict below what its known parts say (a partial
// array's known elements are still read, beside an opaque partial-expansion
// segment).

// maxArray bounds the elements of one array that are followed.
const maxArray = 32

// ifs returns the field separators unquoted expansions are split with now:
// the known value of IFS, or bash's default.
func (w *walker) ifs() string {
	if v, ok := w.vars["IFS"]; ok {
		return v.Value
	}
	return " \t\n"
}

// splitFields splits the value of an unquoted expansion as bash does with
// the current IFS; nil when it makes no field or more than maxArray.
func (w *walker) splitFields(v string) []string {
	ifs := w.ifs()
	if ifs == "" {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	f := splitIFS(v, ifs)
	if len(f) > maxArray {
		return nil
	}
	return f
}

// oneField reports whether an unquoted expansion of v is one field under
// the current IFS.
func (w *walker) oneField(v string) bool {
	if v == "" {
		return false
	}
	ifs := w.ifs()
	if ifs == " \t\n" {
		return !strings.ContainsAny(v, ifs)
	}
	return ifs == "" || !strings.ContainsAny(v, ifs) && strings.TrimSpace(v) == v
}

// arrayKey is the variable that lists the indices of array name.
func arrayKey(name string) string { return name + "[@]" }

// setArrayElems binds array name to exactly the elements given (index k is
// elems[k]); "" elements included.
func (w *walker) setArrayElems(name string, elems []Word) {
	w.forget(name)
	if len(elems) > maxArray || !w.tracking() || shellManaged[name] || strings.HasPrefix(name, "BASH") || name == "IFS" {
		return
	}
	if _, ref := w.namerefs[name]; ref {
		w.forgetAll()
		return
	}
	w.touch(name)
	if w.vars == nil {
		w.vars = make(map[string]Word)
	}
	idx := make([]string, len(elems))
	for k, e := range elems {
		if e.Unknown {
			w.forget(name)
			return
		}
		idx[k] = strconv.Itoa(k)
		w.vars[name+"["+idx[k]+"]"] = Word{Value: e.Value, Literal: e.Literal}
	}
	w.vars[arrayKey(name)] = Word{Value: strings.Join(idx, " "), Literal: true}
	if len(elems) > 0 {
		w.vars[name] = Word{Value: elems[0].Value, Literal: elems[0].Literal}
	}
}

// setElement applies a[n]=v: the element is known, the others stay as they
// were; an array not known before may hold an environment value at 0.
func (w *walker) setElement(name string, n int, v Word) {
	if !w.tracking() || v.Unknown || n < 0 || n >= maxArray || shellManaged[name] || strings.HasPrefix(name, "BASH") || name == "IFS" {
		w.forget(name)
		return
	}
	if _, ref := w.namerefs[name]; ref {
		w.forgetAll()
		return
	}
	idx, partial, ok := w.arrayIndices(name)
	if !ok {
		idx, partial = nil, true
	}
	w.touch(name)
	if w.vars == nil {
		w.vars = make(map[string]Word)
	}
	if !slices.Contains(idx, n) {
		idx = append(idx, n)
		slices.Sort(idx)
	}
	if _, scalar := w.vars[name]; scalar && !partial {
		if _, arr := w.vars[arrayKey(name)]; !arr {
			w.vars[name+"[0]"] = w.vars[name] // x=a; x[1]=b: x[0] is a
		}
	}
	key := name + "[" + strconv.Itoa(n) + "]"
	w.vars[key] = Word{Value: v.Value, Literal: v.Literal}
	if n == 0 {
		w.vars[name] = w.vars[key]
	}
	s := make([]string, 0, len(idx)+1)
	if partial {
		s = append(s, "?")
	}
	for _, i := range idx {
		s = append(s, strconv.Itoa(i))
	}
	w.vars[arrayKey(name)] = Word{Value: strings.Join(s, " "), Literal: true}
}

// arrayIndices returns the indices of array name that are set, and whether
// element 0 may also hold a value not known; ok is false when the array is
// not known at all. A known scalar is an array of one element.
func (w *walker) arrayIndices(name string) (idx []int, partial, ok bool) {
	if v, has := w.vars[arrayKey(name)]; has {
		for _, f := range strings.Fields(v.Value) {
			if f == "?" {
				partial = true
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil, false, false
			}
			idx = append(idx, n)
		}
		return idx, partial, true
	}
	if _, has := w.vars[name]; has {
		return []int{0}, false, true
	}
	return nil, false, false
}

// arrayElems returns the elements of array name in index order (see
// arrayIndices). A scalar x is [x].
func (w *walker) arrayElems(name string) (elems []Word, partial, ok bool) {
	idx, partial, ok := w.arrayIndices(name)
	if !ok {
		return nil, false, false
	}
	if _, arr := w.vars[arrayKey(name)]; !arr {
		return []Word{w.vars[name]}, false, true
	}
	for _, i := range idx {
		v, has := w.vars[name+"["+strconv.Itoa(i)+"]"]
		if !has {
			return nil, false, false
		}
		elems = append(elems, v)
	}
	return elems, partial, true
}

// positionals returns $1 … $N when their number is known.
func (w *walker) positionals() ([]Word, bool) {
	n, ok := w.vars["#"]
	if !ok {
		return nil, false
	}
	count, err := strconv.Atoi(n.Value)
	if err != nil || count > 9 {
		return nil, false
	}
	out := make([]Word, count)
	for i := range out {
		v, has := w.vars[strconv.Itoa(i+1)]
		if !has {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// bindPositionals sets $1 … $N, $# and, for one word, $@ and $* to args.
func bindPositionals(vars map[string]Word, args []Word) {
	for i, a := range args {
		vars[strconv.Itoa(i+1)] = a
	}
	vars["#"] = Word{Value: strconv.Itoa(len(args)), Literal: true}
	if len(args) == 1 {
		vars["@"], vars["*"] = args[0], args[0]
	}
}

// listParam returns, for ${a[@]} ${a[*]} $@ $* (no operator), the words
// of the list and whether it is the "*" form; ok false for any other
// parameter or a list not known.
func (w *walker) listParam(p *syntax.ParamExp) (elems []Word, star, partial, ok bool) {
	if p.Param == nil || p.Excl || p.Length || p.Names != 0 || p.NestedParam != nil || (p.Exp != nil && !valueOpOf(p)) {
		return nil, false, false, false
	}
	name := p.Param.Value
	if p.Index == nil {
		if name != "@" && name != "*" || p.Slice != nil {
			return nil, false, false, false // ${@:N} counts $0: not modelled
		}
		elems, ok = w.positionals()
		if ok {
			elems, ok = w.eachElem(p, elems)
		}
		return elems, name == "*", false, ok
	}
	iw, isWord := p.Index.(*syntax.Word)
	if !isWord || (iw.Lit() != "@" && iw.Lit() != "*") || !syntax.ValidName(name) {
		return nil, false, false, false
	}
	if _, ref := w.namerefs[name]; ref {
		return nil, false, false, false
	}
	elems, partial, ok = w.arrayElems(name)
	if ok && p.Slice != nil {
		elems, ok = w.sliceElems(name, elems, partial, p.Slice)
	}
	if ok {
		elems, ok = w.eachElem(p, elems)
	}
	return elems, iw.Lit() == "*", partial, ok
}

// sliceElems returns ${a[@]:OFF:LEN} of a known dense array (indices 0 …
// n-1): the elements from OFF (from the end when negative), LEN of them.
func (w *walker) sliceElems(name string, elems []Word, partial bool, sl *syntax.Slice) ([]Word, bool) {
	idx, _, _ := w.arrayIndices(name)
	if partial || len(idx) > 0 && idx[len(idx)-1] != len(idx)-1 {
		return nil, false // sparse: offsets are indices, not positions
	}
	off, ok := arithInt(sl.Offset)
	if !ok {
		return nil, false
	}
	if off < 0 {
		off += len(elems)
		if off < 0 {
			return nil, true
		}
	}
	off = min(off, len(elems))
	end := len(elems)
	if sl.Length != nil {
		n, ok := arithInt(sl.Length)
		if !ok || n < 0 {
			return nil, false // bash: substring expression < 0
		}
		end = min(off+n, len(elems))
	}
	return elems[off:end], true
}

// eachElem applies the replacement or case operator of p to each element,
// as bash does for ${a[@]/x/y} and ${a[*]^^}.
func (w *walker) eachElem(p *syntax.ParamExp, elems []Word) ([]Word, bool) {
	if p.Repl == nil && p.Exp == nil {
		return elems, true
	}
	op := *p
	op.Slice, op.Length = nil, false
	out := make([]Word, len(elems))
	for i, el := range elems {
		v, ok := w.valueOp(&op, el)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// argFields returns the fields bash makes of the command word sw when it
// is one list expansion ("${a[@]}", $*, "$@" …) or one unquoted known
// value or command output that IFS splits into several fields; ok is false
// when sw is not such a word (convWord reads it). partial reports a list
// whose element 0 may also hold a value not known.
func (w *walker) argFields(sw *syntax.Word) (fields []Word, partial, ok bool) {
	if len(sw.Parts) != 1 {
		return nil, false, false
	}
	part, quoted := sw.Parts[0], false
	if dq, isDQ := part.(*syntax.DblQuoted); isDQ {
		if len(dq.Parts) != 1 {
			return nil, false, false
		}
		part, quoted = dq.Parts[0], true
	}
	s, e := offsets(sw, len(w.src))
	raw := w.src[s:e]
	var values []Word
	switch p := part.(type) {
	case *syntax.ParamExp:
		elems, star, part, ok := w.listParam(p)
		if ok {
			partial = part
			switch {
			case quoted && star:
				sep := ""
				if ifs := w.ifs(); ifs != "" {
					sep = ifs[:1]
				}
				v, lit := joinWith(elems, sep)
				return []Word{{Value: v, Literal: lit, Raw: raw}}, partial, true
			case quoted:
				out := make([]Word, len(elems))
				for i, el := range elems {
					out[i] = Word{Value: el.Value, Literal: el.Literal, Raw: raw}
				}
				return out, partial, true
			}
			values = elems
			break
		}
		if quoted || !syntax.ValidName(p.Param.Value) && !isNumberLit(p.Param.Value) {
			return nil, false, false
		}
		v, known := w.paramValue(p)
		if !known || w.oneField(v.Value) || v.Value == "" {
			return nil, false, false
		}
		values = []Word{v}
	case *syntax.CmdSubst:
		o, known := w.substOut[p]
		if quoted || !known || w.oneField(o.Value) || o.Value == "" {
			return nil, false, false
		}
		values = []Word{o}
	default:
		return nil, false, false
	}
	for _, v := range values {
		f := w.splitFields(v.Value)
		if f == nil && v.Value != "" && strings.Trim(v.Value, w.ifs()) != "" {
			return nil, false, false // too many fields
		}
		for _, s := range f {
			wd := Word{Value: s, Literal: v.Literal, Raw: raw}
			if strings.ContainsAny(s, "*?[") {
				wd.Literal, wd.Glob = false, true
			}
			fields = append(fields, wd)
		}
	}
	return fields, partial, true
}

// joinWith joins the values of ws with sep and reports whether all were
// literal.
func joinWith(ws []Word, sep string) (string, bool) {
	var b strings.Builder
	lit := true
	for i, a := range ws {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(a.Value)
		lit = lit && a.Literal
	}
	return b.String(), lit
}

// elementValue returns ${a[N]} (N a number) and ${a[*]} of a known array;
// ${a[@]} only when it is one element (more are several words, which
// argFields reads).
func (w *walker) elementValue(p *syntax.ParamExp) (Word, bool) {
	idx, isWord := p.Index.(*syntax.Word)
	name := p.Param.Value
	if !isWord || !syntax.ValidName(name) {
		return Word{}, false
	}
	if _, ref := w.namerefs[name]; ref {
		return Word{}, false
	}
	switch n := idx.Lit(); {
	case n == "@" || n == "*":
		elems, partial, ok := w.arrayElems(name)
		if !ok || partial {
			return Word{}, false
		}
		if p.Length {
			return Word{Value: strconv.Itoa(len(elems)), Literal: true}, true
		}
		if n == "@" && len(elems) > 1 {
			return Word{}, false // several words: argFields reads them
		}
		sep := ""
		if ifs := w.ifs(); ifs != "" {
			sep = ifs[:1]
		}
		v, lit := joinWith(elems, sep)
		return Word{Value: v, Literal: lit}, true
	case isNumberLit(n) && (n == "0" || n[0] != '0'): // 010 is octal
		if v, ok := w.vars[name+"["+n+"]"]; ok {
			return v, true
		}
		k, _ := strconv.Atoi(n)
		if k == 0 {
			if _, arr := w.vars[arrayKey(name)]; !arr {
				v, ok := w.vars[name] // x[0] of a scalar
				return v, ok
			}
		}
		if idx, partial, ok := w.arrayIndices(name); ok && !slices.Contains(idx, k) && !(partial && k == 0) {
			return Word{Literal: true}, true // not set: empty
		}
	}
	return Word{}, false
}

// indirectValue returns ${!y} (with any operator) when y holds a known
// variable name: the expansion of that variable.
func (w *walker) indirectValue(p *syntax.ParamExp) (Word, bool) {
	if _, ref := w.namerefs[p.Param.Value]; ref {
		return Word{}, false // ${!ref} of a nameref is its target's name
	}
	t, ok := w.vars[p.Param.Value]
	if !ok || !t.Literal {
		return Word{}, false
	}
	target := &syntax.ParamExp{Param: &syntax.Lit{Value: t.Value}, Slice: p.Slice, Repl: p.Repl, Exp: p.Exp, Length: p.Length}
	if name, sub, isElem := strings.Cut(t.Value, "["); isElem {
		n := strings.TrimSuffix(sub, "]")
		if !strings.HasSuffix(sub, "]") || !(isNumberLit(n) || n == "*" || n == "@") {
			return Word{}, false
		}
		target.Param.Value = name
		target.Index = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: n}}}
	}
	if !syntax.ValidName(target.Param.Value) && !isNumberLit(target.Param.Value) {
		return Word{}, false
	}
	return w.paramValue(target)
}

// valueOp applies to the known value v the operator of p that depends on
// the value alone: length, substring, replacement, case change. ok is
// false for any other operator, or one whose operands are not known.
func (w *walker) valueOp(p *syntax.ParamExp, v Word) (Word, bool) {
	if !v.Literal || nonASCII(v.Value) {
		return Word{}, false
	}
	s := v.Value
	switch {
	case p.Length:
		return Word{Value: strconv.Itoa(len(s)), Literal: true}, true
	case p.Slice != nil:
		off, ok := arithInt(p.Slice.Offset)
		if !ok {
			return Word{}, false
		}
		if off < 0 {
			off += len(s)
			if off < 0 {
				return Word{Literal: true}, true
			}
		}
		off = min(off, len(s))
		end := len(s)
		if p.Slice.Length != nil {
			n, ok := arithInt(p.Slice.Length)
			if !ok {
				return Word{}, false
			}
			if n < 0 {
				end = len(s) + n
			} else {
				end = min(off+n, len(s))
			}
			if end < off {
				return Word{}, false // bash: substring expression < 0
			}
		}
		return Word{Value: s[off:end], Literal: true}, true
	case p.Repl != nil:
		pat := Word{Literal: true}
		if p.Repl.Orig != nil {
			pat = w.convWord(p.Repl.Orig)
		}
		with := Word{Literal: true}
		if p.Repl.With != nil {
			with = w.convWord(p.Repl.With)
		}
		if !pat.Literal || with.Unknown || with.Glob {
			return Word{}, false
		}
		anchorLen := 0
		if o := p.Repl.Orig; o != nil && len(o.Parts) > 0 {
			if l, isLit := o.Parts[0].(*syntax.Lit); isLit && pat.Value != "" && (strings.HasPrefix(l.Value, "#") || strings.HasPrefix(l.Value, "%")) {
				anchorLen = 1
			}
		}
		if strings.ContainsAny(with.Value, "&\\") {
			// bash 5.2's patsub_replacement: an unquoted "&" is the
			// matched text, "\&" a literal one.
			r, ok := patsubWith(p.Repl.With, pat.Value[anchorLen:])
			if !ok {
				return Word{}, false
			}
			with.Value = r
		}
		anchor := ""
		if o := p.Repl.Orig; o != nil && len(o.Parts) > 0 {
			if l, isLit := o.Parts[0].(*syntax.Lit); isLit && pat.Value != "" && (strings.HasPrefix(l.Value, "#") || strings.HasPrefix(l.Value, "%")) {
				anchor, pat.Value = l.Value[:1], pat.Value[1:]
			}
		}
		out := Word{Literal: with.Literal}
		switch {
		case anchor == "#" && strings.HasPrefix(s, pat.Value):
			out.Value = with.Value + s[len(pat.Value):]
		case anchor == "%" && strings.HasSuffix(s, pat.Value):
			out.Value = s[:len(s)-len(pat.Value)] + with.Value
		case anchor != "" || pat.Value == "":
			out = v
		case p.Repl.All:
			out.Value = strings.ReplaceAll(s, pat.Value, with.Value)
		default:
			out.Value = strings.Replace(s, pat.Value, with.Value, 1)
		}
		return out, true
	case p.Exp != nil:
		if p.Exp.Word != nil && p.Exp.Word.Lit() != "" && p.Exp.Word.Lit() != "?" {
			return Word{}, false // a pattern choosing the letters changed
		}
		switch p.Exp.Op {
		case syntax.UpperAll:
			return Word{Value: strings.ToUpper(s), Literal: true}, true
		case syntax.LowerAll:
			return Word{Value: strings.ToLower(s), Literal: true}, true
		case syntax.UpperFirst:
			if s == "" {
				return v, true
			}
			return Word{Value: strings.ToUpper(s[:1]) + s[1:], Literal: true}, true
		case syntax.LowerFirst:
			if s == "" {
				return v, true
			}
			return Word{Value: strings.ToLower(s[:1]) + s[1:], Literal: true}, true
		}
	}
	return Word{}, false
}

// valueOpOf reports whether p has an operator valueOp computes.
func valueOpOf(p *syntax.ParamExp) bool {
	if p.Length || p.Slice != nil || p.Repl != nil {
		return true
	}
	if p.Exp == nil {
		return false
	}
	switch p.Exp.Op {
	case syntax.UpperAll, syntax.LowerAll, syntax.UpperFirst, syntax.LowerFirst:
		return true
	}
	return false
}

// arithInt returns the value of an arithmetic operand that is a number
// literal, or minus one.
func arithInt(x syntax.ArithmExpr) (int, bool) {
	neg := false
	if u, ok := x.(*syntax.UnaryArithm); ok && u.Op == syntax.Minus && !u.Post {
		neg, x = true, u.X
	}
	wd, ok := x.(*syntax.Word)
	if !ok || !isNumberLit(wd.Lit()) || (len(wd.Lit()) > 1 && wd.Lit()[0] == '0') {
		return 0, false // 010 is octal, 0x10 hexadecimal: not read
	}
	n, err := strconv.Atoi(wd.Lit())
	if err != nil || n > 1<<20 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// patsubWith returns the replacement text of ${x/PAT/WITH} under bash 5.2's
// patsub_replacement, when WITH is unquoted literal text: "&" is the
// matched text, a backslash quotes the next character. Other words are not
// modelled.
func patsubWith(with *syntax.Word, match string) (string, bool) {
	var b strings.Builder
	for _, part := range with.Parts {
		l, ok := part.(*syntax.Lit)
		if !ok {
			return "", false
		}
		for i := 0; i < len(l.Value); i++ {
			switch c := l.Value[i]; {
			case c == '\\' && i+1 < len(l.Value):
				i++
				b.WriteByte(l.Value[i])
			case c == '&':
				b.WriteString(match)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String(), true
}

// unsetElement applies "unset 'a[N]'" to a known array: element N goes. It
// reports whether arg had that form.
func (w *walker) unsetElement(arg string) bool {
	name, sub, ok := strings.Cut(arg, "[")
	n, isNum := strings.CutSuffix(sub, "]")
	if !ok || !isNum || !syntax.ValidName(name) || !isNumberLit(n) || (len(n) > 1 && n[0] == '0') {
		return false
	}
	idx, partial, known := w.arrayIndices(name)
	if !known || partial {
		return false
	}
	k, _ := strconv.Atoi(n)
	if _, arr := w.vars[arrayKey(name)]; !arr {
		// A scalar: x[0] is x.
		if k == 0 {
			w.forget(name)
			w.setArrayElems(name, nil)
		}
		return true
	}
	w.touch(name)
	delete(w.vars, name+"["+n+"]")
	if k == 0 {
		delete(w.vars, name)
	}
	rest := make([]string, 0, len(idx))
	for _, i := range idx {
		if i != k {
			rest = append(rest, strconv.Itoa(i))
		}
	}
	w.vars[arrayKey(name)] = Word{Value: strings.Join(rest, " "), Literal: true}
	return true
}
