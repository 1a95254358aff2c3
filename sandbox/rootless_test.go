package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootlessUser is an unprivileged user created for a test, with a
// directory of its own (base) holding a copy of the test binary, its state
// root (base/state), its runtime directory (base/run) and a workspace
// (base/ws).
type rootlessUser struct {
	t        *testing.T
	name     string
	uid, gid int
	base     string
	bin      string
}

// rootlessDoc is what the test binary prints in rootless mode.
type rootlessDoc struct {
	Result *Result
	Output string
	Error  string
}

func newRootlessUser(t *testing.T) *rootlessUser {
	t.Helper()
	requireSandbox(t)
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("useradd missing (package passwd; run scripts/provision.sh)")
	}
	name := fmt.Sprintf("tether-rl-%d-%d", os.Getpid(), testSeq.Add(1))
	out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	require.NoError(t, err, "useradd: %s", out)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// A directory the user owns: a copy of this test binary (the build
	// cache is root-only), its state root and its workspace.
	// Not under /tmp, which a Landlock ruleset's /tmp rule would cover.
	base, err := os.MkdirTemp("/var/tmp", "tether-rl")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(base, "sandbox.test")
	copyFile(t, self, bin)
	ru := &rootlessUser{t: t, name: name, uid: uid, gid: gid, base: base, bin: bin}
	for _, d := range []string{"state", "run", "ws"} {
		ru.mkdir(filepath.Join(base, d))
	}
	return ru
}

// mkdir makes dir, owned by the user.
func (ru *rootlessUser) mkdir(dir string) {
	ru.t.Helper()
	require.NoError(ru.t, os.Mkdir(dir, 0o700))
	require.NoError(ru.t, os.Chown(dir, ru.uid, ru.gid))
}

// chown gives everything under dir to the user.
func (ru *rootlessUser) chown(dir string) {
	ru.t.Helper()
	require.NoError(ru.t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, ru.uid, ru.gid)
	}))
}

// run runs script in a sandbox of the workspace ws and state root state
// ("" for base/ws and base/state), as the user, from ws; env is added to
// the test binary's environment.
func (ru *rootlessUser) run(state, ws, script string, env ...string) rootlessDoc {
	t := ru.t
	t.Helper()
	if state == "" {
		state = filepath.Join(ru.base, "state")
	}
	if ws == "" {
		ws = filepath.Join(ru.base, "ws")
	}
	cmd := exec.Command(ru.bin)
	cmd.Dir = ws
	cmd.Env = append([]string{
		"PATH=/usr/bin:/bin",
		// The user's reservation records (checkedReservationDir).
		"XDG_RUNTIME_DIR=" + filepath.Join(ru.base, "run"),
		rootlessEnv + "=" + state + ":" + ws,
		rootlessScriptEnv + "=" + script,
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(ru.uid), Gid: uint32(ru.gid), Groups: []uint32{}}}
	stdout, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "stderr: %s", stderr)
	var d rootlessDoc
	require.NoError(t, json.Unmarshal(stdout, &d), "stdout: %s", stdout)
	t.Logf("%s -> %+v\n%s", script, d.Result, d.Output)
	return d
}

