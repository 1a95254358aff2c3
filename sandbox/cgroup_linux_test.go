package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/testenv"
)

func TestOwnCgroup(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "cgroup")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	got, err := ownCgroup(write("0::/system.slice/tether.service/tether-daemon\n"))
	require.NoError(t, err)
	assert.Equal(t, "/system.slice/tether.service/tether-daemon", got)
	// Hybrid: v1 lines first; the v2 entry is the "0::" one.
	got, err = ownCgroup(write("12:memory:/user.slice\n1:name=systemd:/user.slice/x.scope\n0::/user.slice/x.scope\n"))
	require.NoError(t, err)
	assert.Equal(t, "/user.slice/x.scope", got)
	_, err = ownCgroup(write("12:memory:/user.slice\n"))
	assert.ErrorContains(t, err, "no cgroup v2 entry")
}

// TestDelegatedAncestor checks which cgroups count as delegated to root:
// only those systemd marked with trusted.delegate (an attribute only a
// process privileged on the host can set) and that belong to root. A
// subtree marked only with user.delegate, which the owner of any directory
// can set, or delegated to another user, is not tether's.
func TestDelegatedAncestor(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root (trusted.* extended attributes)")
	}
	mount := t.TempDir()
	svc := "/system.slice/tether.service"
	leaf := svc + "/" + delegatedLeaf
	user := "/user.slice/user-1000.slice/user@1000.service"
	for _, p := range []string{leaf, user + "/app.slice/term.scope", "/system.slice/marked-by-user.service", "/system.slice/off.service"} {
		require.NoError(t, os.MkdirAll(filepath.Join(mount, p), 0o755))
	}
	setxattr := func(p, name, value string) {
		t.Helper()
		err := unix.Setxattr(filepath.Join(mount, p), name, []byte(value), 0)
		if errors.Is(err, unix.ENOTSUP) {
			testenv.SkipOrFail(t, "the temporary directory's filesystem has no extended attributes")
		}
		require.NoError(t, err)
	}
	setxattr(svc, "trusted.delegate", "1")
	setxattr(user, "trusted.delegate", "1")
	require.NoError(t, os.Chown(filepath.Join(mount, user), 1000, 1000))
	setxattr("/system.slice/marked-by-user.service", "user.delegate", "1")
	setxattr("/system.slice/off.service", "trusted.delegate", "0")

	for _, c := range []struct{ self, want string }{
		{svc, svc},
		{leaf, svc},
		{user + "/app.slice/term.scope", ""},
		{"/system.slice/marked-by-user.service", ""},
		{"/system.slice/off.service", ""},
		{"/system.slice", ""},
		{"/", ""},
	} {
		assert.Equal(t, c.want, delegatedAncestor(mount, c.self, 0), "self %s", c.self)
	}
	// The user's own tether (were it to place cgroups) would use its subtree.
	assert.Equal(t, user, delegatedAncestor(mount, user+"/app.slice/term.scope", 1000))
}

// TestEnterDelegatedLeaf moves a process from the top of a (real, cgroup
// v2) subtree into the leaf, after which the subtree can enable
// controllers for the sandboxes' cgroups; a second process left at the top
// is an ErrCgroupDelegation that names it.
func TestEnterDelegatedLeaf(t *testing.T) {
	testenv.RequireSandbox(t)
	mount := v2Mount(t)
	base := fmt.Sprintf("/tether-deleg-test-%d", os.Getpid())
	top := filepath.Join(mount, base)
	require.NoError(t, os.Mkdir(top, 0o755))
	var started []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range started {
			_ = c.Process.Kill()
			_, _ = c.Process.Wait()
		}
		_ = rmdirRetry(filepath.Join(top, delegatedLeaf))
		assert.NoError(t, rmdirRetry(top))
	})
	spawnIn := func(dir string) int {
		c := exec.Command("sleep", "600")
		require.NoError(t, c.Start())
		started = append(started, c)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(c.Process.Pid)), 0))
		return c.Process.Pid
	}
	procs := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}

	tether := spawnIn(top)
	require.NoError(t, enterDelegatedLeaf(mount, base, tether))
	assert.Equal(t, strconv.Itoa(tether), procs(filepath.Join(top, delegatedLeaf)))
	assert.Empty(t, procs(top))
	// The point of the move: the top may now give its children controllers.
	if ctrl, _ := os.ReadFile(filepath.Join(top, "cgroup.controllers")); strings.Contains(string(ctrl), "pids") {
		require.NoError(t, os.WriteFile(filepath.Join(top, "cgroup.subtree_control"), []byte("+pids"), 0))
		require.NoError(t, os.WriteFile(filepath.Join(top, "cgroup.subtree_control"), []byte("-pids"), 0))
	}

	other := spawnIn(top)
	err := enterDelegatedLeaf(mount, base, tether)
	require.ErrorIs(t, err, ErrCgroupDelegation)
	assert.Contains(t, err.Error(), strconv.Itoa(other))
	assert.Contains(t, err.Error(), "contrib/tether.service")
	// Move it out again so the cleanup can remove the cgroups.
	require.NoError(t, os.WriteFile(filepath.Join(top, delegatedLeaf, "cgroup.procs"), []byte(strconv.Itoa(other)), 0))
}

// v2Mount returns the mount point of the cgroup v2 hierarchy: /sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one.
func v2Mount(t *testing.T) string {
	t.Helper()
	for _, m := range []string{unifiedMount, unifiedMount + "/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return m
		}
	}
	testenv.SkipOrFail(t, "no cgroup v2 hierarchy mounted")
	return ""
}

// TestReadUsageBothLayouts reads a finished container's accounting from
// fake cgroup directories laid out as cgroup v1 (one per controller) and as
// v2 (one directory, "" in libcontainer's CgroupPaths), with the same
// figures: the v2 files are what a unified host has, and a session's OOM
// counter is read the same way.
func TestReadUsageBothLayouts(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("v1/cpuacct/cpuacct.usage", "2500000000\n")
	write("v1/memory/memory.max_usage_in_bytes", "33554432\n")
	write("v1/memory/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
	write("v2/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
	write("v2/memory.peak", "33554432\n")
	write("v2/memory.events", "low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n")
	// Hybrid: the unified tree has no controllers' files.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "unified"), 0o755))

	v1 := map[string]string{"cpuacct": dir + "/v1/cpuacct", "memory": dir + "/v1/memory", "": dir + "/unified"}
	v2 := map[string]string{"": dir + "/v2"}
	for name, paths := range map[string]map[string]string{"v1": v1, "v2": v2} {
		u := readUsage(paths)
		assert.Equal(t, 2500*time.Millisecond, u.cpu, name)
		assert.Equal(t, int64(32<<20), u.peakMem, name)
		assert.True(t, u.oomKilled, name)
		assert.Equal(t, int64(2), oomKills(paths), name)
	}
	write("v2/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
	assert.False(t, readUsage(v2).oomKilled)
	assert.Zero(t, oomKills(map[string]string{"": dir + "/unified"}), "no memory controller: no counter")
	assert.Zero(t, oomKills(nil), "rootless: no cgroups")
}
