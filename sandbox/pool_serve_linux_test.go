package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsDevNull(t *testing.T) {
	open := func(path string) *os.File {
		f, err := os.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	plain := filepath.Join(t.TempDir(), "input")
	require.NoError(t, os.WriteFile(plain, []byte("data"), 0o600))

	assert.True(t, isDevNull(open(os.DevNull)))
	for name, in := range map[string]io.Reader{
		"nil": nil, "nil file": (*os.File)(nil), "a pipe": r, "a regular file": open(plain),
		"/dev/zero": open("/dev/zero"), "a reader": bytes.NewReader(nil),
	} {
		assert.False(t, isDevNull(in), name)
	}
}

// A pooled command whose stdin is /dev/null is asked for without stdin
// (the sandbox's own /dev/null reads the same), so no stdin frames follow;
// other input is still forwarded.
func TestRunPooledNullStdin(t *testing.T) {
	root := t.TempDir()
	l, err := ListenPool(root)
	require.NoError(t, err)
	defer l.Close()
	asked := make(chan *PoolRequest, 1)
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			var f poolFrame
			if _, err := readFrame(c, nil, &f); err == nil && f.Request != nil {
				asked <- f.Request
			}
			_ = writeFrame(c, &poolFrame{Op: poolNoMatch, Reason: "test"})
			c.Close()
		}
	}()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		want  bool
	}{{"/dev/null", null, false}, {"a pipe", r, true}} {
		_, err := RunPooled(t.Context(), root, PoolRequest{Args: []string{"true"}, Stdin: true}, nil, tc.stdin, nil, nil)
		require.True(t, errors.Is(err, ErrPoolEmpty), "%s: %v", tc.name, err)
		assert.Equal(t, tc.want, (<-asked).Stdin, tc.name)
	}
}

// A session command whose stdin is /dev/null reads the sandbox's own
// /dev/null (a character device, not a pipe from the host), and still
// reads end of file; other input still comes through its pipe.
func TestSessionNullStdin(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "null-stdin", testSpec())
	require.NoError(t, err)
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	script := `if [ -p /dev/stdin ]; then echo pipe; else echo not a pipe; fi; cat; echo end`
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		want  string
	}{
		{"/dev/null", null, "not a pipe\nend\n"},
		{"a reader", strings.NewReader("typed\n"), "pipe\ntyped\nend\n"},
	} {
		var out bytes.Buffer
		res, err := s.Run(t.Context(), Command{Shell: script, Stdin: tc.stdin, Stdout: &out})
		require.NoError(t, err, tc.name)
		assert.Equal(t, 0, res.ExitCode, tc.name)
		assert.Equal(t, tc.want, out.String(), tc.name)
	}
}

// poolClient speaks the pool protocol by hand, so that a test decides
// when it hangs up: it asks for args, approves and reads to the result.
func poolClient(t *testing.T, ps *Pools, args ...string) (*net.UnixConn, *Result) {
	t.Helper()
	conn, err := net.Dial("unix", PoolSocket(ps.StateRoot))
	require.NoError(t, err)
	c := conn.(*net.UnixConn)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(60*time.Second)))
	require.NoError(t, writeFrame(c, &poolFrame{Op: poolRun, Request: &PoolRequest{CgroupPrefix: ps.CgroupPrefix, Args: args}}))
	var f poolFrame
	_, err = readFrame(c, nil, &f)
	require.NoError(t, err)
	require.Equal(t, poolAccepted, f.Op, f.Reason)
	require.NoError(t, writeFrame(c, &poolFrame{Op: poolGo}))
	for {
		f = poolFrame{}
		_, err = readFrame(c, nil, &f)
		require.NoError(t, err)
		if f.Op == poolResult {
			require.Empty(t, f.Error)
			require.NotNil(t, f.Result)
			return c, f.Result
		}
	}
}

