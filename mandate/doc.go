// Package mandate learns, stores and enforces a job's mandate: the
// allow-policy compiled from what the job's runs were observed doing
// (DESIGN.md §4). It sits in the authorization gate, after the hardline floor
// and deny rules and before the approval flow. It needs no privileges; its
// state is an embedded SQLite database in the state directory.
//
// # Lifecycle
//
// A job starts in observe mode: [Store.Observe] records every call (tool,
// paths, the structural summary of its command, hosts named in arguments,
// whether it wrote) and never blocks, even when this package errors.
// [Store.Compile] turns the observations into a pending version of
// deterministic YAML; [Store.Approve] stores the SHA-256 of that exact text and
// switches the job to enforce. [Store.Check] then holds every call to the
// approved text. Calls outside it are blocked (or, for interactive runs of a
// job whose interactive_violation is "approve", escalated) and become drift
// records; [Store.Widen] turns a drift record into a new pending version and
// [Store.Undo] walks back through approved versions to observe mode.
//
// # Format
//
//	mandate: 1
//	job: nightly-triage
//	tools:
//	  - terminal  # seen 12x
//	paths:
//	  - src/**  # seen 9x
//	commands:
//	  - git commit --amend -m  # seen 2x
//	  - go test -*  # seen 3x
//	  - "env GOFLAGS,CGO_ENABLED: make test"  # seen 1x
//	  - "=bash -c \"$SCRIPT\""  # seen 1x
//	hosts:
//	  - github.com  # seen 3x
//	max_writes_per_run: 4
//
// Families and their rules are written in a fixed order (rules sorted by
// value, byte-wise); the same observations always give byte-identical text.
// The "# seen Nx" comments are evidence for the reviewer, never weights.
//
// # Command rules
//
// A command rule is "[env NAMES: ]HEAD... [FLAGS...]". HEAD is the peeled
// wrapper programs other than env, each with its arguments bound
// ("sudo(-u,bob)", "timeout(60)"), the program, and its subcommand words;
// FLAGS are the flags allowed (a call may use any subset), or "-*" for any
// flags. Flags are compared by name: "--output=x" is the flag "--output";
// short clusters are kept as written ("-rf" is not "-fr"). Positional
// operands (files, messages, patterns) are not part of a rule: the analyser
// and approval tiers judge them. The program is its normalised name unless it
// was named by a path ("./rm", "/opt/x/git"), which is kept verbatim so a
// workspace binary never matches a rule learnt for the system one.
//
// Environment: "X=1 cmd" and "env X=1 cmd" are unwrapped; the names set (and
// env options such as -i) are listed after "env", comma-separated, before
// ": " — "env CGO_ENABLED,GOOS: go build". A call may set any subset of
// them; values are not bound. A rule "=TEXT" allows one opaque segment whose
// exact source text is TEXT.
//
// Subcommand words are recognised from a table of multi-level CLIs (git, go,
// npm/pnpm/yarn, docker/podman, kubectl, helm, gh, cargo, pip, apt, systemctl,
// make, …): after the program, positional words are taken as subcommand words
// (global flags that take a value, such as "git -C DIR", are skipped with
// their value) — one word, or two for groups such as "git remote add",
// "go mod tidy", "npm run build" (the script name is a subcommand word),
// "docker compose up", "kubectl get pods", and every target for make.
// Programs not in the table have no subcommand words: their positional words
// are usually operands, and binding them would memorise data. A subcommand
// word that is not literal ("git $SUB") is kept as its source text, so it
// only ever matches the same text.
//
// # Paths
//
// Paths are cleaned and made relative to the call's workspace when they lie
// inside it; other paths stay absolute. A rule is an exact path or "DIR/**"
// (anything below DIR, at any depth). When compiling, three or more distinct
// observed files directly in one directory collapse to "DIR/**" (never for the
// workspace root or "/"); exact rules covered by a "DIR/**" rule are folded
// into it.
//
// # Hosts
//
// Hosts come from literal arguments: URLs ("https://x.y/z" → x.y), "user@host"
// and scp-style "git@host:repo", "host:/path" for scp/rsync, and the host
// operand of ssh, nc, ping and friends. A git remote name ("git push origin")
// is not a host. A host operand that is not literal ("curl "$URL"", "ssh
// $HOST") is recorded as its source text and needs the exact rule "=TEXT".
// A rule is an exact host, "*.domain" (any subdomain), or "=TEXT".
//
// # Enforcement
//
// In enforce mode, Check blocks a call outside the mandate, any evaluation
// error or panic, a stored text whose SHA-256 differs from the one recorded
// at approval, and every call of a run whose mode is unknown (a failed
// cron-identity lookup makes it unknown: it might be cron). Cron runs are
// only ever blocked; an interactive run escalates instead when the job's
// interactive_violation is "approve". max_writes_per_run counts the run's
// writing calls already allowed.
//
// # Drift and widening
//
// Blocked and escalated calls become drift records "d-N" (numbered per job)
// holding the redacted call for display and the failing rules verbatim for
// Widen (an "=text" rule needs the exact text). Widen builds on the newest
// pending version, else the active one, and never activates anything. A
// drift record becomes "widened" when a version is approved that was widened
// from it or that allows its call.
//
// # Limits
//
// Hosts are seen only in the argument forms above (a host inside a config
// file or a script's variable default is not). Paths are compared lexically; symlinks are not
// resolved (the sandbox is the boundary). Rules whose text cannot be written
// (invalid UTF-8, words holding spaces) are never compiled, so such calls
// stay outside the mandate.
package mandate
