package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestPools returns Pools with a unique state root and cgroup prefix,
// closed at cleanup, which then asserts that nothing was left behind.
func newTestPools(tb testing.TB) *Pools {
	tb.Helper()
	requireSessionSandbox(tb)
	requireSandbox(tb)
	prefix := fmt.Sprintf("tether-test-%d-p%d", os.Getpid(), sessTestN.Add(1))
	ps := &Pools{StateRoot: stateTempDir(tb), CgroupPrefix: prefix, Grace: 300 * time.Millisecond,
		Logf: func(f string, args ...any) { tb.Logf(f, args...) }}
	tb.Cleanup(func() {
		assert.NoError(tb, ps.Close())
		assertNothingLeft(tb, ps.StateRoot, prefix)
	})
	return ps
}

// waitReady waits (with a deadline) until the profile's pool holds n
// sandboxes ready.
func waitReady(t testing.TB, ps *Pools, profile string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for ps.Ready(profile) < n {
		require.True(t, time.Now().Before(deadline), "the pool of %s did not fill to %d", profile, n)
		time.Sleep(20 * time.Millisecond)
	}
}

// pooledRun takes a sandbox from the pool (which must be ready) and runs
// script in it.
func pooledRun(t *testing.T, ps *Pools, p PoolSpec, script string) (*Result, string) {
	t.Helper()
	waitReady(t, ps, p.Profile, 1)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	res, err := ps.Run(ctx, p, Command{Shell: script, Stdout: &out, Stderr: &out}, ExecOptions{Timeout: 30 * time.Second})
	require.NoError(t, err, "output: %s", out.String())
	return res, out.String()
}

// A pooled sandbox is fresh: what an earlier command left (files in /tmp
// and the root's writable places, processes, environment) is not visible
// to the next one, and the earlier one's processes are dead on the host.
func TestPoolSandboxIsFresh(t *testing.T) {
	ps := newTestPools(t)
	p := PoolSpec{Profile: "fresh", Size: 1, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)

	// A sleep of a length no other process on the host has.
	sleeper := fmt.Sprintf("sleep %d", 300000+os.Getpid()%99999)
	first, out := pooledRun(t, ps, p, `echo secret > /tmp/left-behind; echo x > /dev/shm/left 2>/dev/null
export LEFT=1; setsid `+sleeper+` >/dev/null 2>&1 < /dev/null & echo pid=$!; echo ok`)
	require.Equal(t, 0, first.ExitCode, out)
	require.Contains(t, out, "ok")

	second, out := pooledRun(t, ps, p, `ls -A /tmp; ls /dev/shm 2>/dev/null; echo env=${LEFT:-unset}
for d in /proc/[0-9]*; do cat $d/cmdline 2>/dev/null | tr '\0' ' '; echo; done`)
	require.Equal(t, 0, second.ExitCode, out)
	assert.NotEqual(t, first.ContainerID, second.ContainerID, "a second command got the same sandbox")
	assert.NotContains(t, out, "left-behind")
	assert.NotContains(t, out, "left\n")
	assert.Contains(t, out, "env=unset")
	assert.NotContains(t, out, sleeper, "an earlier command's process is visible")

	// From the host: nothing of the first sandbox runs any more.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(ps.StateRoot, containersDir, first.ContainerID))
		if os.IsNotExist(err) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first pooled sandbox was not torn down")
		time.Sleep(20 * time.Millisecond)
	}
	dirs, err := cgroupDirs("/" + ps.CgroupPrefix + "/fresh/" + first.ContainerID)
	require.NoError(t, err)
	assert.Empty(t, dirs, "the first sandbox's cgroups remain")
	assertNoSleeper(t, sleeper)

	// The pool refills after use.
	waitReady(t, ps, "fresh", 1)
}

// assertNoSleeper fails if a host process runs with this command line.
func assertNoSleeper(t *testing.T, cmdline string) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !pidAlive(pid) {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		assert.NotEqual(t, cmdline, strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " "), "pid %d outlived its pooled sandbox", pid)
	}
}

