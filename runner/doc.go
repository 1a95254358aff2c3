// Package runner carries a tool call from the model to a result: the tool
// registry and argument validation (gate 1), placement and the per-call
// scopes (gate 2), and the execution and classification of what ran
// (gate 4), calling package approval for gate 3 (DESIGN.md §1).
//
// Scopes. Every call carries its profile's settings in its context.Context,
// never in process globals, because one daemon serves many profiles at once:
//
//   - the terminal scope (WithTerminalScope / TerminalScopeFrom) holds the
//     profile's complete terminal policy. When the policy cannot be resolved
//     (unreadable or invalid config, unknown profile, missing workspace) a
//     refusal scope is bound instead, and execution fails with
//     ErrTerminalPolicyUnavailable; so does a context with no scope at all.
//     Nothing ever falls back to the daemon's own environment or another
//     profile's settings.
//   - the secret scope (WithSecretScope / SecretReader) holds the profile's
//     secrets. In multiplex mode a read with no bound scope is
//     ErrUnscopedSecret; a bound scope exposes only its own profile's
//     values. Secrets reach a command only through CommandEnv, as that
//     profile's environment, and a Masker replaces their exact values with
//     "***" in output returned to the model and in logs.
//
// The scope code needs no privileges and spawns nothing.
package runner
