package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/testenv"
)

// supervisorOverhead returns the supervisor's thread count, its PSS in KiB
// (smaps_rollup) and the session memory cgroup's usage in bytes.
func supervisorOverhead(t testing.TB, s *Session) (threads int, pssKiB int64, cgroupBytes int64) {
	t.Helper()
	st, err := s.container.State()
	require.NoError(t, err)
	pid := strconv.Itoa(st.InitProcessPid)
	b, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	b, err = os.ReadFile("/proc/" + pid + "/smaps_rollup")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			pssKiB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	cgroupBytes, _ = readInt(controllerFile(st.CgroupPaths, "memory", "memory.usage_in_bytes", "memory.current"))
	return threads, pssKiB, cgroupBytes
}

// sessionPidsCurrent reads the session's pids cgroup count (threads
// included).
func sessionPidsCurrent(t testing.TB, s *Session) int64 {
	t.Helper()
	st, err := s.container.State()
	require.NoError(t, err)
	n, err := readInt(controllerFile(st.CgroupPaths, "pids", "pids.current", "pids.current"))
	require.NoError(t, err)
	return n
}

// budgetSpec is a session spec with its own pids budget within a
// profile's.
func budgetSpec(each, total int64) SessionSpec {
	spec := testSpec()
	spec.Config.Limits.Pids = each
	spec.Config.Limits.MemoryBytes = 64 << 20
	spec.ProfileLimits = Limits{Pids: total, MemoryBytes: 1 << 30}
	return spec
}

// TestSessionBudgetAdmission: a profile holds sessions only while their
// pids budgets fit in its own, so none is left without room.
func TestSessionBudgetAdmission(t *testing.T) {
	m := newTestSessions(t)
	spec := budgetSpec(40, 100)
	a, err := m.Open(t.Context(), "budget", "a", spec)
	require.NoError(t, err)
	_, err = m.Open(t.Context(), "budget", "b", spec)
	require.NoError(t, err)
	_, err = m.Open(t.Context(), "budget", "c", spec)
	require.ErrorIs(t, err, ErrSessionBudget)
	assert.Contains(t, err.Error(), "2 sessions of 40 pids each hold 80 of 100")
	// Another profile has its own budget.
	_, err = m.Open(t.Context(), "other", "c", spec)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	_, err = m.Open(t.Context(), "budget", "c", spec)
	require.NoError(t, err, "a closed session gives its budget back")
}

// TestSessionPidsBudgetIsolation attacks from inside: one session fills
// its whole pids budget with background processes; another session of the
// same profile still runs commands and starts background processes, and
// the greedy session's own further starts fail and are reported as failed.
func TestSessionPidsBudgetIsolation(t *testing.T) {
	m := newTestSessions(t)
	spec := budgetSpec(32, 64)
	greedy, err := m.Open(t.Context(), "iso", "greedy", spec)
	require.NoError(t, err)
	victim, err := m.Open(t.Context(), "iso", "victim", spec)
	require.NoError(t, err)

	// Fork until the kernel refuses, and keep everything alive.
	_, err = greedy.Start(Command{Shell: `i=0; while [ $i -lt 200 ]; do sleep 1000 & i=$((i+1)); done; sleep 1000`})
	require.NoError(t, err)
	st, err := greedy.container.State()
	require.NoError(t, err)
	pidsFile := controllerFile(st.CgroupPaths, "pids", "pids.current", "pids.current")
	var peak int64
	require.Eventually(t, func() bool {
		n, _ := readInt(pidsFile)
		peak = max(peak, n)
		return n >= 30
	}, 20*time.Second, 20*time.Millisecond)
	assert.LessOrEqual(t, peak, int64(32), "the kernel holds the session to its budget")

	// The greedy session's own starts fail once its budget is used up
	// (the last few pids it may still have), and say so.
	var startErr error
	require.Eventually(t, func() bool {
		_, startErr = greedy.Start(Command{Args: []string{"sleep", "1000"}})
		return startErr != nil
	}, 20*time.Second, 10*time.Millisecond, "a background start that could not fork is a failure")
	// The greedy session may also have broken: its supervisor needs a
	// thread now and then, and the budget it shares with its commands is
	// full. Either way only that session pays.
	t.Logf("the greedy session's start failed: %v", startErr)

	// The other session is untouched.
	for i := range 5 {
		out, res := sh(t, victim, fmt.Sprintf("echo ok%d | cat", i))
		assert.Equal(t, fmt.Sprintf("ok%d\n", i), out)
		assert.Zero(t, res.ExitCode)
	}
	bg, err := victim.Start(Command{Args: []string{"sleep", "1000"}})
	require.NoError(t, err)
	assert.NotZero(t, bg.ID())
}

