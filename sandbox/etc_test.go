package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEtcSnapshot(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	entries := []string{"/etc/passwd", "/etc/ssl", "/etc/no-such-entry"}
	dir, err := etcSnapshot(state, entries)
	require.NoError(t, err)
	assert.Equal(t, state, filepath.Dir(dir))

	want, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "passwd"))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.NoFileExists(t, filepath.Join(dir, "no-such-entry"))
	assert.NoFileExists(t, filepath.Join(dir, "shadow"), "only listed entries")
	if fi, err := os.Stat("/etc/ssl/private"); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
		assert.NoDirExists(t, filepath.Join(dir, "ssl", "private"), "not world-readable: kept out")
	}
	if _, err := os.Stat("/etc/ssl/certs"); err == nil {
		assert.DirExists(t, filepath.Join(dir, "ssl", "certs"))
	}

	again, err := etcSnapshot(state, entries)
	require.NoError(t, err)
	assert.Equal(t, dir, again, "unchanged host files reuse the snapshot")
	hash, err := hashEtc(entries)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(state, etcSnapshotPrefix+hash), dir)

	other, err := etcSnapshot(state, []string{"/etc/group"})
	require.NoError(t, err)
	assert.NotEqual(t, dir, other, "different entries, different snapshot")
	assert.ElementsMatch(t, []string{dir}, staleEtcSnapshots(state, other))
}

func TestEtcEntries(t *testing.T) {
	t.Parallel()
	etc, other := etcEntries([]string{"/usr", "/etc/passwd", "/etcetera", "/etc/ssl"})
	assert.Equal(t, []string{"/etc/passwd", "/etc/ssl"}, etc)
	assert.Equal(t, []string{"/usr", "/etcetera"}, other)
}

func TestLibcontainerEtcSnapshotMount(t *testing.T) {
	t.Parallel()
	p := testPlacement
	p.EtcDir = "/run/tether-unit/etc-abc"
	lc := translate(t, Config{}, p)
	etc := mountAt(t, lc, "/etc")
	assert.Equal(t, p.EtcDir, etc.Source)
	for _, m := range lc.Mounts {
		assert.NotEqual(t, "/etc/passwd", m.Destination, "the snapshot replaces per-file binds")
	}
	assert.NotNil(t, mountAt(t, lc, "/usr"))

	p.EtcDir = "relative"
	_, err := Config{Rootfs: testLayout, Seccomp: SeccompOff}.Libcontainer("c1", p)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}
