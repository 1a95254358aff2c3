package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

// waitPool waits (with a deadline) until the daemon's pool of profile
// holds n sandboxes.
func waitPool(t *testing.T, d *Daemon, profile string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for d.pools.Ready(profile) < n {
		require.True(t, time.Now().Before(deadline), "the pool of %s did not fill to %d", profile, n)
		time.Sleep(20 * time.Millisecond)
	}
}

// One-shot calls (session: false) run in the profile's pooled sandboxes:
// the supervisor is their init, each gets a fresh one (an earlier call's
// /tmp is not there), the pool refills, and once the daemon has stopped
// nothing of any of them is left (cgroups in every hierarchy, state,
// mounts, the pool socket).
func TestServeOneShotCallsUsePool(t *testing.T) {
	sb := testSandbox(t)
	e := newDaemonEnv(t, sb, "")
	e.cfg, e.ws = poolConfig(t, 1)
	d, stop := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	call := func(id, command string) Result {
		t.Helper()
		out, err := c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall(id, "terminal", args("command", command, "session", false))})
		require.NoError(t, err)
		require.Len(t, out.Results, 1)
		return out.Results[0]
	}
	// The first call starts the pool (and waits for its first sandbox, or
	// builds its own: timing decides).
	first := call("a", "cat /proc/1/cmdline; echo; echo left > /tmp/mark")
	require.Equal(t, ClassSucceeded, first.Class, "%s %v", first.Message, first.Output)

	waitPool(t, d, "default", 1)
	second := call("b", "cat /proc/1/cmdline; echo; ls /tmp; echo left > /tmp/mark")
	require.Equal(t, ClassSucceeded, second.Class, "%s %v", second.Message, second.Output)
	assert.Contains(t, second.Output["stdout"], "tether-supervisor", "a pooled sandbox's init is the supervisor")
	assert.NotContains(t, second.Output["stdout"], "mark")

	waitPool(t, d, "default", 1) // refilled after use
	third := call("c", "cat /proc/1/cmdline; echo; ls /tmp")
	require.Equal(t, ClassSucceeded, third.Class, "%s %v", third.Message, third.Output)
	assert.Contains(t, third.Output["stdout"], "tether-supervisor")
	assert.NotContains(t, third.Output["stdout"], "mark", "a pooled sandbox saw an earlier command's /tmp")

	// Hardline commands are refused before any sandbox is taken.
	waitPool(t, d, "default", 1)
	blocked := call("d", "rm -rf /")
	assert.Equal(t, ClassBlocked, blocked.Class)
	assert.Equal(t, 1, d.pools.Ready("default"))

	require.NoError(t, stop())
	assertNothingLeftOf(t, sb)
}

// tether run's way in: the pool socket serves a client that shows the
// daemon's own configuration and placement, and answers "no match"
// (nothing ran) to one whose configuration differs.
func TestPoolSocketMatchesPolicy(t *testing.T) {
	sb := testSandbox(t)
	e := newDaemonEnv(t, sb, "")
	e.cfg, e.ws = poolConfig(t, 1)
	d, stop := e.start(t)

	pol, err := ResolveTerminalScope(e.cfg, nil, "default", e.ws).Policy()
	require.NoError(t, err)
	cfg, err := SandboxConfig(pol, e.ws, nil, pol.Limits.Timeout.D(), nil)
	require.NoError(t, err)
	req := sandbox.PoolRequest{CgroupPrefix: sb.CgroupPrefix, Profile: "default", Policy: PolicyDigest(e.cfg),
		Spec: sandbox.SessionSpec{Config: cfg, ProfileLimits: ProfileLimits(pol)}, Args: []string{"cat", "/proc/1/cmdline"}}
	runApproved := func(req sandbox.PoolRequest, approve func() error) (*sandbox.Result, string, error) {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := sandbox.RunPooled(ctx, sb.StateRoot, req, approve, nil, &out, &out)
		return res, out.String(), err
	}
	run := func(req sandbox.PoolRequest) (*sandbox.Result, string, error) { return runApproved(req, nil) }
	// The first request starts the pool of its placement (and may be
	// served by its first sandbox: timing decides).
	_, _, _ = run(req)
	waitPool(t, d, "default", 1)
	other := req
	other.Policy = PolicyDigest(&config.Config{Source: "another"})
	_, _, err = run(other)
	require.ErrorIs(t, err, sandbox.ErrPoolEmpty, "another configuration's run is not served")
	otherPrefix := req
	otherPrefix.CgroupPrefix = sb.CgroupPrefix + "-x"
	_, _, err = run(otherPrefix)
	require.ErrorIs(t, err, sandbox.ErrPoolEmpty, "another cgroup prefix's run is not served")
	assert.Equal(t, 1, d.pools.Ready("default"), "a refused request took no sandbox")

	// A refusal (the run's own approval, decided while the daemon takes
	// the sandbox) runs nothing: the sandbox is destroyed unused.
	errNo := errors.New("refused by the test")
	touch := req
	touch.Args = []string{"touch", filepath.Join(e.ws, "ran")}
	_, _, err = runApproved(touch, func() error { return errNo })
	require.ErrorIs(t, err, errNo)
	waitPool(t, d, "default", 1)
	assert.NoFileExists(t, filepath.Join(e.ws, "ran"), "a refused command ran in the pooled sandbox")

	res, out, err := run(req)
	require.NoError(t, err, out)
	assert.Equal(t, 0, res.ExitCode)
	assert.Contains(t, out, "tether-supervisor")
	require.NoError(t, stop())
	_, err = os.Stat(sandbox.PoolSocket(sb.StateRoot))
	assert.ErrorIs(t, err, os.ErrNotExist, "the pool socket outlived the daemon")
	assertNothingLeftOf(t, sb)
}

