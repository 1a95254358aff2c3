package approval

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unescapeCorpus decodes the escapes the corpus files use inside a command:
// \n \r \t \v \f \\ and \uXXXX (as in Python's repr). Any other backslash is
// kept as is.
func unescapeCorpus(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case '\\':
			b.WriteByte('\\')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("short \\u escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape in %q: %w", s, err)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// tierName parses a corpus verdict: allow (or the peer's "safe"), approval
// (or the peer's "dangerous"), hardline.
func tierName(s string) (Tier, error) {
	switch s {
	case "allow", "safe":
		return TierAllow, nil
	case "approval", "dangerous":
		return TierApproval, nil
	case "hardline":
		return TierHardline, nil
	}
	return 0, fmt.Errorf("unknown verdict %q", s)
}

// corpusRow is one case of our own corpus.
type corpusRow struct {
	file    string
	line    int
	tier    Tier
	safe    bool
	command string
	note    string
}

// ownCorpora are the corpus files of testdata/ in corpus.tsv's format: the
// hand-written corpus and the red-team findings fixed by class.
var ownCorpora = []string{"corpus.tsv", "redteam-s10.tsv", "redteam-s11.tsv", "redteam-s12.tsv", "redteam-s13.tsv", "redteam-s13g.tsv", "redteam-s13b.tsv", "redteam-s14.tsv", "redteam-s14g.tsv"}

// readOwnCorpus reads testdata/NAME (one of ownCorpora):
// expected_tier<TAB>safe(yes|no)<TAB>command<TAB>note. Lines starting with
// "#" and blank lines are comments. Commands use the escapes of
// unescapeCorpus. A note "HOME=/x" or "CWD=/x" sets that option.
func readOwnCorpus(t *testing.T, name string) []corpusRow {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	var rows []corpusRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 4, "%s:%d: want 4 tab-separated columns", name, n)
		tier, err := tierName(cols[0])
		require.NoError(t, err, "%s:%d", name, n)
		require.Contains(t, []string{"yes", "no"}, cols[1], "%s:%d: safe column", name, n)
		cmd, err := unescapeCorpus(cols[2])
		require.NoError(t, err, "%s:%d", name, n)
		rows = append(rows, corpusRow{file: name, line: n, tier: tier, safe: cols[1] == "yes", command: cmd, note: cols[3]})
	}
	require.NoError(t, sc.Err())
	return rows
}

// noteOptions extracts HOME= and CWD= settings from a note.
func noteOptions(note string) AnalyzeOptions {
	opts := AnalyzeOptions{Home: ExampleHome}
	for _, f := range strings.Fields(note) {
		f = strings.Trim(f, "()")
		if v, ok := strings.CutPrefix(f, "HOME="); ok {
			opts.Home = v
		}
		if v, ok := strings.CutPrefix(f, "CWD="); ok {
			opts.Cwd = v
		}
	}
	return opts
}

// TestCorpus runs our own corpus: every row's tier and safe flag must match.
func TestCorpus(t *testing.T) {
	t.Parallel()
	rows := readOwnCorpus(t, "corpus.tsv")
	require.GreaterOrEqual(t, len(rows), 400, "the corpus must keep at least 400 cases")
	for _, name := range ownCorpora[1:] {
		rows = append(rows, readOwnCorpus(t, name)...)
	}
	for _, r := range rows {
		a, err := Analyze(r.command, noteOptions(r.note))
		require.NoError(t, err, "%s:%d", r.file, r.line)
		assert.Equal(t, r.tier.String(), a.Verdict.String(), "%s:%d %q (%s): findings %v", r.file, r.line, r.command, r.note, findingIDs(a))
		assert.Equal(t, r.safe, a.Safe, "%s:%d %q (%s): safe", r.file, r.line, r.command, r.note)
	}
}

// peerCorpusPath is the peer project's expectations, outside this repository.
var peerCorpusPath = filepath.Join("..", "..", "shared", "corpus", "peer-commands.tsv")

// peerRow is one row of the peer corpus.
type peerRow struct {
	line    int
	want    Tier
	raw     string // the command as written in the file (escaped)
	command string
	home    string
	// onlyNotHardline: the peer's test asserts only that the row is not
	// hardline; its tier came from the peer's detector ("dangerous tier
	// not asserted", "dangerous tier from v2026.8.3 detector").
	onlyNotHardline bool
}

func readPeerCorpus(t *testing.T) []peerRow {
	t.Helper()
	f, err := os.Open(peerCorpusPath)
	if os.IsNotExist(err) {
		if os.Getenv("CI") != "" {
			t.Fatalf("peer corpus %s is missing (CI is set, so this fails instead of skipping)", peerCorpusPath)
		}
		t.Skipf("peer corpus %s is not present; it lives outside the repository", peerCorpusPath)
	}
	require.NoError(t, err)
	defer f.Close()
	var rows []peerRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if n == 1 {
			continue // header
		}
		cols := strings.Split(sc.Text(), "\t")
		require.Len(t, cols, 3, "peer corpus line %d", n)
		want, err := tierName(cols[0])
		require.NoError(t, err, "peer corpus line %d", n)
		cmd, err := unescapeCorpus(cols[1])
		require.NoError(t, err, "peer corpus line %d", n)
		home := ExampleHome
		if i := strings.Index(cols[2], "(HOME="); i >= 0 {
			home = strings.TrimSuffix(cols[2][i+len("(HOME="):], ")")
		}
		only := strings.Contains(cols[2], "dangerous tier not asserted") || strings.Contains(cols[2], "dangerous tier from")
		rows = append(rows, peerRow{line: n, want: want, raw: cols[1], command: cmd, home: home, onlyNotHardline: only})
	}
	require.NoError(t, sc.Err())
	return rows
}