// TestSessionMemoryBudgetIsolation: a session that allocates past its own
// memory budget is OOM-killed inside it; another session of the profile
// keeps its memory and runs.
func TestSessionMemoryBudgetIsolation(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3 on the host layout")
	}
	m := newTestSessions(t)
	spec := budgetSpec(32, 64) // 64 MiB each, 1 GiB for the profile
	hog, err := m.Open(t.Context(), "mem", "hog", spec)
	require.NoError(t, err)
	victim, err := m.Open(t.Context(), "mem", "victim", spec)
	require.NoError(t, err)
	_, res := sh(t, victim, "true")
	require.Zero(t, res.ExitCode)

	res, err = hog.Run(t.Context(), Command{Args: []string{"/usr/bin/python3", "-c", "a = [b'x' * (1 << 20) for _ in range(512)]"}})
	require.NoError(t, err)
	assert.True(t, res.OOMKilled, "the hog is held to its own budget")
	assert.Equal(t, 137, res.ExitCode)
	out, res := sh(t, victim, "echo still here")
	assert.Equal(t, "still here\n", out)
	assert.False(t, res.OOMKilled)
}

// TestBackgroundStartFailureReported: a background program that cannot be
// started is an error, not a process id.
func TestBackgroundStartFailureReported(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "bgfail", testSpec())
	require.NoError(t, err)
	_, err = s.Start(Command{Args: []string{"no-such-program-tether"}})
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Start(Command{Args: []string{"/etc/passwd"}})
	assert.ErrorIs(t, err, ErrNotExecutable)
	// A start that ran and ended at once is a start.
	b, err := s.Start(Command{Args: []string{"true"}})
	require.NoError(t, err)
	res, err := b.Wait(context.Background())
	require.NoError(t, err)
	assert.Zero(t, res.ExitCode)
}

// TestSupervisorOverheadCounted: an idle session's supervisor is charged
// to the session's own cgroups (its threads in pids.current, its memory in
// the memory cgroup), and it is small.
func TestSupervisorOverheadCounted(t *testing.T) {
	m := newTestSessions(t)
	spec := budgetSpec(64, 8192)
	s, err := m.Open(t.Context(), "default", "idle", spec)
	require.NoError(t, err)
	sh(t, s, "true")
	threads, pss, cg := supervisorOverhead(t, s)
	t.Logf("idle supervisor: %d threads, PSS %d KiB, memory cgroup %d KiB", threads, pss, cg>>10)
	// The two are read one after the other and the Go runtime may start a
	// thread between them (seen under emulation): they must agree in some
	// read, with the thread count read again after the cgroup's.
	var pids int64
	agree := func() bool {
		pids = sessionPidsCurrent(t, s)
		threads, _, _ = supervisorOverhead(t, s)
		return pids == int64(threads)
	}
	if !assert.Eventually(t, agree, testenv.Scaled(5*time.Second), 50*time.Millisecond, "the supervisor's threads are the session's pids") {
		t.Logf("last read: %d threads, pids.current %d", threads, pids)
	}
	assert.LessOrEqual(t, threads, 12)
	assert.Positive(t, cg, "the supervisor's memory is charged to the session")
}

// TestSupervisorSurvivesFullSession drives a session to its pids limit
// again and again, the way a hostile or runaway command would (a fork
// loop, background starts until one is refused, a program starting
// threads), and checks from the host that the supervisor (pid 1, a Go
// program whose threads count in the same limit) never needed a thread
// it could not get: it is the same process with the same threads, and the
// session answers once the processes are gone. A Go runtime that cannot
// create a thread aborts, which broke the session ("read supervisor:
// connection reset by peer").
func TestSupervisorSurvivesFullSession(t *testing.T) {
	m := newTestSessions(t)
	spec := budgetSpec(24, 8192)
	s, err := m.Open(t.Context(), "default", "full", spec)
	require.NoError(t, err)
	st, err := s.container.State()
	require.NoError(t, err)
	threads, _, _ := supervisorOverhead(t, s)
	_, hasPython := exec.LookPath("/usr/bin/python3")
	for round := range 5 {
		var bgs []*Background
		start := func(script string) error {
			b, err := s.Start(Command{Shell: script})
			if err == nil {
				bgs = append(bgs, b)
			}
			return err
		}
		require.NoError(t, start(`while :; do sleep 1000 & done`), "round %d: the fork loop", round)
		if hasPython == nil {
			// Threads, not processes: each takes a pid of the session.
			_ = start(`exec /usr/bin/python3 -c 'import threading,time
while True:
    try: threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
    except RuntimeError: time.sleep(0.01)'`)
		}
		// Starts until one is refused: the session is full.
		var refused error
		require.Eventually(t, func() bool {
			refused = start("exec sleep 1000")
			return refused != nil
		}, testenv.Scaled(30*time.Second), 10*time.Millisecond, "round %d: a start in a full session", round)
		assert.NotErrorIs(t, refused, ErrSessionBroken, "round %d: a refused start is the command's failure, not the session's", round)
		for _, b := range bgs {
			_ = b.Signal(unix.SIGKILL)
		}
		for _, b := range bgs {
			_, err := b.Wait(t.Context())
			require.NoError(t, err, "round %d", round)
		}
		out, res := sh(t, s, "echo alive")
		assert.Equal(t, "alive\n", out, "round %d", round)
		assert.Zero(t, res.ExitCode)
	}
	now, err := s.container.State()
	require.NoError(t, err)
	assert.Equal(t, st.InitProcessPid, now.InitProcessPid, "the supervisor is the one the session started with")
	after, _, _ := supervisorOverhead(t, s)
	assert.Equal(t, threads, after, "the supervisor created no thread after it was ready")
	select {
	case <-s.Done():
		t.Fatalf("the session ended: %v", s.doneErr)
	default:
	}
}