// poolConfig is testConfig with terminal.pool set.
func poolConfig(t *testing.T, n int) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    approvals:\n      timeout: 60s\n    terminal:\n      cwd: %s\n      pool: %d\n", filepath.Join(dir, "state"), ws, n)
	cfg, err := config.Parse("test.yaml", []byte(y), dir)
	require.NoError(t, err)
	ws, err = filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	return cfg, ws
}

// assertNothingLeftOf checks from the host that nothing of sb's sandboxes
// remains: no cgroup directory under its prefix in any hierarchy (the
// hybrid unified tree included), no mount under its state root, no
// container state, root or lock.
func assertNothingLeftOf(t *testing.T, sb sandbox.Runner) {
	t.Helper()
	// The v2 tree is /sys/fs/cgroup itself; v1's hierarchies are its
	// directories (on v2 its files are the root cgroup's own).
	roots := []string{"/sys/fs/cgroup"}
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		if e.IsDir() && e.Name() != sb.CgroupPrefix {
			roots = append(roots, filepath.Join("/sys/fs/cgroup", e.Name()))
		}
	}
	for _, root := range roots {
		dir := filepath.Join(root, sb.CgroupPrefix)
		_, err := os.Stat(dir)
		assert.ErrorIs(t, err, os.ErrNotExist, "cgroup %s left behind", dir)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	assert.NotContains(t, string(mounts), sb.StateRoot, "mounts left under the state root")
	for _, sub := range []string{"containers", "roots", "locks"} {
		entries, _ := os.ReadDir(filepath.Join(sb.StateRoot, sub))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Empty(t, names, "state left in %s", sub)
	}
	// No process of a pooled sandbox: every supervisor runs this binary
	// with the supervisor argument.
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), sandbox.SupervisorArg) {
			env, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cgroup"))
			assert.NotContains(t, string(env), sb.CgroupPrefix, "supervisor %s outlived the daemon", p.Name())
		}
	}
}

