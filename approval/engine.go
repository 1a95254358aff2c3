package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/shellparse"
)

// errSessionCleared is the cause given to requests waiting in a cleared
// session.
var errSessionCleared = errors.New("the session was cleared")

// ErrDenied is wrapped by the error Decide returns for every decision that
// does not allow the command. Nothing ran.
var ErrDenied = errors.New("command not approved")

// DeniedError carries the denied Decision. errors.Is(err, ErrDenied) holds.
type DeniedError struct {
	Decision Decision
}

// Error returns the message for the model (Decision.Message).
func (e *DeniedError) Error() string { return e.Decision.Message }

// Is reports whether target is ErrDenied.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Platform is where a call comes from; it decides who can be asked.
type Platform string

// Platforms.
const (
	PlatformCLI         Platform = "cli"          // a person at a terminal
	PlatformGateway     Platform = "gateway"      // a messaging client answering through the gateway queue
	PlatformCron        Platform = "cron"         // scheduled run: nobody to ask
	PlatformWebhook     Platform = "webhook"      // triggered by a webhook: nobody to ask
	PlatformAPI         Platform = "api"          // programmatic API call: nobody to ask
	PlatformSingleQuery Platform = "single-query" // one-shot query: nobody to ask
)

// ParsePlatform parses a platform name.
func ParsePlatform(s string) (Platform, error) {
	switch p := Platform(s); p {
	case PlatformCLI, PlatformGateway, PlatformCron, PlatformWebhook, PlatformAPI, PlatformSingleQuery:
		return p, nil
	}
	return "", fmt.Errorf("invalid platform %q (want cli, gateway, cron, webhook, api or single-query)", s)
}

// Unattended reports whether nobody can answer a prompt on p.
func (p Platform) Unattended() bool {
	switch p {
	case PlatformCLI, PlatformGateway:
		return false
	}
	return true
}

// Request is one terminal call to decide.
type Request struct {
	Command  string
	Profile  string // "" for the config's default profile
	Session  string // session key; "" means no session (no session scope, no session yolo)
	Platform Platform
	Job      string // mandate job name, if the call belongs to one
	// Cwd is the workspace the command runs in; its project file
	// (.tether.yaml) narrows the profile.
	Cwd  string
	Home string // the user's home directory, for the analyzer
	// HostsAtRunTime: the command runs behind the egress proxy, which
	// records and enforces the hosts it contacts; the mandate then does
	// not guess hosts from the command's arguments.
	HostsAtRunTime bool
}

// Stage is the step of the approval order that decided.
type Stage string

// Stages, in DESIGN.md §3 order.
const (
	StageConfig      Stage = "config"       // unknown profile or platform
	StageParserLimit Stage = "parser-limit" // input over the size limit
	StageHardline    Stage = "hardline"     // the hardline floor
	StageDenyGlob    Stage = "deny-glob"    // a user deny glob
	StageMandate     Stage = "mandate"      // the job's mandate
	StageAnalysis    Stage = "analysis"     // nothing to approve
	StageYolo        Stage = "yolo"         // process or session yolo
	StageModeOff     Stage = "mode-off"     // approvals mode: off
	StageAllowlist   Stage = "allowlist"    // the permanent allowlist
	StageSession     Stage = "session"      // an earlier session approval
	StageRoute       Stage = "route"        // a route answered
	StageInternal    Stage = "internal"     // the engine could not decide (fails closed)
)

// Decision is the structured record of one decision, returned to the
// caller and appended to the audit log.
type Decision struct {
	ID        string        `json:"id"`
	Allowed   bool          `json:"allowed"`
	Stage     Stage         `json:"stage"`
	Route     string        `json:"route,omitempty"`
	Scope     Scope         `json:"scope,omitempty"`
	Rules     []string      `json:"rules,omitempty"`    // ids of the rules that matched
	Verdict   string        `json:"verdict,omitempty"`  // the analyzer's tier
	DecidedBy string        `json:"decided_by"`         // "engine", "process yolo", "cli", "gateway:…", "smart:model", "config:cron_mode", …
	Reason    string        `json:"reason"`             // for logs and people
	Message   string        `json:"message"`            // what the model is told
	DriftID   string        `json:"drift_id,omitempty"` // mandate block or escalation
	Allowlist string        `json:"allowlist,omitempty"`
	Warning   string        `json:"warning,omitempty"` // for the call's result (the mandate could not record it)
	Profile   string        `json:"profile"`
	Session   string        `json:"session,omitempty"`
	Platform  Platform      `json:"platform"`
	Job       string        `json:"job,omitempty"`
	Command   string        `json:"command"` // redacted
	Time      time.Time     `json:"time"`
	Elapsed   time.Duration `json:"elapsed_ns"`

	// Escalation says why only a person may answer (code the deny rules
	// cannot check, a mandate escalation): yolo, mode off, the allowlist
	// and session approvals did not apply. Empty for an ordinary question.
	Escalation string `json:"escalation,omitempty"`

	// Event says what the record is: "" for a terminal call's decision,
	// else one of the Event constants.
	Event Event `json:"event,omitempty"`
	// Approval is set on the decision of a call a person was asked about:
	// how the request ended (answered, timed-out, cancelled).
	Approval ApprovalOutcome `json:"approval,omitempty"`
	// Tool and Paths describe a tool call other than terminal (Record).
	Tool  string   `json:"tool,omitempty"`
	Paths []string `json:"paths,omitempty"`

	// Analysis is the analyzer's full result (not logged: it holds the
	// unredacted command).
	Analysis *Analysis `json:"-"`
	// MandatePaths is the job's enforced paths family when the call may
	// run under it (MandateVerdict.Paths): the sandbox applies it as a
	// Landlock ruleset. Nil without an enforced mandate.
	MandatePaths *MandatePaths `json:"-"`

	// confirm reports to the gateway Answer that delivered this
	// decision's answer whether its outcome is stored; storeErr is a
	// failure to store part of it (an "always" entry).
	confirm  func(error)
	storeErr error
	// untrack ends the tracking of a request that waited on a route
	// (ClearSession waits for it), once the decision is recorded.
	untrack func()
}

