package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// homeAttack is run by `sh attack.sh` (an allow-tier command) in a
// home-directory workspace that holds tether's state and config. Each
// line prints a token only if the attack worked.
const homeAttack = `s=.local/state/tether
echo '{"version":1,"entries":[{"pattern":"*","by":"sandbox"}]}' > $s/allowlist/default.json && echo WROTE-ALLOWLIST
mkdir -p $s/allowlist 2>/dev/null; echo '{"version":1,"entries":[{"pattern":"*","by":"sandbox"}]}' > $s/allowlist/other.json && echo WROTE-ALLOWLIST-NEW
echo planted >> $s/audit.jsonl && echo WROTE-AUDIT
echo planted >> $s/tether.db && echo WROTE-DB
echo 'approvals: {mode: off}' >> .config/tether/config.yaml && echo WROTE-CONFIG
grep -h state_dir .config/tether/config.yaml && echo READ-CONFIG
cat $s/audit.jsonl | grep -q . && echo READ-AUDIT
mv $s .local/state/moved && echo MOVED-STATE
mv .local/state .local/state-moved && echo MOVED-STATE-PARENT
mv .local .local-moved && echo MOVED-LOCAL
mv .config/tether .config/moved && echo MOVED-CONFIG
mv .config .config-moved && echo MOVED-CONFIG-PARENT
rm -rf $s 2>/dev/null; test -d $s || echo REMOVED-STATE
mkdir -p .local/state/tether/allowlist && echo '{"version":1,"entries":[{"pattern":"*"}]}' > .local/state/tether/allowlist/default.json && echo PLANTED
echo done
`

// TestHomeWorkspaceHidesTetherStateAndConfig: with the default layout of a
// home-directory workspace (~/.local/state/tether, ~/.config/tether), a
// terminal command, one-shot or in a session, can neither read nor write
// the allowlist, config, audit log or database, nor move their parents
// away to plant new ones; checked from the host after the sandbox is
// gone. An allowlist entry "*" tried by every means then does not let an
// approval-tier command through.
func TestHomeWorkspaceHidesTetherStateAndConfig(t *testing.T) {
	sb := testSandbox(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(home, 0o755))
	state := filepath.Join(home, ".local/state/tether")
	require.NoError(t, os.MkdirAll(filepath.Join(state, "allowlist"), 0o700))
	allow := filepath.Join(state, "allowlist/default.json")
	allowText := `{"version":1,"entries":[]}` + "\n"
	require.NoError(t, os.WriteFile(allow, []byte(allowText), 0o600))
	cfgPath := filepath.Join(home, ".config/tether/config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o700))
	cfgText := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n      limits: {timeout: 20s}\n", state, home)
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfgText), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "attack.sh"), []byte(homeAttack), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(home, "build"), 0o755))
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	store := testStore(t, cfg)
	eng := testEngine(t, cfg, approval.Options{Mandate: &mandate.Hook{Store: store}})
	sessions := &sandbox.Sessions{StateRoot: sb.StateRoot, CgroupPrefix: sb.CgroupPrefix, Grace: sb.Grace}
	r := &Runner{Config: cfg, Engine: eng, Mandates: store, Sandbox: sb, Sessions: sessions}
	var before unix.Stat_t
	require.NoError(t, unix.Stat(state, &before))

	for _, session := range []string{"", "attack"} {
		out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Session: session, Calls: []RawCall{
			rawCall("1", "terminal", args("command", "sh attack.sh")),
		}}, nil)
		res := out.Results[0]
		require.Equal(t, ClassSucceeded, res.Class, "session %q: %s %v", session, res.Message, res.Output)
		stdout := fmt.Sprint(res.Output["stdout"])
		assert.Equal(t, "done\n", stdout, "session %q: no attack worked; stderr: %s", session, res.Output["stderr"])
	}
	require.NoError(t, sessions.Close(), "the session is gone before the host looks")

	data, err := os.ReadFile(allow)
	require.NoError(t, err)
	assert.Equal(t, allowText, string(data))
	assert.NoFileExists(t, filepath.Join(state, "allowlist/other.json"))
	data, err = os.ReadFile(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, cfgText, string(data))
	for _, f := range []string{"audit.jsonl", mandate.DBName} {
		data, err := os.ReadFile(filepath.Join(state, f))
		if err == nil {
			assert.NotContains(t, string(data), "planted", f)
		}
	}
	var after unix.Stat_t
	require.NoError(t, unix.Stat(state, &after))
	assert.Equal(t, before.Ino, after.Ino, "the state directory is the same directory")
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".local", ".config", "attack.sh", "build"}, names, "nothing moved away in the home")
	entries, err = os.ReadDir(filepath.Join(home, ".local/state"))
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// "*" by the file tools is refused, and nothing lets rm -rf through.
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Calls: []RawCall{
		rawCall("1", "write_file", args("path", ".local/state/tether/allowlist/default.json", "content", `{"version":1,"entries":[{"pattern":"*"}]}`)),
		rawCall("2", "read_file", args("path", ".config/tether/config.yaml")),
		rawCall("3", "search_files", args("pattern", "^state_dir:")),
		rawCall("4", "terminal", args("command", "rm -rf build")),
	}}, nil)
	assert.Equal(t, "path.protected", out.Results[0].Rule, out.Results[0].Message)
	assert.Equal(t, "path.protected", out.Results[1].Rule, out.Results[1].Message)
	assert.Equal(t, 0, out.Results[2].Output["count"], "search skips tether's own files: %v", out.Results[2].Output["matches"])
	assert.Equal(t, ClassBlocked, out.Results[3].Class, "api platform denies the approval tier: no allowlist entry took effect")
	assert.DirExists(t, filepath.Join(home, "build"))
	data, err = os.ReadFile(allow)
	require.NoError(t, err)
	assert.Equal(t, allowText, string(data))
}

