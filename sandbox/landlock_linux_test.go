package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// llWorkspace is a workspace with an allowed directory (ok/) and a secret
// outside the policy (secret/key).
func llWorkspace(t *testing.T) (ws, secret string) {
	t.Helper()
	// Not under /tmp: the sandbox's /tmp rule would cover it
	// (ErrLandlockLayout).
	ws, err := os.MkdirTemp("/var/tmp", "tether-ll-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Chmod(ws, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "ok"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "secret"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "file"), []byte("allowed-content\n"), 0o644))
	secret = filepath.Join(ws, "secret", "key")
	require.NoError(t, os.WriteFile(secret, []byte("TOP-SECRET-CONTENT\n"), 0o644))
	return ws, secret
}

func llRun(t *testing.T, r *Runner, ws, script string, paths ...string) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Landlock: &Landlock{Paths: paths}}
	res, err := r.Run(context.Background(), cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err, out.String())
	return res, out.String()
}

func TestLandlockSmoke(t *testing.T) {
	r := newTestRunner(t)
	ws, secret := llWorkspace(t)
	res, out := llRun(t, r, ws, "cat ok/file; cat secret/key; echo rc=$?", filepath.Join(ws, "ok"))
	t.Logf("out=%q res=%+v", out, res)
	assert.Contains(t, out, "allowed-content")
	assert.NotContains(t, out, "TOP-SECRET")
	assert.Contains(t, out, "Permission denied")
	assert.Contains(t, res.PathsRefused, PathRefused{Path: secret, Blockers: []string{"fs.read_file"}})
}
