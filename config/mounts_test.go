package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMountsRefused: every mount that would show the sandbox the host's
// root, a system directory, the workspace (or a parent of it), tether's
// own state or config, or a protected path is a load error naming the
// line, and a good one loads with its default mode.
func TestMountsRefused(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	ws := filepath.Join(dir, "home", "u", "proj")
	load := func(mounts string) error {
		t.Setenv(EnvStateDir, "")
		_, err := Parse(filepath.Join(dir, "c.yaml"), []byte("state_dir: "+state+"\nprofiles:\n  default:\n    terminal:\n      cwd: "+ws+
			"\n      mounts:\n"+mounts), dir)
		return err
	}
	for _, c := range []struct{ path, why string }{
		{"/", "host's root"},
		{"/proc/self", "/proc"}, {"/sys", "/sys"}, {"/dev/shm", "/dev"}, {"/run/user/0", "/run"},
		{"/etc", "/etc"}, {"/usr/local/bin", "/usr"}, {"/var/lib/docker", "/var/lib"},
		{ws, "workspace"}, {filepath.Dir(ws), "holds the workspace"}, {filepath.Join(ws, ".git"), "inside the workspace"},
		{state, "tether's own"}, {filepath.Join(state, "allowlist"), "tether's own"}, {dir, "holds the workspace"},
		{filepath.Join(dir, "c.yaml"), "tether's own"},
		{filepath.Join(dir, "home", "u", ".ssh"), "protected"}, {filepath.Join(dir, "home", "u", ".gitconfig"), "protected"},
		{filepath.Join(dir, "other", ".git", "hooks"), "protected"}, {filepath.Join(dir, "home", "u", ".config", "git"), "protected"},
		{"relative/../../..", ""},
	} {
		err := load("        - {path: " + c.path + ", mode: rw}\n")
		require.Error(t, err, c.path)
		assert.Contains(t, err.Error(), "c.yaml:7:", c.path)
		assert.Contains(t, err.Error(), c.why, c.path)
	}
	for _, bad := range []string{"        - {path: /srv/c, mode: rwx}\n", "        - {mode: rw}\n",
		"        - {path: /srv/c}\n        - {path: /srv/c/sub}\n"} {
		require.Error(t, load(bad), bad)
	}
	require.NoError(t, load("        - {path: /srv/cache, mode: rw}\n        - {path: /opt/tools}\n"))
	cfg, err := Parse("c.yaml", []byte("profiles:\n  default:\n    terminal:\n      mounts: [{path: /opt/tools}]\n"), dir)
	require.NoError(t, err)
	assert.Equal(t, MountRO, cfg.Profiles["default"].Terminal.Mounts[0].Mode, "read-only by default")

	// A writable mount of one profile may not reach into another's
	// workspace or hold another's mount.
	_, err = Parse("c.yaml", []byte("profiles:\n  a:\n    terminal:\n      cwd: /srv/b/ws\n  default:\n    terminal:\n      cwd: /srv/a\n      mounts: [{path: /srv/b, mode: rw}]\n"), dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workspace of profile a")
	_, err = Parse("c.yaml", []byte("profiles:\n  default:\n    terminal:\n      backend: host\n      mounts: [{path: /opt/x}]\n"), dir)
	assert.ErrorContains(t, err, "needs backend: sandbox")
}
