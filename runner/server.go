package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// Headers of the API.
const (
	// HeaderClientToken carries the client token returned when the client
	// created its first session. It identifies the client: a client acts
	// only on the sessions created with its token.
	HeaderClientToken = "Tether-Client-Token"
	// maxBodyBytes bounds a request body.
	maxBodyBytes = 8 << 20
	// maxTurns is how many turns' guardrail counters a session keeps.
	maxTurns = 32
)

// Limits bounds what API clients can hold of the daemon. The zero value
// of each field means its default.
type Limits struct {
	// BodyTimeout bounds reading one request body (default 30s): a client
	// trickling a body gets 408.
	BodyTimeout time.Duration
	// IdleConnTimeout closes a keep-alive connection idle this long
	// (default 60s).
	IdleConnTimeout time.Duration
	// MaxConns bounds the open connections of each listener (default
	// 512); a connection over it is answered 503 and closed.
	MaxConns int
	// MaxSessions bounds the daemon's live sessions (default 4096);
	// MaxSessionsPerClient those of one client (default 64).
	MaxSessions          int
	MaxSessionsPerClient int
	// SessionIdle clears a session no request has used for this long
	// (default 1h): its pending approvals are denied, its sandbox closed,
	// and requests naming it get 410 saying so.
	SessionIdle time.Duration
}

// withDefaults fills in the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.BodyTimeout, 30*time.Second)
	def(&l.IdleConnTimeout, 60*time.Second)
	def(&l.SessionIdle, time.Hour)
	if l.MaxConns <= 0 {
		l.MaxConns = 512
	}
	if l.MaxSessions <= 0 {
		l.MaxSessions = 4096
	}
	if l.MaxSessionsPerClient <= 0 {
		l.MaxSessionsPerClient = 64
	}
	return l
}

// Server is the HTTP/JSON API of `tether serve` (see docs/api.md). It is
// an http.Handler; Daemon puts it on a socket. Safe for concurrent use.
type Server struct {
	// runner is the pipeline calls go through (its Engine decides them);
	// a daemon's configuration reload replaces it (setRunner). Each
	// request reads it once, so one request sees one configuration.
	runner   atomic.Pointer[Runner]
	mandates *mandate.Store
	version  string
	log      *slog.Logger
	mux      *http.ServeMux
	// base is cancelled at shutdown: waiting calls end (nothing runs).
	base   context.Context
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	sessions map[string]*apiSession   // by id; guarded by mu
	clients  map[[32]byte]string      // token hash → client id; guarded by mu
	subs     map[*subscriber]struct{} // SSE subscribers; guarded by mu
	// expired remembers sessions cleared for idleness, so their client
	// is told so (410) rather than "no such session"; guarded by mu.
	expired map[string]expiredSession
	// answers are the live per-request answer tokens of the webhook.
	answers *answerTokens
}

// expiredSession is what is kept of a session cleared for idleness.
type expiredSession struct {
	client string
	at     time.Time
}

