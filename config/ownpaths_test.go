package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A config file, state directory or ~/.config/tether reached through a
// symlink (a dotfiles checkout linked into place) is listed where it
// really is as well, dangling links (made later) included: a workspace
// holding the checkout then hides it from the sandbox and the file tools.
func TestOwnPathsResolveSymlinks(t *testing.T) {
	dir := t.TempDir()
	dots := filepath.Join(dir, "dotfiles")
	require.NoError(t, os.MkdirAll(filepath.Join(dots, "tether"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dots, "tether", "config.yaml"), nil, 0o644))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dots, "tether"), filepath.Join(home, ".config", "tether")))
	require.NoError(t, os.Symlink("dotfiles/state", filepath.Join(dir, "state"))) // dangling: made later
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", home)
	cfg := &Config{StateDir: filepath.Join(dir, "state"), Source: filepath.Join(home, ".config", "tether", "config.yaml")}
	got := OwnPaths(cfg)
	for _, want := range []string{
		filepath.Join(dir, "state"), filepath.Join(dots, "state"),
		filepath.Join(home, ".config", "tether", "config.yaml"), filepath.Join(dots, "tether", "config.yaml"),
		filepath.Join(home, ".config", "tether"), filepath.Join(dots, "tether"),
	} {
		assert.Contains(t, got, want)
	}
}
