package sandbox

import (
	"github.com/tether-dev/tether/internal/testenv"

	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var sessTestN atomic.Int64

// requireSessionSandbox skips (or, under REQUIRE_SANDBOX=1, fails) when
// session sandboxes cannot run here.
func requireSessionSandbox(tb testing.TB) {
	tb.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "session sandbox tests need root (cgroups, namespaces)"
	default:
		if _, err := os.Stat("/sys/fs/cgroup/pids"); err != nil {
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
				why = "no pids cgroup controller mounted"
			}
		}
	}
	if why != "" {
		testenv.SkipOrFail(tb, why)
	}
}

// newTestSessions returns a Sessions with a unique state root and cgroup
// prefix, closed at cleanup, which then asserts nothing was left behind.
func newTestSessions(tb testing.TB) *Sessions {
	tb.Helper()
	requireSessionSandbox(tb)
	prefix := fmt.Sprintf("tether-test-%d-s%d", os.Getpid(), sessTestN.Add(1))
	m := &Sessions{StateRoot: stateTempDir(tb), CgroupPrefix: prefix, Grace: testenv.Scaled(300 * time.Millisecond)}
	tb.Cleanup(func() {
		assert.NoError(tb, m.Close())
		assertNothingLeft(tb, m.StateRoot, prefix)
	})
	return m
}

// assertNothingLeft checks that no cgroup (any hierarchy), mount or state
// entry remains for a state root and cgroup prefix.
func assertNothingLeft(tb testing.TB, stateRoot, prefix string) {
	tb.Helper()
	dirs, err := cgroupDirs("/" + prefix)
	assert.NoError(tb, err)
	assert.Empty(tb, dirs, "cgroups left behind")
	assert.Empty(tb, mountsUnder(stateRoot), "mounts left behind")
	for _, d := range []string{containersDir, rootsDir, locksDir} {
		entries, _ := os.ReadDir(filepath.Join(stateRoot, d))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Empty(tb, names, "state left in %s", d)
	}
}

// testSpec is a session spec for tests: host layout, seccomp when built in.
func testSpec() SessionSpec {
	return SessionSpec{Config: Config{Seccomp: SeccompOptional, Limits: Limits{Pids: 256, Timeout: testenv.Scaled(20 * time.Second)}}}
}

// sh runs a shell string in s and returns its stdout, failing on error.
func sh(tb testing.TB, s *Session, script string) (string, *Result) {
	tb.Helper()
	var out, errb bytes.Buffer
	res, err := s.Run(context.Background(), Command{Shell: script, Stdout: &out, Stderr: &errb})
	require.NoError(tb, err, "stderr: %s", errb.String())
	return out.String(), res
}

func TestSessionSmoke(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "a", testSpec())
	require.NoError(t, err)
	out, res := sh(t, s, "echo hello; echo oops >&2; exit 3")
	assert.Equal(t, "hello\n", out)
	assert.Equal(t, 3, res.ExitCode)
	out, res = sh(t, s, "echo $$")
	assert.Equal(t, 0, res.ExitCode)
	assert.NotEqual(t, "1\n", out, "commands are not the sandbox's init")
	assert.Equal(t, s.Info().ContainerID, res.ContainerID)
	if seccompAvailable {
		assert.Empty(t, res.NotEnforced)
	} else {
		assert.Equal(t, []string{"seccomp"}, res.NotEnforced, "optional seccomp, built without it")
	}

	res, err = s.Run(t.Context(), Command{Args: []string{"no-such-program-xyz"}})
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, 127, res.ExitCode)
	res, err = s.Run(t.Context(), Command{Args: []string{"/tmp"}})
	require.ErrorIs(t, err, ErrNotExecutable)
	assert.Equal(t, 126, res.ExitCode)

	var in bytes.Buffer
	in.WriteString("typed input\n")
	var cat bytes.Buffer
	res, err = s.Run(t.Context(), Command{Args: []string{"cat"}, Stdin: &in, Stdout: &cat})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "typed input\n", cat.String())

	res, err = s.Exec(t.Context(), Command{Shell: "head -c 100000 /dev/zero", Stdout: &cat}, ExecOptions{OutputBytes: 1000})
	require.NoError(t, err)
	assert.True(t, res.OutputTruncated)
	assert.Equal(t, len("typed input\n")+1000, cat.Len())

	out, res = sh(t, s, "kill -9 $$")
	assert.Equal(t, 137, res.ExitCode)
	assert.Equal(t, "SIGKILL", res.Signal)
	assert.Empty(t, out)
}

