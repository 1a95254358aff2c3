package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/internal/testenv"
)

// The Landlock tests attack the ruleset from inside the sandbox and check
// from the host afterwards. They need root (for the audit records that
// name refused paths) and a kernel with Landlock ABI 7.

const llSecret = "TOP-SECRET-CONTENT"

// llWorkspace is a workspace with an allowed directory (ok/) and a secret
// outside the policy (secret/key).
func llWorkspace(t *testing.T) (ws, secret string) {
	t.Helper()
	switch v := landlockVersion(); {
	case v == 0:
		testenv.SkipOrFail(t, "the kernel has no Landlock")
	case v < 7:
		// A documented limit, not a missing tool: the ruleset holds, its
		// refusals are not logged (TestLandlockBelowABI7 checks that).
		t.Skipf("the kernel's Landlock ABI is %d: its refusals are not logged below 7 (landlock_audit in not_enforced, TestLandlockBelowABI7)", v)
	}
	return llWorkspaceAnyABI(t)
}

// llWorkspaceAnyABI is llWorkspace on any kernel with Landlock.
func llWorkspaceAnyABI(t *testing.T) (ws, secret string) {
	t.Helper()
	if landlockVersion() == 0 {
		testenv.SkipOrFail(t, "the kernel has no Landlock")
	}
	// Not under /tmp: the sandbox's /tmp rule would cover it
	// (ErrLandlockLayout).
	ws, err := os.MkdirTemp("/var/tmp", "tether-ll-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Chmod(ws, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "ok"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "secret"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ok", "file"), []byte("allowed-content\n"), 0o644))
	secret = filepath.Join(ws, "secret", "key")
	require.NoError(t, os.WriteFile(secret, []byte(llSecret+"\n"), 0o644))
	return ws, secret
}

func llRun(t *testing.T, r *Runner, ws, script string, ll *Landlock) (*Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Landlock: ll}
	res, err := r.Run(context.Background(), cfg, Command{Shell: script, Stdout: &out, Stderr: &out})
	require.NoError(t, err, out.String())
	return res, out.String()
}

// refusedAt reports whether res lists a refusal of path lacking blocker.
func refusedAt(res *Result, path, blocker string) bool {
	for _, p := range res.PathsRefused {
		if p.Path == path {
			for _, b := range p.Blockers {
				if b == blocker {
					return true
				}
			}
		}
	}
	return false
}

// Every way of reaching the secret from the allowed directory is refused
// by the kernel, the secret's content never reaches the output, the
// refusal names the path the kernel refused, and the host finds the
// secret where and as it was.
func TestLandlockRefusesOutsideThePolicy(t *testing.T) {
	r := newTestRunner(t)
	ws, secret := llWorkspace(t)
	policy := &Landlock{Trees: []string{filepath.Join(ws, "ok")}}
	cases := []struct {
		name, script string
		path         string // refused, relative to ws
		blocker      string
	}{
		{"cat", "cat secret/key", "secret/key", "fs.read_file"},
		{"sh read builtin", "read l < secret/key; echo $l", "secret/key", "fs.read_file"},
		{"python computed path", `python3 -c 'import os; print(open(os.path.join("sec"+"ret", "k"+"ey")).read())'`, "secret/key", "fs.read_file"},
		{"perl", `perl -e 'open(F, "<", "se"."cret/key") or die "open: $!"; print <F>'`, "secret/key", "fs.read_file"},
		{"symlink from the allowed dir", "ln -s ../secret/key ok/link && cat ok/link", "secret/key", "fs.read_file"},
		{"absolute symlink", "ln -s " + secret + " ok/abs && cat ok/abs", "secret/key", "fs.read_file"},
		{"hard link into the allowed dir", "ln secret/key ok/hard; cat ok/hard", "secret", "fs.refer"},
		{"rename into the allowed dir", "mv secret/key ok/key; cat ok/key", "secret", "fs.refer"},
		{"python rename", `python3 -c 'import os; os.rename("secret/key", "ok/key")'; cat ok/key`, "secret", "fs.refer"},
		{"/proc/self/root", "cat /proc/self/root" + secret, "secret/key", "fs.read_file"},
		{"/proc/self/fd of an O_PATH descriptor", `python3 -c 'import os; fd = os.open("secret", os.O_PATH); print(open("/proc/self/fd/%d/key" % fd).read())'`, "secret/key", "fs.read_file"},
		{"/proc/self/cwd", "cd secret && cat /proc/self/cwd/key", "secret/key", "fs.read_file"},
		{"truncate(2) through a symlink", `ln -s ../secret/key ok/t && python3 -c 'import os; os.truncate("ok/t", 0)'`, "secret/key", "fs.truncate"},
		{"O_TRUNC through a symlink", "ln -s ../secret/key ok/w && true > ok/w", "secret/key", "fs.write_file"},
		{"overwrite", "echo gone > secret/key", "secret/key", "fs.write_file"},
		{"remove", "rm -f secret/key", "secret", "fs.remove_file"},
		{"create beside it", "echo x > secret/new", "secret", "fs.make_reg"},
		{"background process", "(sleep 0.1; cat secret/key) & wait", "secret/key", "fs.read_file"},
		{"setsid child", "setsid sh -c 'cat secret/key' & wait", "secret/key", "fs.read_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := llRun(t, r, ws, c.script+"; echo after=$?", policy)
			assert.NotContains(t, out, llSecret, "the secret reached the output")
			assert.Contains(t, out, "after=", "the command goes on after the refusal")
			assert.True(t, refusedAt(res, filepath.Join(ws, c.path), c.blocker), "want %s refused (%s); got %+v\n%s", c.path, c.blocker, res.PathsRefused, out)
			assert.Empty(t, res.NotEnforced)
			// From the host, after the sandbox is gone.
			got, err := os.ReadFile(secret)
			require.NoError(t, err, "the secret was moved or removed")
			assert.Equal(t, llSecret+"\n", string(got))
			for _, leak := range []string{"key", "hard"} {
				assert.NoFileExists(t, filepath.Join(ws, "ok", leak))
			}
			assert.NoFileExists(t, filepath.Join(ws, "secret", "new"))
		})
	}
}

