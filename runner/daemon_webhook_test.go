package runner

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

// webhookHit is one POST the profile's approvals.webhook received.
type webhookHit struct {
	Auth string // the Authorization header
	Raw  string // the body as sent
	Body struct {
		Event   string                  `json:"event"`
		Request approval.Pending        `json:"request"`
		Answer  *approval.WebhookAnswer `json:"answer"`
	}
}

// webhookRecorder starts a webhook that records every POST, stopped at
// cleanup. next returns the next POST, failing the test when none comes
// within 30 s.
func webhookRecorder(t *testing.T) (url string, next func() webhookHit) {
	t.Helper()
	hits := make(chan webhookHit, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h webhookHit
		h.Auth = r.Header.Get("Authorization")
		data, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		h.Raw = string(data)
		assert.NoError(t, json.Unmarshal(data, &h.Body))
		hits <- h
	}))
	t.Cleanup(hook.Close)
	return hook.URL, func() webhookHit {
		t.Helper()
		select {
		case h := <-hits:
			return h
		case <-time.After(30 * time.Second):
			t.Fatal("the webhook was not called")
			return webhookHit{}
		}
	}
}

// TestServeWebhookNotify: a request queued for the gateway is POSTed to the
// profile's approvals.webhook with its token secret, and answering it over
// the API still works (the webhook only notifies).
func TestServeWebhookNotify(t *testing.T) {
	t.Parallel()
	hookURL, nextHit := webhookRecorder(t)
	e := newDaemonEnv(t, sandbox.Runner{}, "      webhook:\n        url: "+hookURL+"\n        token_secret: HOOK_TOKEN\n"+
		"    secrets:\n      values:\n        HOOK_TOKEN: s3cret-hook-token\n")
	e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)

	done := make(chan BatchResult, 1)
	go func() {
		out, _ := c.Call(context.Background(), s.Session, "", []RawCall{rawCall("1", "terminal", args("command", "rm -rf build"))})
		done <- out
	}()
	h := nextHit()
	assert.Equal(t, "Bearer s3cret-hook-token", h.Auth)
	assert.Equal(t, "approval.pending", h.Body.Event)
	assert.Equal(t, s.Session, h.Body.Request.Session)
	assert.Equal(t, "rm -rf build", h.Body.Request.Command)

	_, err = c.Decide(t.Context(), s.Session, Decision{ID: h.Body.Request.ID, Verdict: "deny"})
	require.NoError(t, err)
	out := <-done
	require.Len(t, out.Results, 1)
	assert.False(t, out.Results[0].Ran, "denied: nothing ran")
}

// TestWebhookAnswerToken: the webhook body carries a per-request answer
// token, never the client's own token; the token answers exactly its
// request, once, without the client token; a used, unknown or client
// token answers nothing; and a resolved request's token is forgotten.
func TestWebhookAnswerToken(t *testing.T) {
	t.Parallel()
	hookURL, nextHit := webhookRecorder(t)
	e := newDaemonEnv(t, sandbox.Runner{}, "      webhook:\n        url: "+hookURL+"\n")
	d, _ := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)

	results := make(chan BatchResult, 2)
	for _, cmd := range []string{"rm -rf build", "rm -rf dist"} {
		go func() {
			out, _ := c.Call(context.Background(), s.Session, "", []RawCall{rawCall("1", "terminal", args("command", cmd))})
			results <- out
		}()
	}
	got := map[string]webhookHit{}
	for range 2 {
		h := nextHit()
		got[h.Body.Request.Command] = h
		assert.NotContains(t, h.Raw, s.ClientToken, "the client's token is never in the webhook body")
	}
	a, b := got["rm -rf build"].Body, got["rm -rf dist"].Body
	require.NotNil(t, a.Answer)
	require.NotNil(t, b.Answer)
	assert.NotEqual(t, a.Answer.Token, b.Answer.Token)
	assert.Equal(t, "/v1/approvals/answer", a.Answer.Path)

	bridge := NewClient(e.socket) // no client token: a bridge has only the answer token
	post := func(tok, verdict string) error {
		var out map[string]any
		return bridge.do(t.Context(), http.MethodPost, "/v1/approvals/answer", map[string]any{"token": tok, "verdict": verdict, "reason": "via bridge"}, &out)
	}
	assert.ErrorContains(t, post(s.ClientToken, "approve"), "answer token", "the client token is not an answer token")
	assert.ErrorContains(t, post("tat_0000", "approve"), "unknown answer token")
	require.NoError(t, post(b.Answer.Token, "deny"))
	assert.ErrorContains(t, post(b.Answer.Token, "approve"), "unknown answer token", "once")

	// Only b was answered: a is still pending; a person answers it, and
	// its token is then forgotten.
	pend := d.Engine().Gateway().List("", s.Session)
	require.Len(t, pend, 1)
	assert.Equal(t, a.Request.ID, pend[0].ID)
	_, err = c.Decide(t.Context(), s.Session, Decision{ID: a.Request.ID, Verdict: "deny"})
	require.NoError(t, err)
	for range 2 {
		out := <-results
		require.Len(t, out.Results, 1)
		assert.False(t, out.Results[0].Ran)
	}
	assert.ErrorContains(t, post(a.Answer.Token, "approve"), "unknown answer token", "a resolved request's token is gone")
}

