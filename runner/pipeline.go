package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/sandbox"
)

// Runner carries batches of tool calls through the four gates. Fields
// must not change after first use; a Runner is safe for concurrent use.
type Runner struct {
	// Config is the loaded configuration; ConfigErr the error loading it
	// (every call is then refused).
	Config    *config.Config
	ConfigErr error
	// Registry holds the tools; nil means the built-in tools.
	Registry *Registry
	// Engine decides terminal calls (gate 3). Required for terminal.
	Engine *approval.Engine
	// Mandates, when set, checks file-tool calls of a job's runs against
	// the job's mandate (terminal calls reach it through the engine's
	// hook).
	Mandates *mandate.Store
	// Sandbox is the template for one-shot runs (state root, cgroup
	// prefix); Profile and ProfileLimits are set per call.
	Sandbox sandbox.Runner
	// Sessions holds session sandboxes; nil runs every command one-shot.
	// Unless its ExecGate is set, the first call sets it to the engine's
	// exec check (as one-shot sandboxes get).
	Sessions *sandbox.Sessions
	// Pools holds the pre-started sandboxes of one-shot commands (the
	// profile's terminal.pool); nil builds every one-shot sandbox per
	// command.
	Pools *sandbox.Pools
	// Workers bounds how many calls of a segment run at once; 0 means
	// 2×GOMAXPROCS.
	Workers int
	// Guard sets the loop guardrail thresholds.
	Guard GuardConfig
	// Protected are absolute paths the model may never write (tether's
	// config file and state directory are always added).
	Protected []string
	// LookupEnv reads the daemon's environment for env_passthrough; nil
	// means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
	// Audit receives the records of calls the approval engine does not
	// decide (file tools, process); nil means the Engine's audit log, or
	// with no Engine the file audit log of the state directory.
	Audit approval.AuditSink
	// ExecGates, when set, makes the exec gate of the sandboxes of a call
	// whose workspace is root ("" for session sandboxes): the daemon's,
	// which decides with whichever configuration it has loaded at the
	// exec. Nil means this Runner's engine (engineExecGate).
	ExecGates func(root string) sandbox.ExecGate

	once     sync.Once
	reg      *Registry
	log      *slog.Logger
	sem      chan struct{}
	audit    approval.AuditSink
	auditErr error  // opening the state directory's audit log failed
	policy   string // PolicyDigest(Config), for pools
}

func (r *Runner) init() {
	r.once.Do(func() {
		r.reg = r.Registry
		if r.reg == nil {
			r.reg = Builtins()
		}
		if r.Sessions != nil && r.Sessions.ExecGate == nil {
			// Before the first call, so before the first session.
			r.Sessions.ExecGate = r.execGate("")
		}
		r.log = r.Logger
		if r.log == nil {
			r.log = slog.New(slog.DiscardHandler)
		}
		n := r.Workers
		if n <= 0 {
			n = 2 * runtime.GOMAXPROCS(0)
		}
		r.sem = make(chan struct{}, n)
		r.policy = PolicyDigest(r.Config)
		switch {
		case r.Audit != nil:
			r.audit = r.Audit
		case r.Engine != nil:
			r.audit = engineAudit{r.Engine}
		case r.Config != nil:
			// A Runner lives as long as its process: the log stays open.
			r.audit, r.auditErr = approval.OpenFileAudit(approval.AuditPath(r.Config.StateDir))
		default:
			r.auditErr = errors.New("no state directory for the audit log")
		}
	})
}

// engineAudit appends through the engine, which fills in ids and times.
type engineAudit struct{ e *approval.Engine }

func (a engineAudit) Append(ctx context.Context, d approval.Decision) error {
	return a.e.Record(ctx, d)
}

// Tools returns the registry in use.
func (r *Runner) Tools() *Registry { r.init(); return r.reg }

// Batch is one model response's tool calls, with where they come from.
type Batch struct {
	Profile  string            // "" for the default profile
	Session  string            // session key; "" for none
	Platform approval.Platform // who can be asked
	Job      string            // mandate job, if any
	Cwd      string            // the caller's cwd, used when the profile sets none
	Calls    []RawCall
}