func TestSessionStatePersistsAndIsolated(t *testing.T) {
	m := newTestSessions(t)
	spec := testSpec()
	spec.Options.PersistCwd = true
	a, err := m.Open(t.Context(), "default", "a", spec)
	require.NoError(t, err)
	b, err := m.Open(t.Context(), "default", "b", spec)
	require.NoError(t, err)
	other, err := m.Open(t.Context(), "other", "a", spec)
	require.NoError(t, err)
	again, err := m.Open(t.Context(), "default", "a", spec)
	require.NoError(t, err)
	assert.Same(t, a, again, "the same (profile, session) reuses its sandbox")
	_, err = m.Open(t.Context(), "default", "a", testSpec())
	assert.ErrorIs(t, err, ErrSpecChanged)

	sh(t, a, `echo secret-a > /tmp/state.txt; mkdir -p /tmp/work/sub; cd /tmp/work/sub; export TETHER_VAR='x y'\''z'; UNEXPORTED=1`)
	out, _ := sh(t, a, "cat /tmp/state.txt; pwd; echo \"$TETHER_VAR\"; echo \"u=$UNEXPORTED\"")
	assert.Equal(t, "secret-a\n/tmp/work/sub\nx y'z\nu=\n", out)
	// exit inside the command still persists its state.
	sh(t, a, "cd /tmp; export AFTER_EXIT=1; exit 4")
	out, _ = sh(t, a, "pwd; echo $AFTER_EXIT")
	assert.Equal(t, "/tmp\n1\n", out)
	// A removed working directory falls back to /.
	sh(t, a, "mkdir /tmp/gone && cd /tmp/gone")
	sh(t, a, "rmdir /tmp/gone")
	out, res := sh(t, a, "pwd")
	assert.Equal(t, "/\n", out)
	assert.Equal(t, 0, res.ExitCode)
	sh(t, a, "cd /tmp")
	// Args commands run in the persisted directory and environment.
	var pwd bytes.Buffer
	_, err = a.Run(t.Context(), Command{Args: []string{"sh", "-c", "pwd; echo $TETHER_VAR"}, Stdout: &pwd})
	require.NoError(t, err)
	assert.Equal(t, "/tmp\nx y'z\n", pwd.String())

	for _, s := range []*Session{b, other} {
		out, res := sh(t, s, "cat /tmp/state.txt 2>/dev/null; pwd; echo \"v=$TETHER_VAR\"")
		assert.Equal(t, "/\nv=\n", out, "state leaked into %s/%s", s.key.profile, s.key.name)
		assert.Equal(t, 0, res.ExitCode)
	}
}

func TestSessionWithoutPersistCwd(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "np", testSpec())
	require.NoError(t, err)
	sh(t, s, "cd /tmp; export V=1; touch /tmp/file")
	out, _ := sh(t, s, "pwd; echo v=$V; ls /tmp/file")
	assert.Equal(t, "/\nv=\n/tmp/file\n", out, "files persist, cwd and env do not")
}

// alive reports whether a host pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// waitGone waits (bounded) until none of pids is alive.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		for _, p := range pids {
			if alive(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range pids {
		assert.False(t, alive(p), "host pid %d still alive", p)
	}
}

