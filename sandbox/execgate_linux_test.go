package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refuseNames is an ExecGate that refuses every exec that runs, by any of
// its names, as one of names; it records what it saw.
type refuseNames struct {
	names map[string]bool
	mu    sync.Mutex
	seen  []ExecEvent
}

var errRefusedName = errors.New("refused by name")

func newRefuse(names ...string) *refuseNames {
	r := &refuseNames{names: map[string]bool{}}
	for _, n := range names {
		r.names[n] = true
	}
	return r
}

func (r *refuseNames) gate(ev ExecEvent) error {
	r.mu.Lock()
	r.seen = append(r.seen, ev)
	r.mu.Unlock()
	for _, v := range append([][]string{ev.Argv}, ev.Runs...) {
		if len(v) > 0 && r.names[path.Base(v[0])] {
			return errRefusedName
		}
	}
	return nil
}

// standIns writes, into ws/bin, a script for each name that records its
// argv in ws/ran-NAME: the stand-in "would" be the dangerous program.
func standIns(t *testing.T, ws string, names ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "bin"), 0o755))
	for _, n := range names {
		script := "#!/bin/sh\necho \"$0 $*\" >> " + filepath.Join(ws, "ran-"+n) + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", n), []byte(script), 0o755))
	}
}

func gateRun(t *testing.T, r *Runner, ws, script string) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Env: []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin:/bin"}}
	res, err := r.Run(context.Background(), cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	return res, out.String()
}