// BatchResult holds one result per call, in call order.
type BatchResult struct {
	Results []Result `json:"results"`
	// EndTurn is set when the turn must end (too many all-invalid
	// batches, or a halted turn); EndReason says why.
	EndTurn   bool   `json:"end_turn"`
	EndReason string `json:"end_reason,omitempty"`
}

// Env is what a handler needs about the call's profile and origin.
type Env struct {
	Runner   *Runner
	Profile  *config.Profile
	Policy   TerminalPolicy
	Secrets  SecretScope
	Session  string
	Platform approval.Platform
	Job      string
	// Root is the canonical absolute workspace.
	Root string
}

// Execute runs a batch (turn holds the guardrail counters of the turn it
// belongs to; nil starts a new one). It never returns fewer results than
// calls.
func (r *Runner) Execute(ctx context.Context, b Batch, turn *Turn) BatchResult {
	r.init()
	if b.Platform == "" {
		b.Platform = approval.PlatformAPI
	}
	if turn == nil {
		turn = NewTurn(r.guard(b.Profile), b.Platform.Unattended())
	}
	out := BatchResult{Results: make([]Result, len(b.Calls))}

	env, err := r.env(ctx, b)
	if err != nil {
		for i, c := range b.Calls {
			res := refused(GatePlacement, "placement.terminal-policy", err.Error()+"; nothing ran")
			res.CallID, res.Tool, res.Effect = c.ID, c.Name, EffectNone
			out.Results[i] = res
		}
		return out
	}
	turn.Watch(env.Root)
	ctx = WithTerminalScope(ctx, ResolveTerminalScope(r.Config, r.ConfigErr, b.Profile, b.Cwd))
	ctx = WithSecretScope(ctx, env.Secrets)

	// Gate 1: visibility and validation.
	visible := r.reg.Visible(env.Profile)
	calls := make([]*Call, len(b.Calls))
	valid := 0
	for i, raw := range b.Calls {
		c, bad := Validate(visible, raw)
		if bad != nil {
			out.Results[i] = *bad
			continue
		}
		calls[i] = c
		valid++
	}
	if end, why := turn.Batch(len(b.Calls) > 0 && valid == 0); end {
		out.EndTurn, out.EndReason = true, why
		return out
	}

	// The batch's approval requests are asked together (predecide.go).
	ctx, stopAsking := r.predecide(ctx, env, calls)
	defer stopAsking()

	// Gate 2: placement.
	idx := make([]int, 0, valid)
	acc := make([]Access, 0, valid)
	for i, c := range calls {
		if c == nil {
			continue
		}
		idx = append(idx, i)
		acc = append(acc, r.access(env, c))
	}
	for _, seg := range Plan(acc) {
		var ready []int
		for _, j := range seg.Calls {
			i := idx[j]
			if ctx.Err() != nil {
				// The caller is gone: nothing more starts.
				res := refused(GatePlacement, "placement.cancelled", "the request was cancelled before the call ran; nothing ran")
				res.CallID, res.Tool, res.Effect = calls[i].ID, calls[i].Name, EffectNone
				out.Results[i] = res
				continue
			}
			if stop := turn.Before(calls[i]); stop != nil {
				out.Results[i] = *stop
				continue
			}
			ready = append(ready, i)
		}
		var wg sync.WaitGroup
		for _, i := range ready {
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case r.sem <- struct{}{}:
				case <-ctx.Done():
					res := refused(GatePlacement, "placement.cancelled", "the request was cancelled before the call ran; nothing ran")
					res.CallID, res.Tool, res.Effect = calls[i].ID, calls[i].Name, EffectNone
					out.Results[i] = res
					return
				}
				defer func() { <-r.sem }()
				out.Results[i] = r.run(ctx, env, calls[i])
			}()
		}
		wg.Wait()
		for _, i := range ready {
			out.Results[i] = turn.After(calls[i], out.Results[i])
		}
	}
	if why := turn.Halted(); why != "" {
		out.EndTurn, out.EndReason = true, "the turn was halted: "+why
	}
	return out
}

