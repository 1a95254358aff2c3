package approval

import (
	"context"
	"fmt"
	"time"

	"github.com/tether-dev/tether/config"
)

// Route asks someone (a person at a terminal, a messaging client, a
// secondary model, or a fixed unattended policy) whether a flagged command
// may run. Implementations: *Prompter (CLI), *Gateway, *Smart, Unattended.
//
// Ask blocks until an answer or until ctx is done; the engine bounds ctx
// with the profile's approval timeout and treats an error, a cancelled
// context or any answer other than an approval as a deny.
type Route interface {
	// Name identifies the route in decision records ("cli", "gateway", …).
	Name() string
	// Ask returns the answer to q.
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Question is what a route is asked. Command is already redacted (secret
// values masked): it may be shown to people and sent to a model.
type Question struct {
	ID       string   `json:"id"`
	Profile  string   `json:"profile"`
	Session  string   `json:"session"`
	Platform Platform `json:"platform"`
	Command  string   `json:"command"`
	// Tool is set when the question is about a file tool's access (a
	// path rule asked for it) rather than a terminal command: Command is
	// then "<tool> <path>", never to be read as a shell command.
	Tool     string    `json:"tool,omitempty"`
	Findings []Finding `json:"findings"`
	Cwd      string    `json:"cwd,omitempty"`
	// Reason says why a person is asked when it is not only the findings
	// (a mandate escalation, a smart-route ESCALATE).
	Reason string `json:"reason,omitempty"`
	// Scopes are the answers the route may give; ScopeOnce is always
	// allowed. ScopeSession needs a session; ScopeAlways is not offered
	// for mandate escalations.
	Scopes []Scope `json:"scopes"`
	// Covers says, for each scope in Scopes (and once), exactly what an
	// approval with that scope lets run, in words a person can check
	// before answering: routes show it with the question.
	Covers   map[Scope]string `json:"covers,omitempty"`
	Created  time.Time        `json:"created"`
	Deadline time.Time        `json:"deadline,omitzero"`

	// raw is the unredacted command: the gateway's coalescing key, so two
	// commands that differ only in a masked secret are not merged.
	raw string
	// confirms is set by the engine: it confirms (Answer.confirm) once
	// the outcome of an answer is on disk, and the gateway's Answer waits
	// for that before it returns.
	confirms bool
}

// Allows reports whether q offers scope s.
func (q Question) Allows(s Scope) bool {
	if s == ScopeOnce {
		return true
	}
	for _, x := range q.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Verdict is a route's answer.
type Verdict string

// Verdicts.
const (
	VerdictApprove  Verdict = "approve"
	VerdictDeny     Verdict = "deny"
	VerdictEscalate Verdict = "escalate" // smart route only: ask a person
)

// Scope is how long an approval lasts.
type Scope string

// Scopes.
const (
	ScopeOnce    Scope = "once"    // this call only
	ScopeSession Scope = "session" // until the session is cleared
	ScopeAlways  Scope = "always"  // added to the profile's allowlist
)

// ParseScope parses "once", "session" or "always".
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case ScopeOnce, ScopeSession, ScopeAlways:
		return Scope(s), nil
	}
	return "", fmt.Errorf("invalid scope %q (want once, session or always)", s)
}

// Answer is a route's decision on one question.
type Answer struct {
	Verdict Verdict `json:"verdict"`
	Scope   Scope   `json:"scope,omitempty"` // for VerdictApprove; empty means once
	By      string  `json:"by"`              // who or what answered ("cli", "gateway:alice", "smart:model")
	Reason  string  `json:"reason,omitempty"`

	// confirm, set by the gateway for a question that confirms, reports
	// the answer's outcome as stored (nil) or not (the error) to the
	// Answer call that delivered it.
	confirm func(error)
}

// Unattended is the route of platforms where nobody can answer (cron,
// webhook, api, single-query): a fixed policy from the profile's cron_mode
// or unattended_mode. The engine consults it only after the hardline
// floor, deny globs and mandate, so approving here never lifts those.
type Unattended struct {
	Policy config.UnattendedPolicy
	Key    string // the config key the policy came from, for the record
}

// Name returns "unattended".
func (u Unattended) Name() string { return "unattended" }

// Ask approves (once) when the policy is approve and denies otherwise.
func (u Unattended) Ask(_ context.Context, q Question) (Answer, error) {
	if u.Policy == config.UnattendedApprove {
		return Answer{Verdict: VerdictApprove, Scope: ScopeOnce, By: "config:" + u.Key,
			Reason: fmt.Sprintf("%s: approve on the %s platform", u.Key, q.Platform)}, nil
	}
	return Answer{Verdict: VerdictDeny, By: "config:" + u.Key,
		Reason: fmt.Sprintf("nobody can approve on the %s platform (%s: deny)", q.Platform, u.Key)}, nil
}
