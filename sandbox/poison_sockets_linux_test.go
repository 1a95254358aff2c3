package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// hostListener is a person's daemon listening in the workspace (git's
// credential cache, an ssh ControlMaster): a socket of the workspace's
// owner, mode 0600, that answers every connection with a secret and
// counts them.
type hostListener struct {
	ln       *net.UnixListener
	accepted atomic.Int32
}

func listenOnHost(t *testing.T, path string) *hostListener {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, os.Lchown(path, wsOwner, wsOwner))
	h := &hostListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			_, _ = c.Write([]byte("password=hunter2\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return h
}

// hostSocketScript connects to the person's sockets every way a name can
// reach them (directly, in the frozen ~/.ssh, through a symlink, through
// /proc/self/cwd, renamed onto a name the sandbox bound itself), to its
// own pathname, abstract and datagram sockets, and races an address
// between its own socket and ~/.ssh/ctl, printing REACHED-<what> for
// every connection that got a secret.
const hostSocketScript = `python3 -u - <<'EOF'
import ctypes, os, socket, threading, time
def reach(p, what):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(p)
        print("REACHED-" + what, s.recv(100))
    except OSError as e:
        print("refused", what, e)
    s.close()
reach(".cache/git/credential/socket", "credential")
reach(".ssh/ctl", "ssh")
reach("proj/daemon.sock", "daemon")
reach(os.getcwd() + "/proj/daemon.sock", "absolute")
reach("/proc/self/cwd/proj/daemon.sock", "proc-cwd")
os.symlink("../.ssh/ctl", "proj/link")
reach("proj/link", "symlink")
mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
mine.bind("proj/mine.sock")
os.rename("proj/victim.sock", "proj/mine.sock")
reach("proj/mine.sock", "renamed")

own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.bind("proj/own.sock")
own.listen(64)
stop = False
def serve():
    while not stop:
        try:
            a, _ = own.accept()
            a.sendall(b"own")
            a.close()
        except OSError:
            return
threading.Thread(target=serve, daemon=True).start()
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("proj/own.sock")
print("OWN-" + c.recv(10).decode())
c.close()
# The same descriptor number and address, a new socket each time: each
# connect is its own connection (none is taken for a restart of the last).
got = 0
for i in range(50):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(5)
    c.connect("proj/own.sock")
    got += c.recv(10) == b"own"
    c.close()
print("OWN-LOOP-%d" % got)
os.rename("proj/own.sock", "proj/own2.sock")
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("proj/own2.sock")
print("RENAMED-OWN-" + c.recv(10).decode())
c.close()
os.rename("proj/own2.sock", "proj/own.sock")
name = "\0tether-own-%d" % os.getpid()
ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ab.bind(name)
ab.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(name)
print("ABSTRACT-OK")
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.bind("/tmp/dgram.sock")
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
e.connect("/tmp/dgram.sock")
e.send(b"x")
print("DGRAM-" + d.recv(10).decode())

libc = ctypes.CDLL(None, use_errno=True)
good, bad = b"proj/own.sock", b".ssh/ctl\0\0\0\0\0"
buf = ctypes.create_string_buffer(2 + 108)
buf[0:2] = (1).to_bytes(2, "little")
buf[2:2 + len(good)] = good
def flip():
    while not stop:
        buf[2:2 + len(bad)] = bad
        buf[2:2 + len(good)] = good
th = threading.Thread(target=flip)
th.start()
won = ok = 0
deadline = time.monotonic() + 8
for i in range(1000):
    if time.monotonic() > deadline:
        break
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    if libc.connect(s.fileno(), buf, 2 + len(good)) == 0:
        try:
            got = s.recv(100)
        except OSError:
            got = b""
        if got.startswith(b"password"):
            won += 1
        elif got == b"own":
            ok += 1
    s.close()
stop = True
th.join()
print("RACE-WON" if won else "race held", won, "own", ok, "of", i + 1)
EOF
echo done`

// TestPoisonHostSockets: a pathname connect reaches only a socket the
// sandbox bound itself. The person's listeners in a home workspace (git's
// credential cache under the writable .cache, a ControlMaster socket in
// the frozen .ssh, a daemon's socket in a project directory) are reached
// by no name: not directly, not through a symlink or /proc/self/cwd, not
// renamed onto a name the sandbox bound, not by a thread that rewrites
// the address after the gate read it (1,000 connects). The sandbox's own
// pathname, abstract and datagram sockets work, renamed too. From the
// host afterwards: none of its listeners accepted a connection. On the
// old code every one of them handed its secret over.
func TestPoisonHostSockets(t *testing.T) {
	setup := func(t *testing.T) (string, string, []*hostListener) {
		ws, markers := poisonWorkspace(t, false)
		t.Setenv("HOME", ws)
		for _, d := range []string{".cache/git/credential", ".ssh", "proj"} {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o700))
		}
		chownWorkspace(t, ws)
		var hs []*hostListener
		for _, p := range []string{".cache/git/credential/socket", ".ssh/ctl", "proj/daemon.sock", "proj/victim.sock"} {
			hs = append(hs, listenOnHost(t, filepath.Join(ws, p)))
		}
		return ws, markers, hs
	}
	check := func(t *testing.T, ws, markers, out string, hs []*hostListener) {
		t.Helper()
		require.Contains(t, out, "done")
		assert.NotContains(t, out, "REACHED-")
		assert.NotContains(t, out, "RACE-WON")
		for _, w := range []string{"OWN-own", "OWN-LOOP-50", "RENAMED-OWN-own", "ABSTRACT-OK", "DGRAM-x", "race held"} {
			assert.Contains(t, out, w)
		}
		for i, h := range hs {
			assert.Zero(t, h.accepted.Load(), "host listener %d accepted connections from the sandbox", i)
		}
		for _, p := range []string{"proj/link", "proj/mine.sock", "proj/own.sock"} {
			require.NoError(t, os.Remove(filepath.Join(ws, p)))
		}
		assertHostClean(t, ws, markers, false)
	}
	t.Run("one-shot", func(t *testing.T) {
		ws, markers, hs := setup(t)
		res, out := sandboxRun(t, newTestRunner(t), ws, hostSocketScript)
		t.Log(out)
		var connects int
		for _, b := range res.CreateBlocked {
			if b.Op == "connect" {
				connects++
			}
		}
		assert.Positive(t, connects, "%+v", res.CreateBlocked)
		check(t, ws, markers, out, hs)
	})
	t.Run("session", func(t *testing.T) {
		ws, markers, hs := setup(t)
		s, end := openPoisonSession(t, ws)
		_, out := sessionRun(t, s, hostSocketScript)
		end()
		check(t, ws, markers, out, hs)
	})
}

