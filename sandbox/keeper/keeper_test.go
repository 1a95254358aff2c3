package keeper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reapOutEnv names the file where this test binary, executed by a keeper
// as its reaper, writes the pairs it was given.
const reapOutEnv = "TETHER_KEEPER_TEST_REAP_OUT"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ReapArg {
		_ = os.WriteFile(os.Getenv(reapOutEnv), []byte(strings.Join(os.Args[2:], "\n")), 0o600)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runKeeper starts this binary as a keeper with the given lines in its
// pipe, closes the pipe (the owner's end: as if the owner died) and
// returns the pairs the keeper's reaper got, or nil when it executed none.
// The keeper's owner is pid 0, no process: it does not wait for one.
func runKeeper(t *testing.T, lines string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "reaped")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command("/proc/self/exe", Arg, "0")
	cmd.Stdin = r
	cmd.Env = append(os.Environ(), reapOutEnv+"="+out)
	require.NoError(t, cmd.Start())
	r.Close()
	_, err = w.WriteString(lines)
	require.NoError(t, err)
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the keeper did not end when its pipe closed")
	}
	b, err := os.ReadFile(out)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(string(b), "\n")
}

// TestKeeperReapsOutstanding: at the owner's end the keeper reaps exactly
// the (state root, prefix) pairs with sandboxes announced and not released,
// and nothing at all when every sandbox was released.
func TestKeeperReapsOutstanding(t *testing.T) {
	for _, tc := range []struct {
		name, lines string
		want        []string
	}{
		{"nothing announced", "", nil},
		{"all released", "+/s/a\tp\n+/s/a\tp\n-/s/a\tp\n-/s/a\tp\n", nil},
		{"one outstanding", "+/s/a\tp\n+/s/a\tp\n-/s/a\tp\n", []string{"/s/a", "p"}},
		{"two roots", "+/s/a\tp\n+/s/b\tq/r\n-/s/a\tp\n+/s/a\tp\n", []string{"/s/a", "p", "/s/b", "q/r"}},
		{"malformed lines ignored", "nonsense\n+notab\n-/s/x\tp\n+/s/a\tp\n", []string{"/s/a", "p"}},
		{"over-long line skipped", "+" + strings.Repeat("x", MaxLine+10) + "\tp\n+/s/a\tp\n", []string{"/s/a", "p"}},
		{"unterminated last line", "+/s/a\tp\n+/s/b\tp", []string{"/s/a", "p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runKeeper(t, tc.lines)
			if tc.want == nil {
				assert.Nil(t, got)
				return
			}
			assert.ElementsMatch(t, pairs(tc.want), pairs(got))
		})
	}
}

// pairs joins a reaper's argv into "ROOT PREFIX" pairs.
func pairs(args []string) []string {
	var out []string
	for i := 0; i+1 < len(args); i += 2 {
		out = append(out, args[i]+" "+args[i+1])
	}
	return out
}

// TestKeeperIgnoresTerminationSignals: a signal meant for the owner's group
// does not end the watch.
func TestKeeperIgnoresTerminationSignals(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	cmd := exec.Command("/proc/self/exe", Arg, strconv.Itoa(os.Getpid()))
	cmd.Stdin = r
	require.NoError(t, cmd.Start())
	r.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Wait until the constructor has set its dispositions (it reads the
	// pipe next), then signal it.
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
				// All three ignored (bits SIGHUP 1, SIGINT 2, SIGTERM
				// 15), not only the first the constructor set.
				mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				const want = 1<<(syscall.SIGHUP-1) | 1<<(syscall.SIGINT-1) | 1<<(syscall.SIGTERM-1)
				return err == nil && mask&want == want
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		require.NoError(t, cmd.Process.Signal(sig))
	}
	time.Sleep(100 * time.Millisecond)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	require.NoError(t, err)
	assert.NotContains(t, string(b[strings.LastIndexByte(string(b), ')'):]), ") Z", "the keeper survived SIGINT, SIGTERM and SIGHUP")
}

// TestKeeperWaitsForItsOwner: a closed pipe while the owner still lives
// (its locks still held) is no reason to reap yet: the keeper waits until
// the owner's exit is complete.
func TestKeeperWaitsForItsOwner(t *testing.T) {
	out := filepath.Join(t.TempDir(), "reaped")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command("/proc/self/exe", Arg, strconv.Itoa(os.Getpid()))
	cmd.Stdin = r
	cmd.Env = append(os.Environ(), reapOutEnv+"="+out)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r.Close()
	_, err = w.WriteString("+/s/a\tp\n")
	require.NoError(t, err)
	w.Close()
	time.Sleep(300 * time.Millisecond)
	assert.NoFileExists(t, out, "reaped while the owner lives")
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/wchan")
	require.NoError(t, err)
	assert.Contains(t, string(b), "poll", "the keeper waits on its owner's pidfd")
}
