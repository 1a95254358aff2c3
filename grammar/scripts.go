package grammar

import (
	"slices"
	"strings"
)

// Script says how a program reads commands given to it as text: on its
// standard input (crontab -, at, gdb, ed, sqlite3, python3 -), or from a
// file an option names when that file is standard input (gdb -x -, cmake -P
// /dev/stdin, psql -f -). Package approval rates text it knows (a heredoc,
// a here-string, "echo … | PROG") by this data and the program's own
// readers: the text is rated as the same program given it on its command
// line (python3's -c, gdb's -ex, sqlite3's SQL operand), or, for a
// language that is a list of shell commands (a crontab's entries, ed's "!"
// lines), as those shell commands. Text that is not known stays opaque.
type Script struct {
	// Lang names the language ("crontab", "gdb", "python" …).
	Lang string
	// Inline is the option that gives the same text on the command line
	// (python's -c, gdb's -ex). With Lines, each line of the text is its
	// own Inline value (gdb runs one -ex per command). Without Inline and
	// Shell, the text is given as a last operand (sqlite3's SQL).
	Inline string
	Lines  bool
	// Shell, when set, returns the shell commands the text runs; they are
	// rated as a shell script.
	Shell func(text string) string
	// From lists the options (canonical names) whose value is a script
	// file: a value naming standard input means the script is the input.
	From []string
}

// IsStdinPath reports whether a file operand names standard input.
func IsStdinPath(p string) bool {
	return p == "-" || p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0"
}

// Script returns how the invocation's program reads commands given as
// text, or nil when the grammar does not say.
func (inv *Invocation) Script() *Script {
	if inv.SubSpec == nil {
		return nil
	}
	return inv.SubSpec.Stdin
}

// ScriptFromStdin reports whether an option of the invocation names
// standard input as its script file (gdb -x /dev/stdin, cmake -P -).
func (inv *Invocation) ScriptFromStdin() bool {
	sc := inv.Script()
	if sc == nil || inv.Effects.Has(DryRun) {
		return false
	}
	for _, o := range inv.Options {
		if o.HasValue && IsStdinPath(o.Value) && slices.Contains(sc.From, o.Name) {
			return true
		}
	}
	return false
}

// ScriptCommand returns the shell text that does what the invocation does
// when text is the script it reads from standard input: the text's shell
// commands (Script.Shell), or the invocation's own arguments with the text
// given on the command line instead, in the place of a "-" script operand
// or a From option naming standard input. It returns "" when the grammar
// gives the program no Script.
func (inv *Invocation) ScriptCommand(text string) string {
	sc := inv.Script()
	if sc == nil {
		return ""
	}
	if sc.Shell != nil {
		return sc.Shell(text)
	}
	var code []string
	switch {
	case sc.Inline != "" && sc.Lines:
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				code = append(code, sc.Inline, l)
			}
		}
	case sc.Inline != "":
		code = []string{sc.Inline, text}
	default:
		code = []string{text}
	}
	skip := map[int]bool{}
	for _, o := range inv.Options {
		if o.HasValue && IsStdinPath(o.Value) && slices.Contains(sc.From, o.Name) {
			skip[o.Arg], skip[o.ValueArg] = true, true
		}
	}
	at := len(inv.Args)
	for _, op := range inv.Operands {
		if IsStdinPath(op.Value) && op.Arg < at {
			at = op.Arg // python3 - ARG…: the code replaces the "-"
		}
	}
	var b strings.Builder
	b.WriteString(inv.Program)
	for i := 0; i <= len(inv.Args); i++ {
		if i == at {
			for _, w := range code {
				b.WriteByte(' ')
				b.WriteString(shellWord(w))
			}
			continue
		}
		if i < len(inv.Args) && !skip[i] {
			b.WriteByte(' ')
			b.WriteString(shellWord(inv.Args[i]))
		}
	}
	return b.String()
}

