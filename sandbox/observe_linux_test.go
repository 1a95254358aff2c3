package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// observeScript does, inside the sandbox, what the text of a command does
// not show: a python script opening a file by a computed name, a script
// run by its path, writes through a redirection, a connection to a
// listener of its own, and hostile names (one longer than PATH_MAX, one
// that is not UTF-8, one relative to a descriptor that is closed).
const observeScript = `cat data/in.txt >/dev/null
echo w > out.txt
./tool.sh
ln -sf "$PWD/hidden.txt" /tmp/l && cat /tmp/l >/dev/null
ln -sfn "$PWD/data" /tmp/dl && cat /tmp/dl/../climbed.txt >/dev/null
python3 - <<'EOF'
import os, socket
open("se" + "cret" + ".txt").read()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.socket(); c.connect(s.getsockname()); c.close()
print("port", s.getsockname()[1])
try: os.open("a" * 5000, os.O_RDONLY)
except OSError: pass
open(b"bad-\xff\xfe.txt", "w").close()
try: os.open("x", os.O_RDONLY, dir_fd=77)
except OSError: pass
try:
    os.close(os.open("suid", os.O_CREAT | os.O_WRONLY, 0o4755)); print("suid-created")
except PermissionError: print("suid-refused")
h = os.open("viafd.txt", os.O_PATH)
os.close(os.open("/proc/self/fd/%d" % h, os.O_RDONLY))
os.close(os.open("/dev/fd/%d" % h, os.O_RDONLY))
EOF
`

// observeWorkspace makes the files observeScript uses.
func observeWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "data"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data", "in.txt"), []byte("in\n"), 0o644))
	for _, f := range []string{"secret.txt", "hidden.txt", "climbed.txt", "viafd.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("s\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "tool.sh"), []byte("#!/bin/sh\ntrue\n"), 0o755))
	return ws
}

// accessSet is "kind target" of each access.
func accessSet(accs []Access) []string {
	var out []string
	for _, a := range accs {
		out = append(out, string(a.Kind)+" "+a.Target)
	}
	return out
}

// checkObserved asserts what an observed run of observeScript recorded.
func checkObserved(t *testing.T, ws, out string, res *Result) {
	t.Helper()
	got := accessSet(res.Accesses)
	for _, want := range []string{
		"read " + ws + "/data/in.txt",
		"write " + ws + "/out.txt",
		"exec " + ws + "/tool.sh",
		"read " + ws + "/secret.txt",
		"write " + ws + "/bad-\xff\xfe.txt",
		// Through a symlink planted in /tmp, ".." after one, and the
		// caller's /proc links to a descriptor opened O_PATH.
		"read " + ws + "/hidden.txt",
		"read " + ws + "/climbed.txt",
		"read " + ws + "/viafd.txt",
	} {
		assert.Contains(t, got, want)
	}
	port := ""
	if _, after, ok := strings.Cut(out, "port "); ok && len(strings.Fields(after)) > 0 {
		port = strings.Fields(after)[0]
	}
	require.NotEmpty(t, port, out)
	assert.Contains(t, got, "connect 127.0.0.1:"+port)
	for _, a := range res.Accesses {
		if a.Kind != AccessConnect {
			assert.True(t, strings.HasPrefix(a.Target, ws+"/"), "only the workspace's files are recorded: %s", a.Target)
		}
		assert.NotContains(t, a.Target, "/usr/lib")
	}
	// Observation takes nothing from the sandbox's filter: a setuid file
	// is still refused.
	assert.Contains(t, out, "suid-refused")
	assert.NotContains(t, out, "suid-created")
	// The name over PATH_MAX and the closed descriptor are counted lost.
	assert.GreaterOrEqual(t, res.AccessesLost, 2)
	assert.Positive(t, res.observedNotifications)
	// The exec tree: every exec of the command has its parent, and the
	// script's exec descends from the command's shell.
	pids := map[int]bool{}
	for _, ev := range res.Execs {
		assert.Positive(t, ev.PPid, ev.Argv)
		pids[ev.Pid] = true
	}
	i := slices.IndexFunc(res.Execs, func(ev ExecEvent) bool { return ev.Path == "./tool.sh" })
	require.GreaterOrEqual(t, i, 0)
	assert.True(t, pids[res.Execs[i].PPid], "tool.sh's parent is an exec of the sandbox")
}