// A pooled sandbox serves exactly one command: a second one, or a
// background one, is refused by the sandbox itself.
func TestPoolSandboxServesOneCommand(t *testing.T) {
	ps := newTestPools(t)
	p := PoolSpec{Profile: "once", Size: 1, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	waitReady(t, ps, "once", 1)
	s, err := ps.take(t.Context(), p)
	require.NoError(t, err)
	defer s.end(ErrSessionClosed)
	_, err = s.Start(Command{Shell: "sleep 1"})
	require.ErrorIs(t, err, ErrSandboxUsed)
	res, err := s.Run(t.Context(), Command{Args: []string{"/bin/true"}})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	_, err = s.Run(t.Context(), Command{Args: []string{"/bin/true"}})
	require.ErrorIs(t, err, ErrSandboxUsed)
}

// A pooled command is placed like a cold one: the same seccomp state,
// capabilities, identity mapping, read-only root, tmpfs size and
// protected paths seen from inside, the same cgroup limits seen from the
// host, and the same exec gate.
func TestPoolSandboxSameAsCold(t *testing.T) {
	ps := newTestPools(t)
	r := newTestRunner(t)
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	standIns(t, ws, "reboot")
	g := newRefuse("reboot")
	cfg := Config{Workspace: ws, Env: []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin:/bin"},
		Limits: Limits{Pids: 77, MemoryBytes: 256 << 20, TmpfsBytes: 32 << 20}}
	probe := `grep -E '^(Seccomp|NoNewPrivs|CapEff|CapBnd|CapPrm|CapInh):' /proc/self/status
echo uid_map $(cat /proc/self/uid_map) gid_map $(cat /proc/self/gid_map)
touch /usr/pwn 2>/dev/null && echo root-writable || echo root-read-only
echo tmpfs $(df -k /tmp | tail -n1 | awk '{print $2}')
(echo '#!/bin/sh' > .git/hooks/pre-commit) 2>/dev/null && echo hook-written || echo hook-refused
reboot now; echo after=$?
echo pids $(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max 2>/dev/null)`

	r.ExecGate = g.gate
	// Separate streams: the order of stdout and stderr in one buffer
	// is the scheduler's.
	var coldOut, coldErr bytes.Buffer
	cold, err := r.Run(t.Context(), cfg, Command{Shell: probe, Stdout: &coldOut, Stderr: &coldErr})
	require.NoError(t, err, coldOut.String())

	p := PoolSpec{Profile: "same", Size: 1, Spec: SessionSpec{Config: cfg}, ExecGate: g.gate}
	ps.Prepare(p)
	waitReady(t, ps, "same", 1)
	// From the host, before the command: the pooled sandbox's cgroup
	// carries the sandbox's limits.
	s, err := ps.take(t.Context(), p)
	require.NoError(t, err)
	pids, err := s.HostPIDs()
	require.NoError(t, err)
	require.NotEmpty(t, pids)
	assert.Equal(t, "77", cgroupFile(t, pids[0], "pids", "pids.max", "pids.max"))
	assert.Equal(t, strconv.Itoa(256<<20), cgroupFile(t, pids[0], "memory", "memory.limit_in_bytes", "memory.max"))
	var poolOut, poolErr bytes.Buffer
	pooled, err := s.Exec(t.Context(), Command{Shell: probe, Stdout: &poolOut, Stderr: &poolErr}, ExecOptions{Timeout: 30 * time.Second})
	s.end(ErrSessionClosed)
	require.NoError(t, err, poolOut.String())

	for _, want := range []string{"Seccomp:\t2", "NoNewPrivs:\t1", "root-read-only", "tmpfs 32768", "hook-refused", "after="} {
		assert.Contains(t, poolOut.String(), want)
	}
	assert.Equal(t, coldOut.String(), poolOut.String(), "a pooled sandbox differs from a cold one")
	assert.Equal(t, coldErr.String(), poolErr.String(), "a pooled sandbox differs from a cold one")
	assert.Equal(t, cold.ExitCode, pooled.ExitCode)
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"), "the refused program ran")
	require.NotEmpty(t, pooled.ExecBlocked, "the exec gate saw nothing in the pooled sandbox")
	assert.Equal(t, []string{"reboot", "now"}, pooled.ExecBlocked[0].Argv)
	assert.Equal(t, cold.NotEnforced, pooled.NotEnforced)
}

// cgroupFile reads a file of the cgroup pid is in: controller's v1
// hierarchy (file), else the v2 tree (v2file).
func cgroupFile(t *testing.T, pid int, controller, file, v2file string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	require.NoError(t, err)
	v2 := ""
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) != 3:
		case strings.Contains(","+parts[1]+",", ","+controller+","):
			v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, parts[2], file))
			require.NoError(t, err)
			return strings.TrimSpace(string(v))
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		}
	}
	v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", v2, v2file))
	require.NoError(t, err, "pid %d: no %s cgroup", pid, controller)
	return strings.TrimSpace(string(v))
}

