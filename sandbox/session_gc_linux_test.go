package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSessionHelperOwner is not a test: run by TestSessionGCAfterOwnerCrash
// in a child process, it opens a session with a background process, prints
// the sandbox's host pids and waits to be killed.
func TestSessionHelperOwner(t *testing.T) {
	root, prefix := os.Getenv("TETHER_TEST_SESSION_OWNER_ROOT"), os.Getenv("TETHER_TEST_SESSION_OWNER_PREFIX")
	if root == "" {
		t.Skip("helper process for TestSessionGCAfterOwnerCrash")
	}
	keeperOff = true // the test reaps by hand what this crash leaves
	m := &Sessions{StateRoot: root, CgroupPrefix: prefix}
	s, err := m.Open(t.Context(), "default", "crashy", testSpec())
	require.NoError(t, err)
	_, err = s.Start(Command{Args: []string{"sleep", "1000"}})
	require.NoError(t, err)
	out, _ := sh(t, s, "echo > /tmp/x; pgrep -x sleep >/dev/null && echo up")
	require.Equal(t, "up\n", out)
	pids, err := s.HostPIDs()
	require.NoError(t, err)
	fmt.Printf("PIDS %s\n", strings.Trim(fmt.Sprint(pids), "[]"))
	time.Sleep(time.Hour)
}

func TestSessionGCAfterOwnerCrash(t *testing.T) {
	requireSessionSandbox(t)
	root := stateTempDir(t)
	prefix := fmt.Sprintf("tether-test-%d-crash", os.Getpid())
	cmd := exec.Command(os.Args[0], "-test.run=^TestSessionHelperOwner$", "-test.v")
	cmd.Env = append(os.Environ(), "TETHER_TEST_SESSION_OWNER_ROOT="+root, "TETHER_TEST_SESSION_OWNER_PREFIX="+prefix)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_, _ = GC(GCOptions{StateRoot: root, CgroupPrefix: prefix})
	})
	var pids []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PIDS "); ok {
			for _, f := range strings.Fields(rest) {
				p, err := strconv.Atoi(f)
				require.NoError(t, err)
				pids = append(pids, p)
			}
			break
		}
	}
	require.GreaterOrEqual(t, len(pids), 2, "the helper reported the sandbox's pids")

	// While the owner lives, the sandbox is listed as alive and GC keeps it.
	list, err := ListSessionSandboxes(GCOptions{StateRoot: root, CgroupPrefix: prefix})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].OwnerAlive)
	assert.Equal(t, cmd.Process.Pid, list[0].OwnerPID)
	assert.Equal(t, "crashy", list[0].Session)
	rep, err := GC(GCOptions{StateRoot: root, CgroupPrefix: prefix})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Live)
	assert.Empty(t, rep.Containers)

	require.NoError(t, cmd.Process.Signal(unix.SIGKILL))
	_ = cmd.Wait()
	// The supervisor dies with its owner (parent-death signal, channel EOF).
	waitGone(t, pids)
	list, err = ListSessionSandboxes(GCOptions{StateRoot: root, CgroupPrefix: prefix})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.False(t, list[0].OwnerAlive)

	rep, err = GC(GCOptions{StateRoot: root, CgroupPrefix: prefix})
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Containers, 1)
	assertNothingLeft(t, root, prefix)
}

func TestKillSessionSandboxLiveOwner(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "victim", testSpec())
	require.NoError(t, err)
	_, err = s.Start(Command{Args: []string{"sleep", "1000"}})
	require.NoError(t, err)
	pids, err := s.HostPIDs()
	require.NoError(t, err)
	opts := GCOptions{StateRoot: m.StateRoot, CgroupPrefix: m.CgroupPrefix}

	list, err := ListSessionSandboxes(opts)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, SandboxInfo{ContainerID: s.Info().ContainerID, Profile: "default", Session: "victim", OwnerPID: os.Getpid(), OwnerAlive: true, Status: "running"}, list[0])

	_, err = KillSessionSandbox(opts, "no-such-id")
	assert.ErrorIs(t, err, ErrNoProcess)
	_, err = KillSessionSandbox(opts, list[0].ContainerID)
	require.NoError(t, err)
	// The owner notices its supervisor died and tears the session down.
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("session not torn down after its sandbox was killed")
	}
	waitGone(t, pids)
	_, err = s.Run(t.Context(), Command{Args: []string{"true"}})
	assert.ErrorIs(t, err, ErrSessionBroken)
	_, ok := m.Lookup("default", "victim")
	assert.False(t, ok)
}
