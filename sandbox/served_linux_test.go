package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordServed: a live daemon's record names its paths for every
// sandbox of the state root; a released one, or one whose daemon died
// (its lock is free), names nothing and is removed; a record that is not
// absolute paths refuses.
func TestRecordServed(t *testing.T) {
	root := t.TempDir()
	got, err := servedPaths(root)
	require.NoError(t, err)
	assert.Empty(t, got, "no records")
	release, err := RecordServed(root, []string{"/w/run/tether.sock", "/w/run"})
	require.NoError(t, err)
	got, err = servedPaths(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"/w/run/tether.sock", "/w/run"}, got)
	release()
	got, err = servedPaths(root)
	require.NoError(t, err)
	assert.Empty(t, got, "released")
	// A daemon that died: its record is in place, nobody locks it.
	dead := filepath.Join(root, servedDirName, "1-dead")
	require.NoError(t, os.WriteFile(dead, []byte("/w/old.sock\n"), 0o600))
	got, err = servedPaths(root)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.NoFileExists(t, dead, "a stale record is removed")
	_, err = RecordServed(root, []string{"relative.sock"})
	assert.Error(t, err)
}

// TestRecordServedMakesStateRootAsSandboxesDo: a daemon that is first to
// make its state root makes it 0711 as a sandbox's set-up does (a 0700
// one stopped every root-started sandbox under it: its unprivileged id
// could not reach its empty root), and leaves an existing one alone.
func TestRecordServedMakesStateRootAsSandboxesDo(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	release, err := RecordServed(root, []string{"/w/run/tether.sock"})
	require.NoError(t, err)
	defer release()
	st, err := os.Stat(root)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o711), st.Mode().Perm(), "the state root, which stateRootReachable asks a sandbox's id to traverse")
	st, err = os.Stat(filepath.Join(root, servedDirName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the records' directory")
}
