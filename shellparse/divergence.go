package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Parser divergence. The analysis trusts mvdan.cc/sh to read a command as
// bash does, and in a few places it does not, or cannot know what bash will
// do with text it read as data:
//
//   - Arithmetic evaluation. bash expands array subscripts met while it
//     evaluates arithmetic — in (( )), $(( )), $[ ], for (( )), let,
//     [[ A -eq B ]] and the other numeric tests, test/[[ -v ]], ${x:off:len},
//     ${a[i]}, a[i]=v, declare -i and names such as 'a[i]' given to
//     declare, printf -v, read, unset … — and a variable named there is
//     itself evaluated as arithmetic. So x='a[$(reboot)]'; [[ $x -eq 0 ]]
//     runs reboot, although every word of it is, to a parser, a quoted
//     string. A script with both an arithmetic context and literal text that
//     holds a command-substitution opener ("$(", a backquote, an escape
//     that makes one, or a "$" that ends a literal run and could start one
//     when joined) is a divergence.
//   - let. bash splits let's arguments into ordinary words, so
//     "let x=1|y" is a pipeline that runs y and "let x=1>f" writes f; mvdan
//     reads each as one arithmetic expression. Unquoted & | < > ; ( ) in a
//     let argument are a divergence.
//   - An array assignment followed directly by a word character:
//     "a=(1)#; reboot" is a comment to mvdan and runs reboot in bash.
//   - A comment ending in a backslash: mvdan continues the comment onto the
//     next line ("x=1 #\<newline>reboot" hides reboot); bash does not.
//   - $'…' text holding a NUL: bash ends the string there ($'reboot\0x'
//     runs reboot), mvdan keeps the rest.
//
// Each is recorded as an opaque segment of kind OpaqueDivergence, so the
// analysis fails closed (a person must look) instead of guessing.

// divergence is the script-wide state of the arithmetic check, shared by the
// walkers of payloads so that a payload's arithmetic meets the top level's
// strings and the other way round.
type divergence struct {
	arith    bool // an arithmetic-evaluating context was seen
	code     bool // literal text holding a substitution opener was seen
	codeText string
	codeSpan Span
	reported bool
}

// markArith records that the script evaluates arithmetic somewhere.
func (w *walker) markArith() {
	w.script.div.arith = true
	w.reportArith()
}

// reportArith adds the divergence once both halves were seen.
func (w *walker) reportArith() {
	d := &w.script.div
	if d.arith && d.code && !d.reported {
		d.reported = true
		w.script.Opaque = append(w.script.Opaque, Opaque{Kind: OpaqueDivergence, Text: d.codeText, Span: d.codeSpan})
	}
}

// divergent records a divergence at node n.
func (w *walker) divergent(n syntax.Node) {
	w.addOpaque(OpaqueDivergence, "", w.text(n), w.span(n))
}

// scanLiterals looks for a command-substitution opener in the literal runs
// of sw: consecutive literal parts after quote removal, as bash would hand
// them to arithmetic evaluation.
func (w *walker) scanLiterals(sw *syntax.Word) {
	if !w.codeChars {
		return // no "$", backquote or backslash anywhere in the source
	}
	if w.script.div.code {
		if nulInDollarQuote(sw) {
			w.divergent(sw)
		}
		return
	}
	if !mayHideCode(sw.Parts) {
		return // the common case: no "$", backquote or backslash in any literal
	}
	var run strings.Builder
	hit := false
	flush := func(endOfRun bool) {
		s := run.String()
		if strings.Contains(s, "$(") || strings.Contains(s, "`") || (endOfRun && strings.HasSuffix(s, "$")) {
			hit = true
		}
		run.Reset()
	}
	lits := func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				run.WriteString(unescapeUnquoted(p.Value))
			case *syntax.SglQuoted:
				if p.Dollar {
					v := ansiC(p.Value)
					if strings.IndexByte(v, 0) >= 0 {
						w.divergent(sw)
					}
					run.WriteString(v)
				} else {
					run.WriteString(p.Value)
				}
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					if l, ok := q.(*syntax.Lit); ok {
						dqUnescape(&run, l.Value)
					} else {
						flush(true)
					}
				}
			default:
				flush(true)
			}
		}
	}
	lits(sw.Parts)
	flush(true)
	if hit {
		d := &w.script.div
		d.code, d.codeText, d.codeSpan = true, w.text(sw), w.span(sw)
		w.reportArith()
	}
}

