package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tether-dev/tether/config"
)

// ErrTerminalPolicyUnavailable is returned by TerminalScopeFrom (and so by
// every execution path) when the call's terminal policy could not be
// resolved or no terminal scope is bound. Nothing runs.
var ErrTerminalPolicyUnavailable = errors.New("terminal policy unavailable")

// TerminalPolicy is a profile's complete terminal policy: every default is
// applied and Cwd is an absolute, existing directory. It is a copy; changing
// it changes nothing else.
type TerminalPolicy struct {
	Profile string
	config.Terminal
}

// TerminalScope is what is bound to a call's context: a resolved policy or
// a refusal. The zero value is a refusal.
type TerminalScope struct {
	policy TerminalPolicy
	err    error // non-nil for a refusal
}

// Policy returns the scope's policy, or an error wrapping
// ErrTerminalPolicyUnavailable for a refusal scope.
func (s TerminalScope) Policy() (TerminalPolicy, error) {
	if s.err != nil {
		return TerminalPolicy{}, s.err
	}
	if s.policy.Profile == "" {
		return TerminalPolicy{}, fmt.Errorf("%w: empty scope", ErrTerminalPolicyUnavailable)
	}
	return clonePolicy(s.policy), nil
}

// Profile returns the profile the scope was resolved for ("" if unknown).
func (s TerminalScope) Profile() string { return s.policy.Profile }

// RefuseTerminal returns a refusal scope: every execution path given it
// fails with ErrTerminalPolicyUnavailable and reason.
func RefuseTerminal(profile string, reason error) TerminalScope {
	if reason == nil {
		reason = errors.New("refused")
	}
	return TerminalScope{
		policy: TerminalPolicy{Profile: profile},
		err:    fmt.Errorf("%w for profile %q: %w", ErrTerminalPolicyUnavailable, profile, reason),
	}
}

// ResolveTerminalScope resolves profile ("" for the default profile) from
// cfg into a scope, narrowed by the workspace's project file
// (config.LayerProject). callerCwd is the working directory used when the
// profile sets none. cfgErr is the error from loading cfg, if any: a failed
// load, a nil cfg, an unknown profile, or a workspace that is not an
// existing directory all yield a refusal scope, never a fallback.
func ResolveTerminalScope(cfg *config.Config, cfgErr error, profile, callerCwd string) TerminalScope {
	if cfgErr != nil {
		return RefuseTerminal(profile, fmt.Errorf("loading config: %w", cfgErr))
	}
	if cfg == nil {
		return RefuseTerminal(profile, errors.New("no configuration"))
	}
	p, ok := cfg.Profile(profile)
	if !ok {
		return RefuseTerminal(profile, fmt.Errorf("unknown profile %q in %s", profile, cfg.Source))
	}
	pol := clonePolicy(TerminalPolicy{Profile: p.Name, Terminal: p.Terminal})
	if pol.Cwd == "" {
		pol.Cwd = callerCwd
	}
	if pol.Cwd == "" || !filepath.IsAbs(pol.Cwd) {
		return RefuseTerminal(p.Name, fmt.Errorf("no absolute working directory (profile cwd %q, caller cwd %q)", p.Terminal.Cwd, callerCwd))
	}
	pol.Cwd = filepath.Clean(pol.Cwd)
	if fi, err := os.Stat(pol.Cwd); err != nil || !fi.IsDir() {
		return RefuseTerminal(p.Name, fmt.Errorf("workspace %s is not an existing directory", pol.Cwd))
	}
	// The workspace's .tether.yaml narrows the profile; one that cannot
	// be applied (it widens, or is unreadable) refuses every call.
	lp, err := config.LayerProject(p, pol.Cwd)
	if err != nil {
		return RefuseTerminal(p.Name, fmt.Errorf("the workspace's project file: %w", err))
	}
	if lp != p {
		cwd := pol.Cwd
		pol = clonePolicy(TerminalPolicy{Profile: p.Name, Terminal: lp.Terminal})
		pol.Cwd = cwd
	}
	if pol.Backend == "" || pol.PersistCwd == nil || pol.LifetimeSeconds <= 0 {
		// Config.Load always completes a profile; anything else was built
		// by hand and is not trusted to be complete.
		return RefuseTerminal(p.Name, errors.New("incomplete terminal policy"))
	}
	return TerminalScope{policy: pol}
}

type terminalKey struct{}

// WithTerminalScope returns a copy of ctx carrying s.
func WithTerminalScope(ctx context.Context, s TerminalScope) context.Context {
	return context.WithValue(ctx, terminalKey{}, s)
}

// TerminalScopeFrom returns the terminal policy bound to ctx. It fails with
// an error wrapping ErrTerminalPolicyUnavailable when the bound scope is a
// refusal or when no scope is bound. Execution paths call it before
// spawning anything.
func TerminalScopeFrom(ctx context.Context) (TerminalPolicy, error) {
	s, ok := ctx.Value(terminalKey{}).(TerminalScope)
	if !ok {
		return TerminalPolicy{}, fmt.Errorf("%w: no terminal scope bound to this call", ErrTerminalPolicyUnavailable)
	}
	return s.Policy()
}

// BindProfile resolves profile from cfg (cfgErr: the load error, if any)
// and binds both its terminal scope and its secret scope to ctx. Either
// may be a refusal; BindProfile itself never fails.
func BindProfile(ctx context.Context, cfg *config.Config, cfgErr error, profile, callerCwd string) context.Context {
	ctx = WithTerminalScope(ctx, ResolveTerminalScope(cfg, cfgErr, profile, callerCwd))
	return WithSecretScope(ctx, ResolveSecretScope(cfg, cfgErr, profile))
}

func clonePolicy(p TerminalPolicy) TerminalPolicy {
	p.EnvPassthrough = slices.Clone(p.EnvPassthrough)
	p.Network.Allow = slices.Clone(p.Network.Allow)
	p.Network.Deny = slices.Clone(p.Network.Deny)
	p.Mounts = slices.Clone(p.Mounts)
	if p.PersistCwd != nil {
		v := *p.PersistCwd
		p.PersistCwd = &v
	}
	if p.Pool != nil {
		v := *p.Pool
		p.Pool = &v
	}
	return p
}
