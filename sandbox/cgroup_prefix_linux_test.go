package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// sharedPrefix returns a cgroup prefix of its own for a test whose
// sandboxes share it across state roots, and checks at cleanup that
// nothing of it is left in any hierarchy, nor its lock file.
func sharedPrefix(t *testing.T) string {
	t.Helper()
	prefix := fmt.Sprintf("tether-test-%d-shared%d", os.Getpid(), testSeq.Add(1))
	t.Cleanup(func() { assertPrefixGone(t, prefix) })
	return prefix
}

// assertPrefixGone checks from the host that no cgroup of prefix is left
// in any hierarchy (the hybrid unified tree included) and that its lock
// file went with it.
func assertPrefixGone(t *testing.T, prefix string) {
	t.Helper()
	dirs, err := cgroupDirs("/" + prefix)
	require.NoError(t, err)
	assert.Empty(t, dirs, "cgroups left behind")
	lock := filepath.Join(cgroupLockDir, prefix+".lock")
	assert.NoFileExists(t, lock, "the prefix's lock file is left behind")
}

// forkToTheLimit is a sandboxed command that starts as many background
// processes as the kernel lets it (up to 60; the subshell that starts
// them dies at the first fork refused) and prints how many processes it
// then sees in its pid namespace, counted without forking (the glob is
// the shell's own).
//
// Each process sleeps 3 s stretched by the time scale: the count sees only
// those still alive, and under TCG, with 18 sandboxes forking on one vCPU,
// the first sleeps had ended before the loop did (30 seen of a limit of
// 64), which looked like a limit that bit too early.
func forkToTheLimit() string {
	return fmt.Sprintf(`(for i in $(seq 60); do sleep %d & done) 2>/dev/null; set -- /proc/[0-9]*; echo "procs $#"`,
		int(math.Ceil(testenv.Scaled(3*time.Second).Seconds())))
}

// procsSeen parses forkToTheLimit's output.
func procsSeen(t *testing.T, out string) int {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "procs "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err, "output: %s", out)
			return n
		}
	}
	t.Fatalf("no process count in the output: %q", out)
	return 0
}

// slowGuestTimeout bounds a sandbox of these tests: not an assertion of
// speed, a way out of a hang, long enough for a TCG guest on a loaded
// host (where one `true` has taken over a minute).
const slowGuestTimeout = 10 * time.Minute

// runSlow runs script in a sandbox of r, failing the test on error.
func runSlow(t *testing.T, r *Runner, cfg Config, script string) string {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), slowGuestTimeout)
	defer cancel()
	_, err := r.Run(ctx, cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err, "output: %s", out.String())
	return out.String()
}

// TestLastSandboxOutRemovesEveryProfile: a sandbox that ends while
// another of a different profile lives under the same prefix (same state
// root or another) cannot remove its idle profile, as the other holds the
// prefix; the other, ending last (a one-shot or a session), removes that
// profile, its own and the prefix, in every hierarchy.
func TestLastSandboxOutRemovesEveryProfile(t *testing.T) {
	requireSessionSandbox(t)
	for _, tc := range []struct {
		name      string
		sameRoot  bool
		lastIsRun bool
	}{
		{"one-shot last, same state root", true, true},
		{"one-shot last, other state root", false, true},
		{"session last, same state root", true, false},
		{"session last, other state root", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := sharedPrefix(t)
			first, last := stateTempDir(t), stateTempDir(t)
			if tc.sameRoot {
				last = first
			}
			runner := func(state, profile string) *Runner {
				return &Runner{StateRoot: state, CgroupPrefix: prefix, Profile: profile,
					ProfileLimits: Limits{Pids: 64}, Grace: 300 * time.Millisecond}
			}
			cfg := Config{Seccomp: SeccompOptional}
			// The last one out is alive before the first one starts. It
			// ends once (finish), at the latest when the test does.
			var finish func() error
			if tc.lastIsRun {
				stdin, release := io.Pipe()
				done := make(chan error, 1)
				go func() {
					_, err := runner(last, "last").Run(context.Background(), cfg, Command{Shell: "read x", Stdin: stdin})
					done <- err
				}()
				finish = sync.OnceValue(func() error {
					release.Close()
					return <-done
				})
				t.Cleanup(func() { _ = finish() })
				require.Eventually(t, func() bool { return dirExists(cgroupPath(t, prefix+"/last")) }, slowGuestTimeout, 10*time.Millisecond)
			} else {
				m := &Sessions{StateRoot: last, CgroupPrefix: prefix, Grace: 300 * time.Millisecond}
				spec := testSpec()
				spec.ProfileLimits = Limits{Pids: 1024}
				s, err := m.Open(context.Background(), "last", "a", spec)
				require.NoError(t, err)
				finish = sync.OnceValue(s.Close)
				t.Cleanup(func() { _ = finish() })
			}

			runSlow(t, runner(first, "first"), cfg, "true")
			assert.True(t, dirExists(cgroupPath(t, prefix+"/last")), "the live sandbox's profile stays")

			require.NoError(t, finish())
			assertPrefixGone(t, prefix)
			assertNothingLeft(t, first, prefix)
			assertNothingLeft(t, last, prefix)
		})
	}
}

