package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCanonicalFlags: a rule's flag allows every spelling of that one option
// of a program the grammar knows (clusters, abbreviations, aliases), and
// nothing else; an option's value is never a flag.
func TestCanonicalFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule  string
		call  string
		allow bool
	}{
		{"rm -rf", "rm --recursive --force x", true},
		{"rm -rf", "rm --recur --forc x", true},
		{"rm -rf", "rm -R -f x", true},
		{"rm -rf", "rm x -fr", true},
		{"rm --recursive", "rm -r x", true},
		{"rm --recursive", "rm -rf x", false},
		{"rm --recursive", "rm --no-preserve-root -r /", false},
		{"git log -C -n", "git log -C -n 5", true},
		{"git log -n", "git log -n5", true},
		{"git log -n", "git log --max-count=5", true},
		{"git reset --hard", "git reset --ha", true},
		{"git reset", "git reset --hard", false},
		{"sort", "sort -o out f", false},
		{"sort --output", "sort -oout f", true},
		{"ls -la", "ls -la", true},
		{"ls -la", "ls -l -a", false}, // ls is not in the grammar: words as written
	}
	for _, c := range cases {
		m := &Mandate{Job: "j", Tools: []Rule{{Value: ToolTerminal}}, Commands: []Rule{{Value: c.rule}}}
		f, err := extract(Call{Tool: ToolTerminal, Command: c.call}, defaultParse)
		require.NoError(t, err)
		fails := NewMatcher(m).Evaluate(f, 0)
		var cmdFails []Failure
		for _, x := range fails {
			if x.Family == FamilyCommands {
				cmdFails = append(cmdFails, x)
			}
		}
		if c.allow {
			assert.Empty(t, cmdFails, "rule %q must allow %q (facts %+v)", c.rule, c.call, f.Commands)
		} else {
			assert.NotEmpty(t, cmdFails, "rule %q must not allow %q (facts %+v)", c.rule, c.call, f.Commands)
		}
	}
}
