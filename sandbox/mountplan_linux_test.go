package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mount plan's tests (Landlock.ReadOnlyWorkspace) attack it from
// inside the sandbox and check from the host afterwards, like the
// Landlock tests (landlock_linux_test.go).

func planPolicy(trees ...string) *Landlock {
	return &Landlock{Trees: trees, ReadOnlyWorkspace: true}
}

// A mandated write tree that does not exist yet is created when the
// sandbox starts (0755, owned like its parent) and is writable inside;
// its parent, which no rule names, stays read-only.
func TestLandlockMountPlanCreatesWriteTree(t *testing.T) {
	r := newTestRunner(t)
	ws, _ := llWorkspace(t)
	out := filepath.Join(ws, "build", "out")
	res, got := llRun(t, r, ws, "echo made > build/out/f && chmod 0600 build/out/f && cat build/out/f; echo x > build/other; echo other=$?; chmod 0700 build; echo chmod=$?", planPolicy(out))
	assert.Contains(t, got, "made\n", "the created tree is writable")
	assert.Contains(t, got, "other=2")
	assert.Contains(t, got, "chmod=1")
	assert.Empty(t, res.NotEnforced)
	// From the host, after the sandbox is gone.
	parent, err := os.Stat(ws)
	require.NoError(t, err)
	for _, dir := range []string{filepath.Dir(out), out} {
		fi, err := os.Stat(dir)
		require.NoError(t, err, "the write tree was not created")
		assert.True(t, fi.IsDir())
		assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), dir)
		assert.Equal(t, parent.Sys().(*syscall.Stat_t).Uid, fi.Sys().(*syscall.Stat_t).Uid, dir)
		assert.Equal(t, parent.Sys().(*syscall.Stat_t).Gid, fi.Sys().(*syscall.Stat_t).Gid, dir)
	}
	data, err := os.ReadFile(filepath.Join(out, "f"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(data))
	assert.NoFileExists(t, filepath.Join(ws, "build", "other"))
}

// The directories the plan created for missing write trees are removed
// when the sandbox ends if they are still empty, one-shot and session,
// checked from the host: a tree the command left empty goes with the
// parents the plan made for it; a tree the command filled stays, with
// its parents; a directory that existed before stays even when empty.
func TestLandlockMountPlanRemovesEmptyCreatedTrees(t *testing.T) {
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := llWorkspace(t)
			require.NoError(t, os.Mkdir(filepath.Join(ws, "pre"), 0o755))
			cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "gen", "empty"),
				filepath.Join(ws, "gen", "filled"), filepath.Join(ws, "out", "x"), filepath.Join(ws, "pre", "t"), filepath.Join(ws, "ok"))}
			var out bytes.Buffer
			cmd := Command{Shell: "test -d gen/empty && test -d out/x && echo made > gen/filled/f && echo done", Stdout: &out, Stderr: &out}
			runPlanned(t, session, "ll-plan-rm", cfg, cmd)
			require.Contains(t, out.String(), "done", "the trees were not created")
			// From the host, after the sandbox is gone.
			for _, rel := range []string{"gen/empty", "out/x", "out", "pre/t"} {
				assert.NoDirExists(t, filepath.Join(ws, rel), "an empty directory the plan made stayed")
			}
			for _, rel := range []string{"gen", "gen/filled", "pre", "ok"} {
				assert.DirExists(t, filepath.Join(ws, rel))
			}
			assert.FileExists(t, filepath.Join(ws, "gen", "filled", "f"))
		})
	}
}

