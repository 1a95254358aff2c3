package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DecideRequest is the body of POST /v1/approvals/decide.
type DecideRequest struct {
	Profile string  `json:"profile"`
	Session string  `json:"session"`
	ID      string  `json:"id,omitempty"`  // empty: the oldest pending request
	All     bool    `json:"all,omitempty"` // every pending request of the session
	Verdict Verdict `json:"verdict"`       // approve or deny
	Scope   Scope   `json:"scope,omitempty"`
	By      string  `json:"by,omitempty"` // who answers, for the record ("alice via slack")
}

// DecideResponse is the answer of POST /v1/approvals/decide.
type DecideResponse struct {
	Answered int `json:"answered"`
}

// GatewayHandler serves the gateway queue's HTTP/JSON API (mounted by
// `tether serve` on its socket; `tether approvals` is its client):
//
//	GET  /v1/approvals?profile=P&session=S   {"pending": [Pending…]} oldest first;
//	                                         no session: every session of P
//	GET  /v1/approvals/oldest?profile=P&session=S
//	                                         the session's oldest Pending, 404 if none
//	                                         (what a reconnecting client restores)
//	POST /v1/approvals/decide                DecideRequest → DecideResponse;
//	                                         404 when the session has no such request
//
// Profile "" means defaultProfile. Decisions always name a session: one
// session can never answer another's requests.
func GatewayHandler(g *Gateway, defaultProfile string) http.Handler {
	mux := http.NewServeMux()
	profileOf := func(p string) string {
		if p == "" {
			return defaultProfile
		}
		return p
	}
	mux.HandleFunc("GET /v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		list := g.List(profileOf(q.Get("profile")), q.Get("session"))
		if list == nil {
			list = []Pending{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"pending": list})
	})
	mux.HandleFunc("GET /v1/approvals/oldest", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("session") == "" {
			writeError(w, http.StatusBadRequest, "session is required")
			return
		}
		p, ok := g.Oldest(profileOf(q.Get("profile")), q.Get("session"))
		if !ok {
			writeError(w, http.StatusNotFound, ErrNoPending.Error())
			return
		}
		writeJSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("POST /v1/approvals/decide", func(w http.ResponseWriter, r *http.Request) {
		var req DecideRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "decoding the request: "+err.Error())
			return
		}
		ans, err := req.answer()
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		profile := profileOf(req.Profile)
		if req.All {
			n := g.AnswerAll(profile, req.Session, ans)
			if n == 0 {
				writeError(w, http.StatusNotFound, fmt.Sprintf("%v in session %q", ErrNoPending, req.Session))
				return
			}
			writeJSON(w, http.StatusOK, DecideResponse{Answered: n})
			return
		}
		if err := g.Answer(profile, req.Session, req.ID, ans); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, ErrNoPending) {
				status = http.StatusNotFound
			}
			writeError(w, status, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, DecideResponse{Answered: 1})
	})
	return mux
}

// answer validates the request and builds the Answer.
func (r DecideRequest) answer() (Answer, error) {
	if r.Session == "" {
		return Answer{}, errors.New("session is required: answers always name their session")
	}
	if r.All && r.ID != "" {
		return Answer{}, errors.New("give either id or all, not both")
	}
	by := "gateway"
	if b := strings.TrimSpace(r.By); b != "" {
		by = "gateway:" + b
	}
	switch r.Verdict {
	case VerdictApprove:
		scope := ScopeOnce
		if r.Scope != "" {
			s, err := ParseScope(string(r.Scope))
			if err != nil {
				return Answer{}, err
			}
			scope = s
		}
		return Answer{Verdict: VerdictApprove, Scope: scope, By: by}, nil
	case VerdictDeny:
		if r.Scope != "" {
			return Answer{}, errors.New("a deny has no scope")
		}
		return Answer{Verdict: VerdictDeny, By: by, Reason: "denied by " + by}, nil
	}
	return Answer{}, fmt.Errorf("invalid verdict %q (want approve or deny)", r.Verdict)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
