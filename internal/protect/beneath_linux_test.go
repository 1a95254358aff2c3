package protect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenBeneathLong: a path of more than PATH_MAX bytes opens beneath
// root, piece by piece, with the resolve flags kept on every piece: a
// symlink on the way is refused under RESOLVE_NO_SYMLINKS, and one that
// leaves the piece's directory under RESOLVE_BENEATH.
func TestOpenBeneathLong(t *testing.T) {
	root, err := unix.Open(t.TempDir(), unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	name := strings.Repeat("n", 250)
	var parts []string
	fd, err := unix.Dup(root)
	require.NoError(t, err)
	for range 40 { // 10,040 bytes
		require.NoError(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		unix.Close(fd)
		fd = next
		parts = append(parts, name)
	}
	require.NoError(t, unix.Symlinkat("../../..", fd, "up"))
	unix.Close(fd)
	rel := strings.Join(parts, "/")
	require.Greater(t, len(rel), 2*unix.PathMax)
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	_, err = unix.Openat2(root, rel, how)
	require.ErrorIs(t, err, unix.ENAMETOOLONG, "the kernel's limit")
	got, err := OpenBeneath(root, rel, how)
	require.NoError(t, err)
	unix.Close(got)
	_, err = OpenBeneath(root, rel+"/up", how)
	assert.ErrorIs(t, err, unix.ELOOP, "a symlink on the way")
	// A symlink in the middle of a long path, followed beneath only.
	_, err = OpenBeneath(root, strings.Join(parts[:len(parts)-1], "/")+"/"+name+"/up/"+name, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	assert.NoError(t, err, "up stays beneath root")
	_, err = OpenBeneath(root, rel+"/up/../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../..", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	assert.ErrorIs(t, err, unix.EXDEV, "leaving root")
}
