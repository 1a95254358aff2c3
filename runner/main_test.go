package runner

import (
	"github.com/tether-dev/tether/internal/testenv"

	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/sandbox"
)

// init makes the test binary act as the container init when libcontainer
// re-executes it (see sandbox/main_test.go); session supervisors are
// dispatched by package sandbox's own init.
func init() {
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(mcpHelperEnv) != "" {
		os.Exit(mcpHelperMain())
	}
	os.Exit(m.Run())
}

// requireSandbox skips a test that needs containers when they cannot run
// here, or fails it when REQUIRE_SANDBOX=1 says they must.
var requireSandbox = testenv.RequireSandbox

var testSeq atomic.Int64

// testSandbox returns a sandbox runner template with a unique state root
// and cgroup prefix, removed (cgroups in every hierarchy) at cleanup.
func testSandbox(t testing.TB) sandbox.Runner {
	t.Helper()
	requireSandbox(t)
	state, err := os.MkdirTemp("", "trn")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(state, 0o711))
	prefix := fmt.Sprintf("tether-test-%d-r%d", os.Getpid(), testSeq.Add(1))
	t.Cleanup(func() {
		removeCgroups(prefix)
		_ = os.RemoveAll(state)
	})
	return sandbox.Runner{StateRoot: state, CgroupPrefix: prefix, Grace: 300 * time.Millisecond}
}

// removeCgroups removes the directories named prefix (and below) in every
// cgroup hierarchy, the hybrid unified tree included, deepest first.
func removeCgroups(prefix string) {
	roots := []string{filepath.Join("/sys/fs/cgroup", prefix)}
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", e.Name(), prefix))
	}
	for _, r := range roots {
		var dirs []string
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
		for _, d := range dirs {
			_ = os.Remove(d)
		}
	}
}
