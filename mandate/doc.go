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
// records; [Store.Widen] turns a drift record into a new pending version,
// [Store.Diff] shows what approving it would activate, and [Store.Undo]
// walks back through approved versions to observe mode.
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
// A command rule is "[env NAMES: ]HEAD... [-*] [FLAGS...]". HEAD is the
// peeled wrapper programs other than env, each with its arguments bound
// ("sudo(-u,bob)", "timeout(60)"), the program, its subcommand words, and
// its assignment operands ("make test SHELL=/bin/sh"). A call matches a
// rule when all of these hold:
//
//  1. Its HEAD is the rule's HEAD word for word: the same wrappers with the
//     same arguments, the same program, the same subcommand words, and the
//     same assignment operands with the same values. An assignment operand
//     is a NAME=VALUE operand: a variable the command grammar (package
//     grammar) reads as one (make's "SHELL=…", "CFLAGS+=…",
//     ".SHELLFLAGS=…"), a KEY=VALUE operand it gives a read or write
//     effect (dd's "if=", "of="), or any NAME=VALUE operand of a program
//     it does not know. So "make test" does not allow "make test
//     SHELL=/bin/bash BASH_ENV=notes.md", and "dd" allows no dd with
//     operands.
//  2. The environment names it sets ("X=1 cmd", "env X=1 cmd", and env
//     options such as -i) are a subset of the rule's NAMES; values are
//     not bound.
//  3. Its flags: without "-*", the flags it uses, by name as written
//     ("--output=x" is "--output"; short clusters are kept as written, so
//     "-rf" is not "-fr"), are a subset of the rule's FLAGS. With "-*",
//     any flag is allowed except the risky ones, which must each be in
//     FLAGS by their canonical grammar name: options that execute code
//     (an exec, code, remote, listen or schedule effect, or such a value:
//     "git diff --ext-diff", "go test -exec", "tar --to-command"), write a
//     file or device ("git diff --output", "curl -o", "sort -o"), or
//     change where the program reads its configuration ("git -c",
//     "--git-dir", "make -f", "curl -K"), and every option the grammar does
//     not know of a program it knows (what cannot be ruled out is
//     present). The grammar resolves abbreviations and clusters as the
//     program does ("sort --out=x" is "--output"; an ambiguous
//     abbreviation is an option it does not know), and a rule's listed
//     options are read as canonical names too ("sort -* -o" is
//     "sort -* --output"). "-*" of a program
//     the grammar does not know allows any flag; a path-qualified program
//     ("./tool") has every flag risky.
//  4. Every argument that names a path outside the workspace — absolute
//     after cleaning, climbing out with "..", starting at the home
//     directory ("~", "$HOME"), also as the value of "--opt=PATH" or of an
//     assignment — is allowed by the paths family, like a redirection
//     target. So "git diff -*" does not allow "git diff HEAD /etc/shadow"
//     or "git diff ../other". URLs and /dev/null and friends are not paths.
//
// Other positional operands (files inside the workspace, messages,
// patterns, branch names) are not part of a rule: the analyser and
// approval tiers judge them. The program is its normalised name unless it
// was named by a path ("./rm", "/opt/x/git"), which is kept verbatim so a
// workspace binary never matches a rule learnt for the system one. A rule
// "=TEXT" allows one opaque segment whose exact source text is TEXT.
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
// into it. A name that comes from the sandbox or the model (a file
// tool's path, a literal redirection target, what the kernel saw a call
// open, a path the kernel refused) is a rule for that one file: where its
// plain text would read as a tree or as shell text ("**", "DIR/**", "~x",
// "$X") it is written "=NAME" ("read:=secret/**"), which the matcher and
// the kernel read as that name (pathmode.go). Observed names that led to
// no file, and files with more than one name (hard links), make no rule;
// Compile notes them in comment lines.
//
// A paths rule has a mode. "read:conf/**" allows reading only (opening to
// read, listing, executing); a rule without the prefix allows reading and
// writing, as every rule did before modes, so an old mandate keeps its
// meaning ("rw:" spells it explicitly, which only a path that begins with
// "read:" or "rw:" needs). Facts carry the same mode: a read_file call, a
// "<" redirection and an open the kernel saw without write access, O_CREAT
// or O_TRUNC are reads; a file tool that writes, a writing redirection, an
// open for writing, and a path named in a command's arguments (the text
// does not say which) are writes, which only a read-write rule allows.
// Compiling never widens a read into a write: a directory collapses into
// "DIR/**" when three of its files were written, into "read:DIR/**" beside
// its written files when fewer were, and a file both read and written is
// written. See pathmode.go.
//
// Besides the paths file tools and commands name, a job in observe mode
// gets the files its terminal commands really opened or executed, as the
// kernel saw them in an observed sandbox ([Store.ObserveRuntime]; see
// docs/exec-gate.md): a script's reads by computed names included. Only
// files the sandbox shares with the host (the workspace and its binds) are
// evidence; its read-only system tree and private /tmp are not.
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
// Run-time hosts come from tether's egress proxy (the names it was asked
// for) and, outside proxy mode, from the addresses an observed sandbox's
// processes connected to: the IP address is the rule's value, the port is
// in the record's text.
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
// # Review
//
// [Store.Diff] compares the newest pending version with the active one
// (nothing in observe mode): per family the rules added, changed (a rule
// for the same command head, or a pattern covering a removed rule) and
// removed, and max_writes_per_run. For each added or changed rule it
// counts the distinct recorded calls (by redacted text) that the approved
// version refuses, the pending one allows, and that need the rule, with up
// to MaxPreviewExamples examples, and lists its reach (Reach): a new tool
// or host, paths file tools may now write, an option, program, variable or
// opaque segment that executes code, an option that changes configuration,
// a pattern broader than an exact rule. [Store.ApproveReviewed] approves
// only the version whose SHA-256 starts with the prefix the reviewer saw,
// so a version changed since the review is refused ([ErrSHAMismatch]).
// [Store.Discard] drops the pending version. [Store.Probe] decides a call
// as Check does and records nothing.
//
// # interactive_violation
//
// What an interactive run's call outside the mandate does is resolved in
// one place, [ResolveViolation]: the job's own setting ([Store.SetInteractiveViolation])
// when it has one, else the profile's mandate.interactive_violation
// (Run.Violation), else block. Cron and other unattended runs are only ever
// blocked.
//
// # Drift and widening
//
// Blocked and escalated calls become drift records "d-N" (numbered per job)
// holding the redacted call for display and the failing rules verbatim for
// Widen (an "=text" rule needs the exact text). Identical calls — the same
// failing families, the same redacted call, the same verdict — fold into
// the open record with a count, last-seen time and last run. A person may
// close a record as resolved or dismissed with a reason ([Store.CloseDrift]);
// a closed record is never folded into or widened. Widen builds on the
// newest pending version, else the active one, returns the whole Diff of
// the result, and never activates anything ([Store.WidenDryRun] writes
// nothing). With a pattern, a command rule becomes "HEAD -* RISKY…",
// naming the risky options the call used. A drift record becomes
// "widened" when a version is approved that was widened from it or that
// allows its call.
//
// Undo supersedes the active version; every version approved before stays
// approvable again (by its number and SHA-256).
//
// # Limits
//
// Without the egress proxy or an observed sandbox, hosts are seen only in
// the argument forms above (a host inside a config file or a script's
// variable default is not). Run-time evidence is the sandboxed processes'
// own account of what they did: a hostile script can add paths to it and
// reach files in ways it does not see (docs/exec-gate.md). Paths are compared lexically; symlinks are not
// resolved (the sandbox is the boundary). An argument that merely looks
// like an absolute path ("grep /api/ src") is treated as a path outside
// the workspace (fail closed). Environment values are not bound ("env
// LD_PRELOAD: cmd" allows any value; the diff reports such names as
// executing code). Calls recorded before the grammar was used carry no
// risky options, so the diff of old observations may understate a "-*"
// rule; enforcement always reads the call afresh. Rules whose text cannot be written
// (invalid UTF-8, words holding spaces) are never compiled, so such calls
// stay outside the mandate.
package mandate
