package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
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
	return gateRunSeccomp(t, r, ws, "", script)
}

// gateRunSeccomp is gateRun in seccomp mode mode.
func gateRunSeccomp(t *testing.T, r *Runner, ws string, mode SeccompMode, script string) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Seccomp: mode, Env: []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin:/bin"}}
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

// TestMemReaderExecArgs reads an exec's path and argv from memory laid
// out as a hostile caller may lay it out (this process's own, through
// process_vm_readv as the gate reads a caller's): strings of every
// length around the read-ahead's chunk and a page, more of them than one
// read-ahead takes, strings and arrays that end right before a page that
// cannot be read, and pointers into it. What reads must read exactly; what runs
// into the unmapped page must fail; and a typical argv takes two system
// calls.
func TestMemReaderExecArgs(t *testing.T) {
	const page = 4096
	mem, err := unix.Mmap(-1, 0, 64*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(mem)
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	hole := base + 63*page
	// The last page cannot be read, as an unmapped one (unmapped, the
	// runtime may map something there meanwhile).
	require.NoError(t, unix.Mprotect(mem[63*page:], unix.PROT_NONE))
	// place writes s with its NUL so that the NUL is the byte before end
	// (an address), and returns where s starts.
	place := func(s string, end uint64) uint64 {
		at := end - uint64(len(s)) - 1
		copy(mem[at-base:], s)
		mem[end-1-base] = 0
		return at
	}
	// array writes the pointers so that the array ends right before end.
	array := func(ptrs []uint64, end uint64) uint64 {
		at := end - uint64(8*len(ptrs))
		for i, p := range ptrs {
			binary.NativeEndian.PutUint64(mem[at-base+uint64(8*i):], p)
		}
		return at
	}
	read := func(pathPtr, argvPtr uint64) (string, []string, int, error) {
		var r memReader
		r.reset(os.Getpid())
		r.prefetchExec(pathPtr, argvPtr)
		p, err := r.cstring(pathPtr, maxExecPath)
		if err != nil {
			return "", nil, r.calls, fmt.Errorf("path: %w", err)
		}
		argv, err := r.argv(argvPtr)
		return p, argv, r.calls, err
	}

	// Many strings, of lengths around prefetchChunk and a page; some
	// across a page boundary, one ending right before the hole.
	var want []string
	for _, n := range []int{0, 1, 7, 8, 255, 256, 257, 511, 4095, 4096, 5000} {
		for range 7 {
			want = append(want, strings.Repeat(string(rune('a'+len(want)%26)), n))
		}
	}
	require.Greater(t, len(want), 2*prefetchSpans)
	end := hole
	ptrs := make([]uint64, 0, len(want)+1)
	for _, s := range want {
		ptrs = append(ptrs, place(s, end))
		end = ptrs[len(ptrs)-1] - 3 // unaligned, and a page boundary falls anywhere
	}
	ptrs = append(ptrs, 0)
	path := place("/usr/bin/true", end-5)
	argvAt := array(ptrs, (path-64)&^7)
	p, argv, _, err := read(path, argvAt)
	require.NoError(t, err)
	assert.Equal(t, "/usr/bin/true", p)
	assert.Equal(t, want, argv)

	// A typical argv: the path and array, then the strings, read ahead
	// in two system calls in all.
	short := []string{"cc", "-c", "-O2", "-o", "main.o", "main.c"}
	end = base + 10*page
	ptrs = ptrs[:0]
	for _, s := range short {
		ptrs = append(ptrs, place(s, end))
		end = ptrs[len(ptrs)-1]
	}
	ptrs = append(ptrs, 0)
	path = place("/usr/bin/cc", end)
	p, argv, calls, err := read(path, array(ptrs, (path-8)&^7))
	require.NoError(t, err)
	assert.Equal(t, "/usr/bin/cc", p)
	assert.Equal(t, short, argv)
	assert.Equal(t, 2, calls, "system calls to read a typical exec")

	// The array's NULL is its page's last 8 bytes, before the hole.
	one := place("x", base+20*page)
	_, argv, _, err = read(one, array([]uint64{one, one, 0}, hole))
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "x"}, argv)

	// What runs into the hole fails: a path or string without its NUL
	// before it, an array without its NULL, a pointer into it, a
	// pointer across its start. Each case lays out its own memory.
	noNUL := func() uint64 {
		copy(mem[hole-base-300:], strings.Repeat("z", 300))
		return hole - 300
	}
	arr := func(ptrs ...uint64) uint64 { return array(ptrs, base+30*page) }
	for _, c := range []struct {
		name string
		at   func() (path, argv uint64)
	}{
		{"path without NUL", func() (uint64, uint64) { return noNUL(), arr(one, 0) }},
		{"string without NUL", func() (uint64, uint64) { return one, arr(one, noNUL(), one, 0) }},
		{"string in the hole", func() (uint64, uint64) { return one, arr(one, hole+16, 0) }},
		{"path in the hole", func() (uint64, uint64) { return hole, arr(one, 0) }},
		{"array without its NULL", func() (uint64, uint64) { return one, array([]uint64{one, one}, hole) }},
		{"array in the hole", func() (uint64, uint64) { return one, hole + 8 }},
		{"pointer across the end", func() (uint64, uint64) { return one, hole - 4 }},
	} {
		p, argv, _, err := read(c.at())
		assert.Error(t, err, "%s: %q %q", c.name, p, argv)
	}
}

