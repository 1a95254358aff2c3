package rootfs

import (
	"github.com/tether-dev/tether/internal/testenv"

	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// requireOrSkip skips with reason, or fails under REQUIRE_SANDBOX=1 (CI),
// where provisioning guarantees the tools and privileges.
var requireOrSkip = testenv.SkipOrFail

// staticBusybox returns the host's static busybox or skips.
func staticBusybox(t *testing.T) string {
	t.Helper()
	bb, err := findBusybox("")
	if err != nil {
		requireOrSkip(t, err.Error())
	}
	return bb
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestBuildBusybox(t *testing.T) {
	staticBusybox(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "sub", "root") // the parent is created too
	var progress bytes.Buffer
	res, err := Build(t.Context(), BuildOptions{From: FromBusybox, Dir: dir, Progress: &progress})
	require.NoError(t, err, progress.String())

	assert.Equal(t, dir, res.Dir)
	assert.Equal(t, FromBusybox, res.From)
	assert.Positive(t, res.Duration)
	assert.Contains(t, progress.String(), "rootfs-busybox: linked")
	assert.Contains(t, progress.String(), "rootfs: built "+dir)
	require.NoError(t, Validate(dir, "/workspace"))

	link, err := os.Readlink(filepath.Join(dir, "bin", "sh"))
	require.NoError(t, err)
	assert.Equal(t, "/bin/busybox", link)
	static, err := isStatic(filepath.Join(dir, "bin", "busybox"))
	require.NoError(t, err)
	assert.True(t, static)
	for _, applet := range []string{"bin/ls", "bin/cat", "usr/bin/env", "bin/true"} {
		link, err := os.Readlink(filepath.Join(dir, applet))
		if assert.NoError(t, err, applet) {
			assert.Equal(t, "/bin/busybox", link, applet)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(dir, "etc", "passwd"))
	require.NoError(t, err)
	assert.Contains(t, string(passwd), "root:x:0:0:")
	assert.Contains(t, string(passwd), "nobody:x:65534:65534:")
	group, err := os.ReadFile(filepath.Join(dir, "etc", "group"))
	require.NoError(t, err)
	assert.Contains(t, string(group), "root:x:0:")
	fi, err := os.Stat(filepath.Join(dir, "tmp"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, fi.Mode())

	// Nothing but the root is left next to it.
	assert.Equal(t, []string{"root"}, entries(t, filepath.Join(parent, "sub")))

	// The root runs a shell when we may chroot into it.
	if os.Geteuid() == 0 {
		out, err := exec.Command("chroot", dir, "/bin/sh", "-c", "echo hello from $(id -un)").CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, "hello from root\n", string(out))
	}
}

func TestBuildForceReplaces(t *testing.T) {
	staticBusybox(t)
	dir := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "old"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old", "file"), []byte("x"), 0o644))

	_, err := Build(t.Context(), BuildOptions{From: FromBusybox, Dir: dir})
	require.ErrorIs(t, err, ErrNotEmpty)
	assert.Contains(t, err.Error(), "--force")
	assert.FileExists(t, filepath.Join(dir, "old", "file"), "a refused build must leave the directory alone")

	_, err = Build(t.Context(), BuildOptions{From: FromBusybox, Dir: dir, Force: true})
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(dir, "old"))
	require.NoError(t, Validate(dir))
	assert.Equal(t, []string{"root"}, entries(t, filepath.Dir(dir)), "no .tmp- or .old- directory is left")
}

func TestBuildIntoEmptyDir(t *testing.T) {
	staticBusybox(t)
	dir := t.TempDir() // exists and is empty: allowed without --force
	_, err := Build(t.Context(), BuildOptions{From: FromBusybox, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, Validate(dir))
}

func TestBuildFailureLeavesNothing(t *testing.T) {
	bb := staticBusybox(t)

	t.Run("script fails", func(t *testing.T) {
		// Called as "false", busybox runs its false applet: --list-full lists
		// nothing and the script gives up after creating files.
		tools := t.TempDir()
		fake := filepath.Join(tools, "false")
		require.NoError(t, os.Symlink(bb, fake))
		parent := t.TempDir()
		dir := filepath.Join(parent, "root")
		var progress bytes.Buffer
		_, err := Build(t.Context(), BuildOptions{From: FromBusybox, Dir: dir, Tool: fake, Progress: &progress})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "listed no applets", "the error carries the script's last output")
		assert.Empty(t, entries(t, parent), "the failed build left something behind")
	})

	t.Run("cancelled", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "root")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := Build(ctx, BuildOptions{From: FromBusybox, Dir: dir})
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, entries(t, parent))
	})
}