type apiSession struct {
	ID       string            `json:"id"`
	Profile  string            `json:"profile"`
	Platform approval.Platform `json:"platform"`
	Job      string            `json:"job,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	Created  time.Time         `json:"created"`
	client   string
	// lastUsed (unix nanoseconds) and busy (calls running) decide idle
	// expiry: a session running a call is never idle.
	lastUsed atomic.Int64
	busy     atomic.Int32
	mu       sync.Mutex
	turns    map[string]*Turn // guarded by mu
	order    []string         // turn ids, oldest first; guarded by mu
}

type subscriber struct {
	client string
	ch     chan sseEvent
}

// sseEvent is one server-sent event: "approval" with a Pending request,
// or "approval_resolved" with an approval.Resolution.
type sseEvent struct {
	name string
	id   string
	data any
}

// setRunner makes r the pipeline of every request from now on (a
// configuration reload); requests under way finish with the one they
// started with.
func (s *Server) setRunner(r *Runner) { s.runner.Store(r) }

// NewServer returns the API over r (whose Engine must be set). It checks
// no bearer token: the unix socket is private (mode 0600); put
// RequireBearer in front of it on TCP. Until base ends, it clears
// sessions idle past limits.SessionIdle.
func NewServer(base context.Context, r *Runner, mandates *mandate.Store, version string, limits Limits, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{mandates: mandates, version: version, log: log, base: base,
		limits: limits.withDefaults(), now: time.Now,
		sessions: map[string]*apiSession{}, clients: map[[32]byte]string{}, subs: map[*subscriber]struct{}{},
		expired: map[string]expiredSession{}, answers: newAnswerTokens()}
	s.runner.Store(r)
	go s.expireIdle()
	m := http.NewServeMux()
	m.HandleFunc("GET /v1/health", s.health)
	m.HandleFunc("GET /v1/tools", s.tools)
	m.HandleFunc("POST /v1/sessions", s.createSession)
	m.HandleFunc("GET /v1/sessions", s.listSessions)
	m.HandleFunc("DELETE /v1/sessions/{id}", s.clearSession)
	m.HandleFunc("POST /v1/sessions/{id}/calls", s.calls)
	m.HandleFunc("GET /v1/sessions/{id}/approvals", s.sessionApprovals)
	m.HandleFunc("GET /v1/sessions/{id}/approvals/oldest", s.oldestApproval)
	m.HandleFunc("POST /v1/sessions/{id}/approvals", s.decide)
	m.HandleFunc("GET /v1/approvals", s.approvals)
	m.HandleFunc("POST /v1/approvals/answer", s.answerWithToken)
	m.HandleFunc("GET /v1/events", s.events)
	m.HandleFunc("GET /v1/mandates", s.mandateJobs)
	m.HandleFunc("GET /v1/mandates/{job}", s.mandateExport)
	m.HandleFunc("GET /v1/mandates/{job}/drift", s.mandateDrift)
	s.mux = m
	return s
}

// ServeHTTP reads the request body whole, bounded in size (413) and in
// time (408), dispatches, and logs the outcome at debug level.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if foreign, _ := r.Context().Value(foreignKey{}).(bool); foreign {
		w.Header().Set("Connection", "close")
		writeErr(w, http.StatusForbidden, "refused: the connection comes from another user or user namespace (a sandbox); only the daemon's user and root may use its socket")
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, code, err := readBody(w, r, s.limits.BodyTimeout)
		if err != nil {
			w.Header().Set("Connection", "close")
			writeErr(w, code, err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if !s.log.Enabled(r.Context(), slog.LevelDebug) {
		s.mux.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	start := time.Now()
	s.mux.ServeHTTP(sw, r)
	s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.code, "elapsed", time.Since(start))
}

// statusWriter remembers the status code; it keeps Flush for the event
// stream.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// RequireBearer returns h behind a bearer-token check: every request must
// carry "Authorization: Bearer T" for one of tokens (compared in constant
// time on their SHA-256).
func RequireBearer(tokens []string, h http.Handler) http.Handler {
	sums := make([][32]byte, len(tokens))
	for i, t := range tokens {
		sums[i] = sha256.Sum256([]byte(t))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		h1 := sha256.Sum256([]byte(tok))
		good := 0
		for _, t := range sums {
			good |= subtle.ConstantTimeCompare(h1[:], t[:])
		}
		if !ok || good != 1 || len(sums) == 0 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tether"`)
			writeErr(w, http.StatusUnauthorized, "a valid bearer token is required (Authorization: Bearer TOKEN)")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// readBody reads r's whole body within timeout and at most maxBodyBytes,
// returning the status to answer when it cannot: 413 for too large, 408
// for too slow. The connection's read deadline is cleared afterwards: a
// long call must not be cut off by it.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(timeout)) // not every ResponseWriter supports it (tests)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	_ = rc.SetReadDeadline(time.Time{})
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		return body, 0, nil
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the request body is over %d bytes", tooLarge.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, http.StatusRequestTimeout, fmt.Errorf("the request body did not arrive within %s", timeout)
	default:
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	}
}

