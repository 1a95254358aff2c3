package runner

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

// daemonEnv is a config (workspace, state dir) and a socket path shared by
// the daemons of one test.
type daemonEnv struct {
	cfg    *config.Config
	ws     string
	socket string
	sb     sandbox.Runner
	limits Limits
}

func newDaemonEnv(t *testing.T, sb sandbox.Runner, extra string) *daemonEnv {
	t.Helper()
	cfg, ws := testConfig(t, "    approvals:\n      timeout: 60s\n"+extra)
	sockDir, err := os.MkdirTemp("", "tsock")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	return &daemonEnv{cfg: cfg, ws: ws, socket: filepath.Join(sockDir, "tether.sock"), sb: sb}
}

// start runs a daemon until the returned stop is called (stop waits for
// Serve to return and reports its error).
func (e *daemonEnv) start(t *testing.T) (*Daemon, func() error) {
	t.Helper()
	d, err := NewDaemon(DaemonOptions{Config: e.cfg, Socket: e.socket, Sandbox: e.sb, Version: "test", Limits: e.limits})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(string) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon did not start: %v", err)
	}
	var stopped bool
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return d, stop
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestServeSocketAndAuth(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.start(t)
	fi, err := os.Stat(e.socket)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "socket mode")

	// A second daemon on the same socket refuses to start.
	d2, err := NewDaemon(DaemonOptions{Config: e.cfg, Socket: e.socket})
	require.NoError(t, err)
	err = d2.Serve(t.Context(), nil)
	assert.ErrorIs(t, err, ErrSocketInUse)

	_, err = NewDaemon(DaemonOptions{Config: e.cfg, Socket: e.socket + "2", Listen: "127.0.0.1:0"})
	assert.ErrorIs(t, err, ErrTCPWithoutTokens)

	c := NewClient(e.socket)
	h, err := c.Health(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "ok", h["status"])
	tools, err := c.Tools(t.Context(), "")
	require.NoError(t, err)
	assert.Len(t, tools, 6)

	// Session routes need a client token.
	_, err = c.Call(t.Context(), "s-nope", "", nil)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.Status)
	c.ClientToken = "tct_forged"
	_, err = c.CreateSession(t.Context(), SessionRequest{})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.Status, "an unknown token is not a new client")
}

func TestServeTCPNeedsBearer(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	d, err := NewDaemon(DaemonOptions{Config: e.cfg, Socket: e.socket, Listen: "127.0.0.1:0", Tokens: []string{"0123456789abcdef0123"}})
	require.NoError(t, err)
	defer d.Close()
	srv := d.TCPHandler()
	req, _ := http.NewRequest(http.MethodGet, "/v1/health", nil)
	rec := newRecorder()
	srv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.code)
	req.Header.Set("Authorization", "Bearer wrong-token-wrong-token")
	rec = newRecorder()
	srv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.code)
	req.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
	rec = newRecorder()
	srv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.code)
	// The unix socket (mode 0600) needs no bearer token.
	req.Header.Del("Authorization")
	rec = newRecorder()
	d.Server.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.code)
}

