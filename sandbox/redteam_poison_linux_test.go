package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoisonGitConfigNamedFiles: what a repository's frozen configuration
// names in the work tree is git's control surface too. core.hooksPath =
// .husky/_ (husky 9, whose stubs run .husky/HOOK), include.path and
// includeIf files (one not there yet), a shell alias's program (not
// there yet) and a script it runs, and a nested repository's hooks
// directory (not there yet): the sandbox writes, creates and renames
// them all, and afterwards the host's git status, commit and aliases run
// nothing it planted.
func TestPoisonGitConfigNamedFiles(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	configNamedWorkspace(t, ws)
	chownWorkspace(t, ws)
	_, out := sandboxRun(t, r, ws, configNamedScript(markers))
	checkConfigNamed(t, ws, markers, out)
}

// configNamedWorkspace gives the repository at ws configuration that
// names work-tree files, and a nested repository sub/ whose hooksPath
// does not exist yet.
func configNamedWorkspace(t *testing.T, ws string) {
	t.Helper()
	write := func(rel, text string, mode os.FileMode) {
		p := filepath.Join(ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), mode))
	}
	// The project's own hook stub: it runs .husky/pre-commit when there is one.
	write(".husky/_/pre-commit", "#!/bin/sh\n[ -f .husky/pre-commit ] && exec sh .husky/pre-commit\nexit 0\n", 0o755)
	write("tools/shared.gitconfig", "[color]\n\tui = auto\n", 0o644)
	write("tools/fmt.sh", "exit 0\n", 0o644)
	hostGit(t, ws, "config", "core.hooksPath", ".husky/_")
	hostGit(t, ws, "config", "include.path", "../tools/shared.gitconfig")
	hostGit(t, ws, "config", "includeIf.gitdir:/.path", "../late.gitconfig")
	hostGit(t, ws, "config", "alias.lint", "!./scripts/lint")
	hostGit(t, ws, "config", "alias.fmt", "!sh tools/fmt.sh")
	// Programs found in $PATH and their plain words name no work-tree
	// file: the project's code/ and clean/ stay writable.
	hostGit(t, ws, "config", "core.editor", "code --wait")
	hostGit(t, ws, "config", "filter.lfs.clean", "git-lfs clean -- %f")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "code"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "clean"), 0o755))
	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	hostGit(t, sub, "init", "-q")
	hostGit(t, sub, "config", "core.hooksPath", ".githooks")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "sub-one")
}

// configNamedScript writes, creates and renames what the configuration
// of configNamedWorkspace names.
func configNamedScript(markers string) string {
	return fmt.Sprintf(`m=%s
git -c user.name=s -c user.email=s@s commit -q --allow-empty -m sandbox && echo commit-ok
echo ok > code/x && echo ok > clean/y && echo dirs-writable
hook() { mkdir -p "$(dirname "$1")"; printf '#!/bin/sh\ntouch %%s/%%s\n' $m "$2" > "$1"; chmod 755 "$1"; }
hook .husky/pre-commit husky; hook .husky/_/pre-commit husky-stub; hook sub/.githooks/pre-commit sub-hook
printf '[core]\n\tfsmonitor = "touch %%s/include; false"\n' $m > tools/shared.gitconfig
printf '[core]\n\tfsmonitor = "touch %%s/late-include; false"\n' $m > late.gitconfig
hook scripts/lint alias-lint; echo "touch $m/alias-fmt" > tools/fmt.sh
mv .husky .husky-orig; mv tools tools-orig
mkdir -p .husky/_ tools; hook .husky/_/pre-commit husky-renamed
printf '[core]\n\tfsmonitor = "touch %%s/include-renamed; false"\n' $m > tools/shared.gitconfig
ls -la . .husky tools sub
`, markers)
}

// checkConfigNamed checks configNamedScript's output and, from the host,
// that git runs nothing it planted.
func checkConfigNamed(t *testing.T, ws, markers, out string) {
	t.Helper()
	t.Log(out)
	sub := filepath.Join(ws, "sub")
	assert.Contains(t, out, "commit-ok", "git work goes on")
	assert.Contains(t, out, "dirs-writable", "what a configured command's plain words name stays writable")
	assertHostClean(t, ws, markers, true)
	hostGit(t, sub, "status")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "host")
	for _, alias := range []string{"lint", "fmt"} {
		cmd := exec.Command("git", "-c", "safe.directory=*", alias)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
		o, _ := cmd.CombinedOutput() // lint's program does not exist: git says so
		t.Logf("git %s: %s", alias, o)
	}
	assertEmptyDir(t, markers)
}

