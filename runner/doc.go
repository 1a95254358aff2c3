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
//
// The pipeline. Runner.Execute carries one batch (a model response's
// calls) through the gates. Gate 1: the Registry decides which tools a
// profile sees (enabled_toolsets minus disabled_toolsets, availability
// checks; a panicking check hides the tool) and Validate refuses unknown
// tools (listing the available ones), arguments that are not one complete
// JSON object, and arguments that do not match the schema (numbers in
// strings are accepted only where the schema says "x-coerce-number").
// Gate 2: Plan orders the calls into segments; reads and writes with known
// paths share a segment unless their canonical paths overlap (a writer
// conflicts with any overlapping reservation; readers never conflict),
// while terminal, interactive and unknown tools are barriers; a bounded
// worker pool runs each segment and results keep call order. Gate 3: the
// terminal tool asks the approval Engine (hardline floor, deny globs,
// mandate hook, approval routes); file tools resolve paths inside the
// workspace (symlinks followed component by component, escapes refused),
// refuse protected paths and check the job's mandate. Gate 4: commands run
// in the sandbox (a session sandbox when the call has a session), and
// Classify labels every result (refused, pending_approval, blocked,
// failed, succeeded) and its effect (a write_file landed only with
// bytes_written, a patch only with success: true; unknown tools are
// effect-capable). A Turn holds the loop guardrails of one user turn:
// identical failing calls, failures of one tool and no-progress repeats
// warn, then block, then halt (halting only where nobody can intervene,
// unless configured); refusals never count as failures.
//
// One assembly. NewPipeline builds the pipeline of every entry point
// (tether serve, tether mcp, tether run, tether shell, tether demo): the
// approval engine with the shared options (the mandate hook, secret
// redaction) and the entry point's routes, the Runner over it, the mandate
// store and the session sandboxes with their exec gate; PipelineOptions is
// where they differ, and the one place new engine policy plugs in.
// Runner.Place and Runner.Invoke run one command with the caller's own
// streams (tether run) through the terminal tool's one-shot path.
//
// The doors. Daemon and Server are `tether serve`: an HTTP/JSON API on a
// private unix socket (bearer tokens on TCP), sessions owned by the client
// whose token created them, approvals answered through the gateway queue,
// server-sent events, graceful shutdown (docs/api.md). Client is its Go
// client. MCP is `tether mcp`: the same tools over MCP stdio, asking for
// approvals through MCP elicitation. Executing commands needs the
// sandbox's privileges (root for enforced limits); everything else needs
// none.
package runner
