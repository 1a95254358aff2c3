//go:build seccomp

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cache key writes every field of libcontainer's seccomp config: a new
// field (a libcontainer upgrade) must be added to appendSeccompKey, or two
// different filters could share a compiled program.
func TestSeccompKeyCoversConfig(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 7, reflect.TypeFor[configs.Seccomp]().NumField(), "configs.Seccomp changed: update appendSeccompKey")
	assert.Equal(t, 4, reflect.TypeFor[configs.Syscall]().NumField(), "configs.Syscall changed: update appendSeccompKey")
	assert.Equal(t, 4, reflect.TypeFor[configs.Arg]().NumField(), "configs.Arg changed: update appendSeccompKey")

	f, err := sandboxFilters(false)
	require.NoError(t, err)
	base := string(appendSeccompKey(nil, f.lc))
	other := uint(7) // E2BIG: not an errno the profile uses
	changes := map[string]func(c *configs.Seccomp){
		"default action": func(c *configs.Seccomp) { c.DefaultAction++ },
		"architectures":  func(c *configs.Seccomp) { c.Architectures = append(c.Architectures, "x86") },
		"flags":          func(c *configs.Seccomp) { c.Flags = nil },
		"default errno":  func(c *configs.Seccomp) { c.DefaultErrnoRet = &other },
		"listener":       func(c *configs.Seccomp) { c.ListenerPath = "/l" },
		"metadata":       func(c *configs.Seccomp) { c.ListenerMetadata = "m" },
		"syscall name":   func(c *configs.Seccomp) { c.Syscalls[0].Name = "other" },
		"syscall action": func(c *configs.Seccomp) { c.Syscalls[0].Action++ },
		"syscall errno":  func(c *configs.Seccomp) { c.Syscalls[0].ErrnoRet = &other },
		"arg": func(c *configs.Seccomp) {
			c.Syscalls[0].Args = []*configs.Arg{{Index: 1, Value: 2, ValueTwo: 3, Op: configs.EqualTo}}
		},
		"one syscall fewer": func(c *configs.Seccomp) { c.Syscalls = c.Syscalls[1:] },
	}
	for name, change := range changes {
		c := *f.lc
		c.Syscalls = make([]*configs.Syscall, len(f.lc.Syscalls))
		for i, s := range f.lc.Syscalls {
			dup := *s
			c.Syscalls[i] = &dup
		}
		change(&c)
		assert.NotEqual(t, base, string(appendSeccompKey(nil, &c)), name)
	}
}

// The compiled program comes from libcontainer (through the helper) and is
// cached in memory and under the state root; a damaged cache file is
// compiled again.
func TestCompiledSeccompIsCached(t *testing.T) {
	requireSandbox(t)
	f, err := sandboxFilters(false)
	require.NoError(t, err)
	key, persist := seccompCacheKey(f.lc)
	require.True(t, persist, "test binaries carry their build info")
	compiledPrograms.Delete(key)

	state := t.TempDir()
	prog, flags, err := compiledSeccomp(state, f.lc)
	require.NoError(t, err)
	require.NoError(t, validProgram(prog))
	assert.NotZero(t, flags&0x4, "Docker's profile asks for SECCOMP_FILTER_FLAG_SPEC_ALLOW")
	path := filepath.Join(state, seccompDir, key+".bpf")
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, prog, onDisk)

	// From disk, in a process that has not compiled it.
	compiledPrograms.Delete(key)
	again, _, err := compiledSeccomp(state, f.lc)
	require.NoError(t, err)
	assert.Equal(t, prog, again)

	// A damaged file is replaced by a fresh compile.
	compiledPrograms.Delete(key)
	require.NoError(t, os.WriteFile(path, onDisk[:len(onDisk)-3], 0o600))
	fresh, _, err := compiledSeccomp(state, f.lc)
	require.NoError(t, err)
	assert.Equal(t, prog, fresh, "compiling is deterministic")
	onDisk, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, prog, onDisk)

	_, _, err = compiledSeccomp(state, &configs.Seccomp{ListenerPath: "/run/l"})
	assert.Error(t, err, "notify listeners stay libcontainer's")

	// A cache file that others could have written is not trusted: it is
	// compiled afresh and replaced.
	compiledPrograms.Delete(key)
	bogus := append([]byte(nil), prog...)
	bogus[len(bogus)-1] ^= 0xff
	require.NoError(t, os.WriteFile(path, bogus, 0o600))
	require.NoError(t, os.Chmod(path, 0o666))
	fresh, _, err = compiledSeccomp(state, f.lc)
	require.NoError(t, err)
	assert.Equal(t, prog, fresh, "a world-writable cache file is ignored")
	compiledPrograms.Delete(key)
	require.NoError(t, os.WriteFile(path, bogus, 0o600))
	require.NoError(t, os.Chmod(filepath.Dir(path), 0o777))
	fresh, _, err = compiledSeccomp(state, f.lc)
	require.NoError(t, err)
	assert.Equal(t, prog, fresh, "a cache in a world-writable directory is ignored")
	require.NoError(t, os.Chmod(filepath.Dir(path), 0o700))

	// A compile that failed is not tried again for the same filter.
	compiledPrograms.Delete(key)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(filepath.Join(state, seccompDir, key+".failed"), []byte("ptrace: operation not permitted"), 0o600))
	_, _, err = compiledSeccomp(state, f.lc)
	require.ErrorContains(t, err, "failed before: ptrace: operation not permitted")
	assert.NoFileExists(t, path)
}

