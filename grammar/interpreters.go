package grammar

import (
	"regexp"
	"strings"
)

// Interpreters: the options that take inline code (in a cluster the code
// follows the code letter: "perl -lne CODE", "python3 -Ic CODE"), the
// options that take a value (so "-W x" is not mistaken for code), and the
// modules that run code from their arguments (python -m timeit).
func interpreters() []*Spec {
	code := func(names string) Option { return arg(names, Code) }
	script := []OperandRule{{Index: 0, Effects: Read}}
	python := &Spec{Name: "python", Stdin: &Script{Lang: "python", Inline: "-c"}, Aliases: []string{"python2", "python3", "pypy", "pypy3"}, StopAtOperand: true, Refine: refinePython,
		Options: join(ops(code("-c"), arg("-m", 0), arg("-W", 0), arg("-X", 0), arg("--check-hash-based-pycs", 0), flag("-i", Interactive),
			flag("--help -h -?", DryRun), flag("--version -V", DryRun), flag("--help-env", DryRun), flag("--help-xoptions", DryRun), flag("--help-all", DryRun)),
			flags("-b -B -d -E -I -O -P -q -s -S -u -v -x -R")), Operands: script}
	perl := &Spec{Name: "perl", Stdin: &Script{Lang: "perl", Inline: "-e"}, StopAtOperand: true, Operands: script, Refine: refinePerl,
		Options: join(ops(code("-e"), code("-E"), opt("-i", 0), arg("-I", 0), arg("-M", Read), arg("-m", Read),
			Option{Names: []string{"-l"}, Arg: Optional, ValueChars: "01234567"}, Option{Names: []string{"-0"}, Arg: Optional, ValueChars: "0123456789abcdefxABCDEF"},
			opt("-x", 0), opt("-d", Code), opt("-D", 0), opt("-C", 0), opt("-F", 0), optE("-V", 0, DryRun), flag("-v", DryRun), flag("-h", DryRun),
			flag("--help", DryRun), flag("--version", DryRun)),
			flags("-n -p -a -s -T -t -U -W -X -c -w -S -u"))}
	ruby := &Spec{Name: "ruby", Stdin: &Script{Lang: "ruby", Inline: "-e"}, Aliases: []string{"jruby", "truffleruby"}, StopAtOperand: true, Operands: script,
		Options: join(ops(code("-e"), arg("-r", Read), arg("-I", 0), arg("-C", 0), arg("-E --encoding", 0), opt("-F", 0), opt("-i", 0),
			Option{Names: []string{"-0"}, Arg: Optional, ValueChars: "01234567"}, opt("-K", 0), opt("-T", 0), opt("-W", 0), opt("-x", 0),
			arg("--enable --disable", 0), flag("--version -v", DryRun), flag("--help -h", DryRun)),
			flags("-n -p -a -l -c -w -d -s -S -U --jit --yjit --verbose --debug"))}
	node := &Spec{Name: "node", Stdin: &Script{Lang: "node", Inline: "--eval"}, Aliases: []string{"nodejs"}, Long: Exact, StopAtOperand: true, Operands: script,
		Options: join(ops(code("--eval -e"), code("--print -p"), arg("--require -r", Read), arg("--import", Read), arg("--loader --experimental-loader", Read),
			arg("--input-type", 0), arg("--env-file", Read), arg("--conditions -C", 0), arg("--stack-size", 0), arg("--title", 0),
			opt("--inspect", 0), opt("--inspect-brk", 0), flag("--interactive -i", Interactive), flag("--check -c", 0),
			flag("--version -v", DryRun), flag("--help -h", DryRun)),
			flags("--test --watch --no-warnings --trace-warnings --enable-source-maps --experimental-vm-modules --experimental-strip-types"))}
	return []*Spec{
		python, perl, ruby, node,
		{Name: "deno", Long: Exact, Options: ops(code("--eval -e"), code("--print -p")),
			Subs: []*Spec{{Name: "eval", Operands: []OperandRule{{Index: 0, Effects: Code}}}, {Name: "run", Wrap: &Wrap{}}, {Name: "x", Wrap: &Wrap{}}}},
		{Name: "php", StopAtOperand: true, Operands: script, Options: join(ops(code("-r"), code("-B"), code("-R"), code("-E"), arg("-F", Read),
			arg("-f", Read), arg("-d", Config), arg("-c", Config), arg("-S", 0), arg("-t", 0), arg("-z", Code), flag("-a", Interactive),
			flag("-v --version", DryRun), flag("-h --help", DryRun)), flags("-n -q -H -s -w -l -i -m -e"))},
		{Name: "lua", Aliases: []string{"luajit", "lua5.1", "lua5.3", "lua5.4"}, StopAtOperand: true, Operands: script, Stdin: &Script{Lang: "lua", Inline: "-e"},
			Options: join(ops(code("-e"), arg("-l", Code), flag("-i", Interactive), flag("-v", DryRun)), flags("-E -W"))},
		// Tcl: exec and spawn run programs, expect's system runs sh.
		{Name: "expect", StopAtOperand: true, Operands: script, Refine: refineExpect, Stdin: &Script{Lang: "tcl", Shell: TclCommands, From: []string{"-f"}},
			Options: ops(code("-c"), arg("-f", Read), arg("-D", 0), flag("-i", Interactive), flag("-d", 0), flag("-n", 0), flag("-N", 0), flag("-b", 0), flag("-v", DryRun))},
		{Name: "tclsh", Aliases: []string{"wish", "tclsh8.6", "tclsh9.0"}, StopAtOperand: true, Operands: script, Stdin: &Script{Lang: "tcl", Shell: TclCommands},
			Options: ops(arg("-encoding", 0))},
		{Name: "Rscript", Aliases: []string{"rscript"}, StopAtOperand: true, Operands: script, Options: ops(code("-e"), arg("--default-packages", 0), flag("--version", DryRun))},
		{Name: "julia", StopAtOperand: true, Operands: script, Options: ops(code("--eval -e"), code("--print -E"), arg("--load -L", Code), arg("--project", 0), arg("--threads -t", 0), flag("--version -v", DryRun))},
		{Name: "guile", StopAtOperand: true, Operands: script, Options: ops(code("-c"), arg("-l", Code), arg("-e", 0), arg("-L", 0))},
		{Name: "groovy", StopAtOperand: true, Operands: script, Options: ops(code("-e"), arg("-cp --classpath", 0))},
		{Name: "elixir", StopAtOperand: true, Operands: script, Options: ops(code("--eval -e"), arg("-r", Code), arg("-pa -pz", 0))},
		{Name: "erl", Long: Exact, StopAtOperand: true, Options: ops(code("-eval"), arg("-s -run", Code), arg("-noshell -pa -pz", 0))},
		{Name: "osascript", StopAtOperand: true, Operands: script, Options: ops(code("-e"), arg("-l", 0))},
		{Name: "racket", StopAtOperand: true, Operands: script, Options: ops(code("--eval -e"), arg("--load -f", Code), arg("--require -t", Code))},
		{Name: "sbcl", Aliases: []string{"clisp", "ecl"}, Long: Exact, StopAtOperand: true, Options: ops(code("--eval"), arg("--load", Code), arg("--script", Read))},
		{Name: "awk", Aliases: []string{"gawk", "mawk", "nawk", "busybox-awk"}, Refine: refineAwk,
			Options: gnu(ops(arg("--file -f", Read), arg("--assign -v", Env), arg("--field-separator -F", 0), arg("--source -e", Code),
				arg("--exec -E", Read), arg("--include -i", Code), arg("--load -l", Exec), opt("--pretty-print -o", Write),
				opt("--dump-variables -d", Write), opt("--profile -p", Write), opt("--debug -D", 0), opt("--lint -L", 0)),
				flags("--characters-as-bytes -b --traditional -c --copyright -C --gen-pot -g --no-optimize -s --optimize -O --posix -P --re-interval -r --sandbox -S --use-lc-numeric -N --bignum -M --csv -k"))},
	}
}