// TestExecGateSelfExe: a program that runs itself again through
// /proc/self/exe (or /proc/thread-self/exe) runs, as it does ungated, and
// is checked as the program it is. The gate resolved "self" in the
// sandbox's /proc, where tether is nobody, and answered ENOENT.
func TestExecGateSelfExe(t *testing.T) {
	r := newTestRunner(t)
	refuse := newRefuse("reboot")
	r.ExecGate = refuse.gate
	res, out := gateRun(t, r, t.TempDir(), `for p in /proc/self/exe /proc/thread-self/exe; do
python3 -c 'import os, sys; os.execv(sys.argv[1], ["python3", "-c", "print(\"again\")"])' $p; echo rc=$?
done`)
	assert.Equal(t, "again\nrc=0\nagain\nrc=0\n", out)
	assert.Empty(t, res.ExecBlocked)
	refuse.mu.Lock()
	defer refuse.mu.Unlock()
	var runs []string
	for _, ev := range refuse.seen {
		if strings.HasSuffix(ev.Path, "/exe") {
			for _, v := range ev.Runs {
				runs = append(runs, v[0])
			}
		}
	}
	assert.Contains(t, runs, path.Base(pythonPath(t)), "checked as the program behind the link")
}

// pythonPath is where python3 really is (its symlinks resolved).
func pythonPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.EvalSymlinks("/usr/bin/python3")
	require.NoError(t, err)
	return p
}

// TestRunsAsUnreadableScript: the kernel reads a script's "#!" line
// whatever the file's mode, so a script tether cannot read (rootless
// tether, a file of mode 0111) would run its interpreter unchecked; the
// exec is refused instead. Tether's capabilities to read any file are
// dropped on one thread, which then resolves the exec as the gate does.
func TestRunsAsUnreadableScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (to drop CAP_DAC_OVERRIDE on one thread)")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "task")
	require.NoError(t, os.WriteFile(script, []byte("#!/usr/sbin/reboot -f\n"), 0o111))
	readable := filepath.Join(dir, "readable")
	require.NoError(t, os.WriteFile(readable, []byte("#!/usr/sbin/reboot -f\n"), 0o555))
	type result struct {
		runs [][]string
		err  error
	}
	done := make(chan [2]result)
	go func() {
		// Never unlocked: the thread ends with the goroutine, and its
		// capabilities with it.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			done <- [2]result{{err: err}, {err: err}}
			return
		}
		data[0].Effective &^= 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			done <- [2]result{{err: err}, {err: err}}
			return
		}
		var out [2]result
		root, err := openDir("/")
		if err != nil {
			done <- [2]result{{err: err}, {err: err}}
			return
		}
		defer unix.Close(root)
		for i, f := range []string{script, readable} {
			out[i].runs, out[i].err = runsAs(os.Getpid(), root, unix.AT_FDCWD, f, false, []string{f})
		}
		done <- out
	}()
	got := <-done
	require.ErrorIs(t, got[0].err, ErrExecUnchecked, "%v", got[0].runs)
	require.NoError(t, got[1].err)
	assert.Contains(t, got[1].runs, []string{"/usr/sbin/reboot", "-f", readable}, "the readable script is checked as its interpreter")
}