func TestBuildRejectsBadInput(t *testing.T) {
	staticBusybox(t)
	base := t.TempDir()
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, []byte("keep"), 0o644))
	nonEmpty := filepath.Join(base, "nonempty")
	require.NoError(t, os.MkdirAll(filepath.Join(nonEmpty, "x"), 0o755))

	tests := []struct {
		name  string
		opts  BuildOptions
		root  bool // pretend to be root
		is    error
		wants []string
	}{
		{name: "unknown source", opts: BuildOptions{From: "alpine", Dir: filepath.Join(base, "a")}, is: ErrUnknownSource, wants: []string{`"alpine"`, "want busybox or debootstrap"}},
		{name: "empty source", opts: BuildOptions{Dir: filepath.Join(base, "a")}, is: ErrUnknownSource},
		{name: "no dir", opts: BuildOptions{From: FromBusybox}, wants: []string{"no directory given"}},
		{name: "root dir", opts: BuildOptions{From: FromBusybox, Dir: "/", Force: true}, wants: []string{"refusing to build into /"}},
		{name: "target is a file", opts: BuildOptions{From: FromBusybox, Dir: file, Force: true}, wants: []string{"is not a directory"}},
		{name: "non-empty without force", opts: BuildOptions{From: FromBusybox, Dir: nonEmpty}, is: ErrNotEmpty, wants: []string{"use --force"}},
		{name: "parent is a file", opts: BuildOptions{From: FromBusybox, Dir: filepath.Join(file, "sub", "root")}, wants: []string{"creating parent of", "not a directory"}},
		{name: "parent not creatable", opts: BuildOptions{From: FromBusybox, Dir: "/proc/tether-no-such-dir/root"}, wants: []string{"creating parent of /proc/tether-no-such-dir/root"}},
		{name: "busybox missing", opts: BuildOptions{From: FromBusybox, Dir: filepath.Join(base, "b"), Tool: filepath.Join(base, "no-busybox")}, is: ErrMissingTool, wants: []string{"apt-get install busybox-static", "scripts/provision.sh"}},
		{name: "busybox dynamic", opts: BuildOptions{From: FromBusybox, Dir: filepath.Join(base, "b"), Tool: "/bin/dash"}, is: ErrMissingTool, wants: []string{"dynamically linked", "busybox-static"}},
		{name: "debootstrap not root", opts: BuildOptions{From: FromDebootstrap, Dir: filepath.Join(base, "d")}, is: ErrNotRoot, wants: []string{"run tether as root or with sudo"}},
		{name: "debootstrap missing", root: true, opts: BuildOptions{From: FromDebootstrap, Dir: filepath.Join(base, "d"), Tool: filepath.Join(base, "no-debootstrap")}, is: ErrMissingTool, wants: []string{"apt-get install debootstrap"}},
		{name: "suite that looks like an option", root: true, opts: BuildOptions{From: FromDebootstrap, Dir: filepath.Join(base, "d"), Suite: "--foreign"}, wants: []string{"want a Debian suite name"}},
		{name: "mirror not a URL", root: true, opts: BuildOptions{From: FromDebootstrap, Dir: filepath.Join(base, "d"), Mirror: "deb.debian.org"}, wants: []string{"want an http://, https:// or file:// URL"}},
		{name: "mirror with a space", root: true, opts: BuildOptions{From: FromDebootstrap, Dir: filepath.Join(base, "d"), Mirror: "http://a.example/debian --variant=x"}, wants: []string{"checking mirror"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: geteuid is swapped.
			old := geteuid
			t.Cleanup(func() { geteuid = old })
			geteuid = func() int {
				if tt.root {
					return 0
				}
				return 1000
			}
			_, err := Build(t.Context(), tt.opts)
			require.Error(t, err)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			for _, w := range tt.wants {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// Nothing was created or changed by the refused builds.
	assert.ElementsMatch(t, []string{"file", "nonempty"}, entries(t, base))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	assert.Equal(t, []string{"x"}, entries(t, nonEmpty))
}

func TestTailWriter(t *testing.T) {
	var all bytes.Buffer
	tw := &tailWriter{w: &all, max: 2}
	for _, chunk := range []string{"one\ntw", "o\nthree\n", "partial"} {
		n, err := tw.Write([]byte(chunk))
		require.NoError(t, err)
		assert.Equal(t, len(chunk), n)
	}
	assert.Equal(t, "one\ntwo\nthree\npartial", all.String())
	assert.Equal(t, "two\nthree\npartial", tw.tail())
}

// requireMountPrivilege skips unless we can mount (root with CAP_SYS_ADMIN).
func requireMountPrivilege(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		requireOrSkip(t, "mount tests need root")
	}
	probe := t.TempDir()
	if err := unix.Mount("tether-test", probe, "tmpfs", 0, "size=1m"); err != nil {
		requireOrSkip(t, "cannot mount a tmpfs: "+err.Error())
	}
	require.NoError(t, unix.Unmount(probe, 0))
}

func TestRemoveBuiltStopsAtMounts(t *testing.T) {
	requireMountPrivilege(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "proc")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, unix.Mount("tether-test", mnt, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	keep := filepath.Join(mnt, "host-file")
	require.NoError(t, os.WriteFile(keep, []byte("x"), 0o644))

	// A user's directory with a mount below: refuse, touch nothing.
	err := removeBuilt(dir, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mounts remain below it")
	assert.FileExists(t, keep)
	_, err = checkTarget(dir, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unmount them before replacing it")

	// Our own build directory: detach the mount (the file on the mounted
	// filesystem is not deleted through it), then remove.
	require.NoError(t, removeBuilt(dir, true))
	assert.NoDirExists(t, dir)
	mounts, err := mountsUnder(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Empty(t, mounts)
}

// TestBuildDebootstrap runs a real debootstrap (about 30 s and 200 MB with a
// nearby mirror). It needs root and the mirror; -short skips it.
func TestBuildDebootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("debootstrap takes about 30 s; skipped with -short")
	}
	if os.Geteuid() != 0 {
		requireOrSkip(t, "debootstrap needs root")
	}
	if _, err := findTool("", "debootstrap", "/usr/sbin/debootstrap"); err != nil {
		requireOrSkip(t, err.Error())
	}
	mirror := DefaultMirror(DefaultSuite)
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Head(mirror + "/dists/" + DefaultSuite + "/Release")
	if err != nil {
		t.Skipf("mirror %s unreachable: %v", mirror, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Skipf("mirror %s: %s", mirror, resp.Status)
	}

	parent := t.TempDir()
	dir := filepath.Join(parent, "debian")
	var progress bytes.Buffer
	res, err := Build(t.Context(), BuildOptions{From: FromDebootstrap, Dir: dir, Progress: &progress})
	require.NoError(t, err, progress.String())
	assert.Equal(t, mirror, res.Mirror)
	assert.Equal(t, DefaultSuite, res.Suite)
	assert.Contains(t, progress.String(), "I: Base system installed successfully.")
	require.NoError(t, Validate(dir, "/workspace"))
	osRelease, err := os.ReadFile(filepath.Join(dir, "etc", "os-release"))
	require.NoError(t, err)
	assert.Contains(t, string(osRelease), "VERSION_CODENAME="+DefaultSuite)
	mounts, err := mountsUnder(parent)
	require.NoError(t, err)
	assert.Empty(t, mounts, "debootstrap left mounts behind")
	assert.Equal(t, []string{"debian"}, entries(t, parent))
	out, err := exec.Command("chroot", dir, "/bin/sh", "-c", "dpkg-query -W -f '${Package}\\n' dpkg").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "dpkg", strings.TrimSpace(string(out)))
}
