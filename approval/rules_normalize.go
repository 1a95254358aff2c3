package approval

import (
	"strings"
	"unicode/utf8"
)

// Obfuscation. bash runs exactly the bytes it is given, so the parse of the
// original text is the truth about what runs. But a command can be written so
// that what a person sees differs from what bash parses, or so that it only
// becomes dangerous after a transformation some hosts apply before running it:
//
//   - terminal escape sequences (ANSI colours) that hide or recolour text in
//     an approval prompt;
//   - fullwidth letters ("ｒｍ") that a font shows as ASCII and that some
//     pipelines fold with Unicode NFKC;
//   - CRLF line ends, which some hosts normalise to LF, and a lone CR,
//     which bash reads as part of a word (printf SAFE\r#x; reboot runs
//     reboot) while the parser takes it for a blank;
//   - ${IFS} between words, which word splitting turns into a separator.
//
// Decision: we analyse the text as written AND a normalised variant (escape
// sequences removed, fullwidth folded to ASCII, CRLF to LF, unquoted $IFS
// to a space) and keep the stronger verdict, so "ｒｍ -rf /" is hardline
// even though no program called "ｒｍ" exists: a fullwidth program only runs
// if someone installed one, and the text's only purpose is to slip past a
// reviewer. Any control character other than tab and newline, and any
// non-ASCII program name, is at least approval (RuleControlChars): a
// person must see such a command before it runs.

// normalizeVariant returns the normalised variant of src.
func normalizeVariant(src string) string {
	if !needsNormalizing(src) {
		return src
	}
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == 0x1b: // ESC: CSI "ESC [ … final", OSC "ESC ] … BEL|ESC \", or a two-byte escape
			i = skipEscape(src, i)
			continue
		case c == '\r' && i+1 < len(src) && src[i+1] == '\n':
			i++
			continue
		case c == '\r':
			// bash reads a lone CR as part of a word; the parser reads it
			// as a blank. The variant makes it a word character.
			b.WriteByte('_')
			i++
			continue
		case c == '$' && strings.HasPrefix(src[i:], "${IFS}"):
			b.WriteByte(' ')
			i += len("${IFS}")
			continue
		case c == '$' && strings.HasPrefix(src[i:], "$IFS") && (i+4 == len(src) || !isIdent(src[i+4])):
			b.WriteByte(' ')
			i += len("$IFS")
			continue
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == 0x9b: // C1 CSI
			i += n
			for i < len(src) && !(src[i] >= 0x40 && src[i] <= 0x7e) {
				i++
			}
			if i < len(src) {
				i++
			}
			continue
		case r >= 0xff01 && r <= 0xff5e:
			b.WriteRune(r - 0xfee0)
		case r == 0x3000:
			b.WriteByte(' ')
		default:
			b.WriteString(src[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsNormalizing is the fast path: most commands are plain ASCII without
// escapes, CR or $IFS.
func needsNormalizing(src string) bool {
	if printableASCII(src) {
		// No escape, carriage return or non-ASCII byte: only $IFS needs
		// a variant.
		return strings.Contains(src, "$IFS") || strings.Contains(src, "${IFS}")
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == 0x1b || c == '\r' || c >= utf8.RuneSelf {
			return true
		}
		if c == '$' && (strings.HasPrefix(src[i:], "${IFS}") || strings.HasPrefix(src[i:], "$IFS")) {
			return true
		}
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// skipEscape returns the index after the escape sequence starting at i.
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		i++
		for i < len(s) && !(s[i] >= 0x40 && s[i] <= 0x7e) {
			i++
		}
		if i < len(s) {
			i++
		}
	case ']':
		for i < len(s) && s[i] != 0x07 && !(s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\') {
			i++
		}
		if i < len(s) && s[i] == 0x07 {
			i++
		} else if i < len(s) {
			i += 2
		}
	default:
		i++
	}
	return i
}

// hasControlChars reports whether src holds a C0 control (other than tab and
// newline), DEL, or a C1 control.
func hasControlChars(src string) bool {
	if printableASCII(src) {
		return false
	}
	for i, r := range src {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
		if r == utf8.RuneError && i < len(src) {
			if _, n := utf8.DecodeRuneInString(src[i:]); n == 1 {
				return true // invalid UTF-8 hides bytes from a reader too
			}
		}
	}
	return false
}

// oddProgram reports whether a program name holds non-ASCII characters or
// characters special to the shell (a program literally named "$(printf sh)"
// only exists to confuse a reader).
func oddProgram(p string) bool {
	return nonASCII(p) || (p != "[" && strings.ContainsAny(p, "$`(){}<>;|&*?[]!\"' \t\\"))
}

// nonASCII reports whether s has a byte outside ASCII.
func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// printableASCII reports whether s holds only printable ASCII, tabs and
// newlines: the common case, which needs no rune decoding.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f {
			return false
		}
	}
	return true
}
