package grammar

import (
	"regexp"
	"strings"
	"sync"
)

// CodeCommands returns the shell commands that literal calls in
// interpreter code run, one a line: a call of one of the language's
// process functions (python's os.system, subprocess.*, os.exec*, os.spawn*
// and pty.spawn, perl's and ruby's system and exec, node's child_process
// calls, lua's os.execute, php's shell_exec …) whose command is a string
// literal (run by sh) or literal words (run as one program), a literal
// string given to the language's eval, a library delete of a tree
// (shutil.rmtree, FileUtils.rm_rf) as rm -rf of its literal path or the
// home, and the quoted commands of perl's
// qx and backquotes, ruby's %x and backquotes, php's backquotes. Python
// names are resolved as python binds them first: import … as, from …
// import, a name assigned a function, __import__('os'),
// importlib.import_module and getattr(os, 'system'). A call whose command
// is not literal is not read: the code stays opaque, and needs approval
// on its own. lang is the grammar's name for the interpreter ("python",
// "perl", "ruby", "node", "lua", "php").
func CodeCommands(lang, code string) string {
	var cmds commandList
	cmds.read(lang, code, 0)
	return cmds.b.String()
}

// commandList collects commands once each: a literal eval string is read
// both as code and, by the scan around it, as text.
type commandList struct {
	b    strings.Builder
	seen map[string]bool
}

func (l *commandList) add(cmd string) {
	if l.seen[cmd] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[cmd] = true
	l.b.WriteString(cmd)
	l.b.WriteByte('\n')
}

// maxEvalDepth bounds the literal eval strings read inside one another.
const maxEvalDepth = 3

func (l *commandList) read(lang, code string, depth int) {
	funcs := processFuncs[lang]
	if funcs == nil || depth > maxEvalDepth {
		return
	}
	var names map[string]string
	if lang == "python" {
		code = pythonCanonical(code)
		names = pythonBindings(code)
	}
	for i := 0; i < len(code); {
		name, end := dottedName(code, i)
		if name == "" {
			i++
			continue
		}
		i = end
		fn, ok := lookupProcessFunc(lang, funcs, names, name)
		if !ok {
			continue
		}
		rest := strings.TrimLeft(code[end:], " \t")
		if strings.HasPrefix(rest, "(") {
			rest = rest[1:]
		} else if lang != "perl" && lang != "ruby" {
			continue // only perl and ruby call without parentheses
		}
		args := callArgs(rest)
		if fn.shape == evalCode {
			if len(args) > 0 && args[0].kind == stringArg {
				l.read(lang, args[0].words[0], depth+1)
			}
			continue
		}
		if cmd, ok := fn.command(lang, args); ok {
			l.add(cmd)
		}
	}
	for _, cmd := range quotedCommands(lang, code) {
		l.add(cmd)
	}
}

// callShape says where a process function's command sits in its
// arguments.
type callShape int

const (
	// shellLine: a string is a shell command line; literal words (a list)
	// are one program and its arguments.
	shellLine callShape = iota
	// programArgs: a string is a shell line when alone, else the program,
	// and the literal strings and lists after it its arguments (node's
	// spawn('rm', ['-rf', '/']), perl's system('rm', '-rf', '/')).
	programArgs
	// execV: the program, then a list whose first word is argv[0]
	// (python's os.execv('/sbin/reboot', ['reboot', …])).
	execV
	// execL: the program, argv[0], then the arguments (os.execl).
	execL
	// evalCode: a string is code of the same language.
	evalCode
	// pipeOpen: a "|cmd" or "cmd|" string is a shell line, and a "-|" or
	// "|-" mode string the program and arguments after it (perl's and
	// ruby's open).
	pipeOpen
	// deleteTree: the library call deletes the tree at its literal path
	// (python's shutil.rmtree, ruby's FileUtils.rm_rf), read as rm -rf of
	// it; os.path.expanduser('~…') is the home.
	deleteTree
)

// processFunc is one process function: its shape and the leading
// arguments before its command (os.spawnv's mode).
type processFunc struct {
	shape callShape
	skip  int
}

