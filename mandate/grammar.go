package mandate

import (
	"slices"
	"strings"

	"github.com/tether-dev/tether/grammar"
)

// This file is the mandate's view of the command grammar (package grammar):
// which options of a call "-*" does not cover, which operands are
// assignments, and what reach a rule grants.

// effect is what makes an option risky for "-*": it executes code, writes
// a file or device, or changes where the program reads configuration.
type effect uint8

const (
	effExec effect = 1 << iota
	effWrite
	effConfig
)

// Grammar effects that make an option risky, by the effect the mandate
// reports.
const (
	execEffects   = grammar.Exec | grammar.Code | grammar.Program | grammar.Remote | grammar.Listen | grammar.Schedule
	writeEffects  = grammar.Write | grammar.DeviceWrite | grammar.Format | grammar.Truncate
	configEffects = grammar.Config | grammar.ConfigWrite
)

func effectOf(e grammar.Effect) effect {
	var out effect
	if e.Any(execEffects) {
		out |= effExec
	}
	if e.Any(writeEffects) {
		out |= effWrite
	}
	if e.Any(configEffects) {
		out |= effConfig
	}
	return out
}

// invocation reads a command's arguments with the grammar.
func invocation(program string, args []string) *grammar.Invocation {
	return grammar.Parse(program, args)
}

// riskyOptions returns the canonical names of the options of inv that
// "-*" does not cover: those the grammar gives an exec, write or config
// effect (on the invocation or as their value), and every option a
// program the grammar knows does not have (fail closed). For a program the
// grammar does not know, no option is known to be risky.
func riskyOptions(inv *grammar.Invocation) []string {
	var out []string
	for _, o := range inv.Options {
		if effectOf(o.Effects|o.ValueEffects) != 0 || inv.Spec != nil && !o.Known {
			out = append(out, o.Name)
		}
	}
	return uniqSorted(out)
}

// assignments returns the operands of inv that are assignments, verbatim:
// those the grammar reads as NAME=VALUE variables (make's), write or read
// targets given as KEY=VALUE (dd's "of="), and any NAME=VALUE operand of a
// program the grammar does not know.
func assignments(inv *grammar.Invocation) []string {
	var out []string
	for _, op := range inv.Operands {
		w := inv.Args[op.Arg]
		if isAssignment(w) || op.Effects.Any(grammar.Env) || strings.Contains(w, "=") && op.Value != w {
			out = append(out, w)
		}
	}
	return uniqSorted(out)
}

// spec returns the grammar of program with as many of sub's words as name
// its subcommands.
func spec(program string, sub []string) *grammar.Spec {
	s := grammar.Lookup(program)
	for _, w := range sub {
		if s == nil {
			break
		}
		c := s.Sub(w)
		if c == nil {
			break
		}
		s = c
	}
	return s
}

// optionEffect returns the effects of the option named name (a canonical
// name or a spelling) of program with subcommand words sub, and whether
// the grammar knows it. An option the grammar does not know, of a program
// it knows, counts as every effect: what cannot be ruled out is present.
func optionEffect(program string, sub []string, name string) (e effect, known bool) {
	s := spec(program, sub)
	if s == nil {
		return 0, false
	}
	o := s.Option(name)
	if o == nil {
		return effExec | effWrite | effConfig, false
	}
	return effectOf(o.Effects | o.Value), true
}

// programExecutes reports whether running program at all executes code
// that its arguments or files choose: a shell, make, a wrapper, or a
// program the command grammar gives inline code (an interpreter: python
// -c, awk, perl -e) or an exec effect of its own.
func programExecutes(program string) bool {
	switch program {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "make", "gmake", "eval", "source", ".":
		return true
	}
	s := grammar.Lookup(program)
	if s == nil {
		return false
	}
	if s.Wrap != nil || s.Effects.Any(execEffects) {
		return true
	}
	return slices.ContainsFunc(s.Options, func(o grammar.Option) bool { return o.Value.Any(grammar.Code) }) ||
		slices.ContainsFunc(s.Operands, func(r grammar.OperandRule) bool { return r.Effects.Any(execEffects) })
}

// envExecutes reports whether an environment variable or make-style
// assignment name makes program run code.
func envExecutes(program, name string) bool {
	return grammar.EnvEffects(program, grammar.AssignName(name+"=")).Any(execEffects)
}

// canonicalOption is the canonical name of option f of program after
// subcommand words sub (or, failing that, of a global option), else f.
func canonicalOption(program string, sub []string, f string) string {
	for _, sp := range []*grammar.Spec{spec(program, sub), grammar.Lookup(program)} {
		if sp == nil {
			continue
		}
		if o := sp.Option(f); o != nil {
			return o.Names[0]
		}
	}
	return f
}
