package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// ErrNoPending is returned when an answer targets no pending request of
// the given session.
var ErrNoPending = errors.New("no pending approval request")

// ErrNotStored is returned by Answer and AnswerAll when the answer reached
// the waiting call but its outcome (the decision's audit record, an
// "always" allowlist entry) could not be confirmed on disk. The caller
// must not tell the person that the answer was taken as given.
var ErrNotStored = errors.New("the answer's outcome is not confirmed on disk")

// confirmTimeout bounds how long Answer waits for the waiting calls to
// store an answer's outcome (two fsyncs, normally milliseconds).
const confirmTimeout = 30 * time.Second

// Pending is a request waiting in the gateway queue, as shown to a
// messaging client or the API. Command is redacted.
type Pending struct {
	ID       string   `json:"id"`
	Profile  string   `json:"profile"`
	Session  string   `json:"session"`
	Platform Platform `json:"platform"`
	Command  string   `json:"command"`
	// Tool is set for a file tool's access that a path rule asks about
	// (Question.Tool): Command is then "<tool> <path>".
	Tool     string    `json:"tool,omitempty"`
	Findings []Finding `json:"findings"`
	Reason   string    `json:"reason,omitempty"`
	Scopes   []Scope   `json:"scopes"`
	// Covers says what an answer with each scope lets run (Question.Covers).
	Covers   map[Scope]string `json:"covers,omitempty"`
	Created  time.Time        `json:"created"`
	Deadline time.Time        `json:"deadline,omitzero"`
	Waiters  int              `json:"waiters"` // identical concurrent requests coalesced into this one
}

// pending is a queued request; done is closed once answer is set.
type pending struct {
	Pending
	raw     string // coalescing key: the unredacted command
	done    chan struct{}
	answer  Answer
	waiters int
	// confirming counts the waiters that confirm (Question.confirms);
	// resolve makes confirmed, which each of them sends one result on.
	confirming int
	confirmed  chan error
}

// Notifier tells the messaging side that a request is pending (for example
// a webhook POST). Errors are logged; the request stays pending and can be
// answered through the API.
type Notifier func(ctx context.Context, p Pending) error

// Outcomes of a Resolution.
const (
	OutcomeAnswered  = "answered"  // a person (or bridge) answered it
	OutcomeExpired   = "expired"   // nobody answered before the approval timeout
	OutcomeCancelled = "cancelled" // its caller went away or its session was cleared
)

// Resolution says how a pending request left the queue, for event
// streams: a UI removes the request when it sees one.
type Resolution struct {
	ID      string    `json:"id"`
	Profile string    `json:"profile"`
	Session string    `json:"session"`
	Outcome string    `json:"outcome"`
	Verdict Verdict   `json:"verdict,omitempty"` // answered only
	By      string    `json:"by,omitempty"`      // who answered
	Reason  string    `json:"reason,omitempty"`
	Time    time.Time `json:"time"`
}

// GatewayOptions configures a Gateway. The zero value is valid.
type GatewayOptions struct {
	// Resolved, if set, is told of every request that leaves the queue.
	// It is called without the gateway's lock held, and must not block.
	Resolved      func(Resolution)
	Notify        Notifier
	NotifyTimeout time.Duration // per notification; default 10s
	Logger        *slog.Logger
}

// Gateway is the approval route of messaging platforms: requests queue
// under their (profile, session) key until a client answers through the
// API. Identical concurrent requests of one session (same command) are
// coalesced into one pending entry whose answer reaches every waiter.
// Answers always name the session, so one session can never answer
// another's request. Safe for concurrent use.
type Gateway struct {
	opts GatewayOptions

	mu     sync.Mutex
	queues map[sessionKey][]*pending // oldest first
}

