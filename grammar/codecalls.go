package grammar

import "strings"

// CodeCommands returns the shell commands that literal calls in
// interpreter code run, one a line: a call of one of the language's
// process functions (python's os.system and subprocess.run, perl's and
// ruby's system, node's execSync, lua's os.execute, php's shell_exec …)
// whose first argument is a string literal (run by sh) or a list of string
// literals (run as one program), and backquoted commands (perl, ruby,
// php). A call whose argument is not literal is not read: the code stays
// opaque, and needs approval on its own. lang is the grammar's name for
// the interpreter ("python", "perl", "ruby", "node", "lua", "php").
func CodeCommands(lang, code string) string {
	fns := codeCallNames[lang]
	if fns == nil {
		return ""
	}
	var b strings.Builder
	for _, fn := range fns {
		for i := 0; ; {
			j := strings.Index(code[i:], fn)
			if j < 0 {
				break
			}
			k := i + j + len(fn)
			i = k
			if p := i - len(fn) - 1; p >= 0 && isIdentByte(code[p]) && !strings.ContainsRune(fn, '.') {
				continue // mysystem(
			}
			rest := strings.TrimLeft(code[k:], " \t")
			if strings.HasPrefix(rest, "(") {
				rest = strings.TrimLeft(rest[1:], " \t")
			} else if lang != "perl" && lang != "ruby" {
				continue // only perl and ruby call without parentheses
			}
			if cmd, ok := literalCommand(rest); ok {
				b.WriteString(cmd)
				b.WriteByte('\n')
			}
		}
	}
	if lang == "perl" || lang == "ruby" || lang == "php" {
		for parts := strings.Split(code, "`"); len(parts) >= 3; parts = parts[2:] {
			b.WriteString(parts[1])
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// codeCallNames are the functions whose first argument is a command, by
// language (with the "(" or space that follows read by CodeCommands).
var codeCallNames = map[string][]string{
	"python": {"os.system", "os.popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
		"subprocess.check_output", "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "pty.spawn"},
	"perl": {"system", "exec", "qx"},
	"ruby": {"system", "exec", "spawn", "IO.popen", "Open3.capture2", "Open3.capture3", "Open3.popen3"},
	"node": {"execSync", "exec", "spawnSync", "spawn", "execFileSync", "execFile"},
	"lua":  {"os.execute", "io.popen"},
	"php":  {"system", "exec", "shell_exec", "passthru", "popen", "proc_open"},
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// literalCommand reads a call's first argument: a string literal is a
// shell command line; a list of string literals (["rm", "-rf", "/"]) is
// one program's words, joined quoted. Anything else is not read.
func literalCommand(s string) (string, bool) {
	if strings.HasPrefix(s, "[") {
		var words []string
		s = s[1:]
		for {
			s = strings.TrimLeft(s, " \t")
			if strings.HasPrefix(s, "]") {
				break
			}
			w, rest, ok := stringLiteral(s)
			if !ok {
				return "", false
			}
			words = append(words, shellWord(w))
			s = strings.TrimLeft(rest, " \t")
			s = strings.TrimPrefix(s, ",")
		}
		return strings.Join(words, " "), len(words) > 0
	}
	w, rest, ok := stringLiteral(s)
	if !ok {
		return "", false
	}
	// system("rm", "-rf", "/") in perl and ruby: several words, one program.
	more := []string{shellWord(w)}
	for r := strings.TrimLeft(rest, " \t"); strings.HasPrefix(r, ","); {
		v, rr, ok := stringLiteral(strings.TrimLeft(r[1:], " \t"))
		if !ok {
			break
		}
		more = append(more, shellWord(v))
		r = strings.TrimLeft(rr, " \t")
	}
	if len(more) > 1 {
		return strings.Join(more, " "), true
	}
	return w, true
}

// stringLiteral reads a '…' or "…" literal (backslash escapes kept as the
// escaped byte) at the start of s; a literal holding an interpolation
// (${…}, #{…}, $var in double quotes) is not read.
func stringLiteral(s string) (string, string, bool) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", s, false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == q:
			return b.String(), s[i+1:], true
		case q == '"' && (c == '$' || c == '#' && i+1 < len(s) && s[i+1] == '{'):
			return "", s, false
		default:
			b.WriteByte(c)
		}
	}
	return "", s, false
}