func TestObserveOneShot(t *testing.T) {
	r := newTestRunner(t)
	r.ExecGate = func(ExecEvent) error { return nil }
	// The trampoline loads the compiled filter and the gate's, or (as
	// libcontainer loads the sandbox's) the gate's only.
	for _, libcontainerFilter := range []bool{false, true} {
		t.Run(map[bool]string{false: "compiled-filter", true: "libcontainer-filter"}[libcontainerFilter], func(t *testing.T) {
			r.libcontainerSeccomp = libcontainerFilter
			ws := observeWorkspace(t)
			var out bytes.Buffer
			// Paths are the sandbox's: with the workspace elsewhere
			// inside, they name its mount point.
			cfg := Config{Workspace: ws, Observe: true}
			inside := ws
			if libcontainerFilter {
				cfg.WorkspaceMount, inside = "/proj", "/proj"
			}
			res, err := r.Run(t.Context(), cfg, Command{Shell: observeScript, Stdout: &out, Stderr: &out})
			require.NoError(t, err)
			require.Zero(t, res.ExitCode, out.String())
			checkObserved(t, inside, out.String(), res)

			// The same commands in a sandbox that is not observed: no
			// open or connect reaches tether, and nothing is recorded.
			out.Reset()
			res, err = r.Run(t.Context(), Config{Workspace: ws}, Command{Shell: observeScript, Stdout: &out, Stderr: &out})
			require.NoError(t, err)
			require.Zero(t, res.ExitCode, out.String())
			assert.Contains(t, out.String(), "port ")
			assert.Zero(t, res.observedNotifications)
			assert.Empty(t, res.Accesses)
			assert.Zero(t, res.AccessesLost)
		})
	}
}

func TestObserveSession(t *testing.T) {
	m := newTestSessions(t)
	m.ExecGate = func(ExecEvent) error { return nil }
	ws := observeWorkspace(t)
	spec := testSpec()
	spec.Config.Workspace, spec.Config.Observe = ws, true
	s, err := m.Open(t.Context(), "default", "observe", spec)
	require.NoError(t, err)
	out, res := sh(t, s, observeScript)
	checkObserved(t, ws, out, res)

	// The next command's record is its own: a repeat is not folded into
	// the previous command's accesses.
	_, res = sh(t, s, `cat data/in.txt`)
	assert.Equal(t, []string{"read " + ws + "/data/in.txt"}, accessSet(res.Accesses))
	assert.Zero(t, res.AccessesLost)

	spec.Config.Observe = false
	plain, err := m.Open(t.Context(), "default", "plain", spec)
	require.NoError(t, err)
	out, res = sh(t, plain, observeScript)
	assert.Contains(t, out, "port ")
	assert.Zero(t, res.observedNotifications)
	assert.Empty(t, res.Accesses)
}

// The libcontainer filter of an observed sandbox notifies exactly where it
// allowed before (conditions kept), and that of a sandbox not observed has
// no rule for the observed calls beyond the sandbox's own.
func TestWithExecNotifyObserve(t *testing.T) {
	base := &configs.Seccomp{DefaultAction: configs.Errno, Syscalls: []*configs.Syscall{
		{Name: "openat", Action: configs.Allow, Args: []*configs.Arg{{Index: 2, Value: 0o100, ValueTwo: 0, Op: configs.MaskEqualTo}}},
		{Name: "connect", Action: configs.Allow},
		{Name: "open", Action: configs.Errno},
		{Name: "read", Action: configs.Allow},
		{Name: "execve", Action: configs.Allow},
	}}
	actions := func(c *configs.Seccomp) map[string][]configs.Action {
		out := map[string][]configs.Action{}
		for _, s := range c.Syscalls {
			out[s.Name] = append(out[s.Name], s.Action)
		}
		return out
	}
	plain := actions(withNotify(base, "@x", true, false, false, false))
	assert.Equal(t, []configs.Action{configs.Allow}, plain["openat"])
	assert.Equal(t, []configs.Action{configs.Allow}, plain["connect"])
	assert.Equal(t, []configs.Action{configs.Notify}, plain["execve"])

	obs := withNotify(base, "@x", true, true, false, false)
	a := actions(obs)
	assert.Equal(t, []configs.Action{configs.Notify}, a["openat"])
	assert.Equal(t, []configs.Action{configs.Notify}, a["connect"])
	assert.Equal(t, []configs.Action{configs.Errno}, a["open"], "a refusal stays a refusal")
	assert.Equal(t, []configs.Action{configs.Allow}, a["read"])
	for _, s := range obs.Syscalls {
		if s.Name == "openat" {
			assert.Equal(t, base.Syscalls[0].Args, s.Args, "the conditions are kept")
		}
	}
	assert.Equal(t, configs.Allow, base.Syscalls[0].Action, "the shared config is not changed")
}