// decodeBody decodes the body as one JSON object into v; an empty body
// leaves v as it is. Unknown fields and anything after the object are
// errors: a request is understood whole or not at all.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("reading the request body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("reading the request body: data after the JSON object (send exactly one object)")
	}
	return nil
}

// checkSessionCwd returns what is wrong with a session's cwd ("" when
// nothing): it must be an absolute, existing directory, and the profile's
// own workspace when the profile sets one. A cwd the calls would not use
// is an error, never silently ignored.
func checkSessionCwd(prof *config.Profile, cwd string) string {
	if !filepath.IsAbs(cwd) {
		return "cwd must be an absolute path"
	}
	fi, err := os.Stat(cwd)
	if err != nil || !fi.IsDir() {
		return fmt.Sprintf("cwd %s is not an existing directory", cwd)
	}
	if pc := prof.Terminal.Cwd; pc != "" {
		a, errA := filepath.EvalSymlinks(cwd)
		b, errB := filepath.EvalSymlinks(pc)
		if errA != nil || errB != nil || a != b {
			return fmt.Sprintf("profile %s fixes the workspace at %s (terminal.cwd): omit cwd, or create the session with a profile that sets none", prof.Name, pc)
		}
	}
	return ""
}

func randomID(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Adopt registers a session that is not created through the API (an MCP
// server's own session) as owned by a new client, so its gateway requests
// can be listed and answered through this API with the returned client
// token. It lives as long as its owner, never expiring idle.
func (s *Server) Adopt(id, profile string, plat approval.Platform, job, cwd string) (token string) {
	tok := randomID("tct_", 24)
	client := randomID("c-", 6)
	sess := &apiSession{ID: id, Profile: profile, Platform: plat, Job: job, Cwd: cwd,
		Created: time.Now().UTC(), client: client, turns: map[string]*Turn{}}
	sess.busy.Add(1) // a busy session is never idle
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[sha256.Sum256([]byte(tok))] = client
	s.sessions[id] = sess
	return tok
}

// client returns the client id of the request's client token ("" when
// the request carries none, or an unknown one).
func (s *Server) client(r *http.Request) string {
	tok := r.Header.Get(HeaderClientToken)
	if tok == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[sha256.Sum256([]byte(tok))]
}

// owned returns the session id of the path if the request's client owns
// it. Another client's session answers 404, exactly like a missing one,
// so clients cannot probe each other's sessions.
func (s *Server) owned(w http.ResponseWriter, r *http.Request) *apiSession {
	c := s.client(r)
	if c == "" {
		writeErr(w, http.StatusUnauthorized, "missing or unknown "+HeaderClientToken+" header (the client_token returned by POST /v1/sessions)")
		return nil
	}
	id := r.PathValue("id")
	s.mu.Lock()
	sess := s.sessions[id]
	gone, wasExpired := s.expired[id]
	s.mu.Unlock()
	if sess == nil && wasExpired && gone.client == c {
		writeErr(w, http.StatusGone, fmt.Sprintf("session %s expired: it was not used for %s, so it was cleared "+
			"(its pending approvals denied, its sandbox closed); create a new session with POST /v1/sessions", id, s.limits.SessionIdle))
		return nil
	}
	if sess == nil || sess.client != c {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no session %q for this client", id))
		return nil
	}
	sess.lastUsed.Store(s.now().UnixNano())
	return sess
}

// expireIdle clears, until s.base ends, the sessions no request has used
// for SessionIdle, and forgets clients left without sessions.
func (s *Server) expireIdle() {
	tick := time.NewTicker(min(s.limits.SessionIdle/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-s.base.Done():
			return
		case <-tick.C:
			s.expireOnce()
		}
	}
}

// expireOnce does one pass of expireIdle.
func (s *Server) expireOnce() {
	now := s.now()
	cutoff := now.Add(-s.limits.SessionIdle).UnixNano()
	var idle []*apiSession
	s.mu.Lock()
	for id, x := range s.sessions {
		if x.busy.Load() == 0 && x.lastUsed.Load() < cutoff {
			idle = append(idle, x)
			delete(s.sessions, id)
			s.expired[id] = expiredSession{client: x.client, at: now}
		}
	}
	// Remember expiries for a day, and for the newest sessions only.
	for id, e := range s.expired {
		if now.Sub(e.at) > 24*time.Hour || len(s.expired) > 4*s.limits.MaxSessions {
			delete(s.expired, id)
		}
	}
	live := map[string]bool{}
	for _, x := range s.sessions {
		live[x.client] = true
	}
	for h, c := range s.clients {
		if !live[c] {
			delete(s.clients, h)
		}
	}
	s.mu.Unlock()
	for _, x := range idle {
		s.log.Info("clearing an idle API session", "session", x.ID, "client", x.client, "idle", s.limits.SessionIdle)
		s.runner.Load().Engine.ClearSession(x.Profile, x.ID)
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.sessions)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": s.version, "sessions": n,
		"pending_approvals": len(s.runner.Load().Engine.Gateway().List("", ""))})
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	cfg := s.runner.Load().Config
	if cfg == nil {
		writeErr(w, http.StatusServiceUnavailable, "the configuration could not be loaded")
		return
	}
	prof, ok := cfg.Profile(r.URL.Query().Get("profile"))
	if !ok {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("unknown profile %q", r.URL.Query().Get("profile")))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"profile": prof.Name, "tools": s.runner.Load().Tools().Schemas(prof)})
}

