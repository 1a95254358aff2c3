package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
)

// The poisoning suite: each test runs what a hostile command would in the
// sandbox, then checks from the host, after the sandbox has exited, that
// nothing it left behind raises anyone's privileges or makes the host run
// planted code (docs/workspace.md).

// wsOwner is the unprivileged owner of the poisoning workspaces.
const wsOwner = 4242

// poisonWorkspace returns a workspace owned by wsOwner, and a host
// directory outside it holding the markers planted code would write.
func poisonWorkspace(t *testing.T, git bool) (ws, markers string) {
	t.Helper()
	ws, markers = t.TempDir(), t.TempDir()
	if git {
		hostGit(t, ws, "init", "-q")
		require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o644))
		hostGit(t, ws, "add", "README")
		hostGit(t, ws, "commit", "-q", "-m", "one")
	}
	require.NoError(t, filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
	require.NoError(t, os.Chmod(markers, 0o777))
	return ws, markers
}

// hostGit runs git on the host in dir as a person would, with the
// repository's own configuration and hooks in effect and nothing else.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// plant is a shell fragment that makes every git entry point of a git
// directory gd run code writing a marker under markers.
func plant(gd, markers string) string {
	return fmt.Sprintf(`gd=%s; m=%s
printf '[core]\n\tfsmonitor = "touch $m/fsmonitor; false"\n\thooksPath = /proc/self/cwd/evil\n[alias]\n\tst = !touch $m/alias\n' > $gd/config
mkdir -p $gd/hooks; for h in pre-commit post-checkout reference-transaction pre-auto-gc; do printf '#!/bin/sh\ntouch %%s/hook-%%s\n' $m $h > $gd/hooks/$h; chmod 755 $gd/hooks/$h; done
printf '[core]\n\tfsmonitor = "touch $m/worktree-config; false"\n' > $gd/config.worktree
mkdir -p /tmp/evilgit/hooks && cp -r $gd/. /tmp/evilgit/ 2>/dev/null; echo /tmp/evilgit > $gd/commondir
mkdir -p $gd/info && echo '* filter=evil' > $gd/info/attributes
mkdir -p $gd/objects/info && echo /tmp/evilobjects > $gd/objects/info/alternates
true`, gd, markers)
}

// assertHostClean checks, from the host, the promises of every poisoning
// test: host git runs nothing planted, no marker was written outside the
// workspace, and nothing in the workspace can raise privileges.
func assertHostClean(t *testing.T, ws, markers string, git bool) {
	t.Helper()
	// First what the sandbox left, before host git (as root) adds its own.
	assertNoPrivilege(t, ws)
	if git {
		hostGit(t, ws, "status")
		hostGit(t, ws, "log", "--oneline")
		hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "host")
	}
	entries, err := os.ReadDir(markers)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, "planted code ran on the host, or the sandbox wrote outside its workspace")
}

// assertNoPrivilege walks ws with lstat and getxattr: no setuid or setgid
// file, no file capability, no device node, nothing owned by another user
// than the workspace's, no reservation left behind.
func assertNoPrivilege(t *testing.T, ws string) {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(ws, &st))
	owner, group := st.Uid, st.Gid
	require.NoError(t, filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		mode := st.Mode & unix.S_IFMT
		assert.Zero(t, st.Mode&(unix.S_ISUID|unix.S_ISGID), "%s is setuid or setgid (%o)", rel, st.Mode)
		assert.NotEqual(t, uint32(unix.S_IFCHR), mode, "%s is a character device", rel)
		assert.NotEqual(t, uint32(unix.S_IFBLK), mode, "%s is a block device", rel)
		assert.Equal(t, owner, st.Uid, "%s belongs to uid %d", rel, st.Uid)
		assert.Equal(t, group, st.Gid, "%s belongs to gid %d", rel, st.Gid)
		if mode == unix.S_IFLNK {
			target, _ := os.Readlink(p)
			assert.False(t, strings.HasPrefix(target, reservedTarget), "%s: a reservation outlived its sandbox", rel)
		} else {
			// Another local account could rewrite or replace it (a
			// symlink's own mode means nothing).
			assert.Zero(t, st.Mode&unix.S_IWOTH, "%s is writable for others (%o)", rel, st.Mode)
			_, err := unix.Lgetxattr(p, "security.capability", nil)
			assert.ErrorIs(t, err, unix.ENODATA, "%s has file capabilities", rel)
			for _, acl := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
				_, err := unix.Lgetxattr(p, acl, nil)
				assert.ErrorIs(t, err, unix.ENODATA, "%s has an ACL (%s)", rel, acl)
			}
		}
		return nil
	}))
}

func sandboxRun(t *testing.T, r *Runner, ws, script string) (*Result, string) {
	t.Helper()
	return run(t, r, Config{Workspace: ws, Limits: Limits{Pids: 128, Timeout: 60 * time.Second}}, script)
}

// privilegeScript makes setuid and setgid files by every system call
// that sets a mode, file capabilities, device nodes and chowns, printing
// "NAME refused" for each one the sandbox refused.
const privilegeScript = `
cp /bin/sh sh; chmod 4755 sh; chmod u+s sh; chmod g+s sh; chmod 6755 sh
install -m 4755 /bin/true inst; install -m 2755 /bin/true inst2
cp -p /usr/bin/passwd passwd; cp --preserve=mode /usr/bin/passwd passwd2
mkdir -m 2775 sgid-dir; mkdir d2 && chmod g+s d2
setcap cap_setuid+ep sh; setcap cap_dac_override=eip inst
mknod null c 1 3; mknod disk b 8 0; mknod whiteout c 0 0; mknod fifo p
/usr/bin/python3 - <<'EOF'
import os
for name, fn in [
    ("open", lambda: os.close(os.open("py-open", os.O_CREAT | os.O_WRONLY, 0o4755))),
    ("open-sgid", lambda: os.close(os.open("py-open2", os.O_CREAT | os.O_WRONLY, 0o2755))),
    ("tmpfile", lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755))),
    ("chmod", lambda: os.chmod("sh", 0o4755)),
    ("fchmod", lambda: os.fchmod(os.open("sh", os.O_RDONLY), 0o2755)),
    ("fchmodat-nofollow", lambda: os.chmod("sh", 0o4755, follow_symlinks=False)),
    ("mkdir", lambda: os.mkdir("py-dir", 0o2755)),
    ("mknod-reg-suid", lambda: os.mknod("py-node", 0o104755)),
    ("mknod-chr", lambda: os.mknod("py-chr", 0o20644, os.makedev(1, 3))),
    ("xattr-v2", lambda: os.setxattr("sh", "security.capability", bytes([0, 0, 0, 2, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))),
    ("xattr-v3", lambda: os.setxattr("sh", "security.capability", bytes([0, 0, 0, 3, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))),
    ("chown-other", lambda: os.chown("sh", 1234, 1234)),
    ("chown-nobody", lambda: os.chown("sh", 65534, -1)),
]:
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, "refused:", e.strerror)
EOF
ls -ln
`

// assertPrivilegeRefused checks privilegeScript's output.
func assertPrivilegeRefused(t *testing.T, out string) {
	t.Helper()
	for _, refused := range []string{"open refused", "open-sgid refused", "tmpfile refused", "chmod refused", "fchmod refused",
		"mkdir refused", "mknod-reg-suid refused", "mknod-chr refused", "xattr-v2 refused", "xattr-v3 refused", "chown-other refused", "chown-nobody refused"} {
		assert.Contains(t, out, refused)
	}
}

// TestPoisonPrivilegeArtefacts: setuid and setgid files by every syscall
// that sets a mode, file capabilities, device nodes and chowns, in a
// workspace of an unprivileged owner and in a root-owned one.
func TestPoisonPrivilegeArtefacts(t *testing.T) {
	r := newTestRunner(t)
	for _, owner := range []int{wsOwner, 0} {
		t.Run(fmt.Sprintf("owner %d", owner), func(t *testing.T) {
			ws, markers := poisonWorkspace(t, false)
			require.NoError(t, os.Chown(ws, owner, owner))
			_, out := sandboxRun(t, r, ws, privilegeScript)
			t.Log(out)
			assertPrivilegeRefused(t, out)
			assertHostClean(t, ws, markers, false)
			// What was made belongs to the workspace's owner.
			var st unix.Stat_t
			require.NoError(t, unix.Lstat(filepath.Join(ws, "sh"), &st))
			assert.Equal(t, uint32(owner), st.Uid, "files belong to the workspace's owner")
			assert.Equal(t, uint32(0o755), st.Mode&0o7777, "the shell was copied, without its privileges")
		})
	}
}

// renameErrors are how a protected parent's rename fails: the creation
// gate refuses the name (EPERM), or the bind on it is busy (EBUSY).
const (
	renameErrors  = `(Operation not permitted|Device or resource busy)`
	refusedRename = `mv: cannot move '[^']+' to '[^']+': ` + renameErrors
)

// TestPoisonGitControlSurface plants code in every git entry point of an
// existing repository, renames and links the protected parents, and checks
// that a host git in the workspace runs none of it; ordinary git work in
// the sandbox still succeeds.
func TestPoisonGitControlSurface(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	_, out := sandboxRun(t, r, ws, controlSurfaceScript(markers))
	t.Log(out)
	for _, ok := range []string{"branch-ok", "commit-ok", "stash-ok", "status-ok"} {
		assert.Contains(t, out, ok, "ordinary git work succeeds in the sandbox")
	}
	assert.Regexp(t, `cannot move '.git/objects' to '.git/o2': `+renameErrors, out, "protected parents cannot be renamed")
	assertHostClean(t, ws, markers, true)
	log := hostGit(t, ws, "log", "--oneline", "feature")
	assert.Contains(t, log, "two", "the sandbox's commit landed")
}

