package approval

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bash oracle's sandbox (internal/oracle): its home and working
// directory, which the recorded cases assume.
var oracleOptions = AnalyzeOptions{Home: "/home/alice", Cwd: "/work"}

// readCases returns the non-comment lines of a testdata TSV file split into
// columns, with the corpus escapes (\n \r \t \\) decoded.
func readCases(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	unesc := strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r", `\t`, "\t")
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			cols := strings.Split(l, "\t")
			for i := range cols {
				cols[i] = unesc.Replace(cols[i])
			}
			out = append(out, cols)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestOracleFound: every command the bash oracle found under-rated is rated
// at least at the tier bash was seen to reach.
func TestOracleFound(t *testing.T) {
	t.Parallel()
	for _, c := range readCases(t, "testdata/oracle-found.tsv") {
		require.Len(t, c, 2, "observed_tier<TAB>command: %q", c)
		var want Tier
		switch c[0] {
		case "hardline":
			want = TierHardline
		case "approval":
			want = TierApproval
		default:
			t.Fatalf("unknown tier %q", c[0])
		}
		an, err := Analyze(c[1], oracleOptions)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, an.Verdict, want, "%q: bash reached %s; findings %v", c[1], c[0], an.Findings)
	}
}

// maxFriction is the share of approval/testdata/benign.tsv allowed to need
// approval: the target is 5%.
const maxFriction = 0.05

// TestFriction reports how many everyday agent commands need a person, and
// fails above maxFriction. None may be hardline.
func TestFriction(t *testing.T) {
	t.Parallel()
	cases := readCases(t, "testdata/benign.tsv")
	require.NotEmpty(t, cases)
	var asked []string
	for _, c := range cases {
		an, err := Analyze(c[0], AnalyzeOptions{Home: "/home/alice", Cwd: "/home/alice/project"})
		require.NoError(t, err)
		assert.NotEqual(t, TierHardline, an.Verdict, "%q is benign; findings %v", c[0], an.Findings)
		if an.Verdict >= TierApproval {
			var ids []string
			for _, f := range an.Findings {
				ids = append(ids, f.Rule)
			}
			asked = append(asked, c[0]+"  ["+strings.Join(ids, ", ")+"]")
		}
	}
	rate := float64(len(asked)) / float64(len(cases))
	t.Logf("friction: %d of %d benign commands (%.1f%%) need approval:\n  %s", len(asked), len(cases), 100*rate, strings.Join(asked, "\n  "))
	assert.LessOrEqual(t, rate, maxFriction, "friction above %.0f%%", 100*maxFriction)
}

// TestVariables checks the analyzer's verdict for each case of
// testdata/variables.tsv and testdata/dataflow.tsv (values and files that
// flow between the commands of one line), and that it is never weaker than
// the tier bash was observed to reach (TestOracleVariables checks the
// observed column).
func TestVariables(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"testdata/variables.tsv", "testdata/dataflow.tsv"} {
		t.Run(f, func(t *testing.T) { t.Parallel(); checkObservedRows(t, f) })
	}
}

// checkObservedRows checks a file of observed_tier, static_tier, command
// rows.
func checkObservedRows(t *testing.T, file string) {
	rows := readCases(t, file)
	require.NotEmpty(t, rows)
	for _, c := range rows {
		require.Len(t, c, 3, "observed_tier<TAB>static_tier<TAB>command: %q", c)
		observed, err := tierName(c[0])
		require.NoError(t, err)
		want, err := tierName(c[1])
		require.NoError(t, err)
		require.GreaterOrEqual(t, want, observed, "%q: the expected verdict is weaker than bash's", c[2])
		an, err := Analyze(c[2], oracleOptions)
		require.NoError(t, err)
		assert.Equal(t, want.String(), an.Verdict.String(), "%q: findings %v", c[2], findingIDs(an))
	}
}