// TestLandlockBelowABI7: below ABI 7 (a 6.12 kernel, as Debian 13's
// own) the kernel logs no refusal. The ruleset still holds, one-shot
// and in a session: the secret is neither read nor changed, seen from the
// host, and the result says that the refused paths are not known
// (landlock_audit in not_enforced) instead of reporting none. On a newer
// kernel the test encodes the ruleset for ABI 6, as tether does there.
func TestLandlockBelowABI7(t *testing.T) {
	if v := landlockVersion(); v >= 7 {
		saved := landlockVersion
		landlockVersion = func() int { return 6 }
		t.Cleanup(func() { landlockVersion = saved })
	}
	ws, secret := llWorkspaceAnyABI(t)
	policy := &Landlock{Trees: []string{filepath.Join(ws, "ok")}}
	script := "cat secret/key; echo gone > secret/key; echo after=$?"
	check := func(t *testing.T, res *Result, out string) {
		assert.NotContains(t, out, llSecret, "the secret reached the output")
		assert.Regexp(t, `after=[1-9]`, out, "the write was refused")
		assert.Contains(t, res.NotEnforced, "landlock_audit")
		assert.NotContains(t, res.NotEnforced, "landlock", "the ruleset is applied")
		assert.Empty(t, res.PathsRefused)
		got, err := os.ReadFile(secret)
		require.NoError(t, err)
		assert.Equal(t, llSecret+"\n", string(got), "the secret is unchanged on the host")
	}
	t.Run("one-shot", func(t *testing.T) {
		res, out := llRun(t, newTestRunner(t), ws, script, policy)
		check(t, res, out)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		spec := testSpec()
		spec.Config.Workspace, spec.Config.Landlock = ws, policy
		s, err := m.Open(context.Background(), "default", "abi6", spec)
		require.NoError(t, err)
		defer s.Close()
		var out bytes.Buffer
		res, err := s.Run(context.Background(), Command{Shell: script, Stdout: &out, Stderr: &out})
		require.NoError(t, err, out.String())
		check(t, res, out.String())
	})
}