// Only sandboxes under the plan keep the directories it made: with a
// sandbox of the same workspace open that has no plan (a pooled or plain
// one, which binds no write tree), the empty tree a planned one-shot made
// is removed when it ends; with one open under the plan, which may bind
// the tree, it stays until that one ends too, which removes it though it
// did not make it. Checked from the host.
func TestLandlockMountPlanRemovalIgnoresUnplannedSandboxes(t *testing.T) {
	ws, _ := llWorkspace(t)
	sessions := newTestSessions(t)
	open := func(name string, ll *Landlock) *Session {
		s, err := sessions.Open(t.Context(), "default", name, SessionSpec{Config: Config{Workspace: ws, Landlock: ll}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	made := filepath.Join(ws, "gen", "out")
	oneShot := func() {
		t.Helper()
		var out bytes.Buffer
		res, err := newTestRunner(t).Run(t.Context(), Config{Workspace: ws, Landlock: planPolicy(made)},
			Command{Shell: "test -d gen/out && echo made", Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, out.String())
		require.Contains(t, out.String(), "made")
	}

	plain := open("ll-plain", nil)
	oneShot()
	assert.NoDirExists(t, filepath.Join(ws, "gen"), "a sandbox without the plan kept the tree the plan made")
	require.NoError(t, plain.Close())

	planned := open("ll-planned", planPolicy(filepath.Join(ws, "ok")))
	oneShot()
	assert.DirExists(t, made, "the tree was removed while a sandbox under the plan held the workspace")
	require.NoError(t, planned.Close())
	assert.NoDirExists(t, filepath.Join(ws, "gen"), "the last sandbox under the plan left the tree another one made")
	assert.DirExists(t, filepath.Join(ws, "ok"), "a directory that existed before was removed")
}

// The write trees of a plan whose sandbox died without leaving it (a
// crashed tether: the kernel dropped its locks) are removed by GC with
// the workspace's reservations, when still empty; a filled one stays.
func TestLandlockMountPlanGCRemovesDeadPlansTrees(t *testing.T) {
	requireSandbox(t)
	ws, _ := llWorkspace(t)
	state := stateTempDir(t)
	cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "gen", "empty"), filepath.Join(ws, "gen", "filled"))}
	var notEnforced []string
	pr, err := protectFor(state, cfg, false, &notEnforced)
	require.NoError(t, err)
	require.DirExists(t, filepath.Join(ws, "gen", "empty"))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "gen", "filled", "f"), nil, 0o644))
	gc := func() {
		_, err := GC(GCOptions{StateRoot: state, CgroupPrefix: testPrefix + "-gc-" + strconv.Itoa(os.Getpid())})
		require.NoError(t, err)
	}
	gc()
	assert.DirExists(t, filepath.Join(ws, "gen", "empty"), "GC removed a live plan's tree")
	// The holder dies without releasing.
	require.NoError(t, pr.planHold.Close())
	require.NoError(t, pr.hold.Close())
	gc()
	assert.NoDirExists(t, filepath.Join(ws, "gen", "empty"))
	assert.FileExists(t, filepath.Join(ws, "gen", "filled", "f"))
}