// TestPoisonHostNetworkAbstractSockets: a sandbox that shares the host's
// network namespace (network host) reaches the host's abstract unix
// sockets by name, which no mount or file rule covers. Landlock's
// abstract-socket scope refuses the connect; the sandbox's own abstract
// socket works. From the host afterwards: its listener accepted nothing.
// On the old code the sandbox read the listener's secret.
func TestPoisonHostNetworkAbstractSockets(t *testing.T) {
	if landlockABI(landlockVersion()).scoped&llScopeAbstractUnix == 0 {
		testenv.SkipOrFail(t, "Landlock ABI 6 (abstract unix socket scope) is not available")
	}
	name := fmt.Sprintf("tether-host-abstract-%d", os.Getpid())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
	require.NoError(t, err)
	defer ln.Close()
	h := &hostListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			_, _ = c.Write([]byte("password=hunter2\n"))
			c.Close()
		}
	}()
	script := fmt.Sprintf(`python3 - <<'EOF'
import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect("\0%s")
    print("REACHED-host", s.recv(100))
except OSError as e:
    print("refused", e)
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.bind("\0tether-own-%%d" %% os.getpid())
own.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("\0tether-own-%%d" %% os.getpid())
print("OWN-OK")
EOF
echo done`, name)
	ws, markers := poisonWorkspace(t, false)
	cfg := Config{Workspace: ws, Network: NetworkHost, AllowHostNetwork: true, Limits: Limits{Pids: 64, Timeout: 60 * time.Second}}
	t.Run("one-shot", func(t *testing.T) {
		res, out := run(t, newTestRunner(t), cfg, script)
		t.Log(out)
		assert.NotContains(t, res.NotEnforced, "abstract-unix-scope")
		assert.Contains(t, out, "OWN-OK")
		assert.NotContains(t, out, "REACHED-host")
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		spec := testSpec()
		spec.Config = cfg
		s, err := m.Open(t.Context(), "default", "host-abstract", spec)
		require.NoError(t, err)
		_, out := sessionRun(t, s, script)
		require.NoError(t, m.CloseSession("default", "host-abstract"))
		assert.Contains(t, out, "OWN-OK")
		assert.NotContains(t, out, "REACHED-host")
	})
	assert.Zero(t, h.accepted.Load(), "the host's abstract listener accepted connections from the sandbox")
	assertHostClean(t, ws, markers, false)
}
