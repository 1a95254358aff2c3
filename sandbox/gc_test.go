package sandbox

import (
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
)

// startHelper starts a stand-in tether (this test binary in helper mode)
// running "sleep 600" in a sandbox, and waits until the sandboxed sleep is
// in its cgroup. It returns the helper and the sleep's host pid.
func startHelper(t *testing.T, r *Runner) (*exec.Cmd, int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"="+r.StateRoot+":"+r.CgroupPrefix)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	procs := processMount(t)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
		for _, d := range dirs {
			if !strings.HasPrefix(d, procs+"/") {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				if strings.HasPrefix(string(cmdline), "sleep\x00600") {
					return cmd, pid
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("helper's sandboxed sleep never appeared")
	return nil, 0
}

func TestGCReapsCrashedTether(t *testing.T) {
	r := newTestRunner(t)
	helper, sleepPid := startHelper(t, r)

	// While the owner lives, gc keeps its container.
	rep, err := GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Live)
	assert.Empty(t, rep.Containers)
	assert.True(t, pidAlive(sleepPid), "a live tether's container is never touched")

	// Crash the owner: SIGKILL leaves state, cgroups and the lock file.
	require.NoError(t, helper.Process.Kill())
	_ = helper.Wait()
	entries, _ := os.ReadDir(filepath.Join(r.StateRoot, containersDir))
	require.Len(t, entries, 1, "the crash left libcontainer state behind")
	dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
	require.NotEmpty(t, dirs, "the crash left cgroups behind")

	rep, err = GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Containers, 1)
	assert.Zero(t, rep.Live)
	assert.NotEmpty(t, rep.Cgroups)
	assert.NotEmpty(t, rep.StateDirs)
	assert.Eventually(t, func() bool { return !pidAlive(sleepPid) }, 5*time.Second, 20*time.Millisecond,
		"the orphaned sandbox's processes are gone")
	// The runner's cleanup asserts nothing at all remains.

	rep, err = GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	assert.Empty(t, rep.Containers, "a second gc finds nothing")
	assert.Empty(t, rep.Cgroups)
}

func TestRunReapsDeadLeftoversAtStart(t *testing.T) {
	r := newTestRunner(t)
	helper, _ := startHelper(t, r)
	require.NoError(t, helper.Process.Kill())
	_ = helper.Wait()

	// The next run on the same state root cleans up the crash first.
	res, _ := run(t, r, Config{}, "true")
	assert.Equal(t, 0, res.ExitCode)
	entries, _ := os.ReadDir(filepath.Join(r.StateRoot, containersDir))
	assert.Empty(t, entries)
}

func TestGCOnEmptyStateRoot(t *testing.T) {
	requireSandbox(t)
	rep, err := GC(GCOptions{StateRoot: filepath.Join(t.TempDir(), "never-used"), CgroupPrefix: testPrefix + "/none"})
	require.NoError(t, err)
	assert.Empty(t, rep.Containers)
	assert.Zero(t, rep.Live)
	_, err = GC(GCOptions{StateRoot: "relative"})
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = GC(GCOptions{StateRoot: "/x", CgroupPrefix: "../escape"})
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// TestSharedRootsAndCaches: runs with the same mounts share one empty root;
// another workspace gets its own (so it never shows a foreign path); gc
// with Caches removes the shared roots, /etc snapshots and compiled filters.
func TestSharedRootsAndCaches(t *testing.T) {
	r := newTestRunner(t)
	ws1, ws2 := t.TempDir(), filepath.Join(t.TempDir(), "other-project")
	require.NoError(t, os.Mkdir(ws2, 0o755))
	for i := 0; i < 3; i++ {
		run(t, r, Config{Workspace: ws1}, "true")
	}
	skels, _ := os.ReadDir(filepath.Join(r.StateRoot, skelDir))
	assert.Len(t, skels, 1, "same mounts, one shared root")
	_, out := run(t, r, Config{Workspace: ws2}, "ls -d "+filepath.Dir(ws1)+" "+ws1+"; true")
	assert.Contains(t, out, "No such file or directory", "the other workspace's path is not in this root")
	skels, _ = os.ReadDir(filepath.Join(r.StateRoot, skelDir))
	assert.Len(t, skels, 2)
	snaps := staleEtcSnapshots(r.StateRoot, "")
	assert.Len(t, snaps, 1, "one /etc snapshot for an unchanged host")

	rep, err := GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	assert.Empty(t, rep.StateDirs, "a plain gc (as run does) keeps the caches")
	// The compiled filters are on disk when this test binary compiled them
	// here rather than for an earlier state root.
	caches := 3
	if dirExists(filepath.Join(r.StateRoot, seccompDir)) {
		caches++
	}
	rep, err = GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix, Caches: true})
	require.NoError(t, err)
	assert.Len(t, rep.StateDirs, caches, "two shared roots, an /etc snapshot, maybe the compiled filters")
	skels, _ = os.ReadDir(filepath.Join(r.StateRoot, skelDir))
	assert.Empty(t, skels)
	assert.Empty(t, staleEtcSnapshots(r.StateRoot, ""))
	assert.NoDirExists(t, filepath.Join(r.StateRoot, seccompDir))
}

