package approval

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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
