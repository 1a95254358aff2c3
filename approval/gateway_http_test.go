package approval

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGatewayHTTP(t *testing.T) {
	e, _ := newEngine(t, testConfig(t, twoProfilesYAML), Options{})
	srv := httptest.NewServer(GatewayHandler(e.Gateway(), "default"))
	defer srv.Close()
	results := make(chan Decision, 4)
	decide := func(session, cmd string) {
		go func() {
			d, _ := e.Decide(t.Context(), Request{Command: cmd, Session: session, Platform: PlatformGateway})
			results <- d
		}()
	}
	decide("A", "rm -rf ./a1")
	waitPending(t, e.Gateway(), "default", "A", 1)
	decide("A", "rm -rf ./a2")
	waitPending(t, e.Gateway(), "default", "A", 2)
	decide("B", "rm -rf ./b1")
	waitPending(t, e.Gateway(), "default", "B", 1)

	get := func(path string, v any) int {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
		return resp.StatusCode
	}
	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(srv.URL+"/v1/approvals/decide", "application/json", bytes.NewBufferString(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}

	var list struct{ Pending []Pending }
	assert.Equal(t, 200, get("/v1/approvals", &list))
	assert.Len(t, list.Pending, 3)
	assert.Equal(t, 200, get("/v1/approvals?session=A", &list))
	require.Len(t, list.Pending, 2)
	var p Pending
	assert.Equal(t, 200, get("/v1/approvals/oldest?session=B", &p))
	assert.Equal(t, "rm -rf ./b1", p.Command)
	var e404 map[string]any
	assert.Equal(t, 404, get("/v1/approvals/oldest?session=C", &e404))

	// Another session's id: not found, nothing answered.
	status, _ := post(`{"session":"A","id":"` + p.ID + `","verdict":"approve"}`)
	assert.Equal(t, 404, status)
	for _, bad := range []string{`{"verdict":"approve"}`, `{"session":"A","verdict":"maybe"}`, `{"session":"A","verdict":"deny","scope":"always"}`,
		`{"session":"A","verdict":"approve","scope":"forever"}`, `{"session":"A","verdict":"approve","all":true,"id":"x"}`, `{"session":"A","verdict":"approve","extra":1}`} {
		status, out := post(bad)
		assert.Equal(t, 400, status, bad)
		assert.NotEmpty(t, out["error"], bad)
	}
	assert.Len(t, e.Gateway().List("", ""), 3, "bad requests answer nothing")

	status, out := post(`{"session":"A","verdict":"approve","by":"alice"}`)
	assert.Equal(t, 200, status)
	assert.EqualValues(t, 1, out["answered"])
	d := <-results
	assert.True(t, d.Allowed)
	assert.Equal(t, "rm -rf ./a1", d.Command, "the oldest was answered")
	assert.Equal(t, "gateway:alice", d.DecidedBy)

	status, out = post(`{"session":"B","all":true,"verdict":"deny"}`)
	assert.Equal(t, 200, status)
	assert.EqualValues(t, 1, out["answered"])
	assert.False(t, (<-results).Allowed)
	status, _ = post(`{"session":"B","all":true,"verdict":"deny"}`)
	assert.Equal(t, 404, status)
	status, _ = post(`{"session":"A","verdict":"approve","scope":"session"}`)
	assert.Equal(t, 200, status)
	d = <-results
	assert.Equal(t, ScopeSession, d.Scope)
}