// What the policy allows keeps working: a small project under version
// control, built and tested with make, in the allowed tree, with the
// system tree, /tmp and /dev as execution needs them.
func TestLandlockAllowsThePolicy(t *testing.T) {
	r := newTestRunner(t)
	ws, _ := llWorkspace(t)
	proj := filepath.Join(ws, "ok", "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "Makefile"), []byte("test: build\n\tpython3 -m unittest -q test_calc\nbuild:\n\tmkdir -p out && cp calc.py out/\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "calc.py"), []byte("def add(a, b):\n    return a + b\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "test_calc.py"), []byte("import unittest, calc\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n"), 0o644))
	// The repository is made on the host: no sandbox may make one (the
	// creation gate, docs/workspace.md); its work goes on inside.
	gitInit := exec.Command("git", "init", "-q", proj)
	out0, err := gitInit.CombinedOutput()
	require.NoError(t, err, "%s", out0)
	script := `set -e; cd ok/proj
git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm first
make -s test
git status --porcelain; git log --oneline | wc -l
tmp=$(mktemp) && echo scratch > "$tmp" && cat "$tmp" && rm "$tmp"
echo ok > /dev/null; head -c 4 /dev/urandom | wc -c
echo all-done`
	// With the mount plan too (an enforced mandate's): the nested
	// repository's pinned .git is inside the write tree, so it stays
	// writable, and git commits.
	for _, plan := range []bool{false, true} {
		t.Run(fmt.Sprint("plan=", plan), func(t *testing.T) {
			require.NoError(t, os.RemoveAll(filepath.Join(proj, "out")))
			// Something new for each round's commit.
			require.NoError(t, os.WriteFile(filepath.Join(proj, "round"), []byte(fmt.Sprint(plan)), 0o644))
			res, out := llRun(t, r, ws, script, &Landlock{Trees: []string{filepath.Join(ws, "ok")}, ReadOnlyWorkspace: plan})
			assert.Equal(t, 0, res.ExitCode, out)
			assert.Contains(t, out, "all-done")
			assert.Contains(t, out, "scratch")
			assert.Empty(t, res.PathsRefused, out)
			assert.FileExists(t, filepath.Join(proj, "out", "calc.py"), "make's output landed")
			assert.DirExists(t, filepath.Join(proj, ".git"))
			log, err := exec.Command("git", "-C", proj, "log", "--oneline").CombinedOutput()
			require.NoError(t, err, "%s", log)
			assert.NotEmpty(t, log, "the commit landed")
		})
	}
}

// A Files entry allows the file itself, or lists a directory without
// opening what is in it.
func TestLandlockFiles(t *testing.T) {
	r := newTestRunner(t)
	ws, secret := llWorkspace(t)
	res, out := llRun(t, r, ws, "cat ok/file; ls secret; cat secret/key; echo x >> ok/file; echo rc=$?",
		&Landlock{Files: []string{filepath.Join(ws, "ok", "file"), filepath.Join(ws, "secret")}})
	assert.Contains(t, out, "allowed-content")
	assert.Contains(t, out, "key\n", "the listed directory's names")
	assert.NotContains(t, out, llSecret)
	assert.Contains(t, out, "rc=0", "the file may be written")
	assert.True(t, refusedAt(res, secret, "fs.read_file"), "%+v", res.PathsRefused)
}

// No process of the sandbox is outside the ruleset's domain: with signal
// scoping (ABI 6), a process may signal only processes of its own domain
// (or nested ones), so every pid of the sandbox answering kill -0 proves
// it is confined, the sandbox's pid 1 (started before the ruleset
// existed, if any were) included. The control shows the probe can fail:
// from a nested domain, the outer processes do not answer.
func TestLandlockEveryProcessIsConfined(t *testing.T) {
	r := newTestRunner(t)
	ws, _ := llWorkspace(t)
	script := `sleep 5 & sp=$!; n=0; for p in /proc/[0-9]*; do p=${p#/proc/}; n=$((n+1)); kill -0 $p 2>/dev/null || echo OUTSIDE $p; done; echo checked=$n
python3 -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("QQQ", 1 << 2, 0, 2)  # handle read_file; scope signals
fd = libc.syscall(444, attr, 24, 0)
assert fd >= 0, os.strerror(ctypes.get_errno())
assert libc.syscall(446, fd, 0) == 0, os.strerror(ctypes.get_errno())
try:
    os.kill(1, 0)
    print("control: pid 1 answered")
except PermissionError:
    print("control: pid 1 is outside the nested domain")
'
kill $sp`
	res, out := llRun(t, r, ws, script, &Landlock{})
	assert.NotContains(t, out, "OUTSIDE", out)
	assert.Contains(t, out, "checked=")
	assert.NotContains(t, out, "checked=0")
	assert.Contains(t, out, "control: pid 1 is outside the nested domain", out)
	assert.Empty(t, res.NotEnforced)
}

// A session's supervisor applies the ruleset before its first command:
// foreground and background commands are confined alike, and a refusal by
// a background process shows up on the command that runs meanwhile.
func TestLandlockSession(t *testing.T) {
	m := newTestSessions(t)
	ws, secret := llWorkspace(t)
	spec := SessionSpec{Config: Config{Workspace: ws, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "ok")}}}}
	s, err := m.Open(t.Context(), "default", "ll", spec)
	require.NoError(t, err)
	exec := func(script string) (*Result, string) {
		var out bytes.Buffer
		res, err := s.Exec(t.Context(), Command{Shell: script, Stdout: &out, Stderr: &out}, ExecOptions{})
		require.NoError(t, err)
		return res, out.String()
	}
	res, out := exec("cat ok/file; cat secret/key; echo rc=$?")
	assert.Contains(t, out, "allowed-content")
	assert.NotContains(t, out, llSecret)
	assert.Contains(t, out, "rc=1")
	assert.True(t, refusedAt(res, secret, "fs.read_file"), "%+v", res.PathsRefused)

	bg, err := s.Start(Command{Shell: "python3 -c 'print(open(\"secret/\" + \"key\").read())'"})
	require.NoError(t, err)
	_, err = bg.Wait(t.Context())
	require.NoError(t, err)
	stdout, stderr, _ := bg.Output()
	assert.NotContains(t, string(stdout)+string(stderr), llSecret)
	res, _ = exec("true")
	assert.True(t, refusedAt(res, secret, "fs.read_file"), "the background refusal: %+v", res.PathsRefused)

	res, _ = exec("true")
	assert.Empty(t, res.PathsRefused, "a refusal is reported once")
	assert.NoError(t, s.Close())
	got, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, llSecret+"\n", string(got))

	// The same session without a ruleset reads it: the policy, not the
	// layout, refused it.
	s2, err := m.Open(t.Context(), "default", "plain", SessionSpec{Config: Config{Workspace: ws}})
	require.NoError(t, err)
	var out2 bytes.Buffer
	res, err = s2.Exec(t.Context(), Command{Shell: "cat secret/key", Stdout: &out2}, ExecOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	assert.Contains(t, out2.String(), llSecret)
	assert.Empty(t, res.PathsRefused)
	assert.False(t, strings.Contains(strings.Join(res.NotEnforced, ","), "landlock"))
}

