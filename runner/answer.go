package runner

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/tether-dev/tether/approval"
)

// The two ways to answer a gateway request over the API — a client on its
// own session (POST /v1/sessions/{id}/approvals) and a webhook bridge with
// an answer token (POST /v1/approvals/answer) — read the same fields,
// check them the same way and answer through answerPending.

// errBadAnswer marks an answer refused for what it says (a 400): an
// unknown verdict or scope, or a scope the request does not offer.
var errBadAnswer = errors.New("bad answer")

// answerFields are the fields every answer body carries.
type answerFields struct {
	Verdict string `json:"verdict"`
	Scope   string `json:"scope,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// answer returns the approval.Answer f says, given by by; an error
// wrapping errBadAnswer when f is not one.
func (f answerFields) answer(by string) (approval.Answer, error) {
	ans := approval.Answer{By: by, Reason: f.Reason}
	switch v := approval.Verdict(f.Verdict); v {
	case approval.VerdictApprove, approval.VerdictDeny:
		ans.Verdict = v
	default:
		return ans, fmt.Errorf(`%w: verdict must be "approve" or "deny"`, errBadAnswer)
	}
	if f.Scope != "" {
		sc, err := approval.ParseScope(f.Scope)
		if err != nil {
			return ans, fmt.Errorf("%w: %w", errBadAnswer, err)
		}
		ans.Scope = sc
	}
	return ans, nil
}

// answeredBy names who answered, for the audit record: kind:who, and the
// local user the connection came from (SO_PEERCRED) when it is known.
func answeredBy(r *http.Request, kind, who string) string {
	if uid, ok := PeerUID(r.Context()); ok {
		return fmt.Sprintf("%s:%s@uid%d", kind, who, uid)
	}
	return kind + ":" + who
}

// target returns the request of the session that an answer to id ("" for
// the oldest) would answer, checking first that an approving ans names a
// scope that request offers: a wrong scope is refused (errBadAnswer)
// before anything consumes the request. The id it returns is the one to
// answer, so the request checked is the request answered even when the
// oldest changes meanwhile. approval.ErrNoPending when there is none.
func target(g *approval.Gateway, profile, session, id string, ans approval.Answer) (string, error) {
	var p approval.Pending
	found := false
	if id == "" {
		p, found = g.Oldest(profile, session)
	} else {
		list := g.List(profile, session)
		if i := slices.IndexFunc(list, func(q approval.Pending) bool { return q.ID == id }); i >= 0 {
			p, found = list[i], true
		}
	}
	if !found {
		return "", fmt.Errorf("%w in session %q of profile %q", approval.ErrNoPending, session, profile)
	}
	if ans.Verdict == approval.VerdictApprove && ans.Scope != "" && ans.Scope != approval.ScopeOnce && !slices.Contains(p.Scopes, ans.Scope) {
		return "", fmt.Errorf("%w: scope %q is not offered for request %s (offered: %v)", errBadAnswer, ans.Scope, p.ID, p.Scopes)
	}
	return p.ID, nil
}

// writeAnswerErr writes err, from answering a request, with its status:
// 400 for a bad answer, 404 for a request that is not pending, 500 for
// anything else (an outcome that could not be stored).
func writeAnswerErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errBadAnswer):
		writeErr(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, approval.ErrNoPending):
		writeErr(w, http.StatusNotFound, err.Error())
	default:
		writeErr(w, http.StatusInternalServerError, err.Error())
	}
}
