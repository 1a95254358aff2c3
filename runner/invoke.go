package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/sandbox"
)

// Placement is where one command of a profile runs, as the terminal tool
// places it: the profile's terminal policy, its canonical workspace, the
// sandbox config (workspace, rootfs, network, per-sandbox limits,
// environment with the profile's secrets, tether's own paths hidden), the
// limits of the profile's whole cgroup and the secrets its output is
// masked with. A caller may narrow Config before Invoke (lower limits, no
// network), never widen it.
type Placement struct {
	Policy        TerminalPolicy
	Root          string
	Config        sandbox.Config
	ProfileLimits sandbox.Limits
	Secrets       SecretScope
	// Proxy is set when the command's network is the profile's egress
	// proxy (terminal.network.mode: proxy): Invoke then gives it its own
	// proxy, as the daemon does. A caller narrowing the network to none
	// clears it.
	Proxy bool
}

// Place resolves profile's terminal policy (callerCwd is the workspace
// when the profile sets no terminal.cwd) and places a one-shot command of
// it with extraEnv added to its environment. Errors wrap
// ErrTerminalPolicyUnavailable.
func (r *Runner) Place(ctx context.Context, profile, callerCwd string, extraEnv []string) (Placement, error) {
	r.init()
	env, err := r.env(ctx, Batch{Profile: profile, Cwd: callerCwd})
	if err != nil {
		return Placement{}, err
	}
	cmdEnv, err := CommandEnv(env.Policy, env.Secrets, r.lookupEnv())
	if err != nil {
		return Placement{}, fmt.Errorf("%w: the environment of profile %s: %w", ErrTerminalPolicyUnavailable, env.Profile.Name, err)
	}
	return r.place(env, env.Policy, append(cmdEnv, extraEnv...), env.Policy.Limits.Timeout.D())
}

// place is the one translation of a policy into a placement, shared by
// Place and the terminal tool.
func (r *Runner) place(env *Env, pol TerminalPolicy, cmdEnv []string, timeout time.Duration) (Placement, error) {
	cfg, err := SandboxConfig(pol, env.Root, cmdEnv, timeout, r.protected())
	if err != nil {
		return Placement{}, err
	}
	return Placement{Policy: pol, Root: env.Root, Config: cfg, ProfileLimits: ProfileLimits(pol), Secrets: env.Secrets,
		Proxy: pol.Backend != config.BackendHost && pol.Network.Mode == config.NetworkProxy}, nil
}

// Invocation is one command run with the caller's own streams (tether
// run): a terminal call through the same gates as the terminal tool's
// one-shot path.
type Invocation struct {
	Profile  string
	Session  string            // approval session key; "" for none
	Platform approval.Platform // "" is approval.PlatformCLI
	Job      string            // mandate job, if any
	// Text is the shell text the engine decides on; Command what runs
	// (Args or Shell, and the caller's streams).
	Text    string
	Command sandbox.Command
	// Placement is from Place, maybe narrowed.
	Placement Placement
	// Allowed, if set, is called with the decision once it allowed the
	// command, before the command runs.
	Allowed func(approval.Decision)
}

// Invoked is what Invoke did.
type Invoked struct {
	// Result is the sandbox's; nil when nothing ran.
	Result   *sandbox.Result
	Decision approval.Decision
	// ExecBlocked are the exec gate's refusals during the command, as
	// audited (and, in a job, recorded as drift).
	ExecBlocked []approval.Decision
	// CreateBlocked are the creation gate's refusals (a repository the
	// command tried to make), as audited.
	CreateBlocked []approval.Decision
	// PathsRefused are the accesses the kernel refused under the job's
	// enforced mandate (its Landlock ruleset), as audited and recorded as
	// drift.
	PathsRefused []approval.Decision
}

// ErrRefused is wrapped by Invoke's error when the engine did not allow
// the command (Invoked.Decision says at which stage and why): nothing ran.
var ErrRefused = errors.New("refused")

