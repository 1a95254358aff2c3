package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tether-dev/tether/internal/testenv"
	"golang.org/x/sys/unix"
)

// projectQuotaOn reports whether dir's filesystem keeps project quotas,
// and the error that says why not.
func projectQuotaOn(t *testing.T, dir string) error {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var info ifDqinfo
	return quotactlFd(fd, qGetInfo, 0, unsafe.Pointer(&info))
}

// TestDiskLimitReportedWhereUnenforceable: a disk limit on a workspace
// whose filesystem has no project quota is listed in not_enforced (the
// command still runs); where it has one, it is not.
func TestDiskLimitReportedWhereUnenforceable(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o755))
	res, out := run(t, r, Config{Workspace: ws, Seccomp: SeccompOptional, Limits: Limits{DiskBytes: 1 << 20}}, "echo ran")
	assert.Equal(t, 0, res.ExitCode, out)
	assert.Equal(t, "ran\n", out)
	assert.False(t, res.DiskLimitHit)
	if err := projectQuotaOn(t, ws); err != nil {
		t.Logf("no project quota here: %v", err)
		assert.Contains(t, res.NotEnforced, "disk")
	} else {
		assert.NotContains(t, res.NotEnforced, "disk")
	}
	assert.ErrorIs(t, Config{Limits: Limits{DiskBytes: 1}}.Validate(), ErrInvalidConfig, "a disk limit needs a workspace")
	assert.ErrorIs(t, Config{Workspace: ws, Limits: Limits{DiskBytes: -1}}.Validate(), ErrInvalidConfig)
}

// TestDiskLimitProjectQuota enforces a 4 MiB limit on a workspace in a
// loop-mounted ext4 image made with project quotas: a command writing 16
// MiB fails, the result says the limit was hit, the host sees less than
// the limit added, and the limit is gone once the sandbox is.
func TestDiskLimitProjectQuota(t *testing.T) {
	r := newTestRunner(t)
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	if err := projectQuotaOn(t, "/"); errors.Is(err, unix.ENOSYS) {
		// Not a sandbox capability: this kernel was built without
		// CONFIG_QUOTACTL, so no filesystem can hold a quota here.
		t.Skip("the kernel has no quota support (quotactl_fd: ENOSYS)")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 64<<20))
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", "quota,project", "-E", "quotatype=prjquota", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop,prjquota", img, mnt).CombinedOutput(); err != nil {
		// A kernel without ext4's quota support (CONFIG_QUOTA and
		// CONFIG_QFMT_V2) refuses the image and says so in its log.
		if log, _ := exec.Command("dmesg").Output(); strings.Contains(string(log), "not built with CONFIG_QUOTA") {
			t.Skipf("the kernel cannot mount ext4 with quotas (not built with CONFIG_QUOTA and CONFIG_QFMT_V2): %s", out)
		}
		t.Fatalf("mounting the image: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v: %s", mnt, err, out)
		}
	})
	ws := filepath.Join(mnt, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "old/dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "old/dir/f"), make([]byte, 1<<20), 0o644))
	require.NoError(t, projectQuotaOn(t, ws))

	cfg := Config{Workspace: ws, Seccomp: SeccompOptional, Limits: Limits{DiskBytes: 4 << 20}}
	res, out := run(t, r, cfg, "cd "+ws+"/old/dir && dd if=/dev/zero of=big bs=1M count=16 2>&1; sync; echo rc=$?")
	assert.NotContains(t, res.NotEnforced, "disk")
	assert.True(t, res.DiskLimitHit, out)
	assert.Contains(t, out, "quota", "the command saw EDQUOT")
	fi, err := os.Stat(filepath.Join(ws, "old/dir/big"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(4<<20), "no more than the limit was added, in a directory that existed before")

	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	var q ifDqblk
	require.NoError(t, quotactlFd(fd, qGetQuota, uint32(st.Ino), unsafe.Pointer(&q)))
	assert.Zero(t, q.Bhardlimit, "the limit ends with the sandbox")

	// Inside the sandbox, the project cannot be changed to escape it.
	res, out = run(t, r, cfg, "cd "+ws+" && rm -f old/dir/big && chattr -P old/dir 2>&1; chattr -p 0 old/dir 2>&1; lsattr -pd old/dir; echo end")
	assert.Contains(t, out, "end", out)
	var a fsxattr
	dfd, err := unix.Open(filepath.Join(ws, "old/dir"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	require.NoError(t, ioctlFsxattr(dfd, fsIocFsgetxattr, &a))
	assert.Equal(t, uint32(st.Ino), a.Projid)
	assert.NotZero(t, a.Xflags&fsXflagProjinherit)
	assert.False(t, res.DiskLimitHit)
	assert.False(t, slices.Contains(res.NotEnforced, "disk"))
}

// TestDiskMarkTree gives a workspace tree its project on an XFS image
// (project ids need no quota there): every directory and file
// gets it, directories inherit it, symlinks and FIFOs are left alone, and
// a file created afterwards in an old directory is in the project.
func TestDiskMarkTree(t *testing.T) {
	requireSandbox(t)
	mnt := mountXFS(t)
	ws := filepath.Join(mnt, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a/b/c"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a/b/f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(ws, "a/link")))
	require.NoError(t, unix.Mkfifo(filepath.Join(ws, "a/fifo"), 0o644))
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	require.NoError(t, markTree(fd, st.Dev, 4242))
	projectOf := func(p string, dir bool) fsxattr {
		t.Helper()
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if dir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Open(p, flags, 0)
		require.NoError(t, err, p)
		defer unix.Close(fd)
		var a fsxattr
		require.NoError(t, ioctlFsxattr(fd, fsIocFsgetxattr, &a))
		return a
	}
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		a := projectOf(filepath.Join(ws, d), true)
		assert.Equal(t, uint32(4242), a.Projid, d)
		assert.NotZero(t, a.Xflags&fsXflagProjinherit, d)
	}
	assert.Equal(t, uint32(4242), projectOf(filepath.Join(ws, "a/b/f"), false).Projid)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a/b/c/new"), []byte("y"), 0o644))
	assert.Equal(t, uint32(4242), projectOf(filepath.Join(ws, "a/b/c/new"), false).Projid, "inherited")
	passwd := projectOf("/etc/passwd", false)
	assert.NotEqual(t, uint32(4242), passwd.Projid, "the symlink was not followed")
}

// mountXFS mounts a fresh sparse XFS image (project ids need no quota
// there) for the test and returns its mount point; it is unmounted in
// cleanup.
func mountXFS(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"mkfs.xfs", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "needs "+tool)
		}
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 320<<20)) // sparse; XFS's minimum is 300 MB
	if out, err := exec.Command("mkfs.xfs", "-q", "-f", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.xfs: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mounting the image: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}