// Event is the kind of an audit record other than a terminal decision.
type Event string

// Audit record kinds.
const (
	// EventAsked: a person is being asked about a call (the record is
	// stored before the question goes out; the call's decision follows).
	EventAsked Event = "approval.asked"
	// EventToolCall: a tool other than terminal is about to run (stored
	// before it runs: no record, no effect).
	EventToolCall Event = "tool.call"
	// EventToolResult: how that tool call ended.
	EventToolResult Event = "tool.result"
)

// ApprovalOutcome is how an approval request to a person ended.
type ApprovalOutcome string

// Approval outcomes.
const (
	ApprovalAnswered  ApprovalOutcome = "answered"
	ApprovalTimedOut  ApprovalOutcome = "timed-out"
	ApprovalCancelled ApprovalOutcome = "cancelled" // the call's caller went away, the session was cleared, the daemon stopped
)

// Err returns nil for an allowed decision and a *DeniedError otherwise.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &DeniedError{Decision: d}
}

// MandateOutcome is a mandate's answer on one call.
type MandateOutcome int

// Mandate outcomes. The zero value is MandateNotApplicable.
const (
	MandateNotApplicable MandateOutcome = iota // no mandate, or observe mode
	MandateAllow                               // inside the mandate: the normal flow continues
	MandateBlock                               // outside it: refused, a drift record exists
	MandateEscalate                            // outside it, interactive: ask a person
)

// MandateCall is what the mandate hook sees.
type MandateCall struct {
	Profile  string
	Session  string
	Job      string
	Platform Platform
	Command  string
	Analysis *Analysis
	// HostsAtRunTime is Request.HostsAtRunTime.
	HostsAtRunTime bool
}

// MandateVerdict is the mandate hook's answer.
type MandateVerdict struct {
	Outcome MandateOutcome
	DriftID string // for block and escalate
	Reason  string
	// Warning is passed on in the decision (for example: the call could
	// not be recorded as an observation).
	Warning string
	// Paths, for a call of a job in enforce mode that may run, is what
	// the kernel is to hold its sandbox to; nil otherwise.
	Paths *MandatePaths
}

// MandatePaths is an enforced mandate's paths family for the kernel: the
// rules as written, the directory the relative ones are in, the version.
type MandatePaths struct {
	Rules []string
	// Hosts is the version's hosts family as written: the TCP ports the
	// kernel holds the sandbox's connects to (mandate.KernelPorts).
	Hosts     []string
	Workspace string
	Version   int
}

// MandateHook checks a call against its job's mandate (package mandate
// implements it). It must fail closed: an evaluation error is a block.
type MandateHook interface {
	CheckCall(ctx context.Context, call MandateCall) MandateVerdict
}

// DenyFunc matches a profile's deny globs against an analysed command and
// returns the finding of the glob that matched. See MatchDenyGlobs, the
// default.
type DenyFunc func(globs []string, a *Analysis) (Finding, bool)

// Options configures an Engine. The zero value is valid: no CLI prompter
// (CLI calls that need approval are denied), a gateway without notify
// callback, no mandate, the audit log in the state directory.
type Options struct {
	// Prompter answers on the CLI platform (OpenPrompter); nil denies
	// there. It must not be a nil pointer in a non-nil interface.
	Prompter Route
	// Gateway queues requests of the gateway platform; nil creates one.
	Gateway *Gateway
	// Mandate is consulted after the deny globs; nil means no mandates.
	Mandate MandateHook
	// Deny matches deny globs; nil uses MatchDenyGlobs.
	Deny DenyFunc
	// Audit receives every decision; nil opens <state_dir>/audit.jsonl.
	Audit AuditSink
	// Redact masks secret values of a profile in text, for records,
	// prompts and the smart route (runner.ProfileSecrets.Redact); nil
	// leaves text unchanged.
	Redact func(profile, text string) string
	// Secret returns a profile's secret, for smart.key_secret
	// (runner.ProfileSecrets.Secret); nil means no secrets.
	Secret func(profile, name string) (string, error)
	// HTTPClient is used by smart routes; nil uses a default client.
	HTTPClient *http.Client
	// Yolo approves the approval tier for the whole process (never the
	// hardline floor, deny globs or a mandate).
	Yolo bool
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
}