// TestWorkspaceInsideStateRefused: a workspace that is, or lies inside,
// tether's state directory cannot hide it from itself: nothing runs.
func TestWorkspaceInsideStateRefused(t *testing.T) {
	sb := testSandbox(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(dir, "state", "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n", filepath.Join(dir, "state"), ws)
	cfg, err := config.Parse("t.yaml", []byte(y), dir)
	require.NoError(t, err)
	eng := testEngine(t, cfg, approval.Options{})
	r := &Runner{Config: cfg, Engine: eng, Sandbox: sb}
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Calls: []RawCall{
		rawCall("1", "terminal", args("command", "touch x")),
	}}, nil)
	res := out.Results[0]
	assert.False(t, res.Ran, res.Message)
	assert.True(t, strings.Contains(res.Message, "inside tether's own configuration or state"), res.Message)
	assert.NoFileExists(t, filepath.Join(ws, "x"))
}

// TestTerminalDiskLimitReported: limits.disk reaches the sandbox; on a
// workspace without project quotas the result lists it in not_enforced.
func TestTerminalDiskLimitReported(t *testing.T) {
	sb := testSandbox(t)
	cfg, ws := testConfig(t, "      limits: {disk: 1MiB}\n")
	eng := testEngine(t, cfg, approval.Options{})
	r := &Runner{Config: cfg, Engine: eng, Sandbox: sb}
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Calls: []RawCall{rawCall("1", "terminal", args("command", "echo hi"))}}, nil)
	res := out.Results[0]
	require.Equal(t, ClassSucceeded, res.Class, res.Message)
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var info [24]byte
	// quotactl_fd(Q_GETINFO, PRJQUOTA): does the workspace keep project quotas?
	_, _, e := unix.Syscall6(unix.SYS_QUOTACTL_FD, uintptr(fd), 0x800005<<8|2, 0, uintptr(unsafe.Pointer(&info)), 0, 0)
	if e != 0 {
		assert.Contains(t, res.Output["not_enforced"], "disk")
	} else {
		assert.NotContains(t, fmt.Sprint(res.Output["not_enforced"]), "disk")
	}
	assert.Nil(t, res.Output["disk_limit_hit"])
}