// controlSurfaceScript plants code in the root repository's control
// surface, renames, exchanges and links its protected parents, and does
// ordinary git work, echoing branch-ok, commit-ok, stash-ok, status-ok.
func controlSurfaceScript(markers string) string {
	gitc := "git -c user.name=s -c user.email=s@s"
	return fmt.Sprintf(`
set -x
%[1]s checkout -q -b feature && echo branch-ok
echo more >> README && %[1]s add README && %[1]s commit -q -m two && echo commit-ok
echo wip >> README && %[1]s stash -q && %[1]s stash list | grep -q stash && echo stash-ok
%[2]s
mv .git .git-orig; mv .git/objects .git/o2; mv .git/info .git/i2
/usr/bin/python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("decoy")
r = libc.renameat2(-100, b"decoy", -100, b".git", 2)
print("exchange", r, os.strerror(ctypes.get_errno()))'
ln .git/config cfg-link; ln -s .git/config cfg-sym; echo evil >> cfg-sym
echo 'gitdir: /tmp/evilgit' > .git.new && mv .git.new .git
%[1]s status >/dev/null && echo status-ok
`, gitc, plant(".git", markers))
}

// TestPoisonGitSymlinkRefused: a .git that is a symlink (or a protected
// parent that is one) is refused before anything runs; the host files it
// points to are untouched.
func TestPoisonGitSymlinkRefused(t *testing.T) {
	r := newTestRunner(t)
	for _, link := range []string{".git", ".ssh", ".bashrc", ".local", ".emacs.d", ".vimrc"} {
		t.Run(link, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, false)
			target := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(target, "config"), []byte("host\n"), 0o644))
			require.NoError(t, os.Symlink(target, filepath.Join(ws, link)))
			var out bytes.Buffer
			res, err := r.Run(t.Context(), Config{Workspace: ws}, Command{Shell: "echo ran; echo evil > " + link + "/config", Stdout: &out, Stderr: &out})
			require.ErrorIs(t, err, ErrUnsafeWorkspace)
			assert.Nil(t, res)
			assert.NotContains(t, out.String(), "ran", "nothing ran")
			b, err := os.ReadFile(filepath.Join(target, "config"))
			require.NoError(t, err)
			assert.Equal(t, "host\n", string(b))
			require.NoError(t, os.Remove(filepath.Join(ws, link)))
			assertHostClean(t, ws, markers, false)
		})
	}
}

// TestPoisonGitFile: a .git file ("gitdir: PATH") naming a git directory
// inside the workspace: the file and that directory's control surface are
// frozen, and neither can be renamed away.
func TestPoisonGitFile(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".repo"), 0o755))
	hostGit(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(ws, ".repo/gd"))
	hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "one")
	require.NoError(t, filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
	_, out := sandboxRun(t, r, ws, fmt.Sprintf(`
git -c user.name=s -c user.email=s@s commit -q --allow-empty -m two && echo commit-ok
%s
mv .repo .repo2; mv .repo/gd .repo/gd2
echo 'gitdir: /tmp/evilgit' > .git
`, plant(".repo/gd", markers)))
	t.Log(out)
	assert.Contains(t, out, "commit-ok")
	assertHostClean(t, ws, markers, true)
}

// TestPoisonReservations: protected paths that do not exist when the
// sandbox starts (a fresh git init, hooks, commondir, alternates, rc files,
// .envrc, fish config, ssh files) cannot be created, in one-shot runs and
// in sessions, in a home workspace; the reservations are gone once the
// sandbox is. In a project workspace, shell and ssh files may be made
// (nothing on the host runs them there), git's and direnv's may not.
func TestPoisonReservations(t *testing.T) {
	script := reservationScript
	t.Run("one-shot, empty workspace", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := poisonWorkspace(t, false)
		t.Setenv("HOME", ws) // a home workspace
		_, out := sandboxRun(t, r, ws, script(markers))
		t.Log(out)
		assert.NotContains(t, out, "init=0", "git init fails: .git is reserved")
		assertNothingCreated(t, ws)
		assertHostClean(t, ws, markers, false)
	})
	t.Run("one-shot, repository without hooks", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := poisonWorkspace(t, true)
		t.Setenv("HOME", ws) // a home workspace
		for _, d := range []string{"hooks", "info", "objects/info"} {
			require.NoError(t, os.RemoveAll(filepath.Join(ws, ".git", d)))
		}
		_, out := sandboxRun(t, r, ws, plant(".git", markers)+"\ngit -c user.name=s -c user.email=s@s commit -q --allow-empty -m two && echo commit-ok")
		t.Log(out)
		assert.Contains(t, out, "commit-ok", "git works with the reservations in place")
		assertHostClean(t, ws, markers, true)
		for _, p := range []string{".git/hooks", ".git/commondir", ".git/config.worktree", ".git/info", ".git/objects/info"} {
			_, err := os.Lstat(filepath.Join(ws, p))
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s: reservations are removed at teardown", p)
		}
	})
	t.Run("one-shot, project workspace", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := poisonWorkspace(t, false)
		_, out := sandboxRun(t, r, ws, script(markers))
		t.Log(out)
		assert.NotContains(t, out, "init=0", "git init fails: .git is reserved in any workspace")
		for _, p := range []string{".git", ".envrc", ".tether.yaml"} {
			_, err := os.Lstat(filepath.Join(ws, p))
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host after the sandbox", p)
		}
		_, err := os.Lstat(filepath.Join(ws, ".zlogin"))
		assert.NoError(t, err, "a project's own .zlogin may be written: nothing runs it")
		assertHostClean(t, ws, markers, false)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		ws, markers := poisonWorkspace(t, false)
		t.Setenv("HOME", ws) // a home workspace
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "poison", spec)
		require.NoError(t, err)
		// Mid-session, in several commands, and from the background.
		var out, errb bytes.Buffer
		_, err = s.Run(t.Context(), Command{Shell: script(markers), Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		t.Log(out.String(), errb.String())
		bg, err := s.Start(Command{Shell: "sleep 0.2; echo evil > .envrc; mkdir .git; echo evil > .git/config"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		_, _ = bg.Wait(ctx)
		// While the session lives, the host sees nothing planted either.
		_, err = os.ReadFile(filepath.Join(ws, ".envrc"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
		require.NoError(t, m.CloseSession("default", "poison"))
		assertNothingCreated(t, ws)
		assertHostClean(t, ws, markers, false)
	})
}

// reservationScript creates protected paths that did not exist when the
// sandbox started: a git init, hooks, rc files, .envrc, fish and ssh
// files, each planting code that writes a marker under markers.
func reservationScript(markers string) string {
	return fmt.Sprintf(`
git init -q; echo init=$?
mkdir -p .git/hooks; printf '#!/bin/sh\ntouch %[1]s/init-hook\n' > .git/hooks/pre-commit
for f in .bashrc .bash_profile .bash_login .bash_logout .profile .zshenv .zlogin .kshrc .cshrc .login .inputrc .envrc .tether.yaml .gitconfig; do
	echo "touch %[1]s/rc-$f" > $f
done
rm -f .bashrc; mv .profile x; ln -sf /tmp/evil .bashrc
mkdir -p .config/fish .config/git .ssh; echo 'touch %[1]s/fish' > .config/fish/config.fish; echo evil > .ssh/authorized_keys
ls -la
`, markers)
}

// assertNothingCreated checks that no protected path exists in ws.
func assertNothingCreated(t *testing.T, ws string) {
	t.Helper()
	for _, p := range []string{".git", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv", ".zlogin",
		".kshrc", ".cshrc", ".login", ".inputrc", ".envrc", ".tether.yaml", ".gitconfig", ".config", ".ssh"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host after the sandbox", p)
	}
}

// TestPoisonReservationsGC: reservations whose sandbox died without
// releasing them (a crashed tether) are removed by GC, and only if they
// are still what tether made.
func TestPoisonReservationsGC(t *testing.T) {
	requireSandbox(t)
	state := stateTempDir(t)
	ws, _ := poisonWorkspace(t, true)
	require.NoError(t, os.RemoveAll(filepath.Join(ws, ".git/hooks")))
	pr, err := planProtection(ws, ws, true)
	require.NoError(t, err)
	require.NotEmpty(t, pr.mounts)
	target, err := os.Readlink(filepath.Join(ws, ".bashrc"))
	require.NoError(t, err, "reserved while the sandbox lives")
	assert.Equal(t, reservedTarget, target)
	b, err := os.ReadFile(filepath.Join(ws, ".git/commondir"))
	require.NoError(t, err)
	assert.Equal(t, commondirPlaceholder, string(b))
	hostGit(t, ws, "status") // a live reservation changes nothing for git
	// A person replaced one reservation meanwhile: it is theirs now.
	require.NoError(t, os.Remove(filepath.Join(ws, ".envrc")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".envrc"), []byte("mine\n"), 0o644))

	// While the sandbox holds them, GC leaves them.
	_, err = GC(GCOptions{StateRoot: state, CgroupPrefix: testPrefix + "-gc-" + strconv.Itoa(os.Getpid())})
	require.NoError(t, err)
	_, err = os.Readlink(filepath.Join(ws, ".bashrc"))
	require.NoError(t, err, "a live sandbox's reservation is kept")
	// The holder dies without releasing: the kernel drops its lock.
	require.NoError(t, pr.hold.Close())
	_, err = GC(GCOptions{StateRoot: state, CgroupPrefix: testPrefix + "-gc-" + strconv.Itoa(os.Getpid())})
	require.NoError(t, err)
	for _, p := range []string{".bashrc", ".git/hooks", ".git/commondir", ".profile"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s removed by GC", p)
	}
	b, err = os.ReadFile(filepath.Join(ws, ".envrc"))
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(b), "a file that is no longer the reservation is kept")
	_, err = GC(GCOptions{StateRoot: state, CgroupPrefix: testPrefix + "-gc-" + strconv.Itoa(os.Getpid()), Caches: true})
	require.NoError(t, err)
	for _, ext := range []string{".ws", ".hold", ".lock"} {
		_, err = os.Stat(filepath.Join(reservationDir, pr.key+ext))
		assert.True(t, errors.Is(err, fs.ErrNotExist), "GC with caches removes the record %s", ext)
	}
	require.NoError(t, os.RemoveAll(filepath.Join(state, protectDir)))
}

// TestReservationsAcrossStateRoots: tethers with different state roots
// (a daemon's pool and a `tether run`) share a workspace's reservations.
// Neither one's release nor the GC of its state root may remove what the
// other's live sandbox holds; the last one out removes them.
func TestReservationsAcrossStateRoots(t *testing.T) {
	requireSandbox(t)
	stateA, stateB := stateTempDir(t), stateTempDir(t)
	ws, _ := poisonWorkspace(t, true)
	reserved := func() bool {
		target, err := os.Readlink(filepath.Join(ws, ".bashrc"))
		return err == nil && target == reservedTarget
	}
	gc := func(state string) {
		_, err := GC(GCOptions{StateRoot: state, CgroupPrefix: testPrefix + "-gcx-" + strconv.Itoa(os.Getpid()), Caches: true})
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		gc(stateA)
		gc(stateB)
	})
	a, err := planProtection(ws, ws, true)
	require.NoError(t, err)
	for i := range 5 {
		b, err := planProtection(ws, ws, true)
		require.NoError(t, err, "round %d: planning under the second state root", i)
		require.NoError(t, a.release())
		assert.True(t, reserved(), "round %d: the first state root's release kept the second's reservation", i)
		gc(stateA)
		assert.True(t, reserved(), "round %d: GC of the first state root kept the second's live reservation", i)
		a, err = planProtection(ws, ws, true)
		require.NoError(t, err, "round %d: planning under the first state root again", i)
		require.NoError(t, b.release())
		assert.True(t, reserved(), "round %d: the second state root's release kept the first's reservation", i)
		gc(stateB)
		assert.True(t, reserved(), "round %d: GC of the second state root kept the first's live reservation", i)
	}
	require.NoError(t, a.release())
	for _, p := range []string{".bashrc", ".envrc", ".git/commondir"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "the last one out removed %s", p)
	}
}