func TestSessionBackground(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "bg", testSpec())
	require.NoError(t, err)

	server, err := s.Start(Command{Shell: "echo started; echo warn >&2; exec sleep 1000"})
	require.NoError(t, err)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	counter, err := s.Start(Command{Shell: "while read line; do echo \"got:$line\"; done", Stdin: stdinR})
	require.NoError(t, err)
	_, err = stdinW.Write([]byte("one\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		o, _, _ := counter.Output()
		return string(o) == "got:one\n"
	}, 10*time.Second, 10*time.Millisecond, "background stdin is streamed")

	// The background process survives between calls.
	for i := 0; i < 3; i++ {
		out, _ := sh(t, s, "pgrep -x sleep >/dev/null && echo yes")
		assert.Equal(t, "yes\n", out)
	}
	require.Eventually(t, func() bool {
		o, e, _ := server.Output()
		return string(o) == "started\n" && string(e) == "warn\n"
	}, 10*time.Second, 10*time.Millisecond)

	procs := s.Processes()
	require.Len(t, procs, 2)
	assert.True(t, procs[0].Running && procs[0].Background)
	assert.Equal(t, server.ID(), procs[0].ID)

	// Signal and wait.
	require.NoError(t, counter.Signal(15))
	res, err := counter.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 143, res.ExitCode)
	assert.Equal(t, "SIGTERM", res.Signal)
	p, err := s.Process(counter.ID())
	require.NoError(t, err)
	assert.Same(t, counter, p)
	assert.ErrorIs(t, counter.Signal(9), ErrNoProcess)
	_, err = s.Process(999)
	assert.ErrorIs(t, err, ErrNoProcess)

	done, err := s.Start(Command{Args: []string{"sh", "-c", "cat; exit 5"}, Stdin: strings.NewReader("piped\n")})
	require.NoError(t, err)
	res, err = done.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 5, res.ExitCode)
	o, _, _ := done.Output()
	assert.Equal(t, "piped\n", string(o))

	// Everything dies with the session.
	pids, err := s.HostPIDs()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(pids), 2, "supervisor and sleep")
	require.NoError(t, s.Close())
	waitGone(t, pids)
	res, err = server.Wait(t.Context())
	assert.Nil(t, res)
	assert.ErrorIs(t, err, ErrSessionClosed)
	_, err = s.Run(t.Context(), Command{Args: []string{"true"}})
	assert.ErrorIs(t, err, ErrSessionClosed)
}

func TestSessionIdleExpiry(t *testing.T) {
	m := newTestSessions(t)
	spec := testSpec()
	spec.Options.IdleTimeout = 300 * time.Millisecond
	s, err := m.Open(t.Context(), "default", "idle", spec)
	require.NoError(t, err)
	// A command running longer than the idle timeout keeps it alive.
	out, _ := sh(t, s, "sleep 0.6; echo ok")
	assert.Equal(t, "ok\n", out)
	pids, err := s.HostPIDs()
	require.NoError(t, err)
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("idle session was not closed")
	}
	waitGone(t, pids)
	_, ok := m.Lookup("default", "idle")
	assert.False(t, ok)
	assert.Empty(t, m.List())
	// The next use creates a fresh sandbox.
	s2, err := m.Open(t.Context(), "default", "idle", spec)
	require.NoError(t, err)
	assert.NotEqual(t, s.Info().ContainerID, s2.Info().ContainerID)
}

func TestSessionCommandTimeout(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "to", testSpec())
	require.NoError(t, err)
	bg, err := s.Start(Command{Args: []string{"sleep", "1000"}})
	require.NoError(t, err)

	var out bytes.Buffer
	res, err := s.Exec(t.Context(), Command{Shell: "echo before; trap '' TERM; sleep 1000; echo never", Stdout: &out}, ExecOptions{Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, 137, res.ExitCode, "TERM ignored, so SIGKILL after the grace")
	assert.Equal(t, "before\n", out.String())

	// ctx cancellation stops only that command too.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	res, err = s.Run(ctx, Command{Args: []string{"sleep", "1000"}})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotNil(t, res)
	assert.Equal(t, 143, res.ExitCode)

	// The session and its background process survive.
	got, res := sh(t, s, "echo alive; pgrep -x sleep | wc -l")
	assert.Equal(t, "alive\n1\n", got)
	assert.Equal(t, 0, res.ExitCode)
	select {
	case <-bg.Done():
		t.Fatal("background process died with the timed-out command")
	default:
	}
}

