package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
)

// fillDir makes dir hold n empty files: a directory no host-side walker
// may read in one call. The host fills it: who made the names does not
// matter to the walkers under test, and every creation inside a sandbox
// passes the create gate's notification (100,001 of them took 30 s on an
// idle machine and past the one-shot's 60 s under CI's load).
func fillDir(t *testing.T, dir string, n int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := range n {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%07d", i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
}

// TestPoisonHugeDirectory: the workspace holds a directory with more
// names than the start-up walk lists of one directory. The next sandbox's walk
// does not read it whole (no stall, no memory for every name), reports
// nested-repos as not enforced rather than a clean workspace, and still
// freezes the nested repository it can see elsewhere: planted config and
// hooks reach the host's git in neither the root nor sub/.
func TestPoisonHugeDirectory(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	sub := filepath.Join(ws, "zz/sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	hostGit(t, sub, "init", "-q")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "sub-one")
	fillDir(t, filepath.Join(ws, "huge"), dirlist.MaxEntries+1)
	chownWorkspace(t, ws)

	res, out := sandboxRun(t, r, ws, plant(".git", markers)+"\n"+plant("zz/sub/.git", markers))
	t.Log(out)
	assert.Contains(t, res.NotEnforced, "nested-repos", "a walk that could not read huge/ does not report a clean workspace")
	assertHostClean(t, ws, markers, true)
	hostGit(t, sub, "status")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "host")
	assertEmptyDir(t, markers)
}

// TestDiskMarkHugeDirectory: a directory of a workspace on XFS (project
// ids need no quota there) holds more names than one directory may list,
// as a sandbox without a disk limit can leave it. Marking the tree for a later
// limit does not read it whole, and fails wrapping errDiskUnsupported (the
// limit is then listed in not_enforced) instead of leaving those files
// uncharged; the root, marked last, stays unmarked, so the next limit
// walks again.
func TestDiskMarkHugeDirectory(t *testing.T) {
	requireSandbox(t) // mounts an image
	mnt := mountXFS(t)
	ws := filepath.Join(mnt, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	fillDir(t, filepath.Join(ws, "huge"), dirlist.MaxEntries+1)

	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	err = markTree(fd, st.Dev, 4242)
	require.ErrorIs(t, err, errDiskUnsupported)
	assert.ErrorContains(t, err, "huge: too many directory entries")
	var a fsxattr
	require.NoError(t, ioctlFsxattr(fd, fsIocFsgetxattr, &a))
	assert.Zero(t, a.Projid, "the root is not marked: the walk is not complete")
}
