package shellparse

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// offsets returns the byte range of n in a source of length max, clamped so
// that a malformed position can never slice out of bounds.
func offsets(n syntax.Node, max int) (int, int) {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s > max {
		s = max
	}
	if e > max {
		e = max
	}
	if e < s {
		e = s
	}
	return s, e
}

// wordState accumulates the facts about one word while its parts are read.
type wordState struct {
	b       strings.Builder
	literal bool
	glob    bool
	unknown bool // an expansion's value is not known
	// brace tracks a possible unquoted brace expansion: 1 after "{", 2 after
	// a following "," or "..".
	brace int
	// alone reports that the word has one part: an unquoted expansion
	// that is the whole word is trimmed by field splitting.
	alone bool
}

// convWord converts a syntax word to a Word: quote removal for literal parts,
// source text for expansions.
func (w *walker) convWord(sw *syntax.Word) Word {
	s, e := offsets(sw, len(w.src))
	raw := w.src[s:e]
	// Fast path: one unquoted literal without escapes or specials, the
	// overwhelmingly common case, costs no allocation.
	if len(sw.Parts) == 1 && w.cr == 0 {
		if l, ok := sw.Parts[0].(*syntax.Lit); ok && plainLit(l.Value) && !assignTilde(l.Value) {
			return Word{Value: l.Value, Literal: true, Raw: raw}
		}
	}
	st := wordState{literal: true, alone: len(sw.Parts) == 1}
	for i, p := range sw.Parts {
		w.convPart(&st, p, i == 0)
	}
	if st.brace == 2 {
		st.literal, st.glob = false, true
	}
	if l, ok := sw.Parts[0].(*syntax.Lit); ok && assignTilde(l.Value) {
		st.literal = false
	}
	v := st.b.String()
	if w.cr != 0 {
		v = strings.ReplaceAll(v, string(rune(w.cr)), "\r")
	}
	if l, ok := sw.Parts[0].(*syntax.Lit); ok && len(l.Value) >= 2 && l.Value[0] == '~' && (l.Value[1] == '+' || l.Value[1] == '-') &&
		(len(l.Value) == 2 || l.Value[2] == '/') {
		// ~+ and ~- are $PWD and $OLDPWD (cwd.go), not the home.
		d, known := w.vars["PWD"]
		if l.Value[1] == '-' {
			d, known = w.vars["OLDPWD"]
		}
		if !known {
			return Word{Value: v, Raw: raw, Glob: st.glob, Unknown: true}
		}
		v = d.Value + v[2:]
		st.literal = st.literal && d.Literal
	}
	return Word{Value: v, Literal: st.literal, Raw: raw, Glob: st.glob, Unknown: st.unknown}
}

// assignTilde reports whether an unquoted literal that looks like an
// assignment ("of=~/x", "P=a:~/bin") has a tilde bash expands: after the
// first "=" or after a ":" following it.
func assignTilde(v string) bool {
	eq := strings.IndexByte(v, '=')
	if eq <= 0 || !syntax.ValidName(v[:eq]) {
		return false
	}
	rest := v[eq+1:]
	return strings.HasPrefix(rest, "~") || strings.Contains(rest, ":~")
}

// plainLit reports whether an unquoted literal needs no processing: no
// backslash, no glob or brace characters, no leading tilde.
func plainLit(v string) bool {
	if v == "" || v[0] == '~' {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\', '*', '?', '[', '{':
			return false
		}
	}
	return true
}

func (w *walker) convPart(st *wordState, p syntax.WordPart, first bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		v := p.Value
		if first && strings.HasPrefix(v, "~") {
			st.literal = false // tilde expansion
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch c {
			case '\\':
				if i+1 == len(v) {
					st.b.WriteByte(c) // a final backslash stays
					continue
				}
				i++
				if v[i] != '\n' { // backslash-newline is a line continuation
					st.b.WriteByte(v[i])
				}
				continue
			case '*', '?':
				st.glob, st.literal = true, false
			case '[':
				// A bracket expression needs its closing ']': a lone
				// "[" (the test command) is literal.
				if strings.IndexByte(v[i+1:], ']') >= 0 {
					st.glob, st.literal = true, false
				}
			case '{':
				if st.brace == 0 {
					st.brace = 1
				}
			case ',':
				if st.brace == 1 {
					st.brace = 2
				}
			case '.':
				if st.brace == 1 && i+1 < len(v) && v[i+1] == '.' {
					st.brace = 2
				}
			}
			st.b.WriteByte(c)
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			st.b.WriteString(ansiC(p.Value))
		} else {
			st.b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				dqUnescape(&st.b, l.Value)
				continue
			}
			w.expansion(st, q, true)
		}
	default:
		w.expansion(st, p, false)
	}
}