// cgroupPath is rel's directory in the hierarchy that holds the pids
// controller (v1) or in the unified one (v2).
func cgroupPath(t *testing.T, rel string) string {
	return controllerPath(t, "pids", rel)
}

// controllerPath is rel's directory in the v1 hierarchy of controller, or
// in the v2 tree when it has that controller.
func controllerPath(t *testing.T, controller, rel string) string {
	t.Helper()
	mounts, err := cgroupMounts()
	require.NoError(t, err)
	for _, m := range mounts {
		ctrl, _ := os.ReadFile(filepath.Join(m, "cgroup.controllers"))
		if filepath.Base(m) == controller || slices.Contains(strings.Fields(string(ctrl)), controller) {
			return filepath.Join(m, rel)
		}
	}
	t.Fatalf("no hierarchy with the %s controller", controller)
	return ""
}

// TestProfileCgroupNotRemovedWhileFilled: a sandbox of another state root
// that ends while one under the same prefix stands between creating its
// profile cgroup (with the profile's pids limit) and placing its container
// in it removes nothing: the paused sandbox's command, inside it, still
// meets its profile's limit. (Had the profile cgroup been removed, the
// container would be placed in one made anew without the limit.)
func TestProfileCgroupNotRemovedWhileFilled(t *testing.T) {
	requireSandbox(t)
	prefix := sharedPrefix(t)
	paused, resume := make(chan struct{}), make(chan struct{})
	hook := func(profileCgroup string) {
		if strings.HasSuffix(profileCgroup, "/"+prefix+"/filled") {
			close(paused)
			<-resume
		}
	}
	testHookProfileCgroup.Store(&hook)
	const limit = 16
	filled := &Runner{StateRoot: stateTempDir(t), CgroupPrefix: prefix, Profile: "filled",
		ProfileLimits: Limits{Pids: limit}, Grace: 300 * time.Millisecond}
	other := &Runner{StateRoot: stateTempDir(t), CgroupPrefix: prefix, Profile: "other",
		ProfileLimits: Limits{Pids: limit}, Grace: 300 * time.Millisecond}
	cfg := Config{Seccomp: SeccompOptional}

	var (
		out   bytes.Buffer
		err   error
		ended = make(chan struct{})
	)
	go func() {
		defer close(ended)
		ctx, cancel := context.WithTimeout(context.Background(), slowGuestTimeout)
		defer cancel()
		_, err = filled.Run(ctx, cfg, Command{Shell: forkToTheLimit(), Stdout: &out, Stderr: &out})
	}()
	resumeOnce := sync.OnceFunc(func() { close(resume) })
	t.Cleanup(func() {
		// A failed test leaves no sandbox paused, nor running.
		testHookProfileCgroup.Store(nil)
		resumeOnce()
		<-ended
	})
	select {
	case <-paused:
	case <-ended:
		t.Fatalf("the sandbox ended before placing its container: %v %s", err, out.String())
	}
	runSlow(t, other, cfg, "true")
	assert.True(t, dirExists(cgroupPath(t, prefix+"/filled")), "the profile cgroup being filled stays")
	resumeOnce()
	<-ended
	require.NoError(t, err, out.String())
	assert.LessOrEqual(t, procsSeen(t, out.String()), limit, "the profile's pids limit holds")
	assertPrefixGone(t, prefix)
}