type createSessionReq struct {
	Profile  string `json:"profile"`
	Platform string `json:"platform"`
	Job      string `json:"job"`
	Cwd      string `json:"cwd"`
	// CallerCwd is where the client runs (tether run --session without
	// --cwd): the workspace only when the profile fixes none.
	CallerCwd string `json:"caller_cwd"`
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req createSessionReq
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	cfg := s.runner.Load().Config
	if cfg == nil {
		writeErr(w, http.StatusServiceUnavailable, "the configuration could not be loaded")
		return
	}
	prof, ok := cfg.Profile(req.Profile)
	if !ok {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("unknown profile %q", req.Profile))
		return
	}
	plat := approval.PlatformGateway
	if req.Platform != "" {
		p, err := approval.ParsePlatform(req.Platform)
		if err != nil {
			writeErr(w, http.StatusBadRequest, err.Error())
			return
		}
		if p == approval.PlatformCLI {
			writeErr(w, http.StatusBadRequest, "the cli platform needs a terminal; API sessions use gateway (answered through this API) or an unattended platform")
			return
		}
		plat = p
	}
	switch {
	case req.Cwd != "" && req.CallerCwd != "":
		writeErr(w, http.StatusBadRequest, "give cwd or caller_cwd, not both")
		return
	case req.CallerCwd != "" && prof.Terminal.Cwd == "":
		req.Cwd = req.CallerCwd
	}
	if req.Cwd != "" {
		if msg := checkSessionCwd(prof, req.Cwd); msg != "" {
			writeErr(w, http.StatusBadRequest, msg)
			return
		}
	}
	tok := r.Header.Get(HeaderClientToken)
	s.mu.Lock()
	if len(s.sessions) >= s.limits.MaxSessions {
		s.mu.Unlock()
		writeErr(w, http.StatusTooManyRequests, fmt.Sprintf("%d sessions are open; clear some (DELETE /v1/sessions/{id}) first", s.limits.MaxSessions))
		return
	}
	var client string
	if tok != "" {
		client = s.clients[sha256.Sum256([]byte(tok))]
		if client == "" {
			s.mu.Unlock()
			writeErr(w, http.StatusUnauthorized, "unknown "+HeaderClientToken+"; omit it to register a new client")
			return
		}
		n := 0
		for _, x := range s.sessions {
			if x.client == client {
				n++
			}
		}
		if n >= s.limits.MaxSessionsPerClient {
			s.mu.Unlock()
			writeErr(w, http.StatusTooManyRequests, fmt.Sprintf("this client has %d sessions open, its quota; clear some (DELETE /v1/sessions/{id}) first", n))
			return
		}
	} else {
		tok = randomID("tct_", 24)
		client = randomID("c-", 6)
		s.clients[sha256.Sum256([]byte(tok))] = client
	}
	sess := &apiSession{ID: randomID("s-", 8), Profile: prof.Name, Platform: plat, Job: req.Job, Cwd: req.Cwd,
		Created: s.now().UTC(), client: client, turns: map[string]*Turn{}}
	sess.lastUsed.Store(s.now().UnixNano())
	s.sessions[sess.ID] = sess
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"session": sess.ID, "client_token": tok, "client": client,
		"profile": sess.Profile, "platform": sess.Platform, "job": sess.Job})
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	c := s.client(r)
	if c == "" {
		writeErr(w, http.StatusUnauthorized, "missing or unknown "+HeaderClientToken+" header")
		return
	}
	s.mu.Lock()
	out := []*apiSession{}
	for _, x := range s.sessions {
		if x.client == c {
			out = append(out, x)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	sess := s.owned(w, r)
	if sess == nil {
		return
	}
	s.mu.Lock()
	delete(s.sessions, sess.ID)
	s.mu.Unlock()
	n := s.runner.Load().Engine.ClearSession(sess.Profile, sess.ID)
	writeJSON(w, http.StatusOK, map[string]any{"session": sess.ID, "cleared": true, "denied_pending": n})
}

type callsReq struct {
	Turn  string    `json:"turn"`
	Calls []RawCall `json:"calls"`
}

// maxCalls bounds one batch.
const maxCalls = 128

func (s *Server) calls(w http.ResponseWriter, r *http.Request) {
	sess := s.owned(w, r)
	if sess == nil {
		return
	}
	var req callsReq
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(req.Calls) > maxCalls {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("at most %d calls per batch", maxCalls))
		return
	}
	sess.busy.Add(1)
	defer func() {
		sess.lastUsed.Store(s.now().UnixNano())
		sess.busy.Add(-1)
	}()
	run := s.runner.Load()
	turn := sess.turn(req.Turn, run.guard(sess.Profile))
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()
	out := run.Execute(ctx, Batch{Profile: sess.Profile, Session: sess.ID, Platform: sess.Platform,
		Job: sess.Job, Cwd: sess.Cwd, Calls: req.Calls}, turn)
	writeJSON(w, http.StatusOK, out)
}