// TestBatchApprovalsAskedTogether: the approval requests of one batch's
// terminal calls are all pending at once (before any is answered), and
// each call still gets its own answer, in call order.
func TestBatchApprovalsAskedTogether(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	d, _ := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	done := make(chan BatchResult, 1)
	go func() {
		out, _ := c.Call(context.Background(), s.Session, "", []RawCall{
			rawCall("1", "terminal", args("command", "rm -rf build")),
			rawCall("2", "read_file", args("path", "nothing")),
			rawCall("3", "terminal", args("command", "rm -rf dist")),
		})
		done <- out
	}()
	deadline := time.Now().Add(30 * time.Second)
	var pend []approval.Pending
	for time.Now().Before(deadline) {
		if pend = d.Engine().Gateway().List("", s.Session); len(pend) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Len(t, pend, 2, "both requests are pending together")
	cmds := []string{pend[0].Command, pend[1].Command}
	assert.ElementsMatch(t, []string{"rm -rf build", "rm -rf dist"}, cmds)
	for _, p := range pend {
		_, err := c.Decide(t.Context(), s.Session, Decision{ID: p.ID, Verdict: "deny", Reason: "no " + p.Command})
		require.NoError(t, err)
	}
	out := <-done
	require.Len(t, out.Results, 3)
	assert.Equal(t, "1", out.Results[0].CallID)
	assert.Contains(t, out.Results[0].Message, "no rm -rf build", "each call has its own answer")
	assert.Contains(t, out.Results[2].Message, "no rm -rf dist")
	assert.False(t, out.Results[0].Ran)
	assert.False(t, out.Results[2].Ran)
}

// TestAnswerScopeNotOffered: both answer endpoints (a client on its
// session, a bridge with an answer token) refuse an approval whose scope
// the request does not offer, or a verdict that is not one, with 400 — and
// the refused answer consumes nothing: the request stays pending and its
// token still answers it.
func TestAnswerScopeNotOffered(t *testing.T) {
	t.Parallel()
	hookURL, nextHit := webhookRecorder(t)
	// An ask glob escalates: the request offers "once" only.
	e := newDaemonEnv(t, sandbox.Runner{}, "      ask: [\"rm *\"]\n      webhook:\n        url: "+hookURL+"\n")
	d, _ := e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	result := make(chan BatchResult, 1)
	go func() {
		out, _ := c.Call(context.Background(), s.Session, "", []RawCall{rawCall("1", "terminal", args("command", "rm -rf build"))})
		result <- out
	}()
	hit := nextHit().Body
	require.NotNil(t, hit.Answer)
	require.Equal(t, []approval.Scope{approval.ScopeOnce}, hit.Request.Scopes)

	bridge := NewClient(e.socket)
	post := func(verdict, scope string) error {
		return bridge.do(t.Context(), http.MethodPost, "/v1/approvals/answer", map[string]any{"token": hit.Answer.Token, "verdict": verdict, "scope": scope}, nil)
	}
	status := func(err error) int {
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		return apiErr.Status
	}
	for _, tc := range []struct {
		name string
		err  func() error
		msg  string
	}{
		{"token, always", func() error { return post("approve", "always") }, `scope "always" is not offered`},
		{"token, session", func() error { return post("approve", "session") }, `scope "session" is not offered`},
		{"token, bad verdict", func() error { return post("escalate", "") }, `verdict must be "approve" or "deny"`},
		{"token, bad scope", func() error { return post("approve", "forever") }, "forever"},
		{"client by id, always", func() error {
			_, err := c.Decide(t.Context(), s.Session, Decision{ID: hit.Request.ID, Verdict: "approve", Scope: "always"})
			return err
		}, `scope "always" is not offered`},
		{"client oldest, session", func() error {
			_, err := c.Decide(t.Context(), s.Session, Decision{Verdict: "approve", Scope: "session"})
			return err
		}, `scope "session" is not offered`},
	} {
		err := tc.err()
		require.Error(t, err, tc.name)
		assert.Equal(t, http.StatusBadRequest, status(err), tc.name)
		assert.ErrorContains(t, err, tc.msg, tc.name)
		pend := d.Engine().Gateway().List("", s.Session)
		require.Len(t, pend, 1, "%s: a refused answer consumes nothing", tc.name)
		assert.Equal(t, hit.Request.ID, pend[0].ID)
	}
	// The token was not used up by the refused answers.
	require.NoError(t, post("deny", ""))
	out := <-result
	require.Len(t, out.Results, 1)
	assert.False(t, out.Results[0].Ran)
	assert.Equal(t, ClassBlocked, out.Results[0].Class)
	assert.Equal(t, http.StatusNotFound, status(post("deny", "")), "once")
}
