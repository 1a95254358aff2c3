package grammar

import "strings"

// Helpers for the family tables. Names are space-separated spellings,
// canonical first: "--recursive -r -R".

// flag is an option without a value.
func flag(names string, eff Effect) Option {
	return Option{Names: strings.Fields(names), Effects: eff}
}

// arg is an option with a required value that is val.
func arg(names string, val Effect) Option {
	return Option{Names: strings.Fields(names), Arg: Required, Value: val}
}

// argE is arg whose presence also has effects eff.
func argE(names string, val, eff Effect) Option {
	return Option{Names: strings.Fields(names), Arg: Required, Value: val, Effects: eff}
}

// opt is an option with an optional (attached) value that is val.
func opt(names string, val Effect) Option {
	return Option{Names: strings.Fields(names), Arg: Optional, Value: val}
}

// optE is opt whose presence also has effects eff.
func optE(names string, val, eff Effect) Option {
	return Option{Names: strings.Fields(names), Arg: Optional, Value: val, Effects: eff}
}

// flags declares several plain flags at once: "-a -b --long-x".
func flags(names string) []Option {
	f := strings.Fields(names)
	out := make([]Option, len(f))
	for i, n := range f {
		out[i] = Option{Names: []string{n}}
	}
	return out
}

// args declares several options that take a plain value.
func args(names string) []Option {
	f := strings.Fields(names)
	out := make([]Option, len(f))
	for i, n := range f {
		out[i] = Option{Names: []string{n}, Arg: Required}
	}
	return out
}

// argsV declares several distinct options that take a value that is val.
func argsV(names string, val Effect) []Option {
	out := args(names)
	for i := range out {
		out[i].Value = val
	}
	return out
}

// flagsE declares several distinct flags that each have effects eff.
func flagsE(names string, eff Effect) []Option {
	out := flags(names)
	for i := range out {
		out[i].Effects = eff
	}
	return out
}

// join concatenates option lists.
func join(lists ...[]Option) []Option {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]Option, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// gnuHelp is --help and --version of GNU-style tools: they print and exit.
func gnuHelp() []Option {
	return []Option{flag("--help", DryRun), flag("--version", DryRun)}
}

// with returns o followed by the GNU help options.
func gnu(o ...[]Option) []Option {
	return join(append(o, gnuHelp())...)
}

// ops is a list of options given inline.
func ops(o ...Option) []Option { return o }

// allTargets gives every operand the Target effect.
var allTargets = []OperandRule{{All: true, Effects: Target}}

// values builds an operand value table: every word of words gets eff.
func values(eff Effect, words string) map[string]Effect {
	m := map[string]Effect{}
	for _, w := range strings.Fields(words) {
		m[w] = eff
	}
	return m
}

// subs builds subcommand specs that share effects: "remove rm uninstall"
// is one sub named remove with aliases rm and uninstall.
func sub(names string, eff Effect, o ...Option) *Spec {
	f := strings.Fields(names)
	return &Spec{Name: f[0], Aliases: f[1:], Effects: eff, Options: o}
}