// TestConcurrentSandboxesSharePrefix runs one-shot sandboxes and sessions
// of several tethers' state roots under one cgroup prefix at once, each in
// a profile of its own whose pids limit its command attacks. Whoever ends
// last removes the idle profiles and the prefix, and no ending sandbox
// removes a profile cgroup between another's creating it (with its limit)
// and placing its container there: each command, inside its sandbox, still
// meets its profile's limit. From the host afterwards: nothing is left of
// the prefix in any hierarchy, nor of its lock.
func TestConcurrentSandboxesSharePrefix(t *testing.T) {
	requireSessionSandbox(t)
	prefix := sharedPrefix(t)
	const roots, oneShots, sessions, profilePids = 3, 4, 2, 16

	type outcome struct {
		what  string
		out   string
		err   error
		limit int
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		outs []outcome
	)
	record := func(o outcome) {
		mu.Lock()
		defer mu.Unlock()
		outs = append(outs, o)
	}
	for root := range roots {
		state := stateTempDir(t)
		m := &Sessions{StateRoot: state, CgroupPrefix: prefix, Grace: 300 * time.Millisecond}
		t.Cleanup(func() { assertNothingLeft(t, state, prefix) })
		t.Cleanup(func() { assert.NoError(t, m.Close()) })
		for i := range oneShots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Staggered, so that starts and ends of the roots interleave.
				time.Sleep(time.Duration(i*root) * 40 * time.Millisecond)
				r := &Runner{StateRoot: state, CgroupPrefix: prefix, Profile: fmt.Sprintf("r%d-run%d", root, i),
					ProfileLimits: Limits{Pids: profilePids}, Grace: 300 * time.Millisecond}
				var out bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), slowGuestTimeout)
				defer cancel()
				_, err := r.Run(ctx, Config{Seccomp: SeccompOptional}, Command{Shell: forkToTheLimit(), Stdout: &out, Stderr: &out})
				record(outcome{what: r.Profile, out: out.String(), err: err, limit: profilePids})
			}()
		}
		for i := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i+root) * 30 * time.Millisecond)
				spec := testSpec()
				spec.Config.Limits.Pids = 0 // only the profile's limit
				spec.Config.Limits.Timeout = slowGuestTimeout
				spec.ProfileLimits = Limits{Pids: 4 * profilePids}
				profile := fmt.Sprintf("r%d-sess%d", root, i)
				s, err := m.Open(context.Background(), profile, "s", spec)
				if err != nil {
					record(outcome{what: profile, err: err})
					return
				}
				var out bytes.Buffer
				_, err = s.Run(context.Background(), Command{Shell: forkToTheLimit(), Stdout: &out, Stderr: &out})
				if cerr := s.Close(); err == nil {
					err = cerr
				}
				record(outcome{what: profile, out: out.String(), err: err, limit: 4 * profilePids})
			}()
		}
	}
	wg.Wait()
	require.Len(t, outs, roots*(oneShots+sessions))
	for _, o := range outs {
		t.Logf("%s: %q %v", o.what, o.out, o.err)
		if !assert.NoError(t, o.err, "%s: %s", o.what, o.out) {
			continue
		}
		n := procsSeen(t, o.out)
		assert.LessOrEqual(t, n, o.limit, "%s: its profile's pids limit holds", o.what)
		assert.Greater(t, n, o.limit/2, "%s: the command did fork up to the limit", o.what)
	}
	// Every sandbox has ended: the last one out removed everything.
	assertPrefixGone(t, prefix)
}

