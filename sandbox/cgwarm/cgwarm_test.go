package cgwarm

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPickProcsFile(t *testing.T) {
	hybrid := "12:pids:/user.slice\n11:memory:/user.slice\n1:name=systemd:/init.scope\n0::/init.scope\n"
	v2only := "0::/system.slice/x.service\n"
	hybridNoPids := "11:memory:/a\n0::/b\n"
	sneaky := "12:pids:/../../etc\n0::/ok\n"
	all := func(string) bool { return true }
	only := func(want string) func(string) bool { return func(p string) bool { return p == want } }

	assert.Equal(t, "/sys/fs/cgroup/pids/user.slice/cgroup.procs", pickProcsFile(hybrid, all))
	assert.Equal(t, "/sys/fs/cgroup/system.slice/x.service/cgroup.procs",
		pickProcsFile(v2only, only("/sys/fs/cgroup/system.slice/x.service/cgroup.procs")))
	assert.Equal(t, "/sys/fs/cgroup/unified/b/cgroup.procs", pickProcsFile(hybridNoPids, all))
	assert.Equal(t, "/sys/fs/cgroup/unified/ok/cgroup.procs", pickProcsFile(sneaky, all), "a path with .. is never used")
	assert.Empty(t, pickProcsFile(v2only, func(string) bool { return false }))
	assert.Empty(t, pickProcsFile("", all))
	assert.Empty(t, pickProcsFile("garbage\n", all))
}

// Prime must leave the process where it was: it only takes the lock.
func TestPrimeKeepsTheCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to write cgroup.procs")
	}
	before, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	require.NotEmpty(t, procsFile(), "no cgroup.procs found for this process")
	Prime()
	after, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}