type recorder struct {
	h    http.Header
	code int
	body strings.Builder
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func TestServeBatchMixed(t *testing.T) {
	e := newDaemonEnv(t, testSandbox(t), "")
	d, _ := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	out, err := c.Call(t.Context(), s.Session, "t1", []RawCall{
		rawCall("w1", "write_file", args("path", "notes/a.txt", "content", "alpha\n")),
		rawCall("r1", "read_file", args("path", "notes/a.txt")),
		rawCall("t1", "terminal", args("command", "cat notes/a.txt && echo beta > notes/b.txt && pwd")),
		rawCall("r2", "read_file", args("path", "notes/b.txt")),
		rawCall("t2", "terminal", args("command", "rm -rf /")),
		rawCall("t3", "terminal", args("command", "exit 3")),
		rawCall("s1", "search_files", args("pattern", "^beta$")),
		rawCall("p1", "patch", args("path", "notes/a.txt", "old_string", "alpha", "new_string", "gamma")),
		rawCall("t4", "terminal", args("command", "cat notes/a.txt; touch .git-probe; ls -a", "timeout", "20")),
	})
	require.NoError(t, err)
	require.Len(t, out.Results, 9)
	ids := []string{"w1", "r1", "t1", "r2", "t2", "t3", "s1", "p1", "t4"}
	for i, r := range out.Results {
		assert.Equal(t, ids[i], r.CallID, "results in call order")
	}
	res := out.Results
	assert.Equal(t, EffectLanded, res[0].Effect)
	assert.Equal(t, "alpha\n", res[1].Output["content"])
	require.Equal(t, ClassSucceeded, res[2].Class, "%s %v", res[2].Message, res[2].Output)
	assert.Equal(t, "alpha\n"+e.ws+"\n", res[2].Output["stdout"])
	assert.Equal(t, EffectPossible, res[2].Effect)
	assert.Equal(t, "beta\n", res[3].Output["content"], "the read after the terminal call sees its effect")
	assert.Equal(t, ClassBlocked, res[4].Class)
	assert.Equal(t, "hardline.rm-root", res[4].Rule)
	assert.False(t, res[4].Ran)
	assert.Equal(t, ClassFailed, res[5].Class)
	assert.EqualValues(t, 3, res[5].Output["exit_code"])
	assert.EqualValues(t, 1, res[6].Output["count"])
	assert.Equal(t, EffectLanded, res[7].Effect)
	require.Equal(t, ClassSucceeded, res[8].Class, "%s %v", res[8].Message, res[8].Output)
	assert.Contains(t, res[8].Output["stdout"], "gamma\n")
	_, err = os.Stat(filepath.Join(e.ws, "notes/b.txt"))
	assert.NoError(t, err, "the terminal call wrote into the workspace")

	// Protected paths are immutable inside the sandbox too, also when
	// they do not exist (the live session reserves them meanwhile).
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{
		rawCall("h1", "terminal", args("command", "echo evil > .git/hooks/pre-commit", "session", false)),
		rawCall("h2", "terminal", args("command", "echo evil >> .envrc", "session", false)),
	})
	require.NoError(t, err)
	for _, r := range out.Results {
		assert.Equal(t, ClassFailed, r.Class, "%s: %v", r.Message, r.Output)
	}
	assert.NoFileExists(t, filepath.Join(e.ws, ".git/hooks/pre-commit"))
	_, err = os.ReadFile(filepath.Join(e.ws, ".envrc"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "nothing was planted in .envrc")

	// The session sandbox persists state between calls; clearing the
	// session closes it.
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("a", "terminal", args("command", "echo kept > /tmp/x"))})
	require.NoError(t, err)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("b", "terminal", args("command", "cat /tmp/x"))})
	require.NoError(t, err)
	assert.Equal(t, "kept\n", out.Results[0].Output["stdout"], "/tmp persists within the session sandbox")
	// Background commands run in the session sandbox and return at once.
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("bg", "terminal", args("command", "echo bg > bg.txt", "background", true))})
	require.NoError(t, err)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	assert.Contains(t, out.Results[0].Output, "process_id")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(e.ws, "bg.txt"))
		return string(b) == "bg\n"
	}, 20*time.Second, 50*time.Millisecond)
	// The process tool reads a background command's status and output,
	// and stops it.
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("bg3", "terminal", args("command", "echo started; sleep 600", "background", true))})
	require.NoError(t, err)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	pid := out.Results[0].Output["process_id"]
	require.Eventually(t, func() bool {
		out, err := c.Call(t.Context(), s.Session, "", []RawCall{rawCall("st", "process", args("process_id", pid))})
		return err == nil && out.Results[0].Output["stdout"] == "started\n" && out.Results[0].Output["running"] == true
	}, 20*time.Second, 50*time.Millisecond)
	out, err = c.Call(t.Context(), s.Session, "", []RawCall{rawCall("k", "process", args("process_id", pid, "action", "kill"))})
	require.NoError(t, err)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	require.Eventually(t, func() bool {
		out, err := c.Call(t.Context(), s.Session, "", []RawCall{rawCall("st", "process", args("process_id", pid))})
		return err == nil && out.Results[0].Output["running"] == false
	}, 20*time.Second, 50*time.Millisecond)
	out, err = c.Call(t.Context(), s.Session, "", []RawCall{rawCall("nx", "process", args("process_id", 999))})
	require.NoError(t, err)
	assert.Equal(t, ClassFailed, out.Results[0].Class)
	assert.Contains(t, out.Results[0].Message, "no background process 999")
	// Without a session sandbox (session: false) a background command
	// cannot run.
	out, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("bg2", "terminal", args("command", "true", "background", true, "session", false))})
	require.NoError(t, err)
	assert.Equal(t, ClassFailed, out.Results[0].Class)
	assert.False(t, out.Results[0].Ran)
	_, live := d.sessions.Lookup("default", s.Session)
	require.True(t, live, "the session has a live sandbox")
	require.NoError(t, c.ClearSession(t.Context(), s.Session))
	_, live = d.sessions.Lookup("default", s.Session)
	assert.False(t, live, "clearing the session closed its sandbox")
	_, err = c.Call(t.Context(), s.Session, "t1", []RawCall{rawCall("c", "terminal", args("command", "true"))})
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
}

