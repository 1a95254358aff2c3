package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// The host changes the workspace while a sandbox lives (issue 14, red
// team F8, F2, F6): a rename over a frozen file detaches its bind, a
// repository made on the host has no binds at all, and a deleted
// reservation frees its name. The creation gate decides by what a name
// is at call time, so none of them opens the control surface.

// fsmonitorLine is a shell fragment appending a core.fsmonitor that
// touches markers/name to the git config file cfg, echoing WROTE-name
// when the append landed.
func fsmonitorLine(cfg, markers, name string) string {
	return fmt.Sprintf(`printf '[core]\n\tfsmonitor = "touch %s/%s; false"\n' >> %s && echo WROTE-%s`, markers, name, cfg, name)
}

// ownerGit runs git in dir as the workspace's owner: the person whose
// host commands change the workspace mid-run (as root they would leave
// root-owned files the sandbox's identity cannot write anyway).
func ownerGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	asOwner(t, dir, append([]string{"git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
}

// asOwner runs a host command in dir as the workspace's owner.
func asOwner(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: wsOwner, Gid: wsOwner}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%v: %s", args, out)
}

// waitFile waits for the sandbox to make p (its signal to the host).
func waitFile(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scaled(20 * time.Second))
	for {
		if _, err := os.Lstat(p); err == nil {
			return
		}
		require.True(t, time.Now().Before(deadline), "the sandbox never made %s", p)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPoisonHostRenameOneShot (F8 in tether run): the host's `git config`
// replaces .git/config by rename while a one-shot command sleeps, which
// detaches the command's read-only bind; the command's append of a
// core.fsmonitor is refused all the same, and host git runs nothing.
func TestPoisonHostRenameOneShot(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	// The test's temporary directory is root's 0700: the owner's host
	// commands must reach the workspace in it.
	require.NoError(t, os.Chmod(filepath.Dir(ws), 0o711))
	script := fmt.Sprintf(`echo x >> .git/config || echo RO-AT-START
touch ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
grep -c ' %s/.git/config ' /proc/self/mountinfo
%s`, ws, fsmonitorLine(".git/config", markers, "fsmonitor"))
	d := runAcrossHostChange(t, ws, func(ctx context.Context, cmd Command) (*Result, error) {
		return r.Run(ctx, Config{Workspace: ws, Limits: Limits{Pids: 128, Timeout: 60 * time.Second}}, cmd)
	}, script, func() {
		ownerGit(t, ws, "config", "rt14.y", "1") // config.lock, then rename over .git/config
	})
	t.Log(d.out)
	require.NotNil(t, d.res)
	assert.Contains(t, d.out, "RO-AT-START")
	assert.NotContains(t, d.out, "WROTE-fsmonitor", "the append after the host's rename is refused")
	assert.True(t, refusedPath(d.res.CreateBlocked, ".git/config"), "the refusal is reported: %+v", d.res.CreateBlocked)
	chownWorkspace(t, ws) // what the host's git and the signal files left as root
	assertHostClean(t, ws, markers, true)
}

// hostChanged is what runAcrossHostChange returns: the command's result
// and its output.
type hostChanged struct {
	res *Result
	out string
}

// runAcrossHostChange runs script (which touches ready, then waits for go)
// with run, makes the host's change once the sandbox is ready, lets the
// command go on, and returns what it did.
func runAcrossHostChange(t *testing.T, ws string, run func(context.Context, Command) (*Result, error), script string, change func()) hostChanged {
	t.Helper()
	ch := make(chan hostChanged, 1)
	go func() {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Scaled(60*time.Second))
		defer cancel()
		res, err := run(ctx, Command{Shell: script, Stdout: &out, Stderr: &out})
		assert.NoError(t, err)
		ch <- hostChanged{res, out.String()}
	}()
	waitFile(t, filepath.Join(ws, "ready"))
	change()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
	return <-ch
}

// refusedPath reports whether blocks hold a refusal of path.
func refusedPath(blocks []CreateBlock, path string) bool {
	for _, b := range blocks {
		if b.Path == path {
			return true
		}
	}
	return false
}

// TestPoisonHostChangesMidSession: a session lives while the host renames
// frozen files (F8: `git config`, `sed -i ~/.bashrc`), makes repositories
// (F2: `git init`, `git clone`) and deletes the reservations (F6: `git
// clean -fdx`); the session's later commands, foreground and background,
// write none of them, and host git runs nothing.
func TestPoisonHostChangesMidSession(t *testing.T) {
	t.Run("git config", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		s, end := openPoisonSession(t, ws)
		out := sessionSh(t, s, "echo x >> .git/config || echo RO-AT-START")
		assert.Contains(t, out, "RO-AT-START")
		ownerGit(t, ws, "config", "rt14.x", "1")
		res, out := sessionRun(t, s, fsmonitorLine(".git/config", markers, "fsmonitor"))
		assert.NotContains(t, out, "WROTE-fsmonitor")
		assert.True(t, refusedPath(res.CreateBlocked, ".git/config"), "%+v", res.CreateBlocked)
		end()
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("sed -i bashrc in a home", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, false)
		rc := filepath.Join(ws, ".bashrc")
		require.NoError(t, os.WriteFile(rc, []byte("# user bashrc\n"), 0o644))
		chownWorkspace(t, ws)
		t.Setenv("HOME", ws) // a home workspace
		s, end := openPoisonSession(t, ws)
		assert.Contains(t, sessionSh(t, s, "echo x >> .bashrc || echo RO-AT-START"), "RO-AT-START")
		asOwner(t, ws, "sed", "-i", "s/user bashrc/user bashrc edited/", rc)
		_, got := sessionRun(t, s, fmt.Sprintf(`echo "touch %s/bashrc" >> .bashrc && echo WROTE-BASHRC`, markers))
		assert.NotContains(t, got, "WROTE-BASHRC")
		b, err := os.ReadFile(rc)
		require.NoError(t, err)
		assert.Equal(t, "# user bashrc edited\n", string(b), "the host's .bashrc holds only the person's edit")
		end()
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, false)
	})
	t.Run("git init and clone", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		s, end := openPoisonSession(t, ws)
		src := t.TempDir() // the host's own repository, cloned into the workspace
		hostGit(t, src, "init", "-q")
		hostGit(t, src, "commit", "-q", "--allow-empty", "-m", "src")
		chownWorkspace(t, src)
		ownerGit(t, ws, "init", "-q", "sub")
		ownerGit(t, ws, "clone", "-q", src, "dep")
		ownerGit(t, ws, "init", "-q", "--bare", "store") // a git directory by its HEAD alone
		hook := func(gd, name string) string {
			return fmt.Sprintf(`printf '#!/bin/sh\ntouch %s/%s\n' > %s/hooks/pre-commit && chmod 755 %[3]s/hooks/pre-commit && echo WROTE-%[2]s`, markers, name, gd)
		}
		// Foreground in sub, background in dep.
		fg, out := sessionRun(t, s, hook("sub/.git", "sub-hook")+"\n"+fsmonitorLine("sub/.git/config", markers, "sub-fsmonitor")+"\n"+
			hook("store", "store-hook")+"\n"+fsmonitorLine("store/config", markers, "store-fsmonitor"))
		assert.True(t, refusedPath(fg.CreateBlocked, "sub/.git/config"), "%+v", fg.CreateBlocked)
		assert.True(t, refusedPath(fg.CreateBlocked, "store/config"), "%+v", fg.CreateBlocked)
		bg, err := s.Start(Command{Shell: hook("dep/.git", "dep-hook") + "\n" + fsmonitorLine("dep/.git/config", markers, "dep-fsmonitor")})
		require.NoError(t, err)
		_, err = bg.Wait(t.Context())
		require.NoError(t, err)
		stdout, stderr, _ := bg.Output()
		out += string(stdout) + string(stderr)
		t.Log(out)
		for _, w := range []string{"sub-hook", "sub-fsmonitor", "store-hook", "store-fsmonitor", "dep-hook", "dep-fsmonitor"} {
			assert.NotContains(t, out, "WROTE-"+w)
		}
		assert.Contains(t, out, "dep/.git/config: Operation not permitted", "the background append is refused")
		end()
		for _, repo := range []string{"sub", "dep"} {
			hostGit(t, filepath.Join(ws, repo), "status")
			hostGit(t, filepath.Join(ws, repo), "commit", "-q", "--allow-empty", "-m", "host")
		}
		cfg, err := os.ReadFile(filepath.Join(ws, "store", "config"))
		require.NoError(t, err)
		assert.NotContains(t, string(cfg), "fsmonitor", "the bare repository's config is the host's")
		assert.NoFileExists(t, filepath.Join(ws, "store", "hooks", "pre-commit"))
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("git clean of the reservations", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		s, end := openPoisonSession(t, ws)
		_, err := os.Lstat(filepath.Join(ws, ".envrc"))
		require.NoError(t, err, "the session reserves .envrc")
		ownerGit(t, ws, "clean", "-fdxq")
		_, err = os.Lstat(filepath.Join(ws, ".envrc"))
		require.ErrorIs(t, err, os.ErrNotExist, "git clean removed the reservation")
		res, out := sessionRun(t, s, fmt.Sprintf(`echo "touch %s/envrc" > .envrc && echo WROTE-ENVRC; echo 'x: [' > .tether.yaml && echo WROTE-TETHER-YAML`, markers))
		assert.NotContains(t, out, "WROTE-ENVRC")
		assert.NotContains(t, out, "WROTE-TETHER-YAML")
		assert.True(t, refusedPath(res.CreateBlocked, ".envrc"), "%+v", res.CreateBlocked)
		for _, name := range []string{".envrc", ".tether.yaml"} {
			_, err := os.Lstat(filepath.Join(ws, name))
			assert.ErrorIs(t, err, os.ErrNotExist, "%s was created", name)
		}
		end()
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, true)
	})
}