// Invoke decides inv's command and runs it in a one-shot sandbox: the
// approval engine (hardline floor, deny rules, the job's mandate, routes)
// decides while the kernel builds the sandbox, and the program starts only
// once it allowed it; the exec gate checks every exec; the profile's
// egress proxy serves it in proxy mode; a job's observing mandate gets
// what the kernel saw as evidence; its output is masked with the
// profile's secrets on the way to the caller's writers. A refusal is an
// error wrapping ErrRefused (and approval.ErrDenied when the engine denied
// it). Any other error with a nil Result means nothing ran; with a
// Result, the command ran and the error says what went wrong around it.
func (r *Runner) Invoke(ctx context.Context, inv Invocation) (*Invoked, error) {
	r.init()
	if r.Engine == nil {
		return nil, errors.New("no approval engine is configured; nothing ran")
	}
	if inv.Platform == "" {
		inv.Platform = approval.PlatformCLI
	}
	pl := inv.Placement
	env, err := r.env(ctx, Batch{Profile: inv.Profile, Session: inv.Session, Platform: inv.Platform, Job: inv.Job, Cwd: pl.Root})
	if err != nil {
		return nil, err
	}
	if env.Profile.Name != pl.Policy.Profile || env.Root != pl.Root {
		// A placement of another profile or workspace would run the
		// command under a policy the engine did not decide it for.
		return nil, fmt.Errorf("%w: the placement is of profile %q in %s, the call of profile %q in %s",
			ErrTerminalPolicyUnavailable, pl.Policy.Profile, pl.Root, env.Profile.Name, env.Root)
	}
	out := &Invoked{}
	// The decision (configuration, analysis, the audit record synced to
	// disk, maybe a question on the terminal) runs while the kernel builds
	// the sandbox (RunGated's gate). A refusal wins over any sandbox
	// error: nothing ran. When the sandbox failed before RunGated asked,
	// the decision is made here.
	var once sync.Once
	var verdict error
	home, _ := os.UserHomeDir()
	gate := func() error {
		once.Do(func() {
			sandbox.Trace("decide start")
			defer sandbox.Trace("decide done")
			d, err := r.Engine.Decide(ctx, approval.Request{Command: inv.Text, Profile: env.Profile.Name, Session: env.Session,
				Platform: env.Platform, Job: env.Job, Cwd: env.Root, Home: home, HostsAtRunTime: pl.Proxy})
			out.Decision = d
			switch {
			case errors.Is(err, approval.ErrDenied):
				verdict = fmt.Errorf("%w at %s: %w", ErrRefused, d.Stage, err)
			case err != nil:
				verdict = fmt.Errorf("%w: deciding the command: %w", ErrRefused, err)
			case inv.Allowed != nil:
				inv.Allowed(d)
			}
		})
		return verdict
	}
	cmd := inv.Command
	if m := pl.Secrets.Masker(); m != nil {
		// What reaches the caller is what the model would be told.
		for _, w := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
			if *w != nil {
				mw := m.Writer(*w)
				defer mw.Flush()
				*w = mw
			}
		}
	}
	// A job whose mandate observes gets the kernel's view of the run as
	// evidence, as behind the daemon.
	pl.Config.Observe = env.observing(ctx)
	if env.Job != "" {
		// A job's enforced mandate is a Landlock ruleset the sandbox must
		// hold from its first process: decide before building it.
		if err := gate(); err != nil {
			return out, err
		}
		pl.Config.Landlock = KernelPolicy(out.Decision.MandatePaths, env.Root, pl.Proxy)
	}
	res, runErr := r.oneShot(ctx, env, pl, cmd, gate)
	sandbox.Trace("invoke ran")
	if err := gate(); err != nil {
		return out, err
	}
	out.Result = res
	if res != nil && pl.Config.Observe && (len(res.Accesses) > 0 || res.AccessesLost > 0) {
		env.recordRuntime(ctx, inv.Text, res, pl.Proxy)
	}
	if res != nil && len(res.ExecBlocked) > 0 {
		out.ExecBlocked = recordExecBlocks(ctx, env, inv.Text, res.ExecBlocked)
	}
	if res != nil && len(res.CreateBlocked) > 0 {
		out.CreateBlocked = recordCreateBlocks(ctx, env, inv.Text, res.CreateBlocked)
	}
	if res != nil && len(res.PathsRefused) > 0 {
		out.PathsRefused = recordPathRefusals(ctx, env, inv.Text, res.PathsRefused)
	}
	return out, runErr
}