// TestPoisonHostTrustedLinks: a workspace that is a dotfiles checkout
// holds what the host trusts outside it. ~/.bashrc is a symlink to the
// checkout's bashrc, ~/.config/fish one to a directory it does not hold
// yet, and ~/.gitconfig (a plain file) sets core.hooksPath to a missing
// directory of the checkout and includes one of its files. The sandbox
// writes and creates them all; afterwards the host's login shell and git
// (in another repository) run nothing it planted.
func TestPoisonHostTrustedLinks(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	home := t.TempDir()
	t.Setenv("HOME", home)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bashrc"), []byte("# rc\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "git/extra.inc"), []byte("[color]\n\tui = auto\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(ws, "bashrc"), filepath.Join(home, ".bashrc")))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(ws, "fish"), filepath.Join(home, ".config", "fish")))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(fmt.Sprintf(
		"[core]\n\thooksPath = %s/githooks\n[include]\n\tpath = %s/git/extra.inc\n", ws, ws)), 0o644))
	chownWorkspace(t, ws)

	_, out := sandboxRun(t, r, ws, fmt.Sprintf(`m=%s
echo "touch $m/bashrc" >> bashrc
mkdir -p fish githooks; echo "touch $m/fish" > fish/config.fish
printf '#!/bin/sh\ntouch %%s/global-hook\n' $m > githooks/pre-commit; chmod 755 githooks/pre-commit
printf '[core]\n\tfsmonitor = "touch %%s/global-include; false"\n' $m > git/extra.inc
mv git git-orig; mkdir git; printf '[core]\n\tfsmonitor = "touch %%s/include-renamed; false"\n' $m > git/extra.inc
echo done`, markers))
	t.Log(out)
	assert.Contains(t, out, "done")
	// From the host, after the sandbox is gone: a login shell, and git in
	// another repository, with the person's home.
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	sh := exec.Command("bash", "-i", "-c", "true")
	sh.Env = env
	_, _ = sh.CombinedOutput()
	other := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"status"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = other, env
		o, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, o)
	}
	assertEmptyDir(t, markers)
	rc, err := os.ReadFile(filepath.Join(ws, "bashrc"))
	require.NoError(t, err)
	assert.Equal(t, "# rc\n", string(rc))
	assertNoPrivilege(t, ws)
}

// whiteoutScript tries renameat2 with each of its flags, printing the
// result of each.
const whiteoutScript = `python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
open("a", "w").close(); open("x", "w").close(); open("y", "w").close()
for name, old, new, flags in [("whiteout", b"a", b"b", 4), ("noreplace", b"x", b"z", 1), ("exchange", b"y", b"z", 2), ("plain", b"z", b"w", 0)]:
    r = libc.syscall(316, -100, old, -100, new, flags)  # renameat2
    print(name, r, os.strerror(ctypes.get_errno()) if r else "ok", flush=True)
EOF`

