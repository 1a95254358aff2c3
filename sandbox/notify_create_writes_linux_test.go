package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateGateWriteOpens: an open for writing without O_CREAT and
// truncate(2), which the creation gate now judges and its helper performs
// (gatedOpen), do what the kernel would: an existing workspace file opened
// O_RDWR, O_WRONLY|O_TRUNC, through a symlink and through /proc/self/fd;
// /dev/null, the caller's own stdout (a pipe of the sandbox's, which
// /dev/stdout and /proc/self/fd/1 reopen: a magic link's file), a memfd
// through /proc/self/fd, and a FIFO that has a reader; truncate of a file and
// through a symlink; O_CLOEXEC kept; and the caller's own failures
// (ENOENT, EISDIR, ELOOP for O_NOFOLLOW of a symlink) are its own. In
// every kind of sandbox.
func TestCreateGateWriteOpens(t *testing.T) {
	script := `set -e
printf 'abc\n' > f; ln -s f lnk; mkdir d; mkfifo fifo
python3 - <<'PY' | cat
import errno, fcntl, os
def w(p, flags, data):
    fd = os.open(p, flags)
    os.write(fd, data)
    return fd
os.close(w("f", os.O_RDWR, b"A"))
os.close(w("lnk", os.O_WRONLY | os.O_APPEND, b"via-link\n"))
fd = os.open("f", os.O_RDONLY)
os.close(w("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND, b"via-proc\n"))
os.close(fd)
with open("f") as f: print("f:", f.read().replace("\n", "|"))
g = os.open("g", os.O_CREAT | os.O_WRONLY, 0o644); os.write(g, b"long content\n"); os.close(g)
os.close(w("g", os.O_WRONLY | os.O_TRUNC, b"short\n"))
with open("g") as f: print("g:", f.read().strip())
os.close(w("/dev/null", os.O_RDWR, b"x"))
os.close(w("/dev/stdout", os.O_WRONLY, b"to-dev-stdout\n"))
os.close(w("/proc/self/fd/1", os.O_WRONLY, b"to-proc-fd-1\n"))
os.close(w("/dev/stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, b"to-dev-stdout-creat\n"))
m = os.memfd_create("m")
os.close(w("/proc/self/fd/%d" % m, os.O_RDWR, b"memfd"))
print("memfd:", os.pread(m, 10, 0).decode())
r = os.open("fifo", os.O_RDONLY | os.O_NONBLOCK)
os.close(w("fifo", os.O_WRONLY, b"through-fifo"))
print("fifo:", os.read(r, 100).decode())
os.truncate("g", 2); os.truncate("lnk", 1)
print("sizes:", os.path.getsize("g"), os.path.getsize("f"))
c = os.open("g", os.O_WRONLY | os.O_CLOEXEC)
print("cloexec", bool(fcntl.fcntl(c, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))
for what, f, want in (("missing", lambda: os.open("nope", os.O_WRONLY), errno.ENOENT),
                      ("dir", lambda: os.open("d", os.O_WRONLY), errno.EISDIR),
                      ("nofollow", lambda: os.open("lnk", os.O_WRONLY | os.O_NOFOLLOW), errno.ELOOP),
                      ("truncate-dir", lambda: os.truncate("d", 0), errno.EISDIR),
                      ("truncate-missing", lambda: os.truncate("nope", 0), errno.ENOENT)):
    try:
        f(); print(what, "no error")
    except OSError as e:
        print(what, "errno", errno.errorcode[e.errno], "want", errno.errorcode[want])
PY
echo done`
	for _, m := range createModes() {
		t.Run(m.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, true)
			res, out := m.run(t, ws, script)
			t.Log(out)
			require.Contains(t, out, "done\n")
			assert.Empty(t, res.CreateBlocked)
			for _, l := range []string{"f: Abc|via-link|via-proc|", "g: short", "to-dev-stdout\n", "to-proc-fd-1", "to-dev-stdout-creat", "memfd: memfd", "fifo: through-fifo",
				"sizes: 2 1", "cloexec True", "missing errno ENOENT want ENOENT", "dir errno EISDIR want EISDIR",
				"nofollow errno ELOOP want ELOOP", "truncate-dir errno EISDIR want EISDIR", "truncate-missing errno ENOENT want ENOENT"} {
				assert.Contains(t, out, l)
			}
			assert.NotContains(t, out, "no error")
			b, err := os.ReadFile(filepath.Join(ws, "f"))
			require.NoError(t, err)
			assert.Equal(t, "A", string(b), "the host sees the truncated file")
			assertHostClean(t, ws, markers, true)
		})
	}
}

// TestCreateGateControllingTerminal: /dev/tty opened for writing (the
// way getpass, ssh and gpg's pinentry reach the person) is the caller's
// controlling terminal, though the creation helper that performs the
// open has none of its own.
func TestCreateGateControllingTerminal(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "tty", testSpec())
	require.NoError(t, err)
	var out syncBuffer
	res, err := s.Interactive(t.Context(),
		Command{Shell: `python3 -c 'import os
fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
os.write(fd, b"via-dev-tty\n")
print("same terminal", os.tcgetpgrp(fd) == os.tcgetpgrp(1), os.ttyname(1))'; echo done`},
		Terminal{Stdin: bytes.NewReader(nil), Stdout: &out, Size: Winsize{Rows: 24, Cols: 80}})
	require.NoError(t, err)
	t.Log(out.String())
	assert.Zero(t, res.ExitCode)
	assert.Contains(t, out.String(), "via-dev-tty")
	assert.Contains(t, out.String(), "same terminal True")
}