// run executes one call and classifies its result.
func (r *Runner) run(ctx context.Context, env *Env, c *Call) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("tool handler panicked", "tool", c.Name, "panic", p)
			res = failed(fmt.Sprintf("the %s tool failed internally; whether it changed anything is unknown", c.Name), nil)
			res.CallID, res.Tool = c.ID, c.Name
			res = Classify(c.Tool, res)
		}
	}()
	var rec *approval.Decision
	if !c.Tool.Decided {
		var stop *Result
		if rec, stop = r.auditCall(ctx, env, c); stop != nil {
			return *stop
		}
	}
	ctx, notes := withCallNotes(ctx)
	res = c.Tool.Handler(ctx, env, c)
	res.CallID, res.Tool = c.ID, c.Name
	if res.Decision != nil && res.Decision.Warning != "" {
		notes.add(res.Decision.Warning)
	}
	res.Warning = notes.join(res.Warning)
	if res.Gate == "" {
		res.Gate = GateExecution
	}
	if m := env.Secrets.Masker(); m != nil {
		res.Message = m.Mask(res.Message)
		maskOutput(m, res.Output)
	}
	res = Classify(c.Tool, res)
	if rec != nil {
		r.auditResult(ctx, *rec, &res)
	}
	return res
}

// auditCall stores the record of a call about to run. When it cannot, it
// returns the refusal to give instead: like a terminal call, a file tool
// has no effect nobody could account for later.
func (r *Runner) auditCall(ctx context.Context, env *Env, c *Call) (*approval.Decision, *Result) {
	rec := approval.Decision{ID: randomID("", 8), Event: approval.EventToolCall, Tool: c.Name,
		Profile: env.Profile.Name, Session: env.Session, Platform: env.Platform, Job: env.Job,
		DecidedBy: "runner", Time: time.Now().UTC(), Reason: "about to run"}
	if c.Tool.Paths != nil {
		rec.Paths = c.Tool.Paths(c.Args)
		if m := env.Secrets.Masker(); m != nil {
			for i, p := range rec.Paths {
				rec.Paths[i] = m.Mask(p)
			}
		}
	}
	err := r.auditErr
	if err == nil {
		err = r.audit.Append(ctx, rec)
	}
	if err != nil {
		r.log.Error("appending a tool call to the audit log", "tool", c.Name, "err", err)
		res := refused(GateAuthorization, "audit.unavailable",
			"the audit log is unavailable, so the call was not run; nothing was read or written")
		res.CallID, res.Tool = c.ID, c.Name
		res = Classify(c.Tool, res)
		return nil, &res
	}
	return &rec, nil
}

// auditResult stores how the call recorded by rec ended. The call has
// already happened: a failure is a warning in its result, not a refusal.
func (r *Runner) auditResult(ctx context.Context, rec approval.Decision, res *Result) {
	rec.Event, rec.Time = approval.EventToolResult, time.Now().UTC()
	rec.Allowed = res.Ran
	rec.Stage = approval.Stage(res.Gate)
	if res.Rule != "" {
		rec.Rules = []string{res.Rule}
	}
	rec.Reason = string(res.Class) + " (" + string(res.Effect) + ")"
	rec.Message = res.Message
	if len(rec.Message) > 512 {
		rec.Message = rec.Message[:512] + "…"
	}
	if err := r.audit.Append(ctx, rec); err != nil {
		r.log.Error("appending a tool result to the audit log", "tool", res.Tool, "err", err)
		w := "the audit record of this call's result could not be stored (" + err.Error() + ")"
		if res.Warning != "" {
			w = res.Warning + "; " + w
		}
		res.Warning = w
	}
}

func maskOutput(m *Masker, out map[string]any) {
	for k, v := range out {
		if s, ok := v.(string); ok {
			out[k] = m.Mask(s)
		}
	}
}

// env resolves the batch's profile and workspace.
func (r *Runner) env(ctx context.Context, b Batch) (*Env, error) {
	if r.ConfigErr != nil || r.Config == nil {
		return nil, fmt.Errorf("%w: the configuration could not be loaded", ErrTerminalPolicyUnavailable)
	}
	prof, ok := r.Config.Profile(b.Profile)
	if !ok {
		return nil, fmt.Errorf("%w: unknown profile %q", ErrTerminalPolicyUnavailable, b.Profile)
	}
	pol, err := ResolveTerminalScope(r.Config, r.ConfigErr, b.Profile, b.Cwd).Policy()
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(pol.Cwd)
	if err != nil {
		return nil, fmt.Errorf("%w: resolving the workspace: %w", ErrTerminalPolicyUnavailable, err)
	}
	if root == "/" {
		// The whole host is not a workspace: file tools would reach
		// everything, and the sandbox would bind / read-write.
		return nil, fmt.Errorf("%w: the workspace is /; set terminal.cwd to a project directory", ErrTerminalPolicyUnavailable)
	}
	// The profile as the workspace's .tether.yaml narrows it (toolsets,
	// file path rules); the terminal policy above is narrowed the same way.
	if prof, err = config.LayerProject(prof, root); err != nil {
		return nil, fmt.Errorf("%w: the workspace's project file: %w", ErrTerminalPolicyUnavailable, err)
	}
	return &Env{Runner: r, Profile: prof, Policy: pol, Secrets: ResolveSecretScope(r.Config, r.ConfigErr, b.Profile),
		Session: b.Session, Platform: b.Platform, Job: b.Job, Root: root}, nil
}