// TestReservationsConcurrent: holders under two state roots come and go
// concurrently while GC (with caches, which removes records) runs on one
// of them: every holder finds the reservation while it holds it, and the
// last one out removes it.
func TestReservationsConcurrent(t *testing.T) {
	requireSandbox(t)
	states := []string{stateTempDir(t), stateTempDir(t)}
	ws, _ := poisonWorkspace(t, true)
	stop := make(chan struct{})
	var gcErrs []error
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			gcErrs = append(gcErrs, gcReservations(states[0], true)...)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Go(func() {
			for i := range 15 {
				pr, err := planProtection(ws, ws, true)
				if err != nil {
					errs <- fmt.Errorf("holder %d round %d: planning: %w", g, i, err)
					return
				}
				if target, err := os.Readlink(filepath.Join(ws, ".envrc")); err != nil || target != reservedTarget {
					errs <- fmt.Errorf("holder %d round %d: .envrc not reserved while held (%q, %v)", g, i, target, err)
				}
				if err := pr.release(); err != nil {
					errs <- fmt.Errorf("holder %d round %d: releasing: %w", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-gcDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Empty(t, gcErrs)
	_, err := os.Lstat(filepath.Join(ws, ".envrc"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the last one out removed the reservation")
}

// TestReservationDirMustBeRoots: a reservation directory someone else
// could write (or a symlink) is refused, and nothing is reserved.
func TestReservationDirMustBeRoots(t *testing.T) {
	requireSandbox(t)
	ws, _ := poisonWorkspace(t, true)
	base := t.TempDir()
	for name, mk := range map[string]func(p string) error{
		"symlink": func(p string) error { return os.Symlink(t.TempDir(), p) },
		"writable": func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chmod(p, 0o777)
		},
		"not root's": func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		},
		"writable parent": func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chmod(filepath.Dir(p), 0o1777)
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(base, strings.ReplaceAll(name, " ", "-"), "protect")
			require.NoError(t, os.Mkdir(filepath.Dir(p), 0o711))
			require.NoError(t, mk(p))
			old := reservationDir
			reservationDir = p
			defer func() { reservationDir = old }()
			_, err := planProtection(ws, ws, true)
			require.ErrorIs(t, err, ErrUnsafeReservationDir)
			_, err = os.Lstat(filepath.Join(ws, ".bashrc"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "nothing reserved")
		})
	}
	t.Run("missing is made", func(t *testing.T) {
		p := filepath.Join(base, "fresh", "protect")
		old := reservationDir
		reservationDir = p
		defer func() { reservationDir = old }()
		pr, err := planProtection(ws, ws, true)
		require.NoError(t, err)
		require.NoError(t, pr.release())
		for dir, mode := range map[string]os.FileMode{p: 0o700, filepath.Dir(p): 0o711} {
			fi, err := os.Lstat(dir)
			require.NoError(t, err)
			assert.Equal(t, os.ModeDir|mode, fi.Mode(), dir)
		}
	})
}

// TestSandboxIsNotHostRoot reads, from the host, the credentials of a
// command that sleeps in the sandbox.
func TestSandboxIsNotHostRoot(t *testing.T) {
	m := newTestSessions(t)
	ws, _ := poisonWorkspace(t, false)
	spec := testSpec()
	spec.Config.Workspace = ws
	s, err := m.Open(t.Context(), "default", "whoami", spec)
	require.NoError(t, err)
	bg, err := s.Start(Command{Shell: "exec sleep 30"})
	require.NoError(t, err)
	defer func() { _ = m.CloseSession("default", "whoami") }()
	_ = bg
	// Every host process in the session's cgroup (init, supervisor, sleep).
	var pids []string
	require.Eventually(t, func() bool {
		pids = pidsWithCgroup(t, m.CgroupPrefix)
		for _, pid := range pids {
			if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(comm)) == "sleep" {
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond)
	for _, pid := range pids {
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			continue // exited meanwhile
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
				for _, id := range f[1:] {
					assert.Equal(t, strconv.Itoa(DefaultUserNSBase), id, "pid %s: %s", pid, line)
				}
			}
		}
	}
}

// pidsWithCgroup lists host pids whose cgroup path contains prefix.
func pidsWithCgroup(t *testing.T, prefix string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cg, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
		if err == nil && strings.Contains(string(cg), "/"+prefix+"/") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestSandboxDoesNotChargeRoot: a sandbox that takes every inotify
// instance its user may have leaves host root's own untouched (the
// kernel charges a user namespace's counts to its owner, which is the
// sandbox's host id, not root).
func TestSandboxDoesNotChargeRoot(t *testing.T) {
	m := newTestSessions(t)
	ws, _ := poisonWorkspace(t, false)
	spec := testSpec()
	spec.Config.Workspace = ws
	s, err := m.Open(t.Context(), "default", "inotify", spec)
	require.NoError(t, err)
	defer func() { _ = m.CloseSession("default", "inotify") }()
	probe := func() bool {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return err == nil
	}
	require.True(t, probe(), "host root has an inotify instance to spare before the sandbox")
	_, err = s.Start(Command{Shell: `exec /usr/bin/python3 -c '
import ctypes, time
libc = ctypes.CDLL(None)
n = 0
while libc.inotify_init() >= 0:
    n += 1
open("took", "w").write(str(n))
time.sleep(60)'`})
	require.NoError(t, err)
	var took []byte
	require.Eventually(t, func() bool {
		took, err = os.ReadFile(filepath.Join(ws, "took"))
		return err == nil && len(took) > 0
	}, 20*time.Second, 50*time.Millisecond)
	n, err := strconv.Atoi(string(took))
	require.NoError(t, err)
	assert.Positive(t, n, "the sandbox took its instances")
	assert.True(t, probe(), "host root still has its own while the sandbox holds %d", n)
}

// chownWorkspace gives everything in ws to wsOwner, as poisonWorkspace does.
func chownWorkspace(t testing.TB, ws string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
}

// assertNoNewRepo walks ws from the host: no entry named .git (in any
// letter case) and no HEAD other than those listed (known lists .git
// entries, git directories, which are not entered, and HEAD files).
func assertNoNewRepo(t *testing.T, ws string, known ...string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		switch name := d.Name(); {
		case slices.Contains(known, rel) && d.IsDir():
			return fs.SkipDir
		case strings.EqualFold(name, ".git"):
			assert.Contains(t, known, rel, "%s: a repository the sandbox made", rel)
		case strings.EqualFold(name, "HEAD"):
			assert.Contains(t, known, rel, "%s: a bare repository's HEAD the sandbox made", rel)
		}
		return nil
	}))
}

// TestPoisonNestedRepos: repositories below the workspace root that exist
// when the sandbox starts (a nested repository, a .git file naming a git
// directory in the workspace, a bare repository, a HEAD that could be
// rewritten into a bare repository's) are frozen like the root's: planted
// config and hooks reach none of them, and git work in them goes on.
func TestPoisonNestedRepos(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	hostGit(t, sub, "init", "-q")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "sub-one")
	lib := filepath.Join(ws, "vendor/lib")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "mods"), 0o755))
	hostGit(t, lib, "init", "-q", "--separate-git-dir", filepath.Join(ws, "mods/lib"))
	hostGit(t, lib, "commit", "-q", "--allow-empty", "-m", "lib-one")
	hostGit(t, ws, "init", "-q", "--bare", filepath.Join(ws, "bare.git"))
	hostGit(t, ws, "init", "-q", filepath.Join(ws, "fresh")) // no commit yet: no logs/
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "docs/HEAD"), []byte("the head of the documentation\n"), 0o644))
	chownWorkspace(t, ws)
	gitc := "git -c user.name=s -c user.email=s@s"
	res, out := sandboxRun(t, r, ws, fmt.Sprintf(`
%[1]s -C sub commit -q --allow-empty -m sub-two && echo sub-commit-ok
%[1]s -C fresh commit -q --allow-empty -m fresh-one && %[1]s -C fresh checkout -q -b other && echo fresh-commit-ok
%[2]s
%[3]s
%[4]s
mv sub/.git sub/.git-orig; mv mods/lib mods/lib2
echo 'ref: refs/heads/master' > docs/HEAD; echo docs-head=$?
mkdir -p docs/objects docs/refs; printf '[core]\n\tfsmonitor = "touch %[5]s/docs; false"\n' > docs/config
`, gitc, plant("sub/.git", markers), plant("mods/lib", markers), plant("bare.git", markers), markers))
	t.Log(out)
	assert.Contains(t, out, "sub-commit-ok", "git work in a nested repository goes on")
	assert.Contains(t, out, "fresh-commit-ok", "the first commit of a repository makes its logs/HEAD")
	assert.NotContains(t, out, "docs-head=0", "a HEAD outside a git directory is read-only")
	assert.NotContains(t, res.NotEnforced, "nested-repos")
	assertHostClean(t, ws, markers, true)
	for _, d := range []string{"sub", "vendor/lib", "docs"} {
		hostGit(t, filepath.Join(ws, d), "status")
	}
	for _, d := range []string{"sub", "vendor/lib", "bare.git", "docs"} {
		hostGit(t, filepath.Join(ws, d), "log", "--oneline", "--all") // a bare repository has no status
	}
	assert.Contains(t, hostGit(t, sub, "log", "--oneline"), "sub-two", "the nested commit landed")
	assertEmptyDir(t, markers)
	assertNoNewRepo(t, ws, ".git", "sub/.git", "vendor/lib/.git", "fresh/.git", "bare.git", "mods/lib", "docs/HEAD")
	for _, p := range []string{"sub/.git/hooks/pre-commit", "mods/lib/commondir", "bare.git/config.worktree"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s: reservations are removed at teardown", p)
	}
}

