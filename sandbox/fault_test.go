package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// watchCgroup polls the pids cgroups under r's prefix while a command runs
// and records the highest pids.current seen and every host pid seen in them.
type cgroupWatch struct {
	mu      sync.Mutex
	maxPids int64
	pids    map[int]bool
	stop    chan struct{}
	done    chan struct{}
}

func watchCgroup(r *Runner) *cgroupWatch {
	w := &cgroupWatch{pids: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
			for _, d := range dirs {
				if n, err := readInt(filepath.Join(d, "pids.current")); err == nil {
					w.mu.Lock()
					w.maxPids = max(w.maxPids, n)
					w.mu.Unlock()
				}
				b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						w.mu.Lock()
						w.pids[pid] = true
						w.mu.Unlock()
					}
				}
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *cgroupWatch) finish() (maxPids int64, pids []int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.pids {
		pids = append(pids, p)
	}
	return w.maxPids, pids
}

// hostProcsWith lists host pids whose command line contains marker.
func hostProcsWith(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) && pidAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestFaultForkBombHeldAndKilled(t *testing.T) {
	r := newTestRunner(t)
	for _, bomb := range []struct{ name, script string }{
		// The trailing sleep keeps pid 1 alive: when pid 1 exits the kernel
		// kills the whole pid namespace, which would end the bomb at once.
		{"classic", ":(){ :|:& };:; sleep 60"},
		{"renamed", "spawn(){ spawn|spawn& };spawn; sleep 60"},
	} {
		t.Run(bomb.name, func(t *testing.T) {
			const limit = 64
			cfg := Config{Limits: Limits{Pids: limit, Timeout: 3 * time.Second}}
			w := watchCgroup(r)

			// The host keeps working while the bomb runs.
			var slowest time.Duration
			var hostErr error
			var hostWG sync.WaitGroup
			hostWG.Add(1)
			go func() {
				defer hostWG.Done()
				time.Sleep(500 * time.Millisecond)
				for i := 0; i < 20; i++ {
					start := time.Now()
					if err := exec.Command("true").Run(); err != nil {
						hostErr = err
						return
					}
					slowest = max(slowest, time.Since(start))
					time.Sleep(50 * time.Millisecond)
				}
			}()
			var out bytes.Buffer
			res, err := r.Run(context.Background(), cfg, Command{Args: []string{"/bin/bash", "-c", bomb.script}, Stdout: &out, Stderr: &out})
			hostWG.Wait()
			maxPids, _ := w.finish()
			require.NoError(t, err)
			assert.True(t, res.TimedOut, "the bomb runs until the timeout kills it")
			assert.Equal(t, 137, res.ExitCode)
			assert.Equal(t, "SIGKILL", res.Signal)
			assert.LessOrEqual(t, maxPids, int64(limit), "held at the pids limit")
			assert.Greater(t, maxPids, int64(limit/2), "the bomb did fork up to the limit")
			assert.Contains(t, out.String(), "retry", "bash reports fork failures (Resource temporarily unavailable)")
			require.NoError(t, hostErr)
			assert.Less(t, slowest, 2*time.Second, "host fork/exec stays responsive (loose bound)")
			t.Logf("max pids %d, slowest host exec %s, duration %s", maxPids, slowest, res.Duration)
		})
	}
}

func TestFaultMemoryHogOOMKilled(t *testing.T) {
	r := newTestRunner(t)
	cfg := Config{Limits: Limits{MemoryBytes: 64 << 20, Timeout: testenv.Scaled(30 * time.Second)}}
	res, out := run(t, r, cfg, py("a = []\nwhile True: a.append(b\"x\" * (1 << 20))"))
	t.Logf("%+v %s", res, out)
	assert.True(t, res.OOMKilled, "reported from the memory cgroup's OOM counter")
	assert.Equal(t, 137, res.ExitCode)
	assert.False(t, res.TimedOut)
	assert.LessOrEqual(t, res.PeakMemory, int64(64<<20))
	assert.Greater(t, res.PeakMemory, int64(32<<20))

	// A command that stays under the limit is not reported as OOM-killed.
	res, _ = run(t, r, cfg, "true")
	assert.False(t, res.OOMKilled)
}

func TestFaultOOMOfChildReported(t *testing.T) {
	// cgroup v1 kills only the process that hit the limit; the shell
	// survives and exits 0, yet the result must say an OOM kill happened.
	r := newTestRunner(t)
	cfg := Config{Limits: Limits{MemoryBytes: 64 << 20, Timeout: 30 * time.Second}}
	res, out := run(t, r, cfg, py("a = []\nwhile True: a.append(b\"x\" * (1 << 20))")+"; echo survived")
	assert.Contains(t, out, "survived")
	assert.Equal(t, 0, res.ExitCode)
	assert.True(t, res.OOMKilled)
}