// A writable Config.Binds directory outside the workspace is not under
// the mount plan (docs/landlock.md, "Limits of the plan"): Landlock alone
// governs it, so a creation, an append and a removal outside the
// mandate's rules are refused (EACCES, reported with Landlock's
// blockers), while its metadata stays ungoverned: a chmod there works.
// Checked from the host after the sandbox.
func TestLandlockMountPlanWritableBind(t *testing.T) {
	ws, _ := llWorkspace(t)
	bind, err := os.MkdirTemp("/var/tmp", "tether-llb-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(bind) })
	require.NoError(t, os.Chmod(bind, 0o755))
	f := filepath.Join(bind, "f")
	require.NoError(t, os.WriteFile(f, []byte("keep\n"), 0o644))
	cfg := Config{Workspace: ws, Binds: []Bind{{Source: bind}}, Landlock: planPolicy(filepath.Join(ws, "ok"))}
	var out bytes.Buffer
	script := `B=` + bind + `; echo x > $B/new; echo new=$?; echo y >> $B/f; echo append=$?; rm -f $B/f; echo rm=$?; chmod 600 $B/f; echo chmod=$?`
	res, err := newTestRunner(t).Run(t.Context(), cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	got := out.String()
	t.Log(got)
	for _, s := range []string{"new=2\n", "append=2\n", "rm=1\n", "chmod=0\n"} { // the shell's failed redirection is 2
		assert.Contains(t, got, s)
	}
	// Landlock names the directory it refused the creation in.
	assert.True(t, refusedAt(res, bind, "fs.make_reg"), "%+v", res.PathsRefused)
	assert.True(t, refusedAt(res, f, "fs.write_file"), "%+v", res.PathsRefused)
	assert.True(t, refusedAt(res, bind, "fs.remove_file"), "%+v", res.PathsRefused)
	// From the host, after the sandbox is gone.
	assert.NoFileExists(t, filepath.Join(bind, "new"))
	data, err := os.ReadFile(f)
	require.NoError(t, err, "the removal outside the mandate worked")
	assert.Equal(t, "keep\n", string(data))
	fi, err := os.Stat(f)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the documented limit: metadata in a writable bind is not governed")
}

// The plan composes with the protected paths: a repository inside a write
// tree keeps its control surface read-only (its config cannot be
// appended to, chmodded or given a hook), and the pinned git directory of
// the workspace's own repository, outside every write tree, is sealed
// read-only like the rest (a pin is a mount of its own).
func TestLandlockMountPlanProtectedPaths(t *testing.T) {
	r := newTestRunner(t)
	ws, _ := llWorkspace(t)
	proj := filepath.Join(ws, "ok", "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	for _, dir := range []string{ws, proj} {
		out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	config := filepath.Join(proj, ".git", "config")
	cfgBefore, err := os.ReadFile(config)
	require.NoError(t, err)
	cfgStat, err := os.Stat(config)
	require.NoError(t, err)
	desc := filepath.Join(ws, ".git", "description")
	descStat, err := os.Stat(desc)
	require.NoError(t, err)
	script := `echo '[core] fsmonitor = evil' >> ok/proj/.git/config; echo append=$?
chmod 0640 ok/proj/.git/config; echo chmod-config=$?
printf '#!/bin/sh\necho pwned\n' > ok/proj/.git/hooks/pre-commit; echo hook=$?
chmod 0600 .git/description; echo chmod-pin=$?
echo fine > ok/proj/src.txt && echo write-ok`
	res, out := llRun(t, r, ws, script, planPolicy(filepath.Join(ws, "ok")))
	t.Log(out)
	for _, want := range []string{"append=2", "chmod-config=1", "hook=2", "chmod-pin=1", "write-ok"} {
		assert.Contains(t, out, want) // dash exits 2 when a redirection fails
	}
	assert.Empty(t, res.NotEnforced)
	// From the host, after the sandbox is gone.
	cfgAfter, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Equal(t, string(cfgBefore), string(cfgAfter), "the nested repository's config changed")
	fi, err := os.Stat(config)
	require.NoError(t, err)
	assert.Equal(t, cfgStat.Mode(), fi.Mode())
	assert.NoFileExists(t, filepath.Join(proj, ".git", "hooks", "pre-commit"))
	fi, err = os.Stat(desc)
	require.NoError(t, err)
	assert.Equal(t, descStat.Mode(), fi.Mode(), "the sealed pin's file was chmodded")
	data, err := os.ReadFile(filepath.Join(proj, "src.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fine\n", string(data))
}

// A write rule with a symbolic link on its path in the workspace (the
// mandated data/ itself, or a parent such as pub/ in pub/sub) is not
// bound and not followed: what the link points to, outside the mandate,
// stays read-only (content and metadata), and no missing tree is created
// through the link.
func TestLandlockMountPlanSymlinkRule(t *testing.T) {
	for _, c := range []struct{ name, link, rule string }{
		{"last", "data", "data"},
		{"parent", "pub", "pub/sub"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRunner(t)
			ws, secret := llWorkspace(t)
			sdir := filepath.Dir(secret)
			require.NoError(t, os.Symlink("secret", filepath.Join(ws, c.link)))
			before, err := os.Stat(secret)
			require.NoError(t, err)
			script := "echo x > " + c.link + "/new; echo create=$?; chmod 0700 " + c.link + "/key; echo chmod=$?; touch -d 2001-01-01 " + c.link + "/key; echo touch=$?"
			_, out := llRun(t, r, ws, script, planPolicy(filepath.Join(ws, c.rule)))
			t.Log(out)
			for _, want := range []string{"create=2", "chmod=1", "touch=1"} {
				assert.Contains(t, out, want) // dash exits 2 when a redirection fails
			}
			// From the host, after the sandbox is gone.
			after, err := os.Stat(secret)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "chmod through the mandated link")
			assert.Equal(t, before.ModTime(), after.ModTime(), "touch through the mandated link")
			assert.NoFileExists(t, filepath.Join(sdir, "new"))
			assert.NoDirExists(t, filepath.Join(sdir, "sub"), "a write tree was created through the link")
			fi, err := os.Lstat(filepath.Join(ws, c.link))
			require.NoError(t, err)
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link was replaced")
		})
	}
}

// What the read-only workspace refuses where the creation gate sees it (a
// file created or overwritten through O_CREAT, a copy, a directory, a
// symlink) is reported in PathsRefused with "mount.read_only", the
// path named as the sandbox sees it, in a one-shot sandbox and in a
// session; a creation inside the write tree is not. A rename or link
// across the write tree's boundary crosses a mount: EXDEV, nothing
// moved, and the name in the sealed part is reported (op rename, link).
func TestLandlockMountPlanReportsRefusals(t *testing.T) {
	script := `echo gone > secret/key; echo x > secret/new; mkdir secret/d; ln -s key secret/l; cp ok/file secret/f
python3 -c 'import os; os.rename("ok/file", "secret/r")' 2>&1 | grep -o 'Errno 18'; echo in > ok/new
python3 -c 'import os; os.rename("secret/key", "ok/stolen")' 2>&1 | grep -o 'Errno 18'; ln ok/file secret/h; echo link=$?; echo done`
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, secret := llWorkspace(t)
			cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "ok"))}
			var out bytes.Buffer
			cmd := Command{Shell: script, Stdout: &out, Stderr: &out}
			res := runPlanned(t, session, "ll-plan-report", cfg, cmd)
			t.Log(out.String())
			assert.Contains(t, out.String(), "Errno 18", "the rename out of the write tree fails with EXDEV")
			assert.Equal(t, 2, strings.Count(out.String(), "Errno 18"), "each rename across the write tree's boundary fails with EXDEV")
			assert.Contains(t, out.String(), "link=1\n")
			assert.Contains(t, out.String(), "done")
			for _, rel := range []string{"secret/key", "secret/new", "secret/d", "secret/l", "secret/f"} {
				assert.True(t, refusedAt(res, filepath.Join(ws, rel), "mount.read_only"), "want %s refused by the mount; got %+v", rel, res.PathsRefused)
			}
			// The EXDEV of a rename or link names the side in the sealed part.
			assert.True(t, refusedOp(res, filepath.Join(ws, "secret/r"), "rename"), "%+v", res.PathsRefused)
			assert.True(t, refusedOp(res, filepath.Join(ws, "secret/key"), "rename"), "%+v", res.PathsRefused)
			assert.True(t, refusedOp(res, filepath.Join(ws, "secret/h"), "link"), "%+v", res.PathsRefused)
			for _, p := range res.PathsRefused {
				assert.NotContains(t, p.Path, filepath.Join(ws, "ok"), "a path in the write tree was reported")
			}
			// From the host, after the sandbox is gone.
			got, err := os.ReadFile(secret)
			require.NoError(t, err)
			assert.Equal(t, llSecret+"\n", string(got))
			for _, rel := range []string{"new", "d", "l", "f", "r", "h"} {
				assert.NoFileExists(t, filepath.Join(ws, "secret", rel))
			}
			assert.NoFileExists(t, filepath.Join(ws, "ok", "stolen"))
			assert.FileExists(t, filepath.Join(ws, "ok", "file"), "the moved file is still in the write tree")
			assert.FileExists(t, filepath.Join(ws, "ok", "new"))
		})
	}
}