// TestPoisonWhiteout: renameat2(RENAME_WHITEOUT) leaves a 0:0 character
// device at the old name, a device node made without mknod. It is refused
// in one-shot runs and sessions; renameat2's other flags keep working; the
// host finds no device node afterwards.
func TestPoisonWhiteout(t *testing.T) {
	script := whiteoutScript
	check := func(t *testing.T, ws, out string) {
		t.Helper()
		t.Log(out)
		assert.Contains(t, out, "whiteout -1 Operation not permitted")
		for _, ok := range []string{"noreplace 0 ok", "exchange 0 ok", "plain 0 ok"} {
			assert.Contains(t, out, ok)
		}
		assertNoPrivilege(t, ws)
	}
	t.Run("one-shot", func(t *testing.T) {
		r := newTestRunner(t)
		ws, _ := poisonWorkspace(t, false)
		_, out := sandboxRun(t, r, ws, script)
		check(t, ws, out)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		ws, _ := poisonWorkspace(t, false)
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "whiteout", spec)
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = s.Run(t.Context(), Command{Shell: script, Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		require.NoError(t, m.CloseSession("default", "whiteout"))
		check(t, ws, out.String())
	})
}

// TestPoisonLinkedControlSurface: what the frozen entries reach by a link.
// A hook that is a symlink into the work tree (relative, absolute, dangling)
// has its target frozen with it: the sandbox can neither rewrite it nor
// rename its directory away and plant a new one. A protected file with
// another name in the workspace (a hard link made on the host before the
// sandbox: `ln .bashrc dotfiles/bashrc`, `ln scripts/x .git/hooks/x`) would
// be rewritten through that name, so the sandbox is refused.
func TestPoisonLinkedControlSurface(t *testing.T) {
	r := newTestRunner(t)
	t.Run("symlinked hooks", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "scripts/pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
		require.NoError(t, os.Symlink("../../scripts/pre-commit", filepath.Join(ws, ".git/hooks/pre-commit")))
		require.NoError(t, os.Symlink(filepath.Join(ws, "scripts/post-commit"), filepath.Join(ws, ".git/hooks/post-commit")))
		require.NoError(t, os.Symlink("/bin/true", filepath.Join(ws, ".git/hooks/pre-push")))
		chownWorkspace(t, ws)
		res, out := sandboxRun(t, r, ws, fmt.Sprintf(`m=%[1]s
hook() { printf '#!/bin/sh\ntouch %[1]s/%%s\n' "$2" > "$1"; echo "$2=$?"; chmod 755 "$1"; }
hook scripts/pre-commit rewrite
hook scripts/post-commit create
mv scripts scripts2; echo mv=$?
mkdir -p scripts; hook scripts/pre-commit renamed
git -c user.name=s -c user.email=s@s commit -q --allow-empty -m two && echo commit-ok
`, markers))
		t.Log(out)
		require.Equal(t, 0, res.ExitCode, out)
		for _, op := range []string{"rewrite", "create", "mv"} {
			assert.NotContains(t, out, op+"=0", "%s: the hook's target is frozen", op)
		}
		assert.Contains(t, out, "commit-ok", "git work goes on, running the hook")
		assertHostClean(t, ws, markers, true)
		assertEmptyDir(t, markers)
	})
	t.Run("hard links", func(t *testing.T) {
		for name, link := range map[string][2]string{
			"rc file":  {".bashrc", "dotfiles/bashrc"},
			"config":   {".git/config", "gitcfg"},
			"hook":     {".git/hooks/pre-commit", "scripts/pre-commit"},
			"git file": {"lib/.git", "lib/gitfile"},
		} {
			t.Run(name, func(t *testing.T) {
				ws, markers := poisonWorkspace(t, true)
				t.Setenv("HOME", ws) // a home workspace: .bashrc is frozen
				for _, p := range link {
					require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
				}
				if _, err := os.Lstat(filepath.Join(ws, link[0])); err != nil {
					text := "#!/bin/sh\nexit 0\n"
					if name == "git file" {
						text = "gitdir: ../.git\n"
					}
					require.NoError(t, os.WriteFile(filepath.Join(ws, link[0]), []byte(text), 0o755))
				}
				require.NoError(t, os.Link(filepath.Join(ws, link[0]), filepath.Join(ws, link[1])))
				chownWorkspace(t, ws)
				var out bytes.Buffer
				res, err := r.Run(t.Context(), Config{Workspace: ws}, Command{Shell: fmt.Sprintf(
					`echo ran; printf '[core]\n\tfsmonitor = "touch %s/fsmonitor; false"\n' >> %s`, markers, link[1]), Stdout: &out, Stderr: &out})
				require.ErrorIs(t, err, ErrUnsafeWorkspace)
				assert.ErrorContains(t, err, link[0]+" has 2 names")
				assert.Nil(t, res)
				assert.NotContains(t, out.String(), "ran", "nothing ran")
				assertHostClean(t, ws, markers, true)
			})
		}
	})
}