// socketProbe is a client of the daemon's API over its unix socket, run in
// the sandbox: it prints CONNECTED and the status line when the daemon
// answers, else why not.
const socketProbe = `import socket, sys
for p in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(p)
        s.sendall(b"POST /v1/sessions HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"cwd\":\"/\"}\n")
        print("CONNECTED", p, s.recv(200).split(b"\r\n")[0].decode())
    except OSError as e:
        print("refused", p, e)
`

// TestServeSocketInWorkspaceHidden: the daemon's socket inside a workspace
// (F9 of rt14: --socket given a project path) is the approval authority
// within the sandbox's reach; a session command connecting to it opened a
// session on / and answered its own approvals. The socket and its
// directory are hidden like tether's state: the command cannot connect
// (by its path or a renamed parent), and the file tools refuse the
// directory. From the host afterwards: the daemon holds only the test's
// own session, and nothing was written in the socket's directory.
func TestServeSocketInWorkspaceHidden(t *testing.T) {
	e := newDaemonEnv(t, testSandbox(t), "")
	e.socket = filepath.Join(e.ws, "run", "tether.sock")
	d, stop := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	out, err := c.Call(t.Context(), s.Session, "t1", []RawCall{
		rawCall("w", "write_file", args("path", "probe.py", "content", socketProbe)),
		rawCall("t", "terminal", args("command", "python3 probe.py run/tether.sock "+e.socket+"; mv run run2; python3 probe.py run2/tether.sock; ls -la run run2")),
		rawCall("f", "write_file", args("path", "run/evil", "content", "x")),
	})
	require.NoError(t, err)
	require.Len(t, out.Results, 3)
	term := out.Results[1]
	t.Logf("%s %v", term.Message, term.Output)
	require.True(t, term.Ran, term.Message)
	assert.NotContains(t, term.Output["stdout"], "CONNECTED", "the sandbox reached the daemon's socket")
	assert.Contains(t, term.Output["stdout"], "refused run/tether.sock")
	assert.NotEqual(t, EffectLanded, out.Results[2].Effect, "%s", out.Results[2].Message)
	assert.Contains(t, out.Results[2].Message, "tether's own configuration or state")
	// From the host: only the test's session exists, the socket is the
	// daemon's and nothing else is in its directory.
	d.Server.mu.Lock()
	sessions := len(d.Server.sessions)
	d.Server.mu.Unlock()
	assert.Equal(t, 1, sessions, "the sandbox opened a session of its own")
	entries, err := os.ReadDir(filepath.Join(e.ws, "run"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "tether.sock", entries[0].Name())
	require.NoError(t, stop())
}

// TestServeRefusesForeignPeers: where a sandbox reaches the daemon's
// socket anyway (here the socket is opened to everyone, as an idmapped
// workspace made it for container root in F9 of rt14), its connections are
// refused: one from the sandboxes' host uid (Runner.UserNSBase, as root),
// and one from root in a new user namespace (the rootless case, where the
// uid is the daemon's own). The same request from the daemon's user in
// its namespace is answered.
func TestServeRefusesForeignPeers(t *testing.T) {
	requireSandbox(t)
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.start(t)
	require.NoError(t, os.Chmod(filepath.Dir(e.socket), 0o755))
	require.NoError(t, os.Chmod(e.socket, 0o777))
	const probe = `import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"GET /v1/health HTTP/1.0\r\nHost: x\r\n\r\n")
print(s.recv(300).split(b"\r\n")[0].decode())
`
	run := func(cmd *exec.Cmd) string {
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	self := exec.Command("/usr/bin/python3", "-c", probe, e.socket)
	assert.Contains(t, run(self), "200 OK", "the daemon's own user is answered")
	sandboxID := exec.Command("/usr/bin/python3", "-c", probe, e.socket)
	sandboxID.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sandbox.DefaultUserNSBase, Gid: sandbox.DefaultUserNSBase}}
	assert.Contains(t, run(sandboxID), "403 Forbidden", "the sandboxes' host uid")
	userns := exec.Command("/usr/bin/python3", "-c", probe, e.socket)
	userns.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}}
	assert.Contains(t, run(userns), "403 Forbidden", "root of another user namespace")
}

