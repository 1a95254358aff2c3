package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// ownerEnv makes the test binary a stand-in tether with its keeper on:
// the value is the mode ("run", "gate", "session" or "pool"), ownerRootEnv and
// ownerPrefixEnv name the state root and cgroup prefix, rootlessScriptEnv
// holds the script. It starts the script and waits to be killed.
const (
	ownerEnv       = "TETHER_SANDBOX_TEST_OWNER"
	ownerRootEnv   = "TETHER_SANDBOX_TEST_OWNER_ROOT"
	ownerPrefixEnv = "TETHER_SANDBOX_TEST_OWNER_PREFIX"
)

func ownerMain(mode string) int {
	root, prefix, script := os.Getenv(ownerRootEnv), os.Getenv(ownerPrefixEnv), os.Getenv(rootlessScriptEnv)
	ctx := context.Background()
	r := &Runner{StateRoot: root, CgroupPrefix: prefix}
	var err error
	switch mode {
	case "run":
		_, err = r.Run(ctx, Config{}, Command{Shell: script})
	case "gate":
		// Killed while the approval is pending: the init waits on its
		// exec fifo and nothing of the script ever runs.
		_, err = r.RunGated(ctx, Config{}, Command{Shell: script}, func() error { select {} })
	case "session":
		m := &Sessions{StateRoot: root, CgroupPrefix: prefix}
		s, oerr := m.Open(ctx, "default", "doomed", testSpec())
		if oerr != nil {
			err = oerr
			break
		}
		if _, err = s.Start(Command{Shell: script}); err == nil {
			_, err = s.Run(ctx, Command{Shell: "sleep 1000"})
		}
	case "pool":
		// A daemon's pool: one sandbox serving the script, the others
		// waiting for a command (or being built) when the owner dies.
		ps := &Pools{StateRoot: root, CgroupPrefix: prefix}
		p := PoolSpec{Profile: "default", Size: 2, Spec: testSpec()}
		ps.Prepare(p)
		for ps.Ready("default") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		_, err = ps.Run(ctx, p, Command{Shell: script}, ExecOptions{})
	}
	fmt.Fprintln(os.Stderr, "owner: finished unexpectedly:", err)
	return 3
}

// TestKeeperReapsKilledOwner kills a tether with SIGKILL while its
// sandbox runs a command that does its best to outlive it (ignores the
// termination signals, forks into new sessions, nohup), in a one-shot
// run, a session, a daemon's pool (its other sandboxes waiting) and a run
// whose approval is still pending; and checks
// from the host that every process of the sandbox is gone soon after and
// nothing of the sandbox is left, with no later tether or gc run.
func TestKeeperReapsKilledOwner(t *testing.T) {
	for _, mode := range []string{"run", "session", "pool", "gate"} {
		t.Run(mode, func(t *testing.T) {
			r := newTestRunner(t)
			if mode == "session" || mode == "pool" {
				requireSessionSandbox(t)
			}
			marker := strconv.Itoa(700000 + rand.IntN(99999))
			script := fmt.Sprintf(`trap '' TERM HUP INT QUIT
setsid sleep %[1]s1 &
nohup sleep %[1]s2 >/dev/null 2>&1 &
(trap '' TERM HUP; sleep %[1]s3) &
exec sleep %[1]s4`, marker)
			self, err := os.Executable()
			require.NoError(t, err)
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), ownerEnv+"="+mode, ownerRootEnv+"="+r.StateRoot,
				ownerPrefixEnv+"="+r.CgroupPrefix, rootlessScriptEnv+"="+script)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

			// Wait until the sandbox is up: its four sleeps, or for a
			// pending approval the init on its exec fifo.
			var pids []int
			require.Eventually(t, func() bool {
				pids = sandboxPIDs(r.CgroupPrefix)
				if mode == "gate" {
					return len(pids) > 0
				}
				return len(hostProcsWith("sleep\x00"+marker)) == 4
			}, 30*time.Second, 20*time.Millisecond, "the sandbox never came up")
			pids = sandboxPIDs(r.CgroupPrefix)

			require.NoError(t, cmd.Process.Signal(unix.SIGKILL))
			killed := time.Now()
			_ = cmd.Wait()
			require.Eventually(t, func() bool {
				for _, p := range pids {
					if pidAlive(p) {
						return false
					}
				}
				return len(hostProcsWith("sleep\x00"+marker)) == 0
			}, 10*time.Second, 10*time.Millisecond, "sandbox processes outlived their owner: %v", pids)
			t.Logf("%d sandbox processes gone %s after the owner's SIGKILL", len(pids), time.Since(killed).Round(time.Millisecond))
			// The keeper removes the rest (the runner's cleanup asserts
			// that nothing at all is left).
			require.Eventually(t, func() bool {
				entries, _ := os.ReadDir(filepath.Join(r.StateRoot, locksDir))
				dirs, _ := cgroupDirs("/" + r.CgroupPrefix)
				return len(entries) == 0 && len(dirs) == 0
			}, 10*time.Second, 20*time.Millisecond, "the keeper did not reap the dead owner's sandbox")
		})
	}
}