// refineExpect: with no script operand and no -c, expect reads its
// commands from its input.
func refineExpect(inv *Invocation) {
	if len(inv.Operands) == 0 && !inv.Has("-c") && !inv.Has("-f") && !inv.Effects.Has(DryRun) {
		inv.Effects |= Interactive
	}
}

// codeModules are python modules that run code given as arguments.
var codeModules = map[string]bool{"timeit": true, "pdb": false, "code": false}

// refinePython: "-m timeit STMT…" runs its operands as code; "-m MODULE"
// otherwise runs that module with the operands as its arguments.
func refinePython(inv *Invocation) {
	m, ok := inv.Value("-m")
	if !ok {
		return
	}
	for i := range inv.Operands {
		inv.Operands[i].Effects &^= Read
	}
	if codeModules[m] {
		for i := range inv.Operands {
			inv.Operands[i].Effects |= Code
		}
	}
}

// refineAwk: without -f or -e, the first operand is the program; later
// NAME=VALUE operands are assignments.
func refineAwk(inv *Invocation) {
	hasProg := false
	for _, o := range inv.Options {
		if o.Name == "--file" || o.Name == "--source" || o.Name == "--exec" {
			hasProg = true
		}
	}
	for i := range inv.Operands {
		op := &inv.Operands[i]
		switch {
		case i == 0 && !hasProg:
			op.Effects |= Code
		case isAssign(op.Value):
			op.Effects |= Env
		default:
			op.Effects |= Read
		}
	}
}