// TestExecGateChrootedSelfNames: a caller that chroots into a directory
// of its own (possible only with seccomp off, in a user namespace of its
// own: the sandbox has no CAP_SYS_CHROOT) makes /proc/self/fd/N,
// /dev/fd/N and /proc/self/exe there any symlink it likes; the kernel
// follows those, so the gate must too, and not take the names for the
// caller's descriptor or executable (it did for the descriptor forms, and
// a program named reboot ran). The
// payload is a static binary named reboot behind each symlink: each exec
// is refused and it never runs. Outside the chroot the same names are the
// caller's own, as TestExecGateSelfExe checks. With seccomp off the gate
// opens each caller's root: with the root opened once the payload ran.
func TestExecGateChrootedSelfNames(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc for a static payload")
	}
	r := newTestRunner(t)
	refuse := newRefuse("reboot")
	r.ExecGate = refuse.gate
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "m.c"), []byte("#include <stdio.h>\nint main(void){puts(\"payload ran\");return 0;}\n"), 0o644))
	res, out := gateRunSeccomp(t, r, ws, SeccompOff, `gcc -static -o m m.c || exit 1
mkdir -p D/proc/self/fd D/dev && cp m D/reboot
ln -s /reboot D/proc/self/fd/5 && ln -s /reboot D/proc/self/exe && ln -s /proc/self/fd D/dev/fd
exec 5<m.c
for p in /proc/self/fd/5 /dev/fd/5 /proc/self/exe; do
python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).unshare(0x10000000); os.chroot("D"); os.execv(sys.argv[1], ["x"])' $p 2>/dev/null; echo rc=$?
done`)
	assert.NotContains(t, out, "payload ran")
	assert.Equal(t, "rc=1\nrc=1\nrc=1\n", out)
	var blocked []string
	for _, b := range res.ExecBlocked {
		blocked = append(blocked, b.Path)
	}
	assert.Equal(t, []string{"/proc/self/fd/5", "/dev/fd/5", "/proc/self/exe"}, blocked)
}