// TestMemoryLimitBoundsSwap: a container's memory limit and its profile's
// bound memory and swap together, read back from the host's cgroup files
// while the command runs (v1: memory.memsw.limit_in_bytes equal to the
// limit; v2: memory.swap.max 0); where the kernel cannot bound swap the
// result says "swap" is not enforced. (No test swaps for real: that needs
// a swap device on a machine others share.)
func TestMemoryLimitBoundsSwap(t *testing.T) {
	r := newTestRunner(t)
	const mem, profileMem = 64 << 20, 128 << 20
	r.ProfileLimits = Limits{MemoryBytes: profileMem}
	stdin, release := io.Pipe()
	stdout, out := io.Pipe()
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := r.Run(t.Context(), Config{Seccomp: SeccompOptional, Limits: Limits{MemoryBytes: mem}},
			Command{Shell: "echo running; read x", Stdin: stdin, Stdout: out})
		out.Close()
		done <- result{res, err}
	}()
	// The limits are written before the command runs, not when its
	// cgroup appears.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "running\n", line)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	profile := controllerPath(t, "memory", r.CgroupPrefix+"/default")
	entries, err := os.ReadDir(profile)
	require.NoError(t, err)
	var container string
	for _, e := range entries {
		if e.IsDir() {
			container = filepath.Join(profile, e.Name())
		}
	}
	require.NotEmpty(t, container, "the container's cgroup under %s", profile)
	// Read while it runs; the host's files go with the container.
	read := func(dir, file string) string {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return "absent"
		}
		return strings.TrimSpace(string(b))
	}
	v1 := cgroups.Mode() != cgroups.Unified
	memsw, swapMax := read(container, "memory.memsw.limit_in_bytes"), read(container, "memory.swap.max")
	profileMemsw, profileSwapMax := read(profile, "memory.memsw.limit_in_bytes"), read(profile, "memory.swap.max")
	release.Close()
	res := <-done
	require.NoError(t, res.err)
	t.Logf("container memsw %s swap.max %s; profile memsw %s swap.max %s; not enforced %v", memsw, swapMax, profileMemsw, profileSwapMax, res.res.NotEnforced)
	if !swapLimitable() {
		assert.Equal(t, swapUnbounded(), slices.Contains(res.res.NotEnforced, "swap"))
		return
	}
	assert.NotContains(t, res.res.NotEnforced, "swap")
	if v1 {
		assert.Equal(t, strconv.Itoa(mem), memsw, "the container's memory+swap limit")
		assert.Equal(t, strconv.Itoa(profileMem), profileMemsw, "the profile's memory+swap limit")
	} else {
		assert.Equal(t, "0", swapMax, "the container's swap limit")
		assert.Equal(t, "0", profileSwapMax, "the profile's swap limit")
	}
}

// TestCgroupLockDirMustBeRoots: a lock directory others may write, or a
// symlink in its place, is refused (the check prefixLock makes before
// trusting the locks), never used.
func TestCgroupLockDirMustBeRoots(t *testing.T) {
	requireSandbox(t)
	parent := t.TempDir()
	require.NoError(t, os.Chmod(parent, 0o711))
	open := filepath.Join(parent, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	_, err := checkedRootDir(open, "cgroup lock directory", ErrUnsafeCgroupLockDir)
	require.ErrorIs(t, err, ErrUnsafeCgroupLockDir)

	link := filepath.Join(parent, "link")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	_, err = checkedRootDir(link, "cgroup lock directory", ErrUnsafeCgroupLockDir)
	require.ErrorIs(t, err, ErrUnsafeCgroupLockDir)

	dir, err := checkedRootDir(filepath.Join(parent, "fresh"), "cgroup lock directory", ErrUnsafeCgroupLockDir)
	require.NoError(t, err, "a directory it makes itself is root's own")
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
