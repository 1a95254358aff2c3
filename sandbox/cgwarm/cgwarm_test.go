package cgwarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRoot makes a directory holding the given cgroup.procs files (paths
// relative to it) and returns it.
func fakeRoot(t *testing.T, files ...string) string {
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	return root
}

func TestProcsFile(t *testing.T) {
	hybrid := "12:pids:/user.slice\n11:memory:/user.slice\n1:name=systemd:/init.scope\n0::/init.scope\n"
	for _, tc := range []struct {
		name, procCgroup string
		files            []string
		want             string // relative to the fake root; "" for none
	}{
		{"hybrid: the pids hierarchy", hybrid,
			[]string{"sys/fs/cgroup/pids/user.slice/cgroup.procs", "sys/fs/cgroup/unified/init.scope/cgroup.procs"},
			"/sys/fs/cgroup/pids/user.slice/cgroup.procs"},
		{"pids among other controllers of one hierarchy", "5:cpu,pids,memory:/a\n",
			[]string{"sys/fs/cgroup/pids/a/cgroup.procs"}, "/sys/fs/cgroup/pids/a/cgroup.procs"},
		{"a controller merely starting with pids is not pids", "5:pidsx:/a\n0::/b\n",
			[]string{"sys/fs/cgroup/pids/a/cgroup.procs", "sys/fs/cgroup/b/cgroup.procs"}, "/sys/fs/cgroup/b/cgroup.procs"},
		{"the root cgroup", "3:pids:/\n", []string{"sys/fs/cgroup/pids/cgroup.procs"}, "/sys/fs/cgroup/pids/cgroup.procs"},
		{"v2 only", "0::/system.slice/x.service\n",
			[]string{"sys/fs/cgroup/system.slice/x.service/cgroup.procs"}, "/sys/fs/cgroup/system.slice/x.service/cgroup.procs"},
		{"hybrid without pids: the unified mount", "11:memory:/a\n0::/b\n",
			[]string{"sys/fs/cgroup/unified/b/cgroup.procs", "sys/fs/cgroup/b/cgroup.procs"}, "/sys/fs/cgroup/unified/b/cgroup.procs"},
		{"a path with .. is never used", "12:pids:/../../etc\n0::/ok\n",
			[]string{"sys/fs/cgroup/pids/../../etc/cgroup.procs", "sys/fs/cgroup/ok/cgroup.procs"}, "/sys/fs/cgroup/ok/cgroup.procs"},
		{"no file exists", hybrid, nil, ""},
		{"a relative path is ignored", "12:pids:user.slice\n", []string{"sys/fs/cgroup/pidsuser.slice/cgroup.procs"}, ""},
		{"no final newline", "12:pids:/a", []string{"sys/fs/cgroup/pids/a/cgroup.procs"}, "/sys/fs/cgroup/pids/a/cgroup.procs"},
		{"empty", "", nil, ""},
		{"garbage", "garbage\n::\n:\n", nil, ""},
		{"a path too long for the buffer", "12:pids:/" + strings.Repeat("x", 2000) + "\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeRoot(t, tc.files...)
			want := ""
			if tc.want != "" {
				want = root + tc.want
			}
			assert.Equal(t, want, procsFile(tc.procCgroup, root))
		})
	}
}

// Prime must leave the process where it was: it only takes the lock.
func TestPrimeKeepsTheCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to write cgroup.procs")
	}
	before, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	require.NotEmpty(t, procsFile(string(before), ""), "no cgroup.procs found for this process")
	Prime()
	after, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// The constructor runs in a binary named tether started with "run": this
// test binary, run again under that name, must start, run and exit as usual
// (its thread blocks signals and ends by itself). Flag parsing stops at
// "run", so the child runs this package's tests; CGWARM_CHILD keeps it from
// recursing.
func TestConstructorLeavesTheProgramAlone(t *testing.T) {
	if os.Getenv("CGWARM_CHILD") == "1" {
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "tether")
	require.NoError(t, os.Symlink(exe, link))
	cmd := exec.Command(link, "run")
	cmd.Env = append(os.Environ(), "CGWARM_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// A tether run that will take a daemon's pooled sandbox (a pool socket in
// its state root) or run in a daemon session is not primed: the priming
// write would only hold up forks on the host.
func TestWantedSkipsPooledAndSessionRuns(t *testing.T) {
	withPool, without := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(withPool, "pool.sock"), nil, 0o600))
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want bool
	}{
		{"no daemon", []string{"--state-root", without, "--", "true"}, "", true},
		{"a daemon's pool, by flag", []string{"--state-root", withPool, "--", "true"}, "", false},
		{"a daemon's pool, by flag=", []string{"--state-root=" + withPool, "true"}, without, false},
		{"a daemon's pool, by environment", []string{"--", "true"}, withPool, false},
		{"the flag wins over the environment", []string{"--state-root", without, "true"}, withPool, true},
		{"flags after -- are the command's", []string{"--", "x", "--state-root", withPool}, without, true},
		{"a session", []string{"--session", "s1", "--", "true"}, without, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, wanted(tc.args, tc.env))
		})
	}
}