// shellWord quotes w for a shell: single quotes, each ' written '\”.
func shellWord(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// shellScript is the Shell of a program whose input is a shell script (at,
// batch).
func shellScript(text string) string { return text }

// CronCommands returns the commands of a crontab's entries, one a line: the
// text after the five time fields or an "@reboot"-style nickname, up to
// the first unescaped "%" (the rest is the command's input). Comments,
// blank lines and NAME=VALUE lines are not commands.
func CronCommands(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if eq := strings.IndexByte(f[0], '='); eq > 0 && !strings.ContainsAny(f[0][:eq], "*/,-@") {
			continue // SHELL=/bin/sh, MAILTO=…
		}
		n := 5
		if strings.HasPrefix(f[0], "@") {
			n = 1
		}
		rest := strings.TrimLeft(line, " \t")
		for k := 0; k < n; k++ {
			i := strings.IndexAny(rest, " \t")
			if i < 0 {
				rest = ""
				break
			}
			rest = strings.TrimLeft(rest[i:], " \t")
		}
		b.WriteString(cronPercent(rest))
		b.WriteByte('\n')
	}
	return b.String()
}

// cronPercent cuts a crontab command at its first unescaped "%", and
// unescapes "\%".
func cronPercent(cmd string) string {
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '\\':
			if i+1 < len(cmd) && cmd[i+1] == '%' {
				cmd = cmd[:i] + cmd[i+1:]
			}
		case '%':
			return cmd[:i]
		}
	}
	return cmd
}

// MakeRecipes returns the shell commands a makefile runs, one a line: its
// recipe lines (a tab first, or after "target: ;"), without the @, - and +
// prefixes, "$$" as "$", and the commands of $(shell …) calls anywhere. A
// make variable $(X) stays as written: to the shell, a command substitution
// whose program is not known.
func MakeRecipes(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		for rest := line; ; {
			i := strings.Index(rest, "$(shell ")
			if i < 0 {
				break
			}
			rest = rest[i+len("$(shell "):]
			if e := strings.IndexByte(rest, ')'); e >= 0 {
				b.WriteString(strings.ReplaceAll(rest[:e], "$$", "$"))
				b.WriteByte('\n')
			}
		}
		recipe, ok := strings.CutPrefix(line, "\t")
		if !ok {
			t, r, inline := strings.Cut(line, ";")
			if !inline || !strings.Contains(t, ":") || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			recipe = r
		}
		recipe = strings.TrimLeft(recipe, "@+- \t")
		b.WriteString(strings.ReplaceAll(recipe, "$$", "$"))
		b.WriteByte('\n')
	}
	return b.String()
}

// EditorShellText returns what one editor or debugger command runs in a
// shell: vim's and ed's "!cmd" and ":!cmd", gdb's "shell cmd" and "!cmd".
func EditorShellText(text string) string {
	t := strings.TrimLeft(text, "+: \t") // less +CMD and ++CMD, vim +CMD
	for _, p := range [...]string{"!", "shell ", "sh ", "r !", "r!", "w !", "w!", "call system(", "silent !", "exe \"!", "execute \"!"} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return strings.Trim(rest, `)"' `)
		}
	}
	if i := strings.Index(t, "|!"); i >= 0 {
		return t[i+2:]
	}
	// gdb's pipe command: "pipe [COMMAND] | SHELL_COMMAND", "| [COMMAND] |
	// SHELL_COMMAND", or with "-d DELIM" a delimiter of its own.
	if rest, ok := strings.CutPrefix(t, "|"); ok || strings.HasPrefix(t, "pipe ") {
		if !ok {
			rest = strings.TrimLeft(t[len("pipe "):], " \t")
		}
		delim := "|"
		if d, ok := strings.CutPrefix(rest, "-d "); ok {
			d = strings.TrimLeft(d, " \t")
			if i := strings.IndexAny(d, " \t"); i > 0 {
				delim, rest = d[:i], d[i:]
			}
		}
		if i := strings.Index(rest, delim); i >= 0 {
			return rest[i+len(delim):]
		}
	}
	return ""
}