// openPoisonSession opens a session on ws; end closes it (the host-side
// checks come after: a live session's reservations are its own).
func openPoisonSession(t *testing.T, ws string) (s *Session, end func()) {
	t.Helper()
	require.NoError(t, os.Chmod(filepath.Dir(ws), 0o711)) // for the owner's host commands
	m := newTestSessions(t)
	spec := testSpec()
	spec.Config.Workspace = ws
	s, err := m.Open(t.Context(), "default", "host-changes", spec)
	require.NoError(t, err)
	end = func() { require.NoError(t, m.CloseSession("default", "host-changes")) }
	return s, end
}

// sessionRun runs script in s and returns its result and combined output.
func sessionRun(t *testing.T, s *Session, script string) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := s.Run(t.Context(), Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err, "output: %s", out.String())
	t.Log(out.String())
	return res, out.String()
}

// sessionSh is sessionRun's output alone.
func sessionSh(t *testing.T, s *Session, script string) string {
	t.Helper()
	_, out := sessionRun(t, s, script)
	return out
}

// TestPoisonHostConfigMidSession: the host names paths in the
// repository's configuration after a session started (`git config
// core.hooksPath .githooks`, a new include.path, a hooks directory that
// exists already); the session's next commands, foreground and
// background, can create none of them, and the host's next commit runs
// nothing planted. The creation gate reads the configuration again when
// its files change (protect.ConfigView); before, it was read at start.
func TestPoisonHostConfigMidSession(t *testing.T) {
	ws, markers := poisonWorkspace(t, true)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "tools", "hooks"), 0o755))
	chownWorkspace(t, ws)
	s, end := openPoisonSession(t, ws)
	// Before the host names them, they are the session's to write.
	assert.Contains(t, sessionSh(t, s, "mkdir -p scratch && echo ok > scratch/x && echo WROTE-BEFORE"), "WROTE-BEFORE")
	ownerGit(t, ws, "config", "core.hooksPath", ".githooks")
	hook := func(p, name string) string {
		return fmt.Sprintf(`mkdir -p %s; printf '#!/bin/sh\ntouch %s/%s\n' > %s/pre-commit && chmod 755 %[4]s/pre-commit && echo WROTE-%[3]s`, p, markers, name, p)
	}
	res, out := sessionRun(t, s, hook(".githooks", "githooks"))
	assert.NotContains(t, out, "WROTE-githooks")
	assert.True(t, refusedPath(res.CreateBlocked, ".githooks"), "%+v", res.CreateBlocked)
	// An include added mid-session names a file that does not exist yet.
	ownerGit(t, ws, "config", "include.path", "../local.gitconfig")
	res, out = sessionRun(t, s, fsmonitorLine("local.gitconfig", markers, "include"))
	assert.NotContains(t, out, "WROTE-include")
	assert.True(t, refusedPath(res.CreateBlocked, "local.gitconfig"), "%+v", res.CreateBlocked)
	// A hooks directory that exists, named in a background command's
	// time.
	ownerGit(t, ws, "config", "core.hooksPath", "tools/hooks")
	bg, err := s.Start(Command{Shell: hook("tools/hooks", "tools-hooks")})
	require.NoError(t, err)
	_, err = bg.Wait(t.Context())
	require.NoError(t, err)
	stdout, stderr, _ := bg.Output()
	t.Log(string(stdout) + string(stderr))
	assert.NotContains(t, string(stdout)+string(stderr), "WROTE-tools-hooks")
	end()
	assert.NoFileExists(t, filepath.Join(ws, ".githooks", "pre-commit"))
	assert.NoFileExists(t, filepath.Join(ws, "tools", "hooks", "pre-commit"))
	assert.NoFileExists(t, filepath.Join(ws, "local.gitconfig"))
	// The host's commit with either hooks directory runs nothing planted
	// (assertHostClean commits with the configuration's, tools/hooks).
	ownerGit(t, ws, "-c", "core.hooksPath=.githooks", "commit", "-q", "--allow-empty", "-m", "owner")
	chownWorkspace(t, ws)
	assertHostClean(t, ws, markers, true)
}