// turn returns the guardrail counters of turn id ("" is a fresh turn).
func (a *apiSession) turn(id string, cfg GuardConfig) *Turn {
	if id == "" {
		return NewTurn(cfg, a.Platform.Unattended())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.turns[id]; t != nil {
		return t
	}
	t := NewTurn(cfg, a.Platform.Unattended())
	a.turns[id] = t
	a.order = append(a.order, id)
	if len(a.order) > maxTurns {
		delete(a.turns, a.order[0])
		a.order = a.order[1:]
	}
	return t
}

func (s *Server) sessionApprovals(w http.ResponseWriter, r *http.Request) {
	sess := s.owned(w, r)
	if sess == nil {
		return
	}
	list := s.runner.Load().Engine.Gateway().List(sess.Profile, sess.ID)
	if list == nil {
		list = []approval.Pending{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": list})
}

func (s *Server) oldestApproval(w http.ResponseWriter, r *http.Request) {
	sess := s.owned(w, r)
	if sess == nil {
		return
	}
	p, ok := s.runner.Load().Engine.Gateway().Oldest(sess.Profile, sess.ID)
	if !ok {
		writeErr(w, http.StatusNotFound, "no pending approval in this session")
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// approvals lists the pending requests of every session of the client.
func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	c := s.client(r)
	if c == "" {
		writeErr(w, http.StatusUnauthorized, "missing or unknown "+HeaderClientToken+" header")
		return
	}
	out := []approval.Pending{}
	for _, sess := range s.clientSessions(c) {
		out = append(out, s.runner.Load().Engine.Gateway().List(sess.Profile, sess.ID)...)
	}
	slices.SortStableFunc(out, func(a, b approval.Pending) int { return a.Created.Compare(b.Created) })
	writeJSON(w, http.StatusOK, map[string]any{"pending": out})
}

func (s *Server) clientSessions(c string) []*apiSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*apiSession
	for _, x := range s.sessions {
		if x.client == c {
			out = append(out, x)
		}
	}
	return out
}

type decideReq struct {
	ID  string `json:"id"`  // a request id; "" means the oldest
	All bool   `json:"all"` // answer every pending request of the session
	answerFields
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	sess := s.owned(w, r)
	if sess == nil {
		return
	}
	var req decideReq
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	ans, err := req.answer(answeredBy(r, "api", sess.client))
	if err != nil {
		writeAnswerErr(w, err)
		return
	}
	g := s.runner.Load().Engine.Gateway()
	if req.All {
		n, err := g.AnswerAll(sess.Profile, sess.ID, ans)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, fmt.Sprintf("%d requests were answered, but: %v", n, err))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"answered": n})
		return
	}
	id, err := target(g, sess.Profile, sess.ID, req.ID, ans)
	if err == nil {
		err = g.Answer(sess.Profile, sess.ID, id, ans)
	}
	if err != nil {
		writeAnswerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answered": 1})
}

// Publish delivers a new pending request to the event streams of the
// client owning its session. It is the gateway's notify callback.
func (s *Server) Publish(_ context.Context, p approval.Pending) error {
	s.publish(p.Profile, p.Session, sseEvent{name: "approval", id: p.ID, data: p})
	return nil
}

// PublishResolution delivers a request's leaving the queue (answered,
// with who answered; expired; cancelled) to the event streams of the
// client owning its session. It is the gateway's Resolved callback.
func (s *Server) PublishResolution(r approval.Resolution) {
	s.answers.drop(r.ID)
	s.publish(r.Profile, r.Session, sseEvent{name: "approval_resolved", id: r.ID + "." + r.Outcome, data: r})
}

// publish queues ev on the streams of the client owning the session.
func (s *Server) publish(profile, session string, ev sseEvent) {
	s.mu.Lock()
	sess := s.sessions[session]
	var targets []*subscriber
	if sess != nil && sess.Profile == profile {
		for sub := range s.subs {
			if sub.client == sess.client {
				targets = append(targets, sub)
			}
		}
	}
	s.mu.Unlock()
	for _, sub := range targets {
		select {
		case sub.ch <- ev:
		default:
			s.log.Warn("event stream full; dropping an approval event (the queue's listing stays right)", "event", ev.name, "id", ev.id)
		}
	}
}

// events streams server-sent events of the client's sessions:
// "approval" carrying a Pending request, "approval_resolved" carrying the
// approval.Resolution of one that left the queue. Requests already
// pending when the stream opens are sent first.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	c := s.client(r)
	if c == "" {
		writeErr(w, http.StatusUnauthorized, "missing or unknown "+HeaderClientToken+" header")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, http.StatusInternalServerError, "streaming is not supported")
		return
	}
	sub := &subscriber{client: c, ch: make(chan sseEvent, 64)}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": tether events\n\n")
	send := func(ev sseEvent) bool {
		b, _ := json.Marshal(ev.data)
		_, err := fmt.Fprintf(w, "event: %s\nid: %s\ndata: %s\n\n", ev.name, ev.id, b)
		fl.Flush()
		return err == nil
	}
	seen := map[string]bool{}
	for _, sess := range s.clientSessions(c) {
		for _, p := range s.runner.Load().Engine.Gateway().List(sess.Profile, sess.ID) {
			seen[p.ID] = true
			if !send(sseEvent{name: "approval", id: p.ID, data: p}) {
				return
			}
		}
	}
	fl.Flush()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.base.Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case ev := <-sub.ch:
			// A request listed at the start may be announced again.
			if ev.name == "approval" {
				if seen[ev.id] {
					continue
				}
				seen[ev.id] = true
			}
			if !send(ev) {
				return
			}
		}
	}
}