// A pool of another spec is drained before the new one is built: nothing
// built for an old configuration serves a command.
func TestPoolDrainedOnSpecChange(t *testing.T) {
	ps := newTestPools(t)
	old := PoolSpec{Profile: "reload", Size: 2, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 100}}}}
	ps.Prepare(old)
	waitReady(t, ps, "reload", 2)
	ps.mu.Lock()
	var oldReady []*Session
	oldReady = append(oldReady, ps.pools["reload"].ready...)
	ps.mu.Unlock()

	changed := old
	changed.Spec.Config.Limits.Pids = 101
	// A call of the new spec drains the old pool and starts the new one.
	ps.Prepare(changed)
	res, out := pooledRun(t, ps, changed, "echo pids $(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max)")
	assert.Contains(t, out, "pids 101")
	for _, s := range oldReady {
		assert.NotEqual(t, s.id, res.ContainerID, "a sandbox of the old spec served the command")
		select {
		case <-s.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("the old pool's sandbox %s was not drained", s.id)
		}
	}
	// Size 0 disables the pool: it is drained and keeps none.
	changed.Size = 0
	ps.Prepare(changed)
	assert.Equal(t, 0, ps.Ready("reload"))
}

// A call under an enforced mandate (a Landlock ruleset with the mount
// plan) never takes a pooled sandbox, which was built without its plan,
// nor replaces the profile's pool with sandboxes of its own: nothing runs
// (ErrPoolEmpty, the caller builds its own sandbox with the plan), and
// the profile's ready sandboxes stay as they were.
func TestPoolRefusesEnforcedMandate(t *testing.T) {
	ps := newTestPools(t)
	plain := PoolSpec{Profile: "mandated", Size: 1, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 100}}}}
	ps.Prepare(plain)
	waitReady(t, ps, "mandated", 1)
	ps.mu.Lock()
	before := ps.pools["mandated"]
	ready := append([]*Session(nil), before.ready...)
	ps.mu.Unlock()

	ws := t.TempDir()
	enforced := plain
	enforced.Spec.Config.Workspace = ws
	enforced.Spec.Config.Landlock = planPolicy(filepath.Join(ws, "build"))
	assert.False(t, Poolable(enforced.Spec.Config))
	var out bytes.Buffer
	_, err := ps.Run(t.Context(), enforced, Command{Shell: "echo ran", Stdout: &out, Stderr: &out}, ExecOptions{})
	require.ErrorIs(t, err, ErrPoolEmpty)
	assert.Empty(t, out.String(), "a command ran")
	assert.NoDirExists(t, filepath.Join(ws, "build"), "a plan was set up for the pool")
	ps.mu.Lock()
	assert.Same(t, before, ps.pools["mandated"], "the profile's pool was replaced")
	assert.Equal(t, ready, ps.pools["mandated"].ready)
	ps.mu.Unlock()
}

