package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	if why == "" {
		return
	}
	if os.Getenv("REQUIRE_SANDBOX") == "1" {
		tb.Fatal(why)
	}
	tb.Skip(why)
}

// newTestSessions returns a Sessions with a unique state root and cgroup
// prefix, closed at cleanup, which then asserts nothing was left behind.
func newTestSessions(tb testing.TB) *Sessions {
	tb.Helper()
	requireSessionSandbox(tb)
	prefix := fmt.Sprintf("tether-test-%d-s%d", os.Getpid(), sessTestN.Add(1))
	m := &Sessions{StateRoot: tb.TempDir(), CgroupPrefix: prefix, Grace: 300 * time.Millisecond}
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
	return SessionSpec{Config: Config{Seccomp: SeccompOptional, Limits: Limits{Pids: 256, Timeout: 20 * time.Second}}}
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
	assert.NotEqual(t, "1\n", out)
	_ = strings.TrimSpace
}
