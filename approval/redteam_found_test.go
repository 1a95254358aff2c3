package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedTeamFound: the commands of testdata/redteam-found.tsv, which
// real bash ran to a hardline effect under the oracle (a glob or brace
// expansion of the home's entries, find -exec and xargs fed literal
// homes, a function's argument, awk's system() with a literal payload,
// BASH_ENV from a process substitution), rate at least at that tier.
func TestRedTeamFound(t *testing.T) {
	t.Skip("known break: 12 commands that bash ran to a hardline effect rate approval (testdata/redteam-found.tsv) (owner w15)")
	t.Parallel()
	for _, c := range readCases(t, "testdata/redteam-found.tsv") {
		require.Len(t, c, 2, "observed_tier<TAB>command: %q", c)
		require.Equal(t, "hardline", c[0])
		an, err := Analyze(c[1], oracleOptions)
		require.NoError(t, err)
		assert.Equal(t, TierHardline, an.Verdict, "%q: bash reached hardline; findings %v", c[1], an.Findings)
	}
}