// TestGCRemovesOrphanCgroups: empty container cgroups under the prefix
// whose state is gone are removed; one holding a process is kept.
func TestGCRemovesOrphanCgroups(t *testing.T) {
	r := newTestRunner(t)
	mounts, err := cgroupMounts()
	require.NoError(t, err)
	for _, m := range mounts {
		require.NoError(t, os.MkdirAll(filepath.Join(m, r.CgroupPrefix, "default", "orphan-1"), 0o755))
	}
	pidsMount := processMount(t)
	busy := filepath.Join(pidsMount, r.CgroupPrefix, "default", "busy-1")
	require.NoError(t, os.MkdirAll(busy, 0o755))
	sleeper := exec.Command("sleep", "600")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait(); _ = rmdirRetry(busy) })
	require.NoError(t, os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0o644))

	rep, err := GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
	for _, d := range dirs {
		assert.NotEqual(t, "orphan-1", filepath.Base(d), "orphan removed: %s", d)
	}
	assert.DirExists(t, busy, "a cgroup with a process is never removed")
	assert.True(t, pidAlive(sleeper.Process.Pid))
	assert.GreaterOrEqual(t, len(rep.Cgroups), len(mounts))

	// Move the sleeper out again so the runner's leak check can pass.
	require.NoError(t, os.WriteFile(filepath.Join(pidsMount, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0o644))
	_, err = GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	assert.NoDirExists(t, busy, "removed once empty")
}

// TestGCKeepsOtherStateRootsCgroups: a container cgroup is empty between
// its creation and its container's start, and a sandbox of another state
// root sharing the prefix has its lock where this GC cannot see it; while
// any sandbox holds the prefix (its shared lock), GC removes no container
// cgroup under it, and the last one out does (a GC at a run's start used
// to remove such a cgroup: "cpuset.cpus: no such file or directory").
func TestGCKeepsOtherStateRootsCgroups(t *testing.T) {
	r := newTestRunner(t)
	mounts, err := cgroupMounts()
	require.NoError(t, err)
	prefix := "/" + r.CgroupPrefix
	held, err := prefixLock(prefix, unix.LOCK_SH) // the other state root's sandbox
	require.NoError(t, err)
	for _, m := range mounts {
		require.NoError(t, os.MkdirAll(filepath.Join(m, prefix, "default", "starting-1"), 0o755))
	}
	_, err = GC(GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	require.NoError(t, err)
	for _, m := range mounts {
		assert.DirExists(t, filepath.Join(m, prefix, "default", "starting-1"), "a live sandbox's cgroup is kept")
	}
	// Its sandbox ends: the last one out removes the prefix's idle cgroups.
	require.NoError(t, held.Close())
	removeIdleProfile(prefix)
	for _, m := range mounts {
		assert.NoDirExists(t, filepath.Join(m, prefix), "the last one out removes what is idle")
	}
}

// TestGCRemovesDeadTempLocks: a tether killed between creating and
// publishing a container lock (the fallback without O_TMPFILE) leaves
// locks/.<id>.tmp; GC removes it once its creator is gone, and never one
// whose creator may still publish it.
func TestGCRemovesDeadTempLocks(t *testing.T) {
	state := t.TempDir()
	locks := filepath.Join(state, locksDir)
	require.NoError(t, os.Mkdir(locks, 0o700))
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPid := dead.Process.Pid
	mine := os.Getpid()

	write := func(id string) string {
		p := filepath.Join(locks, "."+id+".tmp")
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		return p
	}
	gone := write(fmt.Sprintf("default-%d-aaaaaaaaaaaa", deadPid))
	reused := write(fmt.Sprintf("default-%d-bbbbbbbbbbbb", mine))
	old := time.Now().Add(-24 * 365 * time.Hour) // before this process started
	require.NoError(t, os.Chtimes(reused, old, old))
	live := write(fmt.Sprintf("default-%d-cccccccccccc", mine))
	held := write(fmt.Sprintf("default-%d-dddddddddddd", deadPid))
	f, err := tryLock(held) // its creator is between the lock and the rename
	require.NoError(t, err)
	defer f.Close()

	rep, err := GC(GCOptions{StateRoot: state, CgroupPrefix: fmt.Sprintf("tether-test-%d-tmplock", mine)})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{gone, reused}, rep.StateDirs)
	assert.NoFileExists(t, gone)
	assert.NoFileExists(t, reused)
	assert.FileExists(t, live, "a live creator may still publish its lock")
	assert.FileExists(t, held, "a locked temporary lock is kept")
}

// TestLockOwnerLeavesNoTemporaryName: the lock is published whole, with no
// hidden name a kill could leave behind.
func TestLockOwnerLeavesNoTemporaryName(t *testing.T) {
	state := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(state, locksDir), 0o700))
	f, err := lockOwner(state, "default-1-abc")
	require.NoError(t, err)
	defer f.Close()
	entries, err := os.ReadDir(filepath.Join(state, locksDir))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "default-1-abc.lock", entries[0].Name())
	_, err = tryLock(filepath.Join(state, locksDir, "default-1-abc.lock"))
	assert.Error(t, err, "the published lock is held")
	b, err := os.ReadFile(filepath.Join(state, locksDir, "default-1-abc.lock"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b))
}
