package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox"
)

// TestServeReapsPredecessorLeftovers: a daemon that starts where a killed
// one left a sandbox (state, lock file, an empty cgroup) removes it before
// it takes calls, and leaves alone a sandbox whose owner is alive (its lock
// held, as a concurrent tether run holds it).
func TestServeReapsPredecessorLeftovers(t *testing.T) {
	state, err := os.MkdirTemp("", "trp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(state) })
	prefix := fmt.Sprintf("tether-test-%d-reap", os.Getpid())
	for _, d := range []string{"containers", "locks", "roots"} {
		require.NoError(t, os.MkdirAll(filepath.Join(state, d), 0o700))
	}
	dead, live := "default-999999-aaaaaaaaaaaa", fmt.Sprintf("default-%d-bbbbbbbbbbbb", os.Getpid())
	for _, id := range []string{dead, live} {
		require.NoError(t, os.Mkdir(filepath.Join(state, "containers", id), 0o700))
		require.NoError(t, os.Mkdir(filepath.Join(state, "roots", id), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(state, "locks", id+".lock"), []byte("1\n"), 0o600))
	}
	f, err := os.OpenFile(filepath.Join(state, "locks", live+".lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	// An empty cgroup of the dead sandbox, where this test may make one:
	// in the pids hierarchy of a v1 or hybrid host, in the one tree of a
	// cgroup v2 host (where /sys/fs/cgroup/pids would be a cgroup of that
	// name outside the prefix, which no gc may touch).
	root := "/sys/fs/cgroup/pids"
	if st := (unix.Statfs_t{}); unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		root = "/sys/fs/cgroup"
	}
	cg := filepath.Join(root, prefix, "default", dead)
	haveCgroup := os.MkdirAll(cg, 0o755) == nil
	t.Cleanup(func() {
		for _, d := range []string{cg, filepath.Dir(cg), filepath.Dir(filepath.Dir(cg))} {
			_ = unix.Rmdir(d)
		}
	})

	e := newDaemonEnv(t, sandbox.Runner{StateRoot: state, CgroupPrefix: prefix}, "")
	e.start(t)
	for _, p := range []string{filepath.Join("containers", dead), filepath.Join("roots", dead), filepath.Join("locks", dead+".lock")} {
		assert.NoFileExists(t, filepath.Join(state, p), "the dead predecessor's %s was reaped", p)
		assert.NoDirExists(t, filepath.Join(state, p))
	}
	for _, p := range []string{filepath.Join("containers", live), filepath.Join("roots", live), filepath.Join("locks", live+".lock")} {
		_, err := os.Stat(filepath.Join(state, p))
		assert.NoError(t, err, "a live owner's %s is kept", p)
	}
	if haveCgroup {
		assert.NoDirExists(t, cg, "the dead predecessor's cgroup was removed")
	}
}
