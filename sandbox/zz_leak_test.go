package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestZZLeakCheckAfterSuites runs last (files and tests run in order) and
// checks that the whole test run left nothing behind: no cgroup under this
// binary's prefix in any hierarchy (the hybrid unified tree included), no
// host process in such a cgroup, no mount and no state root.
func TestZZLeakCheckAfterSuites(t *testing.T) {
	requireSandbox(t)
	dirs, err := cgroupDirs("/" + testPrefix)
	assert.NoError(t, err)
	// testPrefix itself is the parent of the runners' prefixes
	// (testPrefix/rN), which tether leaves as another's (see
	// Runner.CgroupPrefix); TestMain removes it at the end.
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return filepath.Base(d) == testPrefix })
	assert.Empty(t, dirs, "leftover cgroups")
	mounts, err := cgroupMounts()
	assert.NoError(t, err)
	assert.NotEmpty(t, mounts)

	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err == nil && strings.Contains(string(b), testPrefix) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			t.Errorf("leftover process %s (%q) in %s", e.Name(), cmd, testPrefix)
		}
	}
	stateRootsMu.Lock()
	defer stateRootsMu.Unlock()
	for _, s := range stateRoots {
		assert.NoDirExists(t, s)
		assert.Empty(t, mountsUnder(s))
	}
	t.Logf("checked %d cgroup hierarchies and %d state roots", len(mounts), len(stateRoots))
}
