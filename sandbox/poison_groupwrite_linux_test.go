package sandbox

import (
	"archive/tar"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// groupWriteScript gives the group write on what exists by every chmod
// form (chmod g+w, an octal chmod, -R, install -m, mkdir -m, Python's
// os.chmod, fchmod and fchmodat2 without following), extracts an archive
// of 0664 and 0775 entries (what git archive makes), and does the same in
// a directory its group shares (shared/, g+ws, made on the host).
const groupWriteScript = `umask 022
touch a b c && mkdir -p tree/sub && touch tree/sub/f
chmod g+w a && echo CHMOD-OK
chmod 664 b && echo OCTAL-OK
chmod -R g+w tree && echo RECURSIVE-OK
install -m 664 /dev/null inst && echo INSTALL-OK
mkdir -m 775 made && echo MKDIR-OK
python3 -c '
import os
os.chmod("c", 0o660)
fd = os.open("tree/sub/f", os.O_RDONLY)
os.fchmod(fd, 0o664)
os.chmod("tree", 0o775, follow_symlinks=False)
print("PYTHON-OK")
'
mkdir x && tar xf t.tar -C x && echo TAR-OK
touch shared/f && chmod g+w shared/f && echo SHARED-OK
touch shared/src && chmod g+w shared/src
python3 -c '
import os
os.umask(0)
def tried(name, fn):
    try:
        fn()
        print(name, "went")
    except OSError as e:
        print(name, "refused", e.errno)
os.close(os.open("shared/mv", os.O_CREAT | os.O_WRONLY, 0o666))
tried("RENAME-FILE", lambda: os.rename("shared/mv", "moved"))
tried("LINK-FILE", lambda: os.link("shared/src", "hl"))
os.mkdir("shared/sub", 0o777)
os.close(os.open("shared/sub/inner", os.O_CREAT | os.O_WRONLY, 0o666))
tried("RENAME-DIR", lambda: os.rename("shared/sub", "sub"))
def exchange(a, b):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        raise OSError(ctypes.get_errno(), "renameat2")
os.mkdir("xchg", 0o755)
tried("EXCHANGE", lambda: exchange(b"shared/sub", b"xchg"))
os.mkdir("shared/sub2", 0o777)
tried("SHARED-MOVE", lambda: os.rename("shared/mv", "shared/sub2/mv"))
'
mkdir -p shared/sub3 && mv shared/sub3 sub3; echo mv=$?
echo done`

// TestPoisonGroupWrite: no chmod gives the group write on what the
// sandbox leaves outside a directory its group shares (F3's leftover: a
// chmod g+w, an octal 664, install -m 664, tar's 0664 entries). The bit
// comes off and the call succeeds, so git archive's tarballs, cp -p and
// install keep working; in a g+ws directory it stays, as it does for
// creations. From the host afterwards: nothing outside shared/ is
// group-writable. On the old code every chmod above left it.
func TestPoisonGroupWrite(t *testing.T) {
	setup := func(t *testing.T) (string, string) {
		ws, markers := poisonWorkspace(t, false)
		f, err := os.Create(filepath.Join(ws, "t.tar"))
		require.NoError(t, err)
		tw := tar.NewWriter(f)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "d/", Mode: 0o775, Typeflag: tar.TypeDir}))
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "d/f", Mode: 0o664, Size: 2, Typeflag: tar.TypeReg}))
		_, err = tw.Write([]byte("x\n"))
		require.NoError(t, err)
		require.NoError(t, tw.Close())
		require.NoError(t, f.Close())
		shared := filepath.Join(ws, "shared")
		require.NoError(t, os.Mkdir(shared, 0o755))
		chownWorkspace(t, ws)
		require.NoError(t, unix.Chmod(shared, 0o2775)) // os.Chmod drops the raw setgid bit
		return ws, markers
	}
	check := func(t *testing.T, ws, markers, out string) {
		t.Helper()
		t.Log(out)
		require.Contains(t, out, "done")
		for _, w := range []string{"CHMOD-OK", "OCTAL-OK", "RECURSIVE-OK", "INSTALL-OK", "MKDIR-OK", "PYTHON-OK", "TAR-OK", "SHARED-OK"} {
			assert.Contains(t, out, w)
		}
		// Out of a shared directory by rename, link or exchange: EXDEV
		// (mv copies instead); a shared directory keeps its bits; within
		// shared directories a move goes.
		for _, w := range []string{"RENAME-FILE refused 18", "LINK-FILE refused 18", "RENAME-DIR refused 18", "EXCHANGE refused 18", "SHARED-MOVE went"} {
			assert.Contains(t, out, w)
		}
		require.NoError(t, filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(ws, p)
			var st unix.Stat_t
			require.NoError(t, unix.Lstat(p, &st))
			if rel == "shared" || strings.HasPrefix(rel, "shared/") || st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return nil
			}
			assert.Zero(t, st.Mode&unix.S_IWGRP, "%s is writable for its group (%o)", rel, st.Mode)
			return nil
		}))
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(ws, "shared/f"), &st))
		assert.NotZero(t, st.Mode&unix.S_IWGRP, "shared/f: a g+ws directory keeps group write (%o)", st.Mode)
		require.NoError(t, unix.Lstat(filepath.Join(ws, "x/d/f"), &st))
		assert.Equal(t, uint32(0o644), st.Mode&0o7777, "x/d/f: %o", st.Mode)
		// The host's own setgid directory, and those made in it (the
		// kernel's setgid inheritance).
		require.NoError(t, filepath.WalkDir(filepath.Join(ws, "shared"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = unix.Chmod(p, 0o755)
			}
			return err
		}))
		assertHostClean(t, ws, markers, false)
	}
	t.Run("one-shot", func(t *testing.T) {
		ws, markers := setup(t)
		_, out := sandboxRun(t, newTestRunner(t), ws, groupWriteScript)
		check(t, ws, markers, out)
	})
	t.Run("session", func(t *testing.T) {
		ws, markers := setup(t)
		s, end := openPoisonSession(t, ws)
		_, out := sessionRun(t, s, groupWriteScript)
		end()
		check(t, ws, markers, out)
	})
}