func (s *Server) mandateJobs(w http.ResponseWriter, r *http.Request) {
	if s.mandates == nil {
		writeErr(w, http.StatusServiceUnavailable, "no mandate store")
		return
	}
	jobs, err := s.mandates.Jobs(r.Context())
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Each job with the interactive_violation that is enforced for calls
	// under the default profile, and where it comes from.
	profile, pv := "", ""
	if cfg := s.runner.Load().Config; cfg != nil {
		if p, ok := cfg.Profile(""); ok {
			profile, pv = p.Name, string(p.Mandate.InteractiveViolation)
		}
	}
	views := mandate.ViewJobs(jobs, profile, pv)
	writeJSON(w, http.StatusOK, map[string]any{"jobs": views})
}

func (s *Server) mandateExport(w http.ResponseWriter, r *http.Request) {
	if s.mandates == nil {
		writeErr(w, http.StatusServiceUnavailable, "no mandate store")
		return
	}
	ex, err := s.mandates.Export(r.Context(), r.PathValue("job"))
	if err != nil {
		writeErr(w, http.StatusNotFound, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ex)
}

func (s *Server) mandateDrift(w http.ResponseWriter, r *http.Request) {
	if s.mandates == nil {
		writeErr(w, http.StatusServiceUnavailable, "no mandate store")
		return
	}
	d, err := s.mandates.Drift(r.Context(), r.PathValue("job"))
	if err != nil {
		writeErr(w, http.StatusNotFound, err.Error())
		return
	}
	if d == nil {
		d = []mandate.DriftRecord{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": r.PathValue("job"), "drift": d})
}

type peerKey struct{}

// PeerContext stores the peer's uid of a unix-socket connection in ctx
// (http.Server.ConnContext), read from SO_PEERCRED.
func PeerContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return ctx
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return ctx
	}
	ctx = context.WithValue(ctx, peerKey{}, cred.Uid)
	if foreignPeer(cred) {
		ctx = context.WithValue(ctx, foreignKey{}, true)
	}
	return ctx
}

type foreignKey struct{}

// foreignPeer reports whether the unix-socket peer cred is neither root
// nor the daemon's own user, or lives in another user namespace than the
// daemon: a sandboxed process (its host uid is Runner.UserNSBase as root;
// rootless, its user namespace maps the user itself). The socket is the
// approval authority; a sandbox that reached it (the socket is hidden in
// every workspace that holds it, socketPaths) would approve its own
// calls. Unknowable is foreign. The namespace is read through the pid the
// kernel recorded at connect, which a peer that exits could leave to
// another process; the uid check has no such gap.
func foreignPeer(cred *unix.Ucred) bool {
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return true
	}
	if cred.Pid <= 0 {
		return true
	}
	own, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		return true
	}
	peer, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", cred.Pid))
	return err != nil || peer != own
}

// PeerUID returns the uid of the unix-socket peer of the request.
func PeerUID(ctx context.Context) (uint32, bool) {
	uid, ok := ctx.Value(peerKey{}).(uint32)
	return uid, ok
}

// closeSessions clears every session (denying their pending requests and
// closing their sandboxes) and returns how many there were.
func (s *Server) closeSessions() int {
	s.mu.Lock()
	list := make([]*apiSession, 0, len(s.sessions))
	for _, x := range s.sessions {
		list = append(list, x)
	}
	s.sessions = map[string]*apiSession{}
	s.mu.Unlock()
	for _, x := range list {
		s.runner.Load().Engine.ClearSession(x.Profile, x.ID)
	}
	return len(list)
}
