package approval

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedAudit holds decision records (not the "asked" ones) until release
// is closed, and can fail them.
type gatedAudit struct {
	memAudit
	entered chan struct{} // receives when a decision record is being appended; may be nil
	release chan struct{}
	failMu  sync.Mutex
	fail    error
}

func (g *gatedAudit) Append(ctx context.Context, d Decision) error {
	if d.Event == "" {
		if g.entered != nil {
			g.entered <- struct{}{}
		}
		<-g.release
		g.failMu.Lock()
		err := g.fail
		g.failMu.Unlock()
		if err != nil {
			return err
		}
	}
	return g.memAudit.Append(ctx, d)
}

// TestGatewayAnswerReturnsAfterStored: the answer to a gateway request is
// acknowledged only once the decision's audit record and the "always"
// entry are on disk; until the record is stored, Answer does not return.
func TestGatewayAnswerReturnsAfterStored(t *testing.T) {
	cfg := testConfig(t, "  default: {approvals: {timeout: 30s}}\n")
	audit := &gatedAudit{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e, _ := newEngine(t, cfg, Options{Audit: audit})
	g := e.Gateway()
	done := make(chan error, 1)
	go func() {
		_, err := e.Decide(context.Background(), Request{Command: "git push --force origin main", Session: "S", Platform: PlatformGateway})
		done <- err
	}()
	waitPending(t, g, "default", "S", 1)

	answered := make(chan error, 1)
	go func() {
		answered <- g.Answer("default", "S", "", Answer{Verdict: VerdictApprove, Scope: ScopeAlways, By: "gateway:x"})
	}()
	<-audit.entered // the decision record is being written, and held
	select {
	case err := <-answered:
		t.Fatalf("Answer returned (%v) before the decision was stored", err)
	case <-time.After(50 * time.Millisecond): // a wrong Answer has had time to return
	}
	entries, err := e.Allowlist().Load("default")
	require.NoError(t, err)
	require.Len(t, entries, 1, "the always entry is written before the record (and before the acknowledgement)")
	close(audit.release)
	require.NoError(t, <-answered)
	require.NoError(t, <-done)
	var decided []Decision
	for _, r := range audit.all() {
		if r.Event == "" {
			decided = append(decided, r)
		}
	}
	require.Len(t, decided, 1, "when Answer returns, the decision record is stored")
	assert.Equal(t, ApprovalAnswered, decided[0].Approval)
	assert.Equal(t, ScopeAlways, decided[0].Scope)
}

// TestGatewayAnswerNotStored: when the decision record cannot be stored,
// the person answering is told so (ErrNotStored), and the call is refused.
func TestGatewayAnswerNotStored(t *testing.T) {
	cfg := testConfig(t, "  default: {approvals: {timeout: 30s}}\n")
	audit := &gatedAudit{release: make(chan struct{}), fail: errors.New("disk full")}
	close(audit.release)
	e, _ := newEngine(t, cfg, Options{Audit: audit})
	done := make(chan error, 1)
	go func() {
		_, err := e.Decide(context.Background(), Request{Command: "git push --force", Session: "S", Platform: PlatformGateway})
		done <- err
	}()
	waitPending(t, e.Gateway(), "default", "S", 1)
	err := e.Gateway().Answer("default", "S", "", Answer{Verdict: VerdictApprove, By: "gateway:x"})
	require.ErrorIs(t, err, ErrNotStored)
	assert.ErrorContains(t, err, "disk full")
	require.ErrorIs(t, <-done, ErrDenied, "an approval that cannot be recorded does not run")
}

// TestApprovalRequestsAudited: a request is recorded when asked, and its
// decision says how it ended: answered, timed out, cancelled.
func TestApprovalRequestsAudited(t *testing.T) {
	cfg := testConfig(t, "  default: {approvals: {timeout: 50ms}}\n")
	e, audit := newEngine(t, cfg, Options{})
	// Timed out: nobody answers.
	d, err := e.Decide(t.Context(), Request{Command: "git push --force", Session: "S", Platform: PlatformGateway})
	require.ErrorIs(t, err, ErrDenied)
	assert.Equal(t, ApprovalTimedOut, d.Approval)

	// Cancelled: the caller goes away.
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan Decision, 1)
	go func() {
		d, _ := e.Decide(ctx, Request{Command: "git push --force", Session: "T", Platform: PlatformGateway})
		res <- d
	}()
	waitPending(t, e.Gateway(), "default", "T", 1)
	cancel()
	d2 := <-res
	assert.Equal(t, ApprovalCancelled, d2.Approval)

	byID := map[string][]Decision{}
	for _, r := range audit.all() {
		byID[r.ID] = append(byID[r.ID], r)
	}
	for _, id := range []string{d.ID, d2.ID} {
		recs := byID[id]
		require.Len(t, recs, 2, "asked, then decided")
		assert.Equal(t, EventAsked, recs[0].Event)
		assert.Equal(t, Event(""), recs[1].Event)
	}
	assert.Equal(t, ApprovalTimedOut, byID[d.ID][1].Approval)
	assert.Equal(t, ApprovalCancelled, byID[d2.ID][1].Approval)
}