// NewGateway returns an empty queue.
func NewGateway(opts GatewayOptions) *Gateway {
	if opts.NotifyTimeout <= 0 {
		opts.NotifyTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{opts: opts, queues: map[sessionKey][]*pending{}}
}

// Name returns "gateway".
func (g *Gateway) Name() string { return "gateway" }

// Ask queues q (or joins an identical pending request of the same session)
// and waits for an answer or for ctx to end.
func (g *Gateway) Ask(ctx context.Context, q Question) (Answer, error) {
	if q.Session == "" {
		return Answer{}, errors.New("gateway requests need a session key")
	}
	k := sessionKey{q.Profile, q.Session}
	g.mu.Lock()
	raw := q.raw
	if raw == "" {
		raw = q.Command
	}
	var p *pending
	for _, x := range g.queues[k] {
		if x.raw == raw && slices.Equal(x.Scopes, q.Scopes) {
			p = x
			break
		}
	}
	fresh := p == nil
	if fresh {
		p = &pending{Pending: Pending{ID: q.ID, Profile: q.Profile, Session: q.Session, Platform: q.Platform,
			Command: q.Command, Tool: q.Tool, Findings: q.Findings, Reason: q.Reason, Scopes: q.Scopes,
			Covers: maps.Clone(q.Covers), Created: q.Created, Deadline: q.Deadline}, raw: raw, done: make(chan struct{})}
		g.queues[k] = append(g.queues[k], p)
	}
	p.waiters++
	if q.confirms {
		p.confirming++
	}
	snapshot := p.snapshot()
	g.mu.Unlock()

	if fresh && g.opts.Notify != nil {
		go g.notify(snapshot)
	}
	select {
	case <-p.done:
		return p.delivered(q), nil
	case <-ctx.Done():
		g.mu.Lock()
		select {
		case <-p.done:
			// The answer won the race: resolve counted this waiter,
			// so it takes the answer and confirms it.
			g.mu.Unlock()
			return p.delivered(q), nil
		default:
		}
		p.waiters--
		if q.confirms {
			p.confirming--
		}
		gone := p.waiters == 0 && g.remove(k, p)
		g.mu.Unlock()
		if gone {
			out := OutcomeCancelled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				out = OutcomeExpired
			}
			g.resolved(Resolution{ID: p.ID, Profile: p.Profile, Session: p.Session, Outcome: out, Time: time.Now().UTC()})
		}
		return Answer{}, ctx.Err()
	}
}

// delivered returns p's answer to the waiter that asked q, with the
// confirmation callback when q confirms.
//
// Preconditions: p.done is closed.
func (p *pending) delivered(q Question) Answer {
	ans := p.answer
	if q.confirms {
		var once sync.Once
		ans.confirm = func(err error) { once.Do(func() { p.confirmed <- err }) }
	}
	return ans
}

func (g *Gateway) notify(p Pending) {
	ctx, cancel := context.WithTimeout(context.Background(), g.opts.NotifyTimeout)
	defer cancel()
	if err := g.opts.Notify(ctx, p); err != nil {
		g.opts.Logger.Warn("notifying about a pending approval", "id", p.ID, "session", p.Session, "err", err)
	}
}

// snapshot copies the public view.
//
// Preconditions: g.mu is held.
func (p *pending) snapshot() Pending {
	s := p.Pending
	s.Waiters = p.waiters
	s.Findings = slices.Clone(p.Findings)
	s.Scopes = slices.Clone(p.Scopes)
	s.Covers = maps.Clone(p.Covers)
	return s
}

// resolved tells GatewayOptions.Resolved of r.
func (g *Gateway) resolved(r Resolution) {
	if g.opts.Resolved != nil {
		g.opts.Resolved(r)
	}
}

// remove drops p from its queue and reports whether it was there.
//
// Preconditions: g.mu is held.
func (g *Gateway) remove(k sessionKey, p *pending) bool {
	q := g.queues[k]
	i := slices.Index(q, p)
	if i < 0 {
		return false
	}
	q = slices.Delete(q, i, i+1)
	if len(q) == 0 {
		delete(g.queues, k)
	} else {
		g.queues[k] = q
	}
	return true
}

// Oldest returns the session's oldest pending request: what a reconnecting
// client gets back. It never returns another session's request.
func (g *Gateway) Oldest(profile, session string) (Pending, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queues[sessionKey{profile, session}]
	if len(q) == 0 {
		return Pending{}, false
	}
	return q[0].snapshot(), true
}

// List returns the pending requests of one session, oldest first; with
// session "" those of every session of profile; with both "" all of them.
func (g *Gateway) List(profile, session string) []Pending {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Pending
	for k, q := range g.queues {
		if (profile != "" && k.profile != profile) || (session != "" && k.session != session) {
			continue
		}
		for _, p := range q {
			out = append(out, p.snapshot())
		}
	}
	slices.SortStableFunc(out, func(a, b Pending) int { return a.Created.Compare(b.Created) })
	return out
}