// TestPoisonEnclosingRepoConfig (F10 of the session-11 red team): the
// workspace is a package of a monorepo, and the enclosing repository's
// configuration names paths inside it (core.hooksPath = front/hooks, an
// include.path and a core.fsmonitor program there). The sandbox plants
// a hook, the included file and the program; the host's commit in the
// enclosing repository afterwards runs nothing planted. A hooks directory
// that holds the workspace refuses it.
func TestPoisonEnclosingRepoConfig(t *testing.T) {
	r := newTestRunner(t)
	mono, markers := poisonWorkspace(t, true)
	ws := filepath.Join(mono, "front")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "tools"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "tools", "fsmon.sh"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	hostGit(t, mono, "config", "core.hooksPath", "front/hooks")
	hostGit(t, mono, "config", "include.path", "../front/local.gitconfig")
	hostGit(t, mono, "config", "core.fsmonitor", "front/tools/fsmon.sh")
	chownWorkspace(t, mono)
	script := fmt.Sprintf(`mkdir -p hooks && printf '#!/bin/sh\ntouch %[1]s/hook\n' > hooks/pre-commit && chmod 755 hooks/pre-commit && echo WROTE-HOOK
%[2]s
printf '#!/bin/sh\ntouch %[1]s/fsmon\nexit 1\n' > tools/fsmon.sh && echo WROTE-FSMON
echo done`, markers, fsmonitorLine("local.gitconfig", markers, "include"))
	_, out := sandboxRun(t, r, ws, script)
	t.Log(out)
	require.Contains(t, out, "done")
	for _, w := range []string{"WROTE-HOOK", "WROTE-include", "WROTE-FSMON"} {
		assert.NotContains(t, out, w)
	}
	assertHostClean(t, mono, markers, true) // the host's status, log and commit in the monorepo
	// A hooks directory that holds the workspace.
	hostGit(t, mono, "config", "core.hooksPath", ".")
	_, err := r.Run(t.Context(), Config{Workspace: ws, Limits: Limits{Pids: 64, Timeout: 30 * time.Second}}, Command{Shell: "true"})
	require.ErrorIs(t, err, ErrUnsafeWorkspace)
	assert.Contains(t, err.Error(), "holds the workspace")
}

