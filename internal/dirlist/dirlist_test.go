package dirlist

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// hugeDir makes dir/name holding n empty files and returns their sorted
// names.
func hugeDir(t *testing.T, dir, name string, n int) []string {
	t.Helper()
	d := filepath.Join(dir, name)
	require.NoError(t, os.Mkdir(d, 0o755))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("f%05d", i)
		fd, err := unix.Open(filepath.Join(d, names[i]), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		require.NoError(t, err)
		unix.Close(fd)
	}
	return names
}

func openDir(t *testing.T, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func names(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}

// TestReadBatched: a directory is listed Batch names at a time, asking
// before each batch; past the bound nothing is returned but ErrTooLarge.
func TestReadBatched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := hugeDir(t, dir, "d", 2*Batch+452)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d", "sub"), 0o755))
	want = append(want, "sub")
	asks := 0
	entries, err := Read(openDir(t, filepath.Join(dir, "d")), "d", 10000, func() bool { asks++; return true })
	require.NoError(t, err)
	assert.Equal(t, want, names(entries), "every name, sorted")
	assert.True(t, entries[len(entries)-1].IsDir(), "with its type")
	assert.Equal(t, 4, asks, "asked before each of three batches and before the end")

	entries, err = Read(openDir(t, filepath.Join(dir, "d")), "d", 2*Batch, Always)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "d: ")
	assert.Empty(t, entries)

	asks = 0
	entries, err = Read(openDir(t, filepath.Join(dir, "d")), "d", 10000, func() bool { asks++; return asks == 1 })
	require.NoError(t, err)
	assert.Len(t, entries, Batch, "it stops when told, with the batch it has")

	fd := openDir(t, filepath.Join(dir, "d"))
	_, err = Read(fd, "d", 10000, Always)
	require.NoError(t, err)
	entries, err = Read(fd, "d", 10000, Always)
	require.NoError(t, err)
	assert.Empty(t, entries, "the caller's descriptor was read to its end: a walker lists each directory once")
}