// mayHideCode reports whether any literal part holds a character that could
// make (or, through an escape, spell) a substitution opener.
func mayHideCode(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hasCodeChar(p.Value) {
				return true
			}
		case *syntax.SglQuoted:
			if hasCodeChar(p.Value) {
				return true
			}
		case *syntax.DblQuoted:
			if mayHideCode(p.Parts) {
				return true
			}
		}
	}
	return false
}

// hasCodeChar reports whether s holds "$", a backquote or a backslash (a
// byte loop: strings.ContainsAny builds a set on every call, and this runs
// for every word of every command).
func hasCodeChar(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '$' || c == '`' || c == '\\' {
			return true
		}
	}
	return false
}

// nulInDollarQuote reports whether a $'…' part of sw decodes to a NUL.
func nulInDollarQuote(sw *syntax.Word) bool {
	for _, p := range sw.Parts {
		if q, ok := p.(*syntax.SglQuoted); ok && q.Dollar && strings.IndexByte(ansiC(q.Value), 0) >= 0 {
			return true
		}
	}
	return false
}

// unescapeUnquoted removes the backslashes bash removes from an unquoted
// literal.
func unescapeUnquoted(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// arithBuiltins take variable names, which bash evaluates as arithmetic
// when they carry a subscript ('a[i]'), or options that make it evaluate
// values (declare -i, test -v).
var arithBuiltins = map[string]bool{
	"declare": true, "typeset": true, "local": true, "export": true, "readonly": true,
	"printf": true, "read": true, "unset": true, "mapfile": true, "readarray": true,
	"getopts": true, "wait": true, "test": true, "[": true, "let": true,
}

// commandEvaluatesArith reports whether the simple command c makes bash
// evaluate arithmetic.
func commandEvaluatesArith(c *Command) bool {
	if !arithBuiltins[c.Program] {
		return false
	}
	if c.Program == "let" {
		return true
	}
	for _, a := range c.Args {
		v := a.Value
		switch {
		case strings.Contains(v, "[") && !numberSubscript(v):
			return true
		case (c.Program == "test" || c.Program == "[") && (v == "-v" || v == "-R"):
			return true
		case c.Program != "test" && c.Program != "[" && len(v) > 1 && v[0] == '-' && strings.ContainsRune(v, 'i'):
			return true // declare -i, local -ai, …
		}
	}
	return false
}

// numberSubscript reports whether v is NAME[N] with N a decimal number:
// evaluating that subscript runs nothing and assigns nothing.
func numberSubscript(v string) bool {
	name, sub, ok := strings.Cut(v, "[")
	n, closed := strings.CutSuffix(sub, "]")
	return ok && closed && syntax.ValidName(name) && isNumberLit(n)
}

// testEvaluatesArith reports whether a [[ ]] operator evaluates its operands
// as arithmetic.
func testEvaluatesArith(x syntax.TestExpr) bool {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			return true
		}
	case *syntax.UnaryTest:
		return x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar
	}
	return false
}

// letOperators reports whether the source of a let argument holds a
// character that bash, which reads let's arguments as words, takes for an
// operator: & | < > ; ( ) outside quotes.
func letOperators(src string) bool {
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			// An expansion: mvdan and bash agree on where it ends; skip
			// to its matching bracket.
			i = skipBracket(src, i+1)
		case strings.IndexByte("&|<>;()", c) >= 0:
			return true
		}
	}
	return false
}

// skipBracket returns the index of the bracket closing the one at i.
func skipBracket(s string, i int) int {
	open, closer := s[i], byte(')')
	if open == '{' {
		closer = '}'
	}
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// arrayGlued reports whether the array assignment ending at end is followed
// directly by a character that bash would read as part of the same word
// (a comment to mvdan, a word to bash).
func arrayGlued(src string, end int) bool {
	return end < len(src) && strings.IndexByte(" \t\n;&|)<>", src[end]) < 0
}

// continuedComment reports whether src holds a comment that mvdan reads as
// continuing onto the next line through a trailing backslash, which bash
// does not. It parses again keeping comments, so it costs a second parse,
// paid only when src has both a "#" and a backslash-newline.
func continuedComment(src string) bool {
	if !strings.Contains(src, "\\\n") || strings.IndexByte(src, '#') < 0 {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return true
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && strings.Contains(c.Text, "\\\n") {
			// Only a comment with source after it can have hidden some.
			if end := int(c.End().Offset()); end < len(src) && strings.TrimSpace(src[end:]) != "" {
				found = true
			}
		}
		return !found
	})
	return found
}
