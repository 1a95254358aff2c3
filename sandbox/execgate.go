package sandbox

import (
	"errors"
	"strings"
)

// The exec gate
//
// Every execve and execveat inside a sandbox stops in the kernel (seccomp
// user notification) until tether has read the program's path and argv
// from the caller's memory and asked the sandbox's ExecGate. The gate sees
// what no text analysis of a command can: the programs a script, an
// interpreter or a build tool really executes. It is a layer, not the
// wall: a process with several threads can change the argv in its memory
// between the check and the kernel's own read of it, and a program copied
// under another name is checked by that name. The sandbox's namespaces,
// capabilities and filter bound whatever passes the gate.

// ExecEvent is one exec seen by the exec gate: what a process of the
// sandbox asked the kernel to execute. Every field comes from the
// sandboxed process and is hostile data.
type ExecEvent struct {
	// Profile is the sandbox's profile (Runner.Profile, or the session's).
	Profile string `json:"profile,omitempty"`
	// Pid is the caller's process id on the host.
	Pid int `json:"pid"`
	// PPid is its parent's, in an observed sandbox (Config.Observe): with
	// Pid it makes the exec tree (an exec keeps the pid of the process
	// that calls it).
	PPid int `json:"ppid,omitempty"`
	// Path is the file to execute as the caller named it ("" with
	// AT_EMPTY_PATH, then Fd says which descriptor).
	Path string `json:"path"`
	// Argv is the argument vector as the caller passed it.
	Argv []string `json:"argv"`
	// Runs are the argument vectors this exec may run as, besides Argv:
	// Argv with argv[0] replaced by each name the file goes by (its path's
	// last element, and the targets of the symlinks that path goes
	// through, resolved inside the sandbox), for a script the vectors
	// the kernel builds from its "#!" lines, and for each vector a
	// program receives, what the multi-call programs (systemctl,
	// busybox) would act as on it. A gate must refuse the exec when it
	// refuses any of them.
	Runs [][]string `json:"runs,omitempty"`
}

// ExecGate decides one exec: nil lets it go on, an error refuses it (the
// caller's execve fails with EPERM and nothing is executed). It is called
// from a goroutine of its own for each sandbox, one exec at a time, while
// the calling process waits in the kernel: it must be quick, and it must
// not run anything in the sandbox. It must decide on the event's Profile,
// Path, Argv and Runs alone: while one command runs, an exec equal to one
// it allowed in all four is allowed again without asking (a refusal is
// always asked again).
type ExecGate func(ExecEvent) error

// ExecBlock is one exec the gate refused.
type ExecBlock struct {
	// Path and Argv are the exec's, as the caller passed them.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Rule is the id of the rule that refused it, when the gate's error
	// says (an error with a Rule() string method, such as the runner's).
	Rule string `json:"rule,omitempty"`
	// Reason is the gate's error text.
	Reason string `json:"reason"`
}

// Program is the name the blocked exec runs as: the last element of argv[0],
// else of the path.
func (b ExecBlock) Program() string {
	name := b.Path
	if len(b.Argv) > 0 && b.Argv[0] != "" {
		name = b.Argv[0]
	}
	return name[strings.LastIndexByte(name, '/')+1:]
}

// ErrExecUnchecked is the reason of an exec the gate could not read in
// full (an argument vector too large or unreadable): it is refused, not
// guessed at.
var ErrExecUnchecked = errors.New("the exec gate could not read the exec in full")

// maxExecBlocks is half the most blocks a gate keeps.
const maxExecBlocks = 64

// blockFor builds the record of a refused exec.
func blockFor(ev ExecEvent, err error) ExecBlock {
	b := ExecBlock{Path: ev.Path, Argv: ev.Argv, Reason: err.Error()}
	var r interface{ Rule() string }
	if errors.As(err, &r) {
		b.Rule = r.Rule()
	}
	return b
}

// Runtime observation
//
// A sandbox whose Config.Observe is set (a job whose mandate is observing)
// has its exec gate's filter notify open, openat, creat and connect too.
// tether records what was asked and lets every one of them go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE): observation is not a gate. The
// names and addresses come from the sandboxed process's memory and are
// hostile data: evidence for a person reviewing a mandate, never the only
// check of anything. The kernel resolves the path again when it carries
// the call on, and a process can change it in between.

// AccessKind is what an observed access did.
type AccessKind string

// Access kinds.
const (
	AccessRead    AccessKind = "read"    // an open for reading
	AccessWrite   AccessKind = "write"   // an open for writing, creating or truncating
	AccessExec    AccessKind = "exec"    // a file executed (a script's own path included)
	AccessConnect AccessKind = "connect" // a connect(2) to an IPv4 or IPv6 address
)

// Access is one thing the processes of an observed sandbox did, folded
// with its repeats while one command runs. Files are recorded only where
// the sandbox shares the host's files (the workspace and Config.Binds):
// the read-only system tree, /proc, /sys, /dev and the sandbox's private
// /tmp are left out.
type Access struct {
	Kind AccessKind `json:"kind"`
	// Target is, for a file, its absolute path inside the sandbox, made
	// from the name the caller passed and the caller's working directory
	// or directory descriptor (lexically: symlinks are not followed); for
	// a connection, "IP:port" ("[IPv6]:port").
	Target string `json:"target"`
	// Pid is the host pid of the first process seen doing it.
	Pid int `json:"pid"`
	// Count is how many times it was seen.
	Count int `json:"count"`
	// Missing marks a file access whose name led to no file when it was
	// seen (the open failed with ENOENT; not an open that creates): a
	// name tried, not a file touched, so it is not evidence of one.
	Missing bool `json:"missing,omitempty"`
	// Dev, Ino and Links identify the file a name led to when it was
	// seen and say how many names (hard links) it has: a file with more
	// than one is readable by names the record does not show.
	Dev   uint64 `json:"dev,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Links uint64 `json:"links,omitempty"`
}

// Bounds of what one command's observation keeps (folded repeats do not
// count): past them the oldest half is dropped and counted in
// Result.AccessesLost, so memory stays bounded however long a session
// runs.
const (
	maxAccesses     = 4096
	maxAccessBytes  = 1 << 20
	maxObservedPath = 4096 // PATH_MAX: a longer name is counted lost
)
