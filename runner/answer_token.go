package runner

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/tether-dev/tether/approval"
)

// Per-request answer tokens: what a webhook bridge needs to answer one
// pending request, and nothing more. A token is issued when the webhook is
// told of a request, answers exactly that request, once
// (POST /v1/approvals/answer), and is forgotten as soon as the request is
// resolved any way. It is never the client's own token: a bridge holding
// it can neither see the session, run calls, nor answer anything else.

// answerTokenPrefix starts every answer token (so a leaked one is
// recognisable).
const answerTokenPrefix = "tat_"

// answerRef is the request a token answers.
type answerRef struct{ profile, session, id string }

// answerTokens holds the live tokens by hash. Safe for concurrent use.
type answerTokens struct {
	mu   sync.Mutex
	byID map[string][32]byte    // request id → token hash; guarded by mu
	refs map[[32]byte]answerRef // token hash → request; guarded by mu
}

func newAnswerTokens() *answerTokens {
	return &answerTokens{byID: map[string][32]byte{}, refs: map[[32]byte]answerRef{}}
}

// issue returns a new token for p (replacing an earlier one of the same
// request).
func (a *answerTokens) issue(p approval.Pending) string {
	tok := answerTokenPrefix + randomID("", 24)
	h := sha256.Sum256([]byte(tok))
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.byID[p.ID]; ok {
		delete(a.refs, old)
	}
	a.byID[p.ID] = h
	a.refs[h] = answerRef{p.Profile, p.Session, p.ID}
	return tok
}

// take consumes tok and returns the request it answers.
func (a *answerTokens) take(tok string) (answerRef, bool) {
	h := sha256.Sum256([]byte(tok))
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := a.refs[h]
	if ok {
		delete(a.refs, h)
		delete(a.byID, ref.id)
	}
	return ref, ok
}

// peek returns the request tok answers without consuming it.
func (a *answerTokens) peek(tok string) (answerRef, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := a.refs[sha256.Sum256([]byte(tok))]
	return ref, ok
}

// drop forgets the token of request id (it was resolved).
func (a *answerTokens) drop(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h, ok := a.byID[id]; ok {
		delete(a.refs, h)
		delete(a.byID, id)
	}
}

// AnswerToken issues the answer token of p, a pending gateway request, for
// its webhook (see answerTokens); "" when p is no longer pending.
func (s *Server) AnswerToken(p approval.Pending) string {
	tok := s.answers.issue(p)
	// Issued after the request was resolved (the notification runs on its
	// own goroutine): forget it, or it would outlive its request.
	if !slices.ContainsFunc(s.runner.Load().Engine.Gateway().List(p.Profile, p.Session), func(q approval.Pending) bool { return q.ID == p.ID }) {
		s.answers.drop(p.ID)
		return ""
	}
	return tok
}

// answerReq is the body of POST /v1/approvals/answer.
type answerReq struct {
	Token string `json:"token"`
	answerFields
}

// answerWithToken answers the one request an answer token names.
func (s *Server) answerWithToken(w http.ResponseWriter, r *http.Request) {
	var req answerReq
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if !strings.HasPrefix(req.Token, answerTokenPrefix) {
		writeErr(w, http.StatusUnauthorized, "missing or malformed answer token (the answer.token of the webhook's approval.pending body)")
		return
	}
	const unknown = "unknown answer token: it was used already, or its request was answered, expired or cancelled"
	ref, ok := s.answers.peek(req.Token)
	if !ok {
		writeErr(w, http.StatusNotFound, unknown)
		return
	}
	ans, err := req.answer(answeredBy(r, "webhook", ref.profile))
	if err != nil {
		writeAnswerErr(w, err)
		return
	}
	// A bad answer is refused before the token is used: it must not
	// consume the request.
	g := s.runner.Load().Engine.Gateway()
	if _, err := target(g, ref.profile, ref.session, ref.id, ans); err != nil {
		writeAnswerErr(w, err)
		return
	}
	if _, ok := s.answers.take(req.Token); !ok {
		writeErr(w, http.StatusNotFound, unknown)
		return
	}
	if err := g.Answer(ref.profile, ref.session, ref.id, ans); err != nil {
		writeAnswerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answered": 1, "id": ref.id})
}