func TestFaultTmpfsFillerStopsAtSize(t *testing.T) {
	r := newTestRunner(t)
	cfg := Config{Limits: Limits{TmpfsBytes: 8 << 20}}
	res, out := run(t, r, cfg, "dd if=/dev/zero of=/tmp/fill bs=1M count=64; echo size=$(stat -c %s /tmp/fill)")
	assert.Contains(t, out, "No space left on device")
	assert.Contains(t, out, "size=8388608")
	assert.Equal(t, 0, res.ExitCode)
}

func TestFaultOutputFloodCapped(t *testing.T) {
	r := newTestRunner(t)
	var stdout, stderr bytes.Buffer
	cfg := Config{Limits: Limits{OutputBytes: 1000, Timeout: 30 * time.Second}}
	res, err := r.Run(context.Background(), cfg, Command{Shell: "yes out | head -c 50000000; yes err | head -c 1000000 >&2", Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	assert.True(t, res.OutputTruncated)
	assert.Equal(t, 1000, stdout.Len()+stderr.Len(), "stdout and stderr share the cap")
	assert.Equal(t, 0, res.ExitCode, "the command is not made to fail")
	assert.False(t, res.TimedOut)

	res, err = r.Run(context.Background(), cfg, Command{Shell: "echo small"})
	require.NoError(t, err)
	assert.False(t, res.OutputTruncated)
}

func TestFaultCPUSpinnerThrottledAndTimedOut(t *testing.T) {
	r := newTestRunner(t)
	cfg := Config{Limits: Limits{CPUs: 0.25, Timeout: 2 * time.Second}}
	res, _ := run(t, r, cfg, "while :; do :; done")
	t.Logf("cpu %s wall %s", res.CPUTime, res.Duration)
	assert.True(t, res.TimedOut)
	assert.Equal(t, 137, res.ExitCode, "pid 1 ignores SIGTERM, so SIGKILL ends it")
	assert.Greater(t, res.CPUTime, 100*time.Millisecond, "it did spin")
	// Throttled to a quarter core: far less than the wall time (loose).
	assert.Less(t, res.CPUTime, res.Duration/2)
}

func TestFaultDetachedChildrenDie(t *testing.T) {
	r := newTestRunner(t)
	marker := fmt.Sprintf("987.%d%d", os.Getpid(), testSeq.Add(1))
	cases := []struct {
		name, script string
		timeout      time.Duration
	}{
		{"exit leaves children", "setsid sleep " + marker + " & nohup sleep " + marker + " >/dev/null 2>&1 & (trap '' TERM HUP; exec sleep " + marker + ") & echo started", 0},
		{"timeout with TERM-ignoring children", "setsid sh -c 'trap \"\" TERM; sleep " + marker + "' & nohup sleep " + marker + " >/dev/null 2>&1 & trap '' TERM; sleep " + marker, time.Second},
		{"double fork daemon", "sh -c '(setsid sleep " + marker + " &) &'; sleep 0.2; echo daemonised", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := watchCgroup(r)
			res, out := run(t, r, Config{Limits: Limits{Timeout: tc.timeout}}, tc.script)
			_, seen := w.finish()
			t.Logf("%+v %q seen %v", res, out, seen)
			assert.Equal(t, tc.timeout > 0, res.TimedOut)
			for _, pid := range seen {
				assert.False(t, pidAlive(pid), "container process %d still alive", pid)
			}
			assert.Empty(t, hostProcsWith(marker), "no sleep %s left on the host", marker)
		})
	}
}

func TestCancelStopsCommand(t *testing.T) {
	r := newTestRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the command says its TERM handler is installed, so the
	// test does not depend on how fast the sandbox starts.
	var mu sync.Mutex
	var out bytes.Buffer
	w := writerFunc(func(p []byte) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(p)
		if bytes.Contains(out.Bytes(), []byte("ready\n")) {
			cancel()
		}
	})
	res, err := r.Run(ctx, Config{}, Command{Shell: "trap 'echo got TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done", Stdout: w})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled))
	require.NotNil(t, res)
	assert.False(t, res.TimedOut, "cancelled, not timed out")
	assert.Equal(t, 42, res.ExitCode, "SIGTERM first: the command's handler ran")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, out.String(), "got TERM")
}

// TestFaultProfileLimitBoundsContainer: the profile's parent cgroup limit
// holds even when the container itself asks for none.
func TestFaultProfileLimitBoundsContainer(t *testing.T) {
	r := newTestRunner(t)
	r.ProfileLimits = Limits{Pids: 16}
	w := watchCgroup(r)
	res, out := run(t, r, Config{}, "for i in $(seq 40); do sleep 1 & done 2>&1 | head -3; wait")
	maxPids, _ := w.finish()
	t.Logf("%+v max pids %d: %s", res, maxPids, out)
	assert.LessOrEqual(t, maxPids, int64(16))
	assert.Greater(t, maxPids, int64(8))
	assert.Contains(t, out, "fork")
	dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
	assert.Empty(t, dirs, "the profile cgroup goes when its last container does")
}
