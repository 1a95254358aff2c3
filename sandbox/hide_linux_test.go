package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHiddenIn(t *testing.T) {
	t.Parallel()
	rels, err := hiddenIn("/home/u", []string{"/home/u/.local/state/tether", "/etc/tether", "", "/home/u/.config/tether/", "/home/u/.local/state/tether", "/home/user2/x"})
	require.NoError(t, err)
	assert.Equal(t, []string{".local/state/tether", ".config/tether"}, rels)
	for _, own := range []string{"/home/u", "/home", "/"} {
		_, err := hiddenIn("/home/u", []string{own})
		assert.ErrorIs(t, err, ErrUnsafeWorkspace, own)
	}
}

// TestHideOwnPaths runs a sandbox over a workspace holding a hidden state
// directory, a hidden config file and a hidden directory that does not
// exist yet (made, empty, before the sandbox starts): none can be read,
// written, created in or moved away, checked from the host after the
// sandbox is gone.
func TestHideOwnPaths(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o755))
	state := filepath.Join(ws, "st")
	require.NoError(t, os.MkdirAll(filepath.Join(state, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(state, "sub/db"), []byte("db\n"), 0o600))
	conf := filepath.Join(ws, "tether.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("secret: yes\n"), 0o600))
	missing := filepath.Join(ws, "cfg/tether")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "cfg"), 0o755))
	cfg := Config{Workspace: ws, Seccomp: SeccompOptional, Hide: []string{state, conf, missing}}
	res, out := run(t, r, cfg, `cd `+ws+`
echo "LS[$(ls -A st)]"; cat tether.yaml; cat st/sub/db
echo x > st/new && echo WROTE
echo x >> tether.yaml && echo WROTE-CONF
mkdir -p cfg/tether && echo x > cfg/tether/config.yaml && echo CREATED
mv st st2 && echo MOVED
mv cfg cfg2 && echo MOVED-PARENT
rm -f tether.yaml && echo REMOVED
echo end`)
	assert.Equal(t, 0, res.ExitCode, out)
	assert.NotContains(t, out, "WROTE")
	assert.NotContains(t, out, "CREATED")
	assert.NotContains(t, out, "MOVED")
	assert.NotContains(t, out, "REMOVED")
	assert.NotContains(t, out, "secret")
	assert.NotContains(t, out, "db\n")
	assert.Contains(t, out, "LS[]\n", "the state directory looks empty")
	assert.Contains(t, out, "end")
	data, err := os.ReadFile(conf)
	require.NoError(t, err)
	assert.Equal(t, "secret: yes\n", string(data))
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "sub", entries[0].Name())
	entries, err = os.ReadDir(missing)
	require.NoError(t, err, "a missing directory of tether's is made (empty) before the sandbox")
	assert.Empty(t, entries, "and nothing was created in it")
	assert.DirExists(t, filepath.Join(ws, "cfg"))
}

// TestHidePlannedRootless: tether without root plans the same masks as
// root (its joining process mounts them: TestPoisonRootless checks them
// from the sandbox), and reports nothing as not enforced.
func TestHidePlannedRootless(t *testing.T) {
	requireSandbox(t)
	ws, state := t.TempDir(), t.TempDir()
	var notEnforced []string
	pr, err := protectFor(state, Config{Workspace: ws, Hide: []string{filepath.Join(ws, ".local/state/tether")}}, true, &notEnforced)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pr.release()) })
	assert.True(t, pr.rootless)
	assert.Contains(t, pr.mounts, ProtectMount{Path: ".local/state/tether", Mode: ProtectHideDir})
	assert.Empty(t, notEnforced)
}
