// Package seccompexec loads a precompiled seccomp filter in a sandbox and
// then executes the sandboxed program, so that the filter need not be
// compiled in every container's init.
//
// libcontainer compiles a container's filter in the container's init, from
// the rules in its config: with Docker's default profile that is 2.5-3.5 ms
// of libseccomp work (which grows with the square of the rule count) on
// every launch's critical path. The filter is the same for every launch
// with the same profile, so tether compiles it once, with libcontainer's own
// code (sandbox.compiledSeccomp), and hands the program to the container.
// bubblewrap's --seccomp FD works the same way.
//
// This package is the container's half: a trampoline. The container's
// process is this binary (passed as a descriptor), with argv
// [/proc/self/fd/3, Arg, program, args...]. A C constructor, which runs before the Go runtime and before
// every other constructor, sees Arg, reads the filter's flags and program
// from descriptor 4,
// closes descriptors 3 and 4, checks that no_new_privs is set, installs the
// filter, and executes the program, looked up in $PATH as libcontainer's
// init does. Any failure ends the process without running the program and
// writes the reason, worded as libcontainer's init words it, to the error
// pipe on descriptor 5 (close-on-exec, so a successful exec closes it). The
// trampoline is never the Go program: it executes or exits.
package seccompexec

/*
#include "seccompexec.h"
*/
import "C"

import "strconv"

// Arg is the trampoline's argv[1].
const Arg = C.SECCOMPEXEC_ARG

// The trampoline's descriptors: libcontainer's Process.ExtraFiles must be
// exactly [exe, program, error pipe], which it numbers from 3, then the
// gate socket when the exec gate is wanted.
const (
	ExeFD  = C.SECCOMPEXEC_EXE_FD
	ProgFD = C.SECCOMPEXEC_PROG_FD
	ErrFD  = C.SECCOMPEXEC_ERR_FD
	// GateFD is optional: a unix socket that asks for the exec gate and
	// receives its seccomp listener (see seccompexec.h).
	GateFD = C.SECCOMPEXEC_GATE_FD
)

// Header is the size of the header that starts the program descriptor:
// seccomp(SECCOMP_SET_MODE_FILTER)'s flags, the instruction count and the
// Landlock section's length, native-endian uint32s, padded; the struct
// sock_filter array follows, then the Landlock section (see
// seccompexec.h).
const Header = C.SECCOMPEXEC_HEADER

// LandlockEnv names the environment variable that gives a session's
// supervisor the descriptor of its Landlock section (seccompexec.h).
const LandlockEnv = C.SECCOMPEXEC_LANDLOCK_ENV

// Observe, in the flags word, asks the exec gate's filter to notify open,
// openat, creat and connect too (runtime observation); the trampoline
// clears it before the flags reach seccomp(2).
const Observe = C.SECCOMPEXEC_OBSERVE

// Create, in the flags word, asks the gate's filter to notify every system
// call that can name a directory entry (mkdir, mknod, symlink, link,
// rename in all their forms, creat, and open and openat with O_CREAT: the
// creation gate); NoExec leaves execve and execveat out. The trampoline
// clears both before the flags reach seccomp(2).
const (
	Create = C.SECCOMPEXEC_CREATE
	NoExec = C.SECCOMPEXEC_NOEXEC
)

// Sealed, in the flags word, asks the gate's filter to notify the calls
// the mount plan's read-only workspace refuses unreported (chmod, chown,
// utimes, the path forms of setxattr and removexattr, unlink, rmdir,
// truncate, and open and openat for writing without O_CREAT:
// sandbox/notify_sealed_linux.go); the trampoline clears it.
const Sealed = C.SECCOMPEXEC_SEALED

// The creation helper's requests (seccompexec.h): the operations, the
// size of struct seccompexec_create_req, the most groups a request
// carries, and the variable that asks a session's supervisor for the
// creation gate.
const (
	CreateMkdir    = C.SECCOMPEXEC_CREATE_MKDIR
	CreateMknod    = C.SECCOMPEXEC_CREATE_MKNOD
	CreateSymlink  = C.SECCOMPEXEC_CREATE_SYMLINK
	CreateLink     = C.SECCOMPEXEC_CREATE_LINK
	CreateRename   = C.SECCOMPEXEC_CREATE_RENAME
	CreateOpen     = C.SECCOMPEXEC_CREATE_OPEN
	CreateBind     = C.SECCOMPEXEC_CREATE_BIND
	CreateTruncate = C.SECCOMPEXEC_CREATE_TRUNCATE
	CreateConnect  = C.SECCOMPEXEC_CREATE_CONNECT
	CreateChmod    = C.SECCOMPEXEC_CREATE_CHMOD
	// LinkDescriptor: a link of the open file that is the first directory.
	LinkDescriptor = C.SECCOMPEXEC_LINK_DESCRIPTOR
	// OpenDescriptor: an open (or truncate) of the file that is the
	// first directory.
	OpenDescriptor = C.SECCOMPEXEC_OPEN_DESCRIPTOR

	CreateReqSize   = C.sizeof_struct_seccompexec_create_req
	CreateMaxGroups = C.SECCOMPEXEC_CREATE_MAX_GROUPS
	CreateEnv       = C.SECCOMPEXEC_CREATE_ENV
)

// CreateSyscall is a system call the creation gate's filter notifies:
// always, or (FlagsArg >= 0) when that argument makes it the gate's (an
// open's flags, a chmod's mode).
type CreateSyscall struct {
	Nr, FlagsArg int
}

// CreateSyscalls returns the system calls the creation gate's filter
// notifies, from the filter's own table.
func CreateSyscalls() []CreateSyscall {
	var nrs, args [64]C.int
	n := int(C.seccompexec_create_syscalls(&nrs[0], &args[0], 64))
	out := make([]CreateSyscall, n)
	for i := range out {
		out[i] = CreateSyscall{int(nrs[i]), int(args[i])}
	}
	return out
}

// SealedSyscalls returns the system calls the filter notifies with Sealed
// (FlagsArg >= 0: an open, when that argument's access mode is not
// O_RDONLY or it has O_TRUNC), from the filter's own table.
func SealedSyscalls() []CreateSyscall {
	var nrs, args [64]C.int
	n := int(C.seccompexec_sealed_syscalls(&nrs[0], &args[0], 64))
	out := make([]CreateSyscall, n)
	for i := range out {
		out[i] = CreateSyscall{int(nrs[i]), int(args[i])}
	}
	return out
}

// Argv is the container process's argv that runs args under the filter.
func Argv(args []string) []string {
	return append([]string{"/proc/self/fd/" + strconv.Itoa(ExeFD), Arg}, args...)
}
