package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartGuardedTurnsAPanicIntoAnError: a panic inside libcontainer's
// start (as its mount-source race panics with "send on closed channel") is
// an error wrapping ErrEnginePanic that names the panic, not the end of the
// process; a start's own error and success pass through unchanged.
func TestStartGuardedTurnsAPanicIntoAnError(t *testing.T) {
	t.Parallel()
	p := &libcontainer.Process{} // never started: the kill finds nothing
	err := startGuarded(p, func() error {
		ch := make(chan int)
		close(ch)
		ch <- 1 // the runtime panic libcontainer 1.5.3 hits
		return nil
	})
	require.ErrorIs(t, err, ErrEnginePanic)
	assert.ErrorContains(t, err, "send on closed channel")

	own := errors.New("unable to start init")
	assert.Equal(t, own, startGuarded(p, func() error { return own }))
	assert.NoError(t, startGuarded(p, func() error { return nil }))
}

// TestStartSurvivesLibcontainerMountDeadline reproduces libcontainer
// 1.5.3's mount-source race with the real engine: each of a few one-shot
// sandboxes with a workspace (an idmapped mount, so the init asks the
// parent for a mount source) is frozen in its cgroup once libcontainer's
// mount-source thread runs (a thread of this process in another mount
// namespace) and thawed after that thread's one-minute deadline. The
// init's mount request then meets a closed channel: libcontainer panics
// (about one time in two) or reports the cancelled request. Either way the
// start fails, this process lives on, and nothing is left behind (the
// runner's cleanup checks). Without startGuarded the panic ends the test
// binary. It takes over a minute: run it with TETHER_SLOW_TESTS=1.
func TestStartSurvivesLibcontainerMountDeadline(t *testing.T) {
	if os.Getenv("TETHER_SLOW_TESTS") == "" {
		t.Skip("takes over a minute (libcontainer's mount-source deadline): set TETHER_SLOW_TESTS=1")
	}
	if _, err := os.Stat("/sys/fs/cgroup/freezer"); err != nil {
		t.Skip("needs the cgroup v1 freezer hierarchy")
	}
	r := newTestRunner(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		ws := t.TempDir()
		require.NoError(t, os.Chmod(filepath.Dir(ws), 0o711))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Run(context.Background(), Config{Workspace: ws, Seccomp: SeccompOptional, Limits: Limits{Timeout: 3 * time.Minute}}, Command{Shell: "true"})
		}()
	}
	// Freeze each container once the mount-source thread of its start is
	// running (checked every pass), so the thread's deadline runs out
	// while the init waits to ask for the workspace.
	self, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	frozen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(frozen) < n && time.Now().Before(deadline) {
		threadIn := false
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			if ns, err := os.Readlink("/proc/self/task/" + task.Name() + "/ns/mnt"); err == nil && ns != self {
				threadIn = true
			}
		}
		if !threadIn {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/freezer", r.CgroupPrefix, "*", "*"))
		for _, d := range dirs {
			if !frozen[d] && os.WriteFile(filepath.Join(d, "freezer.state"), []byte("FROZEN"), 0o644) == nil {
				frozen[d] = true
			}
		}
	}
	t.Logf("froze %d of %d starts; waiting out the one-minute deadline", len(frozen), n)
	time.Sleep(65 * time.Second)
	for d := range frozen {
		_ = os.WriteFile(filepath.Join(d, "freezer.state"), []byte("THAWED"), 0o644)
	}
	wg.Wait()
	panics := 0
	for i, err := range errs {
		t.Logf("start %d: %v", i, err)
		if errors.Is(err, ErrEnginePanic) {
			panics++
		}
	}
	t.Logf("%d of %d starts hit the panic and were recovered", panics, n)
	assert.NotZero(t, len(frozen), "no start was frozen in time: the race was not set up")
}