func TestSessionForkBombIsolated(t *testing.T) {
	m := newTestSessions(t)
	spec := testSpec()
	spec.Config.Limits.Pids = 64
	bomber, err := m.Open(t.Context(), "default", "bomber", spec)
	require.NoError(t, err)
	victim, err := m.Open(t.Context(), "default", "victim", spec)
	require.NoError(t, err)

	bombDone := make(chan *Result, 1)
	go func() {
		res, _ := bomber.Exec(context.Background(), Command{Shell: "bomb() { bomb | bomb & }; bomb; sleep 5"}, ExecOptions{Timeout: 4 * time.Second})
		bombDone <- res
	}()
	// Let the bomb hit the pids limit, then use the other session.
	require.Eventually(t, func() bool {
		n, _ := pidsLimitHits(bomber)
		return n > 0
	}, 20*time.Second, 20*time.Millisecond)
	for i := 0; i < 20; i++ {
		tok := fmt.Sprintf("tok-%d", i)
		out, res := sh(t, victim, "echo "+tok)
		assert.Equal(t, tok+"\n", out)
		assert.Equal(t, 0, res.ExitCode)
	}
	n, cur := pidsLimitHits(bomber)
	assert.Positive(t, n)
	assert.LessOrEqual(t, cur, int64(64), "pids limit holds")
	pids, err := bomber.HostPIDs()
	require.NoError(t, err)
	<-bombDone
	require.NoError(t, bomber.Close())
	waitGone(t, pids)
	out, _ := sh(t, victim, "echo still")
	assert.Equal(t, "still\n", out)
}

// pidsLimitHits reads the session cgroup's pids.events "max" counter (forks
// refused at the limit) and pids.current.
func pidsLimitHits(s *Session) (hits, current int64) {
	st, err := s.container.State()
	if err != nil {
		return 0, 0
	}
	dir := st.CgroupPaths["pids"]
	if dir == "" {
		dir = st.CgroupPaths[""]
	}
	hits, _ = readKey(filepath.Join(dir, "pids.events"), "max")
	current, _ = readInt(filepath.Join(dir, "pids.current"))
	return hits, current
}

func TestSessionOOMKillReported(t *testing.T) {
	m := newTestSessions(t)
	spec := testSpec()
	spec.Config.Limits.MemoryBytes = 48 << 20
	s, err := m.Open(t.Context(), "default", "oom", spec)
	require.NoError(t, err)
	res, err := s.Run(t.Context(), Command{Shell: `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo survived`})
	require.NoError(t, err)
	assert.True(t, res.OOMKilled)
	assert.NotEqual(t, 0, res.ExitCode)
	out, res := sh(t, s, "echo after")
	assert.Equal(t, "after\n", out, "the session survives a command's OOM kill")
	assert.False(t, res.OOMKilled)
}

// TestSessionCommandOOMScore: every command is the OOM killer's choice
// over the supervisor from its first instruction (it inherits
// commandOOMScoreAdj from the fork), with a workspace (whose creation gate
// judges opens for writing) and without; the supervisor keeps the score
// it started with. Before, the supervisor wrote each command's
// /proc/PID/oom_score_adj after its exec, so a short command ran with the
// supervisor's score (and, with a workspace, that open was a creation-gate
// round trip per command).
func TestSessionCommandOOMScore(t *testing.T) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	require.NoError(t, err)
	require.NotEqual(t, commandOOMScoreAdj, strings.TrimSpace(string(own)), "the test needs a score of its own other than the commands'")
	for _, ws := range []bool{false, true} {
		t.Run(fmt.Sprintf("workspace=%v", ws), func(t *testing.T) {
			m := newTestSessions(t)
			spec := testSpec()
			if ws {
				spec.Config.Workspace = t.TempDir()
			}
			s, err := m.Open(t.Context(), "default", "oom-score", spec)
			require.NoError(t, err)
			for i := range 10 {
				var out bytes.Buffer
				res, err := s.Run(t.Context(), Command{Args: []string{"/bin/cat", "/proc/self/oom_score_adj"}, Stdout: &out})
				require.NoError(t, err)
				require.Equal(t, 0, res.ExitCode)
				assert.Equal(t, commandOOMScoreAdj+"\n", out.String(), "command %d", i)
			}
			out, _ := sh(t, s, "cat /proc/self/oom_score_adj; cat /proc/1/oom_score_adj")
			assert.Equal(t, commandOOMScoreAdj+"\n"+string(own), out, "a shell's command, then the supervisor's own")
		})
	}
}