// The ruleset does not depend on seccomp: with the sandbox's filter off
// the trampoline applies it (beside the creation gate's filter, which
// every sandbox with a workspace carries: its "Seccomp: 2" is that one).
func TestLandlockWithoutSeccomp(t *testing.T) {
	r := newTestRunner(t)
	ws, secret := llWorkspace(t)
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Seccomp: SeccompOff, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "ok")}}}
	res, err := r.Run(context.Background(), cfg, Command{Shell: "grep Seccomp: /proc/self/status; cat ok/file secret/key", Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	assert.NotContains(t, res.NotEnforced, "landlock")
	assert.Contains(t, out.String(), "allowed-content")
	assert.NotContains(t, out.String(), llSecret)
	assert.True(t, refusedAt(res, secret, "fs.read_file"), "%+v", res.PathsRefused)
}

// A workspace under /tmp cannot be confined (the sandbox's /tmp rule would
// cover it): the sandbox runs without the ruleset and says so, as where
// the kernel has no Landlock.
func TestLandlockLayoutNotEnforced(t *testing.T) {
	r := newTestRunner(t)
	ws := t.TempDir() // under /tmp
	require.NoError(t, os.Chmod(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), []byte("readable\n"), 0o644))
	res, out := llRun(t, r, ws, "cat f", &Landlock{})
	assert.Contains(t, out, "readable")
	assert.Contains(t, res.NotEnforced, "landlock")
}

