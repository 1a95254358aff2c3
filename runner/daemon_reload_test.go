package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
)

// reloadConfig is a configuration of two pooled profiles in one
// workspace, "changes" with sandbox_pids pids per sandbox and "steady".
func reloadConfig(t *testing.T, dir, ws string, pids int) *config.Config {
	t.Helper()
	y := fmt.Sprintf(`state_dir: %s
profiles:
  default:
    approvals: {timeout: 60s}
    terminal: {cwd: %s, pool: 1, limits: {sandbox_pids: %d}}
  steady:
    approvals: {timeout: 60s}
    terminal: {cwd: %s, pool: 1}
`, filepath.Join(dir, "state"), ws, pids, ws)
	cfg, err := config.Parse(filepath.Join(dir, "tether.yaml"), []byte(y), dir)
	require.NoError(t, err)
	return cfg
}

// containers lists the sandbox containers of sb's state root, as seen
// from the host.
func containers(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "containers"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Name())
	}
	return ids
}

// A configuration reload drains the pool of every profile it changed:
// the sandbox built for the old configuration is destroyed unused (its
// container is gone on the host), the pool refills under the new one
// (a command sees the new limit from inside), and the pool of a profile
// it did not change is kept. A reload the daemon cannot take changes
// nothing.
func TestReloadDrainsChangedPools(t *testing.T) {
	sb := testSandbox(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	ws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	e := newDaemonEnv(t, sb, "")
	e.cfg, e.ws = reloadConfig(t, dir, ws, 40), ws
	d, stop := e.start(t)
	c := NewClient(e.socket)
	call := func(profile, command string) Result {
		t.Helper()
		s, err := c.CreateSession(t.Context(), SessionRequest{Profile: profile})
		require.NoError(t, err)
		out, err := c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("a", "terminal", args("command", command, "session", false))})
		require.NoError(t, err)
		require.Len(t, out.Results, 1)
		return out.Results[0]
	}
	pidsMax := "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"
	for _, p := range []string{"default", "steady"} {
		res := call(p, "true") // starts the profile's pool
		require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
		waitPool(t, d, p, 1)
	}
	before := containers(t, sb.StateRoot)
	require.Len(t, before, 2, "one waiting sandbox per pool")

	// Nothing the daemon cannot take while it runs is half applied.
	moved := reloadConfig(t, t.TempDir(), ws, 40)
	changed, err := d.Reload(moved)
	require.ErrorIs(t, err, ErrReloadNeedsRestart)
	assert.False(t, changed)
	assert.Same(t, e.cfg, d.Config())
	changed, err = d.Reload(reloadConfig(t, dir, ws, 40))
	require.NoError(t, err)
	assert.False(t, changed, "the same configuration again changes nothing")
	assert.ElementsMatch(t, before, containers(t, sb.StateRoot))

	next := reloadConfig(t, dir, ws, 30)
	changed, err = d.Reload(next)
	require.NoError(t, err)
	require.True(t, changed)
	assert.Same(t, next, d.Config())
	// From the host: exactly one of the waiting sandboxes (the changed
	// profile's) is destroyed, and a new one takes its place.
	var gone, kept []string
	require.Eventually(t, func() bool {
		now := containers(t, sb.StateRoot)
		gone, kept = nil, nil
		for _, id := range before {
			if slices.Contains(now, id) {
				kept = append(kept, id)
			} else {
				gone = append(gone, id)
			}
		}
		return len(gone) == 1 && len(now) == 2
	}, 60*time.Second, 50*time.Millisecond, "the reload did not replace the changed profile's pooled sandbox")
	waitPool(t, d, "default", 1)
	waitPool(t, d, "steady", 1)

	// The refilled sandbox is of the new configuration, seen from inside.
	res := call("default", "cat /proc/1/cmdline; echo; "+pidsMax)
	require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
	out := fmt.Sprint(res.Output["stdout"])
	assert.Contains(t, out, "tether-supervisor", "the call was not served by a pooled sandbox")
	assert.Equal(t, "30", strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]))
	// The steady profile's sandbox from before the reload serves it.
	res = call("steady", "cat /proc/1/cmdline")
	require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
	assert.Contains(t, fmt.Sprint(res.Output["stdout"]), "tether-supervisor")
	require.Eventually(t, func() bool { return !slices.Contains(containers(t, sb.StateRoot), kept[0]) }, 30*time.Second, 50*time.Millisecond,
		"the kept sandbox did not serve the steady profile's call")

	require.NoError(t, stop())
	assertNothingLeftOf(t, sb)
}

// A session sandbox started before a reload is gated by the new rules:
// a script's hidden exec that the old configuration let run is refused
// at exec after the reload adds a deny glob for it, in the same sandbox
// (the stand-in program leaves no second mark on the host).
func TestReloadGatesLiveSessions(t *testing.T) {
	sb := testSandbox(t)
	dir := sandboxTempDir(t)
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "bin"), 0o755))
	mark := filepath.Join(ws, "ran-fetch")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", "fetch"), []byte("#!/bin/sh\necho \"$0 $*\" >> "+mark+"\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "get.sh"), []byte("./bin/fetch http://example.com/x\n"), 0o644))
	conf := func(deny string) *config.Config {
		y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    approvals: {timeout: 60s, deny: [%s]}\n    terminal: {cwd: %s}\n", filepath.Join(dir, "state"), deny, ws)
		cfg, err := config.Parse(filepath.Join(dir, "tether.yaml"), []byte(y), dir)
		require.NoError(t, err)
		return cfg
	}
	e := newDaemonEnv(t, sb, "")
	e.cfg, e.ws = conf(`"git push*"`), ws
	d, stop := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	call := func(id string) Result {
		t.Helper()
		out, err := c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall(id, "terminal", args("command", "sh get.sh; echo $$"))})
		require.NoError(t, err)
		require.Len(t, out.Results, 1)
		return out.Results[0]
	}
	first := call("a")
	require.Equal(t, ClassSucceeded, first.Class, "%s %v", first.Message, first.Output)
	before, err := os.ReadFile(mark)
	require.NoError(t, err, "the stand-in did not run before the reload")

	changed, err := d.Reload(conf(`"git push*", "*fetch *"`))
	require.NoError(t, err)
	require.True(t, changed)
	second := call("b")
	assert.Equal(t, ClassBlocked, second.Class, "%s %v", second.Message, second.Output)
	assert.Equal(t, GateExec, second.Gate)
	after, err := os.ReadFile(mark)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the denied program ran in the session after the reload")
	require.NoError(t, stop())
	assertNothingLeftOf(t, sb)
}
