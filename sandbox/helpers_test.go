package sandbox

import (
	"github.com/tether-dev/tether/internal/testenv"

	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// requireSandbox skips the test when containers cannot run here (not root,
// no cgroups), or fails it when REQUIRE_SANDBOX=1 (CI) says they must.
func requireSandbox(t testing.TB) {
	t.Helper()
	testenv.RequireSandbox(t)
	if !seccompAvailable {
		// Configs default to seccomp "required"; the suites assert the
		// filtered behaviour, so they need the seccomp build.
		testenv.SkipOrFail(t, "built without seccomp: run with -tags seccomp")
	}
}

// processMount returns the cgroup mount whose cgroup.procs the tests read a
// sandbox's processes from: the v1 pids hierarchy where there is one (v1 and
// hybrid hosts), else the cgroup v2 tree (/sys/fs/cgroup on a unified host).
func processMount(t testing.TB) string {
	t.Helper()
	mounts, err := cgroupMounts()
	require.NoError(t, err)
	v2 := ""
	for _, m := range mounts {
		if filepath.Base(m) == "pids" {
			return m
		}
		var st unix.Statfs_t
		if unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			v2 = m
		}
	}
	require.NotEmpty(t, v2, "no pids or cgroup v2 hierarchy mounted")
	return v2
}

// controllerFile is the path of one cgroup file of a container (paths:
// libcontainer's CgroupPaths): the v1 file in the controller's own
// hierarchy, or the v2 file in the container's one directory on a unified
// host ("" in CgroupPaths).
func controllerFile(paths map[string]string, controller, v1, v2 string) string {
	if p, ok := paths[controller]; ok {
		return filepath.Join(p, v1)
	}
	return filepath.Join(paths[""], v2)
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

var testSeq atomic.Int64

// stateRoots are all state roots the tests created (the final leak check
// asserts they are gone).
var (
	stateRootsMu sync.Mutex
	stateRoots   []string
)

// testPrefix is this test binary's cgroup prefix; every cgroup the tests
// create lives under it.
var testPrefix = fmt.Sprintf("tether-test-%d", os.Getpid())

// newTestRunner returns a Runner with a unique state root and cgroup prefix,
// and registers a cleanup that fails the test if anything is left behind.
func newTestRunner(t testing.TB) *Runner {
	t.Helper()
	requireSandbox(t)
	n := testSeq.Add(1)
	// Short state root: unix socket paths inside it are length-limited.
	state, err := os.MkdirTemp("", "tst")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(state, 0o711)) // as Run would create it
	stateRootsMu.Lock()
	stateRoots = append(stateRoots, state)
	stateRootsMu.Unlock()
	r := &Runner{
		StateRoot:    state,
		CgroupPrefix: fmt.Sprintf("%s/r%d", testPrefix, n),
		Grace:        testenv.Scaled(300 * time.Millisecond),
	}
	t.Cleanup(func() {
		assertNoLeaks(t, r)
		_ = removeCgroupTree("/" + r.CgroupPrefix)
		_ = os.RemoveAll(state)
		// Not testPrefix itself: removing it here would race the
		// siblings' set-ups (TestMain removes it when every test is done).
	})
	return r
}

// assertNoLeaks checks that nothing of r's remains: no processes in, and no
// directories of, its cgroups in any hierarchy (unified included), no mounts
// and no state entries under its state root.
func assertNoLeaks(t testing.TB, r *Runner) {
	t.Helper()
	dirs, err := cgroupDirs("/" + r.CgroupPrefix)
	require.NoError(t, err)
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		t.Errorf("leftover cgroup %s (procs %q)", d, strings.TrimSpace(string(b)))
	}
	if m := mountsUnder(r.StateRoot); len(m) > 0 {
		t.Errorf("leftover mounts: %v", m)
	}
	for _, sub := range []string{containersDir, rootsDir, locksDir} {
		entries, _ := os.ReadDir(filepath.Join(r.StateRoot, sub))
		for _, e := range entries {
			t.Errorf("leftover state %s/%s", sub, e.Name())
		}
	}
}

// run runs a shell snippet in a host-layout sandbox and returns the result
// and the combined output.
func run(t testing.TB, r *Runner, cfg Config, script string) (*Result, string) {
	t.Helper()
	return runWithin(t, r, cfg, script, 60*time.Second)
}

// runWithin is run with a deadline of its own (scaled) for the scripts that
// loop over thousands of execs: under -race on a loaded CI machine 2,000
// gated execs took past run's 60 s.
func runWithin(t testing.TB, r *Runner, cfg Config, script string, d time.Duration) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(d))
	defer cancel()
	res, err := r.Run(ctx, cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err, "output: %s", out.String())
	return res, out.String()
}

// pidAlive reports whether a host process exists and is not a zombie.
func pidAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// stateTempDir returns a temporary state root that a sandbox's root (an
// unprivileged host uid) can traverse, as Run and Sessions create theirs:
// t.TempDir's directories are 0700.
func stateTempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		require.NoError(tb, os.Chmod(d, 0o711))
	}
	return dir
}
