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
// in place of the -I string (a line each), or after the command's words,
// all items at once and each alone (-n1, -L1). The hardline findings of those readings
// are kept; the command stays approval for the name it cannot know.

// runsFound applies the rules to a command whose program or arguments
// find or xargs fill in, also through the wrappers after them (xargs -I{}
// sh -c {} is read as sh -c with each input line).
func (a *analyzer) runsFound(c *shellparse.Command) {
	k := len(c.Wrappers) - 1
	for k >= 0 && c.Wrappers[k].Program != "find" && c.Wrappers[k].Program != "xargs" {
		k--
	}
	if k < 0 {
		return
	}
	w := c.Wrappers[k]
	after := c.Wrappers[k+1:]
	if w.Program == "find" {
		if strings.Contains(c.Program, "{}") {
			for _, p := range a.foundPrograms(w.Args) {
				a.keepHardline(c, foundLine(c, after, "{}", p))
			}
		}
		return
	}
	text := a.pipedText(c)
	if text == "" && c.Context.Payload > 0 {
		text = a.payloadInput(c)
	}
	if repl := xargsReplace(w.Args); repl != "" {
		// -I reads whole lines, blanks at their start dropped.
		for _, it := range strings.Split(text, "\n") {
			if it = strings.TrimLeft(it, " \t"); it != "" {
				a.keepHardline(c, foundLine(c, after, repl, it))
			}
		}
		return
	}
	items := strings.Fields(text)
	if len(items) == 0 {
		return
	}
	a.keepHardline(c, foundLine(c, after, "", strings.Join(quotedAll(items), " ")))
	for _, it := range items {
		a.keepHardline(c, foundLine(c, after, "", shellQuote(it)))
	}
}

// payloadInput returns what is piped into the xargs whose shell payload
// c is (echo 'rm -rf ~' | xargs -I{} sh -c {}): the payload's commands are
// not pipeline stages themselves, so the stage before is the command just
// before c's source text, when only "| xargs …" stands between them.
func (a *analyzer) payloadInput(c *shellparse.Command) string {
	var prev *shellparse.Command
	for i := range a.script.Commands {
		p := &a.script.Commands[i]
		if p.Span.End <= c.Span.Start && p.Context.Payload == 0 && (prev == nil || p.Span.End > prev.Span.End) {
			prev = p
		}
	}
	src := a.script.Source
	if prev == nil || prev.Context.Pipeline == 0 || prev.Context.Pipeline >= prev.Context.PipelineLen || c.Span.Start > len(src) {
		return ""
	}
	between := strings.TrimLeft(src[prev.Span.End:c.Span.Start], " \t")
	if !strings.HasPrefix(between, "|") || strings.ContainsAny(between[1:], "|;&\n") {
		return ""
	}
	stage := *c
	stage.Context.Pipeline, stage.Context.PipelineLen = prev.Context.Pipeline+1, prev.Context.PipelineLen
	return a.pipedText(&stage)
}

// foundLine is the command line find or xargs runs — the wrappers after
// it, then c — with repl replaced by value in every word (find's "{}",
// xargs' -I string), or with value appended when repl is "". A word of c
// with an expansion keeps its source text (~, $HOME); value is a literal.
func foundLine(c *shellparse.Command, after []shellparse.Wrapper, repl, value string) string {
	var b strings.Builder
	word := func(w string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if repl != "" {
			w = strings.ReplaceAll(w, repl, value)
		}
		b.WriteString(shellQuote(w))
	}
	for _, wr := range after {
		word(wr.Program)
		for _, arg := range wr.Args {
			word(arg)
		}
	}
	word(c.Program)
	for _, w := range c.Args {
		if w.Literal || repl != "" && strings.Contains(w.Value, repl) {
			word(w.Value)
			continue
		}
		b.WriteByte(' ')
		b.WriteString(w.Raw)
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
