package approval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tether-dev/tether/shellparse"
)

// RuleDenyGlob is the rule id of a finding produced by a user deny glob.
const RuleDenyGlob = "deny.glob"

// RuleAskGlob is the rule id of a finding produced by a user ask glob
// (approvals.ask): the command goes to a person.
const RuleAskGlob = "ask.glob"

// RuleMandate is the rule id of every refusal by a job's mandate, for
// terminal and file tools alike (the drift record id says which call).
const RuleMandate = "mandate"

// ErrBadGlob is returned by DenyList.Validate for an unusable glob.
var ErrBadGlob = errors.New("bad deny glob")

// DenyList is a list of user deny globs such as "sudo *", "git push*" or
// "rm -rf *".
//
// What a glob matches against: for every simple command shellparse finds in
// the script (top level, pipelines, substitutions, function bodies, and
// literal sh -c / su -c / env -S payloads), the command's normalised text:
// the effective program's normalised name (quotes, backslashes and the
// directory removed, so "/usr/bin/sudo", "s\udo" and "'sudo'" are all
// "sudo") followed by each argument's value after quote removal, joined by
// single spaces. Each peeled wrapper adds one more candidate text that starts
// at that wrapper: "env X=1 nice sudo -n id" yields "id", "sudo -n id",
// "nice sudo -n id" and "env sudo -n id" (assignments and env's own
// options are dropped; other wrappers keep their arguments), so "sudo *"
// matches however sudo is wrapped or spelled.
//
// Glob syntax: "*" matches any run of characters (spaces and slashes
// included), "?" one character, "\" quotes the next character; everything
// else matches itself. A glob must match a whole candidate text; flags are
// not reordered ("rm -rf *" does not match "rm -fr x" — list both).
// Opaque segments (a program computed at run time) have no normalised text;
// the analyzer already holds them for approval.
type DenyList []string

// Validate reports the first unusable glob (empty, or ending in a lone "\").
func (d DenyList) Validate() error {
	for i, g := range d {
		if strings.TrimSpace(g) == "" {
			return fmt.Errorf("deny glob %d: %w: empty", i+1, ErrBadGlob)
		}
		if strings.HasSuffix(g, `\`) && !strings.HasSuffix(g, `\\`) {
			return fmt.Errorf("deny glob %q: %w: trailing backslash", g, ErrBadGlob)
		}
	}
	return nil
}

// Match returns a finding for the first command of s that a glob matches.
// A nil script (the command did not parse) matches nothing; such commands
// already need approval.
func (d DenyList) Match(s *shellparse.Script) (Finding, bool) {
	return matchGlobs(d, s, RuleDenyGlob, "deny", TierHardline)
}

// matchGlobs is the one matcher of user command globs (deny and ask): the
// finding, with rule id rule at tier, of the first command of s whose
// normalised text (DenyTexts) one of globs matches.
func matchGlobs(globs []string, s *shellparse.Script, rule, kind string, tier Tier) (Finding, bool) {
	if s == nil || len(globs) == 0 {
		return Finding{}, false
	}
	for i := range s.Commands {
		c := &s.Commands[i]
		for _, text := range DenyTexts(c) {
			for _, g := range globs {
				if globMatch(g, text) {
					return Finding{
						Rule:        rule,
						Tier:        tier,
						Description: fmt.Sprintf("matches %s rule %q", kind, g),
						Text:        c.Text,
						Span:        c.Span,
						Reason:      text,
					}, true
				}
			}
		}
	}
	return Finding{}, false
}

// DenyTexts returns the normalised texts of c that deny globs match against,
// innermost (the effective program) first.
func DenyTexts(c *shellparse.Command) []string {
	var b strings.Builder
	b.WriteString(c.Program)
	for _, w := range c.Args {
		b.WriteByte(' ')
		b.WriteString(w.Value)
	}
	inner := b.String()
	out := []string{inner}
	for i := len(c.Wrappers) - 1; i >= 0; i-- {
		w := c.Wrappers[i]
		b.Reset()
		b.WriteString(w.Program)
		if w.Program != "env" {
			for _, a := range w.Args {
				b.WriteByte(' ')
				b.WriteString(a)
			}
		}
		b.WriteByte(' ')
		b.WriteString(out[len(out)-1])
		out = append(out, b.String())
	}
	return out
}

// globMatch reports whether text matches glob g as a whole (see DenyList).
func globMatch(g, text string) bool {
	// Iterative matcher with single-star backtracking: linear in practice,
	// never exponential on hostile input.
	gi, ti := 0, 0
	starG, starT := -1, 0
	for ti < len(text) {
		if gi < len(g) {
			switch c := g[gi]; c {
			case '*':
				starG, starT = gi, ti
				gi++
				continue
			case '?':
				gi++
				ti++
				continue
			case '\\':
				if gi+1 < len(g) && g[gi+1] == text[ti] {
					gi += 2
					ti++
					continue
				}
			default:
				if c == text[ti] {
					gi++
					ti++
					continue
				}
			}
		}
		if starG < 0 {
			return false
		}
		starT++
		gi, ti = starG+1, starT
	}
	for gi < len(g) && g[gi] == '*' {
		gi++
	}
	return gi == len(g)
}
