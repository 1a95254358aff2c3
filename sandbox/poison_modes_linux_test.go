package sandbox

import (
	"bytes"
	"fmt"
	"io/fs"
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

// TestPoisonHomeCacheLinks: a home's caches (.cache, .npm,
// .cargo/registry …) are frozen dot-entries: a sandbox cannot move .cache
// away and put a link to .config (or a FIFO, a hard link, a file, another
// directory) in its place, by any call that could do it; from the host
// afterwards .cache is the same directory, and the next sandbox of the
// profile finds it frozen still. A home whose cache is a link (left by the
// host, or by an older tether, which let the sandbox move it) makes the
// next sandbox refuse to start, as any linked dot-entry does.
func TestPoisonHomeCacheLinks(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	for _, d := range []string{".cache/pip", ".config/git", ".npm", ".cargo/registry"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".config/git/config"), []byte("[user]\n\tname = me\n"), 0o644))
	chownWorkspace(t, ws)
	var before unix.Stat_t
	require.NoError(t, unix.Lstat(filepath.Join(ws, ".cache"), &before))
	const script = `
mv .cache cache-old && echo MOVED || echo no-move
ln -s .config .cache && echo LINKED-SYMLINK || echo no
ln -s .config x && mv -T x .cache && echo LINKED-RENAME || echo no
python3 -c 'import os; os.symlink(".config", "y"); os.rename("y", ".npm")' && echo LINKED-OVER || echo no
touch f && ln f .cache && echo LINKED-HARD || echo no
mkfifo .cache && echo LINKED-FIFO || echo no
(: > .cache) && echo LINKED-FILE || echo no
mkdir .cache && echo DIR-OK || echo no-dir
mkdir z && python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, b"z", -100, b".cache", 2); print("EXCHANGED-DIR" if r == 0 else "exchange refused %d" % ctypes.get_errno())'
ln -s .config w && python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.renameat2(-100, b".cargo/registry", -100, b"w", 2); print("EXCHANGED-LINK" if r == 0 else "exchange refused %d" % ctypes.get_errno())'
echo done`
	res, out := sandboxRun(t, r, ws, script)
	t.Log(out)
	require.Contains(t, out, "done")
	for _, w := range []string{"MOVED", "DIR-OK", "EXCHANGED-DIR", "LINKED-SYMLINK", "LINKED-RENAME", "LINKED-OVER", "LINKED-HARD", "LINKED-FIFO", "LINKED-FILE", "EXCHANGED-LINK"} {
		assert.NotContains(t, out, w)
	}
	assert.True(t, refusedPath(res.CreateBlocked, ".cache"), "%+v", res.CreateBlocked)
	// From the host, after the sandbox is gone: every cache is a
	// directory, .cache the one it was, and the next sandbox of the
	// profile starts with it frozen.
	for _, c := range []string{".cache", ".npm", ".cargo/registry"} {
		fi, err := os.Lstat(filepath.Join(ws, c))
		require.NoError(t, err, c)
		assert.True(t, fi.IsDir(), "%s is %v", c, fi.Mode())
	}
	var after unix.Stat_t
	require.NoError(t, unix.Lstat(filepath.Join(ws, ".cache"), &after))
	assert.Equal(t, before.Ino, after.Ino, ".cache was replaced")
	assert.NoDirExists(t, filepath.Join(ws, "cache-old"))
	_, out = sandboxRun(t, r, ws, "echo next-ok; echo x > .cache/pip/f && echo NEXT-WROTE; mv .cache c2 && echo NEXT-MOVED; true")
	assert.Contains(t, out, "next-ok")
	assert.NotContains(t, out, "NEXT-WROTE")
	assert.NotContains(t, out, "NEXT-MOVED")
	assert.NoFileExists(t, filepath.Join(ws, ".cache/pip/f"))
	assertHostClean(t, ws, markers, false)

	// A cache that is a link when a sandbox starts refuses it.
	for _, c := range []string{".cache", ".npm"} {
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

// TestPoisonHomeCaches: in a home workspace the caches the host's programs
// run from are frozen like every other dot-entry (session-11 red team: a
// pickle in ~/.cache/jedi ran at the host's next completion; Go runs a
// toolchain from ~/go/pkg/mod/golang.org/toolchain@… when a project asks
// for a newer Go). Planted into caches that exist when the sandbox starts
// and into ones that do not: from the host afterwards, every cache is as it
// was, nothing was planted, and a cache under the sandbox's own HOME (/tmp)
// is still written, as builds write theirs.
func TestPoisonHomeCaches(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	const toolchain = "go/pkg/mod/golang.org/toolchain@v0.0.1-go1.99.0.linux-amd64"
	present := map[string]string{
		".cache/jedi/CPython-311-33/os-0.pkl":   "host pickle\n",
		".cache/go-build/00/00-d":               "host object\n",
		".npm/_cacache/index-v5/00/x":           "host index\n",
		".cargo/registry/src/x/y-1.0/build.rs":  "fn main() {}\n",
		".m2/repository/x/y.jar":                "host jar\n",
		".gradle/wrapper/dists/x/gradle":        "host gradle\n",
		"go/pkg/mod/example.com/m@v1.0.0/m.go":  "package m\n",
		toolchain + "/bin/go":                   "host go\n",
		"go/pkg/mod/cache/download/x/@v/v1.zip": "host zip\n",
	}
	for p, content := range present {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(content), 0o644))
	}
	chownWorkspace(t, ws)
	planted := []string{
		// Existing files rewritten, and new ones beside them.
		".cache/jedi/CPython-311-33/os-0.pkl", ".cache/go-build/00/00-d", ".npm/_cacache/index-v5/00/x",
		".cargo/registry/src/x/y-1.0/build.rs", ".m2/repository/x/y.jar", ".gradle/wrapper/dists/x/gradle",
		"go/pkg/mod/example.com/m@v1.0.0/m.go", toolchain + "/bin/go",
		".cache/pre-commit/repo1/hook", ".npm/_npx/1/node_modules/.bin/x", ".cargo/git/checkouts/x/build.rs",
		"go/pkg/mod/golang.org/toolchain@v0.0.1-go1.98.0.linux-amd64/bin/go",
		"go/pkg/mod/cache/download/golang.org/toolchain/@v/v0.0.1-go1.98.0.linux-amd64.ziphash",
		// Caches missing at the start: the creation gate refuses them.
		".cache/pip/wheels/x.whl", ".gradle/caches/x.jar", ".yarn/berry/cache/x.zip",
	}
	script := "m=" + markers + "\n"
	for _, p := range planted {
		script += fmt.Sprintf("mkdir -p %s 2>/dev/null; printf '#!/bin/sh\\ntouch $m/%s\\n' >> %s && chmod 755 %s && echo WROTE %s\n",
			filepath.Dir(p), filepath.Base(p), p, p, p)
	}
	script += `mv .cache cache-old && echo RENAMED .cache
mv go/pkg go/pkg-old && echo RENAMED go/pkg
rm -rf .npm/_cacache 2>/dev/null; [ -d .npm/_cacache ] || echo REMOVED .npm/_cacache
mkdir -p "$HOME/.cache/go-build" && echo own > "$HOME/.cache/go-build/x" && echo OWN-CACHE "$HOME"
echo done`
	for _, mode := range []string{"one-shot", "session"} {
		t.Run(mode, func(t *testing.T) {
			var out string
			if mode == "one-shot" {
				_, out = sandboxRun(t, r, ws, script)
			} else {
				s, end := openPoisonSession(t, ws)
				out = sessionSh(t, s, script)
				end()
			}
			require.Contains(t, out, "done")
			assert.NotContains(t, out, "WROTE")
			assert.NotContains(t, out, "RENAMED")
			assert.NotContains(t, out, "REMOVED")
			assert.Contains(t, out, "OWN-CACHE /tmp", "the sandbox's own HOME keeps its caches")
			// From the host, after the sandbox is gone.
			for _, p := range planted {
				got, err := os.ReadFile(filepath.Join(ws, p))
				if want, ok := present[p]; ok {
					require.NoError(t, err, p)
					assert.Equal(t, want, string(got), "%s changed on the host", p)
				} else {
					assert.ErrorIs(t, err, fs.ErrNotExist, "%s was planted", p)
				}
			}
			assert.NoDirExists(t, filepath.Join(ws, "cache-old"))
			assert.NoDirExists(t, filepath.Join(ws, "go/pkg-old"))
			assertHostClean(t, ws, markers, false)
		})
	}
}