// assertEmptyDir checks that planted code wrote no marker.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "planted code ran on the host")
}

// repoCreationScript makes repositories in sub/ by every system call
// that names an entry; checkRepoCreation checks its output, the refusals
// reported, and the workspace from the host.
func repoCreationScript(markers string) string {
	return fmt.Sprintf(`
cd sub
mkdir -p evil/objects evil/refs; printf '[core]\n\tfsmonitor = "touch %[1]s/evil; false"\n\tpager = "touch %[1]s/pager; cat"\n' > evil/config
echo 'ref: refs/heads/master' > evil/HEAD; echo bare-head=$?
mkdir a; mkdir a/.git; echo mkdir=$?
git init -q b; echo init=$?
git init -q --bare c; echo init-bare=$?
git clone -q .. d; echo clone=$?
mkdir e x; mv x e/.git; echo mv=$?
mkdir e2; echo 'gitdir: ../evil' > y; mv y e2/.git; echo mv-file=$?
mkdir f; ln -s ../evil f/.git; echo symlink=$?
mkdir g; echo 'gitdir: ../evil' > g/.git; echo gitfile=$?
mkdir h; echo 'gitdir: ../evil' > h/x; ln h/x h/.git; echo link=$?
mkdir i; mkfifo i/.git; echo mkfifo=$?
mkdir j; python3 -c 'import os; os.close(os.open("j/.GIT", os.O_CREAT|os.O_WRONLY, 0o644))'; echo upper=$?
mkdir k; ln -s k/.git dangling; echo dangling=$?
ln -s evil/HEAD dangling-head; echo dangling-head=$?
mkdir l; /usr/bin/python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("l/z")
r = libc.renameat2(-100, b"l/z", -100, b"l/.git", 2)
print("exchange", r, os.strerror(ctypes.get_errno()))
r = libc.renameat2(-100, b"l/z", -100, b"l/.git", 1)
print("noreplace", r, os.strerror(ctypes.get_errno()))
r = libc.mkdirat(os.open("l", os.O_RDONLY), b".git/", 0o755)
print("mkdirat", r, os.strerror(ctypes.get_errno()))
r = libc.symlinkat(b"x/.git//", -100, b"l/s")
print("symlinkat", r, os.strerror(ctypes.get_errno()))'
touch m; python3 -c 'import os; os.rename("m", "m/../.git")' 2>&1 | tail -1
ls -la . a e f g h i j l
`, markers)
}

func checkRepoCreation(t *testing.T, ws, markers, out string, blocks []CreateBlock) {
	t.Helper()
	t.Log(out)
	for _, op := range []string{"bare-head", "mkdir", "init", "init-bare", "clone", "mv", "mv-file", "symlink", "gitfile", "link", "mkfifo", "upper", "dangling", "dangling-head"} {
		assert.NotContains(t, out, op+"=0\n", "%s made a repository", op)
	}
	assert.Contains(t, out, "exchange -1 Operation not permitted")
	assert.Contains(t, out, "noreplace -1 Operation not permitted")
	assert.Contains(t, out, "mkdirat -1 Operation not permitted")
	assert.Contains(t, out, "symlinkat -1 Operation not permitted")
	ops := map[string]bool{}
	for _, b := range blocks {
		ops[b.Op] = true
		assert.NotEmpty(t, b.Reason)
	}
	for _, op := range []string{"mkdir", "rename", "symlink", "link", "mknod", "open"} {
		assert.True(t, ops[op], "a refused %s is reported (%v)", op, blocks)
	}
	assertNoNewRepo(t, ws, ".git")
	assertHostClean(t, ws, markers, true)
	for _, d := range []string{"sub", "sub/evil", "sub/a", "sub/e", "sub/e2", "sub/f", "sub/g", "sub/h", "sub/i", "sub/j", "sub/l"} {
		if _, err := os.Stat(filepath.Join(ws, d)); err == nil {
			hostGit(t, filepath.Join(ws, d), "status")
			hostGit(t, filepath.Join(ws, d), "log", "--oneline")
		}
	}
	assertEmptyDir(t, markers)
}

// TestPoisonRepoCreation: a repository made mid-session, by every system
// call that names an entry, in one-shot runs and sessions, is refused
// with EPERM and reported; nothing the host's git would enter is left.
func TestPoisonRepoCreation(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
		chownWorkspace(t, ws)
		res, out := sandboxRun(t, r, ws, repoCreationScript(markers))
		checkRepoCreation(t, ws, markers, out, res.CreateBlocked)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
		chownWorkspace(t, ws)
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "create", spec)
		require.NoError(t, err)
		var out bytes.Buffer
		res, err := s.Run(t.Context(), Command{Shell: repoCreationScript(markers), Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		// While the session lives, the host sees no repository either.
		assertNoNewRepo(t, ws, ".git")
		require.NoError(t, m.CloseSession("default", "create"))
		checkRepoCreation(t, ws, markers, out.String(), res.CreateBlocked)
	})
}

// TestPoisonNestedSymlinkRefused: a nested .git symlink, or a symlink
// through which open(O_CREAT) would make a .git or a HEAD, is refused
// before anything runs.
func TestPoisonNestedSymlinkRefused(t *testing.T) {
	r := newTestRunner(t)
	for name, link := range map[string][2]string{
		"nested .git symlink": {"sub/.git", "../evil"},
		"link to a .git":      {"sub/x", "y/.git"},
		"link to a HEAD":      {"sub/x", "../y/HEAD/"},
	} {
		t.Run(name, func(t *testing.T) {
			ws, _ := poisonWorkspace(t, false)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
			require.NoError(t, os.Symlink(link[1], filepath.Join(ws, link[0])))
			var out bytes.Buffer
			res, err := r.Run(t.Context(), Config{Workspace: ws}, Command{Shell: "echo ran", Stdout: &out, Stderr: &out})
			require.ErrorIs(t, err, ErrUnsafeWorkspace)
			assert.Nil(t, res)
			assert.NotContains(t, out.String(), "ran", "nothing ran")
		})
	}
}

// TestStateRootUnreachable: a state root under a directory the sandbox's
// unprivileged id cannot traverse (a 0700 home or temporary directory) is
// refused before anything starts, with an error that says what to do,
// for one-shot runs and sessions.
func TestStateRootUnreachable(t *testing.T) {
	requireSandbox(t)
	private := t.TempDir() // 0700
	state := filepath.Join(private, "state")
	r := &Runner{StateRoot: state, CgroupPrefix: testPrefix + "-unreach-" + strconv.Itoa(os.Getpid())}
	_, err := r.Run(t.Context(), Config{Workspace: t.TempDir()}, Command{Shell: "true"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "chmod o+x /tmp/")
	assert.Contains(t, err.Error(), private[:len("/tmp/")+5])
	m := &Sessions{StateRoot: state, CgroupPrefix: r.CgroupPrefix}
	defer m.Close()
	spec := testSpec()
	_, err = m.Open(t.Context(), "default", "unreach", spec)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "cannot traverse")
}

// privilegeVariantsScript is TestPoisonPrivilegeVariants' attack;
// assertPrivilegeVariantsRefused checks its output.
const privilegeVariantsScript = `cp /bin/true f; ln -s f lnk
/usr/bin/python3 - <<'EOF'
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def sys(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r == 0 else "refused: " + os.strerror(ctypes.get_errno()))
cap = bytes([0, 0, 0, 2, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in
    [(1, 7, 0xffffffff), (2, 7, 1000), (4, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)])
AT_FDCWD, AT_SYMLINK_NOFOLLOW = -100, 0x100
sys("fchmodat2", 452, AT_FDCWD, b"f", 0o4755, 0)
sys("fchmodat2-nofollow", 452, AT_FDCWD, b"f", 0o2755, AT_SYMLINK_NOFOLLOW)
fd = os.open("f", os.O_RDONLY)
for name, fn in [
    ("fsetxattr-cap", lambda: os.setxattr(fd, "security.capability", cap)),
    ("lsetxattr-cap", lambda: os.setxattr("f", "security.capability", cap, follow_symlinks=False)),
    ("setxattr-cap-via-link", lambda: os.setxattr("lnk", "security.capability", cap)),
    ("acl-other-user", lambda: os.setxattr("f", "system.posix_acl_access", acl)),
    ("trusted", lambda: os.setxattr("f", "trusted.x", b"1")),
    ("user", lambda: os.setxattr("f", "user.note", b"1")),
]:
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, "refused:", e.strerror)
sys("io_uring_setup", 425, 8, ctypes.create_string_buffer(120))
EOF
`

func assertPrivilegeVariantsRefused(t *testing.T, out string) {
	t.Helper()
	for _, refused := range []string{"fchmodat2 refused", "fchmodat2-nofollow refused", "fsetxattr-cap refused", "lsetxattr-cap refused",
		"setxattr-cap-via-link refused", "acl-other-user refused", "trusted refused", "io_uring_setup refused"} {
		assert.Contains(t, out, refused)
	}
	assert.Contains(t, out, "user refused", "no xattr is written: the filter cannot read its name (seccomp_files_on.go)")
}

// TestPoisonPrivilegeVariants: the privilege artefacts through the system
// calls libc wrappers hide (fchmodat2 with and without
// AT_SYMLINK_NOFOLLOW, fsetxattr and lsetxattr of file capabilities), an
// ACL giving another user rights, trusted and user xattrs (no xattr is
// written, seccomp_files_on.go) and io_uring.
func TestPoisonPrivilegeVariants(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	_, out := sandboxRun(t, r, ws, privilegeVariantsScript)
	t.Log(out)
	assertPrivilegeVariantsRefused(t, out)
	_, err := unix.Lgetxattr(filepath.Join(ws, "f"), "system.posix_acl_access", nil)
	assert.ErrorIs(t, err, unix.ENODATA, "no ACL on the host file")
	assertHostClean(t, ws, markers, false)
}

