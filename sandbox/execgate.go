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
	// Path is the file to execute as the caller named it ("" with
	// AT_EMPTY_PATH, then Fd says which descriptor).
	Path string `json:"path"`
	// Argv is the argument vector as the caller passed it.
	Argv []string `json:"argv"`
	// Runs are the argument vectors this exec may run as, besides Argv:
	// Argv with argv[0] replaced by each name the file goes by (its path's
	// last element, and the targets of the symlinks that path goes
	// through, resolved inside the sandbox), and for a script the vectors
	// the kernel builds from its "#!" lines. A gate must refuse the exec
	// when it refuses any of them.
	Runs [][]string `json:"runs,omitempty"`
}

// ExecGate decides one exec: nil lets it go on, an error refuses it (the
// caller's execve fails with EPERM and nothing is executed). It is called
// from a goroutine of its own for each sandbox, one exec at a time, while
// the calling process waits in the kernel: it must be quick, and it must
// not run anything in the sandbox.
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