// waitEvent returns the next approval event or fails.
func waitEvent(t *testing.T, ch <-chan approval.Pending) approval.Pending {
	t.Helper()
	select {
	case p, ok := <-ch:
		require.True(t, ok, "event stream closed")
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no approval event")
	}
	return approval.Pending{}
}

func TestServeApprovalAnsweredOverAPI(t *testing.T) {
	e := newDaemonEnv(t, testSandbox(t), "")
	e.start(t)
	require.NoError(t, os.MkdirAll(filepath.Join(e.ws, "build/obj"), 0o755))
	alice, bob := NewClient(e.socket), NewClient(e.socket)
	sa, err := alice.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	sb, err := bob.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	assert.NotEqual(t, alice.ClientToken, bob.ClientToken)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	aliceEvents, err := alice.Events(ctx)
	require.NoError(t, err)
	bobEvents, err := bob.Events(ctx)
	require.NoError(t, err)

	type answer struct {
		out BatchResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := alice.Call(context.Background(), sa.Session, "", []RawCall{rawCall("1", "terminal", args("command", "rm -rf build && echo removed"))})
		done <- answer{out, err}
	}()
	p := waitEvent(t, aliceEvents)
	assert.Equal(t, sa.Session, p.Session)
	assert.Equal(t, "rm -rf build && echo removed", p.Command)
	assert.Contains(t, p.Scopes, approval.ScopeSession)

	// Bob sees nothing of it and cannot answer it.
	select {
	case ev := <-bobEvents:
		t.Fatalf("bob received alice's approval event %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}
	list, err := bob.Approvals(t.Context(), "")
	require.NoError(t, err)
	assert.Empty(t, list)
	_, err = bob.Approvals(t.Context(), sa.Session)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	_, err = bob.Decide(t.Context(), sa.Session, Decision{ID: p.ID, Verdict: "approve"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	_, err = bob.Decide(t.Context(), sb.Session, Decision{ID: p.ID, Verdict: "approve"})
	require.ErrorAs(t, err, &apiErr, "an id of another session is not found in bob's own session")
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	_, statErr := os.Stat(filepath.Join(e.ws, "build"))
	require.NoError(t, statErr, "nothing ran while the call waits")

	list, err = alice.Approvals(t.Context(), "")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, p.ID, list[0].ID)
	n, err := alice.Decide(t.Context(), sa.Session, Decision{Verdict: "approve", Scope: "once"})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	a := <-done
	require.NoError(t, a.err)
	r := a.out.Results[0]
	require.Equal(t, ClassSucceeded, r.Class, r.Message)
	assert.Equal(t, "removed\n", r.Output["stdout"])
	require.NotNil(t, r.Decision)
	assert.Equal(t, fmt.Sprintf("api:%s@uid%d", sa.Client, os.Getuid()), r.Decision.DecidedBy, "who answered: the client and its uid (SO_PEERCRED)")
	_, statErr = os.Stat(filepath.Join(e.ws, "build"))
	assert.ErrorIs(t, statErr, os.ErrNotExist)

	// A denial: nothing runs, the result says blocked.
	require.NoError(t, os.MkdirAll(filepath.Join(e.ws, "build"), 0o755))
	go func() {
		out, err := alice.Call(context.Background(), sa.Session, "", []RawCall{rawCall("2", "terminal", args("command", "rm -rf build"))})
		done <- answer{out, err}
	}()
	p = waitEvent(t, aliceEvents)
	_, err = alice.Decide(t.Context(), sa.Session, Decision{ID: p.ID, Verdict: "deny", Reason: "not now"})
	require.NoError(t, err)
	a = <-done
	require.NoError(t, a.err)
	assert.Equal(t, ClassBlocked, a.out.Results[0].Class)
	assert.False(t, a.out.Results[0].Ran)
	assert.Contains(t, a.out.Results[0].Message, "not now")
	assert.DirExists(t, filepath.Join(e.ws, "build"))
}

func TestServeRestartLosesNothing(t *testing.T) {
	e := newDaemonEnv(t, testSandbox(t), "")
	_, stop := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, err := c.Events(ctx)
	require.NoError(t, err)

	type answer struct {
		out BatchResult
		err error
	}
	done := make(chan answer, 1)
	cmd := "rm -rf cache && echo gone"
	go func() {
		out, err := c.Call(context.Background(), s.Session, "", []RawCall{rawCall("1", "terminal", args("command", cmd))})
		done <- answer{out, err}
	}()
	p := waitEvent(t, events)
	_, err = c.Decide(t.Context(), s.Session, Decision{ID: p.ID, Verdict: "approve", Scope: "always"})
	require.NoError(t, err)
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, ClassSucceeded, a.out.Results[0].Class, a.out.Results[0].Message)
	firstID := a.out.Results[0].Decision.ID

	// A call left waiting at shutdown is denied (nothing runs) and audited.
	go func() {
		out, err := c.Call(context.Background(), s.Session, "", []RawCall{rawCall("2", "terminal", args("command", "rm -rf other"))})
		done <- answer{out, err}
	}()
	waitEvent(t, events)
	require.NoError(t, stop())
	a = <-done
	var waitingID string
	if a.err == nil {
		assert.False(t, a.out.Results[0].Ran, "the waiting call did not run")
		if a.out.Results[0].Decision != nil {
			waitingID = a.out.Results[0].Decision.ID
		}
	}
	_, err = os.Stat(e.socket)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket is removed at shutdown")

	// A new daemon on the same state: the always approval holds, and the
	// audit log has the decisions of both.
	e.start(t)
	c2 := NewClient(e.socket)
	s2, err := c2.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	out, err := c2.Call(t.Context(), s2.Session, "", []RawCall{rawCall("3", "terminal", args("command", cmd))})
	require.NoError(t, err)
	r := out.Results[0]
	require.Equal(t, ClassSucceeded, r.Class, r.Message)
	assert.Equal(t, approval.StageAllowlist, r.Decision.Stage)

	audit, err := os.ReadFile(approval.AuditPath(e.cfg.StateDir))
	require.NoError(t, err)
	assert.Contains(t, string(audit), firstID)
	assert.Contains(t, string(audit), r.Decision.ID)
	if waitingID != "" {
		assert.Contains(t, string(audit), waitingID)
	}
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(string(audit)))
	for sc.Scan() {
		lines++
	}
	assert.GreaterOrEqual(t, lines, 3)
}

func TestServeUnattendedSessionDeniesAndGuards(t *testing.T) {
	e := newDaemonEnv(t, testSandbox(t), "")
	e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{Platform: "cron"})
	require.NoError(t, err)
	out, err := c.Call(t.Context(), s.Session, "", []RawCall{rawCall("1", "terminal", args("command", "rm -rf build"))})
	require.NoError(t, err)
	assert.Equal(t, ClassBlocked, out.Results[0].Class, "cron_mode deny: nobody can approve")

	// The same failing command, turn after turn: warned, then refused,
	// and an unattended turn halts.
	var classes []Class
	for i := 0; i < 6; i++ {
		out, err := c.Call(t.Context(), s.Session, "turn-1", []RawCall{rawCall(fmt.Sprint(i), "terminal", args("command", "false"))})
		require.NoError(t, err)
		classes = append(classes, out.Results[0].Class)
	}
	assert.Equal(t, []Class{ClassFailed, ClassFailed, ClassFailed, ClassRefused, ClassRefused, ClassRefused}, classes)
	// Another turn starts afresh.
	out, err = c.Call(t.Context(), s.Session, "turn-2", []RawCall{rawCall("x", "terminal", args("command", "false"))})
	require.NoError(t, err)
	assert.Equal(t, ClassFailed, out.Results[0].Class)
}