// A one-shot call of a job under an enforced mandate, made through the
// daemon whose profile pools its sandboxes, never runs in a pooled
// sandbox (built without the job's mount plan and Landlock ruleset): it
// builds its own, under the plan, and the profile's pool is left as it
// was. From inside, a script removes a file outside the mandate and
// creates the mandate's write tree; from the host afterwards the file is
// still there, the refusal is paths drift that says unlink, the write
// tree the plan created (and the command left empty) is gone, and the
// pool's sandbox still serves the next plain call.
func TestServeEnforcedMandateBypassesPool(t *testing.T) {
	requireLandlockAudit(t)
	sb := testSandbox(t)
	e := newDaemonEnv(t, sb, "")
	e.cfg, e.ws = testConfigIn(t, sandboxTempDir(t), "      pool: 1\n")
	files := map[string]string{
		// build/ only when src/skip-build is missing: the observed run
		// writes three files there (the mandate's write tree build/**),
		// the enforced run leaves the tree the plan made empty.
		"src/check.sh": "cat /proc/1/cmdline; echo; cat src/data.txt\n" +
			"if [ ! -f src/skip-build ]; then mkdir -p build && for f in a b c; do echo built > build/$f; done; fi\n" +
			"if [ -f src/extra-rm ]; then rm -f \"$(cat src/extra-rm)\"; fi\necho check-done\n",
		"src/data.txt":  "data-ok\n",
		"src/notes.txt": "n\n",
		"src/more.txt":  "m\n",
		"secret/token":  landlockSecret + "\n",
	}
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(e.ws, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.ws, name), []byte(text), 0o644))
	}
	d, stop := e.start(t)
	c := NewClient(e.socket)
	ctx := t.Context()
	job, err := c.CreateSession(ctx, SessionRequest{Platform: "cron", Job: "nightly"})
	require.NoError(t, err)
	call := func(session, id, command string) Result {
		t.Helper()
		out, err := c.Call(ctx, session, id, []RawCall{rawCall(id, "terminal", args("command", command, "session", false))})
		require.NoError(t, err)
		require.Len(t, out.Results, 1)
		return out.Results[0]
	}
	// Observe mode (the job has no mandate yet): reads of src, writes in
	// build.
	out, err := c.Call(ctx, job.Session, "o", []RawCall{
		rawCall("1", "read_file", args("path", "src/check.sh")),
		rawCall("2", "read_file", args("path", "src/data.txt")),
		rawCall("3", "read_file", args("path", "src/notes.txt")),
		rawCall("4", "read_file", args("path", "src/more.txt")),
	})
	require.NoError(t, err)
	for _, res := range out.Results {
		require.Equal(t, ClassSucceeded, res.Class, res.Message)
	}
	obs := call(job.Session, "5", "sh src/check.sh")
	require.Equal(t, ClassSucceeded, obs.Class, "%s %v", obs.Message, obs.Output)
	v, err := d.Mandates.Compile(ctx, "nightly")
	require.NoError(t, err)
	t.Logf("compiled mandate:\n%s", v.Text)
	require.Contains(t, v.Text, "- build/**", "the job wrote build: a write tree")
	require.Contains(t, v.Text, `"read:src/**"`, "the job only read src")
	_, err = d.Mandates.ApproveReviewed(ctx, "nightly", v.Number, v.SHA256, "test")
	require.NoError(t, err)

	// The pool holds a plain sandbox of the profile.
	plain, err := c.CreateSession(ctx, SessionRequest{})
	require.NoError(t, err)
	_ = call(plain.Session, "p0", "true") // starts the pool
	waitPool(t, d, "default", 1)

	build := filepath.Join(e.ws, "build")
	require.NoError(t, os.RemoveAll(build))
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "src", "skip-build"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "src", "extra-rm"), []byte("secret/token\n"), 0o644))
	bad := call(job.Session, "6", "sh src/check.sh")
	require.Equal(t, ClassBlocked, bad.Class, "%s %v", bad.Message, bad.Output)
	assert.Equal(t, GateLandlock, bad.Gate)
	assert.Contains(t, bad.Output["stdout"], "check-done")
	assert.NotContains(t, bad.Output["stdout"], "tether-supervisor", "the enforced call ran in a pooled sandbox")
	assert.Contains(t, bad.Output["stderr"], "Read-only file system", "%v", bad.Output)
	// Through the API: JSON's arrays and objects.
	refused, _ := bad.Output["paths_refused"].([]any)
	require.NotEmpty(t, refused, "%v", bad.Output)
	first, _ := refused[0].(map[string]any)
	token := filepath.Join(e.ws, "secret", "token")
	assert.Equal(t, token, first["path"])
	assert.Equal(t, "unlink", first["op"])
	id, _ := first["drift_id"].(string)
	rec := driftRecord(t, d.Mandates, id)
	assert.Contains(t, rec.Reason, "unlink secret/token")

	// From the host, the sandbox gone: the file is there, the write tree
	// the plan made is removed, and the pool was neither taken nor
	// replaced (no refill: its one sandbox is ready at once).
	got, err := os.ReadFile(token)
	require.NoError(t, err, "from the host: the file outside the mandate was removed")
	assert.Equal(t, landlockSecret+"\n", string(got))
	assert.NoDirExists(t, build, "the plan's write tree outlived the sandbox (or a pooled sandbox holds the plan)")
	assert.Equal(t, 1, d.pools.Ready("default"), "the enforced call took or replaced the profile's pool")
	next := call(plain.Session, "p1", "cat /proc/1/cmdline")
	require.Equal(t, ClassSucceeded, next.Class, "%s %v", next.Message, next.Output)
	assert.Contains(t, next.Output["stdout"], "tether-supervisor", "the plain call after it is pooled")
	waitPool(t, d, "default", 1)
	assert.NoDirExists(t, build, "a pooled sandbox set the plan up")

	require.NoError(t, stop())
	assertNothingLeftOf(t, sb)
}
