package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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

// The snapshot's fingerprint must change with every change a snapshot would
// show: an entry's own contents, and files or directories added, removed,
// renamed or re-permissioned anywhere below a listed directory, including in
// directories that are never listed (no subdirectories).
func TestHashEtcNoticesChanges(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "passwd")
	dir := filepath.Join(root, "ssl")
	flat := filepath.Join(dir, "certs")
	require.NoError(t, os.WriteFile(file, []byte("root:x:0:0\n"), 0o644))
	require.NoError(t, os.MkdirAll(flat, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(flat, "a.pem"), []byte("a"), 0o644))
	entries := []string{file, dir, filepath.Join(root, "missing")}

	last := func() string {
		h, err := hashEtc(entries)
		require.NoError(t, err)
		return h
	}()
	step := func(what string, change func()) {
		t.Helper()
		// File times come from the kernel's coarse clock (one timer tick,
		// at most 10 ms): let it move so each change gets a new mtime.
		time.Sleep(20 * time.Millisecond)
		change()
		h, err := hashEtc(entries)
		require.NoError(t, err)
		assert.NotEqual(t, last, h, what)
		last = h
		again, err := hashEtc(entries)
		require.NoError(t, err)
		assert.Equal(t, h, again, "unchanged after %s", what)
	}
	step("entry rewritten", func() { require.NoError(t, os.WriteFile(file, []byte("root:x:0:0:\n"), 0o644)) })
	step("file added to a directory without subdirectories", func() {
		require.NoError(t, os.WriteFile(filepath.Join(flat, "b.pem"), []byte("b"), 0o644))
	})
	step("file renamed", func() {
		require.NoError(t, os.Rename(filepath.Join(flat, "b.pem"), filepath.Join(flat, "c.pem")))
	})
	step("file removed", func() { require.NoError(t, os.Remove(filepath.Join(flat, "a.pem"))) })
	step("subdirectory added", func() { require.NoError(t, os.Mkdir(filepath.Join(flat, "sub"), 0o755)) })
	step("file added two levels down", func() {
		require.NoError(t, os.WriteFile(filepath.Join(flat, "sub", "d.pem"), []byte("d"), 0o644))
	})
	step("directory made private", func() { require.NoError(t, os.Chmod(flat, 0o700)) })
	step("missing entry created", func() { require.NoError(t, os.WriteFile(entries[2], nil, 0o644)) })
}
