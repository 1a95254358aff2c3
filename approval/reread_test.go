package approval

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRereadTextIsRated: the text bash parses again at run time
// (shellparse/testdata/reread.tsv: quoted compound assignments given to
// declaration builtins, mapfile callbacks, prompt variables, double-quoted
// ${x:-'…'} operands) is rated by what it runs. Every case reboots under
// bash, so every one is hardline.
func TestRereadTextIsRated(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../shellparse/testdata/reread.tsv")
	require.NoError(t, err)
	unescape := strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t")
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		cmd := unescape.Replace(line)
		a, err := Analyze(cmd, AnalyzeOptions{Home: ExampleHome})
		require.NoError(t, err, cmd)
		assert.Equal(t, TierHardline, a.Verdict, "%q: findings %v", cmd, findingIDs(a))
		assert.Contains(t, findingIDs(a), RulePower, cmd)
	}
	assert.NotZero(t, n)
}

// TestHashTableEntriesAreRated: a command run through a hash table entry
// (BASH_CMDS[NAME]=PATH, hash -p) is rated as the program it runs.
func TestHashTableEntriesAreRated(t *testing.T) {
	t.Parallel()
	for cmd, rule := range map[string]string{
		"BASH_CMDS[ls]=/sbin/reboot; ls":               RulePower,
		"declare -A BASH_CMDS=([ls]=/sbin/reboot); ls": RulePower,
		"hash -p /bin/rm ls; ls -rf ~":                 RuleRmRoot,
	} {
		a, err := Analyze(cmd, AnalyzeOptions{Home: ExampleHome})
		require.NoError(t, err, cmd)
		assert.Equal(t, TierHardline, a.Verdict, "%q: findings %v", cmd, findingIDs(a))
		assert.Contains(t, findingIDs(a), rule, cmd)
	}
}