// Each way of reaching a program without naming it in the command text is
// refused at exec, with nothing of it run, and reported with its argv.
func TestExecGateRefusesHiddenExecs(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	standIns(t, ws, "reboot")
	bin := filepath.Join(ws, "bin")
	require.NoError(t, os.Symlink(filepath.Join(bin, "reboot"), filepath.Join(ws, "harmless")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "via-shebang"), []byte("#!"+filepath.Join(bin, "reboot")+" -f\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "task.sh"), []byte("#!/bin/sh\nreboot now\n"), 0o755))
	// Chains the gate follows by itself for an absolute name: relative
	// targets, a symlinked directory on the way, "..".
	require.NoError(t, os.Symlink("l2", filepath.Join(ws, "l1")))
	require.NoError(t, os.Symlink("bin/../bin/reboot", filepath.Join(ws, "l2")))
	require.NoError(t, os.Symlink("bin", filepath.Join(ws, "d")))
	require.NoError(t, os.Symlink("d/reboot", filepath.Join(ws, "via-dir")))
	require.NoError(t, os.Symlink("reboot", filepath.Join(bin, "alias")))
	cases := []struct {
		name, script string
		argv         []string // the refused exec's argv
	}{
		{"sh script", "./task.sh", []string{"reboot", "now"}},
		{"python os.system", `python3 -c "import os; os.system('reboot')"`, []string{"reboot"}},
		{"python os.execv", `python3 -c "import os; os.execv('` + bin + `/reboot', ['reboot', '-f'])"`, []string{"reboot", "-f"}},
		{"perl exec", `perl -e 'exec "reboot", "-p"'`, []string{"reboot", "-p"}},
		{"symlink under another name", "./harmless --now", []string{"./harmless", "--now"}},
		{"absolute symlink under another name", `"$PWD/harmless" --now`, []string{ws + "/harmless", "--now"}},
		{"absolute symlink chain", `"$PWD/l1" x`, []string{ws + "/l1", "x"}},
		{"symlink through a symlinked directory", `"$PWD/via-dir"`, []string{ws + "/via-dir"}},
		{"symlink reached through a symlinked directory", `"$PWD/d/alias"`, []string{ws + "/d/alias"}},
		{"shebang to the program", "./via-shebang x", []string{"./via-shebang", "x"}},
		{"computed name", `p=re; $p"boot"`, []string{"reboot"}},
		{"descriptor path", `exec 7<` + bin + `/reboot; /proc/self/fd/7 now`, []string{"/proc/self/fd/7", "now"}},
		{"fexecve", `python3 -c "import os; fd=os.open('` + bin + `/reboot', os.O_RDONLY); os.execve(fd, ['x'], {})"`, []string{"x"}},
		{"the dynamic loader", `/lib64/ld-linux-x86-64.so.2 --library-path /lib ` + bin + `/reboot now`,
			[]string{"/lib64/ld-linux-x86-64.so.2", "--library-path", "/lib", bin + "/reboot", "now"}},
		{"argv[0] spoofed", `python3 -c "import os; os.execv('` + bin + `/reboot', ['ls'])"`, []string{"ls"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(ws, "ran-reboot"))
			g := newRefuse("reboot")
			r.ExecGate = g.gate
			defer func() { r.ExecGate = nil }()
			res, out := gateRun(t, r, ws, c.script+"; echo after=$?")
			assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"), "the stand-in ran: %s", out)
			require.NotEmpty(t, res.ExecBlocked, out)
			b := res.ExecBlocked[0]
			assert.Equal(t, c.argv, b.Argv)
			assert.Equal(t, errRefusedName.Error(), b.Reason)
			assert.Contains(t, out, "after=", "the caller goes on after a refused exec")
			assert.NotContains(t, res.NotEnforced, "exec_gate")
		})
	}
}

// A workload that executes many programs is not disturbed: every exec is
// seen, in order, and nothing is refused.
func TestExecGateLetsBenignExecsThrough(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	g := newRefuse("reboot")
	r.ExecGate = g.gate
	res, out := gateRun(t, r, ws, `i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done; echo done $i`)
	assert.Equal(t, 0, res.ExitCode, out)
	assert.Equal(t, "done 1000\n", out)
	assert.Empty(t, res.ExecBlocked)
	n := 0
	for _, ev := range res.Execs {
		if ev.Path == "/bin/true" {
			n++
		}
	}
	assert.Equal(t, 1000, n)
	assert.Equal(t, []string{"/bin/sh", "-c"}, res.Execs[0].Argv[:2], "the command's own first exec is gated too")
}

// The gate runs in every process of the sandbox, also those that left
// the command's process group, and fails closed without tether: a refused
// exec of a background child is refused too.
func TestExecGateCoversBackgroundChildren(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	standIns(t, ws, "reboot")
	g := newRefuse("reboot")
	r.ExecGate = g.gate
	res, out := gateRun(t, r, ws, `setsid sh -c 'reboot' & wait; echo done`)
	assert.Contains(t, out, "done")
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))
	// sh tries each $PATH entry in turn: the entries where no reboot
	// exists fail as the kernel would fail them, and are not blocks.
	require.Len(t, res.ExecBlocked, 1, out)
	assert.Equal(t, []string{"reboot"}, res.ExecBlocked[0].Argv)
	assert.Equal(t, filepath.Join(ws, "bin", "reboot"), res.ExecBlocked[0].Path)
}

// In a session, the supervisor, every command and every background process
// are gated; a command's Result carries the blocks made while it ran.
func TestExecGateSession(t *testing.T) {
	m := newTestSessions(t)
	g := newRefuse("reboot")
	m.ExecGate = g.gate
	ws := t.TempDir()
	standIns(t, ws, "reboot")
	spec := testSpec()
	spec.Config.Workspace = ws
	spec.Config.Env = []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin:/bin"}
	s, err := m.Open(t.Context(), "default", "gate", spec)
	require.NoError(t, err)

	g.mu.Lock()
	require.NotEmpty(t, g.seen, "the supervisor's own exec was gated")
	assert.Equal(t, SupervisorArg, g.seen[0].Argv[len(g.seen[0].Argv)-1])
	g.mu.Unlock()

	out, res := sh(t, s, `python3 -c "import os; os.system('reboot -f')"; echo rc=$?`)
	assert.Contains(t, out, "rc=0")
	require.NotEmpty(t, res.ExecBlocked)
	assert.Equal(t, []string{"reboot", "-f"}, res.ExecBlocked[0].Argv)
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))

	out, res = sh(t, s, `echo fine`)
	assert.Equal(t, "fine\n", out)
	assert.Empty(t, res.ExecBlocked, "an earlier command's blocks are not this one's")

	// A background process is gated too: its refused exec leaves no marker.
	bg, err := s.Start(Command{Shell: `sleep 0.2; reboot; echo bg-done`})
	require.NoError(t, err)
	_, err = bg.Wait(t.Context())
	require.NoError(t, err)
	stdout, _, _ := bg.Output()
	assert.Contains(t, string(stdout), "bg-done")
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))
	assert.NotContains(t, res.NotEnforced, "exec_gate")
}