// sandboxPIDs lists the host pids in the cgroups under prefix (every
// hierarchy).
func sandboxPIDs(prefix string) []int {
	seen := map[int]bool{}
	var pids []int
	dirs, _ := cgroupDirs("/" + prefix)
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && !seen[p] {
				seen[p] = true
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// TestKeeperReplacedWhenKilled: a keeper killed while its owner lives is
// replaced, at once while a sandbox is outstanding (a session), else at
// the owner's next sandbox, so no sandbox runs unwatched.
func TestKeeperReplacedWhenKilled(t *testing.T) {
	r := newTestRunner(t)
	res, _ := run(t, r, Config{}, "true")
	require.Zero(t, res.ExitCode)
	k := &keeperState
	k.mu.Lock()
	w := k.w
	k.mu.Unlock()
	require.NotNil(t, w, "a run started the keeper")
	// Kill the keeper: the next run must start another, not run unwatched.
	keepers := hostProcsWith("--tether-keeper\x00" + strconv.Itoa(os.Getpid()))
	require.Len(t, keepers, 1)
	require.NoError(t, unix.Kill(keepers[0], unix.SIGKILL))
	assert.Eventually(t, func() bool { return !pidAlive(keepers[0]) }, 5*time.Second, 10*time.Millisecond)
	res, _ = run(t, r, Config{}, "true")
	require.Zero(t, res.ExitCode)
	again := hostProcsWith("--tether-keeper\x00" + strconv.Itoa(os.Getpid()))
	require.Len(t, again, 1, "a new keeper watches this process")
	assert.NotEqual(t, keepers[0], again[0])

	// With a session open, a killed keeper is replaced without waiting
	// for the next sandbox.
	requireSessionSandbox(t)
	m := &Sessions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix}
	defer m.Close()
	_, err := m.Open(t.Context(), "default", "watched", testSpec())
	require.NoError(t, err)
	require.NoError(t, unix.Kill(again[0], unix.SIGKILL))
	require.Eventually(t, func() bool {
		now := hostProcsWith("--tether-keeper\x00" + strconv.Itoa(os.Getpid()))
		return len(now) == 1 && now[0] != again[0]
	}, 10*time.Second, 10*time.Millisecond, "the killed keeper was not replaced while a session is open")
}

// BenchmarkKeeperStart is what the first sandbox of a process pays to
// start its keeper (fork and exec of this binary, whose C constructor
// takes over before the Go runtime starts), and the keeper's exit when the
// pipe closes with nothing outstanding.
//
//	go test -tags seccomp -run '^$' -bench BenchmarkKeeperStart ./sandbox/
func BenchmarkKeeperStart(b *testing.B) {
	for b.Loop() {
		w, proc, err := startKeeper("")
		if err != nil {
			b.Fatal(err)
		}
		if err := proc.wait(); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
}

// TestKeeperStoppedIsReplaced: a keeper that stops reading (SIGSTOP) does
// not hang this process's sandbox starts behind a full pipe: it is
// replaced.
func TestKeeperStoppedIsReplaced(t *testing.T) {
	state := t.TempDir()
	release, wait, err := keep(state, "tether-test-stopped")
	require.NoError(t, err)
	require.NoError(t, wait())
	defer release()
	mine := "--tether-keeper\x00" + strconv.Itoa(os.Getpid())
	old := hostProcsWith(mine)
	require.Len(t, old, 1)
	require.NoError(t, unix.Kill(old[0], unix.SIGSTOP))
	t.Cleanup(func() { _ = unix.Kill(old[0], unix.SIGKILL) }) // our child, stopped
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5000 { // far more than a pipe holds
			rel, _, err := keep(state, "tether-test-stopped")
			if err != nil {
				t.Error(err)
				return
			}
			rel()
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("announcing sandboxes hung behind a stopped keeper")
	}
	now := hostProcsWith(mine)
	assert.Contains(t, now, old[0])
	assert.Len(t, now, 2, "a new keeper took over")
}