// oneShot runs cmd in a fresh sandbox placed by pl, its execs gated by the
// engine, behind its own egress proxy when pl.Proxy; gate, if set, is
// RunGated's last check.
func (r *Runner) oneShot(ctx context.Context, env *Env, pl Placement, cmd sandbox.Command, gate func() error) (*sandbox.Result, error) {
	cfg := pl.Config
	if pl.Proxy {
		eg, err := oneShotEgress(ctx, env, pl.Policy, &cfg)
		if err != nil {
			return nil, fmt.Errorf("setting up network egress: %w", err)
		}
		if eg != nil {
			defer eg.close()
		}
	}
	execGate := r.execGate(env.Root)
	if !pl.Proxy {
		// A fresh sandbox set up ahead: the daemon's own pool, or (a
		// caller with its own approval, tether run) the pool of a daemon
		// serving this state root under the same configuration.
		var res *sandbox.Result
		var err error
		if r.Pools != nil && gate == nil {
			res, err = r.runPooled(ctx, pl.Policy, cfg, pl.ProfileLimits, execGate, cmd)
		} else {
			req := sandbox.PoolRequest{CgroupPrefix: r.Sandbox.CgroupPrefix, Profile: pl.Policy.Profile, Policy: r.policy,
				Spec: sandbox.SessionSpec{Config: cfg, ProfileLimits: pl.ProfileLimits},
				Args: cmd.Args, Shell: cmd.Shell, Timeout: cfg.Limits.Timeout, OutputBytes: cfg.Limits.OutputBytes,
				Stdin: cmd.Stdin != nil}
			if sandbox.Poolable(cfg) {
				res, err = sandbox.RunPooled(ctx, r.Sandbox.StateRoot, req, gate, cmd.Stdin, cmd.Stdout, cmd.Stderr)
			} else {
				err = sandbox.ErrPoolEmpty
			}
		}
		if !errors.Is(err, sandbox.ErrPoolEmpty) {
			return res, err
		}
	}
	run := r.Sandbox
	run.Profile, run.ProfileLimits = pl.Policy.Profile, pl.ProfileLimits
	run.ExecGate = execGate
	res, err := run.RunGated(ctx, cfg, cmd, gate)
	if res == nil && err != nil {
		err = fmt.Errorf("starting the sandbox: %w", err)
	}
	return res, err
}

// PoolSpec is the pool a one-shot command of policy pol, placed in cfg
// inside a profile cgroup of profLimits under the configuration of digest
// policy (PolicyDigest), may take its sandbox from: the profile's
// terminal.pool sandboxes of exactly that placement.
func PoolSpec(policy string, pol TerminalPolicy, cfg sandbox.Config, profLimits sandbox.Limits, gate sandbox.ExecGate) sandbox.PoolSpec {
	size := 0
	if pol.Pool != nil {
		size = *pol.Pool
	}
	return sandbox.PoolSpec{Profile: pol.Profile, Policy: policy, Size: size, ExecGate: gate,
		Spec: sandbox.SessionSpec{Config: cfg, ProfileLimits: profLimits}}
}

// runPooled runs a one-shot command in a sandbox of the profile's pool.
// An error wrapping sandbox.ErrPoolEmpty means nothing ran (no pool, or
// none ready, or a placement a pool cannot serve): the caller builds the
// sandbox itself. The call (re)fills the pool for the next one; a size of
// 0 drains what the profile's pool held.
func (r *Runner) runPooled(ctx context.Context, pol TerminalPolicy, cfg sandbox.Config, profLimits sandbox.Limits, gate sandbox.ExecGate, cmd sandbox.Command) (*sandbox.Result, error) {
	if r.Pools == nil || pol.Pool == nil {
		return nil, sandbox.ErrPoolEmpty
	}
	return r.Pools.Run(ctx, PoolSpec(r.policy, pol, cfg, profLimits, gate), cmd,
		sandbox.ExecOptions{Timeout: cfg.Limits.Timeout, OutputBytes: cfg.Limits.OutputBytes})
}
