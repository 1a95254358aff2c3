package approval

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/shellparse"
)

// NormalizeCommand returns the normalised text of one simple command, the
// form that allowlist entries and deny globs match: the peeled wrappers
// with their arguments, the environment assignments, the normalised
// program name ("/usr/bin/rm" and "r\m" are "rm"), the argument values and
// the redirections, separated by single spaces. Values that need quoting
// are single-quoted, so `rm "a b"` and `rm a b` differ.
func NormalizeCommand(c shellparse.Command) string {
	var parts []string
	for _, w := range c.Wrappers {
		parts = append(parts, quoteWord(w.Program))
		for _, a := range w.Args {
			parts = append(parts, quoteWord(a))
		}
	}
	for _, f := range c.EnvFlags {
		parts = append(parts, quoteWord(f))
	}
	for _, e := range c.Env {
		parts = append(parts, e.Name+"="+quoteWord(e.Value.Value))
	}
	parts = append(parts, quoteWord(c.Program))
	for _, a := range c.Args {
		parts = append(parts, quoteWord(a.Value))
	}
	for _, r := range c.Redirs {
		parts = append(parts, r.Fd+redirOps[r.Mode]+quoteWord(r.Target.Value))
	}
	return strings.Join(parts, " ")
}

// redirOps writes each redirection mode as its operator.
var redirOps = map[shellparse.RedirMode]string{
	shellparse.RedirRead: "<", shellparse.RedirWrite: ">", shellparse.RedirAppend: ">>",
	shellparse.RedirReadWrite: "<>", shellparse.RedirDup: ">&", shellparse.RedirHeredoc: "<<",
}

func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\|&;<>()`*?[]{}#~!") {
		return s
	}
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		// Not representable (a NUL byte): never equal to a normal word.
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "\x00'"
	}
	return q
}

// MatchDenyGlobs is the default DenyFunc: DenyList.Match on the parsed
// script (normalised programs, every wrapper, payloads), and for a command
// that did not parse, the globs against its whole trimmed text.
func MatchDenyGlobs(globs []string, a *Analysis) (Finding, bool) {
	return matchAnalysis(globs, a, RuleDenyGlob, "deny", TierHardline)
}

// MatchAskGlobs matches a profile's ask globs (approvals.ask) exactly as
// MatchDenyGlobs matches deny globs; its finding is of the approval tier,
// rule RuleAskGlob.
func MatchAskGlobs(globs []string, a *Analysis) (Finding, bool) {
	return matchAnalysis(globs, a, RuleAskGlob, "ask", TierApproval)
}

func matchAnalysis(globs []string, a *Analysis, rule, kind string, tier Tier) (Finding, bool) {
	if len(globs) == 0 || a == nil {
		return Finding{}, false
	}
	if a.Script != nil {
		return matchGlobs(globs, a.Script, rule, kind, tier)
	}
	text := strings.TrimSpace(a.Command)
	for _, g := range globs {
		if globMatch(g, text) {
			return Finding{Rule: rule, Tier: tier, Description: fmt.Sprintf("matches %s rule %q", kind, g),
				Text: a.Command, Span: shellparse.Span{End: len(a.Command)}, Reason: text}, true
		}
	}
	return Finding{}, false
}