// access describes what c will touch, for planning. Paths that cannot be
// resolved make the call a barrier (it will fail on its own).
func (r *Runner) access(env *Env, c *Call) Access {
	a := Access{Kind: c.Tool.Kind}
	if c.Tool.Paths == nil {
		return a
	}
	for _, p := range c.Tool.Paths(c.Args) {
		rel, err := resolveIn(env.Root, p)
		if err != nil {
			return Access{Kind: KindEffect}
		}
		a.Paths = append(a.Paths, filepath.Join(env.Root, rel))
	}
	return a
}

// protected returns the absolute paths of tether's own config and state
// (and Protected): never readable or writable by the model, hidden in
// every sandbox.
func (r *Runner) protected() []string {
	return append(append([]string{}, r.Protected...), config.OwnPaths(r.Config)...)
}

// runMode maps a platform to the mandate run mode (as mandate.Hook does).
func runMode(p approval.Platform) (mandate.RunMode, string) {
	switch p {
	case approval.PlatformCLI, approval.PlatformGateway:
		return mandate.RunInteractive, ""
	case approval.PlatformCron:
		return mandate.RunCron, "platform:cron"
	case approval.PlatformWebhook, approval.PlatformAPI, approval.PlatformSingleQuery:
		return mandate.RunCron, "platform:" + string(p)
	}
	return mandate.RunUnknown, ""
}

// checkMandate records a file-tool call of a job's run and enforces the
// job's mandate on it. A nil result lets the call go on. File tools have
// no approval flow: an escalation is a block.
func (env *Env) checkMandate(ctx context.Context, tool string, paths []string, wrote bool) *Result {
	r := env.Runner
	if env.Job == "" || r.Mandates == nil {
		return nil
	}
	mode, ident := runMode(env.Platform)
	run := mandate.Run{Job: env.Job, ID: env.Session, Mode: mode, CronIdentity: ident}
	if run.ID == "" {
		run.ID = "no-session"
	}
	d := r.Mandates.Check(ctx, run, mandate.Call{Tool: tool, Paths: paths, Wrote: wrote, Workspace: env.Root})
	if d.Warning != "" {
		noteWarning(ctx, d.Warning)
	}
	if d.Verdict == mandate.Allow {
		return nil
	}
	res := blocked(approval.RuleMandate, "outside the job's mandate: "+d.Reason+"; nothing ran")
	if d.DriftID != "" {
		res.Message += " (drift " + d.DriftID + ")"
	}
	return &res
}

// callNotes collects warnings for one call's result from code the handler
// calls (the mandate check), so that no handler has to pass them along.
// Safe for concurrent use.
type callNotes struct {
	mu       sync.Mutex
	warnings []string
}

type callNotesKey struct{}

func withCallNotes(ctx context.Context) (context.Context, *callNotes) {
	n := &callNotes{}
	return context.WithValue(ctx, callNotesKey{}, n), n
}

// noteWarning adds a warning to the result of the call ctx belongs to.
func noteWarning(ctx context.Context, w string) {
	if n, ok := ctx.Value(callNotesKey{}).(*callNotes); ok {
		n.add(w)
	}
}

func (n *callNotes) add(w string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.warnings, w) {
		n.warnings = append(n.warnings, w)
	}
}

// join returns first followed by the collected warnings, "; "-separated.
func (n *callNotes) join(first string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	all := slices.DeleteFunc(append([]string{first}, n.warnings...), func(s string) bool { return s == "" })
	return strings.Join(all, "; ")
}