// sealedAt is where the mount plan keeps the workspace read-only: inside
// the workspace, outside each tree, and not an exact rule's own file (a
// file in a directory named by an exact rule is sealed).
func TestSealedAt(t *testing.T) {
	cfg := Config{Workspace: "/host/ws", WorkspaceMount: "/ws", Landlock: &Landlock{
		Trees: []string{"/ws/ok", "/ws/b/c"}, Files: []string{"/ws/Makefile", "/ws/docs"}, ReadOnlyWorkspace: true}}
	for p, want := range map[string]bool{
		"/ws/secret/key": true, "/ws": true, "/ws/b": true, "/ws/b/x": true, "/ws/docs/new": true, "/ws/okay": true,
		"/ws/ok": false, "/ws/ok/x/y": false, "/ws/b/c/d": false, "/ws/Makefile": false, "/ws/docs": false,
		"/tmp/x": false, "/wsx": false, "/ws/ok/../secret": true,
	} {
		assert.Equal(t, want, cfg.sealedAt(p), p)
	}
}

// The calls the read-only workspace refuses before Landlock looks (no
// audit record: a metadata change, a removal, a truncation, an open for
// writing without O_CREAT) are reported by the gate with the operation,
// one-shot and session: outside the write tree each fails, is reported
// mount.read_only, and the host finds the file as it was; inside, the same
// calls succeed and nothing is reported.
func TestLandlockMountPlanReportsMetadataRefusals(t *testing.T) {
	ops := []struct{ name, file, op, cmd string }{
		{"rm", "rm", "unlink", `rm -f "$D/rm"`},
		{"rmdir", "dir", "rmdir", `rmdir "$D/dir"`},
		{"chmod", "chmod", "chmod", `chmod 600 "$D/chmod"`},
		{"chown", "chown", "chown", `chown "$(id -u):$(id -g)" "$D/chown"`},
		{"touch", "touch", "utimes", `touch -d 2001-01-01 "$D/touch"`},
		{"rmxattr", "rmxattr", "setxattr", `python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.keep")' "$D/rmxattr"`},
		{"truncate", "trunc", "open-write", `truncate -c -s 0 "$D/trunc"`},
		{"truncate2", "ptrunc", "truncate", `python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' "$D/ptrunc"`},
		{"r+", "rplus", "open-write", `python3 -c 'import sys; open(sys.argv[1], "r+").write("X")' "$D/rplus"`},
	}
	var script string
	for _, o := range ops {
		script += o.cmd + " 2>/dev/null; echo \"$D." + o.name + "=$?\"\n"
	}
	script = "for D in secret ok; do\n" + script + "done; echo done"
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := llWorkspace(t)
			before := map[string]fileState{}
			for _, d := range []string{"secret", "ok"} {
				for _, o := range ops {
					p := filepath.Join(ws, d, o.file)
					if o.file == "dir" {
						require.NoError(t, os.Mkdir(p, 0o755))
					} else {
						require.NoError(t, os.WriteFile(p, []byte("keep\n"), 0o644))
					}
					require.NoError(t, syscall.Setxattr(p, "user.keep", []byte("1"), 0))
					before[p] = statFile(t, p)
				}
			}
			cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "ok"))}
			var out bytes.Buffer
			cmd := Command{Shell: script, Stdout: &out, Stderr: &out}
			res := runPlanned(t, session, "ll-plan-meta", cfg, cmd)
			got := out.String()
			t.Log(got)
			require.Contains(t, got, "done")
			for _, o := range ops {
				assert.NotContains(t, got, "secret."+o.name+"=0\n", "%s outside the write tree worked", o.name)
				assert.Contains(t, got, "ok."+o.name+"=0\n", "%s inside the write tree failed", o.name)
				p := filepath.Join(ws, "secret", o.file)
				assert.True(t, refusedOp(res, p, o.op), "want %s of %s reported mount.read_only; got %+v", o.op, p, res.PathsRefused)
				// From the host, after the sandbox is gone.
				assert.Equal(t, before[p], statFile(t, p), "%s changed %s", o.name, p)
				assert.NotEqual(t, before[filepath.Join(ws, "ok", o.file)], func() fileState {
					q := filepath.Join(ws, "ok", o.file)
					if _, err := os.Lstat(q); err != nil {
						return fileState{} // removed
					}
					return statFile(t, q)
				}(), "%s in the write tree changed nothing", o.name)
			}
			for _, p := range res.PathsRefused {
				assert.NotContains(t, p.Path, filepath.Join(ws, "ok"), "a path in the write tree was reported")
			}
		})
	}
}