// Sessions under rulesets whose commands end at the same time share the
// audit reader: each command's barrier returns (whichever goroutine read
// its record), and each result carries its own refusals, every one of
// them, and no other session's.
func TestLandlockSessionsConcurrent(t *testing.T) {
	m := newTestSessions(t)
	const sessions, commands = 3, 8
	var wg sync.WaitGroup
	for i := range sessions {
		ws, _ := llWorkspace(t)
		for j := range commands {
			require.NoError(t, os.WriteFile(filepath.Join(ws, "secret", fmt.Sprintf("k%d", j)), []byte(llSecret), 0o644))
		}
		spec := SessionSpec{Config: Config{Workspace: ws, Landlock: &Landlock{Trees: []string{filepath.Join(ws, "ok")}}}}
		s, err := m.Open(t.Context(), "default", fmt.Sprint("ll", i), spec)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range commands {
				name := filepath.Join(ws, "secret", fmt.Sprintf("k%d", j))
				res, err := s.Exec(t.Context(), Command{Shell: "cat secret/k" + fmt.Sprint(j) + " 2>/dev/null; true"}, ExecOptions{})
				if !assert.NoError(t, err) {
					return
				}
				assert.NotContains(t, res.NotEnforced, "landlock_audit", "the barrier came back")
				var paths []string
				for _, p := range res.PathsRefused {
					paths = append(paths, p.Path)
				}
				assert.Equal(t, []string{name}, paths, "session %d, command %d", i, j)
			}
		}()
	}
	wg.Wait()
}

