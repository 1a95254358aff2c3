package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionSoak runs 50 concurrent sessions × 200 commands, each echoing
// a unique token, and checks that no result is lost or mixed up and that
// nothing (process, cgroup in any hierarchy, mount, state) is left after
// close. It takes a while on two cores, so it runs only with TETHER_SOAK=1:
//
//	TETHER_SOAK=1 go test -tags seccomp -run TestSessionSoak -v ./sandbox/
func TestSessionSoak(t *testing.T) {
	if os.Getenv("TETHER_SOAK") != "1" {
		t.Skip("soak test: set TETHER_SOAK=1 to run it")
	}
	const sessions, commands = 50, 200
	m := newTestSessions(t)
	spec := testSpec()
	spec.Options.PersistCwd = true
	ctx := context.Background()
	start := time.Now()

	var mu sync.Mutex
	var failures []string
	var allPIDs []int
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("soak%d", i)
			s, err := m.Open(ctx, "soak", name, spec)
			if err != nil {
				fail("open %s: %v", name, err)
				return
			}
			for j := range commands {
				tok := fmt.Sprintf("%s-cmd%d", name, j)
				var out, errb bytes.Buffer
				var res *Result
				if j%2 == 0 {
					res, err = s.Run(ctx, Command{Args: []string{"echo", tok}, Stdout: &out, Stderr: &errb})
				} else {
					res, err = s.Run(ctx, Command{Shell: "echo " + tok + "; echo " + tok + " >&2; exit " + fmt.Sprint(j%7), Stdout: &out, Stderr: &errb})
				}
				want := 0
				if j%2 == 1 {
					want = j % 7
				}
				switch {
				case err != nil:
					fail("%s: %v", tok, err)
				case out.String() != tok+"\n":
					fail("%s: stdout %q", tok, out.String())
				case j%2 == 1 && errb.String() != tok+"\n":
					fail("%s: stderr %q", tok, errb.String())
				case res.ExitCode != want:
					fail("%s: exit %d, want %d", tok, res.ExitCode, want)
				}
			}
			pids, err := s.HostPIDs()
			if err != nil {
				fail("%s: pids: %v", name, err)
			}
			mu.Lock()
			allPIDs = append(allPIDs, pids...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	ran := time.Since(start)
	require.Len(t, m.List(), sessions)
	require.NoError(t, m.Close())
	waitGone(t, allPIDs)
	assertNothingLeft(t, m.StateRoot, m.CgroupPrefix)
	assert.Empty(t, failures, strings.Join(failures, "\n"))
	t.Logf("%d sessions × %d commands: %s (%.2f ms/command overall), close %s",
		sessions, commands, ran, float64(ran.Microseconds())/1000/float64(sessions*commands), time.Since(start)-ran)
}