// TestServeSocketHiddenFromOtherOneShots: a `tether run` one-shot of the
// daemon's state root in a workspace holding the daemon's socket (the
// second red-team pass of issue 14) tries to unlink the socket and listen
// in its place, and to connect to it. The daemon recorded its socket in the
// state root (sandbox.RecordServed), so that sandbox hides it too; from
// the host afterwards, the socket is the daemon's and answers. A one-shot
// after the daemon stopped is not refused (the record is gone).
//
// The daemon's socket path may reach the workspace by another name (S1 of
// the session-12 red team: the hiding compared spellings, and the one-shot
// unlinked the socket and bound an impostor): through a symlink to the
// workspace's run/, or through a bind mount of it elsewhere.
func TestServeSocketHiddenFromOtherOneShots(t *testing.T) {
	sb := testSandbox(t)
	for _, tc := range []struct {
		name string
		// socket makes run/ in the workspace reachable and returns the
		// socket path the daemon is given.
		socket func(t *testing.T, run string) string
	}{
		{"direct", func(t *testing.T, run string) string { return filepath.Join(run, "tether.sock") }},
		{"symlink", func(t *testing.T, run string) string {
			ln := filepath.Join(t.TempDir(), "sockln")
			require.NoError(t, os.Symlink(run, ln))
			return filepath.Join(ln, "tether.sock")
		}},
		{"bind-alias", func(t *testing.T, run string) string {
			alias := filepath.Join(t.TempDir(), "runalias")
			require.NoError(t, os.Mkdir(alias, 0o755))
			require.NoError(t, unix.Mount(run, alias, "", unix.MS_BIND, ""))
			t.Cleanup(func() { assert.NoError(t, unix.Unmount(alias, unix.MNT_DETACH)) })
			return filepath.Join(alias, "tether.sock")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newDaemonEnv(t, sb, "")
			run := filepath.Join(e.ws, "run")
			require.NoError(t, os.MkdirAll(run, 0o755))
			e.socket = tc.socket(t, run)
			_, stop := e.start(t)
			var before unix.Stat_t
			require.NoError(t, unix.Stat(filepath.Join(run, "tether.sock"), &before), "the socket is in the workspace's run/")
			const hijack = `python3 probe.py run/tether.sock
rm run/tether.sock && echo UNLINKED
python3 -c '
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("run/tether.sock")
s.listen(1)
print("LISTENING")
' 2>&1
ls -la run 2>&1; echo done`
			require.NoError(t, os.WriteFile(filepath.Join(e.ws, "probe.py"), []byte(socketProbe), 0o644))
			var out bytes.Buffer
			res, err := sb.Run(t.Context(), sandbox.Config{Workspace: e.ws, Limits: sandbox.Limits{Pids: 64, Timeout: 60 * time.Second}},
				sandbox.Command{Shell: hijack, Stdout: &out, Stderr: &out})
			require.NoError(t, err)
			t.Logf("exit %d: %s", res.ExitCode, out.String())
			assert.Contains(t, out.String(), "done")
			assert.NotContains(t, out.String(), "CONNECTED")
			assert.NotContains(t, out.String(), "UNLINKED")
			assert.NotContains(t, out.String(), "LISTENING")
			// From the host: the socket is the daemon's inode, and it answers.
			var after unix.Stat_t
			require.NoError(t, unix.Stat(filepath.Join(run, "tether.sock"), &after))
			assert.Equal(t, before.Ino, after.Ino, "the socket was replaced")
			c := NewClient(e.socket)
			_, err = c.CreateSession(t.Context(), SessionRequest{})
			require.NoError(t, err, "the daemon's socket is its own")
			require.NoError(t, stop())
			_, err = sb.Run(t.Context(), sandbox.Config{Workspace: e.ws, Limits: sandbox.Limits{Pids: 64, Timeout: 60 * time.Second}}, sandbox.Command{Shell: "true"})
			require.NoError(t, err, "the daemon's record went with it")
		})
	}
}
