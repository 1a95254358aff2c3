package shellparse

import "strings"

// envSplit splits the string given to env -S (--split-string) into
// arguments the way GNU env does: blanks separate arguments, '…' and "…"
// quote, backslash escapes (\_ is a separator outside double quotes and a
// space inside), # at the start of an argument begins a comment and \c ends
// the string. It reports false when the string holds a ${VAR} expansion,
// whose value cannot be known.
func envSplit(s string) ([]string, bool) {
	var args []string
	var cur strings.Builder
	inArg := false
	quote := byte(0)
	flush := func() {
		if inArg {
			args = append(args, cur.String())
			cur.Reset()
			inArg = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else if ch == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(ch)
			}
			continue
		case ch == '\'' && quote == 0:
			quote, inArg = '\'', true
			continue
		case ch == '"':
			if quote == '"' {
				quote = 0
			} else {
				quote = '"'
			}
			inArg = true
			continue
		case (ch == ' ' || ch == '\t' || ch == '\n') && quote == 0:
			flush()
			continue
		case ch == '#' && quote == 0 && !inArg:
			i = len(s)
			continue
		case ch == '$' && i+1 < len(s) && s[i+1] == '{':
			return nil, false
		case ch == '\\' && i+1 < len(s):
			i++
			e := s[i]
			switch e {
			case '_':
				if quote == '"' {
					cur.WriteByte(' ')
					inArg = true
				} else {
					flush()
				}
			case 'c':
				if quote == 0 {
					flush()
					return args, true
				}
				cur.WriteString("\\c")
			case 'f':
				cur.WriteByte('\f')
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			case 'v':
				cur.WriteByte('\v')
			default: // \\ \" \' \# \$ and anything else: the character itself
				cur.WriteByte(e)
			}
			if e != '_' {
				inArg = true
			}
			continue
		}
		cur.WriteByte(ch)
		inArg = true
	}
	flush()
	return args, true
}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-./=:,+@%", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
