package approval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGatewayReconnectSeesOnlyOwnOldest(t *testing.T) {
	e, _ := newEngine(t, testConfig(t, twoProfilesYAML), Options{})
	g := e.Gateway()
	type res struct {
		cmd string
		err error
	}
	results := make(chan res, 10)
	decide := func(profile, session, cmd string) {
		go func() {
			_, err := e.Decide(t.Context(), Request{Command: cmd, Profile: profile, Session: session, Platform: PlatformGateway})
			results <- res{cmd, err}
		}()
	}
	// Queue in a known order: wait for each before the next.
	decide("default", "A", "rm -rf ./a1")
	waitPending(t, g, "default", "A", 1)
	decide("default", "B", "rm -rf ./b1")
	waitPending(t, g, "default", "B", 1)
	decide("default", "A", "rm -rf ./a2")
	waitPending(t, g, "default", "A", 2)
	decide("other", "A", "rm -rf ./o1")
	waitPending(t, g, "other", "A", 1)

	p, ok := g.Oldest("default", "A")
	require.True(t, ok)
	assert.Equal(t, "rm -rf ./a1", p.Command)
	p, ok = g.Oldest("default", "B")
	require.True(t, ok)
	assert.Equal(t, "rm -rf ./b1", p.Command)
	p, ok = g.Oldest("other", "A")
	require.True(t, ok)
	assert.Equal(t, "rm -rf ./o1", p.Command, "same session name, other profile: its own request")
	_, ok = g.Oldest("default", "C")
	assert.False(t, ok)
	assert.Len(t, g.List("", ""), 4)
	assert.Len(t, g.List("default", ""), 3)

	// Answering by id from another session does nothing.
	bID := g.List("default", "B")[0].ID
	err := g.Answer("default", "A", bID, Answer{Verdict: VerdictApprove})
	require.ErrorIs(t, err, ErrNoPending)
	err = g.Answer("other", "B", "", Answer{Verdict: VerdictApprove})
	require.ErrorIs(t, err, ErrNoPending)
	assert.Len(t, g.List("default", "B"), 1)

	// Answer the oldest of A: a1 runs, a2 still waits.
	require.NoError(t, g.Answer("default", "A", "", Answer{Verdict: VerdictApprove, By: "gateway:alice"}))
	r := <-results
	assert.Equal(t, "rm -rf ./a1", r.cmd)
	require.NoError(t, r.err)
	p, _ = g.Oldest("default", "A")
	assert.Equal(t, "rm -rf ./a2", p.Command)

	// By id, then all.
	require.NoError(t, g.Answer("default", "B", bID, Answer{Verdict: VerdictDeny, By: "gateway:bob"}))
	r = <-results
	assert.Equal(t, "rm -rf ./b1", r.cmd)
	assert.ErrorIs(t, r.err, ErrDenied)
	n, err := g.AnswerAll("default", "A", Answer{Verdict: VerdictDeny})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	r = <-results
	assert.ErrorIs(t, r.err, ErrDenied)
	n, err = g.AnswerAll("other", "A", Answer{Verdict: VerdictApprove})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	r = <-results
	assert.NoError(t, r.err)
	assert.Empty(t, g.List("", ""))
}

