package sandbox

// Session sandboxes
//
// An agent issues many small commands in one conversation and expects state
// to persist between them (files in /tmp, a server started earlier, the
// directory it cd'ed into). Sessions gives each (profile, session) pair one
// long-lived sandbox — the same namespaces, root, workspace, seccomp filter
// and cgroup limits as a one-shot Run — created on first use and reused by
// the session's later commands until it is closed, idles past its lifetime
// or reaches its maximum age.
//
// Fast path. A fresh container per command costs 15–25 ms on cgroup v1,
// most of it moving the new process into the v1 cgroups (an RCU grace
// period after idle). A warm session must pay neither the move nor the
// container setup, so the container's init process is a small supervisor:
// this binary re-executed inside the sandbox as
// "/proc/self/exe tether-supervisor" (libcontainer runs the init from a
// sealed copy of the binary, so /proc/self/exe inside is that read-only
// copy, never a host path). The supervisor is dispatched by a package init
// function on its own argument and environment marker, so the main
// package's container-init hook (IsInit/Init) is unchanged. It forks and
// executes each command on request: a fork inside an existing cgroup is
// charged there for free, which is what makes the fast path cheap. Host and
// supervisor talk over a private socketpair (the container's fd 3) in
// length-prefixed JSON frames: exec, stdin, eof, signal and resize one way;
// output chunks and exit reports the other.
//
// Alternatives considered: libcontainer's Container.Run of a setns process
// per command (runc exec) still joins the cgroups (the slow move) and pays
// nsexec's namespace dance, ~10 ms; a shell kept open over a pipe gives no
// per-command exit status, output separation or timeouts.
//
// Trust. The supervisor runs next to hostile code and with its privileges,
// so its frames are untrusted data: the host bounds frame sizes, rejects
// unknown fields, validates every value (exit codes 0–255, signals 1–64,
// known ids only), enforces the output cap again, and bounds each command by
// its own watchdog (timeout + grace + slack). A supervisor that violates
// the protocol, misses a deadline or dies marks the session broken and the
// host destroys the whole sandbox. Nothing a supervisor says influences the
// host beyond that command's own Result. Limits that matter (memory, pids,
// cpu) are the session cgroup's, enforced by the kernel for every process
// in the sandbox, the supervisor included. Commands run with an OOM score
// adjustment of 500, so that a command exceeding the session's memory
// limit is killed rather than the supervisor; OOM kills are read from the
// session's memory cgroup, not taken from the supervisor.
//
// Terminals. An interactive command gets a pty allocated by the supervisor
// inside the sandbox (/dev/ptmx of the sandbox's own devpts instance) and
// becomes its session leader with it as controlling terminal; the host
// relays bytes and window sizes (Session.Interactive). No host tty is ever
// handed to the sandbox.
//
// Lifetime and cleanup. Closing a session closes the channel (the
// supervisor, pid 1 of the sandbox, exits and the kernel kills every
// process in its pid namespace), then destroys the container, its cgroups
// in every hierarchy, its root and its lock. A session container carries
// the same owner lock as a one-shot container, so if the owning process
// crashes (the channel's EOF ends the supervisor), its keeper has GC reap
// the leftovers exactly like a crashed Run's (see keeper_linux.go).

import (
	"errors"
	"io"
	"time"
)

// Defaults of SessionOptions.
const (
	// DefaultIdleTimeout closes a session after this long without a
	// command (the profile's lifetime_seconds default).
	DefaultIdleTimeout = 300 * time.Second
	// DefaultMaxAge closes a session this long after it was created.
	DefaultMaxAge = 12 * time.Hour
	// DefaultBackgroundBytes is the output kept per stream of a
	// background process (the most recent bytes).
	DefaultBackgroundBytes = 256 << 10
)