// TestPoisonHostConfigMidSessionNested: the host points a nested
// repository's hooks at a directory outside its own work tree
// (sub/.git/config: core.hooksPath = ../tools/hooks) after the session
// started; a write to tools/hooks, whose directories above hold no
// repository but the workspace's, is refused all the same: the gate reads
// the configuration of every repository frozen at start.
func TestPoisonHostConfigMidSessionNested(t *testing.T) {
	ws, markers := poisonWorkspace(t, true)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "tools", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	hostGit(t, filepath.Join(ws, "sub"), "init", "-q")
	chownWorkspace(t, ws)
	s, end := openPoisonSession(t, ws)
	ownerGit(t, filepath.Join(ws, "sub"), "config", "core.hooksPath", "../tools/hooks")
	res, out := sessionRun(t, s, fmt.Sprintf(`printf '#!/bin/sh\ntouch %s/nested-hook\n' > tools/hooks/pre-commit && chmod 755 tools/hooks/pre-commit && echo WROTE-HOOK`, markers))
	assert.NotContains(t, out, "WROTE-HOOK")
	assert.True(t, refusedPath(res.CreateBlocked, "tools/hooks/pre-commit"), "%+v", res.CreateBlocked)
	end()
	assert.NoFileExists(t, filepath.Join(ws, "tools", "hooks", "pre-commit"))
	ownerGit(t, filepath.Join(ws, "sub"), "commit", "-q", "--allow-empty", "-m", "owner")
	chownWorkspace(t, ws)
	assertHostClean(t, ws, markers, true)
}