// processFuncs are the functions that run a command, by language. Python
// and lua names are full dotted names, matched after python's bindings
// are resolved (platform.system is not os.system); the others are the
// last name of a call, whatever it is called on (require('child_process')
// .spawn, cp.spawn, Kernel.exec, CORE::system).
var processFuncs = map[string]map[string]processFunc{
	"python": {
		"os.system": {}, "os.popen": {}, "subprocess.run": {}, "subprocess.call": {}, "subprocess.check_call": {},
		"subprocess.check_output": {}, "subprocess.Popen": {}, "subprocess.getoutput": {}, "subprocess.getstatusoutput": {},
		"pty.spawn": {}, "commands.getoutput": {}, "asyncio.create_subprocess_shell": {},
		"asyncio.create_subprocess_exec": {shape: programArgs},
		"os.execv":                       {shape: execV}, "os.execve": {shape: execV}, "os.execvp": {shape: execV}, "os.execvpe": {shape: execV},
		"os.posix_spawn": {shape: execV}, "os.posix_spawnp": {shape: execV},
		"os.execl": {shape: execL}, "os.execle": {shape: execL}, "os.execlp": {shape: execL}, "os.execlpe": {shape: execL},
		"os.spawnv": {shape: execV, skip: 1}, "os.spawnve": {shape: execV, skip: 1}, "os.spawnvp": {shape: execV, skip: 1}, "os.spawnvpe": {shape: execV, skip: 1},
		"os.spawnl": {shape: execL, skip: 1}, "os.spawnle": {shape: execL, skip: 1}, "os.spawnlp": {shape: execL, skip: 1}, "os.spawnlpe": {shape: execL, skip: 1},
		"exec": {shape: evalCode}, "eval": {shape: evalCode}, "builtins.exec": {shape: evalCode}, "builtins.eval": {shape: evalCode},
		"shutil.rmtree": {shape: deleteTree},
	},
	"perl": {
		"system": {shape: programArgs}, "exec": {shape: programArgs}, "readpipe": {},
		"open": {shape: pipeOpen, skip: 1}, "eval": {shape: evalCode},
	},
	"ruby": {
		"system": {shape: programArgs}, "exec": {shape: programArgs}, "spawn": {shape: programArgs},
		"popen": {shape: programArgs}, "popen2": {shape: programArgs}, "popen2e": {shape: programArgs}, "popen3": {shape: programArgs},
		"capture2": {shape: programArgs}, "capture2e": {shape: programArgs}, "capture3": {shape: programArgs},
		"pipeline": {shape: programArgs}, "pipeline_r": {shape: programArgs}, "pipeline_w": {shape: programArgs},
		"open": {shape: pipeOpen}, "eval": {shape: evalCode}, "instance_eval": {shape: evalCode},
		"rm_rf": {shape: deleteTree}, "rm_r": {shape: deleteTree}, "remove_dir": {shape: deleteTree},
		"remove_entry": {shape: deleteTree}, "remove_entry_secure": {shape: deleteTree},
	},
	"node": {
		"execSync": {}, "exec": {}, "spawnSync": {shape: programArgs}, "spawn": {shape: programArgs},
		"execFileSync": {shape: programArgs}, "execFile": {shape: programArgs},
		"eval": {shape: evalCode},
	},
	"lua": {"os.execute": {}, "io.popen": {}},
	"php": {
		"system": {}, "exec": {}, "shell_exec": {}, "passthru": {}, "popen": {}, "proc_open": {},
		"pcntl_exec": {shape: programArgs}, "eval": {shape: evalCode},
	},
}

// lookupProcessFunc finds the process function a call's name denotes.
func lookupProcessFunc(lang string, funcs map[string]processFunc, names map[string]string, name string) (processFunc, bool) {
	name = strings.TrimPrefix(name, ".")
	if lang != "python" && lang != "lua" {
		fn, ok := funcs[name[strings.LastIndexByte(name, '.')+1:]]
		return fn, ok
	}
	if fn, ok := funcs[name]; ok {
		return fn, true
	}
	for range 4 { // a name bound to a name bound to …
		head, tail, _ := strings.Cut(name, ".")
		to, ok := names[head]
		if !ok {
			break
		}
		name = to
		if tail != "" {
			name += "." + tail
		}
		if fn, ok := funcs[name]; ok {
			return fn, true
		}
	}
	// from os import *: a bare name may be any of the module's functions.
	if !strings.Contains(name, ".") {
		for mod := range names {
			if strings.HasSuffix(mod, ".*") {
				if fn, ok := funcs[strings.TrimSuffix(mod, "*")+name]; ok {
					return fn, true
				}
			}
		}
	}
	return processFunc{}, false
}