// A directory descriptor that another thread closes (and reopens) while
// the caller opens a file relative to it: every open is recorded under the
// workspace or counted lost, and none is refused or left waiting.
func TestObserveDirfdRace(t *testing.T) {
	r := newTestRunner(t)
	r.ExecGate = func(ExecEvent) error { return nil }
	ws := observeWorkspace(t)
	const tries = 300
	script := `python3 - <<'EOF'
import os, threading
fd = os.open("data", os.O_RDONLY | os.O_DIRECTORY)
stop = False
def churn():
    global fd
    while not stop:
        try: os.close(fd)
        except OSError: pass
        fd = os.open("data", os.O_RDONLY | os.O_DIRECTORY)
t = threading.Thread(target=churn); t.start()
ok = 0
for i in range(` + strconv.Itoa(tries) + `):
    try: os.close(os.open("in.txt", os.O_RDONLY, dir_fd=fd)); ok += 1
    except OSError: pass
stop = True; t.join()
print("ok", ok)
EOF
`
	var out bytes.Buffer
	res, err := r.Run(t.Context(), Config{Workspace: ws, Observe: true}, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, out.String())
	seen := 0
	for _, a := range res.Accesses {
		assert.True(t, strings.HasPrefix(a.Target, ws+"/"), a.Target)
		if a.Target == ws+"/data/in.txt" {
			seen += a.Count
		}
	}
	assert.GreaterOrEqual(t, seen+res.AccessesLost, tries, "each open is recorded or counted lost (%s)", out.String())
	t.Logf("%s: %d recorded, %d lost", strings.TrimSpace(out.String()), seen, res.AccessesLost)
}

