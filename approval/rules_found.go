package approval

import (
	"path"
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// Programs named at run time by find and xargs. "find /sbin/reboot -exec
// {} \;" runs each path find visits as the program, and "echo reboot |
// xargs -I{} {}" or "ls /sbin/reboot | xargs sh -c" runs a command made of
// the words on its input. runsFound rates such a command as each program
// it can become: for find, the start points themselves and, under a start
// point, every known program name its -name/-iname tests accept (with no
// name test, all of them under /, /usr, /sbin … only); for xargs, its known input (echo, printf, ls,
// which and command -v with literal arguments) put where xargs puts it:
// in place of the -I string, or after the command's words, all items at
// once and each alone (-n1, -L1). The hardline findings of those readings
// are kept; the command stays approval for the name it cannot know.

// runsFound applies the rules to a command whose program or arguments
// find or xargs fill in.
func (a *analyzer) runsFound(c *shellparse.Command) {
	if len(c.Wrappers) == 0 {
		return
	}
	switch w := c.Wrappers[len(c.Wrappers)-1]; w.Program {
	case "find":
		if strings.Contains(c.Program, "{}") {
			for _, p := range a.foundPrograms(w.Args) {
				a.keepHardline(c, foundLine(c, "{}", p))
			}
		}
	case "xargs":
		items := strings.Fields(a.pipedText(c))
		if len(items) == 0 {
			return
		}
		if repl := xargsReplace(w.Args); repl != "" {
			for _, it := range items {
				a.keepHardline(c, foundLine(c, repl, it))
			}
			return
		}
		a.keepHardline(c, foundLine(c, "", strings.Join(quotedAll(items), " ")))
		for _, it := range items {
			a.keepHardline(c, foundLine(c, "", shellQuote(it)))
		}
	}
}

// foundLine is c's command line with repl replaced by value in every word
// (find's "{}", xargs' -I string), or with value appended when repl is "".
// A word with an expansion keeps its source text (~, $HOME); value is a
// literal.
func foundLine(c *shellparse.Command, repl, value string) string {
	prog := c.Program
	if repl != "" {
		prog = strings.ReplaceAll(prog, repl, value)
	}
	var b strings.Builder
	b.WriteString(shellQuote(prog))
	for _, w := range c.Args {
		b.WriteByte(' ')
		switch {
		case repl != "" && strings.Contains(w.Value, repl):
			b.WriteString(shellQuote(strings.ReplaceAll(w.Value, repl, value)))
		case w.Literal:
			b.WriteString(shellQuote(w.Value))
		default:
			b.WriteString(w.Raw)
		}
	}
	if repl == "" {
		b.WriteByte(' ')
		b.WriteString(value)
	}
	return b.String()
}

func quotedAll(ws []string) []string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = shellQuote(w)
	}
	return q
}

func shellQuote(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// foundPrograms returns the paths find, given args, may run as "{}": its
// start points, and below each one the known program names that its name
// tests accept (a test that is not a name test does not narrow them); with
// no name test, only below a directory of the system's programs.
func (a *analyzer) foundPrograms(args []string) []string {
	starts, _, _, _ := findActions(args)
	if len(starts) == 0 {
		starts = []string{"."}
	}
	var patterns []string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-name", "-iname":
			patterns = append(patterns, args[i+1])
		case "-path", "-ipath", "-wholename", "-iwholename":
			patterns = append(patterns, path.Base(args[i+1]))
		}
	}
	var out []string
	for _, s := range starts {
		out = append(out, s)
		if len(patterns) == 0 && !holdsPrograms(a.fold(s)) {
			continue // ./build/*: programs nobody can name here
		}
		for _, name := range knownProgramNames() {
			ok := true
			for _, p := range patterns {
				m, err := path.Match(strings.ToLower(p), strings.ToLower(name))
				ok = ok && err == nil && m
			}
			if ok {
				out = append(out, path.Join(s, name))
			}
		}
	}
	return out
}

// holdsPrograms reports whether directory dir is, or holds, a directory
// of the system's programs.
func holdsPrograms(dir string) bool {
	switch path.Clean(dir) {
	case "/", "/usr", "/usr/local", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin":
		return true
	}
	return false
}

// knownProgramNames are the names of the grammar's programs (and their
// aliases) with an effect a hardline rule rates.
func knownProgramNames() []string {
	programNamesOnce.Do(func() {
		const hard = grammar.Format | grammar.DeviceWrite | grammar.Delete | grammar.Power | grammar.KillAll | grammar.Kill
		for _, s := range grammar.Programs() {
			if !specHas(s, hard) {
				continue
			}
			programNames = append(programNames, s.Name)
			programNames = append(programNames, s.Aliases...)
		}
	})
	return programNames
}

var (
	programNamesOnce sync.Once
	programNames     []string
)

// specHas reports whether a program, one of its options, operands or
// subcommands has any of effects e.
func specHas(s *grammar.Spec, e grammar.Effect) bool {
	if s.Effects.Any(e) {
		return true
	}
	for _, o := range s.Options {
		if o.Effects.Any(e) || o.Value.Any(e) {
			return true
		}
	}
	for _, op := range s.Operands {
		if op.Effects.Any(e) {
			return true
		}
	}
	for _, sub := range s.Subs {
		if specHas(sub, e) {
			return true
		}
	}
	return false
}

// xargsReplace returns the replace string xargs was given (-I R, -IR,
// -i, --replace[=R]), or "".
func xargsReplace(args []string) string {
	for i, w := range args {
		switch {
		case w == "-I" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(w, "-I") && len(w) > 2:
			return w[2:]
		case w == "-i" || w == "--replace":
			return "{}"
		case strings.HasPrefix(w, "-i") && len(w) > 2:
			return w[2:]
		case strings.HasPrefix(w, "--replace="):
			return strings.TrimPrefix(w, "--replace=")
		}
	}
	return ""
}