// AwkRunsCommands reports whether awk program text can run a command or
// write a file: system() with any spacing, a pipe to or from a command
// ("print | cmd", "cmd | getline", "|&"), or output redirection.
func AwkRunsCommands(prog string) bool {
	p := stripAwkStrings(prog)
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '|':
			return true
		case '>':
			// "print > f" and "printf … >> f" write files; ">" in a
			// comparison ("$1 > 3") does not, but telling them apart needs
			// a parser: count it as a write only after print or printf.
			if strings.Contains(p[:i], "print") {
				return true
			}
		}
	}
	if idx := strings.Index(p, "system"); idx >= 0 {
		rest := strings.TrimLeft(p[idx+len("system"):], " \t\n\\")
		if strings.HasPrefix(rest, "(") {
			return true
		}
	}
	return strings.Contains(p, "getline") && strings.Contains(prog, "\"")
}

// AwkCommandStrings returns the shell commands an awk program runs that are
// spelled as string literals: the argument of system("…"), the command of
// print … | "…" (or |&) and of "…" | getline, awk handing each to sh -c;
// also such a command written as a concatenation of literals
// (system("re" "boot")) or as a variable assigned one (c = "re" "boot";
// system(c): every value assigned to it counts). Commands built otherwise
// at run time are not returned; AwkRunsCommands still reports them.
func AwkCommandStrings(prog string) []string {
	return append(awkLiteralCommands(prog), awkFoldedCommands(prog)...)
}

// awkConcat is a concatenation of string literals; awkAssign assigns one to
// a variable; awkUse is where a command is expected: NAME or a
// concatenation as system's argument, after "|" or "|&", before "| getline".
var (
	awkConcat = `(?:"(?:[^"\\\n]|\\.)*"[ \t]*)+`
	awkAssign = regexp.MustCompile(`(?:^|[;{}\s(])([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(` + awkConcat + `)(?:[;}\n)]|$)`)
	awkUse    = regexp.MustCompile(`system[ \t]*\([ \t]*([A-Za-z_][A-Za-z0-9_]*|` + awkConcat + `)[ \t]*\)|\|&?[ \t]*([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)[ \t]*\|&?[ \t]*getline`)
	awkPart   = regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"`)
)

