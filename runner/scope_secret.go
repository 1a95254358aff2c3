package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/tether-dev/tether/config"
)

// ErrUnscopedSecret is returned when a secret is read in multiplex mode
// with no secret scope bound to the call, or when the bound scope is a
// refusal (its profile's secrets could not be loaded).
var ErrUnscopedSecret = errors.New("secret read without a secret scope")

// SecretScope is one profile's secrets. The zero value is a refusal.
// A SecretScope is immutable and safe for concurrent use.
type SecretScope struct {
	profile string
	values  map[string]string
	err     error
}

// NewSecretScope returns a scope holding a copy of values for profile.
func NewSecretScope(profile string, values map[string]string) SecretScope {
	return SecretScope{profile: profile, values: maps.Clone(values)}
}

// RefuseSecrets returns a refusal scope: every read fails with an error
// wrapping ErrUnscopedSecret and reason.
func RefuseSecrets(profile string, reason error) SecretScope {
	return SecretScope{profile: profile, err: fmt.Errorf("%w: secrets of profile %q unavailable: %w", ErrUnscopedSecret, profile, reason)}
}

// ResolveSecretScope loads profile's secrets from cfg. A load error, nil
// cfg, unknown profile or unreadable env file yields a refusal scope.
func ResolveSecretScope(cfg *config.Config, cfgErr error, profile string) SecretScope {
	if cfgErr != nil {
		return RefuseSecrets(profile, fmt.Errorf("loading config: %w", cfgErr))
	}
	if cfg == nil {
		return RefuseSecrets(profile, errors.New("no configuration"))
	}
	p, ok := cfg.Profile(profile)
	if !ok {
		return RefuseSecrets(profile, fmt.Errorf("unknown profile %q", profile))
	}
	vals, err := p.Secrets.LoadSecrets()
	if err != nil {
		return RefuseSecrets(p.Name, err)
	}
	return SecretScope{profile: p.Name, values: vals}
}

// Profile returns the profile the scope belongs to.
func (s SecretScope) Profile() string { return s.profile }

// Err returns the refusal reason, or nil for a usable scope.
func (s SecretScope) Err() error {
	if s.err == nil && s.values == nil && s.profile == "" {
		return fmt.Errorf("%w: empty scope", ErrUnscopedSecret)
	}
	return s.err
}

// Get returns the named secret, or def when the profile has no such
// secret. It fails only for a refusal scope.
func (s SecretScope) Get(name, def string) (string, error) {
	if err := s.Err(); err != nil {
		return "", err
	}
	if v, ok := s.values[name]; ok {
		return v, nil
	}
	return def, nil
}

// Names returns the scope's secret names, sorted.
func (s SecretScope) Names() []string {
	names := slices.Collect(maps.Keys(s.values))
	sort.Strings(names)
	return names
}

// Masker returns a Masker for the scope's secret values.
func (s SecretScope) Masker() *Masker {
	return NewMasker(slices.Collect(maps.Values(s.values))...)
}

type secretKey struct{}

// WithSecretScope returns a copy of ctx carrying s.
func WithSecretScope(ctx context.Context, s SecretScope) context.Context {
	return context.WithValue(ctx, secretKey{}, s)
}

// SecretScopeFrom returns the scope bound to ctx and whether one is bound.
func SecretScopeFrom(ctx context.Context) (SecretScope, bool) {
	s, ok := ctx.Value(secretKey{}).(SecretScope)
	return s, ok
}

// SecretReader reads secrets for a call. In Multiplex mode (one daemon,
// many profiles) only the scope bound to the call's context counts, and a
// call with none gets ErrUnscopedSecret. Otherwise (a single-profile CLI
// run) a call with no bound scope reads Single. The zero value is
// multiplex-safe only if Multiplex is set; the daemon must set it.
type SecretReader struct {
	Multiplex bool
	Single    SecretScope // used only when !Multiplex and no scope is bound
}

// Get returns the named secret for the call in ctx, or def when the
// profile has no such secret — never another profile's value.
func (r SecretReader) Get(ctx context.Context, name, def string) (string, error) {
	s, ok := SecretScopeFrom(ctx)
	if !ok {
		if r.Multiplex {
			return "", fmt.Errorf("%w: reading %q", ErrUnscopedSecret, name)
		}
		s = r.Single
	}
	return s.Get(name, def)
}

// CommandEnv builds the environment of a command run under policy: the
// variables named by policy.EnvPassthrough, looked up with lookup (the
// caller's environment; nil means none), then every secret of the scope,
// which win. Nothing else is inherited. It fails when the secret scope is
// a refusal or belongs to another profile than the policy.
func CommandEnv(policy TerminalPolicy, secrets SecretScope, lookup func(string) (string, bool)) ([]string, error) {
	if err := secrets.Err(); err != nil {
		return nil, err
	}
	if secrets.profile != policy.Profile {
		return nil, fmt.Errorf("%w: secret scope of profile %q given for profile %q", ErrUnscopedSecret, secrets.profile, policy.Profile)
	}
	env := map[string]string{}
	if lookup != nil {
		for _, name := range policy.EnvPassthrough {
			if v, ok := lookup(name); ok {
				env[name] = v
			}
		}
	}
	maps.Copy(env, secrets.values)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out, nil
}

// ProfileSecrets resolves and caches the secret scope of each profile of
// one loaded configuration. It provides what package approval's engine
// needs (Options.Redact and Options.Secret) without that package knowing
// about scopes. Safe for concurrent use.
type ProfileSecrets struct {
	cfg *config.Config

	mu      sync.Mutex
	scopes  map[string]SecretScope // guarded by mu
	maskers map[string]*Masker     // guarded by mu
}

// NewProfileSecrets returns a resolver for cfg's profiles.
func NewProfileSecrets(cfg *config.Config) *ProfileSecrets {
	return &ProfileSecrets{cfg: cfg, scopes: map[string]SecretScope{}, maskers: map[string]*Masker{}}
}

// Scope returns the profile's secret scope (a refusal when its secrets
// cannot be loaded).
func (p *ProfileSecrets) Scope(profile string) SecretScope {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.scopes[profile]
	if !ok {
		s = ResolveSecretScope(p.cfg, nil, profile)
		p.scopes[profile] = s
		p.maskers[profile] = s.Masker()
	}
	return s
}

// Redact masks the profile's secret values in text.
func (p *ProfileSecrets) Redact(profile, text string) string {
	p.Scope(profile)
	p.mu.Lock()
	m := p.maskers[profile]
	p.mu.Unlock()
	return m.Mask(text)
}

// Secret returns the profile's named secret; a missing one is an error.
func (p *ProfileSecrets) Secret(profile, name string) (string, error) {
	s := p.Scope(profile)
	if err := s.Err(); err != nil {
		return "", err
	}
	v, ok := s.values[name]
	if !ok {
		return "", fmt.Errorf("profile %q has no secret %q", s.profile, name)
	}
	return v, nil
}