func TestSessionNoGoroutineLeak(t *testing.T) {
	m := newTestSessions(t)
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		s, err := m.Open(t.Context(), "default", fmt.Sprint("leak", i), testSpec())
		require.NoError(t, err)
		_, err = s.Start(Command{Args: []string{"sleep", "100"}})
		require.NoError(t, err)
		sh(t, s, "echo hi")
		require.NoError(t, s.Close())
	}
	// Polled by hand: assert.Eventually runs goroutines of its own.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !assert.LessOrEqual(t, runtime.NumGoroutine(), before) {
		buf := make([]byte, 1<<20)
		t.Logf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

func TestSessionMaxAgeAndCloseSession(t *testing.T) {
	m := newTestSessions(t)
	spec := testSpec()
	spec.Options.IdleTimeout = time.Hour
	spec.Options.MaxAge = 500 * time.Millisecond
	old, err := m.Open(t.Context(), "default", "old", spec)
	require.NoError(t, err)
	// Busy or not, the session ends at its maximum age.
	deadline := time.Now().Add(30 * time.Second)
	for !old.isDone() && time.Now().Before(deadline) {
		_, _ = old.Run(t.Context(), Command{Args: []string{"true"}})
	}
	select {
	case <-old.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("session outlived its maximum age")
	}
	_, err = old.Run(t.Context(), Command{Args: []string{"true"}})
	assert.ErrorIs(t, err, ErrSessionClosed)

	// CloseSession (what clearing a session calls) ends only that session.
	keep, err := m.Open(t.Context(), "default", "keep", testSpec())
	require.NoError(t, err)
	gone, err := m.Open(t.Context(), "default", "gone", testSpec())
	require.NoError(t, err)
	require.NoError(t, m.CloseSession("default", "gone"))
	require.NoError(t, m.CloseSession("default", "never-existed"))
	_, err = gone.Run(t.Context(), Command{Args: []string{"true"}})
	assert.ErrorIs(t, err, ErrSessionClosed)
	out, _ := sh(t, keep, "echo kept")
	assert.Equal(t, "kept\n", out)
	infos := m.List()
	require.Len(t, infos, 1)
	assert.Equal(t, "keep", infos[0].Session)
}

