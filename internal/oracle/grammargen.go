package oracle

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tether-dev/tether/grammar"
)

// The grammar-driven half of the generator walks package grammar's data:
// every program, subcommand and option it knows with an effect the oracle
// can see is written the ways the program really accepts it, without a
// hand-written list of programs or options. The grammar only supplies the
// vocabulary (names, which options take a value, what a value is); the
// oracle's stand-ins and canaries say what each command did, so a grammar
// entry that misreads a program (an option it thinks takes a value, a
// listing option it thinks makes the call harmless) is found by the
// comparison, not assumed.

// chooser is where the generator's decisions come from: a seeded PRNG, or
// the bytes of a fuzz input (byteChooser).
type chooser interface {
	// IntN returns a choice in [0, n); n > 0.
	IntN(n int) int
}

// byteChooser reads decisions from fuzz input, one or two bytes each; an
// exhausted input chooses 0, so every input is a valid, finite command.
type byteChooser struct{ b []byte }

func (c *byteChooser) IntN(n int) int {
	if n <= 1 || len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	if n > 256 && len(c.b) > 0 {
		v = v<<8 | int(c.b[0])
		c.b = c.b[1:]
	}
	return v % n
}

// Effects the oracle can observe, on an invocation and on a value.
const (
	invEffects = grammar.Delete | grammar.Recursive | grammar.Force | grammar.Format | grammar.DeviceWrite |
		grammar.Truncate | grammar.Power | grammar.KillAll | grammar.Kill
	valueEffects = grammar.Exec | grammar.Code | grammar.Write | grammar.Target | grammar.Chdir
)

// vocab is what the generator takes from the grammar, built once.
type vocab struct {
	// effectful are the programs with an observable effect somewhere in
	// their spec (options, operands, subcommands, environment); all are
	// every program.
	effectful, all []*grammar.Spec
	// wrappers are the programs that run a command named on their line.
	wrappers []*grammar.Spec
}

var theVocab = sync.OnceValue(func() *vocab {
	v := &vocab{}
	for _, s := range grammar.Programs() {
		v.all = append(v.all, s)
		if effectful(s) {
			v.effectful = append(v.effectful, s)
		}
		if s.Wrap != nil {
			v.wrappers = append(v.wrappers, s)
		}
	}
	return v
})

// effectful reports whether s, or a subcommand, has an effect the oracle
// can observe.
func effectful(s *grammar.Spec) bool {
	if s.Effects.Any(invEffects) || s.Refine != nil || s.Wrap != nil {
		return true
	}
	for _, o := range s.Options {
		if o.Effects.Any(invEffects) || o.Value.Any(valueEffects) {
			return true
		}
	}
	for _, r := range s.Operands {
		if r.Effects.Any(valueEffects) || r.Invocation.Any(invEffects) || len(r.Values) > 0 || r.Prefix != "" {
			return true
		}
	}
	for _, e := range s.Env {
		if e.Any(grammar.Exec | grammar.Code) {
			return true
		}
	}
	return slices.ContainsFunc(s.Subs, effectful)
}

// gen writes one command. inDev is set when the command runs in /dev
// (a cd before it, a wrapper's chdir option): targets are then named
// relative to it.
type gen struct {
	r     chooser
	inDev bool
	depth int
	// posix is set when the command runs with POSIXLY_CORRECT in its
	// environment (posixForms): options after operands are then written
	// more often, a dry-run one above all, which getopt reads as operands.
	posix bool
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) coin(n int) bool         { return g.r.IntN(n) == 0 }

// Exec values: commands that are hardline when they really run.
var execPayloads = []string{"reboot", "/sbin/reboot", "rm -rf ~", "dd if=/dev/zero of=/dev/sda count=1", "systemctl reboot", "kill -9 -1"}

// Code values: one call to run a program, in the spellings of the
// languages the grammar's interpreters and editors speak (each one a
// no-op or an error in the others), and harmless code.
var codePayloads = []string{`system("reboot")`, `system "reboot"`, `BEGIN{system("reboot")}`, `import os; os.system("reboot")`,
	`require("child_process").execSync("reboot")`, `os.execute("reboot")`, `exec("reboot")`, `!reboot`, `.shell reboot`, `e reboot`,
	`print(1)`, `1`, `BEGIN{print 1}`}