// A dynamic loader is what the file is: a copy, a renamed copy, a hard
// link of one, one given --argv0 and one that is a script's interpreter
// each run the real program they are given, so that program is checked.
// Here the program is a real ELF (a copy of touch named reboot, which
// leaves its operand behind when it runs): before session 12 only a loader
// named ld-*.so ran checked, and each of these left its marker. A memfd
// named "reboot" goes by that name. Benign programs of a loader's shape
// (static-PIE, static) run.
func TestExecGateLoaderByContent(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	bin := filepath.Join(ws, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	touch, err := os.ReadFile("/usr/bin/touch")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "reboot"), touch, 0o755))
	ld := "/lib64/ld-linux-x86-64.so.2"
	ldBytes, err := os.ReadFile(ld)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "myld"), ldBytes, 0o755))
	require.NoError(t, os.Link(filepath.Join(ws, "myld"), filepath.Join(ws, "linked")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "via-interp"), []byte("#!"+ws+"/myld "+bin+"/reboot\n"), 0o755))
	cases := []struct{ name, script string }{
		{"copy in /tmp", `cp ` + ld + ` /tmp/x && /tmp/x bin/reboot ran-copy`},
		{"renamed copy", `./myld bin/reboot ran-renamed`},
		{"absolute program", `./myld "$PWD/bin/reboot" ran-abs`},
		{"hard link", `./linked bin/reboot ran-linked`},
		{"--argv0", `./myld --argv0 true bin/reboot ran-argv0`},
		{"options first", `./myld --inhibit-cache --library-path /lib bin/reboot ran-options`},
		{"a script's interpreter", `./via-interp ran-interp`},
		{"memfd named reboot", `python3 -c "import os; fd=os.memfd_create('reboot', 0); os.write(fd, open('bin/reboot','rb').read()); os.execve(fd, ['true', 'ran-memfd'], {})"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, _ := filepath.Glob(filepath.Join(ws, "ran-*"))
			for _, m := range old {
				require.NoError(t, os.Remove(m))
			}
			g := newRefuse("reboot")
			r.ExecGate = g.gate
			defer func() { r.ExecGate = nil }()
			res, out := gateRun(t, r, ws, c.script+"; echo after=$?")
			matches, _ := filepath.Glob(filepath.Join(ws, "ran-*"))
			assert.Empty(t, matches, "the program ran: %s", out)
			require.NotEmpty(t, res.ExecBlocked, out)
			assert.Equal(t, errRefusedName.Error(), res.ExecBlocked[0].Reason)
			assert.Contains(t, out, "after=")
		})
	}
	t.Run("benign", func(t *testing.T) {
		g := newRefuse("reboot")
		r.ExecGate = g.gate
		defer func() { r.ExecGate = nil }()
		script := `/bin/busybox echo reboot && /bin/echo reboot && ./myld --list /bin/true >/dev/null && echo listed`
		if _, err := exec.LookPath("gcc"); err == nil {
			src := filepath.Join(ws, "spie.c")
			require.NoError(t, os.WriteFile(src, []byte("#include <stdio.h>\nint main(int c,char**v){printf(\"spie %s\\n\",v[1]);return 0;}\n"), 0o644))
			o, err := exec.Command("gcc", "-static-pie", "-o", filepath.Join(ws, "spie"), src).CombinedOutput()
			require.NoError(t, err, "%s", o)
			script += ` && ./spie reboot`
		}
		res, out := gateRun(t, r, ws, script)
		assert.Equal(t, 0, res.ExitCode, out)
		assert.Empty(t, res.ExecBlocked, out)
		assert.Contains(t, out, "reboot\nreboot\nlisted\n")
	})
}

// TestExecGateRootIsFixed: the gate resolves every exec of a sandbox with
// seccomp on in the root it opened once, so no process of it may have
// another root. A caller tries each way to change its root (chroot by
// system call and by chroot(8), in a new user namespace, a new mount
// namespace, pivot_root, setns into pid 1's mount namespace), each into a
// directory where /usr/bin/true is a symlink to a payload named reboot,
// and execs /usr/bin/true there: had a root change worked, the gate would
// check the sandbox's /usr/bin/true while the kernel ran the payload.
// Every attempt is refused and the payload never runs (checked from the
// host, after the sandbox is gone); the plain /usr/bin/true still runs.
// With CAP_SYS_CHROOT kept, the system call and chroot(8) succeed: the
// gate that opened each caller's root refused the payload by its link's
// name; with the root opened once the payload ran, twice.
func TestExecGateRootIsFixed(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc for a static payload")
	}
	r := newTestRunner(t)
	refuse := newRefuse("reboot")
	r.ExecGate = refuse.gate
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "m.c"), []byte("#include <stdio.h>\nint main(void){puts(\"payload ran\");return 0;}\n"), 0o644))
	res, out := gateRun(t, r, ws, `gcc -static -o m m.c || exit 1
mkdir -p D/usr/bin N/old && cp m D/reboot && ln -s /reboot D/usr/bin/true
python3 -c '
import os
try:
    os.chroot("D")
except OSError as e:
    print("chroot", e.strerror); raise SystemExit(1)
os.execv("/usr/bin/true", ["true"])'; echo syscall=$?
/usr/sbin/chroot D /usr/bin/true; echo chroot=$?
unshare -Ur /usr/sbin/chroot D /usr/bin/true; echo userns=$?
unshare -m /usr/sbin/chroot D /usr/bin/true; echo mountns=$?
/usr/sbin/pivot_root N N/old; echo pivot=$?
nsenter -t 1 -m /usr/sbin/chroot D /usr/bin/true; echo setns=$?
/usr/bin/true; echo plain=$?`)
	t.Log(out)
	assert.NotContains(t, out, "payload ran")
	assert.NotContains(t, out, "not found")
	assert.Contains(t, out, "chroot Operation not permitted")
	for _, how := range []string{"syscall", "chroot", "userns", "mountns", "pivot", "setns"} {
		assert.Regexp(t, "(?m)^"+how+"=[1-9][0-9]*$", out, "%s must fail", how)
	}
	assert.Contains(t, out, "plain=0\n")
	assert.Empty(t, res.ExecBlocked, "nothing reached the payload")
}