// TestReservationsSurviveOtherStateRoot attacks from the sandbox: a
// session under one state root shares the workspace with a session under
// another; the other closes, and a command of the first then tries to
// plant an .envrc, a project config and a git hook. From the host, after both are
// gone, neither exists.
func TestReservationsSurviveOtherStateRoot(t *testing.T) {
	ws, _ := poisonWorkspace(t, true)
	spec := testSpec()
	spec.Config.Workspace = ws
	ma, mb := newTestSessions(t), newTestSessions(t)
	b, err := mb.Open(t.Context(), "default", "b", spec)
	require.NoError(t, err)
	a, err := ma.Open(t.Context(), "default", "a", spec)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	out, res := sh(t, b, "echo evil > .envrc; echo evil > .tether.yaml; echo evil > .git/hooks/pre-commit; echo done")
	assert.Equal(t, "done\n", out)
	assert.Equal(t, 0, res.ExitCode)
	require.NoError(t, b.Close())
	for _, p := range []string{".envrc", ".tether.yaml", ".git/hooks/pre-commit"} {
		b, err := os.ReadFile(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s planted on the host (%q)", p, b)
	}
}

// TestPoisonRootless runs the protected-path attacks from a tether without
// root (an unprivileged user created for the test): the control surface
// of the root's and a nested repository, renamed and exchanged parents,
// protected paths created in one-shot runs and mid-session, and writes
// into tether's own state inside the workspace. Each is checked from the
// host after the sandbox is gone; the user's reservation records are gone
// too.
func TestPoisonRootless(t *testing.T) {
	ru := newRootlessUser(t)
	newWS := func(name string, git bool) (ws, markers string) {
		ws = filepath.Join(ru.base, name)
		ru.mkdir(ws)
		if git {
			hostGit(t, ws, "init", "-q")
			require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o644))
			hostGit(t, ws, "add", "README")
			hostGit(t, ws, "commit", "-q", "-m", "one")
			require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			hostGit(t, filepath.Join(ws, "sub"), "init", "-q")
			hostGit(t, filepath.Join(ws, "sub"), "commit", "-q", "--allow-empty", "-m", "sub")
		}
		ru.chown(ws)
		markers = t.TempDir()
		require.NoError(t, os.Chmod(markers, 0o777))
		return ws, markers
	}
	records := filepath.Join(ru.base, "run", "tether", protectDir)
	assertNoRecords := func(t *testing.T) {
		entries, err := os.ReadDir(records)
		require.NoError(t, err, "the user's reservation records are where checkedReservationDir says")
		assert.Empty(t, entries, "records outlived their sandboxes")
	}

	t.Run("control surface", func(t *testing.T) {
		ws, markers := newWS("ws-git", true)
		d := ru.run("", ws, controlSurfaceScript(markers)+"\n"+plant("sub/.git", markers)+"\nmv sub/.git sub/g2")
		require.Empty(t, d.Error)
		for _, ok := range []string{"branch-ok", "commit-ok", "stash-ok", "status-ok"} {
			assert.Contains(t, d.Output, ok, "ordinary git work succeeds in the sandbox")
		}
		assert.Regexp(t, refusedRename, d.Output, "protected parents cannot be renamed")
		assert.NotContains(t, d.Result.NotEnforced, "protected-paths")
		assertHostClean(t, ws, markers, true)
		hostGit(t, filepath.Join(ws, "sub"), "status")
		assert.Contains(t, hostGit(t, ws, "log", "--oneline", "feature"), "two", "the sandbox's commit landed")
		entries, err := os.ReadDir(markers)
		require.NoError(t, err)
		assert.Empty(t, entries, "the nested repository's git ran planted code")
		assertNoRecords(t)
	})
	t.Run("privilege artefacts", func(t *testing.T) {
		ws, markers := newWS("ws-priv", false)
		d := ru.run("", ws, privilegeScript+"\n"+privilegeVariantsScript)
		require.Empty(t, d.Error)
		assertPrivilegeRefused(t, d.Output)
		assertPrivilegeVariantsRefused(t, d.Output)
		assertHostClean(t, ws, markers, false)
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(ws, "sh"), &st))
		assert.Equal(t, uint32(ru.uid), st.Uid, "files belong to the user")
		assert.Equal(t, uint32(0o755), st.Mode&0o7777, "the shell was copied, without its privileges")
	})
	t.Run("nested, bare and gitdir repositories", func(t *testing.T) {
		ws, markers := newWS("ws-nested", true)
		lib := filepath.Join(ws, "vendor/lib")
		require.NoError(t, os.MkdirAll(lib, 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "mods"), 0o755))
		hostGit(t, lib, "init", "-q", "--separate-git-dir", filepath.Join(ws, "mods/lib"))
		hostGit(t, lib, "commit", "-q", "--allow-empty", "-m", "lib-one")
		hostGit(t, ws, "init", "-q", "--bare", filepath.Join(ws, "bare.git"))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "docs"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "docs/HEAD"), []byte("the head of the documentation\n"), 0o644))
		ru.chown(ws)
		d := ru.run("", ws, fmt.Sprintf(`git -c user.name=s -c user.email=s@s -C vendor/lib commit -q --allow-empty -m lib-two && echo lib-commit-ok
%s
%s
mv mods/lib mods/lib2; mv vendor/lib/.git vendor/lib/g2
echo 'ref: refs/heads/master' > docs/HEAD; echo docs-head=$?
mkdir -p docs/objects docs/refs; printf '[core]\n\tfsmonitor = "touch %s/docs; false"\n' > docs/config`,
			plant("mods/lib", markers), plant("bare.git", markers), markers))
		require.Empty(t, d.Error)
		assert.Contains(t, d.Output, "lib-commit-ok", "git work in a nested repository goes on")
		assert.NotContains(t, d.Output, "docs-head=0", "a HEAD outside a git directory is read-only")
		assert.NotContains(t, d.Result.NotEnforced, "nested-repos")
		assertHostClean(t, ws, markers, true)
		for _, dir := range []string{"vendor/lib", "docs"} {
			hostGit(t, filepath.Join(ws, dir), "status")
		}
		for _, dir := range []string{"vendor/lib", "bare.git", "docs"} {
			hostGit(t, filepath.Join(ws, dir), "log", "--oneline", "--all")
		}
		assertEmptyDir(t, markers)
		assertNoRecords(t)
	})
	t.Run("repository creation", func(t *testing.T) {
		ws, markers := newWS("ws-create", false)
		hostGit(t, ws, "init", "-q")
		hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "one")
		require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
		ru.chown(ws)
		d := ru.run("", ws, repoCreationScript(markers))
		require.Empty(t, d.Error)
		checkRepoCreation(t, ws, markers, d.Output, d.Result.CreateBlocked)
		assertNoRecords(t)
	})
	t.Run("files the configuration names", func(t *testing.T) {
		ws, markers := newWS("ws-config", false)
		hostGit(t, ws, "init", "-q")
		hostGit(t, ws, "commit", "-q", "--allow-empty", "-m", "one")
		configNamedWorkspace(t, ws)
		ru.chown(ws)
		d := ru.run("", ws, configNamedScript(markers))
		require.Empty(t, d.Error)
		checkConfigNamed(t, ws, markers, d.Output)
		assertNoRecords(t)
	})
	t.Run("whiteout", func(t *testing.T) {
		ws, _ := newWS("ws-whiteout", false)
		d := ru.run("", ws, whiteoutScript)
		require.Empty(t, d.Error)
		assert.Contains(t, d.Output, "whiteout -1 Operation not permitted")
		assert.Contains(t, d.Output, "plain 0 ok")
		assertNoPrivilege(t, ws)
	})
	t.Run("links out of the control surface", func(t *testing.T) {
		ws, markers := newWS("ws-links", true)
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "scripts/pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
		require.NoError(t, os.Symlink("../../scripts/pre-commit", filepath.Join(ws, ".git/hooks/pre-commit")))
		ru.chown(ws)
		d := ru.run("", ws, fmt.Sprintf(`printf '#!/bin/sh\ntouch %s/hook\n' > scripts/pre-commit; echo rewrite=$?; mv scripts s2; echo mv=$?`, markers))
		require.Empty(t, d.Error)
		assert.NotContains(t, d.Output, "rewrite=0")
		assert.NotContains(t, d.Output, "mv=0")
		assertHostClean(t, ws, markers, true)
		require.NoError(t, os.Link(filepath.Join(ws, ".git/config"), filepath.Join(ws, "gitcfg")))
		d = ru.run("", ws, "echo ran")
		assert.Contains(t, d.Error, ".git/config has 2 names")
		assert.NotContains(t, d.Output, "ran")
		assertNoRecords(t)
	})
	t.Run("huge directory", func(t *testing.T) {
		ws, markers := newWS("ws-huge", true)
		fillDir(t, filepath.Join(ws, "huge"), dirlist.MaxEntries+1)
		ru.chown(ws)
		d := ru.run("", ws, plant("sub/.git", markers))
		require.Empty(t, d.Error)
		assert.Contains(t, d.Result.NotEnforced, "nested-repos")
		assertHostClean(t, ws, markers, true)
		hostGit(t, filepath.Join(ws, "sub"), "status")
		assertEmptyDir(t, markers)
	})
	t.Run("reservations, one-shot", func(t *testing.T) {
		ws, markers := newWS("ws-home", false)
		d := ru.run("", ws, reservationScript(markers), "HOME="+ws)
		require.Empty(t, d.Error)
		assert.NotContains(t, d.Output, "init=0", "git init fails: .git is reserved")
		assertNothingCreated(t, ws)
		assertHostClean(t, ws, markers, false)
		assertNoRecords(t)
	})
	t.Run("reservations, session", func(t *testing.T) {
		ws, markers := newWS("ws-session", false)
		d := ru.run("", ws, reservationScript(markers), "HOME="+ws,
			rootlessSessionEnv+"=sleep 0.2; echo evil > .envrc; mkdir .git; echo evil > .git/config; echo 'touch "+markers+"/bg' > .bash_logout",
			rootlessLiveEnv+"=.envrc .git .bash_logout")
		require.Empty(t, d.Error)
		assert.NotContains(t, d.Output, "init=0")
		assert.Contains(t, d.Output, "live: .envrc=absent .git=absent .bash_logout=absent", "while the session lives the host sees nothing planted")
		assertNothingCreated(t, ws)
		assertHostClean(t, ws, markers, false)
		assertNoRecords(t)
	})
	t.Run("writable bind", func(t *testing.T) {
		ws, markers := newWS("ws-bind", false)
		bind := filepath.Join(ru.base, "bind")
		ru.mkdir(bind)
		makeBindRepos(t, bind)
		ru.chown(bind)
		d := ru.run("", ws, bindScript(bind, markers), rootlessBindEnv+"="+bind)
		require.Empty(t, d.Error)
		assertBindClean(t, bind, markers, d.Output)
		assertNoRecords(t)
	})
	t.Run("root's live reservation", func(t *testing.T) {
		ws, _ := newWS("ws-root-res", false)
		require.NoError(t, os.Symlink(reservedTarget, filepath.Join(ws, ".envrc")))
		ru.chown(ws)
		d := ru.run("", ws, "echo ran")
		assert.Contains(t, d.Error, "another tether", "a root tether's reservation is not taken for this one's")
		assert.NotContains(t, d.Output, "ran")
		target, err := os.Readlink(filepath.Join(ws, ".envrc"))
		require.NoError(t, err)
		assert.Equal(t, reservedTarget, target, "and is left to root's tether")
		require.NoError(t, os.Remove(filepath.Join(ws, ".envrc")))
	})
	t.Run("state inside the workspace", func(t *testing.T) {
		ws, markers := newWS("ws-state", false)
		state := filepath.Join(ws, ".tether-state")
		ru.mkdir(state)
		d := ru.run(state, ws, "ls -a .tether-state; echo evil > .tether-state/planted; echo rc=$?; mv .tether-state x; echo mv=$?")
		require.Empty(t, d.Error, "tether's state inside the workspace is hidden, not refused")
		assert.Contains(t, d.Output, "rc=2", "the shell cannot create it")
		assert.Contains(t, d.Output, "mv=1")
		_, err := os.Lstat(filepath.Join(state, "planted"))
		assert.ErrorIs(t, err, fs.ErrNotExist, "the sandbox wrote into tether's state")
		require.NoError(t, os.RemoveAll(state))
		assertHostClean(t, ws, markers, false)
		assertNoRecords(t)
	})
}

