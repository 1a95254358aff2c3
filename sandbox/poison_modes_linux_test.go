package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The modes a sandbox creates with (issue 14, F3's leftover): a chmod that
// adds write for others is refused, and creation must not give it either,
// whatever the umask: `umask 0; touch f` left a 0666 file any local
// account could rewrite. The creation helper takes write for others from
// every mode it creates with, and write for the group unless the
// directory is a group's shared one (group-writable and setgid).

// umaskScript creates entries by every call that takes a mode, under
// umask 0 and umask 002, at the workspace root and in shared/ when
// shared is set.
const umaskScript = `
umask 0
touch f; mkdir d; mkfifo p; mkdir -p a/b/c; echo x > a/b/c/g
python3 -c '
import os
os.close(os.open("py", os.O_CREAT|os.O_WRONLY, 0o666))
os.close(os.open("pyx", os.O_CREAT|os.O_EXCL|os.O_WRONLY, 0o777))
os.mkdir("pyd", 0o777)
os.mkfifo("pyf", 0o666)
os.mknod("pyn", 0o666)
'
umask 002
touch gf; mkdir gd
if [ -d shared ]; then
  touch shared/gf; mkdir shared/gd
  umask 0; touch shared/of; mkdir shared/od
fi
echo done
`

// TestPoisonCreatedModes runs umaskScript in a one-shot and a session and
// checks every entry's mode from the host afterwards.
func TestPoisonCreatedModes(t *testing.T) {
	want := map[string]uint32{
		"f": 0o644, "d": 0o755, "p": 0o644, "a": 0o755, "a/b/c": 0o755, "a/b/c/g": 0o644,
		"py": 0o644, "pyx": 0o755, "pyd": 0o755, "pyf": 0o644, "pyn": 0o644,
		"gf": 0o644, "gd": 0o755,
	}
	check := func(t *testing.T, ws, out string, want map[string]uint32) {
		t.Helper()
		t.Log(out)
		require.Contains(t, out, "done")
		for p, mode := range want {
			var st unix.Stat_t
			if assert.NoError(t, unix.Lstat(filepath.Join(ws, p), &st), p) {
				assert.Equal(t, mode, st.Mode&0o7777, "%s: %o, want %o", p, st.Mode&0o7777, mode)
			}
		}
	}
	t.Run("one-shot", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		_, out := sandboxRun(t, newTestRunner(t), ws, umaskScript)
		check(t, ws, out, want)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("session", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		m := newTestSessions(t)
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "poison-modes", spec)
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = s.Run(t.Context(), Command{Shell: umaskScript, Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		require.NoError(t, m.CloseSession("default", "poison-modes"))
		check(t, ws, out.String(), want)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("group-shared directory", func(t *testing.T) {
		// A directory the owner's group shares (g+ws, made on the host):
		// group write is kept there, write for others never.
		ws, _ := poisonWorkspace(t, false)
		shared := filepath.Join(ws, "shared")
		require.NoError(t, os.Mkdir(shared, 0o755))
		require.NoError(t, os.Chown(shared, wsOwner, wsOwner))
		require.NoError(t, unix.Chmod(shared, 0o2775)) // os.Chmod drops the raw setgid bit
		_, out := sandboxRun(t, newTestRunner(t), ws, umaskScript)
		check(t, ws, out, map[string]uint32{
			"gf": 0o644, "gd": 0o755, // the root is not shared
			"shared/gf": 0o664, "shared/gd": 0o2775, "shared/of": 0o664, "shared/od": 0o2775,
		})
	})
}

// TestPoisonHomeCacheLinks: a home's writable caches (.cache, .npm,
// .cargo/registry …) stay directories. A sandbox that moves .cache away
// and puts a link to .config (or a FIFO, or a hard link) in its place is
// refused by the creation gate, by every call that could do it; and a
// home whose cache is a link (left by the host, or by an older tether)
// makes the next sandbox refuse to start, as a linked dot-entry does.
func TestPoisonHomeCacheLinks(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	for _, d := range []string{".cache/pip", ".config/git", ".npm", ".cargo/registry"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".config/git/config"), []byte("[user]\n\tname = me\n"), 0o644))
	chownWorkspace(t, ws)
	const script = `
mv .cache cache-old && echo MOVED || echo no-MOVED
ln -s .config .cache && echo LINKED-SYMLINK || echo no
ln -s .config x && mv -T x .cache && echo LINKED-RENAME || echo no
python3 -c 'import os; os.symlink(".config", "y"); os.rename("y", ".npm")' && echo LINKED-OVER || echo no
touch f && ln f .cache && echo LINKED-HARD || echo no
mkfifo .cache && echo LINKED-FIFO || echo no
(: > .cache) && echo LINKED-FILE || echo no
mkdir .cache && echo DIR-OK || echo no-DIR-OK
mkdir z && python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, b"z", -100, b".cache", 2); print("EXCHANGED-DIR" if r == 0 else "exchange refused %d" % ctypes.get_errno())'
ln -s .config w && python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, b".cargo/registry", -100, b"w", 2); print("EXCHANGED-LINK" if r == 0 else "exchange refused %d" % ctypes.get_errno())'
echo done`
	res, out := sandboxRun(t, r, ws, script)
	t.Log(out)
	require.Contains(t, out, "done")
	assert.Contains(t, out, "MOVED", "a cache may be moved away")
	assert.Contains(t, out, "DIR-OK", "and made again as a directory")
	assert.Contains(t, out, "EXCHANGED-DIR", "or exchanged with a directory")
	for _, w := range []string{"LINKED-SYMLINK", "LINKED-RENAME", "LINKED-OVER", "LINKED-HARD", "LINKED-FIFO", "LINKED-FILE", "EXCHANGED-LINK"} {
		assert.NotContains(t, out, w)
	}
	assert.True(t, refusedPath(res.CreateBlocked, ".cache"), "%+v", res.CreateBlocked)
	// From the host, after the sandbox is gone: every cache is a
	// directory, and the next sandbox starts.
	for _, c := range []string{".cache", ".npm", ".cargo/registry"} {
		fi, err := os.Lstat(filepath.Join(ws, c))
		require.NoError(t, err, c)
		assert.True(t, fi.IsDir(), "%s is %v", c, fi.Mode())
	}
	_, out = sandboxRun(t, r, ws, "echo next-ok")
	assert.Contains(t, out, "next-ok")
	assertHostClean(t, ws, markers, false)

	// A cache that is a link when a sandbox starts refuses it.
	for _, c := range []string{".cache", ".cargo/registry"} {
		p := filepath.Join(ws, c)
		require.NoError(t, os.Rename(p, p+"-host"))
		require.NoError(t, os.Symlink(filepath.Join(ws, ".config"), p))
		require.NoError(t, os.Lchown(p, wsOwner, wsOwner))
		ctx := t.Context()
		_, err := r.Run(ctx, Config{Workspace: ws, Limits: Limits{Pids: 128, Timeout: 60 * time.Second}}, Command{Shell: "echo started"})
		require.ErrorIs(t, err, ErrUnsafeWorkspace, c)
		assert.Contains(t, err.Error(), c)
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.Rename(p+"-host", p))
	}
	got, err := os.ReadFile(filepath.Join(ws, ".config/git/config"))
	require.NoError(t, err)
	assert.Equal(t, "[user]\n\tname = me\n", string(got))
}

// deepScript leaves a directory chain of more than 6,000 bytes (deeper
// than PATH_MAX) in the workspace: two chains of 15 names of 200 bytes,
// made by descriptor, one renamed into the other's deepest directory.
const deepScript = `python3 - <<'EOF'
import os
n = "d" * 200
def chain(top, k):
    os.mkdir(top)
    fd = os.open(top, os.O_DIRECTORY)
    for i in range(k):
        os.mkdir(n, dir_fd=fd)
        nfd = os.open(n, os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    return fd
fd = chain("a", 15)
os.close(chain("b", 15))
os.rename("b", "deep", dst_dir_fd=fd)
os.close(os.open(".git-not-" + "x", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
print("DEEP-MADE")
EOF`

// TestPoisonDeepChain: a sandbox leaves a chain deeper than PATH_MAX in
// the workspace (and in a home workspace); the next sandboxes, one-shot
// and session, start all the same: the walkers at start open paths a
// piece at a time (protect.OpenBeneath) instead of failing on the whole
// path.
func TestPoisonDeepChain(t *testing.T) {
	for _, home := range []bool{false, true} {
		t.Run(map[bool]string{false: "repository", true: "home"}[home], func(t *testing.T) {
			r := newTestRunner(t)
			ws, markers := poisonWorkspace(t, !home)
			if home {
				t.Setenv("HOME", ws)
			}
			_, out := sandboxRun(t, r, ws, deepScript)
			t.Log(out)
			require.Contains(t, out, "DEEP-MADE")
			_, out = sandboxRun(t, r, ws, "echo next-ok")
			assert.Contains(t, out, "next-ok", "the next one-shot starts")
			m := newTestSessions(t)
			spec := testSpec()
			spec.Config.Workspace = ws
			s, err := m.Open(t.Context(), "default", "poison-deep", spec)
			require.NoError(t, err, "the next session starts")
			var buf bytes.Buffer
			_, err = s.Run(t.Context(), Command{Shell: "echo session-ok", Stdout: &buf, Stderr: &buf})
			require.NoError(t, err)
			assert.Contains(t, buf.String(), "session-ok")
			require.NoError(t, m.CloseSession("default", "poison-deep"))
			require.NoError(t, os.RemoveAll(filepath.Join(ws, "a"))) // by descriptor: the host can clean it
			assertHostClean(t, ws, markers, !home)
		})
	}
}

// socketScript binds unix sockets where a home's programs connect (git's
// credential cache, ssh's ControlMaster, a cache), where nothing does
// (proj/), abstract and inet ones, and races an address between abstract
// and a path under .cache while binding it, printing BOUND-<name> for
// each bind that worked.
const socketScript = `umask 0
python3 -u - <<'EOF'
import ctypes, os, socket, threading, time
for p in [".cache/git/credential/socket", ".ssh/ctl-host", ".cache/x.sock", ".config/app.sock", "proj/ok.sock", "\0tether-abstract-%d" % os.getpid()]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(p)
        print("BOUND-" + p.lstrip("\0").split("-")[0])
    except OSError as e:
        print("refused", repr(p), e)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 0))
print("BOUND-inet")
libc = ctypes.CDLL(None, use_errno=True)
path = b".cache/race.sock"
buf = ctypes.create_string_buffer(2 + 108)
buf[0:2] = (1).to_bytes(2, "little")
buf[2:2 + len(path)] = path
stop = False
def flip():
    while not stop:
        buf[2] = b"\0"
        buf[2] = b"."
th = threading.Thread(target=flip)
th.start()
won = 0
# At most 2,000 attempts, and no longer than 8 s: each bind is a round trip
# to the gate while the flipping thread holds the CPU, and under the whole
# suite's load 2,000 of them outlasted the session's command timeout.
deadline = time.monotonic() + 8
for i in range(2000):
    if time.monotonic() > deadline:
        break
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if libc.bind(s.fileno(), buf, 2 + len(path)) == 0 and os.path.exists(path):
        won += 1
    s.close()
stop = True
th.join()
print("RACE-WON" if won else "race held", won, "of", i + 1)
EOF
echo done`

// TestPoisonHomeSockets: bind(2) is gated like every creation. In a home
// no socket may be bound under a dot-entry, caches included (the second
// red-team pass hijacked ~/.cache/git/credential/socket this way);
// elsewhere a socket is made without write for others whatever the
// umask; abstract and inet sockets bind as before. From the host
// afterwards: no socket under a dot-entry, and the one made is 0755.
func TestPoisonHomeSockets(t *testing.T) {
	check := func(t *testing.T, ws, markers, out string) {
		t.Helper()
		t.Log(out)
		require.Contains(t, out, "done")
		for _, w := range []string{"BOUND-.cache/git/credential/socket", "BOUND-.ssh/ctl", "BOUND-.cache/x.sock", "BOUND-.config/app.sock", "RACE-WON"} {
			assert.NotContains(t, out, w)
		}
		for _, w := range []string{"BOUND-proj/ok.sock", "BOUND-tether", "BOUND-inet", "race held"} {
			assert.Contains(t, out, w)
		}
		for _, p := range []string{".cache/git/credential/socket", ".ssh/ctl-host", ".cache/x.sock", ".config/app.sock", ".cache/race.sock"} {
			_, err := os.Lstat(filepath.Join(ws, p))
			assert.ErrorIs(t, err, os.ErrNotExist, p)
		}
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(ws, "proj/ok.sock"), &st))
		assert.Equal(t, uint32(unix.S_IFSOCK|0o755), st.Mode, "%o", st.Mode)
		require.NoError(t, os.Remove(filepath.Join(ws, "proj/ok.sock")))
		assertHostClean(t, ws, markers, false)
	}
	setup := func(t *testing.T) (string, string) {
		ws, markers := poisonWorkspace(t, false)
		t.Setenv("HOME", ws)
		for _, d := range []string{".cache/git/credential", ".ssh", ".config", "proj"} {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o700))
		}
		chownWorkspace(t, ws)
		return ws, markers
	}
	t.Run("one-shot", func(t *testing.T) {
		ws, markers := setup(t)
		res, out := sandboxRun(t, newTestRunner(t), ws, socketScript)
		assert.True(t, refusedPath(res.CreateBlocked, ".cache/git/credential/socket"), "%+v", res.CreateBlocked)
		check(t, ws, markers, out)
	})
	t.Run("session", func(t *testing.T) {
		ws, markers := setup(t)
		s, end := openPoisonSession(t, ws)
		_, out := sessionRun(t, s, socketScript)
		end()
		check(t, ws, markers, out)
	})
}

// TestPoisonRootlessSockets: a rootless tether's gate takes the caller's
// socket as root's does (pidfd_getfd of its own sandbox's processes), so
// binds work there and a path's socket gets no write for others, and a
// connect to the sandbox's own socket works.
func TestPoisonRootlessSockets(t *testing.T) {
	ru := newRootlessUser(t)
	ws := filepath.Join(ru.base, "ws-sock")
	ru.mkdir(ws)
	ru.mkdir(filepath.Join(ws, "proj"))
	d := ru.run("", ws, `umask 0; python3 -c '
import socket
kept = []
for p in ["proj/ok.sock", "\0tether-rootless"]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(p)
    kept.append(s)
    print("BOUND-" + p.lstrip("\0"))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 0))
print("BOUND-inet")
kept[0].listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("proj/ok.sock")
print("CONNECTED-own")
'`)
	require.Empty(t, d.Error)
	for _, w := range []string{"BOUND-proj/ok.sock", "BOUND-tether-rootless", "BOUND-inet", "CONNECTED-own"} {
		assert.Contains(t, d.Output, w)
	}
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(filepath.Join(ws, "proj/ok.sock"), &st))
	assert.Zero(t, st.Mode&unix.S_IWOTH, "%o", st.Mode)
}