// A read-only rule lets the sandbox read, list and execute what it
// covers, and nothing that writes: each way of changing a read-only file
// or tree is refused by the kernel with the write right it lacked, and
// the host finds the files as they were.
func TestLandlockReadOnly(t *testing.T) {
	r := newTestRunner(t)
	ws, _ := llWorkspace(t)
	conf := filepath.Join(ws, "conf")
	require.NoError(t, os.MkdirAll(conf, 0o755))
	settings := filepath.Join(conf, "settings.ini")
	require.NoError(t, os.WriteFile(settings, []byte("approved=1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(conf, "tool.sh"), []byte("#!/bin/sh\necho tool-ran\n"), 0o755))
	notes := filepath.Join(ws, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("note\n"), 0o644))
	policy := &Landlock{Trees: []string{filepath.Join(ws, "ok")}, ReadTrees: []string{conf}, ReadFiles: []string{notes}}

	// What a read-only rule allows.
	res, out := llRun(t, r, ws, "cat conf/settings.ini notes.txt; ls conf; ./conf/tool.sh; cp conf/settings.ini ok/copy; echo rc=$?", policy)
	assert.Contains(t, out, "approved=1")
	assert.Contains(t, out, "note\n")
	assert.Contains(t, out, "tool.sh\n", "the read-only tree is listed")
	assert.Contains(t, out, "tool-ran", "a read-only file may be executed")
	assert.Contains(t, out, "rc=0")
	assert.Empty(t, res.PathsRefused, out)

	cases := []struct {
		name, script string
		path         string // refused, relative to ws
		blocker      string
	}{
		{"overwrite", "echo 'approved=0' > conf/settings.ini", "conf/settings.ini", "fs.write_file"},
		{"append", "echo evil=1 >> conf/settings.ini", "conf/settings.ini", "fs.write_file"},
		{"python read-write open", `python3 -c 'f = open("conf/" + "settings.ini", "r+"); f.write("x")'`, "conf/settings.ini", "fs.write_file"},
		{"truncate(2)", `python3 -c 'import os; os.truncate("conf/settings.ini", 0)'`, "conf/settings.ini", "fs.truncate"},
		{"sed -i (replaces the file)", "sed -i s/1/0/ conf/settings.ini", "conf", "fs.make_reg"},
		{"create beside it", "echo x > conf/new.ini", "conf", "fs.make_reg"},
		{"remove", "rm -f conf/settings.ini", "conf", "fs.remove_file"},
		{"rename out of it", "mv conf/settings.ini ok/", "conf", "fs.remove_file"},
		{"through a symlink from the writable tree", "ln -s ../conf/settings.ini ok/l && echo 0 > ok/l", "conf/settings.ini", "fs.write_file"},
		{"the read-only file", "echo gone > notes.txt", "notes.txt", "fs.write_file"},
		{"a background writer", "(sleep 0.1; echo late >> conf/settings.ini) & wait", "conf/settings.ini", "fs.write_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := llRun(t, r, ws, c.script+"; echo after=$?", policy)
			assert.Contains(t, out, "after=")
			assert.True(t, refusedAt(res, filepath.Join(ws, c.path), c.blocker), "want %s refused (%s); got %+v\n%s", c.path, c.blocker, res.PathsRefused, out)
			// From the host, after the sandbox is gone.
			got, err := os.ReadFile(settings)
			require.NoError(t, err, "the read-only file was moved or removed")
			assert.Equal(t, "approved=1\n", string(got))
			got, err = os.ReadFile(notes)
			require.NoError(t, err)
			assert.Equal(t, "note\n", string(got))
			assert.NoFileExists(t, filepath.Join(conf, "new.ini"))
			assert.NoFileExists(t, filepath.Join(ws, "ok", "settings.ini"))
		})
	}
}

// TestLandlockTCPConnect: a ruleset that confines TCP connects to one
// port lets a script connect there and refuses the same script's connect
// to another port with EACCES; the refusal names the address the kernel
// refused. Both listeners are the sandbox's own (its loopback), in a
// one-shot sandbox and a session. Without the restriction both connect.
func TestLandlockTCPConnect(t *testing.T) {
	ws, _ := llWorkspace(t)
	// Two distinct ports (the sandbox's loopback is its own: any two
	// would do; the host's kernel picks them).
	var ports [2]uint16
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ports[i] = uint16(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	connect := fmt.Sprintf(`import errno, socket
ls = []
for p in (%d, %d):
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", p)); l.listen(1); ls.append(l)
for p in (%d, %d):
    c = socket.socket()
    try:
        c.connect(("127.0.0.1", p)); print(p, "connected")
    except OSError as e:
        print(p, errno.errorcode[e.errno])
`, ports[0], ports[1], ports[0], ports[1])
	inside, outside := fmt.Sprintf("%d connected", ports[0]), fmt.Sprintf("%d EACCES", ports[1])
	refusedAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	addrs := func(res *Result) []string {
		var out []string
		for _, p := range res.PathsRefused {
			if p.Addr != "" {
				assert.Equal(t, []string{"net.connect_tcp"}, p.Blockers)
				assert.Empty(t, p.Path)
				out = append(out, p.Addr)
			}
		}
		return out
	}
	ll := &Landlock{Trees: []string{ws}, RestrictTCPConnect: true, TCPConnectPorts: []uint16{ports[0]}}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "conn.py"), []byte(connect), 0o644))

	r := newTestRunner(t)
	res, out := llRun(t, r, ws, "python3 conn.py", ll)
	assert.Contains(t, out, inside)
	assert.Contains(t, out, outside)
	assert.Equal(t, []string{refusedAddr}, addrs(res), "%+v", res.PathsRefused)
	assert.NotContains(t, res.NotEnforced, "landlock_net")
	assert.Contains(t, res.NotEnforced, "udp_ports", "datagrams are not under the port rules")

	// The same in a session's command.
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "llnet", SessionSpec{Config: Config{Workspace: ws, Landlock: ll}})
	require.NoError(t, err)
	var buf bytes.Buffer
	res, err = s.Exec(t.Context(), Command{Shell: "python3 conn.py", Stdout: &buf, Stderr: &buf}, ExecOptions{})
	require.NoError(t, err)
	assert.Contains(t, buf.String(), inside)
	assert.Contains(t, buf.String(), outside)
	assert.Equal(t, []string{refusedAddr}, addrs(res), "%+v", res.PathsRefused)
	require.NoError(t, s.Close())

	// Without the restriction the same ruleset lets both connect.
	res, out = llRun(t, r, ws, "python3 conn.py", &Landlock{Trees: []string{ws}})
	assert.Contains(t, out, fmt.Sprintf("%d connected", ports[1]))
	assert.Empty(t, addrs(res))
}

// TestLandlockNetBelowABI4: where Landlock has no network rights (ABI 3
// forced on this kernel) a policy confining TCP connects cannot hold: the
// connect works and the result says landlock_net, never pretending.
func TestLandlockNetBelowABI4(t *testing.T) {
	if v := landlockVersion(); v >= 4 {
		saved := landlockVersion
		landlockVersion = func() int { return 3 }
		t.Cleanup(func() { landlockVersion = saved })
	}
	ws, _ := llWorkspaceAnyABI(t)
	script := `python3 -c 'import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
socket.create_connection(l.getsockname()); print("connected")'`
	res, out := llRun(t, newTestRunner(t), ws, script, &Landlock{Trees: []string{ws}, RestrictTCPConnect: true})
	assert.Contains(t, out, "connected")
	assert.Contains(t, res.NotEnforced, "landlock_net")
	assert.NotContains(t, res.NotEnforced, "landlock", "the paths ruleset is applied")
}