// TestRootless runs a sandbox as an unprivileged user created for the test:
// it must work through a user namespace and report, not hide, the cgroup
// limits it cannot enforce.
func TestRootless(t *testing.T) {
	ru := newRootlessUser(t)
	uid, base := ru.uid, ru.base
	ru.mkdir(filepath.Join(base, "ws", "ok"))
	require.NoError(t, os.WriteFile(filepath.Join(base, "ws", "input.txt"), []byte("from host\n"), 0o644))
	require.NoError(t, os.Chown(filepath.Join(base, "ws", "input.txt"), uid, ru.gid))
	runAs := func(script string, env ...string) rootlessDoc { return ru.run("", "", script, env...) }
	u, err := user.Lookup(ru.name)
	require.NoError(t, err)

	d := runAs("id -u; cat input.txt; echo made > output.txt; hostname; cat /proc/self/uid_map; grep NoNewPrivs /proc/self/status; " +
		py("import socket\ntry:\n socket.create_connection((\"1.1.1.1\", 53), 2)\nexcept OSError as e: print(\"net:\", e)"))
	require.Empty(t, d.Error)
	require.NotNil(t, d.Result)
	assert.Equal(t, 0, d.Result.ExitCode)
	assert.Contains(t, d.Output, "0\nfrom host\n", "container root, workspace readable")
	assert.Contains(t, d.Output, DefaultHostname+"\n")
	assert.Regexp(t, `\s+0\s+`+u.Uid+`\s+1\n`, d.Output, "uid 0 inside maps to the user only")
	assert.Contains(t, d.Output, "NoNewPrivs:\t1")
	assert.Contains(t, d.Output, "Network is unreachable")
	assert.ElementsMatch(t, []string{"memory", "pids", "memfd_noexec"}, d.Result.NotEnforced,
		"limits without delegated cgroups are reported, and memfds left executable (only global root can set vm.memfd_noexec); protected paths are enforced")
	made, err := os.Stat(filepath.Join(base, "ws", "output.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint32(uid), made.Sys().(*syscall.Stat_t).Uid, "files written are the user's on the host")

	// The user gains nothing: host root files stay out of reach.
	d = runAs("cat /etc/shadow; touch /usr/x; cat /root/.bashrc; ls /root")
	assert.NotEqual(t, 0, d.Result.ExitCode)
	assert.Contains(t, d.Output, "No such file or directory")
	assert.Contains(t, d.Output, "Read-only file system")

	// The exec gate works without root too (the trampoline installs it
	// alone: the filter compiler needs root).
	d = runAs(`printf '#!/bin/sh\necho RAN > ran\n' > reboot; chmod +x reboot; ./reboot; echo rc=$?; ls`, rootlessGateEnv+"=reboot")
	require.NotNil(t, d.Result)
	require.Len(t, d.Result.ExecBlocked, 1, d.Output)
	assert.Equal(t, []string{"./reboot"}, d.Result.ExecBlocked[0].Argv)
	assert.Contains(t, d.Output, "rc=126")
	assert.NotContains(t, d.Output, "ran\n", "the refused program did not run")
	assert.NotContains(t, d.Result.NotEnforced, "exec_gate")

	// Config.NoExec's noexec binds need no root either.
	if fi, err := os.Lstat("/usr/sbin/killall5"); err == nil && fi.Mode().IsRegular() {
		d = runAs(`for f in /usr/sbin/killall5 /usr/bin/true; do if [ -x $f ]; then echo exec:$f; else echo noexec:$f; fi; done`,
			rootlessNoExecEnv+"=/usr/sbin/killall5")
		require.NotNil(t, d.Result, d.Error)
		assert.Contains(t, d.Output, "noexec:/usr/sbin/killall5")
		assert.Contains(t, d.Output, "exec:/usr/bin/true")
	}

	// The creation gate too: no repository can be made mid-run.
	d = runAs(`mkdir sub; mkdir sub/.git; echo mkdir=$?; echo 'gitdir: /tmp' > sub/.git; echo file=$?`)
	require.NotNil(t, d.Result)
	assert.Contains(t, d.Output, "mkdir=1")
	assert.Contains(t, d.Output, "file=2")
	assert.Len(t, d.Result.CreateBlocked, 2, d.Output)
	_, err = os.Lstat(filepath.Join(base, "ws", "sub", ".git"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.NotContains(t, d.Result.NotEnforced, "nested-repos")

	// Landlock needs no privilege: the ruleset holds rootless too, but the
	// kernel's audit records (which name refused paths) need root, and
	// the result says so.
	d = runAs("echo hi > ok/f; cat ok/f; cat input.txt; echo rc=$?", rootlessLandlockEnv+"=1")
	require.NotNil(t, d.Result, d.Error)
	assert.Contains(t, d.Output, "hi\n")
	assert.NotContains(t, d.Output, "from host", "outside the ruleset")
	assert.Contains(t, d.Output, "Permission denied")
	assert.Contains(t, d.Result.NotEnforced, "landlock_audit")
	assert.NotContains(t, d.Result.NotEnforced, "landlock")
	assert.Empty(t, d.Result.PathsRefused)

	// The mount plan too (the joining process makes its binds and seals
	// the workspace): a chmod outside ok/ fails, and a creation there is
	// reported by the creation gate, which needs no audit records.
	input := filepath.Join(base, "ws", "input.txt")
	before, err := os.Stat(input)
	require.NoError(t, err)
	d = runAs("echo hi > ok/f; cat ok/f; chmod 0640 input.txt; echo chmod=$?; echo x > planted; echo planted=$?", rootlessLandlockEnv+"=plan")
	require.NotNil(t, d.Result, d.Error)
	assert.Contains(t, d.Output, "hi\n")
	assert.Contains(t, d.Output, "chmod=1")
	assert.Contains(t, d.Output, "planted=2")
	assert.Contains(t, d.Output, "Read-only file system")
	assert.True(t, refusedAt(d.Result, filepath.Join(base, "ws", "planted"), "mount.read_only"), "%+v", d.Result.PathsRefused)
	after, err := os.Stat(input)
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode(), "from the host: the chmod outside the write tree landed")
	assert.NoFileExists(t, filepath.Join(base, "ws", "planted"))

	// Nothing is left in the user's state root.
	for _, sub := range []string{containersDir, rootsDir, locksDir} {
		entries, _ := os.ReadDir(filepath.Join(base, "state", sub))
		assert.Empty(t, entries, sub)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestUserNamespaceAsRoot: as root every sandbox is a one-id user
// namespace (container root is host uid 1<<30 and nothing else), and the
// workspace is an idmapped mount that shows its owner as container root:
// in a root-owned workspace (CI, containers) files are created as on-disk
// root, which the file-privilege rules keep harmless.
func TestUserNamespaceAsRoot(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "in.txt"), []byte("hello\n"), 0o600))
	res, out := run(t, r, Config{Workspace: ws, Limits: Limits{Pids: 32}}, "id -u; cat /proc/self/uid_map; cat in.txt; echo x > out.txt; stat -c %u out.txt")
	t.Log(out)
	assert.Equal(t, 0, res.ExitCode)
	assert.Regexp(t, `\s+0\s+1073741824\s+1\n`, out, "container root is host uid 1<<30, the only id")
	assert.Contains(t, out, "hello\n", "the root-owned 0600 workspace file is readable through the idmapped mount")
	fi, err := os.Stat(filepath.Join(ws, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "written as the workspace's owner (root) via the idmapped mount")
	assert.Empty(t, res.NotEnforced, "as root the cgroup limits are enforced")
}