// target names something an effect can act on: a block device (any of its
// names), a home, a system directory, or a harmless file.
// Now and then it is written as a choice expansion (choice), which only
// yields it in some state of a variable.
func (g *gen) target() string {
	t := g.pick([]string{"./build", "notes.txt", "README.md", "app.log", "/tmp/x"})
	switch {
	case g.inDev:
		t = g.pick(devRel)
	default:
		switch g.r.IntN(6) {
		case 0, 1, 2:
			t = g.pick(devs)
		case 3:
			t = g.pick(homes)
		case 4:
			t = g.pick(sysDirs)
		}
	}
	if g.coin(20) {
		return choice(g.r, t)
	}
	return t
}

// value is a value for an option or operand that is v.
func (g *gen) value(v grammar.Effect) string {
	switch {
	case v.Has(grammar.Exec):
		return shellWord(g.execPayload())
	case v.Has(grammar.Code):
		return shellWord(g.pick(codePayloads))
	case v.Has(grammar.Write), v.Has(grammar.Target):
		return g.target()
	case v.Has(grammar.Chdir):
		if g.coin(2) {
			g.inDev = true
			return "/dev"
		}
		return "/work"
	case v.Has(grammar.Env):
		return "X=1"
	case v.Any(grammar.Read | grammar.Config):
		return "README.md"
	}
	// A disk as any option's value: a tool whose grammar gives this
	// option no value (or whose option is really a flag) reads it as an
	// operand, as mke2fs reads "-F /dev/sda".
	if g.coin(4) {
		return g.target()
	}
	return g.pick([]string{"1", "5", "x", "ext4"})
}

// execPayload is a command for an Exec value: a generated one, or a plain
// hardline one (and always plain below the top level).
func (g *gen) execPayload() string {
	if g.depth == 0 && g.coin(2) {
		g.depth++
		defer func() { g.depth-- }()
		inDev := g.inDev
		defer func() { g.inDev = inDev }()
		return g.invocation(g.pickProgram())
	}
	return g.pick(execPayloads)
}

// shellWord quotes s as one shell word when it needs quoting.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;()<>*?[]{}~#!=") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (g *gen) pickProgram() *grammar.Spec {
	v := theVocab()
	if g.coin(6) {
		return v.all[g.r.IntN(len(v.all))]
	}
	return v.effectful[g.r.IntN(len(v.effectful))]
}

// progWord is the program's name (or an alias), quoted or pathed one of
// the ways bash resolves to the same program.
func (g *gen) progWord(s *grammar.Spec) string {
	name := s.Name
	if len(s.Aliases) > 0 && g.coin(3) {
		name = g.pick(s.Aliases)
	}
	switch g.r.IntN(10) {
	case 0:
		return "/usr/bin/" + name
	case 1:
		return "/sbin/" + name
	case 2:
		return "command " + quote(g.r, name)
	}
	return quote(g.r, name)
}

// spell writes option o of s with value val the ways getopt accepts it:
// any of its names, a long name abbreviated to a unique prefix (for
// programs with getopt_long's rule), a value attached ("-n5", "--n=5") or
// in the next word.
func (g *gen) spell(s *grammar.Spec, o *grammar.Option, val string) []string {
	name := g.pick(o.Names)
	short := len(name) == 2 && name[0] == '-'
	if strings.HasPrefix(name, "--") && s.Long == grammar.Prefix && g.coin(2) {
		name = abbreviate(s, o, name, g.r)
	}
	switch o.Arg {
	case grammar.Required:
		switch {
		case short && g.coin(2):
			return []string{name + val}
		case strings.HasPrefix(name, "--") && g.coin(2):
			return []string{name + "=" + val}
		}
		return []string{name, val}
	case grammar.Optional:
		if g.coin(2) {
			return []string{name}
		}
		if short {
			return []string{name + val}
		}
		return []string{name + "=" + val}
	}
	return []string{name}
}