// TestLandlockTCPConnectOtherProtocols: from the attacker's side, the
// stream protocols Landlock's port rules do not check (Multipath TCP,
// which falls back to TCP with any peer; SCTP) are refused at socket
// creation with EPROTONOSUPPORT when TCP connects are confined, so an
// MPTCP connect to a refused port of the host (network host) reaches
// nothing: the host's listener, counted after the sandbox is gone, accepted
// no connection, one-shot and in a session. Plain TCP to the same port is
// refused by Landlock, and without the restriction the MPTCP socket
// connects.
func TestLandlockTCPConnectOtherProtocols(t *testing.T) {
	ws, _ := llWorkspace(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	var accepted sync.WaitGroup
	var mu sync.Mutex
	count := 0
	accepted.Add(1)
	go func() {
		defer accepted.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			count++
			mu.Unlock()
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`import errno, socket
for name, fam, typ, proto, addr in (
        ("mptcp", socket.AF_INET, socket.SOCK_STREAM, 262, "127.0.0.1"),
        ("mptcp6", socket.AF_INET6, socket.SOCK_STREAM, 262, "::ffff:127.0.0.1"),
        ("mptcpcloexec", socket.AF_INET, socket.SOCK_STREAM|socket.SOCK_CLOEXEC, 262, "127.0.0.1"),
        ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132, "127.0.0.1"),
        ("sctpseq", socket.AF_INET, socket.SOCK_SEQPACKET, 132, "127.0.0.1"),
        ("tcp", socket.AF_INET, socket.SOCK_STREAM, 0, "127.0.0.1")):
    try:
        c = socket.socket(fam, typ, proto); c.connect((addr, %d)); print(name, "connected")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
`, port)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "conn.py"), []byte(script), 0o644))
	run := func(ll *Landlock) string {
		var out bytes.Buffer
		cfg := Config{Workspace: ws, Landlock: ll, Network: NetworkHost, AllowHostNetwork: true}
		_, err := newTestRunner(t).Run(context.Background(), cfg, Command{Shell: "python3 conn.py", Stdout: &out, Stderr: &out})
		require.NoError(t, err, out.String())
		return out.String()
	}
	out := run(&Landlock{Trees: []string{ws}, RestrictTCPConnect: true, TCPConnectPorts: []uint16{uint16(port) + 1}})
	for _, want := range []string{"mptcp EPROTONOSUPPORT", "mptcp6 EPROTONOSUPPORT", "mptcpcloexec EPROTONOSUPPORT", "sctp EPROTONOSUPPORT", "sctpseq EPROTONOSUPPORT", "tcp EACCES"} {
		assert.Contains(t, out, want)
	}
	// The same in a session's command (libcontainer loads the filter).
	ll := &Landlock{Trees: []string{ws}, RestrictTCPConnect: true, TCPConnectPorts: []uint16{uint16(port) + 1}}
	s, err := newTestSessions(t).Open(t.Context(), "default", "llmptcp", SessionSpec{Config: Config{Workspace: ws, Landlock: ll, Network: NetworkHost, AllowHostNetwork: true}})
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = s.Exec(t.Context(), Command{Shell: "python3 conn.py", Stdout: &buf, Stderr: &buf}, ExecOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	for _, want := range []string{"mptcp EPROTONOSUPPORT", "mptcp6 EPROTONOSUPPORT", "sctp EPROTONOSUPPORT", "tcp EACCES"} {
		assert.Contains(t, buf.String(), want, "session")
	}
	mu.Lock()
	assert.Zero(t, count, "the host's listener accepted a connection from the confined sandbox:\n%s\n%s", out, buf.String())
	mu.Unlock()

	// Without the restriction the same MPTCP socket reaches the listener.
	out = run(&Landlock{Trees: []string{ws}})
	assert.Contains(t, out, "mptcp connected")
	l.Close()
	accepted.Wait()
	assert.NotZero(t, count)
}
