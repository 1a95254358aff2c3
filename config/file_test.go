package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestLoadRefusesHostileFiles: each file an attacker could hand tether in
// place of its config or secrets is refused without being read to the end
// or blocking, with a message that names the file and the fix.
func TestLoadRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	good := "profiles:\n  default: {}\n"
	cases := []struct {
		name string
		make func(t *testing.T) string
		want string
		root bool // the rule applies only when tether runs as root
	}{
		{"symlink to /dev/zero", func(t *testing.T) string {
			p := filepath.Join(dir, "zero.yaml")
			require.NoError(t, os.Symlink("/dev/zero", p))
			return p
		}, "not a regular file", false},
		{"fifo", func(t *testing.T) string {
			p := filepath.Join(dir, "fifo.yaml")
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			return p
		}, "not a regular file", false},
		{"directory", func(t *testing.T) string {
			p := filepath.Join(dir, "dir.yaml")
			require.NoError(t, os.Mkdir(p, 0o700))
			return p
		}, "not a regular file", false},
		{"too large", func(t *testing.T) string {
			p := filepath.Join(dir, "big.yaml")
			require.NoError(t, os.WriteFile(p, []byte(good+"#"+strings.Repeat("x", MaxConfigSize)+"\n"), 0o600))
			return p
		}, "more than the", false},
		{"world-writable", func(t *testing.T) string {
			p := writeFile(t, dir, "ww.yaml", good)
			require.NoError(t, os.Chmod(p, 0o666))
			return p
		}, "chmod go-w " + filepath.Join(dir, "ww.yaml"), true},
		{"group-writable", func(t *testing.T) string {
			p := writeFile(t, dir, "gw.yaml", good)
			require.NoError(t, os.Chmod(p, 0o620))
			return p
		}, "chmod go-w", true},
		{"owned by another user", func(t *testing.T) string {
			p := writeFile(t, dir, "other.yaml", good)
			require.NoError(t, os.Chown(p, 4242, 4242))
			return p
		}, "owned by uid 4242", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				testenv.SkipOrFail(t, "the rule applies when tether runs as root")
			}
			p := tc.make(t)
			_, err := Load(p)
			require.ErrorIs(t, err, ErrUntrustedFile)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, p)

			// The same rules hold for a secrets env file.
			_, err = Secrets{EnvFile: p}.LoadSecrets()
			require.ErrorIs(t, err, ErrUntrustedFile)
		})
	}

	// The same file, made safe, loads.
	p := writeFile(t, dir, "ok.yaml", good)
	_, err := Load(p)
	require.NoError(t, err)
	link := filepath.Join(dir, "link.yaml")
	require.NoError(t, os.Symlink(p, link))
	_, err = Load(link)
	require.NoError(t, err, "a symlink to a trustworthy regular file is followed")
}
