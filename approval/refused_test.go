package approval

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/grammar"
)

// TestRefusedPrograms: RefusedPrograms (refused.go) lists exactly the
// names of the grammar whose bare exec the analyser puts at the hardline
// floor. TETHER_UPDATE_REFUSED=1 go test ./approval -run
// TestRefusedPrograms rewrites refused.go (after a grammar change).
func TestRefusedPrograms(t *testing.T) {
	var names []string
	for _, s := range grammar.Programs() {
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			a, err := Analyze(ExecText([]string{n}), AnalyzeOptions{Home: ExampleHome, Cwd: "/work"})
			require.NoError(t, err)
			if a.Verdict == TierHardline {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	require.Contains(t, names, "reboot", "the floor refuses a bare reboot")
	src, err := os.ReadFile("refused.go")
	require.NoError(t, err)
	head, _, ok := bytes.Cut(src, []byte("var RefusedPrograms = []string{"))
	require.True(t, ok)
	var b bytes.Buffer
	b.Write(head)
	b.WriteString("var RefusedPrograms = []string{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t%q,\n", n)
	}
	b.WriteString("}\n")
	want, err := format.Source(b.Bytes())
	require.NoError(t, err)
	if os.Getenv("TETHER_UPDATE_REFUSED") != "" {
		require.NoError(t, os.WriteFile("refused.go", want, 0o644))
		return
	}
	require.Equal(t, string(want), string(src), "refused.go is out of date: TETHER_UPDATE_REFUSED=1 go test ./approval -run TestRefusedPrograms")
}
