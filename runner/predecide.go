package runner

import (
	"context"
	"errors"

	"github.com/tether-dev/tether/approval"
)

// A batch's terminal calls are decided together, before its plan runs, so
// that every approval request of the batch is pending at once (a person
// sees them all, the gateway and `tether approvals` list them together)
// instead of the second appearing only once the first is answered and run.
// Deciding has no effect on the workspace — the analysis reads only the
// command's text, and the engine's only effects are its records and the
// approvals a person gives — so the plan's order is not needed for it;
// the calls then run in the plan's order, each with its decision. Two
// identical requests asked at once are one question (the gateway
// coalesces them), so one answer covers both, as a session answer to the
// first would have.

// errNotPredecided: the call was not decided ahead (decide it now).
var errNotPredecided = errors.New("not decided ahead")

// predecision is a decision being made ahead for one call.
type predecision struct {
	done chan struct{}
	d    approval.Decision
	err  error
}

type predecidedKey struct{}

// predecide starts deciding, concurrently, the terminal calls of a batch
// with at least two of them on a platform where a person is asked, and
// returns ctx carrying the decisions for the handlers (predecided). The
// caller must call stop once the batch is over: a question still pending
// for a call that never ran (a guardrail stopped it) is then cancelled. A
// call that never runs keeps its audited decision; nothing ran for it.
func (r *Runner) predecide(ctx context.Context, env *Env, calls []*Call) (_ context.Context, stop func()) {
	if r.Engine == nil || env.Platform.Unattended() {
		return ctx, func() {}
	}
	var terms []*Call
	for _, c := range calls {
		if c != nil && c.Tool.Name == "terminal" && c.Tool.Handler != nil {
			terms = append(terms, c)
		}
	}
	if len(terms) < 2 {
		return ctx, func() {}
	}
	pol, err := TerminalScopeFrom(ctx)
	if err != nil {
		return ctx, func() {} // the handlers refuse, each with the scope's error
	}
	dctx, cancel := context.WithCancel(ctx)
	m := make(map[*Call]*predecision, len(terms))
	for _, c := range terms {
		p := &predecision{done: make(chan struct{})}
		m[c] = p
		go func() {
			defer close(p.done)
			p.d, p.err = decideTerminal(dctx, env, pol, argString(c.Args, "command"))
		}()
	}
	return context.WithValue(ctx, predecidedKey{}, m), cancel
}

// predecided returns the decision made ahead for c, waiting for it, or
// errNotPredecided.
func predecided(ctx context.Context, c *Call) (approval.Decision, error) {
	m, _ := ctx.Value(predecidedKey{}).(map[*Call]*predecision)
	p := m[c]
	if p == nil {
		return approval.Decision{}, errNotPredecided
	}
	<-p.done // Decide ends when ctx does
	return p.d, p.err
}