// expansion writes a part that bash expands: a known variable's value (see
// vars.go), else the source text, the word then being Unknown unless the
// part is $HOME. Extended globs are globs.
func (w *walker) expansion(st *wordState, p syntax.WordPart, quoted bool) {
	if pe, ok := p.(*syntax.ParamExp); ok {
		// An unquoted value that is empty adds nothing to the word.
		v, ok := w.paramValue(pe)
		if ok && !quoted && !w.oneField(v.Value) && v.Value != "" {
			// Unquoted, the value is split by IFS: one field is
			// that field ("reboot\n" from mapfile is reboot).
			if f := w.splitFields(v.Value); len(f) == 1 {
				v.Value = f[0]
			}
		}
		if ok && (quoted || w.oneField(v.Value) || v.Value == "") {
			st.b.WriteString(v.Value)
			st.literal = st.literal && v.Literal
			if !quoted && strings.ContainsAny(v.Value, "*?[") {
				st.glob, st.literal = true, false
			}
			return
		}
		if !homeParam(pe) {
			st.unknown = true
		}
	} else if _, ok := p.(*syntax.ExtGlob); ok {
		st.glob = true
	} else if cs, ok := p.(*syntax.CmdSubst); ok && w.knownSubst(st, cs, quoted) {
		return
	} else {
		st.unknown = true
	}
	st.literal = false
	s, e := offsets(p, len(w.src))
	st.b.WriteString(w.src[s:e])
}

// knownSubst writes the known output of a command substitution
// (dataflow.go), as bash splits it: quoted it is one word, unquoted it must
// be one field (glob characters in it make the word a glob). It reports
// whether it did.
func (w *walker) knownSubst(st *wordState, cs *syntax.CmdSubst, quoted bool) bool {
	o, ok := w.substOut[cs]
	if !ok {
		return false
	}
	out := o.Value
	st.literal = st.literal && o.Literal
	if !quoted {
		// Unquoted, the output is split at blanks: it must stay one
		// field of the word ("$(echo) rm" runs rm; "$(echo a b)" is two
		// words), or be empty beside other text ("$(echo x >f)reboot").
		f := w.splitFields(out)
		switch {
		case (w.ifs() == "" || !strings.ContainsAny(out, w.ifs())) && (out != "" || !st.alone):
		case st.alone && len(f) == 1:
			out = f[0]
		default:
			return false
		}
		if strings.ContainsAny(out, "*?[") {
			st.glob, st.literal = true, false
		}
	}
	st.b.WriteString(out)
	return true
}

// dqUnescape writes a double-quoted literal with bash's escapes removed:
// inside double quotes a backslash only escapes $ ` " \ and newline.
func dqUnescape(b *strings.Builder, v string) {
	if strings.IndexByte(v, '\\') < 0 {
		b.WriteString(v)
		return
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(v[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// ansiC decodes the body of a $'…' string as bash does.
func ansiC(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := 2 // \xHH
			switch e {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(v) && j-i-1 < max && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if r := rune(n); utf8.ValidRune(r) {
				b.WriteRune(r)
			}
			i = j - 1
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(v[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// baseName strips the directory from a program spelling.
func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}

// nonASCII reports whether s holds bytes outside printable ASCII: possible
// homoglyphs (fullwidth letters) or control characters (ANSI escapes).
func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f || s[i] < 0x20 {
			return true
		}
	}
	return false
}
