package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Text bash reads again. Some constructs hand bash a string that it parses
// as shell source at run time, after mvdan.cc/sh has read the same text as
// inert data. Where that text is known, it is walked as a nested source, so
// that its commands are rated like any others; where bash's reading may
// differ from mvdan's, the construct is also a divergence (divergence.go).
//
//   - Quotes in a ${…} operand inside double quotes. For the operators
//     - :- = := + :+ bash keeps a single quote in a double-quoted operand as
//     a literal character and expands what it encloses: "${x:-'$(reboot)'}"
//     runs reboot and yields the quote characters around its output. mvdan
//     reads '…' there as quoting. The same holds in a here-document body.
//     (bash 5.2 reads ' as quoting in the operands of ? :? and of the
//     pattern operators # % / ^ , — there the two agree.)
//   - A quoted compound assignment given to a declaration builtin with an
//     array attribute: declare -a 'x=($(reboot))' (typeset, local,
//     readonly, export likewise) re-parses the argument as x=(…) and expands
//     it, as does declare -a x='(…)'.
//   - Indirection and prompt expansion of a known value: ${!x} with
//     x='a[$(reboot)]' expands ${a[$(reboot)]}, and ${x@P} expands the
//     value like double-quoted text. Both stay divergences (arithmetic,
//     prompt escapes), and the known text is walked too. So is the known
//     target of a nameref (declare -n r='a[$(reboot)]', or r='a[…]' after
//     declare -n r), expanded at each use of the name.
//   - A script read from a process substitution that prints known text
//     (source <(echo reboot), bash <(echo reboot); feed.go's procScript).
//   - mapfile -C CALLBACK: bash evaluates "CALLBACK INDEX LINE" as a
//     command every -c lines.
//   - Prompts. bash runs PROMPT_COMMAND (a string, or each element of an
//     array) before it shows a prompt, and expands PS0, PS1, PS2 and PS4
//     like the content of a double-quoted word (promptvars) when it shows
//     them: PS4='$(reboot)'; set -x; ls runs reboot. The prompt's backslash
//     escapes are decoded first, so \$ or an octal escape can make a "$"
//     or a backquote that starts an expansion: those are decoded for the
//     walk (promptDecode), and the value is also a divergence.

// reread walks text, which bash parses as source at run time, as a nested
// source reported at span at. It reports whether text parsed; the caller
// decides what an unreadable text means.
func (w *walker) reread(text string, at Span, c ctx) bool {
	sp := w.outer
	if sp == nil {
		sp = &at
	}
	if c.Payload+1 > w.maxDepth {
		w.addOpaque(OpaqueDepth, "", text, *sp)
		return true
	}
	f, cr, err := parseBash(text)
	if err == nil {
		err = checkNesting(text)
	}
	if err != nil {
		return false
	}
	sub := &walker{src: text, script: w.script, maxDepth: w.maxDepth, outer: sp, funcs: w.funcs, cr: cr, file: f, codeChars: hasCodeChar(text)}
	if sub.funcs == nil {
		w.funcs = new([]funcDef)
		sub.funcs = w.funcs
	}
	// The shell reads the text where it is (cwd.go).
	sub.vars = keepDirs(w.vars)
	if v, ok := w.vars["PWD"]; ok {
		if sub.vars == nil {
			sub.vars = map[string]Word{}
		}
		sub.vars["PWD"] = v
	}
	c.Payload++
	c.dq = false
	sub.stmts(f.Stmts, c)
	return true
}

// quotedOperand handles the operand of ${x OP word} met inside double
// quotes (or a here-document body): for the operators whose operand bash
// expands with single quotes literal, a single-quoted part holding "$", a
// backquote or a backslash is a divergence, and the operand is walked again
// as bash reads it: as the content of a double-quoted word.
func (w *walker) quotedOperand(p *syntax.ParamExp, c ctx) {
	switch p.Exp.Op {
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.DefaultUnset,
		syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
	default:
		return
	}
	if p.Exp.Word == nil {
		return
	}
	for _, q := range p.Exp.Word.Parts {
		if sq, ok := q.(*syntax.SglQuoted); ok && !sq.Dollar && hasCodeChar(sq.Value) {
			w.divergent(p)
			w.reread(`: "`+w.text(p.Exp.Word)+`"`, w.span(p), c)
			return
		}
	}
}

// declOptions reports whether the options among a declaration builtin's
// arguments may give the array attribute (-a, -A), under which bash
// re-parses a quoted name=(…) argument, and whether they may give the
// nameref attribute (-n), under which expanding the name resolves its target
// and evaluates the target's subscript as arithmetic. An option word that is
// not literal may give either.
func (w *walker) declOptions(d *syntax.DeclClause) (array, nameref bool) {
	if d.Variant.Value == "nameref" {
		nameref = true
	}
	for _, a := range d.Args {
		if !a.Naked || a.Name != nil || a.Value == nil {
			continue
		}
		v := w.convWord(a.Value)
		switch {
		case !v.Literal:
			return true, true
		case strings.HasPrefix(v.Value, "-"):
			array = array || strings.ContainsAny(v.Value, "aA")
			nameref = nameref || strings.ContainsRune(v.Value, 'n')
		}
	}
	return array, nameref
}