// A reload (Reconfigure) drains the pools of changed profiles and keeps
// the others, and afterwards nothing placed under the old configuration
// is pooled: a call of it neither takes a sandbox nor builds a pool, and
// the old pool's sandboxes are destroyed (checked from the host: their
// containers are gone).
func TestPoolReconfigure(t *testing.T) {
	ps := newTestPools(t)
	spec := SessionSpec{Config: Config{Limits: Limits{Pids: 100}}}
	changed := PoolSpec{Profile: "changed", Policy: "v1", Size: 1, Spec: spec}
	kept := PoolSpec{Profile: "kept", Policy: "v1", Size: 1, Spec: spec}
	ps.Reconfigure("v1", nil)
	ps.Prepare(changed)
	ps.Prepare(kept)
	waitReady(t, ps, "changed", 1)
	waitReady(t, ps, "kept", 1)
	ps.mu.Lock()
	old := ps.pools["changed"].ready[0]
	keptPool := ps.pools["kept"]
	ps.mu.Unlock()

	drained := ps.Reconfigure("v2", func(profile string) bool { return profile == "kept" })
	require.Len(t, drained, 1)
	assert.Equal(t, "changed", drained[0].Profile)
	assert.Equal(t, 1, drained[0].Size)
	select {
	case <-old.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the changed profile's pooled sandbox outlived the reload")
	}
	_, err := os.Stat(filepath.Join(ps.StateRoot, "containers", old.id))
	assert.ErrorIs(t, err, os.ErrNotExist, "the drained sandbox's container is still there")

	// A call placed under the old configuration gets nothing, and builds
	// nothing that a call of the new one could take.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = ps.Run(ctx, changed, Command{Args: []string{"true"}}, ExecOptions{})
	assert.ErrorIs(t, err, ErrPoolEmpty)
	_, err = ps.Run(ctx, kept, Command{Args: []string{"true"}}, ExecOptions{})
	assert.ErrorIs(t, err, ErrPoolEmpty, "a sandbox served a call of the replaced configuration")
	assert.Equal(t, 0, ps.Ready("changed"))

	// The kept profile's pool carries over to the new configuration.
	ps.mu.Lock()
	assert.Same(t, keptPool, ps.pools["kept"])
	ps.mu.Unlock()
	kept.Policy = "v2"
	res, _ := pooledRun(t, ps, kept, "true")
	assert.Zero(t, res.ExitCode)
	changed.Policy = "v2"
	ps.Prepare(changed)
	res, _ = pooledRun(t, ps, changed, "true")
	assert.Zero(t, res.ExitCode)
}

// Pooled sandboxes hold their share of the profile's pids budget, as
// sessions do: a pool does not build past the budget sessions leave, a
// session that needs room destroys waiting pooled sandboxes first, and
// a session is refused only when sessions and pooled sandboxes in use
// hold the budget.
func TestPoolCountsInSessionBudget(t *testing.T) {
	ps := newTestPools(t)
	m := &Sessions{StateRoot: ps.StateRoot, CgroupPrefix: ps.CgroupPrefix, Grace: ps.Grace, Pools: ps}
	t.Cleanup(func() { assert.NoError(t, m.Close()) }) // before ps's cleanup (LIFO)
	ps.Sessions = m
	spec := budgetSpec(40, 100)
	p := PoolSpec{Profile: "budget", Size: 2, Spec: spec}
	ps.Prepare(p)
	waitReady(t, ps, "budget", 2)
	assert.Equal(t, int64(80), ps.held("budget"))

	// 80 pooled + 40: one waiting pooled sandbox makes room.
	a, err := m.Open(t.Context(), "budget", "a", spec)
	require.NoError(t, err)
	assert.Equal(t, 1, ps.Ready("budget"))
	// The pool does not build past what the session left (40 + 40 + 40).
	ps.Prepare(p)
	time.Sleep(200 * time.Millisecond)
	ps.mu.Lock()
	pl := ps.pools["budget"]
	ps.mu.Unlock()
	pl.mu.Lock()
	building, ready := pl.building, len(pl.ready)
	pl.mu.Unlock()
	assert.False(t, building, "the pool builds past the profile's budget")
	assert.Equal(t, 1, ready)

	// A pooled sandbox in use is not taken away: with it and a, b fits
	// (40 + 40 + 40 > 100 would not), so b is refused.
	sb, err := ps.take(t.Context(), p)
	require.NoError(t, err)
	_, err = m.Open(t.Context(), "budget", "b", spec)
	require.ErrorIs(t, err, ErrSessionBudget)
	assert.Contains(t, err.Error(), "1 sessions of 40 pids each hold 40 and pooled sandboxes in use 40 of 100")
	sb.end(ErrSessionClosed)
	<-sb.Done()

	// Once it is gone, b fits: a refill under way (40 + 40 fit) does not
	// hold b off, and is destroyed when it ends over the budget.
	require.Eventually(t, func() bool { return ps.held("budget") == 0 }, 30*time.Second, 20*time.Millisecond)
	b, err := m.Open(t.Context(), "budget", "b", spec)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		return !pl.building
	}, 60*time.Second, 20*time.Millisecond)
	assert.Zero(t, ps.held("budget"), "pooled sandboxes hold budget two sessions need")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
}
