package seccompexec

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	// Linked for TestRunsBeforeNsexec: its constructor runs in every
	// process of this binary, as in tether.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The trampoline is this test binary: it links the constructor. These
// tests start it as the sandbox does, with setpriv setting no_new_privs
// (as libcontainer's init does), and need no root.

// filter assembles a program that fails syscall nr with EPERM and allows
// every other.
func filter(nr uint32) []unix.SockFilter {
	return []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
}

// stdEnv is the program environment most tests give.
var stdEnv = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"}

// encode is the program descriptor's content: the flags, the instruction
// count, the instructions, then the program's environment.
func encode(flags uint32, insns []unix.SockFilter, env []string) []byte {
	b := make([]byte, Header)
	binary.NativeEndian.PutUint32(b, flags)
	binary.NativeEndian.PutUint32(b[4:], uint32(len(insns)))
	for _, in := range insns {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	for _, kv := range env {
		b = append(append(b, kv...), 0)
	}
	return b
}

type outcome struct {
	status int
	stdout string
	report string // what the error pipe got
}

// trampoline runs the trampoline with descriptor data prog and argv, with
// no_new_privs when nnp, itself in environment env (as libcontainer starts
// it: with HOME only).
func trampoline(t *testing.T, prog []byte, nnp bool, env []string, argv ...string) outcome {
	t.Helper()
	return trampolineIn(t, "", prog, nnp, env, argv...)
}

// trampolineIn is trampoline in working directory dir ("" for this one's).
func trampolineIn(t *testing.T, dir string, prog []byte, nnp bool, env []string, argv ...string) outcome {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	exe, err := os.Open("/proc/self/exe")
	require.NoError(t, err)
	defer exe.Close()
	progFile, err := os.CreateTemp(t.TempDir(), "prog")
	require.NoError(t, err)
	defer progFile.Close()
	_, err = progFile.Write(prog)
	require.NoError(t, err)
	errR, errW, err := os.Pipe()
	require.NoError(t, err)
	defer errR.Close()

	args := Argv(argv)
	if nnp {
		args = append([]string{setpriv, "--no-new-privs"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.ExtraFiles = []*os.File{exe, progFile, errW}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	runErr := cmd.Run()
	errW.Close()
	report := make([]byte, 8192)
	n, _ := errR.Read(report)
	status := 0
	if ee, ok := runErr.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else {
		require.NoError(t, runErr)
	}
	return outcome{status: status, stdout: stdout.String(), report: string(report[:n])}
}

func TestLoadsTheFilterAndExecutes(t *testing.T) {
	prog := encode(0, filter(unix.SYS_MKDIR), stdEnv)
	dir := filepath.Join(t.TempDir(), "made")
	o := trampoline(t, prog, true, nil, "sh", "-c", "grep Seccomp: /proc/self/status; mkdir "+dir+" || echo refused")
	assert.Zero(t, o.status, o.report)
	assert.Empty(t, o.report, "a successful exec closes the error pipe unwritten")
	assert.Contains(t, o.stdout, "Seccomp:\t2")
	assert.Contains(t, o.stdout, "refused", "the filter holds for the program")
	assert.NoDirExists(t, dir)

	// The trampoline's descriptors are gone: ls gets the lowest free one,
	// 3, for its directory, and sees neither 4 nor 5.
	o = trampoline(t, prog, true, nil, "ls", "/proc/self/fd")
	assert.Zero(t, o.status, o.report)
	fds := strings.Fields(o.stdout)
	assert.Subset(t, fds, []string{"0", "1", "2", "3"})
	assert.NotContains(t, fds, "4")
	assert.NotContains(t, fds, "5")
}

func TestLooksUpThePathAsLibcontainerDoes(t *testing.T) {
	dir := t.TempDir()
	prog := encode(0, filter(unix.SYS_MKDIR), []string{"PATH=/nonexistent:" + dir + ":/usr/bin:/bin"})
	script := filepath.Join(dir, "hello")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho hello from $0\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notexec"), []byte("x"), 0o644))
	env := []string{"PATH=/somewhere/else"} // the trampoline's own: not used for the lookup

	o := trampoline(t, prog, true, env, "hello")
	assert.Equal(t, 0, o.status, o.report)
	assert.Equal(t, "hello from "+script+"\n", o.stdout)

	cases := []struct {
		argv   []string
		status int
		report string
	}{
		{[]string{"no-such-program"}, 127, `exec: "no-such-program": executable file not found in $PATH`},
		{[]string{"notexec"}, 127, `exec: "notexec": executable file not found in $PATH`},
		{[]string{"/no/such/file"}, 127, `exec: "/no/such/file": stat /no/such/file: no such file or directory`},
		{[]string{filepath.Join(dir, "notexec")}, 126, `exec: "` + filepath.Join(dir, "notexec") + `": permission denied`},
		{[]string{dir}, 126, `exec: "` + dir + `": is a directory`},
	}
	// A relative $PATH entry finds the program but is refused, as Go's
	// exec.LookPath refuses it (exec.ErrDot).
	relative := encode(0, filter(unix.SYS_MKDIR), []string{"PATH=/nonexistent::/usr/bin:/bin"})
	o = trampolineIn(t, dir, relative, true, env, "hello")
	assert.Equal(t, 126, o.status)
	assert.Equal(t, `exec: "hello": cannot run executable found relative to current directory`, o.report)
	assert.Empty(t, o.stdout)

	for _, c := range cases {
		o := trampoline(t, prog, true, env, c.argv...)
		assert.Equal(t, c.status, o.status, c.argv)
		assert.Equal(t, c.report, o.report, c.argv)
		assert.Empty(t, o.stdout)
	}
}

func TestFailsClosed(t *testing.T) {
	good := encode(0, filter(unix.SYS_MKDIR), stdEnv)
	cases := []struct {
		name   string
		prog   []byte
		nnp    bool
		report string
	}{
		{"without no_new_privs", good, false, "loading the seccomp filter: no_new_privs is not set"},
		// An empty program is the gate-only form: without the gate socket it
		// is refused.
		{"empty program", encode(0, nil, stdEnv), true, "neither a filter nor the exec gate was given"},
		{"torn program", encode(0, filter(unix.SYS_MKDIR), nil)[:Header+20], true, "is not a program"},
		{"short header", []byte{0, 0, 0}, true, "is not a program"},
		{"environment not terminated", encode(0, filter(unix.SYS_MKDIR), stdEnv)[:len(good)-1], true, "not NUL-terminated"},
		{"invalid program", encode(0, []unix.SockFilter{{Code: 0xffff}}, stdEnv), true, "loading the seccomp filter: seccomp(SECCOMP_SET_MODE_FILTER, 0): invalid argument"},
		{"unknown flag", encode(1<<30, filter(unix.SYS_MKDIR), stdEnv), true, "loading the seccomp filter: seccomp(SECCOMP_SET_MODE_FILTER, 0x40000000): invalid argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := trampoline(t, c.prog, c.nnp, nil, "echo", "RAN")
			assert.Equal(t, 126, o.status)
			assert.Contains(t, o.report, c.report)
			assert.NotContains(t, o.stdout, "RAN", "nothing runs without the filter")
		})
	}
}

// The program gets exactly the environment of the descriptor, plus the
// HOME libcontainer gave the trampoline when it has none; the trampoline's
// own environment (whatever libcontainer set) does not leak into it.
func TestProgramEnvironment(t *testing.T) {
	own := []string{"HOME=/root", "TRAMPOLINE_ONLY=1"}
	o := trampoline(t, encode(0, filter(unix.SYS_MKDIR), []string{"PATH=/usr/bin:/bin", "A=1", "EMPTY="}), true, own, "env")
	assert.Zero(t, o.status, o.report)
	assert.Equal(t, "PATH=/usr/bin:/bin\nA=1\nEMPTY=\nHOME=/root\n", o.stdout)

	o = trampoline(t, encode(0, filter(unix.SYS_MKDIR), []string{"PATH=/usr/bin:/bin", "HOME=/home/x"}), true, own, "env")
	assert.Zero(t, o.status, o.report)
	assert.Equal(t, "PATH=/usr/bin:/bin\nHOME=/home/x\n", o.stdout)
}

// Even started with libcontainer's variables, the trampoline never lets
// nsexec's constructor run (it would unshare namespaces before the filter
// is loaded): its own constructor runs first and never returns.
func TestRunsBeforeNsexec(t *testing.T) {
	prog := encode(0, filter(unix.SYS_MKDIR), stdEnv)
	o := trampoline(t, prog, true, []string{"_LIBCONTAINER_INITPIPE=0", "PATH=/usr/bin:/bin"}, "echo", "ran")
	assert.Equal(t, 0, o.status, o.report)
	assert.Equal(t, "ran\n", o.stdout)
}

func TestArgv(t *testing.T) {
	assert.Equal(t, []string{"/proc/self/fd/3", Arg, "ls", "-l"}, Argv([]string{"ls", "-l"}))
}

// Observe is the trampoline's own flag: it never reaches seccomp(2), which
// refuses flags it does not know.
func TestObserveFlagIsNotASeccompFlag(t *testing.T) {
	prog := encode(Observe, filter(unix.SYS_MKDIR), stdEnv)
	dir := filepath.Join(t.TempDir(), "made")
	o := trampoline(t, prog, true, nil, "sh", "-c", "mkdir "+dir+" || echo refused")
	assert.Zero(t, o.status, o.report)
	assert.Empty(t, o.report)
	assert.Contains(t, o.stdout, "refused", "the filter holds")
}