// Engine decides terminal calls in the DESIGN.md §3 order:
//
//  1. parser limits: input over the size limit is refused unanalysed;
//  2. the hardline floor: never runs, whatever else is configured;
//  3. the profile's deny globs (Options.Deny), then its ask globs
//     (MatchAskGlobs): a match goes to a person, and nothing of steps 5–7
//     nor the smart reviewer answers it (nor a command with code those
//     globs cannot see into, when the profile has any);
//  4. the job's mandate (Options.Mandate): block, or escalate to a person
//     (interactive platforms with interactive_violation: approve only);
//  5. commands with no finding run; process yolo, session yolo and
//     approvals mode off approve the approval tier (and nothing above it);
//  6. the permanent allowlist: the config's command_allowlist merged with
//     <state_dir>/allowlist/<profile>.json (MatchAllowlist);
//  7. session approvals: a session answer approves that command, normalised
//     (SessionKey), for that profile and session — never other commands that
//     trip the same rules — or the exact text of a command the analyser
//     cannot see into;
//  8. a route: unattended platforms follow cron_mode / unattended_mode;
//     mode smart asks the model first (ESCALATE falls through); the CLI
//     platform asks Options.Prompter, the gateway platform queues.
//
// Sessions are keyed by (profile, session): nothing crosses either. The
// engine is safe for concurrent use. Create it with NewEngine; call Close
// when done.
type Engine struct {
	cfg       *config.Config
	opts      Options
	gateway   *Gateway
	audit     AuditSink
	ownAudit  bool
	allowlist *AllowlistStore
	log       *slog.Logger
	yolo      atomic.Bool

	mu       sync.Mutex
	sessions map[sessionKey]*sessionState           // guarded by mu
	inflight map[sessionKey]map[string]*inflightReq // requests waiting on a route; guarded by mu
	smart    map[string]*Smart                      // per profile; guarded by mu
	hooks    []func(profile, session string)
}

type sessionKey struct{ profile, session string }

type sessionState struct {
	yolo     bool
	approved map[string]bool // SessionKey of each command approved for the session
}

