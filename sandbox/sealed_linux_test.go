package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/runc/libcontainer/exeseal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sealedTestEnv makes the test binary call RunSealed and report on
// stdout: whether it runs from a sealed copy, the binary a session's
// supervisor is bound from, whether sealedEnv is gone from its
// environment, and its arguments. With sealedSessionEnv ("STATE_ROOT:
// PREFIX") it then runs one command in a session and in a pooled sandbox
// and prints their output.
const (
	sealedTestEnv    = "TETHER_SANDBOX_TEST_SEALED"
	sealedSessionEnv = "TETHER_SANDBOX_TEST_SEALED_SESSION"
)

func sealedMain() int {
	if err := RunSealed(); err != nil {
		fmt.Println("RunSealed:", err)
		return 1
	}
	exe, ok := hostExecutable()
	_, envLeft := os.LookupEnv(sealedEnv)
	fmt.Printf("cloned=%t host=%t:%s env=%t args=%q\n", exeseal.IsSelfExeCloned(), ok, exe, envLeft, os.Args[1:])
	spec := os.Getenv(sealedSessionEnv)
	if spec == "" {
		return 0
	}
	root, prefix, _ := strings.Cut(spec, ":")
	ctx := context.Background()
	m := &Sessions{StateRoot: root, CgroupPrefix: prefix}
	var out bytes.Buffer
	res, err := m.Run(ctx, "default", "sealed", testSpec(), Command{Shell: "echo session", Stdout: &out})
	if err == nil && res.ExitCode == 0 {
		ps := &Pools{StateRoot: root, CgroupPrefix: prefix}
		res, err = ps.runWhenReady(ctx, PoolSpec{Profile: "pooled", Size: 1, Spec: testSpec()}, Command{Shell: "echo pooled", Stdout: &out})
		if cerr := ps.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil || res.ExitCode != 0 {
		fmt.Printf("session: %v %v\n", res, err)
		return 1
	}
	fmt.Print(out.String())
	return 0
}

// runWhenReady waits (at most a minute) for p's pool to hold a sandbox,
// then runs cmd in it.
func (ps *Pools) runWhenReady(ctx context.Context, p PoolSpec, cmd Command) (*Result, error) {
	ps.Prepare(p)
	deadline := time.Now().Add(time.Minute)
	for ps.Ready(p.Profile) == 0 {
		if time.Now().After(deadline) {
			return nil, errors.New("the pool did not fill")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ps.Run(ctx, p, cmd, ExecOptions{})
}

// runSealedHelper runs the test binary as sealedMain with extra env.
func runSealedHelper(t *testing.T, env ...string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^$", "arg two")
	cmd.Env = append(append(os.Environ(), sealedTestEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "output: %s", out)
	return string(out)
}

// RunSealed re-executes the process from a sealed copy (so libcontainer
// makes none per sandbox), with its arguments, without its marker in the
// environment, and knowing the binary it came from, which sessions bind
// as their supervisor.
func TestRunSealed(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	assert.False(t, exeseal.IsSelfExeCloned(), "the test binary itself runs unsealed")
	out := runSealedHelper(t)
	assert.Equal(t, fmt.Sprintf("cloned=true host=true:%s env=false args=[\"-test.run=^$\" \"arg two\"]\n", self), out)
}

// A sealed process's sandboxes work as an unsealed one's: a session's and
// a pooled sandbox's supervisor start and run their command, and nothing
// is left behind.
func TestRunSealedSandboxes(t *testing.T) {
	requireSessionSandbox(t)
	requireSandbox(t)
	root := stateTempDir(t)
	prefix := fmt.Sprintf("%s-sealed%d", testPrefix, sessTestN.Add(1))
	out := runSealedHelper(t, sealedSessionEnv+"="+root+":"+prefix)
	assert.Contains(t, out, "cloned=true host=true:")
	assert.True(t, strings.HasSuffix(out, "session\npooled\n"), "output: %s", out)
	assertNothingLeft(t, root, prefix)
}