// abbreviate returns a prefix of long option name that s still resolves
// to o (getopt_long's rule), of a random length; name when none is shorter.
func abbreviate(s *grammar.Spec, o *grammar.Option, name string, r chooser) string {
	var ok []string
	for n := 3; n < len(name); n++ {
		if s.Option(name[:n]) == o {
			ok = append(ok, name[:n])
		}
	}
	if len(ok) == 0 {
		return name
	}
	return ok[r.IntN(len(ok))]
}

// invocation writes one call of s: global options and a subcommand path,
// options with observable effects (and a listing or dry-run option beside
// them now and then), other options, short flags clustered, "--", operands
// by the spec's operand rules, environment the program reads.
func (g *gen) invocation(s *grammar.Spec) string {
	words := []string{g.progWord(s)}
	var env []string
	cur := s
	for {
		env = append(env, g.envAssigns(cur)...)
		if len(cur.Subs) == 0 || (cur.Effects.Any(invEffects) && g.coin(3)) {
			break
		}
		// Value-taking global options sit before the subcommand.
		for range g.r.IntN(3) {
			if o := g.anyOption(cur, grammar.Required); o != nil {
				words = append(words, g.spell(cur, o, g.value(o.Value))...)
			}
		}
		sub := g.pickSub(cur)
		name := sub.Name
		if len(sub.Aliases) > 0 && g.coin(3) {
			name = g.pick(sub.Aliases)
		}
		words = append(words, name)
		cur = sub
	}
	var opts [][]string
	var cluster []string // short flags to cluster, without their dash
	add := func(o *grammar.Option, val string) {
		w := g.spell(cur, o, val)
		if len(w) == 1 && g.coin(25) {
			// "rm ${OPT:+-rf} ~": an option only some states give.
			opts = append(opts, []string{choice(g.r, w[0])})
			return
		}
		if len(w) == 1 && o.Arg == grammar.NoArg && len(w[0]) == 2 && w[0][0] == '-' && g.coin(2) {
			cluster = append(cluster, w[0][1:])
			return
		}
		opts = append(opts, w)
	}
	for range 1 + g.r.IntN(2) {
		if o := g.effectOption(cur); o != nil {
			add(o, g.value(o.Value))
		}
	}
	if g.coin(5) {
		if o := g.optionWith(cur, grammar.DryRun|grammar.NoCommand); o != nil {
			add(o, g.value(o.Value))
		}
	}
	for range g.r.IntN(3) {
		if o := g.anyOption(cur, 0); o != nil {
			add(o, g.value(o.Value))
		}
	}
	// A device after any option at all (mke2fs -F /dev/sda).
	if g.coin(5) {
		if o := g.anyOption(cur, 0); o != nil {
			opts = append(opts, []string{g.pick(o.Names), g.target()})
		}
	}
	if len(cluster) > 0 {
		w := "-" + strings.Join(cluster, "")
		// A value-taking short option may end the cluster, its value
		// attached or in the next word.
		if o := g.anyShort(cur, grammar.Required); o != nil && g.coin(3) {
			val := g.value(o.Value)
			w += o.Names[slices.IndexFunc(o.Names, isShort)][1:]
			if g.coin(2) {
				opts = append(opts, []string{w + val})
			} else {
				opts = append(opts, []string{w, val})
			}
		} else {
			opts = append(opts, []string{w})
		}
	}
	g.shuffle(opts)
	operands := g.operands(cur)
	// GNU tools permute: an option may follow the operands. Under
	// POSIXLY_CORRECT glibc's getopt does not: "shred /dev/sda --help"
	// shreds.
	var after []string
	switch {
	case g.posix && len(operands) > 0 && g.coin(2):
		if o := g.optionWith(cur, grammar.DryRun|grammar.NoCommand); o != nil {
			after = g.spell(cur, o, g.value(o.Value))
		} else if len(opts) > 0 {
			after, opts = opts[len(opts)-1], opts[:len(opts)-1]
		}
	case !cur.StopAtOperand && len(opts) > 1 && len(operands) > 0 && g.coin(6):
		after, opts = opts[len(opts)-1], opts[:len(opts)-1]
	}
	for _, o := range opts {
		words = append(words, o...)
	}
	if len(operands) > 0 && g.coin(5) {
		words = append(words, "--")
	}
	words = append(words, operands...)
	words = append(words, after...)
	return strings.Join(append(env, words...), " ")
}