// TestPoisonOutsideInclude (T2 of the session-12 second red team): the
// workspace repository's include.path and includeIf path name team files
// OUTSIDE the workspace, and those name the workspace's hooks/, a
// core.fsmonitor program, an include inside it (inner.cfg) and, through a
// nested include relative to the outside file, an alias program. The
// sandbox plants all four; the host's status, log and commit afterwards
// run nothing planted.
func TestPoisonOutsideInclude(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	team := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(team, name), []byte(text), 0o644))
	}
	write("team.cfg", fmt.Sprintf("[core]\n\thooksPath = %[1]s/hooks\n[include]\n\tpath = %[1]s/inner.cfg\n\tpath = nested.cfg\n", ws))
	write("nested.cfg", fmt.Sprintf("[alias]\n\tst = !%s/tools/st\n", ws))
	write("cond.cfg", fmt.Sprintf("[core]\n\tfsmonitor = %s/tools/fsmon\n", ws))
	hostGit(t, ws, "config", "include.path", filepath.Join(team, "team.cfg"))
	hostGit(t, ws, "config", "includeIf.gitdir:"+ws+"/.path", filepath.Join(team, "cond.cfg"))
	// The host's git reads all three files (the condition holds).
	assert.Equal(t, ws+"/hooks\n", hostGit(t, ws, "config", "--get", "core.hooksPath"))
	assert.Equal(t, ws+"/tools/fsmon\n", hostGit(t, ws, "config", "--get", "core.fsmonitor"))
	chownWorkspace(t, ws)
	script := fmt.Sprintf(`mkdir -p hooks tools
printf '#!/bin/sh\ntouch %[1]s/hook\n' > hooks/pre-commit && chmod 755 hooks/pre-commit && echo WROTE-HOOK
%[2]s
printf '#!/bin/sh\ntouch %[1]s/fsmon\nexit 1\n' > tools/fsmon && chmod 755 tools/fsmon && echo WROTE-FSMON
printf '#!/bin/sh\ntouch %[1]s/alias\n' > tools/st && chmod 755 tools/st && echo WROTE-ALIAS
echo done`, markers, fsmonitorLine("inner.cfg", markers, "include"))
	_, out := sandboxRun(t, r, ws, script)
	t.Log(out)
	require.Contains(t, out, "done")
	for _, w := range []string{"WROTE-HOOK", "WROTE-include", "WROTE-FSMON", "WROTE-ALIAS"} {
		assert.NotContains(t, out, w)
	}
	for _, f := range []string{"hooks/pre-commit", "inner.cfg", "tools/fsmon", "tools/st"} {
		assert.NoFileExists(t, filepath.Join(ws, f))
	}
	assertHostClean(t, ws, markers, true)
}

