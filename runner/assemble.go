package runner

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// PipelineOptions configures NewPipeline: what the entry points (tether
// serve, tether mcp, tether run, tether shell, tether demo) differ in. Only
// Config is required; the zero value of every other field is valid.
type PipelineOptions struct {
	// Config is the loaded configuration; ConfigErr the error loading it
	// (every call is then refused).
	Config    *config.Config
	ConfigErr error
	// Sandbox is the template of one-shot runs (state root, cgroup prefix,
	// grace); Profile, ProfileLimits and ExecGate are set per call.
	Sandbox sandbox.Runner
	// Sessions holds the session sandboxes; nil creates one sharing
	// Sandbox's state root, cgroup prefix and grace. Its exec gate is the
	// engine's (set by NewPipeline unless already set).
	Sessions *sandbox.Sessions
	// Mandates says whether the state directory's mandate store is opened
	// (the mandate hook of terminal calls, the path rules of file tools,
	// the egress recorder): MandatesOpen always, MandatesForJob only when
	// Job is set (tether run: an ordinary run pays nothing for it),
	// MandatesNone never.
	Mandates MandateUse
	// Job is the mandate job of the entry point's calls, if it has one
	// (only read by MandatesForJob).
	Job string
	// Prompter answers approvals on the cli platform (a terminal prompter,
	// MCP elicitation); nil denies there.
	Prompter approval.Route
	// Gateway queues approvals of the gateway platform; nil creates one.
	Gateway *approval.Gateway
	// Yolo approves the approval tier for the whole process (never the
	// hardline floor, deny rules or a mandate).
	Yolo bool
	// Store, when set, is the open mandate store to use (Mandates is then
	// not read): a daemon's reload shares its store. Pipeline.Close closes it.
	Store *mandate.Store
	// ExecGates is Runner.ExecGates.
	ExecGates func(root string) sandbox.ExecGate
	// Guard sets the loop guardrail thresholds; Workers bounds parallel
	// calls (0: 2×GOMAXPROCS).
	Guard   GuardConfig
	Workers int
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// MandateUse says when NewPipeline opens the mandate store.
type MandateUse int

// Mandate store uses.
const (
	MandatesOpen   MandateUse = iota // always (the daemon, the MCP server, the demo)
	MandatesForJob                   // only for a job's calls (tether run)
	MandatesNone                     // never (tether shell's own sandbox)
)

// Pipeline is the assembled pipeline of one entry point: the runner (the
// four gates, scopes, masking, the audit log, sandbox placement), the
// approval engine with the entry point's routes and the mandate hook, the
// mandate store and the session sandboxes. Every entry point builds it
// with NewPipeline, so their gates cannot drift apart. The caller must
// call Close.
type Pipeline struct {
	Runner   *Runner
	Engine   *approval.Engine
	Mandates *mandate.Store // nil when not opened
	Sessions *sandbox.Sessions
}

// ErrNoConfig is returned by NewPipeline without a configuration.
var ErrNoConfig = errors.New("no configuration")

// NewPipeline opens the state the options ask for (mandate store, audit
// log, allowlists) and assembles the pipeline: the approval engine with
// the shared options (engineOptions: the mandate hook, secret redaction in
// questions and audit records, the smart route's key) plus the entry
// point's routes; the runner over it; the session sandboxes, gated by the
// engine's exec check and closed when the engine clears their session.
func NewPipeline(opts PipelineOptions) (*Pipeline, error) {
	if opts.Config == nil {
		return nil, fmt.Errorf("assembling the pipeline: %w (%v)", ErrNoConfig, opts.ConfigErr)
	}
	cfg := opts.Config
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	store := opts.Store
	if store == nil && (opts.Mandates == MandatesOpen || (opts.Mandates == MandatesForJob && opts.Job != "")) {
		s, err := mandate.Open(cfg.StateDir, mandate.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("opening the mandate store: %w", err)
		}
		store = s
	}
	eopts := engineOptions(cfg, store, log)
	eopts.Prompter, eopts.Gateway, eopts.Yolo = opts.Prompter, opts.Gateway, opts.Yolo
	eng, err := approval.NewEngine(cfg, eopts)
	if err != nil {
		if store != nil && opts.Store == nil {
			store.Close()
		}
		return nil, err
	}
	sessions := opts.Sessions
	if sessions == nil {
		sessions = &sandbox.Sessions{StateRoot: opts.Sandbox.StateRoot, CgroupPrefix: opts.Sandbox.CgroupPrefix,
			Grace: opts.Sandbox.Grace, UserNSBase: opts.Sandbox.UserNSBase}
	}
	eng.OnSessionClear(func(profile, session string) {
		if err := sessions.CloseSession(profile, session); err != nil {
			log.Warn("closing a session sandbox", "profile", profile, "session", session, "err", err)
		}
	})
	r := &Runner{Config: cfg, ConfigErr: opts.ConfigErr, Engine: eng, Mandates: store, Sandbox: opts.Sandbox,
		Sessions: sessions, Workers: opts.Workers, Guard: opts.Guard, Logger: log, ExecGates: opts.ExecGates}
	// Before any session opens: every session sandbox passes the exec gate.
	r.init()
	return &Pipeline{Runner: r, Engine: eng, Mandates: store, Sessions: sessions}, nil
}

// Close closes the session sandboxes, the audit log and the mandate store.
func (p *Pipeline) Close() error {
	var errs []error
	if err := p.Sessions.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing session sandboxes: %w", err))
	}
	if err := p.Engine.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the audit log: %w", err))
	}
	if p.Mandates != nil {
		if err := p.Mandates.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the mandate store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// engineOptions are the approval engine options shared by every entry
// point, which NewPipeline builds on: the mandate hook on the state's
// store (workspaces and interactive_violation from the profiles; none
// when store is nil), secret redaction in questions and audit records,
// and secrets for the smart route's API key. NewPipeline adds the entry
// point's routes (Prompter, Gateway) and Yolo.
func engineOptions(cfg *config.Config, store *mandate.Store, log *slog.Logger) approval.Options {
	opts := approval.Options{Logger: log,
		Redact: func(profile, text string) string {
			return ResolveSecretScope(cfg, nil, profile).Masker().Mask(text)
		},
		Secret: func(profile, name string) (string, error) {
			return ResolveSecretScope(cfg, nil, profile).Get(name, "")
		}}
	if store == nil {
		return opts
	}
	opts.Mandate = &mandate.Hook{Store: store, Workspace: func(profile string) string {
		p, ok := cfg.Profile(profile)
		if !ok {
			return ""
		}
		return p.Terminal.Cwd
	}, Violation: func(profile string) string {
		// The raw value: "" lets a job's own setting, then the default,
		// decide (mandate.ResolveViolation).
		p, ok := cfg.Profile(profile)
		if !ok {
			return ""
		}
		return string(p.Mandate.InteractiveViolation)
	}}
	return opts
}