// TestPoisonReservationsAttachedTree takes the way kernels before 6.15
// need (no clone from a detached mount: the empty tree is attached over
// the workspace while the mounts are made, then detached) and runs the
// reservation attacks: they fail the same, and the tree left nothing
// over the workspace.
func TestPoisonReservationsAttachedTree(t *testing.T) {
	r := newTestRunner(t)
	detachedClones = false
	t.Cleanup(func() { detachedClones = true })
	ws, markers := poisonWorkspace(t, false)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "mine"), []byte("workspace\n"), 0o644))
	require.NoError(t, os.Chown(filepath.Join(ws, "mine"), wsOwner, wsOwner))
	t.Setenv("HOME", ws) // a home workspace
	_, out := sandboxRun(t, r, ws, reservationScript(markers)+"\ncat mine; grep -c ' "+ws+" ' /proc/self/mountinfo")
	t.Log(out)
	assert.NotContains(t, out, "init=0", "git init fails: .git is reserved")
	assert.Contains(t, out, "workspace\n", "the workspace, not the empty tree, is at its place")
	assert.Contains(t, out, "\n1\n", "one mount at the workspace: the empty tree was detached")
	assertNothingCreated(t, ws)
	assertHostClean(t, ws, markers, false)
}

// TestPoisonBareWorkspace: a workspace that is itself a bare repository
// has its control surface frozen like a nested one's: what the sandbox
// plants there is not on the host afterwards, and git work that writes
// objects and refs still succeeds.
func TestPoisonBareWorkspace(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	hostGit(t, ws, "init", "-q", "--bare")
	require.NoError(t, filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
	before, err := os.ReadFile(filepath.Join(ws, "config"))
	require.NoError(t, err)
	hooks, err := os.ReadDir(filepath.Join(ws, "hooks"))
	require.NoError(t, err)
	_, out := sandboxRun(t, r, ws, plant(".", markers)+`
mv hooks h2; mv objects o2
export GIT_DIR=. # the root's .git reservation stops git's discovery
h=$(git -c user.name=s -c user.email=s@s commit-tree -m one $(git mktree </dev/null)) && git update-ref refs/heads/x $h && echo objects-ok`)
	t.Log(out)
	assert.Contains(t, out, "objects-ok", "objects and refs are written")
	assert.Regexp(t, refusedRename, out, "protected parents cannot be renamed")
	after, err := os.ReadFile(filepath.Join(ws, "config"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "config unchanged")
	hooksAfter, err := os.ReadDir(filepath.Join(ws, "hooks"))
	require.NoError(t, err)
	assert.Equal(t, len(hooks), len(hooksAfter), "no hook planted")
	for _, p := range []string{"config.worktree", "commondir", "info/attributes", "objects/info/alternates"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host after the sandbox", p)
	}
	hostGit(t, ws, "cat-file", "-e", "refs/heads/x")
	assertHostClean(t, ws, markers, false)
}

// makeBindRepos fills the directory bind with a nested repository
// (proj), a bare one (store.git) and a directory a .git file's git
// directory lies in (wt, gd).
func makeBindRepos(t *testing.T, bind string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(bind, "proj"), 0o755))
	hostGit(t, filepath.Join(bind, "proj"), "init", "-q")
	hostGit(t, filepath.Join(bind, "proj"), "commit", "-q", "--allow-empty", "-m", "one")
	require.NoError(t, os.MkdirAll(filepath.Join(bind, "store.git"), 0o755))
	hostGit(t, filepath.Join(bind, "store.git"), "init", "-q", "--bare")
	require.NoError(t, os.MkdirAll(filepath.Join(bind, "wt"), 0o755))
	hostGit(t, filepath.Join(bind, "wt"), "init", "-q", "--separate-git-dir", filepath.Join(bind, "gd"))
	hostGit(t, filepath.Join(bind, "wt"), "commit", "-q", "--allow-empty", "-m", "one")
}

// bindScript attacks the repositories makeBindRepos made in bind from the
// sandbox, and plants what direnv and git would run at the bind's top.
func bindScript(bind, markers string) string {
	return fmt.Sprintf(`cd %[1]s
%[2]s
%[3]s
%[4]s
mv proj/.git proj/g2; mv store.git s2; mv gd gd2
echo 'touch %[5]s/envrc' > .envrc; git init -q; echo init=$?; mkdir x; git -C x init -q; echo init-x=$?
echo ok > proj/file && git -C proj add file && git -C proj -c user.name=s -c user.email=s@s commit -q -m two && echo commit-ok
`, bind, plant("proj/.git", markers), plant("store.git", markers), plant("gd", markers), markers)
}