// TestPoisonEnclosingRepoTildeConfig: an enclosing repository's
// configuration is read by every user's git, so its `~/` paths name a
// directory of the workspace in each of their homes. Before, hostTrusted
// expanded `~/` only in a home's own files and skipped it here: the
// sandbox wrote the hook and the host's commit in the monorepo ran it.
func TestPoisonEnclosingRepoTildeConfig(t *testing.T) {
	r := newTestRunner(t)
	mono, markers := poisonWorkspace(t, true)
	ws := filepath.Join(mono, "front")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	home := filepath.Dir(mono)
	t.Setenv("HOME", home)
	hostGit(t, mono, "config", "core.hooksPath", "~/"+filepath.Base(mono)+"/front/hooks")
	chownWorkspace(t, mono)
	_, out := sandboxRun(t, r, ws, fmt.Sprintf(`mkdir -p hooks && printf '#!/bin/sh\ntouch %s/hook\n' > hooks/pre-commit && chmod 755 hooks/pre-commit && echo WROTE-HOOK
echo done`, markers))
	t.Log(out)
	require.Contains(t, out, "done")
	assert.NotContains(t, out, "WROTE-HOOK")
	// The host's commit in the monorepo, by a git whose home is that one.
	cmd := exec.Command("git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "host")
	cmd.Dir, cmd.Env = mono, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	o, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", o)
	assertEmptyDir(t, markers)
}

// writeNoCreate is a shell fragment that writes data (printf's format)
// to the existing file p by system calls that create nothing, so that
// the creation gate's O_CREAT test never saw them (C1 of the session-12
// second red team): truncate(2) to the file's own size, an append by
// open(O_WRONLY|O_APPEND), a write at the end by open(O_RDWR), and the
// same through /proc/self/fd/N of a descriptor open for reading (which no
// gate asks about). It echoes WROTE-name-how for each that landed.
func writeNoCreate(p, data, name string) string {
	return fmt.Sprintf(`cat > /tmp/wnc.py <<'PY'
import os, sys
p, name, data = sys.argv[1], sys.argv[2], sys.argv[3].encode()
try:
    os.truncate(p, os.path.getsize(p))
    print("WROTE-%%s-truncate" %% name)
except OSError as e:
    print("refused %%s truncate: %%s" %% (name, e))
ro = os.open(p, os.O_RDONLY)
for how, q, flags in (("append", p, os.O_WRONLY | os.O_APPEND), ("rdwr", p, os.O_RDWR),
                      ("reopen", "/proc/self/fd/%%d" %% ro, os.O_RDWR)):
    try:
        fd = os.open(q, flags)
        os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, data)
        os.close(fd)
        print("WROTE-%%s-%%s" %% (name, how))
    except OSError as e:
        print("refused %%s %%s: %%s" %% (name, how, e))
PY
python3 /tmp/wnc.py %s %s "$(printf '%s')"`, p, name, data)
}

// assertNoCreateWrites checks writeNoCreate's output: none of its writes
// of name landed, each refused as the read-only bind refuses it.
func assertNoCreateWrites(t *testing.T, out, name string) {
	t.Helper()
	for _, how := range []string{"truncate", "append", "rdwr", "reopen"} {
		assert.NotContains(t, out, "WROTE-"+name+"-"+how, "a write without O_CREAT after the host's rename")
		assert.Contains(t, out, "refused "+name+" "+how+": [Errno 30] Read-only file system", "refused as the bind would")
	}
}

// TestPoisonHostRenameWriteOpen (C1 of the session-12 second red team,
// issue 14): the host replaces a frozen file by rename while a sandbox
// lives (`git config`, `sed -i ~/.bashrc`, `sed -i .envrc`), which
// detaches the sandbox's read-only bind of it; the sandbox then writes
// the new file by open(O_WRONLY), open(O_RDWR) and truncate(2), none of
// which creates a name. The creation gate judges every open for writing
// and every truncate by what the name is at call time, so each is
// refused, and after the sandbox is gone the host's file holds only the
// host's edit and the host's git runs nothing planted.
func TestPoisonHostRenameWriteOpen(t *testing.T) {
	fsmonitor := func(markers string) string {
		return fmt.Sprintf(`[core]\n\tfsmonitor = "touch %s/fsmonitor; false"\n`, markers)
	}
	t.Run("git config, one-shot", func(t *testing.T) {
		r := newTestRunner(t)
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Chmod(filepath.Dir(ws), 0o711)) // for the owner's host commands
		script := fmt.Sprintf(`echo x >> .git/config || echo RO-AT-START
touch ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
grep -c ' %s/.git/config ' /proc/self/mountinfo
%s`, ws, writeNoCreate(".git/config", fsmonitor(markers), "config"))
		d := runAcrossHostChange(t, ws, func(ctx context.Context, cmd Command) (*Result, error) {
			return r.Run(ctx, Config{Workspace: ws, Limits: Limits{Pids: 128, Timeout: 60 * time.Second}}, cmd)
		}, script, func() {
			ownerGit(t, ws, "config", "c1.y", "1") // config.lock, then rename over .git/config
		})
		t.Log(d.out)
		require.NotNil(t, d.res)
		assert.Contains(t, d.out, "RO-AT-START")
		assertNoCreateWrites(t, d.out, "config")
		assert.True(t, refusedPath(d.res.CreateBlocked, ".git/config"), "the refusal is reported: %+v", d.res.CreateBlocked)
		cfg, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
		require.NoError(t, err)
		assert.NotContains(t, string(cfg), "fsmonitor")
		assert.Contains(t, string(cfg), "[c1]", "the host's own edit is there")
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("git config, session", func(t *testing.T) {
		ws, markers := poisonWorkspace(t, true)
		s, end := openPoisonSession(t, ws)
		assert.Contains(t, sessionSh(t, s, "echo x >> .git/config || echo RO-AT-START"), "RO-AT-START")
		ownerGit(t, ws, "config", "c1.x", "1")
		res, out := sessionRun(t, s, writeNoCreate(".git/config", fsmonitor(markers), "config"))
		assertNoCreateWrites(t, out, "config")
		assert.True(t, refusedPath(res.CreateBlocked, ".git/config"), "%+v", res.CreateBlocked)
		// A second thread flips the name between .gix/config (the
		// sandbox's own) and .git/config while the first opens it for
		// writing: the helper opens what the gate read, never the name
		// as it is in memory afterwards.
		_, out = sessionRun(t, s, fmt.Sprintf(`mkdir .gix && : > .gix/config
python3 - <<'PY'
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
name = ctypes.create_string_buffer(b".gix/config")
line = b'[core]\n\tfsmonitor = "touch %s/race; false"\n'
done = False
def flip():
    while not done:
        name[3] = b"t"; name[3] = b"x"
threading.Thread(target=flip).start()
opened = refused = 0
deadline = time.time() + 20
for i in range(1000):
    if time.time() > deadline: break
    fd = libc.open(name, os.O_WRONLY | os.O_APPEND)
    if fd < 0:
        refused += 1
        continue
    opened += 1
    os.write(fd, line)
    os.close(fd)
done = True
print("race opened", opened, "refused", refused)
PY`, markers))
		assert.Contains(t, out, "race opened")
		end()
		cfg, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
		require.NoError(t, err)
		assert.NotContains(t, string(cfg), "fsmonitor")
		chownWorkspace(t, ws)
		assertHostClean(t, ws, markers, true)
	})
	t.Run("git init by the host, pooled", func(t *testing.T) {
		// The red team's pooled race: the host replaces the whole
		// repository (rm -rf .git && git init) while a pooled call runs.
		ws, markers := poisonWorkspace(t, true)
		require.NoError(t, os.Chmod(filepath.Dir(ws), 0o711)) // for the owner's host commands
		ps := newTestPools(t)
		p := PoolSpec{Profile: "c1", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
		ps.Prepare(p)
		waitReady(t, ps, p.Profile, 1)
		script := `touch ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
` + writeNoCreate(".git/config", fsmonitor(markers), "config")
		d := runAcrossHostChange(t, ws, func(ctx context.Context, cmd Command) (*Result, error) {
			return ps.Run(ctx, p, cmd, ExecOptions{Timeout: 60 * time.Second})
		}, script, func() {
			asOwner(t, ws, "rm", "-rf", ".git")
			ownerGit(t, ws, "init", "-q")
		})
		t.Log(d.out)
		require.NotNil(t, d.res)
		assertNoCreateWrites(t, d.out, "config")
		assert.True(t, refusedPath(d.res.CreateBlocked, ".git/config"), "%+v", d.res.CreateBlocked)
		require.NoError(t, ps.Close())
		cfg, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
		require.NoError(t, err)
		assert.NotContains(t, string(cfg), "fsmonitor")
		chownWorkspace(t, ws)
		hostGit(t, ws, "status")
		assertEmptyDir(t, markers)
	})
	for _, c := range []struct {
		name, file string
		home       bool
	}{
		{"sed -i bashrc in a home, session", ".bashrc", true},
		{"sed -i envrc, session", ".envrc", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, markers := poisonWorkspace(t, !c.home)
			p := filepath.Join(ws, c.file)
			require.NoError(t, os.WriteFile(p, []byte("# user file\n"), 0o644))
			chownWorkspace(t, ws)
			if c.home {
				t.Setenv("HOME", ws)
			}
			s, end := openPoisonSession(t, ws)
			assert.Contains(t, sessionSh(t, s, "echo x >> "+c.file+" || echo RO-AT-START"), "RO-AT-START")
			asOwner(t, ws, "sed", "-i", "s/user file/user file edited/", p) // a new file renamed over the old one
			res, out := sessionRun(t, s, writeNoCreate(c.file, `touch `+markers+`/planted\n`, "rc"))
			assertNoCreateWrites(t, out, "rc")
			assert.True(t, refusedPath(res.CreateBlocked, c.file), "%+v", res.CreateBlocked)
			end()
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "# user file edited\n", string(b), "the host's file holds only the person's edit")
			chownWorkspace(t, ws)
			assertHostClean(t, ws, markers, !c.home)
		})
	}
}
