package sandbox

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoakSequentialTrue runs /bin/true 1,000 times (50 with -short) and
// checks that nothing accumulates: no cgroups, mounts, state (the runner's
// cleanup), file descriptors or goroutines of this process.
func TestSoakSequentialTrue(t *testing.T) {
	r := newTestRunner(t)
	n := 1000
	if testing.Short() {
		n = 50
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