// command reads a call's arguments as the command it runs.
func (fn processFunc) command(lang string, args []callArg) (string, bool) {
	if lang == "ruby" {
		// system({"VAR" => "x"}, "cmd"): an environment hash comes first.
		for len(args) > 0 && args[0].kind == otherArg && strings.HasPrefix(args[0].text, "{") {
			args = args[1:]
		}
	}
	if len(args) <= fn.skip {
		return "", false
	}
	args = args[fn.skip:]
	first := args[0]
	switch fn.shape {
	case shellLine:
		switch first.kind {
		case stringArg:
			return first.words[0], true
		case listArg:
			return quotedWords(first.words), true
		}
	case programArgs:
		if prog, rest, ok := perlIndirect(lang, args); ok {
			// system { "reboot" } "name", ARGS: the block names the
			// program, the list after it is argv from argv[0].
			return processFunc{shape: execL}.command(lang, append([]callArg{prog}, rest...))
		}
		if first.kind == listArg {
			return quotedWords(first.words), true
		}
		if first.kind != stringArg {
			return "", false
		}
		words := literalWords(args[1:])
		if len(words) == 0 {
			return first.words[0], true
		}
		return quotedWords(append([]string{first.words[0]}, words...)), true
	case deleteTree:
		if first.kind == stringArg {
			return "rm -rf -- " + shellWord(first.words[0]), true
		}
		if home, ok := expandUser(first.text); ok {
			return "rm -rf -- ~" + shellWordTail(home), true
		}
	case pipeOpen:
		if first.kind != stringArg {
			return "", false
		}
		if m := strings.TrimSpace(first.words[0]); m == "-|" || m == "|-" {
			return processFunc{shape: programArgs}.command(lang, args[1:])
		} else if cmd, ok := strings.CutPrefix(m, "|"); ok {
			return strings.TrimSpace(cmd), true
		} else if cmd, ok := strings.CutSuffix(m, "|"); ok {
			return strings.TrimSpace(cmd), true
		}
	case execV, execL:
		if first.kind != stringArg {
			return "", false
		}
		rest := literalWords(args[1:])
		if len(rest) > 0 {
			rest = rest[1:] // argv[0]: the program's name for itself
		}
		return quotedWords(append([]string{first.words[0]}, rest...)), true
	}
	return "", false
}

// perlIndirect reads perl's indirect-object call system { PROGRAM } LIST:
// the program in the block, then the list.
func perlIndirect(lang string, args []callArg) (callArg, []callArg, bool) {
	if lang != "perl" || len(args) == 0 || args[0].kind != otherArg || !strings.HasPrefix(args[0].text, "{") {
		return callArg{}, nil, false
	}
	t := args[0].text
	end := strings.IndexByte(t, '}')
	if end < 0 {
		return callArg{}, nil, false
	}
	prog := readArg(strings.TrimSpace(t[1:end]))
	if prog.kind != stringArg {
		return callArg{}, nil, false
	}
	rest := append([]callArg{readArg(strings.TrimSpace(t[end+1:]))}, args[1:]...)
	return prog, rest, true
}

// expandUser reads python's os.path.expanduser('~…') (and Path.home(),
// ruby's Dir.home) of a literal: the text after "~".
func expandUser(text string) (string, bool) {
	t := strings.TrimSpace(text)
	switch t {
	case "os.path.expanduser('~')", `os.path.expanduser("~")`, "Path.home()", "pathlib.Path.home()", "Dir.home", "Dir.home()", `ENV["HOME"]`, "ENV['HOME']":
		return "", true
	}
	inner, ok := strings.CutPrefix(t, "os.path.expanduser(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return "", false
	}
	a := readArg(strings.TrimSpace(strings.TrimSuffix(inner, ")")))
	if a.kind != stringArg || (a.words[0] != "~" && !strings.HasPrefix(a.words[0], "~/")) {
		return "", false
	}
	return a.words[0][1:], true
}

// shellWordTail quotes the path after "~" (empty or "/…") so that the "~"
// stays the home: bash expands a "~" only before an unquoted "/".
func shellWordTail(p string) string {
	if p == "" || p == "/" {
		return p
	}
	return "/" + shellWord(strings.TrimPrefix(p, "/"))
}

// literalWords flattens the literal strings and lists at the start of
// args; the first argument that is neither (shell=True, {stdio: …}) ends
// them.
func literalWords(args []callArg) []string {
	var words []string
	for _, a := range args {
		if a.kind == otherArg {
			break
		}
		words = append(words, a.words...)
	}
	return words
}

func quotedWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}

type argKind int

const (
	otherArg  argKind = iota // anything not a literal: a name, a call, shell=True
	stringArg                // one string literal
	listArg                  // a list of string literals: [...] or (...)
)

// callArg is one argument of a call: its kind, its literal words and its
// text.
type callArg struct {
	kind  argKind
	words []string
	text  string
}

// callArgs reads the arguments of a call from just after its "(" (or
// after the name of a perl or ruby call without parentheses) up to the
// closing ")" or, without parentheses, the end of the statement.
func callArgs(s string) []callArg {
	var args []callArg
	for len(args) < 16 {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" || s[0] == ')' || s[0] == ';' {
			return args
		}
		end := argEnd(s)
		text := strings.TrimSpace(s[:end])
		args = append(args, readArg(text))
		s = s[end:]
		if !strings.HasPrefix(s, ",") {
			return args
		}
		s = s[1:]
	}
	return args
}

// argEnd is the index of the comma, ")" or ";" that ends the argument at
// the start of s, skipping strings and brackets.
func argEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			if _, rest, ok := stringLiteral(s[i:]); ok {
				i = len(s) - len(rest) - 1
			}
		case '`':
			if k := strings.IndexByte(s[i+1:], '`'); k >= 0 {
				i += k + 1
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',', ';', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// readArg reads one argument's text: a string literal (python's r” and
// b” prefixes too), a list of string literals, or anything else.
func readArg(text string) callArg {
	t := text
	for _, kw := range [...]string{"args=", "cmd=", "command="} {
		// subprocess.run(args=[…]): python's keyword for the command.
		if rest, ok := strings.CutPrefix(t, kw); ok && !strings.HasPrefix(rest, "=") {
			t = strings.TrimSpace(rest)
		}
	}
	for _, q := range [...]string{"'''", `"""`, "`"} {
		// python's triple quotes, javascript's template without ${…}.
		if body, ok := strings.CutPrefix(t, q); ok {
			if end := strings.Index(body, q); end >= 0 && strings.TrimSpace(body[end+len(q):]) == "" && !strings.ContainsAny(body[:end], "$\\") {
				return callArg{kind: stringArg, words: []string{body[:end]}, text: text}
			}
		}
	}
	if len(t) > 1 && strings.ContainsRune("rRbB", rune(t[0])) && (t[1] == '\'' || t[1] == '"') {
		t = t[1:]
	}
	if w, rest, ok := stringLiteral(t); ok && strings.TrimSpace(rest) == "" {
		return callArg{kind: stringArg, words: []string{w}, text: text}
	}
	if len(t) >= 2 && (t[0] == '[' && t[len(t)-1] == ']' || t[0] == '(' && t[len(t)-1] == ')') {
		var words []string
		for _, a := range callArgs(t[1 : len(t)-1]) {
			if a.kind != stringArg {
				return callArg{kind: otherArg, text: text}
			}
			words = append(words, a.words[0])
		}
		if len(words) > 0 {
			return callArg{kind: listArg, words: words, text: text}
		}
	}
	return callArg{kind: otherArg, text: text}
}

// dottedName reads the name (a.b.c) that starts at i, when one starts
// there; a name called on an expression (f().spawn) starts with ".".
func dottedName(code string, i int) (string, int) {
	if !isIdentStart(code[i]) || i > 0 && (isIdentByte(code[i-1]) || code[i-1] == '$' || code[i-1] == '@') {
		return "", i
	}
	j := i
	for {
		for j < len(code) && isIdentByte(code[j]) {
			j++
		}
		if j+1 < len(code) && code[j] == '.' && isIdentStart(code[j+1]) {
			j++
			continue
		}
		break
	}
	name := code[i:j]
	if i > 0 && code[i-1] == '.' {
		name = "." + name
	}
	return name, j
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// pyRE are the Python spellings of a module or an attribute by a string,
// rewritten to the name itself before calls are read, and of the
// statements that bind names. Compiled on first use: every tether process
// links this package, few read Python.
var pyRE = sync.OnceValue(func() (re struct{ importCall, getattr, imp, fromImport, assign *regexp.Regexp }) {
	re.importCall = regexp.MustCompile(`(?:\b__import__|\bimportlib\.import_module)\(\s*['"]([\w.]+)['"]\s*\)|\bsys\.modules\[\s*['"]([\w.]+)['"]\s*\]`)
	re.getattr = regexp.MustCompile(`\bgetattr\(\s*([\w.]+)\s*,\s*['"](\w+)['"]\s*\)`)
	re.imp = regexp.MustCompile(`^import\s+([\w., \t]+)$`)
	re.fromImport = regexp.MustCompile(`^from\s+([\w.]+)\s+import\s+\(?([\w., \t*]+?)\)?$`)
	re.assign = regexp.MustCompile(`^(\w+)\s*=\s*([\w.]+)$`)
	return re
})

// pythonCanonical rewrites __import__('os'), importlib.import_module('os'),
// sys.modules['os'] and getattr(os, 'system') as the names they denote.
func pythonCanonical(code string) string {
	re := pyRE()
	code = re.importCall.ReplaceAllString(code, "$1$2")
	for range 4 { // getattr(getattr(…), …)
		next := re.getattr.ReplaceAllString(code, "$1.$2")
		if next == code {
			break
		}
		code = next
	}
	return code
}

// pythonBindings maps the names code binds to modules and functions:
// import os as o (o: os), from os import system as s (s: os.system), f =
// os.system (f: os.system); from os import * binds "os.*".
func pythonBindings(code string) map[string]string {
	re := pyRE()
	names := map[string]string{}
	for _, stmt := range strings.FieldsFunc(code, func(r rune) bool { return r == ';' || r == '\n' }) {
		stmt = strings.TrimSpace(stmt)
		if m := re.imp.FindStringSubmatch(stmt); m != nil {
			for _, part := range strings.Split(m[1], ",") {
				if f := strings.Fields(part); len(f) == 3 && f[1] == "as" {
					names[f[2]] = f[0]
				}
			}
		} else if m := re.fromImport.FindStringSubmatch(stmt); m != nil {
			for _, part := range strings.Split(m[2], ",") {
				switch f := strings.Fields(part); {
				case len(f) == 1 && f[0] == "*":
					names[m[1]+".*"] = ""
				case len(f) == 1:
					names[f[0]] = m[1] + "." + f[0]
				case len(f) == 3 && f[1] == "as":
					names[f[2]] = m[1] + "." + f[0]
				}
			}
		} else if m := re.assign.FindStringSubmatch(stmt); m != nil && m[1] != m[2] {
			names[m[1]] = m[2]
		}
	}
	return names
}

// quotedCommands returns the commands of the language's command quotes:
// backquotes (perl, ruby, php), perl's qx with any delimiter and ruby's %x.
// A quote that interpolates a variable is not read.
func quotedCommands(lang, code string) []string {
	var cmds []string
	if lang == "perl" || lang == "ruby" || lang == "php" {
		for parts := strings.Split(code, "`"); len(parts) >= 3; parts = parts[2:] {
			cmds = append(cmds, parts[1])
		}
	}
	var op string
	switch lang {
	case "perl":
		op = "qx"
	case "ruby":
		op = "%x"
	default:
		return cmds
	}
	for i := 0; ; {
		j := strings.Index(code[i:], op)
		if j < 0 {
			return cmds
		}
		at := i + j
		i = at + len(op)
		if op == "qx" && at > 0 && (isIdentByte(code[at-1]) || code[at-1] == '$') {
			continue // $qx, myqx
		}
		rest := code[i:]
		if op == "qx" {
			rest = strings.TrimLeft(rest, " \t")
		}
		body, ok := delimited(rest)
		if !ok {
			continue
		}
		interpolates := strings.ContainsAny(body, "$@") && rest[0] != '\'' // qx'…' does not
		if op == "%x" {
			interpolates = strings.Contains(body, "#{") || strings.Contains(body, "#$") || strings.Contains(body, "#@")
		}
		if !interpolates {
			cmds = append(cmds, body)
		}
	}
}

// delimited reads a quote-like body at the start of s: a bracket pair
// (nesting counted) or any other punctuation byte as both ends.
func delimited(s string) (string, bool) {
	if s == "" || isIdentByte(s[0]) || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '=' || s[0] == ',' || s[0] == ';' {
		return "", false
	}
	open, closing := s[0], s[0]
	if k := strings.IndexByte("([{<", open); k >= 0 {
		closing = ")]}>"[k]
	}
	depth := 0
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == closing && depth == 0:
			return s[1:i], true
		case c == closing:
			depth--
		case c == open && open != closing:
			depth++
		}
	}
	return "", false
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