func TestServeReadOnlyViews(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.start(t)
	ctx := t.Context()
	c := NewClient(e.socket)

	var jobs map[string]any
	require.NoError(t, c.do(ctx, http.MethodGet, "/v1/mandates", nil, &jobs))
	assert.Equal(t, []any{}, jobs["jobs"])

	// A job observed through the daemon's store shows up.
	s, err := c.CreateSession(ctx, SessionRequest{Job: "triage", Platform: "cron"})
	require.NoError(t, err)
	out, err := c.Call(ctx, s.Session, "", []RawCall{rawCall("1", "write_file", args("path", "a.txt", "content", "x"))})
	require.NoError(t, err)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	require.NoError(t, c.do(ctx, http.MethodGet, "/v1/mandates", nil, &jobs))
	require.Len(t, jobs["jobs"], 1)
	assert.Equal(t, "triage", jobs["jobs"].([]any)[0].(map[string]any)["name"])
	assert.Equal(t, "block", jobs["jobs"].([]any)[0].(map[string]any)["interactive_violation_enforced"], "the enforced value, with its source")
	assert.Contains(t, jobs["jobs"].([]any)[0].(map[string]any)["interactive_violation_source"], "the job has no setting")

	var drift map[string]any
	require.NoError(t, c.do(ctx, http.MethodGet, "/v1/mandates/triage/drift", nil, &drift))
	assert.Equal(t, []any{}, drift["drift"])
	var apiErr *APIError
	err = c.do(ctx, http.MethodGet, "/v1/mandates/triage", nil, &drift)
	require.ErrorAs(t, err, &apiErr, "no approved mandate yet")
	assert.Equal(t, http.StatusNotFound, apiErr.Status)

	// No pending request: oldest is 404; the list is empty.
	err = c.do(ctx, http.MethodGet, "/v1/sessions/"+s.Session+"/approvals/oldest", nil, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	list, err := c.Approvals(ctx, s.Session)
	require.NoError(t, err)
	assert.Empty(t, list)

	var sessions map[string][]map[string]any
	require.NoError(t, c.do(ctx, http.MethodGet, "/v1/sessions", nil, &sessions))
	require.Len(t, sessions["sessions"], 1)
	assert.Equal(t, s.Session, sessions["sessions"][0]["id"])
	assert.Equal(t, "cron", sessions["sessions"][0]["platform"])

	// Bad input changes nothing.
	err = c.do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"profile": "ghost"}, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	err = c.do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"platform": "cli"}, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	// A cwd the calls would not use is an error, not ignored: one that
	// does not exist, and one other than the workspace the profile fixes.
	for _, cwd := range []string{filepath.Join(e.ws, "missing"), t.TempDir()} {
		err = c.do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"platform": "cron", "cwd": cwd}, nil)
		require.ErrorAs(t, err, &apiErr, "cwd %s", cwd)
		assert.Equal(t, http.StatusBadRequest, apiErr.Status, "cwd %s", cwd)
	}
	c2 := NewClient(e.socket)
	own, err := c2.CreateSession(ctx, SessionRequest{Platform: "cron", Cwd: e.ws})
	require.NoError(t, err, "the profile's own workspace")
	require.NoError(t, c2.ClearSession(ctx, own.Session))
	err = c.do(ctx, http.MethodPost, "/v1/sessions/"+s.Session+"/calls", map[string]any{"calls": []any{}, "extra": 1}, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	_, err = c.Decide(ctx, s.Session, Decision{Verdict: "maybe"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, h["sessions"])
}