// NewEngine returns an engine for cfg.
func NewEngine(cfg *config.Config, opts Options) (*Engine, error) {
	if cfg == nil {
		return nil, errors.New("creating approval engine: no configuration")
	}
	e := &Engine{
		cfg:       cfg,
		opts:      opts,
		gateway:   opts.Gateway,
		audit:     opts.Audit,
		allowlist: NewAllowlistStore(cfg.StateDir),
		log:       opts.Logger,
		sessions:  map[sessionKey]*sessionState{},
		inflight:  map[sessionKey]map[string]*inflightReq{},
		smart:     map[string]*Smart{},
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.opts.Now == nil {
		e.opts.Now = time.Now
	}
	if e.opts.Deny == nil {
		e.opts.Deny = MatchDenyGlobs
	}
	if e.gateway == nil {
		e.gateway = NewGateway(GatewayOptions{Logger: e.log})
	}
	if e.audit == nil {
		a, err := OpenFileAudit(AuditPath(cfg.StateDir))
		if err != nil {
			return nil, fmt.Errorf("creating approval engine: %w", err)
		}
		e.audit, e.ownAudit = a, true
	}
	e.yolo.Store(opts.Yolo)
	return e, nil
}

// Close releases the audit log if the engine opened it.
func (e *Engine) Close() error {
	if c, ok := e.audit.(interface{ Close() error }); ok && e.ownAudit {
		return c.Close()
	}
	return nil
}

// Gateway returns the engine's gateway queue (for the API and the CLI).
func (e *Engine) Gateway() *Gateway { return e.gateway }

// Allowlist returns the store of "always" approvals.
func (e *Engine) Allowlist() *AllowlistStore { return e.allowlist }

// SetYolo turns process yolo on or off.
func (e *Engine) SetYolo(on bool) { e.yolo.Store(on) }

// SetSessionYolo turns yolo on or off for one session of one profile.
func (e *Engine) SetSessionYolo(profile, session string, on bool) error {
	if session == "" {
		return errors.New("session yolo needs a session key")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.session(profile, session).yolo = on
	return nil
}

// OnSessionClear registers f to run when a session is cleared (the
// sessions code closes the session's sandboxes there).
func (e *Engine) OnSessionClear(f func(profile, session string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hooks = append(e.hooks, f)
}

// ClearSession denies and wakes the session's pending requests, drops its
// approvals, yolo flag and smart breaker, and runs the session-close
// hooks. It returns the number of waiting requests it denied, once their
// denials are in the audit log (or a bounded wait has passed).
func (e *Engine) ClearSession(profile, session string) int {
	profile = e.profileName(profile)
	e.mu.Lock()
	delete(e.sessions, sessionKey{profile, session})
	var woken []*inflightReq
	for _, r := range e.inflight[sessionKey{profile, session}] {
		r.cancel(errSessionCleared)
		woken = append(woken, r)
	}
	n := len(woken)
	if s := e.smart[profile]; s != nil {
		s.Reset(session)
	}
	hooks := append([]func(string, string){}, e.hooks...)
	e.mu.Unlock()
	// Requests queued but no longer waited on by anyone are dropped too.
	e.gateway.Clear(profile, session, errSessionCleared.Error())
	// What the caller acknowledges (the session cleared, n requests
	// denied) is on record first.
	timer := time.NewTimer(confirmTimeout)
	defer timer.Stop()
	for _, r := range woken {
		select {
		case <-r.done:
		case <-timer.C:
			e.log.Error("a cleared session's request was not recorded in time", "session", session)
		}
	}
	for _, h := range hooks {
		h(profile, session)
	}
	return n
}

// session returns the state of a session, creating it.
//
// Preconditions: e.mu is held.
func (e *Engine) session(profile, session string) *sessionState {
	k := sessionKey{e.profileName(profile), session}
	s := e.sessions[k]
	if s == nil {
		s = &sessionState{approved: map[string]bool{}}
		e.sessions[k] = s
	}
	return s
}

func (e *Engine) profileName(p string) string {
	if p == "" {
		return e.cfg.DefaultProfile
	}
	return p
}

// Decide runs the approval order for req and returns the decision. The
// error is nil exactly when the command may run; otherwise it is a
// *DeniedError (errors.Is(err, ErrDenied)) carrying the same decision.
func (e *Engine) Decide(ctx context.Context, req Request) (Decision, error) {
	start := e.opts.Now()
	d := Decision{ID: newID(), Profile: e.profileName(req.Profile), Session: req.Session,
		Platform: req.Platform, Job: req.Job, Time: start.UTC(), DecidedBy: "engine"}
	d.Command = e.redact(d.Profile, req.Command)
	d = e.decide(ctx, req, d)
	return e.finish(ctx, start, d)
}

// finish records d, the decision of a call started at start, and returns
// it with its error (see Decide): the person's answer is acknowledged
// only once the record is stored, and an allowed decision that cannot be
// recorded is a refusal.
func (e *Engine) finish(ctx context.Context, start time.Time, d Decision) (Decision, error) {
	d.Elapsed = e.opts.Now().Sub(start)
	if !d.Allowed && d.Message == "" {
		d.Message = denyMessage(d)
	}
	err := e.audit.Append(ctx, d)
	if err != nil {
		e.log.Error("appending to the audit log", "id", d.ID, "err", err)
		if d.Allowed {
			// An effect nobody can account for later is not allowed.
			d.Allowed, d.Stage, d.DecidedBy = false, StageInternal, "engine"
			d.Reason = fmt.Sprintf("the audit log is unavailable: %v", err)
			d.Message = denyMessage(d)
		}
		err = fmt.Errorf("appending the decision to the audit log: %w", err)
	}
	if d.confirm != nil {
		// The person's answer is acknowledged only now that its outcome
		// is on disk (or they learn that it is not).
		d.confirm(errors.Join(d.storeErr, err))
	}
	if d.untrack != nil {
		d.untrack()
	}
	return d, d.Err()
}

// Record appends d, an audit record of another gate (a file tool call,
// EventToolCall / EventToolResult), to the audit log, filling in its id
// and time when empty. The caller must not let the call have an effect
// when it fails.
func (e *Engine) Record(ctx context.Context, d Decision) error {
	if d.ID == "" {
		d.ID = newID()
	}
	if d.Time.IsZero() {
		d.Time = e.opts.Now().UTC()
	}
	d.Profile = e.profileName(d.Profile)
	if err := e.audit.Append(ctx, d); err != nil {
		return fmt.Errorf("appending to the audit log: %w", err)
	}
	return nil
}

func (e *Engine) redact(profile, s string) string {
	if e.opts.Redact == nil {
		return s
	}
	return e.opts.Redact(profile, s)
}

func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func deny(d Decision, stage Stage, reason string) Decision {
	d.Allowed, d.Stage, d.Reason = false, stage, reason
	return d
}

// denyMandate is a refusal by the job's mandate: its rule id is
// RuleMandate, whatever the analysis found, as for file tools.
func denyMandate(d Decision, reason string) Decision {
	d.Rules = []string{RuleMandate}
	return deny(d, StageMandate, reason)
}

func allow(d Decision, stage Stage, by, reason string) Decision {
	d.Allowed, d.Stage, d.DecidedBy, d.Reason = true, stage, by, reason
	return d
}

// decide is the approval order; it never returns an allowed decision by
// default.
func (e *Engine) decide(ctx context.Context, req Request, d Decision) Decision {
	prof, err := e.profile(req.Profile, req.Cwd)
	if err != nil {
		return deny(d, StageConfig, err.Error())
	}
	if _, err := ParsePlatform(string(req.Platform)); err != nil {
		return deny(d, StageConfig, err.Error())
	}

	// 1. Parser limits.
	a, err := Analyze(req.Command, AnalyzeOptions{Home: req.Home, Cwd: req.Cwd})
	if errors.Is(err, ErrTooLarge) {
		return deny(d, StageParserLimit, fmt.Sprintf("the command is over the size limit (%d bytes); it was not analysed", len(req.Command)))
	}
	if err != nil || a == nil {
		return deny(d, StageInternal, fmt.Sprintf("analysing the command: %v", err))
	}
	d.Analysis = a
	d.Verdict = a.Verdict.String()
	d.Rules = ruleIDs(a.Findings, TierApproval)

	// 2. The hardline floor.
	if a.Verdict == TierHardline {
		d.Rules = ruleIDs(a.Findings, TierHardline)
		return deny(d, StageHardline, "blocked by the hardline floor: "+describe(a.Findings, TierHardline))
	}

	// 3. User deny globs.
	if f, ok := e.opts.Deny(prof.Approvals.Deny, a); ok {
		d.Rules = []string{f.Rule}
		return deny(d, StageDenyGlob, fmt.Sprintf("%s (profile %s)", f.Description, prof.Name))
	}

	// Deny globs match normalised commands; they cannot see into an opaque
	// segment (eval "sudo …", bash -c "$x") or an unparseable command. When
	// a profile has deny rules, such a command goes to a person: yolo, mode
	// off, the allowlist and session approvals must not run what the deny
	// rules could not check.
	escalate := ""
	if len(prof.Approvals.Deny)+len(prof.Approvals.Ask) > 0 && (a.Script == nil || len(a.Script.Opaque) > 0) {
		escalate = "contains code the profile's deny and ask rules cannot check (" + describe(a.Findings, TierApproval) + ")"
	} else if f, ok := MatchAskGlobs(prof.Approvals.Ask, a); ok {
		// 3b. User ask globs: a person answers, even for a command the
		// catalog allows.
		d.Rules = append(d.Rules, f.Rule)
		escalate = fmt.Sprintf("%s (profile %s): %s", f.Description, prof.Name, f.Reason)
	}

	// 4. The job's mandate.
	if e.opts.Mandate != nil {
		v := e.opts.Mandate.CheckCall(ctx, MandateCall{Profile: prof.Name, Session: req.Session, Job: req.Job,
			Platform: req.Platform, Command: req.Command, Analysis: a, HostsAtRunTime: req.HostsAtRunTime})
		d.DriftID = v.DriftID
		d.Warning = v.Warning
		d.MandatePaths = v.Paths
		switch v.Outcome {
		case MandateNotApplicable, MandateAllow:
		case MandateBlock:
			return denyMandate(d, "outside the job's mandate: "+v.Reason)
		case MandateEscalate:
			// The mandate already resolved interactive_violation (the
			// job's setting, else the profile's): one source of truth.
			// An unattended platform still never asks anyone.
			if req.Platform.Unattended() {
				return denyMandate(d, "outside the job's mandate: "+v.Reason)
			}
			escalate = joinReasons(escalate, "outside the job's mandate: "+v.Reason)
		default:
			return denyMandate(d, fmt.Sprintf("the mandate returned an unknown outcome %d", v.Outcome))
		}
	}
	if escalate != "" {
		// A mandate escalation, or code the deny rules cannot check, is for
		// a person: yolo, mode off, the allowlist and session approvals do
		// not answer it.
		return e.route(ctx, req, prof, a, d, escalate)
	}

	// Nothing to approve.
	if a.Verdict == TierAllow {
		return allow(d, StageAnalysis, "engine", "no rule matched")
	}

	// 5. Yolo and mode: off bypass the approval tier only.
	if e.yolo.Load() {
		return allow(d, StageYolo, "process yolo", "yolo mode approves the approval tier")
	}
	e.mu.Lock()
	var sessYolo, sessApproved bool
	if req.Session != "" {
		if s := e.sessions[sessionKey{prof.Name, req.Session}]; s != nil {
			sessYolo = s.yolo
			sessApproved = s.approved[SessionKey(a)]
		}
	}
	e.mu.Unlock()
	if sessYolo {
		return allow(d, StageYolo, "session yolo", "session yolo approves the approval tier")
	}
	if prof.Approvals.Mode == config.ModeOff {
		return allow(d, StageModeOff, "config:approvals.mode", "approvals mode is off")
	}

	// 6. The permanent allowlist.
	entries, err := e.allowlistEntries(prof)
	if err != nil {
		e.log.Warn("reading the allowlist; ignoring it", "profile", prof.Name, "err", err)
	}
	if entry, ok := MatchAllowlist(entries, a); ok {
		d.Allowlist = entry
		return allow(d, StageAllowlist, "allowlist", fmt.Sprintf("allowed by the allowlist entry %q", entry))
	}

	// 7. Session approvals.
	if sessApproved {
		return allow(d, StageSession, "session approval", "approved earlier in this session")
	}

	// 8–9. The findings go to a route.
	return e.route(ctx, req, prof, a, d, "")
}

// profile returns the named profile ("" for the default) as the project
// file of workspace narrows it (config.LayerProject; workspace "" for
// none). A project file that cannot be applied is an error: the call is
// refused, never decided on the user's profile alone.
func (e *Engine) profile(name, workspace string) (*config.Profile, error) {
	p, ok := e.cfg.Profile(name)
	if !ok {
		return nil, fmt.Errorf("unknown profile %q", e.profileName(name))
	}
	lp, err := config.LayerProject(p, workspace)
	if err != nil {
		return nil, fmt.Errorf("the workspace's project file: %w", err)
	}
	return lp, nil
}

func (e *Engine) allowlistEntries(p *config.Profile) ([]string, error) {
	entries := append([]string{}, p.Approvals.CommandAllowlist...)
	stored, err := e.allowlist.Load(p.Name)
	for _, s := range stored {
		entries = append(entries, s.Pattern)
	}
	return entries, err
}

// route asks the platform's route. escalated is non-empty for a mandate
// escalation (a person must answer).
func (e *Engine) route(ctx context.Context, req Request, prof *config.Profile, a *Analysis, d Decision, escalated string) (out Decision) {
	d.Escalation = escalated
	q := Question{ID: d.ID, Profile: prof.Name, Session: req.Session, Platform: req.Platform,
		Command: d.Command, Findings: redactFindings(a.Findings, func(s string) string { return e.redact(prof.Name, s) }),
		Cwd: req.Cwd, Reason: escalated, Created: d.Time, Scopes: []Scope{ScopeOnce}, raw: req.Command}
	if escalated == "" {
		// An escalated question (an ask rule, a mandate escalation, code
		// the deny rules cannot check) is asked every time: session
		// approvals and the allowlist are not consulted for it, so an
		// answer covering more than this call would be a promise not kept.
		if req.Session != "" {
			q.Scopes = append(q.Scopes, ScopeSession)
		}
		q.Scopes = append(q.Scopes, ScopeAlways)
	}
	q.Covers = e.covers(prof.Name, req.Session, a, q.Scopes)

	if req.Platform.Unattended() {
		u := Unattended{Policy: prof.Approvals.UnattendedMode, Key: "approvals.unattended_mode"}
		if req.Platform == PlatformCron {
			u = Unattended{Policy: prof.Approvals.CronMode, Key: "approvals.cron_mode"}
		}
		if escalated != "" {
			u.Policy = config.UnattendedDeny
		}
		ans, _ := u.Ask(ctx, q)
		return e.apply(d, u.Name(), q, ans, nil, a)
	}

	ctx, done := e.track(ctx, q.Profile, q.Session, q.ID)
	// The request stays tracked until Decide has recorded its decision.
	defer func() { out.untrack = done }()

	if prof.Approvals.Mode == config.ModeSmart && escalated == "" {
		smart := e.smartRoute(prof)
		sctx, cancel := context.WithTimeout(ctx, prof.Approvals.Smart.Timeout.D())
		ans, err := smart.Ask(sctx, Question{ID: q.ID, Profile: q.Profile, Session: q.Session, Platform: q.Platform,
			Command: q.Command, Findings: q.Findings, Cwd: q.Cwd, Scopes: []Scope{ScopeOnce}, Created: q.Created,
			Covers: map[Scope]string{ScopeOnce: q.Covers[ScopeOnce]}})
		cancel()
		if err == nil && ans.Verdict != VerdictEscalate {
			ans.Scope = ScopeOnce // a model's approval covers this call only
			return e.apply(d, smart.Name(), q, ans, nil, a)
		}
		q.Reason = "the smart reviewer escalated: " + ans.Reason
		if err != nil {
			q.Reason = "the smart reviewer failed: " + err.Error()
		}
	}

	return e.askPerson(ctx, prof, q, d, a, describe(a.Findings, TierApproval))
}

// askPerson asks q of the person the platform reaches (the CLI prompter,
// the gateway queue) and turns the answer into d. what describes the
// findings for the audit record of the question. Unattended platforms
// must have been answered before.
func (e *Engine) askPerson(ctx context.Context, prof *config.Profile, q Question, d Decision, a *Analysis, what string) Decision {
	var human Route
	switch q.Platform {
	case PlatformCLI:
		if e.opts.Prompter != nil {
			human = e.opts.Prompter
		}
	case PlatformGateway:
		human = e.gateway
	}
	if human == nil {
		d.Route = string(q.Platform)
		reason := "nobody can be asked: no terminal prompt is available"
		if d.Escalation != "" {
			reason += "; only a person may approve it: " + d.Escalation
		}
		return deny(d, StageRoute, reason)
	}
	timeout := prof.Approvals.Timeout.D()
	q.Deadline = d.Time.Add(timeout)
	q.confirms = true
	// The request is on record before anyone sees it: a question nobody
	// can account for later is not asked.
	asked := d
	asked.Event, asked.Route, asked.Reason = EventAsked, human.Name(), joinReasons(q.Reason, what)
	asked.Allowed, asked.Stage = false, StageRoute
	if err := e.audit.Append(ctx, asked); err != nil {
		d.Route = human.Name()
		return deny(d, StageInternal, fmt.Sprintf("the audit log is unavailable, so nobody was asked: %v", err))
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ans, err := human.Ask(hctx, q)
	if err == nil && errors.Is(context.Cause(ctx), errSessionCleared) {
		// Clearing the session both cancels the wait and denies the
		// queued request; whichever the waiter saw first, it was
		// cancelled, and clearing wins over an answer given meanwhile.
		err = errSessionCleared
	}
	d.Approval = ApprovalAnswered
	if err != nil {
		d.Approval = ApprovalCancelled
		switch {
		case errors.Is(context.Cause(ctx), errSessionCleared):
			err = errSessionCleared
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			d.Approval = ApprovalTimedOut
			err = fmt.Errorf("no answer within %s: silence is not consent", timeout)
		}
	}
	return e.apply(d, human.Name(), q, ans, err, a)
}

// apply turns a route's answer into the decision, recording session and
// always approvals.
func (e *Engine) apply(d Decision, route string, q Question, ans Answer, err error, a *Analysis) Decision {
	d.Route = route
	d.confirm = ans.confirm
	if ans.By != "" {
		d.DecidedBy = ans.By
	} else {
		d.DecidedBy = route
	}
	if err != nil {
		return deny(d, StageRoute, err.Error())
	}
	if ans.Verdict != VerdictApprove {
		reason := ans.Reason
		if reason == "" {
			reason = "denied by " + d.DecidedBy
		}
		return deny(d, StageRoute, reason)
	}
	scope := ans.Scope
	if scope == "" || !q.Allows(scope) {
		scope = ScopeOnce
	}
	d.Scope = scope
	reason := fmt.Sprintf("approved (%s) by %s", scope, d.DecidedBy)
	switch scope {
	case ScopeSession:
		e.mu.Lock()
		e.session(q.Profile, q.Session).approved[SessionKey(a)] = true
		e.mu.Unlock()
	case ScopeAlways:
		entries := AllowlistKeys(a)
		add := make([]AllowEntry, len(entries))
		for i, p := range entries {
			add[i] = AllowEntry{Pattern: p, Added: d.Time, By: d.DecidedBy, Decision: d.ID}
		}
		if err := e.allowlist.Add(q.Profile, add...); err != nil {
			e.log.Error("saving an always approval", "profile", q.Profile, "err", err)
			d.storeErr = fmt.Errorf("saving the always approval: %w", err)
			d.Scope = ScopeOnce
			reason += fmt.Sprintf("; saving it to the allowlist failed (%v), so it covers this call only", err)
		}
	}
	return allow(d, StageRoute, d.DecidedBy, reason)
}

// track registers a request waiting on a route so ClearSession can wake
// it; done unregisters it.
func (e *Engine) track(ctx context.Context, profile, session, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if session == "" {
		return ctx, func() { cancel(nil) }
	}
	k := sessionKey{profile, session}
	r := &inflightReq{cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	if e.inflight[k] == nil {
		e.inflight[k] = map[string]*inflightReq{}
	}
	e.inflight[k][id] = r
	e.mu.Unlock()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			e.mu.Lock()
			if e.inflight[k][id] == r {
				delete(e.inflight[k], id)
			}
			if len(e.inflight[k]) == 0 {
				delete(e.inflight, k)
			}
			e.mu.Unlock()
			cancel(nil)
			close(r.done)
		})
	}
}

// inflightReq is a request waiting on a route: ClearSession cancels it
// and waits for done, closed once its decision is recorded.
type inflightReq struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func (e *Engine) smartRoute(p *config.Profile) *Smart {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.smart[p.Name]; s != nil {
		return s
	}
	key := ""
	if p.Approvals.Smart.KeySecret != "" && e.opts.Secret != nil {
		k, err := e.opts.Secret(p.Name, p.Approvals.Smart.KeySecret)
		if err != nil {
			e.log.Error("reading the smart route's key", "profile", p.Name, "err", err)
		}
		key = k
	}
	s := NewSmart(p.Approvals.Smart, key, e.opts.HTTPClient)
	e.smart[p.Name] = s
	return s
}

// SessionKey is what a session approval of a records and later matches:
// each of its simple commands in order, one per line, normalised so that
// only spelling that cannot change what runs is folded — quoting of literal
// words, blanks — while the program keeps the path it was named by ("./rm"
// is not "rm") and a word with an expansion keeps its source text ("$HOME"
// is not '$HOME'). A command that can only be matched exactly
// (unparseable, opaque, defining functions) is "=" and its exact text.
// So "approve for this session" covers that command and nothing else:
// another command that trips the same rules is asked again.
func SessionKey(a *Analysis) string {
	if exactOnly(a) {
		return "=" + strings.TrimSpace(a.Command)
	}
	lines := make([]string, len(a.Script.Commands))
	for i, c := range a.Script.Commands {
		lines[i] = sessionCommandText(c)
	}
	return strings.Join(lines, "\n")
}

// sessionCommandText is one line of SessionKey.
func sessionCommandText(c shellparse.Command) string {
	word := func(w shellparse.Word) string {
		switch {
		case !w.Literal:
			return w.Raw
		case strings.ContainsAny(w.Value, "$`"):
			// quoteWord leaves "$" bare (allowlist text keeps it so); here
			// the literal '$HOME' must not read as the expansion $HOME.
			if q, err := syntax.Quote(w.Value, syntax.LangBash); err == nil {
				return q
			}
		}
		return quoteWord(w.Value)
	}
	var parts []string
	for _, w := range c.Wrappers {
		parts = append(parts, quoteWord(w.Program))
		for _, a := range w.Args {
			parts = append(parts, quoteWord(a))
		}
	}
	for _, f := range c.EnvFlags {
		parts = append(parts, quoteWord(f))
	}
	for _, e := range c.Env {
		parts = append(parts, e.Name+"="+word(e.Value))
	}
	parts = append(parts, quoteWord(c.Spelling))
	for _, a := range c.Args {
		parts = append(parts, word(a))
	}
	for _, r := range c.Redirs {
		p := r.Fd + redirOps[r.Mode] + word(r.Target)
		if r.Body != "" {
			// A heredoc's text is part of what runs: it stays in the key.
			p += " " + strconv.Quote(r.Body)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// covers states, for each scope offered, exactly what an approval with that
// scope lets run (Question.Covers). The keys are redacted like the command.
func (e *Engine) covers(profile, session string, a *Analysis, scopes []Scope) map[Scope]string {
	c := map[Scope]string{ScopeOnce: "this call only; the same command is asked again next time"}
	for _, s := range scopes {
		switch s {
		case ScopeSession:
			key := e.redact(profile, strings.ReplaceAll(SessionKey(a), "\n", " ; "))
			c[s] = fmt.Sprintf("this command (normalised: %s) until session %s is cleared; "+
				"any other command is asked again, even one flagged for the same reasons", key, session)
		case ScopeAlways:
			keys := AllowlistKeys(a)
			for i, k := range keys {
				keys[i] = e.redact(profile, k)
			}
			c[s] = fmt.Sprintf("adds %s to profile %s's permanent allowlist: exactly that, normalised, "+
				"then runs unasked in every session until the entry is removed; any other command is asked again",
				strings.Join(keys, " and "), profile)
		}
	}
	return c
}

func ruleIDs(fs []Finding, tier Tier) []string {
	var ids []string
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Tier >= tier && !seen[f.Rule] {
			seen[f.Rule] = true
			ids = append(ids, f.Rule)
		}
	}
	return ids
}

func describe(fs []Finding, tier Tier) string {
	var parts []string
	for _, f := range fs {
		if f.Tier == tier {
			parts = append(parts, fmt.Sprintf("%s (%s)", f.Description, f.Rule))
		}
	}
	return strings.Join(parts, "; ")
}

func redactFindings(fs []Finding, redact func(string) string) []Finding {
	out := make([]Finding, len(fs))
	for i, f := range fs {
		f.Text = redact(f.Text)
		out[i] = f
	}
	return out
}

// denyMessage is what the model is told: what happened, that nothing ran,
// and not to work around it.
func denyMessage(d Decision) string {
	var what string
	switch d.Stage {
	case StageHardline:
		what = "this command is blocked by tether's hardline floor and can never run"
	case StageDenyGlob:
		what = "this command matches a deny rule of the user's configuration"
	case StageMandate:
		what = "this command is outside the job's approved mandate"
	case StageParserLimit:
		what = "this command is too large to analyse"
	case StageRoute:
		what = "this command was not approved"
	default:
		what = "this command could not be authorised"
	}
	msg := fmt.Sprintf("Not run: %s (%s). Nothing was executed. Do not retry this command or a variation of it; "+
		"explain to the user what you wanted to do and let them decide.", what, d.Reason)
	if d.DriftID != "" {
		msg += " Drift record: " + d.DriftID + "."
	}
	return msg
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