// TestAskedNotRecordedNotAsked: when the audit log cannot take the
// "asked" record, nobody is asked and the call is refused.
func TestAskedNotRecordedNotAsked(t *testing.T) {
	cfg := testConfig(t, "  default: {approvals: {timeout: 30s}}\n")
	e, _ := newEngine(t, cfg, Options{Audit: &memAudit{err: errors.New("disk full")}})
	d, err := e.Decide(t.Context(), Request{Command: "git push --force", Session: "S", Platform: PlatformGateway})
	require.ErrorIs(t, err, ErrDenied)
	assert.Equal(t, StageInternal, d.Stage)
	assert.Empty(t, e.Gateway().List("", ""), "nothing was queued")
}

// TestMandateWarningReachesDecision: a mandate hook's warning (a call it
// could not record) is in the decision, and so in the audit record and
// the call's result.
func TestMandateWarningReachesDecision(t *testing.T) {
	hook := mandateFunc(func(context.Context, MandateCall) MandateVerdict {
		return MandateVerdict{Outcome: MandateNotApplicable, Warning: "not recorded"}
	})
	e, audit := newEngine(t, testConfig(t, "  default: {}\n"), Options{Mandate: hook})
	d, err := e.Decide(t.Context(), Request{Command: "ls", Platform: PlatformCLI, Job: "j"})
	require.NoError(t, err)
	assert.Equal(t, "not recorded", d.Warning)
	recs := audit.all()
	require.Len(t, recs, 1)
	assert.Equal(t, "not recorded", recs[0].Warning)
}

// TestClearSessionReturnsAfterDenialsStored: clearing a session answers
// only once the denials of its waiting requests are recorded.
func TestClearSessionReturnsAfterDenialsStored(t *testing.T) {
	cfg := testConfig(t, "  default: {approvals: {timeout: 30s}}\n")
	audit := &gatedAudit{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e, _ := newEngine(t, cfg, Options{Audit: audit})
	res := make(chan Decision, 1)
	go func() {
		d, _ := e.Decide(context.Background(), Request{Command: "git push --force", Session: "S", Platform: PlatformGateway})
		res <- d
	}()
	waitPending(t, e.Gateway(), "default", "S", 1)
	cleared := make(chan int, 1)
	go func() { cleared <- e.ClearSession("default", "S") }()
	<-audit.entered // the denial is being recorded, and held
	select {
	case <-cleared:
		t.Fatal("ClearSession returned before the denial was recorded")
	case <-time.After(50 * time.Millisecond): // a wrong ClearSession has had time to return
	}
	close(audit.release)
	assert.Equal(t, 1, <-cleared)
	d := <-res
	assert.Equal(t, ApprovalCancelled, d.Approval)
	var stored []Decision
	for _, r := range audit.all() {
		if r.Event == "" {
			stored = append(stored, r)
		}
	}
	require.Len(t, stored, 1)
	assert.Equal(t, d.ID, stored[0].ID)
}