// A pooled sandbox's processes are killed before its client hears the
// result, but the rest of its teardown (and so the pool's refill) waits
// until the client has hung up, or Pools.hangupWait has passed: that work
// must not compete with the client's last steps for the CPUs.
func TestPoolCleanupFollowsHangup(t *testing.T) {
	ps := newTestPools(t)
	ps.hangupWait = time.Minute // set before any use
	p := PoolSpec{Profile: "hangup", Size: 1, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	servePool(t, ps, p)
	stateOf := func(res *Result) string { return filepath.Join(ps.StateRoot, containersDir, res.ContainerID) }
	waitGone := func(path string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Stat(path); os.IsNotExist(err) {
				return
			}
			require.True(t, time.Now().Before(deadline), "%s was not removed", path)
			time.Sleep(10 * time.Millisecond)
		}
	}

	// A sleep of a length no other process on the host has, left running.
	sleeper := fmt.Sprintf("sleep %d", 400000+os.Getpid()%99999)
	waitReady(t, ps, "hangup", 1)
	c, res := poolClient(t, ps, "/bin/sh", "-c", "setsid "+sleeper+" >/dev/null 2>&1 </dev/null & echo started")
	assert.Equal(t, 0, res.ExitCode)
	// Killed before the result was sent; the kernel ends the processes
	// of the pid namespace as its init exits.
	deadline := time.Now().Add(10 * time.Second)
	for hostHasCmdline(t, sleeper) {
		require.True(t, time.Now().Before(deadline), "the command's leftover outlived the result")
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	assert.DirExists(t, stateOf(res), "the sandbox was cleaned up before its client hung up")
	assert.Equal(t, 0, ps.Ready("hangup"), "the pool refilled before the used sandbox was cleaned up")
	c.Close()
	waitGone(stateOf(res))
	dirs, err := cgroupDirs("/" + ps.CgroupPrefix + "/hangup/" + res.ContainerID)
	require.NoError(t, err)
	assert.Empty(t, dirs, "the sandbox's cgroups remain")
	waitReady(t, ps, "hangup", 1)

	// A client that never hangs up (c stays open) holds the cleanup for
	// hangupWait only; then the daemon hangs up.
	ps.mu.Lock()
	ps.hangupWait = 300 * time.Millisecond
	ps.mu.Unlock()
	c, res = poolClient(t, ps, "/bin/true")
	assert.Equal(t, 0, res.ExitCode)
	waitGone(stateOf(res))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the daemon did not hang up")
	waitReady(t, ps, "hangup", 1)
}

// poolClientEnv makes the test binary a pool client of its own process
// (poolClientMain); its value is "STATE_ROOT CGROUP_PREFIX".
const poolClientEnv = "TETHER_SANDBOX_TEST_POOL_CLIENT"

// poolClientMain runs /bin/true in a pooled sandbox of the state root,
// hangs up, prints the sandbox's container id and stays alive until its
// stdin ends: a client whose process outlives its hang-up, as a `tether
// run` does for its exit.
func poolClientMain(spec string) int {
	stateRoot, prefix, _ := strings.Cut(spec, " ")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "pool client:", err)
		return 1
	}
	c, err := net.Dial("unix", PoolSocket(stateRoot))
	if err != nil {
		return fail(err)
	}
	if err := writeFrame(c, &poolFrame{Op: poolRun, Request: &PoolRequest{CgroupPrefix: prefix, Args: []string{"/bin/true"}}}); err != nil {
		return fail(err)
	}
	var f poolFrame
	if _, err := readFrame(c, nil, &f); err != nil || f.Op != poolAccepted {
		return fail(fmt.Errorf("no sandbox: %v %s", err, f.Reason))
	}
	if err := writeFrame(c, &poolFrame{Op: poolGo}); err != nil {
		return fail(err)
	}
	for f.Op != poolResult {
		f = poolFrame{}
		if _, err := readFrameMax(c, nil, &f, poolResultFrame); err != nil {
			return fail(err)
		}
	}
	if f.Result == nil {
		return fail(errors.New(f.Error))
	}
	c.Close()
	fmt.Println(f.Result.ContainerID)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// A client that hung up but whose process has not exited yet (a Go
// `tether run` on its way out) still holds the used sandbox's teardown:
// it starts once the process is gone.
func TestPoolCleanupFollowsClientExit(t *testing.T) {
	ps := newTestPools(t)
	ps.hangupWait = time.Minute // set before any use
	p := PoolSpec{Profile: "exit", Size: 1, Spec: SessionSpec{Config: Config{Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	servePool(t, ps, p)
	waitReady(t, ps, "exit", 1)

	exe, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command(exe)
	child.Env = append(os.Environ(), poolClientEnv+"="+ps.StateRoot+" "+ps.CgroupPrefix)
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	child.Stderr = os.Stderr
	require.NoError(t, child.Start())
	exited := false
	defer func() {
		if !exited {
			stdin.Close()
			_ = child.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the client's result")
	state := filepath.Join(ps.StateRoot, containersDir, strings.TrimSpace(line))

	// Hung up, not exited: the sandbox stays as it was.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		require.DirExists(t, state, "the sandbox was cleaned up when its client hung up, before the client's process exited")
	}
	stdin.Close()
	require.NoError(t, child.Wait())
	exited = true
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(state); os.IsNotExist(err) {
			break
		}
		require.True(t, time.Now().Before(deadline), "%s was not removed after the client exited", state)
		time.Sleep(10 * time.Millisecond)
	}
	waitReady(t, ps, "exit", 1)
}

// hostHasCmdline reports whether a live host process runs with this
// command line.
func hostHasCmdline(t *testing.T, cmdline string) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !pidAlive(pid) {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") == cmdline {
			return true
		}
	}
	return false
}

// A result too large for the pool socket's frame gives up its oldest
// execs (then accesses), counted, and keeps the newest and the rest of
// the result: the command's status and the exec gate's refusals.
func TestPoolFitResult(t *testing.T) {
	arg := strings.Repeat("a", 1000)
	res := &Result{ExitCode: 3, ExecsDropped: 5, ExecBlocked: []ExecBlock{{Path: "./bin/reboot", Argv: []string{"./bin/reboot"}}}}
	for i := range 60000 {
		res.Execs = append(res.Execs, ExecEvent{Path: "/bin/true", Argv: []string{strconv.Itoa(i), arg}})
	}
	f := &poolFrame{Op: poolResult, Result: res}
	b, err := fitResult(f)
	require.NoError(t, err)
	want, err := json.Marshal(f)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(b), "the encoding returned is the trimmed frame's")
	assert.LessOrEqual(t, len(b), poolResultFrame)
	assert.Greater(t, len(b), maxFrame, "what fits the larger frame is kept")
	require.NotEmpty(t, res.Execs)
	assert.Equal(t, strconv.Itoa(59999), res.Execs[len(res.Execs)-1].Argv[0], "the newest exec is kept")
	assert.Equal(t, 60000+5, len(res.Execs)+res.ExecsDropped, "every dropped exec is counted")
	assert.Equal(t, 3, res.ExitCode)
	assert.Len(t, res.ExecBlocked, 1)

	small := &poolFrame{Op: poolResult, Result: &Result{Execs: []ExecEvent{{Path: "/bin/true"}}}}
	_, err = fitResult(small)
	require.NoError(t, err)
	assert.Len(t, small.Result.Execs, 1, "a result that fits is left alone")
}