// The descriptor forms of those calls (fchmod, fchown, fsetxattr,
// fremovexattr, futimens) and their AT_EMPTY_PATH forms (fchownat,
// fchmodat2, utimensat, on an O_PATH descriptor, which needs no right to
// read; removexattrat on one opened to read, since the kernel takes no
// O_PATH descriptor for the xattr calls: EBADF) are refused by the mount
// and reported with the file the descriptor names, one-shot and session;
// in the write tree they succeed unreported.
func TestLandlockMountPlanReportsDescriptorRefusals(t *testing.T) {
	ops := []struct{ name, op string }{
		{"fchmod", "chmod"}, {"fchown", "chown"}, {"fremovexattr", "setxattr"},
		{"futimens", "utimes"}, {"fchownat", "chown"}, {"fchmodat2", "chmod"}, {"utimensat", "utimes"},
		{"removexattrat", "setxattr"},
	}
	// Each operation on the file of its name in directory argv[1], with a
	// descriptor opened to read or (the AT_EMPTY_PATH forms) O_PATH.
	const script = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
E = 0x1000  # AT_EMPTY_PATH
def sys_(*a):
    if libc.syscall(*a) != 0:
        raise OSError(ctypes.get_errno(), "syscall")
ops = {
    "fchmod": lambda fd: os.fchmod(fd, 0o600),
    "fchown": lambda fd: os.fchown(fd, os.getuid(), os.getgid()),
    "fremovexattr": lambda fd: os.removexattr(fd, "user.keep"),
    "futimens": lambda fd: os.utime(fd, (1, 1)),
    "fchownat": lambda fd: sys_(260, fd, b"", os.getuid(), os.getgid(), E),
    "fchmodat2": lambda fd: sys_(452, fd, b"", 0o600, E),
    "utimensat": lambda fd: sys_(280, fd, b"", None, E),
    "removexattrat": lambda fd: sys_(466, fd, b"", E, b"user.keep"),
}
for name, f in ops.items():
    flags = os.O_PATH if name in ("fchownat", "fchmodat2", "utimensat") else os.O_RDONLY
    try:
        fd = os.open(os.path.join(sys.argv[1], name), flags)
        f(fd)
        rc = 0
    except OSError as e:
        rc = e.errno
    print("%s.%s=%d" % (sys.argv[1], name, rc))
print(sys.argv[1] + ".done")
`
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := llWorkspace(t)
			before := map[string]fileState{}
			for _, d := range []string{"secret", "ok"} {
				for _, o := range ops {
					p := filepath.Join(ws, d, o.name)
					require.NoError(t, os.WriteFile(p, []byte("keep\n"), 0o644))
					require.NoError(t, syscall.Setxattr(p, "user.keep", []byte("1"), 0))
					before[p] = statFile(t, p)
				}
			}
			require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "t.py"), []byte(script), 0o644))
			cfg := Config{Workspace: ws, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "ok")},
				ReadTrees: []string{filepath.Join(ws, "secret")}, ReadOnlyWorkspace: true}}
			var out bytes.Buffer
			cmd := Command{Shell: "python3 ok/t.py secret; python3 ok/t.py ok", Stdout: &out, Stderr: &out}
			res := runPlanned(t, session, "ll-plan-fd", cfg, cmd)
			got := out.String()
			t.Log(got)
			require.Contains(t, got, "secret.done")
			require.Contains(t, got, "ok.done")
			for _, o := range ops {
				p := filepath.Join(ws, "secret", o.name)
				if strings.Contains(got, fmt.Sprintf("ok.%s=%d\n", o.name, syscall.ENOSYS)) {
					// setxattrat and removexattrat (Linux 6.13) under a
					// libseccomp that does not know them (before 2.6):
					// the sandbox's filter refuses them everywhere.
					t.Logf("%s: ENOSYS from the sandbox's filter", o.name)
					assert.Contains(t, got, fmt.Sprintf("secret.%s=%d\n", o.name, syscall.ENOSYS))
					assert.Equal(t, before[p], statFile(t, p), "%s changed %s", o.name, p)
					continue
				}
				assert.Contains(t, got, fmt.Sprintf("secret.%s=%d\n", o.name, syscall.EROFS), "%s outside the write tree", o.name)
				assert.Contains(t, got, "ok."+o.name+"=0\n", "%s inside the write tree failed", o.name)
				assert.True(t, refusedOp(res, p, o.op), "want %s of %s reported mount.read_only; got %+v", o.op, p, res.PathsRefused)
				// From the host, after the sandbox is gone.
				assert.Equal(t, before[p], statFile(t, p), "%s changed %s", o.name, p)
				q := filepath.Join(ws, "ok", o.name)
				assert.NotEqual(t, before[q], statFile(t, q), "%s in the write tree changed nothing", o.name)
			}
			for _, p := range res.PathsRefused {
				assert.NotContains(t, p.Path, filepath.Join(ws, "ok"), "a path in the write tree was reported")
			}
		})
	}
}

// A hard link of a sealed file into the write tree would give it a
// writable name: the kernel refuses it (EXDEV, another mount) whichever
// form names the file (its path, /proc/self/fd/N of an O_PATH descriptor
// followed with AT_SYMLINK_FOLLOW, the descriptor with AT_EMPTY_PATH,
// which the creation helper links as the caller's own file: linkSource),
// and the gate reports the sealed file with the op link; one-shot and
// session, checked from the host.
func TestLandlockMountPlanReportsLinksOut(t *testing.T) {
	const script = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def linkat(fd, name, new, flags):
    rc = libc.linkat(fd, name, -100, new, flags)  # AT_FDCWD
    return 0 if rc == 0 else ctypes.get_errno()
print("path=%d" % linkat(-100, b"secret/path", b"ok/path", 0))
fd = os.open("secret/empty", os.O_PATH)
print("empty=%d" % linkat(fd, b"", b"ok/empty", 0x1000))  # AT_EMPTY_PATH
fd = os.open("secret/proc", os.O_PATH)
print("proc=%d" % linkat(-100, b"/proc/self/fd/%d" % fd, b"ok/proc", 0x400))  # AT_SYMLINK_FOLLOW
print("done")
`
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := llWorkspace(t)
			forms := []string{"path", "empty", "proc"}
			for _, f := range forms {
				require.NoError(t, os.WriteFile(filepath.Join(ws, "secret", f), []byte("keep\n"), 0o644))
			}
			require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "l.py"), []byte(script), 0o644))
			cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "ok"))}
			var out bytes.Buffer
			res := runPlanned(t, session, "ll-plan-links", cfg, Command{Shell: "python3 ok/l.py", Stdout: &out, Stderr: &out})
			got := out.String()
			t.Log(got)
			require.Contains(t, got, "done")
			for _, form := range forms {
				sealed := filepath.Join(ws, "secret", form)
				assert.Contains(t, got, fmt.Sprintf("%s=%d\n", form, syscall.EXDEV), form)
				assert.True(t, refusedOp(res, sealed, "link"), "%s: %+v", form, res.PathsRefused)
				// From the host, after the sandbox is gone.
				assert.NoFileExists(t, filepath.Join(ws, "ok", form))
				var st syscall.Stat_t
				require.NoError(t, syscall.Stat(sealed, &st))
				assert.Equal(t, uint64(1), uint64(st.Nlink), "the sealed file gained a name (%s)", form)
			}
		})
	}
}

