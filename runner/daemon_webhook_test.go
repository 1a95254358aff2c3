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

// TestServeWebhookNotify: a request queued for the gateway is POSTed to the
// profile's approvals.webhook with its token secret, and answering it over
// the API still works (the webhook only notifies).
func TestServeWebhookNotify(t *testing.T) {
	t.Parallel()
	type hit struct {
		auth string
		body struct {
			Event   string           `json:"event"`
			Request approval.Pending `json:"request"`
		}
	}
	hits := make(chan hit, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h hit
		h.auth = r.Header.Get("Authorization")
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&h.body))
		hits <- h
	}))
	defer hook.Close()

	e := newDaemonEnv(t, sandbox.Runner{}, "      webhook:\n        url: "+hook.URL+"\n        token_secret: HOOK_TOKEN\n"+
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
	var h hit
	select {
	case h = <-hits:
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was not called")
	}
	assert.Equal(t, "Bearer s3cret-hook-token", h.auth)
	assert.Equal(t, "approval.pending", h.body.Event)
	assert.Equal(t, s.Session, h.body.Request.Session)
	assert.Equal(t, "rm -rf build", h.body.Request.Command)

	_, err = c.Decide(t.Context(), s.Session, Decision{ID: h.body.Request.ID, Verdict: "deny"})
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
	type body struct {
		Event   string                  `json:"event"`
		Request approval.Pending        `json:"request"`
		Answer  *approval.WebhookAnswer `json:"answer"`
	}
	hits := make(chan body, 4)
	raw := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		raw <- string(data)
		var b body
		assert.NoError(t, json.Unmarshal(data, &b))
		hits <- b
	}))
	defer hook.Close()
	e := newDaemonEnv(t, sandbox.Runner{}, "      webhook:\n        url: "+hook.URL+"\n")
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
	got := map[string]body{}
	for range 2 {
		select {
		case b := <-hits:
			got[b.Request.Command] = b
			text := <-raw
			assert.NotContains(t, text, s.ClientToken, "the client's token is never in the webhook body")
		case <-time.After(30 * time.Second):
			t.Fatal("the webhook was not called")
		}
	}
	a, b := got["rm -rf build"], got["rm -rf dist"]
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
