package approval

import (
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// Shells and interpreters. Inline code given to an interpreter cannot be
// read by a shell parser, so it needs approval whatever it says. The one
// structural exception is a fork loop: a payload that calls fork inside a
// loop (python "while 1: os.fork()", perl "fork while 1", ruby "loop { fork }")
// is recognised from the payload word and is hardline. That check is a
// keyword test on the single, literal payload word (the word "fork" and a
// loop keyword), so an obfuscated payload still gets approval, never allow.

// shells are programs that run shell scripts.
var shells = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
		"fish": true, "yash": true, "posh": true, "csh": true, "tcsh": true, "rbash": true,
	}
})

func isShell(prog string) bool { return shells()[prog] }

// interpName normalises an interpreter name: lower case, no ".exe", no
// version suffix ("python3.11" and "ruby3.2" become "python" and "ruby").
func interpName(prog string) string {
	p := strings.ToLower(prog)
	p = strings.TrimSuffix(p, ".exe")
	if n := len(p); n > 0 && (p[n-1] == '.' || (p[n-1] >= '0' && p[n-1] <= '9')) {
		p = strings.TrimRight(p, "0123456789.") // TrimRight builds its set each call
	}
	if p == "" {
		return strings.ToLower(prog)
	}
	return p
}

// codeFlags maps an interpreter to its inline-code options.
var codeFlags = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"python": {"-c"}, "pypy": {"-c"}, "perl": {"-e", "-E"}, "ruby": {"-e"}, "jruby": {"-e"},
		"node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"},
		"bun": {"-e", "--eval", "-p", "--print"}, "deno": {"-e", "--eval"}, "php": {"-r", "-B", "-R", "-E"},
		"lua": {"-e"}, "luajit": {"-e"}, "rscript": {"-e"}, "julia": {"-e", "-E", "--eval", "--print"},
		"guile": {"-c"}, "groovy": {"-e"}, "elixir": {"-e", "--eval"}, "erl": {"-eval"}, "osascript": {"-e"},
		"tclsh": nil, "wish": nil, "irb": nil, "jshell": nil, "racket": {"-e"}, "sbcl": {"--eval"},
		"awk": nil, "gawk": nil, "mawk": nil, "nawk": nil, "busybox": nil, "pwsh": nil, "powershell": nil, "cmd": nil,
	}
})

func isInterpreter(name string) bool {
	_, ok := codeFlags()[name]
	return ok
}

// shellHasC reports whether a shell's options include -c (alone or in a
// cluster such as -lc, -ce, -exc), before the first operand or "--".
func shellHasC(args []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || v == "-" || len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			return false
		}
		switch v {
		case "-o", "+o", "-O", "+O", "--rcfile", "--init-file":
			i++
			continue
		}
		if v[0] == '-' && v[1] == '-' {
			if v == "--command" {
				return true
			}
			continue
		}
		if v[0] == '-' && strings.IndexByte(v[1:], 'c') >= 0 {
			return true
		}
	}
	return false
}

// plainShells are the shells whose -c script is read as the commands it
// holds: bash, and POSIX sh and dash, whose grammar is bash's less a few
// forms. zsh, ksh, fish … parse and expand differently from the parser we
// use, so their scripts keep RuleShellPayload.
var plainShells = map[string]bool{"bash": true, "sh": true, "dash": true}

// plainShellC reports whether shell wrapper w runs c as part of a script
// that is exactly what it says: w is a plain shell given "-c" and nothing
// else, and c gets no run-time arguments (none after the script, none
// from xargs or find -exec: the script's $1, $@ … would be data we do not
// see). The script's commands then carry their own verdicts, as if typed
// at the prompt: bash -c 'ls' is ls. Any other shell option keeps the
// payload rule, because several change how the script is read or run
// (-i expands aliases and reads ~/.bashrc, -l the profile, -k takes
// assignments anywhere, -O/-o change the grammar, -n runs nothing).
func plainShellC(w *shellparse.Wrapper, c *shellparse.Command) bool {
	return plainShells[w.Program] && len(w.Args) == 1 && w.Args[0] == "-c" && !c.Context.ExtraArgs
}