// assertBindClean checks from the host, after the sandbox, that nothing
// bindScript planted in bind runs or remains.
func assertBindClean(t *testing.T, bind, markers, out string) {
	t.Helper()
	t.Log(out)
	assert.Contains(t, out, "commit-ok", "ordinary git work in a bound repository succeeds")
	assert.NotContains(t, out, "init=0")
	assert.NotContains(t, out, "init-x=0")
	assert.Regexp(t, refusedRename, out, "protected parents in the bind cannot be renamed")
	assertNoPrivilege(t, bind)
	for _, p := range []string{".envrc", ".git", "x/.git", "store.git/commondir", "store.git/objects/info/alternates", "gd/commondir"} {
		_, err := os.Lstat(filepath.Join(bind, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host after the sandbox", p)
	}
	hostGit(t, filepath.Join(bind, "proj"), "status")
	hostGit(t, filepath.Join(bind, "wt"), "status")
	hostGit(t, filepath.Join(bind, "store.git"), "log", "--oneline", "--all")
	entries, err := os.ReadDir(markers)
	require.NoError(t, err)
	assert.Empty(t, entries, "planted code ran on the host")
}

// TestPoisonBinds: a writable bind (Config.Binds) is frozen like a
// workspace: its nested, bare and .git-file repositories' control surface,
// its top's .git and .envrc; a read-only bind gets no reservations.
func TestPoisonBinds(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	bind, ro := t.TempDir(), t.TempDir()
	makeBindRepos(t, bind)
	require.NoError(t, filepath.WalkDir(bind, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
	var out bytes.Buffer
	res, err := r.Run(t.Context(), Config{Workspace: ws, Binds: []Bind{{Source: bind}, {Source: ro, ReadOnly: true}},
		Limits: Limits{Pids: 128, Timeout: 60 * time.Second}},
		Command{Shell: bindScript(bind, markers) + "ls -A " + ro + " | sed 's/^/ro: /'", Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	assert.NotContains(t, res.NotEnforced, "nested-repos")
	assert.NotContains(t, out.String(), "ro: ", "no reservation in a read-only bind")
	assertBindClean(t, bind, markers, out.String())
	assertHostClean(t, ws, markers, false)
}

// TestReservationsOfAnotherTether: reservations of a tether that shares
// no records with this one (a rootless user's, pointing to
// reservedTarget/UID-HASH, and a commondir placeholder that user owns) are
// never taken for this tether's: a sandbox whose protected path is another
// tether's live reservation is refused, and this tether's teardown leaves
// the other's commondir placeholder alone.
func TestReservationsOfAnotherTether(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	foreign := reservedTarget + "/4242-0123456789ab"
	require.NoError(t, os.Symlink(foreign, filepath.Join(ws, ".envrc")))
	require.NoError(t, os.Lchown(filepath.Join(ws, ".envrc"), wsOwner, wsOwner))
	commondir := filepath.Join(ws, ".git/commondir")
	require.NoError(t, os.WriteFile(commondir, []byte(commondirPlaceholder), 0o444))
	require.NoError(t, os.Chown(commondir, wsOwner, wsOwner))
	var out bytes.Buffer
	_, err := r.Run(t.Context(), Config{Workspace: ws}, Command{Shell: "echo ran", Stdout: &out, Stderr: &out})
	require.ErrorIs(t, err, ErrUnsafeWorkspace)
	assert.Contains(t, err.Error(), "another tether")
	assert.NotContains(t, out.String(), "ran")
	target, err := os.Readlink(filepath.Join(ws, ".envrc"))
	require.NoError(t, err)
	assert.Equal(t, foreign, target, "the other tether's reservation is kept")

	require.NoError(t, os.Remove(filepath.Join(ws, ".envrc"))) // that sandbox ended
	_, out2 := sandboxRun(t, r, ws, "echo evil > .git/commondir; echo rc=$?")
	assert.Contains(t, out2, "rc=2", "the other's commondir is frozen here too")
	b, err := os.ReadFile(commondir)
	require.NoError(t, err, "and kept at this sandbox's end: it is not this tether's")
	assert.Equal(t, commondirPlaceholder, string(b))
	require.NoError(t, os.Remove(commondir))
	assertHostClean(t, ws, markers, true)
}

// homeToolFiles are entries of the home tools' part of the protected list
// (docs/workspace.md) that homeToolsScript attacks: present maps those
// planted on the host before the sandbox starts to their content, the
// rest do not exist when it starts.
var homeToolFiles = struct {
	present map[string]string
	missing []string
}{
	present: map[string]string{
		".vimrc":                  "set nocompatible\n",
		".cargo/config.toml":      "[build]\njobs = 2\n",
		".gnupg/gpg-agent.conf":   "default-cache-ttl 60\n",
		".local/bin/.keep":        "",
		".config/autostart/.keep": "",
	},
	missing: []string{
		".local/bin/ls", ".local/lib", ".npmrc", ".bash_aliases", ".lesskey", ".pam_environment", ".xsessionrc",
		".emacs.d", ".config/systemd", ".config/environment.d", ".config/autostart/evil.desktop",
		".cargo/env", ".cargo/bin", ".gnupg/gpg.conf", ".local/share/applications",
	},
}

// homeToolsScript tries, by ordinary means (redirection, mkdir -p, append,
// rm and recreate, renaming the parent and remaking it), to plant code in
// what a home's PATH, Python, editors, pager, desktop, systemd, cargo, npm
// and gpg run later, each writing a marker under markers when run.
func homeToolsScript(markers string) string {
	return fmt.Sprintf(`m=%[1]s
mkdir -p .local/bin; printf '#!/bin/sh\ntouch %[1]s/path-ls\n' > .local/bin/ls; chmod 755 .local/bin/ls
sp=.local/lib/python3.11/site-packages; mkdir -p $sp
echo "import os; os.close(os.open('$m/pth', os.O_CREAT|os.O_WRONLY))" > $sp/evil.pth
echo "open('$m/usercustomize','w')" > $sp/usercustomize.py
echo "!touch $m/vimrc" > .vimrc; rm -f .vimrc; echo "!touch $m/vimrc" > .vimrc
echo "[build]
rustc-wrapper = \"$m/../evil\"" > .cargo/config.toml
mv .cargo .cargo-orig; mkdir .cargo; echo "[build]" > .cargo/config.toml
echo 'pinentry-program /tmp/evil' >> .gnupg/gpg-agent.conf; echo 'exec' > .gnupg/gpg.conf
mkdir -p .config/systemd/user; echo "[Service]
ExecStart=/bin/touch $m/systemd" > .config/systemd/user/evil.service
mkdir -p .config/autostart; echo "Exec=touch $m/autostart" > .config/autostart/evil.desktop
mkdir -p .config/environment.d; echo "LD_PRELOAD=/tmp/evil.so" > .config/environment.d/10-evil.conf
mkdir -p .emacs.d; echo "(shell-command \"touch $m/emacs\")" > .emacs.d/early-init.el
mkdir -p .local/share/applications; echo "Exec=touch $m/desktop" > .local/share/applications/firefox.desktop
echo "script-shell=$m/../evil" > .npmrc
echo "touch $m/aliases" > .bash_aliases
echo "#env
LESSOPEN=|touch $m/less" > .lesskey
echo "LD_PRELOAD DEFAULT=/tmp/evil.so" > .pam_environment
echo "touch $m/xsession" > .xsessionrc
echo ". $m/../evil" > .cargo/env; mkdir -p .cargo/bin
mv .local .local-orig && mkdir .local && echo made-local
echo done
`, markers)
}

// assertHomeToolsUntouched checks, from the host, that every entry
// homeToolsScript attacked is absent or as it was, that nothing was
// renamed away, and that the host's Python, started with the workspace as
// its home, runs nothing planted.
func assertHomeToolsUntouched(t *testing.T, ws, markers string) {
	t.Helper()
	for p, want := range homeToolFiles.present {
		got, err := os.ReadFile(filepath.Join(ws, p))
		if assert.NoError(t, err, p) {
			assert.Equal(t, want, string(got), "%s changed on the host", p)
		}
	}
	for _, p := range homeToolFiles.missing {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host after the sandbox", p)
	}
	for _, p := range []string{".cargo-orig", ".local-orig"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s: a protected parent was renamed away", p)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		cmd := exec.Command(py, "-c", "import site, sys; print(site.ENABLE_USER_SITE, site.getusersitepackages())")
		cmd.Env = []string{"HOME=" + ws, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		t.Logf("host python3 with HOME=%s: %s", ws, out)
	}
	assertHostClean(t, ws, markers, false)
}

// homeToolsWorkspace is a home workspace (HOME is set to it) holding
// homeToolFiles.present, owned by wsOwner.
func homeToolsWorkspace(t *testing.T) (ws, markers string) {
	t.Helper()
	ws, markers = poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	for p, content := range homeToolFiles.present {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(content), 0o644))
	}
	require.NoError(t, filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, wsOwner, wsOwner)
	}))
	return ws, markers
}

// TestPoisonHomeTools: in a home workspace, a sandboxed command, one-shot
// or in a session (mid-session and from the background), cannot plant
// code in ~/.local/bin, Python's user site-packages (.pth,
// usercustomize.py), editor, pager, desktop, systemd --user, cargo, npm,
// pam or gpg files, whether they exist when the sandbox starts or not;
// checked from the host after the sandbox is gone, including by starting
// the host's Python with the workspace as its home.
func TestPoisonHomeTools(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := homeToolsWorkspace(t)
		_, out := sandboxRun(t, r, ws, homeToolsScript(markers))
		t.Log(out)
		assert.Contains(t, out, "done", "the script ran to its end")
		assert.NotContains(t, out, "made-local", ".local cannot be renamed and remade")
		assertHomeToolsUntouched(t, ws, markers)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		ws, markers := homeToolsWorkspace(t)
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "poison-home", spec)
		require.NoError(t, err)
		// Mid-session, after an ordinary command, then from the background.
		var out, errb bytes.Buffer
		_, err = s.Run(t.Context(), Command{Shell: "true", Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		_, err = s.Run(t.Context(), Command{Shell: homeToolsScript(markers), Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		t.Log(out.String(), errb.String())
		assert.Contains(t, out.String(), "done", "the script ran to its end")
		assert.NotContains(t, out.String(), "made-local", ".local cannot be renamed and remade")
		bg, err := s.Start(Command{Shell: "sleep 0.2; " + homeToolsScript(markers)})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		_, err = bg.Wait(ctx)
		require.NoError(t, err)
		bout, berr, _ := bg.Output()
		t.Log(string(bout), string(berr))
		assert.Contains(t, string(bout), "done", "the background script ran to its end")
		assert.NotContains(t, string(bout), "made-local", ".local cannot be renamed and remade")
		// While the session lives, the host sees nothing planted: a
		// reservation is a dangling link, which opens as ENOENT.
		for _, p := range []string{".npmrc", ".local/bin/ls", ".local/lib/python3.11/site-packages/evil.pth", ".config/systemd/user/evil.service"} {
			_, err := os.Stat(filepath.Join(ws, p))
			assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host while the session lives", p)
		}
		require.NoError(t, m.CloseSession("default", "poison-home"))
		assertHomeToolsUntouched(t, ws, markers)
	})
}

// permissionsScript opens the workspace root and the pinned parents of the
// frozen control surface to other users by every call that can: chmod,
// fchmod and fchmodat2 to 0777 or o+w, an access ACL giving others write,
// a default ACL (every file later made there gets its bits, whatever the
// umask) and an SELinux label, printing "NAME PATH refused" for each
// refusal.
const permissionsScript = `/usr/bin/python3 - <<'EOF'
import ctypes, os, stat, struct
libc = ctypes.CDLL(None, use_errno=True)
def acl(*entries):
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xffffffff) for tag, perm in entries)
open_acl = acl((1, 7), (4, 7), (0x20, 7))  # u::rwx g::rwx o::rwx
def fchmodat2(p, mode):
    if libc.syscall(452, -100, p.encode(), mode, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
for p in [".", ".git", ".git/objects", ".git/refs"]:
    fd = os.open(p, os.O_RDONLY)
    for name, fn in [
        ("chmod", lambda: os.chmod(p, 0o777)),
        ("chmod-o+w", lambda: os.chmod(p, stat.S_IMODE(os.stat(p).st_mode) | stat.S_IWOTH)),
        ("fchmod", lambda: os.fchmod(fd, 0o757)),
        ("fchmodat2", lambda: fchmodat2(p, 0o703)),
        ("acl-access", lambda: os.setxattr(p, "system.posix_acl_access", open_acl)),
        ("acl-default", lambda: os.setxattr(p, "system.posix_acl_default", open_acl)),
        ("facl-default", lambda: os.setxattr(fd, "system.posix_acl_default", open_acl)),
        ("lacl-default", lambda: os.setxattr(p, "system.posix_acl_default", open_acl, follow_symlinks=False)),
        ("selinux", lambda: os.setxattr(p, "security.selinux", b"system_u:object_r:shell_exec_t:s0")),
        ("user", lambda: os.setxattr(p, "user.note", b"1")),
    ]:
        try:
            fn()
            print(name, p, "ok")
        except OSError as e:
            print(name, p, "refused:", e.strerror)
    # What still works: taking rights away, giving them to owner and group.
    os.chmod(p, 0o700)
    os.chmod(p, 0o750)
    print("chmod-own", p, "ok")
EOF
`

// TestPoisonPermissionsOpened: the sandbox tries to open a private (0700)
// workspace and its .git to every local account (F3 of rt14: a 0777 .git
// lets anyone replace .git/config, which host root then runs; a default
// ACL makes every file host root later creates there world-writable).
// From the host, after the sandbox is gone: the modes are the sandbox's
// last allowed chmod (0750), no ACL or label was set, and a file host root
// makes in .git gets its umask's mode, not the sandbox's.
func TestPoisonPermissionsOpened(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Chmod(ws, 0o700))
		_, out := sandboxRun(t, newTestRunner(t), ws, permissionsScript)
		checkPermissionsOpened(t, ws, markers, out)
	})
	t.Run("session", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Chmod(ws, 0o700))
		m := newTestSessions(t)
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "poison-perm", spec)
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = s.Run(t.Context(), Command{Shell: permissionsScript, Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		require.NoError(t, m.CloseSession("default", "poison-perm"))
		checkPermissionsOpened(t, ws, markers, out.String())
	})
}