// readSockaddr and resolveName read this very process as they read a
// sandboxed one: hostile or odd inputs are errors or left out, never a
// wrong record.
func TestObserveReaders(t *testing.T) {
	pid := os.Getpid()
	addrOf := func(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
	in4 := make([]byte, unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint16(in4, unix.AF_INET)
	binary.BigEndian.PutUint16(in4[2:], 8080)
	copy(in4[4:], []byte{10, 1, 2, 3})
	in6 := make([]byte, unix.SizeofSockaddrInet6)
	binary.NativeEndian.PutUint16(in6, unix.AF_INET6)
	binary.BigEndian.PutUint16(in6[2:], 443)
	copy(in6[8:], net.ParseIP("2001:db8::1").To16())
	mapped := slices.Clone(in6)
	copy(mapped[8:], net.ParseIP("192.0.2.9").To16())
	un := make([]byte, 110)
	binary.NativeEndian.PutUint16(un, unix.AF_UNIX)
	cases := []struct {
		b    []byte
		size uint64
		want string
		err  error // nil: want; errNotRecorded; other: any error
	}{
		{in4, uint64(len(in4)), "10.1.2.3:8080", nil},
		{in6, uint64(len(in6)), "[2001:db8::1]:443", nil},
		{mapped, uint64(len(mapped)), "192.0.2.9:443", nil},
		{un, uint64(len(un)), "", errNotRecorded},
		{in4, 1, "", errNotRecorded},
		{in6, 12, "", errors.New("short")},
		{in4, 1 << 40, "10.1.2.3:8080", nil}, // a huge length reads no more than an address
	}
	for _, c := range cases {
		got, err := readSockaddr(pid, addrOf(c.b), c.size)
		switch {
		case c.err == nil:
			assert.NoError(t, err)
			assert.Equal(t, c.want, got)
		case errors.Is(c.err, errNotRecorded):
			assert.ErrorIs(t, err, errNotRecorded)
		default:
			assert.Error(t, err)
			assert.NotErrorIs(t, err, errNotRecorded)
		}
	}
	_, err := readSockaddr(pid, 8, 16) // an unmapped address
	assert.Error(t, err)

	cwd, err := os.Getwd()
	require.NoError(t, err)
	got, err := resolveName(pid, unix.AT_FDCWD, "a/../b")
	require.NoError(t, err)
	assert.Equal(t, cwd+"/a/../b", got, "not cleaned: '..' after a symlink is not the lexical parent")
	dir := t.TempDir()
	f, err := os.Open(dir)
	require.NoError(t, err)
	got, err = resolveName(pid, int32(f.Fd()), "x")
	require.NoError(t, err)
	assert.Equal(t, dir+"/x", got)
	fd := int32(f.Fd())
	require.NoError(t, f.Close())
	_, err = resolveName(pid, fd, "x")
	assert.Error(t, err, "a closed directory descriptor")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	_, err = resolveName(pid, int32(r.Fd()), "x")
	assert.Error(t, err, "a pipe is not a directory")
	_, err = resolveName(pid, -5, "x")
	assert.Error(t, err)
	got, err = resolveName(pid, -5, "/abs/olute")
	require.NoError(t, err)
	assert.Equal(t, "/abs/olute", got)

	assert.Equal(t, os.Getppid(), parentPid(pid))
	assert.Zero(t, parentPid(1<<30))
}

// One command's record is bounded in entries and bytes: past the bounds
// the oldest half is dropped and counted lost, and in a session only what
// the current command loses is its loss.
func TestObserveRecordBounded(t *testing.T) {
	g := &execGateRun{observe: true}
	for i := range 3 * maxAccesses {
		g.record(Access{Kind: AccessRead, Target: "/w/" + strconv.Itoa(i), Count: 1})
	}
	accs, lost, _ := g.accessesSince(gateMark{})
	assert.LessOrEqual(t, len(accs), 2*maxAccesses)
	assert.Equal(t, 3*maxAccesses, len(accs)+lost, "every access is kept or counted lost")
	assert.Equal(t, "/w/"+strconv.Itoa(3*maxAccesses-1), accs[len(accs)-1].Target, "the newest are kept")
	// Repeats fold into one entry.
	g.record(Access{Kind: AccessRead, Target: "/w/" + strconv.Itoa(3*maxAccesses-1), Count: 1})
	accs, _, _ = g.accessesSince(gateMark{})
	assert.Equal(t, 2, accs[len(accs)-1].Count)

	// A session's next command: the previous one's entries dropped for
	// room are not its loss, and its repeats are its own entries.
	m := g.mark()
	g.record(Access{Kind: AccessRead, Target: "/w/" + strconv.Itoa(3*maxAccesses-1), Count: 1})
	accs, lost, _ = g.accessesSince(m)
	assert.Equal(t, []Access{{Kind: AccessRead, Target: "/w/" + strconv.Itoa(3*maxAccesses-1), Count: 1}}, accs,
		"not folded into the previous command's entry")
	assert.Zero(t, lost)
	for i := range 2 * maxAccesses {
		g.record(Access{Kind: AccessWrite, Target: "/w/n" + strconv.Itoa(i), Count: 1})
	}
	accs, lost, _ = g.accessesSince(m)
	assert.Equal(t, 2*maxAccesses+1, len(accs)+lost, "kept or lost, and nothing of the previous command counted")

	// Long names: bounded by bytes too.
	g = &execGateRun{observe: true}
	long := strings.Repeat("x", 4000)
	for i := range 2000 {
		g.record(Access{Kind: AccessRead, Target: "/w/" + long + strconv.Itoa(i), Count: 1})
	}
	accs, lost, _ = g.accessesSince(gateMark{})
	assert.LessOrEqual(t, g.accBytes, 2*maxAccessBytes)
	assert.Equal(t, 2000, len(accs)+lost)
	assert.Positive(t, lost)
}

// TestObserveIdentity: an observed access says what file its name led
// to (device, inode, links) or that it led to none (a failed open is a
// name tried, not a file read); a hard link the command makes is a read
// of its existing name, and a rename writes both names, so neither can
// hide the file they lead to behind an innocent name (red team O1, O3).
func TestObserveIdentity(t *testing.T) {
	r := newTestRunner(t)
	r.ExecGate = func(ExecEvent) error { return nil }
	ws := observeWorkspace(t)
	var out bytes.Buffer
	res, err := r.Run(t.Context(), Config{Workspace: ws, Observe: true}, Command{Shell: `cat missing.txt 2>/dev/null
ln secret.txt linked.txt && cat linked.txt >/dev/null
mv hidden.txt renamed.txt
cat data/in.txt >/dev/null`, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, out.String())
	byName := map[string]Access{}
	for _, a := range res.Accesses {
		byName[string(a.Kind)+" "+a.Target] = a
	}
	t.Logf("%v", accessSet(res.Accesses))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(ws, "secret.txt"), &st))

	missing, ok := byName["read "+ws+"/missing.txt"]
	require.True(t, ok, "a failed open is recorded")
	assert.True(t, missing.Missing)
	assert.Zero(t, missing.Ino)

	linked, ok := byName["read "+ws+"/linked.txt"]
	require.True(t, ok)
	assert.False(t, linked.Missing)
	assert.Equal(t, uint64(2), linked.Links, "the file has two names")
	assert.Equal(t, [2]uint64{st.Dev, st.Ino}, [2]uint64{linked.Dev, linked.Ino}, "the link is the secret's inode")
	assert.Contains(t, byName, "read "+ws+"/secret.txt", "the link's source is evidence")

	assert.Contains(t, byName, "write "+ws+"/hidden.txt", "a rename writes its old name")
	assert.Contains(t, byName, "write "+ws+"/renamed.txt", "and its new one")
	in := byName["read "+ws+"/data/in.txt"]
	assert.Equal(t, uint64(1), in.Links)
	assert.False(t, in.Missing)
}
