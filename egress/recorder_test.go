package egress

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/mandate"
)

// TestRecorderFeedsMandate: through a real proxy and a real store,
// observed hosts compile into the mandate with evidence counts, and the
// enforced mandate then refuses a new host and records drift.
func TestRecorderFeedsMandate(t *testing.T) {
	ctx := t.Context()
	store, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	defer store.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer web.Close()

	rec := &Recorder{Store: store}
	observed := make(chan Event, 16)
	p := New(Options{
		Observe: func(ev Event) {
			rec.Observe(ev)
			observed <- ev
		},
		OnDecision: rec.OnDecision,
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	defer func() {
		p.Close()
		assert.NoError(t, <-served)
	}()
	pu, _ := url.Parse("http://" + l.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
	get := func(t *testing.T, u string) (int, string) {
		t.Helper()
		res, err := client.Get(u)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	pol, err := NewPolicy([]string{"127.0.0.0/8"}, nil)
	require.NoError(t, err)
	run := mandate.Run{Job: "j", ID: "r1", Mode: mandate.RunCron}

	// Observe mode: no enforced mandate.
	hosts, err := MandateHostsOf(ctx, store, "j")
	require.NoError(t, err)
	require.Nil(t, hosts)
	p.SetPolicy(pol)
	rec.Attribute("c1", Target{Run: run})
	p.Begin(Attribution{Run: "r1", Command: "c1"})
	for range 2 {
		code, body := get(t, web.URL)
		require.Equal(t, http.StatusOK, code, body)
		<-observed
	}
	// A command of no job is not recorded.
	p.Begin(Attribution{Run: "r1", Command: "unattributed"})
	code, _ := get(t, web.URL)
	require.Equal(t, http.StatusOK, code)
	<-observed

	v, err := store.Compile(ctx, "j")
	require.NoError(t, err)
	assert.Contains(t, v.Text, "hosts:\n  - \"127.0.0.1\"  # seen 2x\n")
	_, err = store.Approve(ctx, "j", 0, "alice")
	require.NoError(t, err)

	// Enforce mode: the mandate narrows the profile's allow list.
	hosts, err = MandateHostsOf(ctx, store, "j")
	require.NoError(t, err)
	require.NotNil(t, hosts)
	assert.Equal(t, []string{"127.0.0.1"}, hosts.Rules)
	pol.Mandate = hosts
	p.SetPolicy(pol)
	rec.Attribute("c2", Target{Run: run, Enforced: true})
	p.Begin(Attribution{Run: "r1", Command: "c2"})
	code, body := get(t, web.URL)
	assert.Equal(t, http.StatusOK, code, body)
	<-observed
	code, body = get(t, "http://127.0.0.2:9/")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "host 127.0.0.2 not in the hosts of mandate j v1")
	<-observed

	drift, err := store.Drift(ctx, "j")
	require.NoError(t, err)
	require.Len(t, drift, 1, "one refusal, one drift record; the allowed host is none")
	assert.Equal(t, []string{mandate.FamilyHosts}, drift[0].Families)
	assert.Equal(t, "terminal (contacted 127.0.0.2)", drift[0].Call)
	assert.Equal(t, "r1", drift[0].Run)
}

// TestRecorderLogsEveryConnection: every attempt through the proxy, allowed
// or refused, of a job's command or of none, lands in the store's
// connection log with host, port, method, bytes, verdict, rule, run and
// command.
func TestRecorderLogsEveryConnection(t *testing.T) {
	ctx := t.Context()
	store, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	defer store.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer web.Close()

	rec := &Recorder{Store: store}
	done := make(chan struct{}, 8)
	p := New(Options{Observe: func(ev Event) { rec.Observe(ev); done <- struct{}{} }, OnDecision: rec.OnDecision})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	defer func() {
		p.Close()
		assert.NoError(t, <-served)
	}()
	pol, err := NewPolicy([]string{"127.0.0.1"}, nil)
	require.NoError(t, err)
	p.SetPolicy(pol)
	pu, _ := url.Parse("http://" + l.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
	get := func(u string) {
		res, err := client.Get(u)
		require.NoError(t, err)
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
		<-done
	}

	rec.Attribute("c1", Target{Run: mandate.Run{Job: "j", ID: "r1", Mode: mandate.RunCron}})
	p.Begin(Attribution{Run: "r1", Command: "c1"})
	get(web.URL)
	get("http://127.0.0.2:9/") // not in the allow list
	p.Begin(Attribution{Run: "free", Command: "c2"})
	get(web.URL)

	jobConns, err := store.Connections(ctx, "j", 10)
	require.NoError(t, err)
	require.Len(t, jobConns, 2)
	refused, allowed := jobConns[0], jobConns[1] // newest first
	_, port, _ := net.SplitHostPort(web.Listener.Addr().String())
	assert.Equal(t, "127.0.0.1", allowed.Host)
	assert.Equal(t, port, strconv.Itoa(allowed.Port))
	assert.Equal(t, "GET", allowed.Method)
	assert.True(t, allowed.Allowed)
	assert.Equal(t, "127.0.0.1", allowed.Rule)
	assert.Equal(t, "r1", allowed.Run)
	assert.Equal(t, "c1", allowed.Command)
	assert.Positive(t, allowed.BytesDown, "bytes from the destination are counted")
	assert.Equal(t, "127.0.0.2", refused.Host)
	assert.False(t, refused.Allowed)
	assert.Contains(t, refused.Reason, "127.0.0.2")
	assert.Zero(t, refused.BytesDown)

	free, err := store.Connections(ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, free, 1, "a command of no job is logged too")
	assert.Equal(t, "free", free[0].Run)
	assert.Equal(t, "c2", free[0].Command)
}
