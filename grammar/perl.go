package grammar

import (
	"regexp"
	"strings"
)

// CodeInert reports whether inv gives its interpreter inline code that does
// nothing but print or filter text: PythonPrintsOnly, PerlFiltersOnly.
// Such code is no payload to approve; every other option and operand is
// still read by the rules.
func CodeInert(inv *Invocation) bool {
	return PythonPrintsOnly(inv) || PerlFiltersOnly(inv)
}

// PerlFiltersOnly reports whether inv is perl given only -n or -p, -l, -a,
// -i (in place) and -e/-E code that prints or edits the lines it reads
// (perl -ne 'print if /x/', perl -pe 's/a/b/g', perl -lane 'print $F[1]'),
// on operands that are plain file names.
//
// The code is read by a strict matcher of a few statement forms separated
// by ";": print (of $_, $N, $F[N] or a double-quoted string of those),
// optionally under "if"/"unless" a match; "next"/"last" under a match; a
// match "and"/"&&" print; s/RE/REPL/ without the e flag; tr/// and y///;
// chomp. Regular expressions and strings may hold no "{", "}" or "@" and
// no "$" but $N, $& and $_ (and an anchoring "$" before ")", "|" or the
// end): code runs inside a regex only as (?{…}) and (??{…}), inside a
// string or a replacement only through @{[…]} or ${\…}. Only "/" delimits.
// Operands are refused when perl's two-argument open would read them as
// anything but a file ("reboot|" runs reboot, ">f" writes f): a "|", a
// leading "<", ">", "+", "&", "-" (but "-" alone, standard input) or blank.
func PerlFiltersOnly(inv *Invocation) bool {
	if inv == nil || inv.Spec == nil || inv.Spec.Name != "perl" {
		return false
	}
	var code []string
	loop := false
	for _, o := range inv.Options {
		switch o.Spelled {
		case "-e", "-E":
			if !o.HasValue {
				return false
			}
			code = append(code, o.Value)
		case "-n", "-p":
			loop = true
		case "-l", "-a", "-i":
			if o.Spelled == "-i" && o.HasValue && strings.ContainsAny(o.Value, "/*") {
				return false // a backup name with a directory or a glob
			}
		default:
			return false
		}
	}
	if !loop || len(code) == 0 {
		return false
	}
	for _, op := range inv.Operands {
		v := op.Value
		if v == "-" {
			continue
		}
		if v == "" || strings.Contains(v, "|") || strings.ContainsAny(v[:1], "<>+&- \t") || strings.TrimRight(v, " \t") != v {
			return false
		}
	}
	s := strings.Join(code, "\n")
	for {
		s = strings.TrimLeft(s, " \t\n;")
		if s == "" {
			return true
		}
		m := perlStatement.FindStringIndex(s)
		if m == nil {
			return false
		}
		s = s[m[1]:]
	}
}

// perlStatement matches one statement PerlFiltersOnly accepts at the start
// of the remaining code, with the ";" or end that follows it.
var perlStatement = func() *regexp.Regexp {
	const (
		re    = `(?:[^/\\{}@$\n]|\\[^{}\n]|\$[0-9&_)|])*\$?`
		repl  = `(?:[^/\\{}@$\n]|\\[^{}\n]|\$[0-9&_])*`
		dq    = `(?:[^"\\{}@$\n]|\\[nt"\\]|\$[0-9&_]|\$F\[[0-9]+\])*`
		match = `!?\s*(?:m?/` + re + `/[imsx]*)`
		print = `print(?:\s+(?:\$_|\$[0-9]|\$F\[[0-9]+\]|"` + dq + `"))?`
		cond  = `(?:\s+(?:if|unless)\s+` + match + `)?`
		tr    = `(?:[^/\\\n]|\\[^\n])*`
	)
	forms := []string{
		print + cond,
		`(?:next|last)\s+(?:if|unless)\s+` + match,
		match + `\s*(?:and|&&|or|\|\|)\s*` + print,
		`s/` + re + `/` + repl + `/[gimsx]*`,
		`(?:tr|y)/` + tr + `/` + tr + `/[cdsr]*`,
		`chomp`,
	}
	return regexp.MustCompile(`^(?:` + strings.Join(forms, "|") + `)\s*(?:;|\n|$)`)
}()

// PerlOpenCommands returns the commands perl -n or -p runs by opening its
// operands with the two-argument open of "<>": an operand "cmd|" is read
// from cmd's output, "|cmd" written to its input.
func PerlOpenCommands(inv *Invocation) []string {
	if inv == nil || inv.Spec == nil || inv.Spec.Name != "perl" || !inv.Has("-n") && !inv.Has("-p") {
		return nil
	}
	var out []string
	for _, op := range inv.Operands {
		v := strings.TrimSpace(op.Value)
		if cmd, ok := strings.CutSuffix(v, "|"); ok {
			out = append(out, cmd)
		} else if cmd, ok := strings.CutPrefix(v, "|"); ok {
			out = append(out, cmd)
		}
	}
	return out
}
