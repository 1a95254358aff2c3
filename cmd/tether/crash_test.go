package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestCrashSuite SIGKILLs `tether run` (this test binary run as tether) at
// random points of its set-up, its command and its teardown, 100 times (20
// with -short), with commands that ignore the termination signals and
// leave background processes. One second after each kill (and the kills'
// spread, both stretched by the time scale) it checks from the host that
// nothing of the command is alive (no process with the run's marker in its
// command line, no process in the run's cgroups); after the
// last kill, that the next tether run leaves nothing of its predecessors
// (no container state, lock, root, mount or cgroup).
//
//	REQUIRE_SANDBOX=1 go test -tags seccomp -run TestCrashSuite -v ./cmd/tether/
func TestCrashSuite(t *testing.T) {
	testenv.RequireSandbox(t)
	kills := 100
	if testing.Short() {
		kills = 20
	}
	dir := t.TempDir()
	require.NoError(t, traversable(dir)) // the sandbox's root must reach the state root
	state := filepath.Join(dir, "state")
	prefix := fmt.Sprintf("tether-crash-%d", os.Getpid())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("state_dir: "+filepath.Join(dir, "db")+"\nprofiles:\n  default: {}\n"), 0o600))
	// testscript.Main runs this binary as tether when it is called so.
	self, err := os.Executable()
	require.NoError(t, err)
	tether := filepath.Join(dir, "tether")
	require.NoError(t, os.Symlink(self, tether))
	env := append(os.Environ(), "TETHER_STATE_ROOT="+state, "TETHER_CGROUP_PREFIX="+prefix,
		"TETHER_CONFIG="+filepath.Join(dir, "config.yaml"), "NO_COLOR=1")
	t.Cleanup(func() { removeCgroupTree(t, prefix) })

	// How long after its tether's SIGKILL a run's command may still be
	// alive: its keeper's teardown, stretched under TCG.
	reaped := testenv.Scaled(time.Second)
	base := 600000 + rand.IntN(300000)
	// Commands of three lengths, so that kills land in the set-up, the
	// command and the teardown; each ignores SIGTERM/SIGHUP/SIGINT and
	// leaves a new session and a nohup'd child behind.
	lengths := []string{"0.01", "0.3", "30", "0.01"}
	var mu sync.Mutex
	var survivors []string
	var phases = map[string]int{}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				marker := strconv.Itoa(base + i)
				script := fmt.Sprintf(`: > started.%[1]s; trap '' TERM HUP INT; setsid sleep 1%[1]s & nohup sleep 2%[1]s >/dev/null 2>&1 & sleep %[2]s; : > done.%[1]s`, marker, lengths[i%len(lengths)])
				cmd := exec.Command(tether, "run", "--yolo", "-c", script)
				cmd.Env, cmd.Dir = env, dir
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				require.NoError(t, cmd.Start())
				// A run reaches its command after 50-500 ms (more on a loaded
				// machine, ten times that under TCG): spread the kills over
				// that and beyond; every fourth run is killed just after its
				// command finished, in the teardown.
				delay := time.Duration(rand.Int64N(int64(testenv.Scaled(time.Second))))
				if i%4 == 3 {
					deadline := time.Now().Add(testenv.Scaled(20 * time.Second))
					for !fileExists(filepath.Join(dir, "done."+marker)) && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
					delay = time.Duration(rand.IntN(20)) * time.Millisecond
				}
				time.Sleep(delay)
				require.NoError(t, cmd.Process.Signal(unix.SIGKILL))
				killed := time.Now()
				ws, _ := cmd.Process.Wait()
				// Where the kill landed: before the command started (set-up,
				// approval), while it ran, or after it (teardown).
				phase := "set-up"
				switch {
				case ws != nil && ws.Exited():
					phase = "after exit"
				case fileExists(filepath.Join(dir, "done."+marker)):
					phase = "teardown"
				case fileExists(filepath.Join(dir, "started."+marker)):
					phase = "command"
				}
				time.Sleep(time.Until(killed.Add(reaped)))
				left := procsWith("sleep\x001"+marker, "sleep\x002"+marker)
				mu.Lock()
				phases[phase]++
				if len(left) > 0 {
					survivors = append(survivors, fmt.Sprintf("run %d (killed after %s): %v", i, delay, left))
					for _, p := range left {
						_ = unix.Kill(p, unix.SIGKILL) // ours: carries this run's marker
					}
				}
				mu.Unlock()
			}
		}()
	}
	// Runs until kills of them were killed (a run may finish first).
	for i := 0; i < 3*kills; i++ {
		mu.Lock()
		done := len(phases) > 0 && total(phases)-phases["after exit"] >= kills
		mu.Unlock()
		if done {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	assert.GreaterOrEqual(t, total(phases)-phases["after exit"], kills)
	t.Logf("%d runs, SIGKILLs by phase %v; survivors %s after their tether's SIGKILL: %d", total(phases), phases, reaped, len(survivors))
	assert.Positive(t, phases["set-up"], "some kills land in the set-up")
	assert.Positive(t, phases["command"], "some kills land in the command")
	assert.Empty(t, survivors, "commands alive %s after their tether was killed", reaped)
	assert.Empty(t, cgroupProcs(prefix), "processes in the runs' cgroups")

	// Leftovers before the next start (the keepers normally reaped all),
	// then after it: none.
	before := leftovers(state, prefix)
	t.Logf("leftovers before the next start: %d %v", len(before), before)
	next := exec.Command(tether, "run", "--", "true")
	next.Env, next.Dir = env, dir
	outb, err := next.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	assert.Empty(t, leftovers(state, prefix), "the next tether run left its predecessors' leftovers")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// procsWith lists host pids whose command line contains any marker.
func procsWith(markers ...string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// cgroupDirs lists the directories at or under prefix in every cgroup
// hierarchy (the hybrid unified tree included).
func cgroupDirs(prefix string) []string {
	var dirs []string
	tops, _ := filepath.Glob("/sys/fs/cgroup/*/" + prefix)
	if fi, err := os.Stat("/sys/fs/cgroup/" + prefix); err == nil && fi.IsDir() {
		tops = append(tops, "/sys/fs/cgroup/"+prefix)
	}
	for _, top := range tops {
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	return dirs
}

// cgroupProcs lists the processes in the cgroups under prefix.
func cgroupProcs(prefix string) []string {
	var procs []string
	for _, d := range cgroupDirs(prefix) {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		procs = append(procs, strings.Fields(string(b))...)
	}
	return procs
}

// leftovers lists what runs left: container state, locks, roots, mounts
// under the state root and cgroups under prefix (the shared caches, kept
// between runs by design, are not leftovers).
func leftovers(state, prefix string) []string {
	var out []string
	for _, sub := range []string{"containers", "locks", "roots"} {
		entries, _ := os.ReadDir(filepath.Join(state, sub))
		for _, e := range entries {
			out = append(out, sub+"/"+e.Name())
		}
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], state+"/") {
			out = append(out, "mount "+f[4])
		}
	}
	return append(out, cgroupDirs(prefix)...)
}

// removeCgroupTree removes prefix in every hierarchy, deepest first.
func removeCgroupTree(t *testing.T, prefix string) {
	dirs := cgroupDirs(prefix)
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = unix.Rmdir(dirs[i])
	}
}