// An exec the gate allowed is not asked again while the same command
// runs, unless anything it decides on differs: a symlink swapped to a
// refused program between two execs of the same name and argv is refused,
// and the next command asks anew.
func TestExecGateMemo(t *testing.T) {
	m := newTestSessions(t)
	g := newRefuse("reboot")
	m.ExecGate = g.gate
	ws := t.TempDir()
	standIns(t, ws, "reboot", "ok")
	require.NoError(t, os.Symlink(filepath.Join(ws, "bin", "ok"), filepath.Join(ws, "tool")))
	spec := testSpec()
	spec.Config.Workspace = ws
	s, err := m.Open(t.Context(), "default", "memo", spec)
	require.NoError(t, err)
	asked := func(argv0 string) int {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := 0
		for _, ev := range g.seen {
			if len(ev.Argv) > 0 && ev.Argv[0] == argv0 {
				n++
			}
		}
		return n
	}

	tool := filepath.Join(ws, "tool")
	_, res := sh(t, s, `for i in 1 2 3 4 5; do "$PWD/tool" x; done`)
	assert.Empty(t, res.ExecBlocked)
	assert.Equal(t, 1, asked(tool), "five equal execs in one command: asked once")
	assert.FileExists(t, filepath.Join(ws, "ran-ok"))

	// Swapped between two execs of the same name and argv, inside one
	// command: the second is asked, and refused.
	_, res = sh(t, s, `"$PWD/tool" x; ln -sf bin/reboot tool; "$PWD/tool" x; echo rc=$?`)
	require.Len(t, res.ExecBlocked, 1)
	assert.Equal(t, []string{tool, "x"}, res.ExecBlocked[0].Argv)
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))
	assert.Equal(t, 3, asked(tool), "a new command asks again; the swapped exec is asked")

	// A refusal is never remembered: each try is asked and reported.
	_, res = sh(t, s, `"$PWD/tool" a; "$PWD/tool" b; "$PWD/tool" a`)
	assert.Len(t, res.ExecBlocked, 3)
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))
}

// parseShebang reads a "#!" line as binfmt_script does, byte for byte.
func TestParseShebang(t *testing.T) {
	long := "#!/" + strings.Repeat("x", 300)
	for _, c := range []struct {
		name, line  string
		interp, arg string
		ok          bool
	}{
		{"plain", "#!/bin/sh\necho\n", "/bin/sh", "", true},
		{"argument", "#!/usr/bin/env python3\n", "/usr/bin/env", "python3", true},
		{"one argument with blanks inside", "#! /bin/sh -e  -x \t\n", "/bin/sh", "-e  -x", true},
		{"tab separates", "#!/bin/sh\t-e\n", "/bin/sh", "-e", true},
		{"no newline, short file", "#!/bin/sh", "/bin/sh", "", true},
		{"a NUL ends the interpreter", "#!/x/reboot\x00junk\n", "/x/reboot", "", true},
		{"a NUL hides the newline", "#!/x/reboot -f\x00\n/bin/sh\n", "/x/reboot", "-f", true},
		{"a NUL ends the argument", "#!/bin/sh -e\x00x\n", "/bin/sh", "-e", true},
		{"only blanks", "#!   \n", "", "", false},
		{"empty", "#!\n", "", "", false},
		{"not a script", "\x7fELF", "", "", false},
		{"a name the buffer cuts", long, "", "", false},
		{"a long line after the name", "#!/bin/sh " + strings.Repeat("a", 300), "/bin/sh", strings.Repeat("a", binprmBufSize-1-len("#!/bin/sh ")), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf [binprmBufSize]byte
			copy(buf[:], c.line)
			interp, arg, ok := parseShebang(&buf)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.interp, interp)
			assert.Equal(t, c.arg, arg)
		})
	}
}
