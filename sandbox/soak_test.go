package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestSoakSequentialTrue runs /bin/true 1,000 times (50 with -short, 200
// with -race, 1,000 divided by the time scale under emulation) and checks that nothing accumulates: no cgroups, mounts, state (the runner's
// cleanup), file descriptors or goroutines of this process.
func TestSoakSequentialTrue(t *testing.T) {
	r := newTestRunner(t)
	n := 1000
	switch {
	case testing.Short():
		n = 50
	case raceEnabled:
		// The race detector slows every re-executed init several-fold.
		n = 200
	case testenv.TimeScale() > 1:
		// Under TCG one launch takes the better part of a second: 1,000
		// outlived the package's 45-minute timeout in the cgroup v2 guest.
		// A leak per launch shows in 100 as well.
		n = int(float64(n) / testenv.TimeScale())
	}
	// Warm up once so lazily opened descriptors (logging, host layout
	// probe) do not count as a leak.
	res, _ := run(t, r, Config{}, "true")
	require.Equal(t, 0, res.ExitCode)
	fds0 := countFDs(t)
	goroutines0 := runtime.NumGoroutine()

	start := time.Now()
	for i := 0; i < n; i++ {
		res, err := r.Run(context.Background(), Config{}, Command{Args: []string{"/bin/true"}})
		require.NoError(t, err, "run %d", i)
		require.Equal(t, 0, res.ExitCode, "run %d", i)
	}
	elapsed := time.Since(start)
	t.Logf("%d sequential runs of /bin/true in %s (%s each)", n, elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond))

	assert.LessOrEqual(t, countFDs(t), fds0, "file descriptors leaked")
	// Polled here, not with assert.Eventually, whose own goroutine counts.
	for i := 0; i < 200 && runtime.NumGoroutine() > goroutines0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > goroutines0 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines leaked: %d before, %d after:\n%s", goroutines0, g, buf[:runtime.Stack(buf, true)])
	}
	assertNoLeaks(t, r)
}

func countFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// TestConcurrentRuns runs several sandboxes of one profile at once: each
// gets its own cgroup under the shared profile cgroup, which is removed only
// when the last one is done.
func TestConcurrentRuns(t *testing.T) {
	r := newTestRunner(t)
	r.ProfileLimits = Limits{Pids: 200, MemoryBytes: 512 << 20}
	const n = 6
	var wg sync.WaitGroup
	results := make([]*Result, n)
	errs := make([]error, n)
	outs := make([]bytes.Buffer, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.Run(context.Background(), Config{}, Command{
				Shell:  fmt.Sprintf("cat /proc/self/cgroup; sleep 0.%d; exit %d", i, i),
				Stdout: &outs[i],
			})
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		require.NoError(t, errs[i])
		assert.Equal(t, i, results[i].ExitCode)
		ids[results[i].ContainerID] = true
		// Its own cgroup namespace: its cgroup is the root (of the pids
		// hierarchy on v1, of the unified one on v2).
		root := `(?m)^0::/$`
		if strings.Contains(outs[i].String(), ":pids:") {
			root = `(?m)^[0-9]+:pids:/$`
		}
		assert.Regexp(t, root, outs[i].String(), "in its own cgroup namespace")
	}
	assert.Len(t, ids, n, "distinct containers")
}