// disagreement is one listed difference from the peer corpus.
type disagreement struct {
	peer, ours Tier
	why        string
}

// readDisagreements reads testdata/peer-disagreements.tsv:
// peer_verdict<TAB>our_verdict<TAB>command (escaped as in the peer file)<TAB>why.
func readDisagreements(t *testing.T) map[string]disagreement {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "peer-disagreements.tsv"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]disagreement{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 4, "peer-disagreements.tsv:%d", n)
		peer, err := tierName(cols[0])
		require.NoError(t, err)
		ours, err := tierName(cols[1])
		require.NoError(t, err)
		require.NotEmpty(t, strings.TrimSpace(cols[3]), "peer-disagreements.tsv:%d needs a reason", n)
		_, dup := out[cols[2]]
		require.False(t, dup, "peer-disagreements.tsv:%d lists %q twice", n, cols[2])
		out[cols[2]] = disagreement{peer: peer, ours: ours, why: cols[3]}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestPeerCorpus runs the analyzer over the peer project's expectations,
// prints the confusion matrix and checks the hard requirements: no hardline
// or dangerous row is allowed (a row whose peer test asserts only that it
// is not hardline must not be hardline), no safe row is hardline, and every
// disagreement is listed (with its reason) in peer-disagreements.tsv, which
// must list nothing that now agrees.
func TestPeerCorpus(t *testing.T) {
	t.Parallel()
	rows := readPeerCorpus(t)
	listed := readDisagreements(t)
	var matrix [3][3]int // [peer][ours]
	agree, agreeAsserted := 0, 0
	seen := map[string]bool{}
	for _, r := range rows {
		a, err := Analyze(r.command, AnalyzeOptions{Home: r.home})
		require.NoError(t, err, "peer line %d", r.line)
		got := a.Verdict
		matrix[r.want][got]++
		d, isListed := listed[r.raw]
		seen[r.raw] = true
		if got == r.want || (r.onlyNotHardline && got != TierHardline) {
			agreeAsserted++
		}
		switch {
		case r.onlyNotHardline:
			// A listed row says, with its reason, why bash makes it hardline.
			if !isListed {
				assert.NotEqual(t, TierHardline, got, "peer line %d: the peer asserts this is not hardline: %q %v", r.line, r.raw, findingIDs(a))
			}
		case r.want != TierAllow:
			assert.NotEqual(t, TierAllow, got, "peer line %d: %s row allowed: %q", r.line, peerName(r.want), r.raw)
		case r.want == TierAllow:
			assert.NotEqual(t, TierHardline, got, "peer line %d: safe row is hardline: %q %v", r.line, r.raw, findingIDs(a))
		}
		if got == r.want {
			agree++
			assert.False(t, isListed, "peer line %d now agrees; remove it from peer-disagreements.tsv: %q", r.line, r.raw)
			continue
		}
		if assert.True(t, isListed, "peer line %d: unlisted disagreement (peer %s, ours %s %v): %q", r.line, peerName(r.want), got, findingIDs(a), r.raw) {
			assert.Equal(t, d.peer, r.want, "peer-disagreements.tsv peer verdict for %q", r.raw)
			assert.Equal(t, d.ours, got, "peer-disagreements.tsv our verdict for %q", r.raw)
		}
	}
	for raw := range listed {
		assert.True(t, seen[raw], "peer-disagreements.tsv lists a command not in the peer corpus: %q", raw)
	}
	pct := 100 * float64(agree) / float64(len(rows))
	var b strings.Builder
	fmt.Fprintf(&b, "peer corpus: %d rows, %d agree (%.1f%%); on what the peer's tests assert (%d rows assert only \"not hardline\"): %d (%.1f%%)\n",
		len(rows), agree, pct, countOnly(rows), agreeAsserted, 100*float64(agreeAsserted)/float64(len(rows)))
	fmt.Fprintf(&b, "%-12s %8s %9s %9s\n", "peer\\ours", "allow", "approval", "hardline")
	for p := TierAllow; p <= TierHardline; p++ {
		fmt.Fprintf(&b, "%-12s %8d %9d %9d\n", peerName(p), matrix[p][TierAllow], matrix[p][TierApproval], matrix[p][TierHardline])
	}
	t.Log("\n" + b.String())
	// 96 since session 12 (423 of 439): three rows the peer holds below
	// hardline are hardline because bash really runs them so, each listed
	// with its reason in peer-disagreements.tsv (checked above): a literal
	// process call in interpreter code (perl -e 'system("reboot")') and
	// command substitutions that print rm. The floor keeps the list from
	// growing unnoticed.
	assert.GreaterOrEqual(t, pct, 96.0, "agreement with the peer corpus")
}

func countOnly(rows []peerRow) int {
	n := 0
	for _, r := range rows {
		if r.onlyNotHardline {
			n++
		}
	}
	return n
}

func peerName(t Tier) string {
	return [...]string{"safe", "dangerous", "hardline"}[t]
}