// inlineCode returns the inline code given to interpreter name, if any.
func inlineCode(name string, args []string) (string, bool) {
	switch name {
	case "pwsh", "powershell":
		for i, v := range args {
			l := strings.ToLower(strings.TrimLeft(v, "-/"))
			if l != "" && strings.IndexByte("cef", l[0]) >= 0 && v != l {
				if i+1 < len(args) {
					return strings.Join(args[i+1:], " "), true
				}
				return "", true
			}
		}
		return "", false
	case "cmd":
		for i, v := range args {
			if l := strings.ToLower(v); l == "/c" || l == "/k" || l == "/r" {
				return strings.Join(args[i+1:], " "), true
			}
		}
		return "", false
	case "awk", "gawk", "mawk", "nawk":
		if hasShort(args, "f") {
			return "", false
		}
		prog, _ := firstOperand(args, "-v", "-F", "--assign", "--field-separator")
		if strings.Contains(prog, "system(") || strings.Contains(prog, "getline") || strings.Contains(prog, "|&") ||
			strings.Contains(prog, `| "`) || strings.Contains(prog, `|"`) {
			return prog, true
		}
		return "", false
	case "deno":
		if sub, rest := firstOperand(args); sub == "eval" {
			code, _ := firstOperand(rest)
			return code, true
		}
	}
	flags := codeFlags()[name]
	for i := 0; i < len(args); i++ {
		v := args[i]
		if v == "--" || len(v) < 2 || v[0] != '-' {
			return "", false // script file or end of options
		}
		for _, f := range flags {
			if v == f {
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", true
			}
			if strings.HasPrefix(f, "--") && strings.HasPrefix(v, f+"=") {
				return v[len(f)+1:], true
			}
		}
		if v[1] == '-' {
			continue
		}
		// A short cluster: -Ic, -pe, -lne, -Sc. The code follows the
		// letter, in the same word or in the next one.
		for j := 1; j < len(v); j++ {
			ch := v[j]
			for _, f := range flags {
				if len(f) == 2 && f[1] == ch {
					if j+1 < len(v) {
						return v[j+1:], true
					}
					if i+1 < len(args) {
						return args[i+1], true
					}
					return "", true
				}
			}
			if (name == "python" || name == "pypy") && (ch == 'm' || ch == 'W' || ch == 'X' || ch == 'Q') {
				return "", false // -m runs a module; -W/-X take a value
			}
			if (name == "perl" || name == "ruby") && strings.IndexByte("iIMmrx0lCdDTEWK", ch) >= 0 && ch != 'E' {
				break // the rest of the cluster is this option's value
			}
		}
	}
	return "", false
}

// isForkLoop reports whether an interpreter payload calls fork in a loop.
func isForkLoop(code string) bool {
	if !strings.Contains(code, "fork") {
		return false
	}
	for _, k := range [...]string{"while", "for ", "for(", "loop", "until", "repeat", "goto"} {
		if strings.Contains(code, k) {
			return true
		}
	}
	return false
}

// interpreter applies the rules for shells and interpreters. Inline code of
// the interpreters package grammar knows was judged by invocation; the
// others (pwsh, cmd, tclsh …) are read here.
func (a *analyzer) interpreter(c *shellparse.Command, args []string, inv *grammar.Invocation) {
	name := interpName(c.Program)
	if isShell(name) {
		switch {
		case shellHasC(args):
			if !a.opaqueCovers(c.Span) {
				a.hitCmd(RuleShellPayload, c)
			}
		case stdinScript(args):
			a.stdinFed(c, "", nil)
		}
		return
	}
	if !isInterpreter(name) {
		return
	}
	if name == "perl" || name == "ruby" {
		a.inPlace(c, args, name)
	}
	if name == "python" || name == "pypy" {
		if m, ok := optValue(args, "-m"); ok && (strings.HasPrefix(m, "hermes") || strings.HasPrefix(m, "tether")) {
			a.hitCmd(RuleControlPlane, c)
		}
	}
	if inv != nil && inv.Spec != nil {
		if hasCode(inv) || inv.Effects.Has(grammar.Interactive) {
			return
		}
		if stdinScript(args) && inv.Spec.Name != "awk" {
			a.stdinFed(c, name, inv)
		}
		return
	}
	if code, ok := inlineCode(name, args); ok {
		if isForkLoop(code) {
			a.hitCmd(RuleForkBomb, c)
		}
		if !a.opaqueCovers(c.Span) {
			a.hitCmd(RuleInterpPay, c)
		}
		return
	}
	if name == "pwsh" || name == "powershell" || name == "cmd" || name == "busybox" {
		return
	}
	if stdinScript(args) {
		a.stdinFed(c, name, nil)
	}
}