func TestSessionConcurrentOpenBuildsOne(t *testing.T) {
	m := newTestSessions(t)
	var wg sync.WaitGroup
	got := make([]*Session, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := m.Open(context.Background(), "default", "shared", testSpec())
			assert.NoError(t, err)
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got {
		assert.Same(t, got[0], s)
	}
	entries, err := os.ReadDir(filepath.Join(m.StateRoot, containersDir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "one sandbox for one (profile, session)")
}

func TestSessionOpenRejectsBadNames(t *testing.T) {
	var m Sessions
	_, err := m.Open(t.Context(), "default", "../escape", testSpec())
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = m.Open(t.Context(), "", "", testSpec())
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// TestSessionEtcIsTheSnapshot: a session sees the same world-readable /etc
// snapshot as one-shot runs, never the host's /etc/ssl: a key readable
// only by root and its group stays out although sandbox root has
// CAP_DAC_OVERRIDE.
func TestSessionEtcIsTheSnapshot(t *testing.T) {
	m := newTestSessions(t)
	fi, err := os.Stat("/etc/ssl/private")
	if err != nil || fi.Mode().Perm()&0o004 != 0 {
		testenv.SkipOrFail(t, "needs the host's /etc/ssl/private, not world-readable")
	}
	key := filepath.Join("/etc/ssl/private", fmt.Sprintf("tether-test-%d.key", os.Getpid()))
	require.NoError(t, os.WriteFile(key, []byte("PRIVATE-KEY-MATERIAL\n"), 0o640))
	t.Cleanup(func() { os.Remove(key) })
	s, err := m.Open(t.Context(), "default", "etc", testSpec())
	require.NoError(t, err)
	var out, errb bytes.Buffer
	res, err := s.Run(t.Context(), Command{Shell: "cat " + key + " /etc/ssl/private/*; ls -d /etc/ssl/private", Stdout: &out, Stderr: &errb})
	require.NoError(t, err)
	assert.NotEqual(t, 0, res.ExitCode)
	assert.NotContains(t, out.String(), "PRIVATE-KEY-MATERIAL")
	assert.Contains(t, errb.String(), "No such file", "the private directory is not in the snapshot at all")
	if _, err := os.Stat("/etc/ssl/certs"); err == nil {
		out, res := sh(t, s, "test -d /etc/ssl/certs && echo certs")
		assert.Equal(t, 0, res.ExitCode)
		assert.Equal(t, "certs\n", out, "the world-readable part of /etc/ssl is there")
	}
}

// TestSessionSupervisorNotTraceable attacks pid 1 from a session command:
// ptrace attach and reads of /proc/1/environ and /proc/1/mem fail, while
// attaching to the command's own child works (so the refusal is the
// supervisor's, not a missing ptrace).
func TestSessionSupervisorNotTraceable(t *testing.T) {
	m := newTestSessions(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.SkipOrFail(t, "needs /usr/bin/python3 for the ptrace probe")
	}
	s, err := m.Open(t.Context(), "default", "ptrace", testSpec())
	require.NoError(t, err)
	probe := `import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def attach(pid):
    r = libc.ptrace(16, pid, None, None)
    return "ok" if r == 0 else os.strerror(ctypes.get_errno())
child = os.fork()
if child == 0:
    signal.pause()
    os._exit(0)
print("child", attach(child))
os.kill(child, signal.SIGKILL)
print("pid1", attach(1))
`
	out, res := sh(t, s, "/usr/bin/python3 -c '"+probe+"'")
	require.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "child ok\n", "ptrace works on the command's own child")
	assert.Contains(t, out, "pid1 Operation not permitted\n")
	for _, f := range []string{"/proc/1/environ", "/proc/1/mem", "/proc/1/fd/3"} {
		var o, e bytes.Buffer
		res, err := s.Run(t.Context(), Command{Shell: "head -c 64 " + f, Stdout: &o, Stderr: &e})
		require.NoError(t, err)
		assert.NotEqual(t, 0, res.ExitCode, "%s: %s", f, o.String())
		assert.NotContains(t, o.String(), supervisorEnv, f)
	}
}

// TestSessionSupervisorStderr: when the supervisor dies (here a Go
// runtime's fatal signal, whose trace goes to its stderr), the session's
// error says what it last wrote, not only that the channel broke; the
// command it was running fails with that error.
func TestSessionSupervisorStderr(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "abort", testSpec())
	require.NoError(t, err)
	st, err := s.container.State()
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(t.Context(), Command{Shell: "sleep 100"})
		errc <- err
	}()
	sh(t, s, "true") // the supervisor is serving
	require.NoError(t, unix.Kill(st.InitProcessPid, unix.SIGABRT))
	select {
	case err = <-errc:
	case <-time.After(testenv.Scaled(30 * time.Second)):
		t.Fatal("the command did not end with its session")
	}
	require.ErrorIs(t, err, ErrSessionBroken)
	assert.Contains(t, err.Error(), "the supervisor's stderr: ")
	assert.Contains(t, err.Error(), "SIGABRT: abort", "the Go runtime's first words")
	assert.Contains(t, err.Error(), "goroutine ", "and its trace")
	assert.LessOrEqual(t, len(err.Error()), supervisorStderrSize+512, "bounded")
	<-s.Done()
	_, err = s.Run(t.Context(), Command{Shell: "true"})
	assert.ErrorContains(t, err, "SIGABRT: abort", "later calls see the same error")
}

// TestHeadTail: the supervisor's stderr keeps its first and last bytes,
// marks the gap between them, and is printable text whatever was written.
func TestHeadTail(t *testing.T) {
	t.Parallel()
	h := newHeadTail(64)
	_, _ = h.Write([]byte("  panic: x\n\tat y\n"))
	assert.Equal(t, "panic: x\n\tat y", h.text(), "under the bound: all of it")

	h = newHeadTail(16)
	_, _ = h.Write([]byte("a\x00b\x1b[31mc\xff"))
	assert.Equal(t, "a\uFFFDb\uFFFD[31mc\uFFFD", h.text(), "control characters and bad UTF-8 replaced")

	h = newHeadTail(32)
	for _, line := range []string{"panic: boom\n", "frame one\n", "frame two\n", "regs end\n"} {
		_, _ = h.Write([]byte(line))
	}
	assert.Equal(t, "panic: boom\n…\nregs end", h.text(), "the head and the tail, the lines the gap cut dropped")
	assert.Empty(t, newHeadTail(16).text())
}