// Answer answers one pending request of the session: the one with id, or
// the oldest when id is "". It returns ErrNoPending when the session has
// no such request (an id of another session included). It returns once
// the waiting calls have stored the outcome (their decisions' audit
// records, an "always" entry), or ErrNotStored when they could not.
func (g *Gateway) Answer(profile, session, id string, ans Answer) error {
	g.mu.Lock()
	k := sessionKey{profile, session}
	for _, p := range g.queues[k] {
		if id == "" || p.ID == id {
			r := g.resolve(k, p, ans, OutcomeAnswered)
			g.mu.Unlock()
			g.resolved(r)
			return p.awaitStored()
		}
	}
	g.mu.Unlock()
	if id == "" {
		return fmt.Errorf("%w in session %q of profile %q", ErrNoPending, session, profile)
	}
	return fmt.Errorf("%w with id %s in session %q of profile %q", ErrNoPending, id, session, profile)
}

// AnswerAll answers every pending request of the session and returns how
// many there were, once their outcomes are stored (ErrNotStored when
// some could not be).
func (g *Gateway) AnswerAll(profile, session string, ans Answer) (int, error) {
	q := g.resolveAll(profile, session, ans, OutcomeAnswered)
	var errs []error
	for _, p := range q {
		errs = append(errs, p.awaitStored())
	}
	return len(q), errors.Join(errs...)
}

// Clear denies every pending request of the session with reason (they
// are reported cancelled). It does not wait for the denials to be
// stored: the waiting calls audit them as they end.
func (g *Gateway) Clear(profile, session, reason string) int {
	return len(g.resolveAll(profile, session, Answer{Verdict: VerdictDeny, By: "engine", Reason: reason}, OutcomeCancelled))
}

// resolveAll resolves every pending request of the session and reports
// each once g.mu is released.
func (g *Gateway) resolveAll(profile, session string, ans Answer, outcome string) []*pending {
	g.mu.Lock()
	k := sessionKey{profile, session}
	q := slices.Clone(g.queues[k])
	var rs []Resolution
	for _, p := range q {
		rs = append(rs, g.resolve(k, p, ans, outcome))
	}
	g.mu.Unlock()
	for _, r := range rs {
		g.resolved(r)
	}
	return q
}

// resolve sets p's answer, wakes its waiters and dequeues it, and
// returns the resolution to report once g.mu is released.
//
// Preconditions: g.mu is held.
func (g *Gateway) resolve(k sessionKey, p *pending, ans Answer, outcome string) Resolution {
	p.answer = ans
	p.confirmed = make(chan error, p.confirming)
	close(p.done)
	g.remove(k, p)
	r := Resolution{ID: p.ID, Profile: p.Profile, Session: p.Session, Outcome: outcome, Reason: ans.Reason, Time: time.Now().UTC()}
	if outcome == OutcomeAnswered {
		r.Verdict, r.By = ans.Verdict, ans.By
	}
	return r
}

// awaitStored waits for every confirming waiter of a resolved p to report
// that the answer's outcome is on disk.
func (p *pending) awaitStored() error {
	timer := time.NewTimer(confirmTimeout)
	defer timer.Stop()
	var errs []error
	for range cap(p.confirmed) {
		select {
		case err := <-p.confirmed:
			if err != nil {
				errs = append(errs, err)
			}
		case <-timer.C:
			return fmt.Errorf("%w: request %s: no confirmation within %s", ErrNotStored, p.ID, confirmTimeout)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: request %s: %w", ErrNotStored, p.ID, errors.Join(errs...))
	}
	return nil
}

// Webhook posts pending requests as JSON to a URL:
//
//	{"event": "approval.pending", "request": Pending}
//
// A non-2xx status is an error.
type Webhook struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient; the Gateway bounds each call with NotifyTimeout
	Header http.Header  // extra headers (for example Authorization)
	// Answer, when set, tells the bridge how to answer this one request
	// (body key "answer").
	Answer *WebhookAnswer
}

// WebhookAnswer is how a webhook's receiver answers the request it was
// told of: send {"token": Token, "verdict": "approve"|"deny", "scope":
// "once", "reason": "…"} to Method Path of the daemon's API. The token
// answers exactly that request, once.
type WebhookAnswer struct {
	Token  string `json:"token"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Notify implements Notifier.
func (w *Webhook) Notify(ctx context.Context, p Pending) error {
	body, err := json.Marshal(struct {
		Event   string         `json:"event"`
		Request Pending        `json:"request"`
		Answer  *WebhookAnswer `json:"answer,omitempty"`
	}{"approval.pending", p, w.Answer})
	if err != nil {
		return fmt.Errorf("encoding webhook body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range w.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	c := w.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("posting webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting webhook: %s", resp.Status)
	}
	return nil
}