// hasCode reports whether an invocation was given inline code.
func hasCode(inv *grammar.Invocation) bool {
	for _, o := range inv.Options {
		if o.HasValue && o.ValueEffects.Has(grammar.Code) {
			return true
		}
	}
	for _, op := range inv.Operands {
		if op.Effects.Has(grammar.Code) {
			return true
		}
	}
	return false
}

// stdinScript reports whether a shell or interpreter reads its script from
// stdin: no script operand, or "-" / "-s".
func stdinScript(args []string) bool {
	for _, v := range args {
		if v == "-" || v == "-s" {
			return true
		}
		if len(v) > 0 && v[0] != '-' {
			return false
		}
	}
	return true
}

// stdinFed flags a shell or interpreter whose script arrives on stdin from a
// pipe or a heredoc (shellparse reports these as opaque segments; this is
// the catalog's own check, so the verdict does not depend on one place).
func (a *analyzer) stdinFed(c *shellparse.Command, name string, inv *grammar.Invocation) {
	a.keepHardline(c, a.fedCommands(c, name, inv))
	for i := range c.Redirs {
		r := &c.Redirs[i]
		if r.Mode != shellparse.RedirHeredoc {
			continue
		}
		if name != "" && isForkLoop(r.Body) {
			a.hit(RuleForkBomb, c.Text, c.Span)
		}
		if !a.opaqueCovers(c.Span) {
			a.hit(RuleHeredocInt, c.Text, c.Span)
		}
		return
	}
	if c.Context.Pipeline > 1 && !a.opaqueCovers(c.Span) {
		a.hit(RulePipeShell, c.Text, c.Span)
	}
}

// fedCommands returns the shell text that does what c does with its
// standard input, when that input is literal text: a heredoc or
// here-string, or the output of echo/printf with literal arguments piped
// into it. A shell (name "" or a shell's name) or script runs all of it;
// a program the grammar gives a Script (crontab, gdb, ed, sqlite3,
// python3 …) runs what grammar.Invocation.ScriptCommand says, which is
// then rated with the program's own readers. Other programs: "".
func (a *analyzer) fedCommands(c *shellparse.Command, name string, inv *grammar.Invocation) string {
	text := ""
	for i := range c.Redirs {
		if c.Redirs[i].Mode == shellparse.RedirHeredoc {
			text = c.Redirs[i].Body
		}
	}
	if text == "" && c.Context.Pipeline > 1 {
		text = a.pipedText(c)
	}
	if text == "" {
		return ""
	}
	if name == "" || isShell(interpName(name)) || name == "script" {
		return text
	}
	if inv == nil || inv.Spec == nil {
		return ""
	}
	for _, w := range c.Args {
		if !w.Literal {
			return "" // the command line itself is not known
		}
	}
	return inv.ScriptCommand(text)
}

// pipedText returns what the command before c in its pipeline prints, when
// it is echo or printf with literal arguments, or ls or which given
// literal names (each printed on its own line: ls prints a file operand's
// name as given, which the path of the program it names); "" otherwise.
func (a *analyzer) pipedText(c *shellparse.Command) string {
	var prev *shellparse.Command
	for i := range a.script.Commands {
		p := &a.script.Commands[i]
		if p.Context.Pipeline == c.Context.Pipeline-1 && p.Context.PipelineLen == c.Context.PipelineLen && p.Span.End <= c.Span.Start {
			prev = p // the last such command before c
		}
	}
	if prev == nil {
		return ""
	}
	if prev.Program == "ls" || prev.Program == "which" {
		var names []string
		for _, w := range prev.Args {
			if !w.Literal {
				return ""
			}
			if !strings.HasPrefix(w.Value, "-") {
				names = append(names, w.Value)
			}
		}
		return strings.Join(names, "\n")
	}
	if prev.Program != "echo" && prev.Program != "printf" {
		return ""
	}
	var b strings.Builder
	for i, w := range prev.Args {
		if !w.Literal {
			return ""
		}
		if i == 0 && prev.Program == "echo" && strings.HasPrefix(w.Value, "-") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Value)
	}
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", "%s", "").Replace(b.String())
}