// GdbPython returns the Python code of a gdb "python CODE" command (also
// "py", "pi", "python-interactive") and whether text is one.
func GdbPython(text string) (string, bool) {
	t := strings.TrimLeft(text, " \t")
	for _, p := range [...]string{"python-interactive ", "python ", "pi ", "py "} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return rest, true
		}
	}
	return "", false
}

// editorShell is the Shell of ed and ex reading commands: the shell
// commands of its "!" lines.
func editorShell(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if t := EditorShellText(line); t != "" {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// SQLiteShell returns the shell text of sqlite3 .shell/.system lines (and
// psql's \!), joined by newlines: the Shell of database shells reading
// their input.
func SQLiteShell(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		for _, part := range strings.Split(line, ";") {
			w := strings.TrimSpace(part)
			for _, p := range [...]string{".shell", ".system", `\!`, "system "} {
				if rest, ok := strings.CutPrefix(w, p); ok {
					b.WriteString(rest)
					b.WriteByte('\n')
				}
			}
		}
	}
	return b.String()
}

// CMakeCommands returns the shell commands a CMake script runs, one a
// line: each COMMAND of execute_process (its words run as one program,
// without a shell), exec_program's program and ARGS, and the deletions of
// file(REMOVE …) and file(REMOVE_RECURSE …) as rm -f and rm -rf. A
// variable reference becomes a shell expansion of the same name
// ($ENV{HOME} is $HOME), a value the rater does not know.
func CMakeCommands(text string) string {
	var b strings.Builder
	for _, call := range cmakeCalls(text) {
		args := call.args
		var cmds [][]string
		switch strings.ToLower(call.name) {
		case "execute_process":
			var cur []string
			in := false
			for _, a := range args {
				switch {
				case a == "COMMAND":
					if len(cur) > 0 {
						cmds = append(cmds, cur)
					}
					cur, in = nil, true
				case cmakeProcessKeywords[a]:
					in = false
				case in:
					cur = append(cur, a)
				}
			}
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
		case "exec_program":
			if len(args) > 0 {
				cmd := []string{args[0]}
				for i := 1; i < len(args); i++ {
					if args[i] == "ARGS" {
						for _, a := range args[i+1:] {
							if a == "OUTPUT_VARIABLE" || a == "RETURN_VALUE" {
								break
							}
							cmd = append(cmd, strings.Fields(a)...)
						}
						break
					}
				}
				cmds = append(cmds, cmd)
			}
		case "file":
			if len(args) > 1 && (args[0] == "REMOVE" || args[0] == "REMOVE_RECURSE") {
				rm := []string{"rm", "-f", "--"}
				if args[0] == "REMOVE_RECURSE" {
					rm[1] = "-rf"
				}
				cmds = append(cmds, append(rm, args[1:]...))
			}
		}
		for _, cmd := range cmds {
			for i, w := range cmd {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(cmakeShellWord(w))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// cmakeProcessKeywords are execute_process's keywords other than COMMAND.
var cmakeProcessKeywords = map[string]bool{
	"WORKING_DIRECTORY": true, "TIMEOUT": true, "RESULT_VARIABLE": true, "RESULTS_VARIABLE": true,
	"OUTPUT_VARIABLE": true, "ERROR_VARIABLE": true, "INPUT_FILE": true, "OUTPUT_FILE": true, "ERROR_FILE": true,
	"OUTPUT_QUIET": true, "ERROR_QUIET": true, "COMMAND_ECHO": true, "OUTPUT_STRIP_TRAILING_WHITESPACE": true,
	"ERROR_STRIP_TRAILING_WHITESPACE": true, "ENCODING": true, "ECHO_OUTPUT_VARIABLE": true,
	"ECHO_ERROR_VARIABLE": true, "COMMAND_ERROR_IS_FATAL": true,
}

// cmakeShellWord writes a CMake argument as a shell word: literal text
// single-quoted, ${X} and $ENV{X} as the shell expansion ${X}.
func cmakeShellWord(w string) string {
	if !strings.Contains(w, "$") {
		return shellWord(w)
	}
	w = strings.ReplaceAll(w, "$ENV{", "${")
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range w {
		if r == '"' || r == '\\' || r == '`' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

type cmakeCall struct {
	name string
	args []string
}

// cmakeCalls splits a CMake script into its command invocations: NAME(
// ARGS ), arguments separated by white space, "quoted" (with \ escapes),
// [[bracket]] or unquoted; # comments to the end of the line. Nested
// parentheses in unquoted arguments are kept as words.
func cmakeCalls(text string) []cmakeCall {
	var calls []cmakeCall
	i, n := 0, len(text)
	for i < n {
		c := text[i]
		switch {
		case c == '#':
			for i < n && text[i] != '\n' {
				i++
			}
			continue
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			i++
			continue
		}
		s := i
		for i < n && (text[i] == '_' || text[i] >= 'a' && text[i] <= 'z' || text[i] >= 'A' && text[i] <= 'Z' || text[i] >= '0' && text[i] <= '9') {
			i++
		}
		name := text[s:i]
		for i < n && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i >= n || text[i] != '(' {
			continue
		}
		i++
		call := cmakeCall{name: name}
		depth := 0
	args:
		for i < n {
			switch c := text[i]; {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				i++
			case c == '#':
				for i < n && text[i] != '\n' {
					i++
				}
			case c == ')':
				i++
				if depth == 0 {
					break args
				}
				depth--
			case c == '(':
				depth++
				i++
			case c == '"':
				var b strings.Builder
				for i++; i < n && text[i] != '"'; i++ {
					if text[i] == '\\' && i+1 < n {
						i++
					}
					b.WriteByte(text[i])
				}
				i++
				call.args = append(call.args, b.String())
			case c == '[' && i+1 < n && (text[i+1] == '[' || text[i+1] == '='):
				j := i + 1
				for j < n && text[j] == '=' {
					j++
				}
				if j >= n || text[j] != '[' {
					i++
					continue
				}
				closer := "]" + text[i+1:j] + "]"
				e := strings.Index(text[j+1:], closer)
				if e < 0 {
					call.args = append(call.args, text[j+1:])
					i = n
					break args
				}
				call.args = append(call.args, text[j+1:j+1+e])
				i = j + 1 + e + len(closer)
			default:
				s := i
				for i < n && !strings.ContainsRune(" \t\r\n()#\"", rune(text[i])) {
					i++
				}
				call.args = append(call.args, text[s:i])
			}
		}
		calls = append(calls, call)
	}
	return calls
}

// TclCommands returns the shell commands a Tcl script (tclsh, expect) runs,
// one a line: the words of exec and spawn (run as a program, without a
// shell; exec's own options dropped), and the text of expect's system
// (run by sh). Commands end at a newline, ";" or a bracket, so "[exec
// reboot]" is read too; {…} and "…" words lose their quotes.
func TclCommands(text string) string {
	var b strings.Builder
	for _, cmd := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' || r == '[' || r == ']' }) {
		words := tclWords(cmd)
		if len(words) < 2 {
			continue
		}
		switch words[0] {
		case "exec", "spawn":
			rest := words[1:]
			for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
				done := rest[0] == "--"
				rest = rest[1:]
				if done {
					break
				}
			}
			for i, w := range rest {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(tclShellWord(w))
			}
		case "system":
			b.WriteString(strings.Join(words[1:], " "))
		default:
			continue
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// tclShellWord writes a Tcl word as a shell word: a reference to the home
// ($env(HOME), $::env(HOME)) as the shell's $HOME, any other as literal
// text (exec does no tilde or glob expansion).
func tclShellWord(w string) string {
	for _, h := range [...]string{"$env(HOME)", "$::env(HOME)", "${env(HOME)}"} {
		if rest, ok := strings.CutPrefix(w, h); ok && (rest == "" || rest[0] == '/') {
			return `"$HOME"` + shellWord(rest)
		}
	}
	return shellWord(w)
}

// tclWords splits one Tcl command into words: white space separates them;
// {…} (nesting) and "…" group, without their quotes.
func tclWords(cmd string) []string {
	var out []string
	i, n := 0, len(cmd)
	for i < n {
		for i < n && (cmd[i] == ' ' || cmd[i] == '\t' || cmd[i] == '\r') {
			i++
		}
		if i >= n {
			break
		}
		switch cmd[i] {
		case '{':
			depth, s := 0, i+1
			for ; i < n; i++ {
				if cmd[i] == '{' {
					depth++
				} else if cmd[i] == '}' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			out = append(out, cmd[s:min(i, n)])
			i++
		case '"':
			s := i + 1
			for i = s; i < n && cmd[i] != '"'; i++ {
				if cmd[i] == '\\' {
					i++
				}
			}
			out = append(out, cmd[s:min(i, n)])
			i++
		default:
			s := i
			for i < n && cmd[i] != ' ' && cmd[i] != '\t' && cmd[i] != '\r' {
				i++
			}
			out = append(out, cmd[s:i])
		}
	}
	return out
}

// ConfigFiles says which configuration files a program reads on every run,
// besides any its options name, and what their settings run. Package
// shellparse reads a file the line wrote there with known text as the
// commands Shell returns, run by the program.
type ConfigFiles struct {
	// Paths are read on every run: home-relative ("~/.gitconfig") or
	// relative to the working directory (".git/config").
	Paths []string
	// Env names variables whose value is another file read so
	// (GIT_CONFIG_GLOBAL).
	Env []string
	// Shell returns the shell commands the file's settings run.
	Shell func(text string) string
}

// GitConfigCommands returns the shell commands a git configuration file
// runs, one a line: each setting whose key is one of git's ExecKeys
// (core.fsmonitor, core.pager, alias.x …), its value unquoted; an alias
// value "!cmd" is the shell command cmd, any other alias a git command.
// Comments, sections and settings that run nothing are not commands.
func GitConfigCommands(text string) string {
	var b strings.Builder
	section := ""
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		for strings.HasPrefix(l, "[") {
			// [section], [section "sub"], [section.sub]; a setting may
			// follow on the same line.
			e := strings.IndexByte(l, ']')
			if e < 0 {
				break
			}
			head := strings.TrimSpace(l[1:e])
			name, sub, _ := strings.Cut(head, " ")
			section = strings.ToLower(name)
			if sub = strings.Trim(strings.TrimSpace(sub), `"`); sub != "" {
				section += "." + sub
			}
			l = strings.TrimSpace(l[e+1:])
		}
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		key := section + "." + strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		v = gitConfigValue(v)
		if !execKeyIn(gitExecKeys, key) || v == "" {
			continue
		}
		if strings.HasPrefix(key, "alias.") && !strings.HasPrefix(v, "!") {
			v = "git " + v
		}
		b.WriteString(strings.TrimPrefix(v, "!"))
		b.WriteByte('\n')
	}
	return b.String()
}

// gitConfigValue unquotes a git configuration value: double quotes removed,
// backslash escapes (\" \\ \n \t) decoded, an unquoted "#" or ";" starting
// a comment.
func gitConfigValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		switch ch := v[i]; {
		case ch == '"':
			quoted = !quoted
		case ch == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case !quoted && (ch == '#' || ch == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(ch)
		}
	}
	return strings.TrimSpace(b.String())
}

// RipgrepConfigCommands returns the command ripgrep's configuration file
// amounts to: rg given each of its lines (blank and "#" lines aside) as one
// argument, before its command line.
func RipgrepConfigCommands(text string) string {
	var b strings.Builder
	b.WriteString("rg")
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l == "" || l[0] == '#' {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(shellWord(l))
		n++
	}
	if n == 0 {
		return ""
	}
	return b.String()
}
