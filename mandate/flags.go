package mandate

import (
	"github.com/tether-dev/tether/grammar"
)

// Flags are compared by their canonical names from the command grammar
// (package grammar), both in the facts of a call and in the rules of a
// mandate: for a program the grammar knows, a short cluster is its options
// ("-rf" is --force and --recursive), an abbreviation or alias is the option
// it names ("--recur", "-R"), and an option's value is never a flag. So a
// rule allowing --recursive allows every spelling of that one option and
// nothing else. For a program the grammar does not know, flags are the
// words as written (up to an "=").

// canonicalFlags returns the flag names of a call of program with
// arguments words (a path-qualified program is not the one the grammar
// describes: pass its spelling, and words are kept as written).
func canonicalFlags(program string, words []string) []string {
	if grammar.Lookup(program) == nil {
		return nil
	}
	inv := grammar.Parse(program, words)
	out := make([]string, 0, len(inv.Options))
	for _, o := range inv.Options {
		out = append(out, o.Name)
	}
	return uniqSorted(out)
}

// canonicalRuleFlags returns the flags of a rule with head words head
// (wrappers, program, subcommand words), named canonically. A rule's flag
// does not say where it stood in the call, and one spelling can name a
// global option before the subcommand and another after it ("git -C DIR"
// and "git log -C"): the rule allows each reading of what it spells, and
// the spelling itself.
func canonicalRuleFlags(head, flags []string) []string {
	if len(flags) == 0 {
		return flags
	}
	k := 0
	for k < len(head)-1 && isWrapperWord(head[k]) {
		k++
	}
	program, sub := head[k], head[k+1:]
	if grammar.Lookup(program) == nil {
		return flags
	}
	out := make([]string, 0, 2*len(flags))
	for _, f := range flags {
		out = append(out, f)
		for _, words := range [][]string{append(append([]string(nil), sub...), f), {f}} {
			for _, o := range grammar.Parse(program, words).Options {
				out = append(out, o.Name)
			}
		}
	}
	return uniqSorted(out)
}