func isShort(n string) bool { return len(n) == 2 && n[0] == '-' && n[1] != '-' }

// operands writes the operands cur's rules give effects to.
func (g *gen) operands(cur *grammar.Spec) []string {
	var out []string
	for _, r := range cur.Operands {
		switch {
		case r.Prefix != "":
			out = append(out, r.Prefix+g.value(r.Effects|grammar.Target))
		case len(r.Values) > 0:
			keys := make([]string, 0, len(r.Values))
			for k := range r.Values {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for len(out) < r.Index {
				out = append(out, g.target())
			}
			out = append(out, g.pick(keys))
		case r.All:
			for len(out) < r.From {
				out = append(out, "x")
			}
			for range 1 + g.r.IntN(2) {
				out = append(out, g.value(r.Effects))
			}
		case r.Index >= 0:
			for len(out) < max(r.Index, r.Min-1) {
				out = append(out, g.pick([]string{"README.md", "x", "."}))
			}
			out = append(out, g.value(r.Effects))
		default: // the last operand
			for len(out) < max(1, r.Min-1) {
				out = append(out, "README.md")
			}
			out = append(out, g.value(r.Effects))
		}
	}
	if len(cur.Operands) == 0 && (cur.Effects.Any(invEffects) || g.coin(3)) {
		out = append(out, g.target())
	}
	return out
}

// envAssigns writes, now and then, an environment variable cur reads that
// runs a program: before the command, or as a make-style operand.
func (g *gen) envAssigns(cur *grammar.Spec) []string {
	if len(cur.Env) == 0 || !g.coin(3) {
		return nil
	}
	keys := make([]string, 0, len(cur.Env))
	for k, e := range cur.Env {
		if e.Any(grammar.Exec | grammar.Code) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return []string{g.pick(keys) + "=" + shellWord(g.pick(execPayloads))}
}

func (g *gen) pickSub(s *grammar.Spec) *grammar.Spec {
	var eff []*grammar.Spec
	for _, c := range s.Subs {
		if effectful(c) {
			eff = append(eff, c)
		}
	}
	if len(eff) > 0 && !g.coin(5) {
		return eff[g.r.IntN(len(eff))]
	}
	return s.Subs[g.r.IntN(len(s.Subs))]
}

// effectOption picks an option of s with an observable effect, or nil.
func (g *gen) effectOption(s *grammar.Spec) *grammar.Option {
	return g.pickOption(s, func(o *grammar.Option) bool {
		return o.Effects.Any(invEffects) || o.Value.Any(valueEffects)
	})
}

func (g *gen) optionWith(s *grammar.Spec, e grammar.Effect) *grammar.Option {
	return g.pickOption(s, func(o *grammar.Option) bool { return o.Effects.Any(e) })
}

// anyOption picks any option of s (one taking a value when arg is
// Required), or nil.
func (g *gen) anyOption(s *grammar.Spec, arg grammar.ArgKind) *grammar.Option {
	return g.pickOption(s, func(o *grammar.Option) bool { return arg == 0 || o.Arg == arg })
}

func (g *gen) anyShort(s *grammar.Spec, arg grammar.ArgKind) *grammar.Option {
	return g.pickOption(s, func(o *grammar.Option) bool { return o.Arg == arg && slices.ContainsFunc(o.Names, isShort) })
}

func (g *gen) pickOption(s *grammar.Spec, ok func(*grammar.Option) bool) *grammar.Option {
	var idx []int
	for i := range s.Options {
		if ok(&s.Options[i]) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	return &s.Options[idx[g.r.IntN(len(idx))]]
}

func (g *gen) shuffle(xs [][]string) {
	for i := len(xs) - 1; i > 0; i-- {
		j := g.r.IntN(i + 1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// wrapperOperands are the values given to a wrapper's own operands (the
// ones before its command), by wrapper; others get "5".
var wrapperOperands = map[string]string{"chroot": "/", "setarch": "x86_64", "taskset": "1", "chrt": "0", "gosu": "root",
	"faketime": "-1d", "su-exec": "root"}

// wrap puts cmd (one simple command) inside a wrapper the grammar knows,
// written with some of its options (a directory change, environment
// assignments, its own operands, "--").
func (g *gen) wrap(cmd string) string {
	v := theVocab()
	w := v.wrappers[g.r.IntN(len(v.wrappers))]
	words := []string{g.progWord(w)}
	if w.Wrap.Shell {
		cmd = shellWord(cmd)
	}
	for range g.r.IntN(3) {
		o := g.anyOption(w, 0)
		if o == nil || (o.Effects.Any(grammar.NoCommand|grammar.Interactive) && !g.coin(8)) {
			continue
		}
		val := g.pick([]string{"1", "5", "root", "x", "KILL"})
		if o.Value.Any(valueEffects | grammar.Env) {
			val = g.value(o.Value)
		}
		words = append(words, g.spell(w, o, val)...)
	}
	if w.Wrap.Assigns && g.coin(2) {
		words = append(words, "X=1")
	}
	if w.Wrap.Operands > 0 {
		val, ok := wrapperOperands[w.Name]
		if !ok {
			val = "5"
		}
		for range w.Wrap.Operands {
			words = append(words, val)
		}
	}
	if g.coin(3) {
		words = append(words, "--")
	}
	return strings.Join(append(words, cmd), " ")
}

// grammarCommand writes one command from the grammar: an invocation,
// maybe inside one or two wrappers, maybe in a shell construct, maybe
// after a cd into /dev.
func grammarCommand(r chooser) string {
	g := &gen{r: r}
	cd := g.coin(8)
	g.inDev = cd
	posix := ""
	if g.coin(10) {
		posix = g.pick(posixForms)
		g.posix = true
	}
	cmd := g.invocation(g.pickProgram())
	for range g.r.IntN(3) {
		if g.coin(2) {
			cmd = g.wrap(cmd)
		}
	}
	// Outside the wrappers: most do not take an assignment before their
	// command.
	cmd = posix + cmd
	if cd {
		cmd = "cd /dev && " + cmd
	}
	if g.coin(3) {
		sh := g.pick(shellWrappers)
		if !strings.Contains(sh, "<<") && strings.ContainsAny(cmd, "'\"") {
			sh = "CMD"
		}
		cmd = strings.ReplaceAll(sh, "CMD", cmd)
	}
	return strings.ReplaceAll(g.pick(corners), "CMD", cmd)
}

// posixForms put POSIXLY_CORRECT in the environment of the command after
// them (the analyzer reads such commands with grammar.ParsePosix): given,
// through env, exported with or without a value of its own, under a name
// spelled with quotes, or with every assignment exported.
var posixForms = []string{"POSIXLY_CORRECT=1 ", "POSIXLY_CORRECT= ", "env POSIXLY_CORRECT=1 ", "env $'POSIXLY_CORRECT=y' ",
	"export POSIXLY_CORRECT=1; ", "POSIXLY_CORRECT=; export POSIXLY_CORRECT; ", "export POSIX''LY_CORRECT=y && ",
	"declare -x POSIXLY_CORRECT=1; ", "set -a; POSIXLY_CORRECT=1; ", "sudo POSIXLY_CORRECT=1 ", "env -u X POSIXLY_CORRECT=1 "}

// shellWrappers run a command through a shell (bash, su -c, eval …); the
// grammar leaves shells to package shellparse, so they are spelled here.
var shellWrappers = []string{"su -c 'CMD'", "bash -c 'CMD'", "sh -c \"CMD\"", "bash -lc 'CMD'", "eval 'CMD'", "echo 'CMD' | bash",
	"bash <<'EOF'\nCMD\nEOF", "sudo sh -c 'CMD'", "timeout 5 bash -c 'CMD'"}

// String returns a short description of the vocabulary (for the test log).
func vocabSummary() string {
	v := theVocab()
	return fmt.Sprintf("%d programs, %d with observable effects, %d wrappers", len(v.all), len(v.effectful), len(v.wrappers))
}