// Both ways of loading the filter install the same program: the one
// libcontainer compiles in a container's init, and the one the trampoline
// loads, compiled by the helper. Read back from a process in each sandbox.
func TestTrampolineLoadsWhatLibcontainerLoads(t *testing.T) {
	r := newTestRunner(t)
	f, err := sandboxFilters(false)
	require.NoError(t, err)
	want, _, err := compiledSeccomp(r.StateRoot, f.lc)
	require.NoError(t, err)

	for _, viaLibcontainer := range []bool{false, true} {
		r.libcontainerSeccomp = viaLibcontainer
		got := installedFilter(t, r)
		assert.Equal(t, want, got, "via libcontainer: %v", viaLibcontainer)
	}
}

// installedFilter runs `sleep` in a sandbox of r and reads its seccomp
// program from the host.
func installedFilter(t *testing.T, r *Runner) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		_, err := r.Run(ctx, Config{}, Command{Shell: "sleep 30 & wait", Stdout: &out, Stderr: &out})
		done <- err
	}()
	var sleeper int
	require.Eventually(t, func() bool {
		sleeper = findProcess(t, r, "sleep")
		return sleeper > 0
	}, 10*time.Second, 20*time.Millisecond, "the sandbox's sleep never showed up: %s", &out)
	prog, err := readFilter(sleeper)
	require.NoError(t, err)
	cancel()
	<-done
	return prog
}

// findProcess returns the host pid of the process named comm in one of r's
// container cgroups (pids hierarchy or unified), or 0.
func findProcess(t *testing.T, r *Runner, comm string) int {
	dirs, err := cgroupDirs("/" + r.CgroupPrefix)
	require.NoError(t, err)
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			name, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(name)) == comm {
				pid, _ := strconv.Atoi(f)
				return pid
			}
		}
	}
	return 0
}

// A program the trampoline cannot run is reported as libcontainer's init
// reported it: the same errors, statuses and wording.
func TestTrampolineExecFailures(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data"), []byte("x"), 0o644))
	cases := []struct {
		args   []string
		status int
		err    error
	}{
		{[]string{"no-such-program-xyz"}, 127, ErrNotFound},
		{[]string{"/no/such/file"}, 127, ErrNotFound},
		{[]string{filepath.Join(ws, "data")}, 126, ErrNotExecutable},
		{[]string{ws}, 126, ErrNotExecutable},
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello"), []byte("#!/bin/sh\necho hello\n"), 0o755))
	for _, viaLibcontainer := range []bool{false, true} {
		r.libcontainerSeccomp = viaLibcontainer
		for _, c := range cases {
			res, err := r.Run(t.Context(), Config{Workspace: ws}, Command{Args: c.args})
			require.ErrorIs(t, err, c.err, "%v (via libcontainer: %v)", c.args, viaLibcontainer)
			require.NotNil(t, res)
			assert.Equal(t, c.status, res.ExitCode, c.args)
			assert.Contains(t, err.Error(), `exec: "`+c.args[0]+`"`)
		}
		// A program found only through a relative $PATH entry is refused
		// (Go's exec.ErrDot) either way.
		dot := Config{Workspace: ws, Cwd: ws, Env: []string{"PATH=:/usr/bin:/bin"}}
		res, err := r.Run(t.Context(), dot, Command{Args: []string{"hello"}})
		require.ErrorContains(t, err, `exec: "hello": cannot run executable found relative to current directory`, "via libcontainer: %v", viaLibcontainer)
		assert.Nil(t, res)
	}
}
