package runner

import (
	"context"
	"encoding/json"
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