// Session errors callers branch on; they are returned wrapped.
var (
	// ErrSessionClosed: the session was closed (explicitly, idle, max
	// age or by its manager) before or while the command ran.
	ErrSessionClosed = errors.New("session closed")
	// ErrSessionBroken: the session's supervisor died or misbehaved; the
	// sandbox was destroyed. The next Open creates a fresh one.
	ErrSessionBroken = errors.New("session sandbox broken")
	// ErrSpecChanged: Open was called for a live session with a
	// different SessionSpec. Close the session to change its sandbox.
	ErrSpecChanged = errors.New("session exists with a different sandbox spec")
	// ErrSandboxUsed: a pooled sandbox was asked for a second command,
	// or for a background one; it serves exactly one foreground command.
	ErrSandboxUsed = errors.New("pooled sandbox already used: it serves one command")
	// ErrNoProcess: no background process with that id in the session.
	ErrNoProcess = errors.New("no such process in session")
	// ErrSessionBudget: the profile's pids budget is taken by the
	// sessions it holds and its pooled sandboxes in use (each reserves
	// its own Config.Limits.Pids within ProfileLimits.Pids); close one
	// or raise the profile's limit.
	ErrSessionBudget = errors.New("the profile's pids budget is fully reserved by its sessions")
)

// SessionOptions are the session-specific settings of a profile. The zero
// value means no persistence, DefaultIdleTimeout, DefaultMaxAge and
// DefaultBackgroundBytes.
type SessionOptions struct {
	// PersistCwd carries the working directory and the exported
	// environment of a shell command (Command.Shell) over to the
	// session's next commands (the profile's persist_cwd). A command that
	// is killed, or whose shell cannot run cat, leaves them unchanged.
	PersistCwd bool `json:"persist_cwd,omitempty"`
	// IdleTimeout closes the session after this long without a command
	// running (lifetime_seconds); zero means DefaultIdleTimeout.
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// MaxAge closes the session this long after creation; zero means
	// DefaultMaxAge.
	MaxAge time.Duration `json:"max_age,omitempty"`
	// BackgroundBytes is how much recent output is kept per stream of a
	// background process; zero means DefaultBackgroundBytes.
	BackgroundBytes int `json:"background_bytes,omitempty"`
}

// SessionSpec describes a session's sandbox. Config is the profile's
// sandbox: its memory, pids and cpus limits are the session's own budget,
// inside the profile's parent cgroup (ProfileLimits), for everything in
// the session together, its supervisor included (about 7 threads, 2-3 MiB
// of memory charged to the session). Timeout and OutputBytes apply to each
// command. A Sessions admits a profile's sessions only while their pids
// budgets fit in ProfileLimits.Pids together, next to its Pools' sandboxes
// of the profile, so that no session can be starved of pids by another
// (ErrSessionBudget; waiting pooled sandboxes are destroyed to make room
// first); memory budgets are not
// reserved: an idle session uses little of its budget, so they may add up
// to more than the profile's memory.
type SessionSpec struct {
	Config        Config         `json:"config"`
	ProfileLimits Limits         `json:"profile_limits"`
	Options       SessionOptions `json:"options"`
}

// ExecOptions override a command's per-command limits; zero fields take
// the session Config's Limits.
type ExecOptions struct {
	// Timeout bounds the command's wall time (SIGTERM to its process
	// group, Grace, SIGKILL); only that command is stopped.
	Timeout time.Duration
	// OutputBytes caps stdout and stderr together.
	OutputBytes int64
}

// SessionInfo describes a live session.
type SessionInfo struct {
	Profile     string    `json:"profile"`
	Session     string    `json:"session"`
	ContainerID string    `json:"container_id"`
	Created     time.Time `json:"created"`
	LastUsed    time.Time `json:"last_used"`
	Running     int       `json:"running"`
}

// ProcessInfo describes a command of a session.
type ProcessInfo struct {
	// ID is the handle of the process within its session.
	ID         uint64    `json:"id"`
	Args       []string  `json:"args,omitempty"`
	Shell      string    `json:"shell,omitempty"`
	Background bool      `json:"background"`
	Started    time.Time `json:"started"`
	Running    bool      `json:"running"`
	// ExitCode is valid when Running is false.
	ExitCode int `json:"exit_code"`
}

// Winsize is a terminal size in characters.
type Winsize struct {
	Rows, Cols uint16
}

// Terminal is the host side of an interactive command's pty: bytes read
// from Stdin are typed into it, its output goes to Stdout, sizes received
// on Resize are applied. Env entries (TERM=...) are added to the
// command's environment.
type Terminal struct {
	Stdin  io.Reader
	Stdout io.Writer
	Size   Winsize
	Resize <-chan Winsize
	Env    []string
}