// TestPoisonSyscallForms: the privilege artefacts and repositories by the
// system-call forms libc and coreutils do not use: an O_TMPFILE linked in
// as .git or HEAD (linkat with AT_EMPTY_PATH or through /proc/self/fd, link),
// raw mknod and mknodat of devices, whiteouts, setuid regular files, .git
// and a HEAD FIFO, setxattrat (6.13) of a file capability, chmod's five
// entry points including fchmodat2 with AT_EMPTY_PATH on an O_PATH
// descriptor and a /proc/self/fd path, and the new mount API. Each is
// refused; from the host afterwards nothing can raise a privilege and no
// repository was made.
func TestPoisonSyscallForms(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	chownWorkspace(t, ws)
	_, out := sandboxRun(t, r, ws, `cp /bin/true f
/usr/bin/python3 - <<'EOF'
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def sc(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r >= 0 else "refused: " + os.strerror(ctypes.get_errno()), flush=True)
    return r
AT_FDCWD=-100
O_TMPFILE = 0o20200000
fd = os.open("sub", O_TMPFILE | os.O_WRONLY, 0o644)
os.write(fd, b"gitdir: ../.git\n")
sc("linkat-empty-git", 265, fd, b"", AT_FDCWD, b"sub/.git", 0x1000)
sc("linkat-proc-git", 265, AT_FDCWD, ("/proc/self/fd/%d" % fd).encode(), AT_FDCWD, b"sub/.git", 0x400)
sc("linkat-empty-head", 265, fd, b"", AT_FDCWD, b"sub/HEAD", 0x1000)
sc("link-proc-head", 86, ("/proc/self/fd/%d" % fd).encode(), b"sub/HEAD")
sc("fchmod-tmpfile-suid", 91, fd, 0o4755)
sc("mknod-chr", 133, b"c1", 0o20644, os.makedev(1, 3))
sc("mknod-blk", 133, b"b1", 0o60644, os.makedev(8, 0))
sc("mknodat-chr", 259, AT_FDCWD, b"c2", 0o20644, os.makedev(1, 3))
sc("mknodat-whiteout", 259, AT_FDCWD, b"c3", 0o20000, 0)
sc("mknod-suid-reg", 133, b"r1", 0o104755, 0)
sc("mknod-sgid-reg", 259, AT_FDCWD, b"r2", 0o102755, 0)
sc("mknod-git", 133, b"sub/.git", 0o100644, 0)
sc("mknod-fifo-head", 259, AT_FDCWD, b"sub/HEAD", 0o10644, 0)
cap = bytes([0, 0, 0, 2, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
buf = ctypes.create_string_buffer(cap, len(cap))
args = struct.pack("<QII", ctypes.addressof(buf), len(cap), 0)
argbuf = ctypes.create_string_buffer(args, len(args))
sc("setxattrat-cap", 463, AT_FDCWD, b"f", 0, b"security.capability", argbuf, len(args))
sc("setxattrat-trusted", 463, AT_FDCWD, b"f", 0, b"trusted.x", argbuf, len(args))
ubuf = ctypes.create_string_buffer(struct.pack("<QII", ctypes.addressof(buf), 1, 0), 16)
sc("setxattrat-user", 463, AT_FDCWD, b"f", 0, b"user.x", ubuf, 16)
sc("chmod", 90, b"f", 0o4755)
sc("fchmodat", 268, AT_FDCWD, b"f", 0o2755)
sc("fchmodat2", 452, AT_FDCWD, b"f", 0o6755, 0)
fd2 = os.open("f", os.O_RDONLY)
sc("fchmod", 91, fd2, 0o4755)
sc("fchmodat2-empty", 452, fd2, b"", 0o4755, 0x1000)
opath = os.open("f", os.O_PATH)
sc("fchmodat2-opath-empty", 452, opath, b"", 0o4755, 0x1000)
sc("fchmodat-proc", 268, AT_FDCWD, ("/proc/self/fd/%d" % opath).encode(), 0o4755)
sc("open_tree", 428, AT_FDCWD, b".git", 1)
sc("fsopen", 430, b"tmpfs", 0)
EOF
`)
	t.Log(out)
	for _, name := range []string{"linkat-empty-git", "linkat-proc-git", "linkat-empty-head", "link-proc-head", "fchmod-tmpfile-suid", "mknod-chr", "mknod-blk", "mknodat-chr", "mknodat-whiteout", "mknod-suid-reg", "mknod-sgid-reg", "mknod-git", "mknod-fifo-head", "setxattrat-cap", "setxattrat-trusted", "setxattrat-user", "chmod", "fchmodat", "fchmodat2", "fchmod", "fchmodat2-empty", "fchmodat2-opath-empty", "fchmodat-proc", "open_tree", "fsopen"} {
		assert.Contains(t, out, name+" refused: ", "%s", name)
	}
	assertHostClean(t, ws, markers, true)
	assertNoNewRepo(t, ws, ".git")
	fi, err := os.Stat(filepath.Join(ws, "f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm()|fi.Mode()&(os.ModeSetuid|os.ModeSetgid), "no mode bit beyond 0755")
}

// TestPoisonLinkCheckBounded: frozen directories of more names than the
// link check reads (a home's .local/lib) do not stall the start: the
// sandbox runs, and reports protected-links as not enforced rather than
// a checked workspace.
func TestPoisonLinkCheckBounded(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, false)
	t.Setenv("HOME", ws) // a home workspace: .local/lib is frozen
	lib := filepath.Join(ws, ".local/lib")
	require.NoError(t, os.MkdirAll(lib, 0o755))
	for i := range maxFrozenEntries + 1 {
		f, err := os.Create(filepath.Join(lib, fmt.Sprintf("m%06d.py", i)))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	chownWorkspace(t, ws)
	res, out := sandboxRun(t, r, ws, "echo ran; echo evil > .local/lib/m000000.py")
	assert.Contains(t, out, "ran")
	assert.Contains(t, res.NotEnforced, "protected-links")
	data, err := os.ReadFile(filepath.Join(lib, "m000000.py"))
	require.NoError(t, err)
	assert.Empty(t, data, "the frozen directory itself stays read-only")
	assertHostClean(t, ws, markers, false)
}

// TestPoisonHostGitConfigKeys: the global git configuration names files of
// the workspace by keys git runs or trusts beyond hooksPath and include
// (F5 of rt14): init.templateDir (every later git init or clone anywhere
// copies its hooks and runs them), trailer.<t>.command and .cmd,
// core.alternateRefsCommand, and the trust files http.sslCAInfo and
// gpg.ssh.allowedSignersFile. The sandbox writes or creates them all; from
// the host afterwards, a clone elsewhere and a commit with a trailer run
// nothing it planted, and the trust files are as they were.
func TestPoisonHostGitConfigKeys(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	home := t.TempDir()
	t.Setenv("HOME", home)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "tmpl", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", "signer"), []byte("#!/bin/sh\necho 't <t@t>'\n"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "keys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "keys", "allowed"), []byte("t@t ssh-ed25519 AAAA\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(fmt.Sprintf(
		"[init]\n\ttemplateDir = %[1]s/tmpl\n[trailer \"sign\"]\n\tkey = Signed-off-by\n\tcommand = %[1]s/bin/signer\n"+
			"[trailer \"fix\"]\n\tcmd = %[1]s/bin/fixer\n[core]\n\talternateRefsCommand = %[1]s/bin/altrefs\n"+
			"[http]\n\tsslCAInfo = %[1]s/ca.pem\n[gpg \"ssh\"]\n\tallowedSignersFile = %[1]s/keys/allowed\n", ws)), 0o644))
	chownWorkspace(t, ws)

	_, out := sandboxRun(t, r, ws, fmt.Sprintf(`m=%s
printf '#!/bin/sh\ntouch %%s/template-hook\n' $m > tmpl/hooks/post-checkout && chmod 755 tmpl/hooks/post-checkout && echo WROTE-TEMPLATE
printf '#!/bin/sh\ntouch %%s/trailer\necho "x <x@x>"\n' $m > bin/signer && echo WROTE-SIGNER
printf '#!/bin/sh\ntouch %%s/trailer-cmd\n' $m > bin/fixer && chmod 755 bin/fixer && echo WROTE-FIXER
printf '#!/bin/sh\ntouch %%s/altrefs\n' $m > bin/altrefs && chmod 755 bin/altrefs && echo WROTE-ALTREFS
echo planted-ca > ca.pem && echo WROTE-CA
echo '* ssh-ed25519 PLANTED' >> keys/allowed && echo WROTE-SIGNERS
mv tmpl tmpl-orig && mkdir -p tmpl/hooks && printf '#!/bin/sh\ntouch %%s/template-renamed\n' $m > tmpl/hooks/post-checkout && chmod 755 tmpl/hooks/post-checkout && echo RENAMED-TEMPLATE
echo done`, markers))
	t.Log(out)
	require.Contains(t, out, "done")
	for _, w := range []string{"WROTE-TEMPLATE", "WROTE-SIGNER", "WROTE-FIXER", "WROTE-ALTREFS", "WROTE-CA", "WROTE-SIGNERS", "RENAMED-TEMPLATE"} {
		assert.NotContains(t, out, w)
	}
	// From the host, after the sandbox is gone: a clone outside the
	// workspace and a commit with both trailers, with the person's home.
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "clone")
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		o, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, o)
	}
	git(src, "init", "-q")
	git(src, "commit", "-q", "--allow-empty", "-m", "src")
	git(src, "clone", "-q", src, dst)
	git(dst, "commit", "-q", "--allow-empty", "-m", "x", "--trailer", "sign: x", "--trailer", "fix: y")
	assertEmptyDir(t, markers)
	assert.NoFileExists(t, filepath.Join(ws, "ca.pem"), "a CA bundle git trusts was planted")
	signers, err := os.ReadFile(filepath.Join(ws, "keys", "allowed"))
	require.NoError(t, err)
	assert.Equal(t, "t@t ssh-ed25519 AAAA\n", string(signers), "the allowed signers git trusts were changed")
	assertNoPrivilege(t, ws)
}