// A client whose pooled connection ends after its go (the daemon died,
// or could not send the result) is told the command may have run
// (ErrResultLost), never that nothing ran (ErrPoolEmpty, after which a
// caller would run the command again, cold).
func TestRunPooledLostResultMayHaveRun(t *testing.T) {
	stateRoot := t.TempDir()
	l, err := ListenPool(stateRoot)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		c, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		var f poolFrame
		if _, err := readFrame(c, nil, &f); err != nil {
			return
		}
		_ = writeFrame(c, &poolFrame{Op: poolAccepted})
		_, _ = readFrame(c, nil, &f) // go
	}()
	res, err := RunPooled(t.Context(), stateRoot, PoolRequest{Profile: "p", Shell: "true"}, nil, nil, nil, nil)
	assert.Nil(t, res)
	require.ErrorIs(t, err, ErrResultLost)
	assert.NotErrorIs(t, err, ErrPoolEmpty)
	assert.Contains(t, err.Error(), "may have run")
}

// BenchmarkPoolCall: the daemon's side of one pooled call, from the
// client's dial to its result frame, spoken by hand on the pool socket
// (no client start, approval or placement): take-µs/op is dial to the
// "accepted" frame (the request read, the take, the protected paths
// planned and mounted), run-µs/op "go" to the result (the command's exec
// in the sandbox, the kill, the result's encoding). The workspace is a
// repository as git init makes it. The refill between calls is not timed.
func BenchmarkPoolCall(b *testing.B) {
	ps := newTestPools(b)
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	p := PoolSpec{Profile: "bench", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	servePool(b, ps, p)
	var take, run time.Duration
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		waitReady(b, ps, "bench", 1)
		b.StartTimer()
		t0 := time.Now()
		conn, err := net.Dial("unix", PoolSocket(ps.StateRoot))
		require.NoError(b, err)
		require.NoError(b, writeFrame(conn, &poolFrame{Op: poolRun, Request: &PoolRequest{CgroupPrefix: ps.CgroupPrefix, Args: []string{"/bin/true"}}}))
		var f poolFrame
		_, err = readFrame(conn, nil, &f)
		require.NoError(b, err)
		require.Equal(b, poolAccepted, f.Op, f.Reason)
		t1 := time.Now()
		require.NoError(b, writeFrame(conn, &poolFrame{Op: poolGo}))
		for f.Op != poolResult {
			f = poolFrame{}
			_, err = readFrameMax(conn, nil, &f, poolResultFrame)
			require.NoError(b, err)
		}
		t2 := time.Now()
		b.StopTimer()
		conn.Close()
		require.NotNil(b, f.Result, f.Error)
		require.Equal(b, 0, f.Result.ExitCode)
		take += t1.Sub(t0)
		run += t2.Sub(t1)
	}
	b.ReportMetric(float64(take.Microseconds())/float64(b.N), "take-µs/op")
	b.ReportMetric(float64(run.Microseconds())/float64(b.N), "run-µs/op")
}

// servePool serves ps's pool socket, every request placed in p, until the
// test ends; serving must then end without an error.
func servePool(tb testing.TB, ps *Pools, p PoolSpec) {
	tb.Helper()
	l, err := ListenPool(ps.StateRoot)
	require.NoError(tb, err)
	served := make(chan error, 1)
	go func() {
		served <- ps.ServePool(context.Background(), l, func(*PoolRequest) (PoolSpec, string) { return p, "" })
	}()
	tb.Cleanup(func() {
		l.Close()
		require.NoError(tb, <-served)
	})
}