// TestGatewayPendingSaysWhatEachScopeCovers: the API's pending request
// states what each answer lets run.
func TestGatewayPendingSaysWhatEachScopeCovers(t *testing.T) {
	g := NewGateway(GatewayOptions{})
	e, _ := newEngine(t, testConfig(t, twoProfilesYAML), Options{Gateway: g})
	done := make(chan error, 1)
	go func() {
		_, err := e.Decide(t.Context(), Request{Command: "git push --force origin main", Session: "S", Platform: PlatformGateway})
		done <- err
	}()
	var ps []Pending
	require.Eventually(t, func() bool { ps = g.List("default", "S"); return len(ps) == 1 }, 5*time.Second, time.Millisecond)
	data, err := json.Marshal(ps[0])
	require.NoError(t, err)
	var doc struct {
		Covers map[string]string `json:"covers"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Contains(t, doc.Covers["once"], "this call only")
	assert.Contains(t, doc.Covers["session"], "git push --force origin main")
	assert.Contains(t, doc.Covers["session"], "until session S is cleared")
	assert.Contains(t, doc.Covers["always"], "permanent allowlist")
	require.NoError(t, g.Answer("default", "S", "", Answer{Verdict: VerdictApprove, Scope: ScopeSession, By: "gateway:x"}))
	require.NoError(t, <-done)
	go func() {
		_, err := e.Decide(t.Context(), Request{Command: "git push --force origin dev", Session: "S", Platform: PlatformGateway})
		done <- err
	}()
	require.Eventually(t, func() bool { ps = g.List("default", "S"); return len(ps) == 1 }, 5*time.Second, time.Millisecond,
		"another push, same rule, is asked again")
	assert.Equal(t, "git push --force origin dev", ps[0].Command)
	g.AnswerAll("default", "S", Answer{Verdict: VerdictDeny})
	assert.ErrorIs(t, <-done, ErrDenied)
}

func TestGatewayCoalescesIdenticalRequests(t *testing.T) {
	var notified atomic.Int32
	g := NewGateway(GatewayOptions{Notify: func(context.Context, Pending) error { notified.Add(1); return nil }})
	e, audit := newEngine(t, testConfig(t, twoProfilesYAML), Options{Gateway: g})
	const n = 5
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := e.Decide(t.Context(), Request{Command: "git push --force", Session: "S", Platform: PlatformGateway})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := e.Decide(t.Context(), Request{Command: "git push --force", Session: "T", Platform: PlatformGateway})
			errs <- err
		}()
	}
	for _, session := range []string{"S", "T"} {
		for {
			ps := g.List("default", session)
			if len(ps) == 1 && ps[0].Waiters == n {
				break
			}
			require.LessOrEqual(t, len(ps), 1, "identical requests of one session share one entry")
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, g.Answer("default", "S", "", Answer{Verdict: VerdictApprove, By: "gateway:x"}))
	for range n {
		assert.NoError(t, <-errs)
	}
	require.Len(t, g.List("default", "T"), 1, "another session is not answered by S's answer")
	assert.Equal(t, n, g.List("default", "T")[0].Waiters)
	_, _ = g.AnswerAll("default", "T", Answer{Verdict: VerdictDeny})
	for range n {
		assert.ErrorIs(t, <-errs, ErrDenied)
	}
	wg.Wait()
	recs := audit.all()
	asked := 0
	for _, r := range recs {
		if r.Event == EventAsked {
			asked++
		}
	}
	assert.Equal(t, 2*n, asked, "every waiter's request is recorded as asked")
	assert.Len(t, recs, 4*n, "every waiter gets its own decision record")
	assert.Eventually(t, func() bool { return notified.Load() == 2 }, 5*time.Second, time.Millisecond,
		"one notification per pending entry, not per waiter")
}

func TestWebhookNotify(t *testing.T) {
	got := make(chan map[string]any, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		assert.Equal(t, "Bearer hook-token", r.Header.Get("Authorization"))
		var body map[string]any
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		got <- body
	}))
	defer srv.Close()
	hook := &Webhook{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer hook-token"}}}
	g := NewGateway(GatewayOptions{Notify: hook.Notify})
	e, _ := newEngine(t, testConfig(t, twoProfilesYAML), Options{Gateway: g})
	done := make(chan error, 1)
	go func() {
		_, err := e.Decide(t.Context(), Request{Command: "kill -9 77", Session: "chat-1", Platform: PlatformGateway})
		done <- err
	}()
	body := <-got
	assert.Equal(t, "approval.pending", body["event"])
	req := body["request"].(map[string]any)
	assert.Equal(t, "kill -9 77", req["command"])
	assert.Equal(t, "chat-1", req["session"])
	require.NoError(t, g.Answer("default", "chat-1", req["id"].(string), Answer{Verdict: VerdictApprove}))
	require.NoError(t, <-done)
}

func TestWebhookErrors(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := (&Webhook{URL: slow.URL}).Notify(ctx, Pending{ID: "x"})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the notify timeout bounds a hanging webhook")

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer bad.Close()
	err = (&Webhook{URL: bad.URL}).Notify(t.Context(), Pending{ID: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "502")
}

func TestGatewayWaiterLeavingKeepsOthers(t *testing.T) {
	g := NewGateway(GatewayOptions{})
	q := Question{ID: "1", Profile: "p", Session: "s", Command: "x", Scopes: []Scope{ScopeOnce}}
	ctx1, cancel1 := context.WithCancel(t.Context())
	done1 := make(chan error, 1)
	done2 := make(chan Answer, 1)
	go func() { _, err := g.Ask(ctx1, q); done1 <- err }()
	waitPending(t, g, "p", "s", 1)
	go func() { a, _ := g.Ask(t.Context(), q); done2 <- a }()
	for g.List("p", "s")[0].Waiters != 2 {
		time.Sleep(time.Millisecond)
	}
	cancel1()
	assert.ErrorIs(t, <-done1, context.Canceled)
	require.Len(t, g.List("p", "s"), 1, "the entry stays while someone waits")
	require.NoError(t, g.Answer("p", "s", "", Answer{Verdict: VerdictApprove}))
	assert.Equal(t, VerdictApprove, (<-done2).Verdict)
}

// Every way a request leaves the queue is reported once: answered (with
// who answered), expired at its deadline, cancelled when its caller goes
// or its session is cleared.
func TestGatewayReportsResolutions(t *testing.T) {
	var mu sync.Mutex
	var got []Resolution
	g := NewGateway(GatewayOptions{Resolved: func(r Resolution) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}})
	ask := func(ctx context.Context, id, cmd string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := g.Ask(ctx, Question{ID: id, Profile: "p", Session: "s", Command: cmd})
			done <- err
		}()
		return done
	}
	waitN := func(n int) {
		require.Eventually(t, func() bool { return len(g.List("p", "s")) == n }, 5*time.Second, time.Millisecond)
	}

	d1 := ask(t.Context(), "r1", "rm -rf a")
	waitN(1)
	require.NoError(t, g.Answer("p", "s", "r1", Answer{Verdict: VerdictApprove, By: "api:c-1", Reason: "fine"}))
	require.NoError(t, <-d1)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	d2 := ask(ctx, "r2", "rm -rf b")
	require.ErrorIs(t, <-d2, context.DeadlineExceeded)

	ctx3, cancel3 := context.WithCancel(t.Context())
	d3 := ask(ctx3, "r3", "rm -rf c")
	waitN(1)
	cancel3()
	require.ErrorIs(t, <-d3, context.Canceled)

	d4 := ask(t.Context(), "r4", "rm -rf d")
	waitN(1)
	assert.Equal(t, 1, g.Clear("p", "s", "session cleared"))
	require.NoError(t, <-d4)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4)
	assert.Equal(t, Resolution{ID: "r1", Profile: "p", Session: "s", Outcome: OutcomeAnswered, Verdict: VerdictApprove, By: "api:c-1", Reason: "fine", Time: got[0].Time}, got[0])
	assert.Equal(t, OutcomeExpired, got[1].Outcome)
	assert.Equal(t, "r2", got[1].ID)
	assert.Equal(t, OutcomeCancelled, got[2].Outcome)
	assert.Equal(t, "r3", got[2].ID)
	assert.Equal(t, OutcomeCancelled, got[3].Outcome)
	assert.Equal(t, "r4", got[3].ID)
	assert.Empty(t, got[3].By, "nobody answered a cleared request")
}
