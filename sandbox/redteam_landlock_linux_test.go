package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestLandlockMetadataOutsideThePolicy: an enforced mandate confines what
// a command may change, not only what it may read. Landlock governs no
// metadata call (chmod, chown, utimensat, setxattr): without the mount
// plan a command whose mandate allows only ok/ made secret/key
// world-readable and writable on the host, back-dated it and tagged it.
// With the plan (Landlock.ReadOnlyWorkspace) the workspace is read-only
// outside ok/, so each of these fails with EROFS (setxattr with EOPNOTSUPP
// everywhere: seccomp_files_on.go), in a one-shot sandbox and in a
// session, while the same calls inside ok/ work; the host finds
// everything outside ok/ as it was.
func TestLandlockMetadataOutsideThePolicy(t *testing.T) {
	const outside = `chmod 0640 secret/key; echo chmod=$?
chown 0:0 secret/key; echo chown=$?
touch -d 2001-01-01 secret/key; echo touch=$?
python3 -c 'import os; os.setxattr("secret/key", "user.planted", b"x")'; echo setxattr=$?
mv secret/key secret/moved; echo rename=$?
chmod 0750 secret; echo chmod-dir=$?
`
	const inside = `chmod 0600 ok/file && touch -d 2001-01-01 ok/file && echo more >> ok/file &&
mkdir ok/made && mv ok/made ok/moved && echo inside-ok`
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, secret := llWorkspace(t)
			require.NoError(t, os.Chmod(secret, 0o600))
			before, err := os.Stat(secret)
			require.NoError(t, err)
			cfg := Config{Workspace: ws, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "ok")}, ReadOnlyWorkspace: true}}
			var out bytes.Buffer
			cmd := Command{Shell: outside + inside, Stdout: &out, Stderr: &out}
			if session {
				s, err := newTestSessions(t).Open(t.Context(), "default", "ll-meta", SessionSpec{Config: cfg})
				require.NoError(t, err)
				_, err = s.Exec(t.Context(), cmd, ExecOptions{})
				require.NoError(t, err)
				require.NoError(t, s.Close())
			} else {
				_, err := newTestRunner(t).Run(t.Context(), cfg, cmd)
				require.NoError(t, err)
			}
			t.Log(out.String())
			for _, call := range []string{"chmod", "chown", "touch", "setxattr", "rename", "chmod-dir"} {
				assert.NotContains(t, "\n"+out.String(), "\n"+call+"=0\n", "%s outside the mandate succeeded", call)
			}
			assert.GreaterOrEqual(t, strings.Count(out.String(), "Read-only file system"), 4, "the read-only mount refused them")
			assert.Contains(t, out.String(), "inside-ok", "the same calls inside the write tree work")
			// From the host, after the sandbox is gone.
			after, err := os.Stat(secret)
			require.NoError(t, err, "the file outside the mandate was moved")
			assert.Equal(t, os.FileMode(0o600), after.Mode().Perm(), "the mode of a file outside the mandate changed")
			assert.Equal(t, before.ModTime(), after.ModTime(), "the times of a file outside the mandate changed")
			// chown within the sandbox's ID mapping (its root only) changes
			// no owner, but does change the file's ctime, as every other
			// call here would.
			assert.Equal(t, before.Sys().(*syscall.Stat_t).Ctim, after.Sys().(*syscall.Stat_t).Ctim, "the metadata of a file outside the mandate changed")
			_, err = unix.Getxattr(secret, "user.planted", nil)
			assert.ErrorIs(t, err, unix.ENODATA, "an xattr was set on a file outside the mandate")
			assert.NoFileExists(t, filepath.Join(ws, "secret", "moved"))
			dir, err := os.Stat(filepath.Dir(secret))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o755), dir.Mode().Perm(), "the mode of a directory outside the mandate changed")
			ok, err := os.Stat(filepath.Join(ws, "ok", "file"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), ok.Mode().Perm(), "the write tree's chmod landed")
			assert.DirExists(t, filepath.Join(ws, "ok", "moved"))
		})
	}
}

// TestLandlockRuleThroughSymlink: a mandated tree that is, when the
// sandbox starts, a symlink to a directory outside the mandate (planted by
// an observe-mode run, or by anyone before approval) must not grant that
// directory: the person approved "data/**", not "secret/**".
func TestLandlockRuleThroughSymlink(t *testing.T) {
	for _, c := range []struct{ name, link, rule, via string }{
		// The mandated tree itself is the link.
		{"last", "data", "data", "data"},
		// A parent of the mandated tree is the link: pub/ -> secret/
		// makes a mandated pub/sub grant secret/sub.
		{"parent", "pub", "pub/sub", "pub/sub"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRunner(t)
			ws, secret := llWorkspace(t)
			sdir := filepath.Dir(secret)
			require.NoError(t, os.Mkdir(filepath.Join(sdir, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(sdir, "sub", "key"), []byte(llSecret+"\n"), 0o644))
			require.NoError(t, os.Symlink("secret", filepath.Join(ws, c.link)))
			policy := &Landlock{Trees: []string{filepath.Join(ws, c.rule)}}
			res, out := llRun(t, r, ws, "cat "+c.via+"/key; cat secret/key; cat secret/sub/key; echo x > "+c.via+"/new; echo after", policy)
			t.Log(out)
			assert.NotContains(t, out, llSecret, "the secret was read through the mandated link")
			assert.Contains(t, out, "after")
			assert.Contains(t, out, "left out: a symbolic link is on its path", "the refused rule is said")
			assert.NotEmpty(t, res.PathsRefused)
			assert.NoFileExists(t, filepath.Join(sdir, "new"))
			assert.NoFileExists(t, filepath.Join(sdir, "sub", "new"))
		})
	}
}

// TestLandlockSessionRuleThroughSymlink: a session's supervisor applies
// the same ruleset and must refuse the same link.
func TestLandlockSessionRuleThroughSymlink(t *testing.T) {
	m := newTestSessions(t)
	ws, secret := llWorkspace(t)
	require.NoError(t, os.Symlink("secret", filepath.Join(ws, "data")))
	spec := SessionSpec{Config: Config{Workspace: ws, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "data")}}}}
	s, err := m.Open(t.Context(), "default", "ll-link", spec)
	require.NoError(t, err)
	var out bytes.Buffer
	res, err := s.Exec(t.Context(), Command{Shell: "cat data/key; echo x > data/new; echo after", Stdout: &out, Stderr: &out}, ExecOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	t.Log(out.String())
	assert.NotContains(t, out.String(), llSecret, "the secret was read through the mandated link")
	assert.Contains(t, out.String(), "after")
	assert.True(t, refusedAt(res, secret, "fs.read_file"), "%+v", res.PathsRefused)
	assert.NoFileExists(t, filepath.Join(filepath.Dir(secret), "new"))
}