// awkFoldedCommands returns the commands AwkCommandStrings finds through
// concatenations and variables.
func awkFoldedCommands(prog string) []string {
	join := func(concat string) string {
		var b strings.Builder
		for _, m := range awkPart.FindAllStringSubmatch(concat, -1) {
			b.WriteString(awkUnescape(m[1]))
		}
		return b.String()
	}
	vals := map[string][]string{}
	for _, m := range awkAssign.FindAllStringSubmatch(prog, -1) {
		vals[m[1]] = append(vals[m[1]], join(m[2]))
	}
	var out []string
	for _, m := range awkUse.FindAllStringSubmatch(prog, -1) {
		switch name := m[1] + m[2] + m[3]; {
		case strings.HasPrefix(m[1], `"`):
			if len(awkPart.FindAllString(m[1], -1)) > 1 {
				out = append(out, join(m[1])) // one literal: awkLiteralCommands
			}
		default:
			out = append(out, vals[name]...)
		}
	}
	return out
}

// awkLiteralCommands returns the commands spelled as one string literal.
func awkLiteralCommands(prog string) []string {
	return awkLiterals(prog, func(before, after string) bool {
		before = strings.TrimRight(before, " \t\n\\")
		after = strings.TrimLeft(after, " \t\n\\")
		runs := strings.HasSuffix(before, "|") || strings.HasSuffix(before, "|&")
		if rest, ok := strings.CutPrefix(after, "|"); ok {
			rest = strings.TrimLeft(strings.TrimPrefix(rest, "&"), " \t\n\\")
			runs = runs || strings.HasPrefix(rest, "getline") // "cmd" | getline
		}
		if strings.HasSuffix(before, "(") && (strings.HasPrefix(after, ")") || strings.HasPrefix(after, ",")) {
			fn := strings.TrimRight(before[:len(before)-1], " \t\n\\")
			runs = runs || strings.HasSuffix(fn, "system")
		}
		return runs
	})
}

// AwkOutputFiles returns the files an awk program writes that are spelled as
// one string literal: print … > "…" and print … >> "…" (or printf).
func AwkOutputFiles(prog string) []string {
	return awkLiterals(prog, func(before, _ string) bool {
		before = strings.TrimRight(before, " \t\n\\(")
		return strings.HasSuffix(before, ">") && strings.Contains(before, "print")
	})
}

// awkLiterals returns the decoded bodies of prog's string literals for
// which keep, given the program text before and after the literal (other
// literals' bodies blanked), says yes.
func awkLiterals(prog string, keep func(before, after string) bool) []string {
	p := stripAwkStrings(prog) // same length; strings keep their quotes
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] != '"' {
			continue
		}
		end := strings.IndexByte(p[i+1:], '"')
		if end < 0 {
			break
		}
		end += i + 1
		if keep(p[:i], p[end+1:]) {
			out = append(out, awkUnescape(prog[i+1:end]))
		}
		i = end
	}
	return out
}

// awkUnescape decodes the escapes of an awk string literal's body.
func awkUnescape(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(v[i]) // \" \\ \/ and the rest stand for themselves
		}
	}
	return b.String()
}

// stripAwkStrings blanks string literals and comments, keeping their
// quotes, so that "|" or "system" inside a string does not count; a
// string's content is shown as x.
func stripAwkStrings(p string) string {
	b := []byte(p)
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\' && i+1 < len(b):
			b[i], b[i+1] = 'x', 'x'
			i++
		case in && c == '"':
			in = false
		case in:
			b[i] = 'x'
		case c == '"':
			in = true
		case c == '#':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		}
	}
	return string(b)
}

// refinePerl: -M and -m name a module ("-MO=Deparse,-p"), but perl pastes
// the value into "use …;", so anything beyond a module name and its
// import list is code ("-M'strict;system q(id)'").
func refinePerl(inv *Invocation) {
	for i := range inv.Options {
		o := &inv.Options[i]
		if (o.Name != "-M" && o.Name != "-m") || !o.HasValue {
			continue
		}
		for _, c := range o.Value {
			if !(c == '_' || c == ':' || c == '=' || c == ',' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				o.ValueEffects |= Code
				break
			}
		}
	}
}
