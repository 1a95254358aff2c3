package fspath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReal(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dots", "sub"), 0o755))
	require.NoError(t, os.Symlink("dots", filepath.Join(dir, "rel")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "dots", "later"), filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	cases := map[string]string{
		"rel/sub/x":      "dots/sub/x",     // an existing link, a missing rest
		"dangling/a/b":   "dots/later/a/b", // a dangling link, followed
		"dots/sub":       "dots/sub",
		"missing/deeper": "missing/deeper",
		"loop/x":         "loop/x",
	}
	for in, want := range cases {
		assert.Equal(t, filepath.Join(dir, want), Real(filepath.Join(dir, in)), in)
	}
}