// An atomic writer under the mount plan: an O_TMPFILE made in the write
// tree and linked into it by its descriptor (AT_EMPTY_PATH, and
// /proc/self/fd/N with AT_SYMLINK_FOLLOW) gets its name there, with its
// content and without write for others (umask 0, mode 0666); linked into
// the read-only workspace it is refused (EROFS: the new name's mount is
// checked before the two mounts are compared). One-shot
// and session, checked from the host.
func TestLandlockMountPlanLinksTmpfile(t *testing.T) {
	const script = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.umask(0)
def linkat(fd, name, new, flags):
    rc = libc.linkat(fd, name, -100, new, flags)  # AT_FDCWD
    return 0 if rc == 0 else ctypes.get_errno()
def tmp(data):
    fd = os.open("ok", 0o20200000 | os.O_WRONLY, 0o666)  # O_TMPFILE
    os.write(fd, data)
    return fd
print("empty=%d" % linkat(tmp(b"empty\n"), b"", b"ok/empty", 0x1000))  # AT_EMPTY_PATH
print("proc=%d" % linkat(-100, b"/proc/self/fd/%d" % tmp(b"proc\n"), b"ok/proc", 0x400))  # AT_SYMLINK_FOLLOW
print("out=%d" % linkat(tmp(b"out\n"), b"", b"out", 0x1000))
print("done")
`
	for _, session := range []bool{false, true} {
		name := "one-shot"
		if session {
			name = "session"
		}
		t.Run(name, func(t *testing.T) {
			ws, _ := llWorkspace(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "l.py"), []byte(script), 0o644))
			cfg := Config{Workspace: ws, Landlock: planPolicy(filepath.Join(ws, "ok"))}
			var out bytes.Buffer
			runPlanned(t, session, "ll-plan-tmpfile", cfg, Command{Shell: "python3 ok/l.py", Stdout: &out, Stderr: &out})
			got := out.String()
			t.Log(got)
			require.Contains(t, got, "done")
			assert.Contains(t, got, "empty=0\n")
			assert.Contains(t, got, "proc=0\n")
			assert.Contains(t, got, fmt.Sprintf("out=%d\n", syscall.EROFS))
			// From the host, after the sandbox is gone.
			for _, f := range []string{"empty", "proc"} {
				p := filepath.Join(ws, "ok", f)
				data, err := os.ReadFile(p)
				if !assert.NoError(t, err, f) {
					continue
				}
				assert.Equal(t, f+"\n", string(data))
				fi, err := os.Stat(p)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o644), fi.Mode(), "%s: no write for others or the group", f)
			}
			assert.NoFileExists(t, filepath.Join(ws, "out"))
		})
	}
}

// fileState is what a refused call could have changed in a file.
type fileState struct {
	mode, uid    uint32
	mtime, ctime int64
	data         string
	xattrs       string
}

// statFile returns p's fileState, not following a symlink.
func statFile(t *testing.T, p string) fileState {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(p, &st), p)
	var s fileState
	s.mode, s.uid, s.mtime, s.ctime = st.Mode, st.Uid, st.Mtim.Nano(), st.Ctim.Nano()
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		s.data = string(b)
	}
	buf := make([]byte, 256)
	n, err := syscall.Listxattr(p, buf)
	require.NoError(t, err)
	s.xattrs = string(buf[:n])
	return s
}

// refusedOp reports whether res names path as refused by the mount plan
// (mount.read_only) for op.
func refusedOp(res *Result, path, op string) bool {
	for _, p := range res.PathsRefused {
		if p.Path == path && p.Op == op && slices.Contains(p.Blockers, "mount.read_only") {
			return true
		}
	}
	return false
}

// runPlanned runs cmd once under cfg, in a session named name or one-shot.
func runPlanned(t *testing.T, session bool, name string, cfg Config, cmd Command) *Result {
	t.Helper()
	if !session {
		res, err := newTestRunner(t).Run(t.Context(), cfg, cmd)
		require.NoError(t, err)
		return res
	}
	s, err := newTestSessions(t).Open(t.Context(), "default", name, SessionSpec{Config: cfg})
	require.NoError(t, err)
	res, err := s.Exec(t.Context(), cmd, ExecOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return res
}
