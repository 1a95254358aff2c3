package grammar

// PythonPrintsOnly reports whether inv, a python invocation, is
// "python -c CODE [ARG…]" with no other option and CODE a program that only
// prints literals: statements separated by ";" or newlines, each a call of
// print whose arguments are string or number literals separated by commas
// (python3 -c 'print(1)', python3 -c "print('ok'); print(2, 'x')").
//
// CODE is read by a tokenizer that follows Python's lexical rules for that
// subset and refuses everything else: any name but print (so no imports,
// no other call, no keyword, no string prefix: f"…", b"…"), attribute
// access, operators (no "a"*10**9), keyword arguments (no file=…),
// nesting, line continuations, triple quotes and any character outside
// ASCII that is not inside a string (Python folds compatibility forms of
// identifiers, "ｐｒｉｎｔ" is print). Such a program writes to its standard
// output and nothing else: it imports no module (python -c puts the
// working directory on sys.path only after start-up, so no file there is
// loaded either) and cannot raise. Environment that changes what python
// loads (PYTHONPATH, PYTHONSTARTUP …) is judged apart, with every program's
// environment.
func PythonPrintsOnly(inv *Invocation) bool {
	if inv == nil || inv.Spec == nil || inv.Spec.Name != "python" || len(inv.Options) != 1 {
		return false
	}
	o := inv.Options[0]
	return o.Name == "-c" && o.Spelled == "-c" && o.HasValue && o.ValueArg != o.Arg && printsOnly(o.Value)
}

// printsOnly reads code as a sequence of print calls of literals.
func printsOnly(code string) bool {
	p := pyLexer{s: code}
	calls := 0
	for {
		p.space()
		if p.done() {
			return calls > 0
		}
		if p.sep() {
			continue
		}
		if p.name() != "print" {
			return false
		}
		p.space()
		if !p.punct('(') {
			return false
		}
		for first := true; ; first = false {
			p.space()
			if p.punct(')') {
				break
			}
			if !first && !p.punct(',') {
				return false
			}
			p.space()
			if p.punct(')') {
				break // a trailing comma
			}
			if !p.literal() {
				return false
			}
		}
		calls++
		p.space()
		if !p.done() && !p.sep() {
			return false
		}
	}
}

// pyLexer reads the tokens of printsOnly's subset from s.
type pyLexer struct {
	s string
	i int
}

func (p *pyLexer) done() bool { return p.i >= len(p.s) }

// space skips blanks and a comment to the end of its line.
func (p *pyLexer) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

// sep reads a statement separator: ";" or a newline.
func (p *pyLexer) sep() bool {
	if p.i < len(p.s) && (p.s[p.i] == ';' || p.s[p.i] == '\n') {
		p.i++
		return true
	}
	return false
}

func (p *pyLexer) punct(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// name reads an ASCII identifier; "" when none.
func (p *pyLexer) name() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || p.i > start && '0' <= c && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// literal reads a decimal number (digits, one dot, underscores between
// digits) or a one-line string in single or double quotes without a prefix.
func (p *pyLexer) literal() bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		if p.i+2 < len(p.s) && p.s[p.i+1] == c && p.s[p.i+2] == c {
			return false // triple-quoted
		}
		for p.i++; p.i < len(p.s); p.i++ {
			switch p.s[p.i] {
			case '\\':
				p.i++
				if p.i < len(p.s) && p.s[p.i] == '\n' {
					return false // a continuation inside the string
				}
			case '\n':
				return false
			case c:
				p.i++
				return true
			}
		}
		return false
	case '0' <= c && c <= '9':
		dot := false
		for p.i < len(p.s) {
			switch d := p.s[p.i]; {
			case '0' <= d && d <= '9':
			case d == '_' && p.i+1 < len(p.s) && '0' <= p.s[p.i+1] && p.s[p.i+1] <= '9' && '0' <= p.s[p.i-1] && p.s[p.i-1] <= '9':
			case d == '.' && !dot:
				dot = true
			default:
				return !isNameByte(d) && d != '.'
			}
			p.i++
		}
		return true
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}