// declCompound handles one argument of a declaration builtin that may give
// the array attribute: a literal argument NAME=(…) / NAME+=(…) that mvdan
// read as a string is walked as the compound assignment bash makes of it; an
// argument whose value is only known at run time and may begin with "(" is
// a divergence.
func (w *walker) declCompound(a *syntax.Assign, c ctx) {
	if a.Array != nil || a.Value == nil {
		return // a compound assignment mvdan parsed itself, or a bare name
	}
	v := w.convWord(a.Value)
	var text string
	switch {
	case a.Naked && a.Name == nil: // 'x=(…)': name and value in one word
		if v.Literal && (strings.HasPrefix(v.Value, "-") || strings.HasPrefix(v.Value, "+")) {
			return // an option
		}
		if !v.Literal {
			w.divergent(a)
			return
		}
		i := strings.IndexByte(v.Value, '=')
		if i < 0 || !strings.HasPrefix(v.Value[i+1:], "(") {
			return
		}
		text = v.Value
	case a.Name != nil:
		if !v.Literal {
			if mayStartParen(a.Value) {
				w.divergent(a)
			}
			return
		}
		if !strings.HasPrefix(v.Value, "(") {
			return
		}
		eq := "="
		if a.Append {
			eq = "+="
		}
		text = a.Name.Value + eq + v.Value
	default:
		return
	}
	if !w.reread(text, w.span(a), c) {
		w.divergent(a)
	}
}

// mayStartParen reports whether the value of sw may begin with "(" once
// expanded: its first part is an expansion, or a literal that does.
func mayStartParen(sw *syntax.Word) bool {
	for _, p := range sw.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if p.Value == "" {
				continue
			}
			return p.Value[0] == '(' || p.Value[0] == '\\'
		case *syntax.SglQuoted:
			if p.Value == "" {
				continue
			}
			return p.Value[0] == '(' || p.Dollar
		case *syntax.DblQuoted:
			if len(p.Parts) == 0 {
				continue
			}
			return mayStartParen(&syntax.Word{Parts: p.Parts})
		default:
			return true
		}
	}
	return false
}

// mapfileCallback handles mapfile/readarray -C CALLBACK at word i: bash
// evaluates "CALLBACK INDEX LINE" as shell source, so a literal callback is
// walked as a payload given run-time arguments, and one only known at run
// time (or an option word that may be -C) is an opaque payload.
func (w *walker) mapfileCallback(name string, cs *cmdState, i int, c ctx) {
	for k := i + 1; k < len(cs.words); k++ {
		wd := cs.words[k]
		if !wd.Literal {
			w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return
		}
		if wd.Value == "--" || len(wd.Value) < 2 || wd.Value[0] != '-' {
			return // the options end: the array name
		}
		for j := 1; j < len(wd.Value); j++ {
			if !strings.ContainsRune("dnOsucC", rune(wd.Value[j])) {
				continue // -t, or an option bash rejects
			}
			// The option's value is the rest of the word or the next word.
			val, at := wd.Value[j+1:], k
			if val == "" {
				if k+1 >= len(cs.words) {
					return
				}
				k++
				at = k
				if !cs.words[k].Literal {
					w.addOpaque(OpaquePayload, name, w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
					return
				}
				val = cs.words[k].Value
			}
			if wd.Value[j] == 'C' {
				cb := *cs
				cb.extra = true // the index and the line
				cb.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: name, Args: []string{"-C"}})
				w.payload(name, val, cs.nodes[at], cs.nodes[at], &cb, c)
			}
			break
		}
	}
}

// promptText handles an assignment of a known value to a prompt variable
// (see the comment at the top of the file).
func (w *walker) promptText(name string, v Word, a *syntax.Assign, c ctx) {
	var text string
	switch name {
	case "PROMPT_COMMAND":
		text = v.Value
	case "PS0", "PS1", "PS2", "PS4":
		text = `: "` + promptDecode(v.Value) + `"`
		if promptEscapeDollar(v.Value) {
			w.divergent(a)
		}
	default:
		return
	}
	if !v.Literal {
		w.addOpaque(OpaquePayload, name, w.text(a), w.span(a))
		return
	}
	if !w.reread(text, w.span(a), c) {
		w.addOpaque(OpaquePayload, name, w.text(a), w.span(a))
	}
}

// promptEscapeDollar reports whether a prompt string holds a backslash
// escape that decodes to "$" (\$ for a user other than root, an octal
// escape) followed by a character that could make it start an expansion.
func promptEscapeDollar(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		switch c := s[i+1]; {
		case c >= '0' && c <= '7':
			return true
		case c == '$':
			if i+2 < len(s) && s[i+2] != ' ' && s[i+2] != '\\' {
				return true
			}
		}
		i++
	}
	return false
}

// promptDecode decodes the prompt escapes of s that can make a "$" or a
// backquote: an octal escape \NNN, \\ (a backslash) and \$ as a user other
// than root sees it. Other escapes stay as written; they expand to text
// (user, host, time …).
func promptDecode(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case c == '$' || c == '\\':
			b.WriteByte(c)
			i++
		case c >= '0' && c <= '7':
			n, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