// checkPermissionsOpened checks permissionsScript's output, and the
// workspace from the host after the sandbox is gone.
func checkPermissionsOpened(t *testing.T, ws, markers, out string) {
	t.Helper()
	t.Log(out)
	for _, p := range []string{".", ".git", ".git/objects", ".git/refs"} {
		for _, call := range []string{"chmod", "chmod-o+w", "fchmod", "fchmodat2", "acl-access", "acl-default", "facl-default", "lacl-default", "selinux", "user"} {
			assert.Contains(t, out, call+" "+p+" refused", "%s of %s", call, p)
		}
		assert.Contains(t, out, "chmod-own "+p+" ok", "a chmod that takes rights away works")
		// From the host.
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(ws, p), &st))
		assert.Equal(t, uint32(0o750), st.Mode&0o7777, "%s: the mode the sandbox may set", p)
		_, err := unix.Lgetxattr(filepath.Join(ws, p), "security.selinux", nil)
		assert.True(t, errors.Is(err, unix.ENODATA) || errors.Is(err, unix.EOPNOTSUPP), "%s has a label the sandbox set: %v", p, err)
	}
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	hostFile := filepath.Join(ws, ".git", "host-made")
	require.NoError(t, os.WriteFile(hostFile, nil, 0o666))
	fi, err := os.Stat(hostFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "a file host root makes gets the umask's mode")
	require.NoError(t, os.Remove(hostFile))
	assertHostClean(t, ws, markers, true)
}

// TestPoisonHomeOwnersTether: a home workspace holds its owner's own
// tether (the XDG defaults ~/.config/tether and ~/.local/state/tether),
// which is not the tether running the sandbox, so nothing hides it (F4 of
// rt14: a root tether's sandbox on alice's home wrote "*" into alice's
// allowlist, and alice's tether then approved everything). The sandbox
// rewrites, replaces and renames them, existing or not; from the host,
// after it is gone, they are as they were or absent.
func TestPoisonHomeOwnersTether(t *testing.T) {
	const allowlist, cfgFile = ".local/state/tether/allowlist/default.json", ".config/tether/config.yaml"
	const script = `s=.local/state/tether
mkdir -p $s/allowlist .config/tether
echo '{"version":1,"entries":[{"pattern":"*","by":"sandbox"}]}' > $s/allowlist/default.json && echo WROTE-ALLOWLIST
printf "approvals: {mode: off}\n" >> .config/tether/config.yaml && echo WROTE-CONFIG
mv $s $s-orig && mkdir -p $s/allowlist && echo '{"version":1,"entries":[{"pattern":"*"}]}' > $s/allowlist/default.json && echo RENAMED-STATE
mv .config/tether .config/tether-orig && echo RENAMED-CONFIG
echo done`
	for _, present := range []bool{true, false} {
		t.Run(fmt.Sprintf("present=%v", present), func(t *testing.T) {
			r := newTestRunner(t)
			ws, markers := poisonWorkspace(t, false)
			t.Setenv("HOME", ws)
			files := map[string]string{allowlist: `{"version":1,"entries":[]}` + "\n", cfgFile: "profiles: {}\n"}
			if !present {
				// .local/state and .config exist (other programs made
				// them); tether's directories in them do not.
				files = map[string]string{".local/state/less/history": "x\n", ".config/user-dirs.locale": "C\n"}
			}
			for p, content := range files {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(content), 0o644))
			}
			chownWorkspace(t, ws)
			_, out := sandboxRun(t, r, ws, script)
			t.Log(out)
			require.Contains(t, out, "done")
			for _, w := range []string{"WROTE-ALLOWLIST", "WROTE-CONFIG", "RENAMED-STATE", "RENAMED-CONFIG"} {
				assert.NotContains(t, out, w)
			}
			// From the host, after the sandbox is gone.
			for p, want := range files {
				got, err := os.ReadFile(filepath.Join(ws, p))
				require.NoError(t, err, p)
				assert.Equal(t, want, string(got), "%s changed on the host", p)
			}
			for _, p := range []string{".local/state/tether-orig", ".config/tether-orig"} {
				assert.NoFileExists(t, filepath.Join(ws, p), "renamed away")
			}
			if !present {
				for _, p := range []string{".local/state/tether", ".config/tether"} {
					_, err := os.Lstat(filepath.Join(ws, p))
					assert.ErrorIs(t, err, fs.ErrNotExist, "%s was created", p)
				}
			}
			assertHostClean(t, ws, markers, false)
		})
	}
}

// TestPoisonHomeDotEntries: in a home workspace every existing dot-entry
// is frozen, whether the protected list names its program or not (F1 of
// rt14: tmux, gdb, xdg-user-dir, kubectl, docker's cli-plugins, ~/go/bin
// and pyenv's shims on PATH, rustup's toolchains, bash-completion,
// direnv's allow list and whitelist, ssh's known_hosts and config.d …
// all ran what a sandbox planted), and so are ~/bin and ~/go/bin (the
// caches: TestPoisonHomeCaches). From the host afterwards: every planted
// file is absent or as it was.
func TestPoisonHomeDotEntries(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	present := map[string]string{
		".ssh/known_hosts":       "host ssh-ed25519 AAAA\n",
		".config/user-dirs.dirs": "XDG_DESKTOP_DIR=\"$HOME/Desktop\"\n",
		".kube/config":           "apiVersion: v1\n",
		".rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo": "#!/bin/sh\n",
		".local/share/less/.keep":                                      "",
		".docker/cli-plugins/.keep":                                    "",
		"go/bin/.keep":                                                 "",
		"go/pkg/mod/.keep":                                             "",
		".pyenv/shims/.keep":                                           "",
		".cache/.keep":                                                 "",
		".cargo/registry/.keep":                                        "",
		"bin/.keep":                                                    "",
	}
	for p, content := range present {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(content), 0o644))
	}
	chownWorkspace(t, ws)
	planted := []string{
		".config/tmux/tmux.conf", ".config/gdb/gdbinit", ".config/user-dirs.dirs", ".kube/config",
		".docker/cli-plugins/docker-rt14", "go/bin/ls", ".pyenv/shims/ls",
		".rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo",
		".local/share/bash-completion/completions/git", ".config/direnv/direnv.toml", ".local/share/direnv/allow/x",
		".ssh/known_hosts", ".ssh/config.d/evil", ".config/emacs/init.el", ".config/Code/User/settings.json", "bin/ls",
		// Missing at the start, at the root: the creation gate refuses them.
		".tmux.conf", ".sqliterc", ".gdbinit", ".selected_editor", ".bash_completion", ".gradle/init.d/x.gradle",
	}
	script := "m=" + markers + "\n"
	for _, p := range planted {
		script += fmt.Sprintf("mkdir -p %s 2>/dev/null; printf '#!/bin/sh\\ntouch $m/%s\\n' >> %s && chmod 755 %s && echo WROTE %s\n",
			filepath.Dir(p), filepath.Base(p), p, p, p)
	}
	script += `mv .kube .kube-orig && echo RENAMED
echo done`
	_, out := sandboxRun(t, r, ws, script)
	t.Log(out)
	require.Contains(t, out, "done")
	assert.NotContains(t, out, "WROTE")
	assert.NotContains(t, out, "RENAMED")
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
	assert.NoDirExists(t, filepath.Join(ws, ".kube-orig"))
	assertHostClean(t, ws, markers, false)
}

// TestPoisonHomeBinReserved: a home workspace without ~/bin (Debian's
// .profile puts it on PATH at the next login once it exists) or with ~/go
// but no ~/go/bin or ~/go/pkg (Go's module cache, whose toolchains the
// host's go runs): the sandbox cannot make them; from the host afterwards
// none exists.
func TestPoisonHomeBinReserved(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "go"), 0o755))
	chownWorkspace(t, ws)
	_, out := sandboxRun(t, r, ws, `mkdir -p bin && echo MADE-BIN; mkdir -p go/bin && echo MADE-GOBIN; mkdir -p go/pkg/mod && echo MADE-MOD; echo done`)
	t.Log(out)
	require.Contains(t, out, "done")
	assert.NotContains(t, out, "MADE-BIN")
	assert.NotContains(t, out, "MADE-GOBIN")
	assert.NotContains(t, out, "MADE-MOD")
	for _, p := range []string{"bin", "go/bin", "go/pkg"} {
		_, err := os.Lstat(filepath.Join(ws, p))
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s exists on the host", p)
	}
	assertHostClean(t, ws, markers, false)
}

// TestPoisonXattrRefusalKeepsCopies: every xattr write is refused
// (seccomp_files_on.go), and the everyday copies that preserve attributes
// still succeed in the sandbox: cp -a and cp -p of files and directories,
// Python's shutil.copy2 and copytree, and mv across file systems (/tmp
// into the workspace).
func TestPoisonXattrRefusalKeepsCopies(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	_, out := sandboxRun(t, r, ws, `mkdir -p d/e && echo x > d/e/f && chmod 640 d/e/f
cp -a d d2 && echo CP-A-OK
cp -p d/e/f g && echo CP-P-OK
cp -r --preserve=mode,timestamps d d3 && echo CP-PRESERVE-OK
python3 -c 'import shutil; shutil.copy2("d/e/f", "h"); shutil.copytree("d", "d4")' && echo SHUTIL-OK
echo y > /tmp/m && mv /tmp/m m && echo MV-OK`)
	t.Log(out)
	for _, ok := range []string{"CP-A-OK", "CP-P-OK", "CP-PRESERVE-OK", "SHUTIL-OK", "MV-OK"} {
		assert.Contains(t, out, ok)
	}
	fi, err := os.Stat(filepath.Join(ws, "d2/e/f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "cp -a kept the mode")
	assertHostClean(t, ws, markers, false)
}
