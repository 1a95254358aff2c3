package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

// projectAttack tries to change, remove, replace or plant the workspace's
// .tether.yaml from inside the sandbox; each line prints a token only if
// it worked.
const projectAttack = `echo 'approvals: {mode: manual}' > .tether.yaml && echo WROTE
echo '# x' >> .tether.yaml && echo APPENDED
rm -f .tether.yaml 2>/dev/null; test -e .tether.yaml || echo REMOVED
mv .tether.yaml moved.yaml 2>/dev/null && echo MOVED
ln -sf /dev/null .tether.yaml 2>/dev/null && echo LINKED
echo done
`

// TestProjectFileLayered: the workspace's .tether.yaml narrows the user's
// profile for terminal calls (a deny glob of its own) and file tools
// (a path rule of its own); one that widens refuses every call with its
// file:line; and no sandboxed command, one-shot or in a session, can
// change, remove or plant it (checked from the host afterwards), nor can
// write_file.
func TestProjectFileLayered(t *testing.T) {
	sb := testSandbox(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	text := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n      limits: {timeout: 20s}\n    approvals: {unattended_mode: approve}\n",
		filepath.Join(base, "state"), ws)
	cfg, err := config.Parse(filepath.Join(base, "config.yaml"), []byte(text), base)
	require.NoError(t, err)
	eng := testEngine(t, cfg, approval.Options{})
	sessions := testSessions(t, sb)
	r := &Runner{Config: cfg, Engine: eng, Sandbox: sb, Sessions: sessions}
	call := func(session string, c RawCall) Result {
		out := r.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Session: session, Calls: []RawCall{c}}, nil)
		return out.Results[0]
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "attack.sh"), []byte(projectAttack), 0o644))

	// Narrowing: deny rules and a path rule the user's profile lacks.
	project := "approvals:\n  deny: [\"touch *\"]\nfiles:\n  deny: [notes.txt]\n"
	require.NoError(t, os.WriteFile(filepath.Join(ws, config.ProjectFile), []byte(project), 0o644))
	res := call("", rawCall("1", "terminal", args("command", "touch ran")))
	assert.Equal(t, "deny.glob", res.Rule, res.Message)
	assert.NoFileExists(t, filepath.Join(ws, "ran"))
	res = call("", readCall("notes.txt"))
	assert.Equal(t, "files.deny", res.Rule, res.Message)
	res = call("", rawCall("1", "write_file", map[string]any{"path": config.ProjectFile, "content": "approvals: {}\n"}))
	assert.Equal(t, "path.protected", res.Rule, res.Message)

	for _, session := range []string{"", "s1"} {
		res := call(session, rawCall("1", "terminal", args("command", "sh attack.sh")))
		require.Equal(t, ClassSucceeded, res.Class, "session %q: %s", session, res.Message)
		assert.Equal(t, "done\n", res.Output["stdout"], "session %q: no attack worked; stderr %v", session, res.Output["stderr"])
	}
	require.NoError(t, sessions.Close())
	data, err := os.ReadFile(filepath.Join(ws, config.ProjectFile))
	require.NoError(t, err)
	assert.Equal(t, project, string(data), "unchanged, seen from the host")
	assert.NoFileExists(t, filepath.Join(ws, "moved.yaml"))

	// Widening: every call is refused, saying where and what.
	require.NoError(t, os.WriteFile(filepath.Join(ws, config.ProjectFile), []byte("approvals:\n  mode: \"off\"\n"), 0o644))
	for _, c := range []RawCall{rawCall("1", "terminal", args("command", "echo hi")), readCall("attack.sh")} {
		res := call("", c)
		assert.False(t, res.Ran, res.Message)
		assert.Contains(t, res.Message, ".tether.yaml:2")
		assert.Contains(t, res.Message, "approvals.mode")
	}

	// Absent, then planted from inside: still absent on the host.
	require.NoError(t, os.Remove(filepath.Join(ws, config.ProjectFile)))
	res = call("", rawCall("1", "terminal", args("command", "echo 'files: {secret_files: allow}' > .tether.yaml && echo PLANTED; echo done")))
	require.Equal(t, ClassSucceeded, res.Class, res.Message)
	assert.Equal(t, "done\n", res.Output["stdout"])
	assert.NoFileExists(t, filepath.Join(ws, config.ProjectFile))
}
