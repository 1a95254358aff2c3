package mandate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzCompileAllowsObserved: for any command, the mandate compiled from
// observing it — after a trip through its YAML text — allows that call,
// except for commands whose rule cannot be written; and it allows nothing
// the facts did not name.
func FuzzCompileAllowsObserved(f *testing.F) {
	for _, c := range sampleCalls() {
		if c.call.Command != "" {
			f.Add(c.call.Command)
		}
	}
	f.Add(`curl -H "Authorization: $T" "$URL/x" > "out file.txt"`)
	f.Add("sudo -u 'build bot' make lint")
	f.Add("echo \"\xff\" | sh")
	f.Fuzz(func(t *testing.T, cmd string) {
		call := Call{Tool: ToolTerminal, Command: cmd}
		facts, err := extract(call, defaultParse)
		if err != nil {
			return // over the size limit
		}
		text := Compile("fz", []Observation{{Run: "r", Facts: facts}}).Marshal()
		m, err := Load(text)
		require.NoError(t, err, "compiled text must load:\n%s", text)
		fails := NewMatcher(m).Evaluate(facts, 0)
		for _, fl := range fails {
			switch fl.Family {
			case FamilyCommands:
				if fl.Unwritable {
					_, rep := representableRule(fl.Value, facts)
					require.False(t, rep)
					continue
				}
				// Only an exact rule whose text is not valid UTF-8 (stored
				// with replacement characters) may fail to match.
				require.True(t, strings.HasPrefix(fl.Value, "=") && !validUTF8(fl.Value), "rule %q not allowed:\n%s", fl.Value, text)
			case FamilyPaths, FamilyHosts:
				// Only values no rule can hold (invalid UTF-8, NUL, a
				// host name that is not one) may fail: the call is then
				// blocked, never widened.
				_, err := canonRule(fl.Family, fl.Value)
				require.True(t, !validUTF8(fl.Value) || err != nil, "%s %q not allowed:\n%s", fl.Family, fl.Value, text)
			default:
				t.Fatalf("unexpected failure %+v:\n%s", fl, text)
			}
		}
	})
}

// representableRule reports whether the fact behind rule value v is
// representable.
func representableRule(v string, f Facts) (string, bool) {
	for _, c := range f.Commands {
		if factRule(c).String() == v {
			return representable(c)
		}
	}
	return "", false
}

func validUTF8(s string) bool {
	for _, r := range s {
		if r == 0xFFFD {
			return false
		}
	}
	return true
}
