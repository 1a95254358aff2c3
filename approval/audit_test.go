package approval

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileAuditConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	a, err := OpenFileAudit(path)
	require.NoError(t, err)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, a.Append(t.Context(), Decision{ID: strconv.Itoa(i), Stage: StageAnalysis, Allowed: true}))
		}()
	}
	wg.Wait()
	require.NoError(t, a.Close())
	assert.Error(t, a.Append(t.Context(), Decision{ID: "late"}), "appending after Close fails")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d Decision
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d), "every line is one JSON record")
		seen[d.ID] = true
	}
	assert.Len(t, seen, n)
}

// TestFileAuditCutsTornTail: a writer that died half way through a record
// left a line without its end; the next append cuts it off rather than
// continuing that line.
func TestFileAuditCutsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenFileAudit(path)
	require.NoError(t, err)
	require.NoError(t, a.Append(t.Context(), Decision{ID: "one"}))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"torn","allowed":tr`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	rep, err := verifyFile(t, path)
	require.NoError(t, err, "a torn tail alone is not corruption")
	assert.True(t, rep.TornTail)

	require.NoError(t, a.Append(t.Context(), Decision{ID: "two"}))
	require.NoError(t, a.Close())
	rep, err = verifyFile(t, path)
	require.NoError(t, err)
	assert.False(t, rep.TornTail)
	assert.Equal(t, 2, rep.Records)
}

func TestVerifyAuditReportsBadLines(t *testing.T) {
	in := `{"id":"a"}` + "\n" + `{"id":"b"}{"id":"c"}` + "\n" + "garbage\n" + `{"id":"d"}` + "\n"
	rep, err := VerifyAudit(strings.NewReader(in))
	require.ErrorIs(t, err, ErrAuditCorrupt)
	assert.Equal(t, []int{2, 3}, rep.Bad)
	assert.Equal(t, 2, rep.Records)
}

func verifyFile(t *testing.T, path string) (AuditReport, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return VerifyAudit(f)
}
