package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

const mountOwner = 4242 // the workspace's owner in the mount tests

// mountRunner is a runner whose workspace (owned by mountOwner) is
// base/ws, with the given terminal.mounts YAML lines.
func mountRunner(t *testing.T, base, mounts string) (*Runner, *sandbox.Sessions) {
	t.Helper()
	sb := testSandbox(t)
	text := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n      limits: {timeout: 20s}\n      mounts:\n%s",
		filepath.Join(base, "state"), filepath.Join(base, "ws"), mounts+"    approvals: {mode: \"off\"}\n")
	cfg, err := config.Parse(filepath.Join(base, "config.yaml"), []byte(text), base)
	require.NoError(t, err)
	eng := testEngine(t, cfg, approval.Options{})
	sessions := testSessions(t, sb)
	return &Runner{Config: cfg, Engine: eng, Sandbox: sb, Sessions: sessions}, sessions
}

func mountBase(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	for _, d := range []string{"ws", "cache", "tools", "state"} {
		require.NoError(t, os.Mkdir(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.Chown(filepath.Join(base, "ws"), mountOwner, mountOwner))
	require.NoError(t, os.Chown(filepath.Join(base, "cache"), mountOwner, mountOwner))
	require.NoError(t, os.WriteFile(filepath.Join(base, "tools", "tool.txt"), []byte("TOOL-CONTENT\n"), 0o644))
	return base
}

// TestTerminalMounts: a rw mount is writable inside the sandbox and what
// the command creates there belongs to the workspace's owner on the host;
// a ro mount is readable and not writable — one-shot and in a session,
// checked from the host after the sandbox is gone.
func TestTerminalMounts(t *testing.T) {
	base := mountBase(t)
	cache, tools := filepath.Join(base, "cache"), filepath.Join(base, "tools")
	r, sessions := mountRunner(t, base, fmt.Sprintf("        - {path: %s, mode: rw}\n        - {path: %s}\n", cache, tools))
	for _, session := range []string{"", "s1"} {
		cmd := fmt.Sprintf("echo made > %[1]s/made-%[3]s; mkdir %[1]s/dir-%[3]s; touch %[2]s/nope 2>/dev/null && echo WROTE-RO; rm -f %[2]s/tool.txt 2>/dev/null && echo REMOVED-RO; cat %[2]s/tool.txt; echo done",
			cache, tools, "x"+session)
		out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Session: session, Calls: []RawCall{rawCall("1", "terminal", args("command", cmd))}}, nil)
		res := out.Results[0]
		require.Equal(t, ClassSucceeded, res.Class, "session %q: %s %v", session, res.Message, res.Output)
		assert.Equal(t, "TOOL-CONTENT\ndone\n", res.Output["stdout"], "session %q; stderr %v", session, res.Output["stderr"])
	}
	require.NoError(t, sessions.Close())
	for _, session := range []string{"", "s1"} {
		for _, name := range []string{"made-x" + session, "dir-x" + session} {
			var st unix.Stat_t
			require.NoError(t, unix.Stat(filepath.Join(cache, name), &st), name)
			assert.Equal(t, uint32(mountOwner), st.Uid, "%s belongs to the workspace's owner", name)
			assert.Equal(t, uint32(mountOwner), st.Gid, name)
		}
	}
	assert.NoFileExists(t, filepath.Join(tools, "nope"))
	assert.FileExists(t, filepath.Join(tools, "tool.txt"))
}

// TestTerminalMountsAttacks: mounts that would show the sandbox tether's
// state (through a symlink, through a bind mount of it elsewhere), a
// writable tree of another owner, a writable tree holding a git directory,
// or a path that does not exist are refused when the sandbox would start:
// nothing runs.
func TestTerminalMountsAttacks(t *testing.T) {
	base := mountBase(t)
	state := filepath.Join(base, "state")
	require.NoError(t, os.WriteFile(filepath.Join(state, "audit.jsonl"), []byte("SECRET-AUDIT\n"), 0o600))
	require.NoError(t, os.Symlink(state, filepath.Join(base, "alias")))
	bindAlias := filepath.Join(base, "bindalias")
	require.NoError(t, os.Mkdir(bindAlias, 0o755))
	require.NoError(t, unix.Mount(state, bindAlias, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(bindAlias, unix.MNT_DETACH) })
	parentAlias := filepath.Join(base, "parentalias")
	require.NoError(t, os.Mkdir(parentAlias, 0o755))
	require.NoError(t, unix.Mount(base, parentAlias, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(parentAlias, unix.MNT_DETACH) })
	rootOwned := filepath.Join(base, "rootowned")
	require.NoError(t, os.Mkdir(rootOwned, 0o755))
	repo := filepath.Join(base, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git", "hooks"), 0o755))
	require.NoError(t, os.Chown(repo, mountOwner, mountOwner))

	for _, c := range []struct{ name, mount, why string }{
		{"symlink to state", "{path: " + filepath.Join(base, "alias") + "}", "symlink"},
		{"bind of state", "{path: " + bindAlias + "}", "lies inside " + state},
		{"bind of a parent of state", "{path: " + parentAlias + "}", "holds"},
		{"rw of another owner", "{path: " + rootOwned + ", mode: rw}", "workspace's owner"},
		{"rw holding .git", "{path: " + repo + ", mode: rw}", "holds .git"},
		{"missing", "{path: " + filepath.Join(base, "nope") + "}", "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := mountRunner(t, base, "        - "+c.mount+"\n")
			out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Calls: []RawCall{
				rawCall("1", "terminal", args("command", "touch ran; cat "+filepath.Join(base, "alias", "audit.jsonl")))}}, nil)
			res := out.Results[0]
			assert.False(t, res.Ran, res.Message)
			assert.Contains(t, res.Message, c.why)
			assert.Contains(t, res.Message, "terminal.mounts")
			assert.NotContains(t, fmt.Sprint(res.Output), "SECRET-AUDIT")
			assert.NoFileExists(t, filepath.Join(base, "ws", "ran"))
		})
	}
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(state, "audit.jsonl"), &st))
}
