#ifndef TETHER_SECCOMPEXEC_H
#define TETHER_SECCOMPEXEC_H

#include <stdint.h>

// argv[1] of the trampoline (Arg in seccompexec.go).
#define SECCOMPEXEC_ARG "--tether-seccomp-exec"

// The descriptors the trampoline is started with, in the order of
// libcontainer's Process.ExtraFiles (after stdin, stdout and stderr).
#define SECCOMPEXEC_EXE_FD 3  // this binary (how it was executed)
#define SECCOMPEXEC_PROG_FD 4 // the filter and the program's environment (see below)
#define SECCOMPEXEC_ERR_FD 5  // write end of the error pipe
#define SECCOMPEXEC_GATE_FD 6 // optional: a unix socket for the exec gate's listener

// The program descriptor holds, in native byte order: the flags of
// seccomp(SECCOMP_SET_MODE_FILTER) (uint32), the number of instructions
// (uint32), the length of the Landlock section (uint32, zero for none),
// padding (uint32), the instructions (struct sock_filter), the Landlock
// section, then the program's environment, each entry NUL-terminated. The trampoline itself starts
// with only the environment libcontainer gives an empty one, so that
// nothing of the program's (GLIBC_TUNABLES, LD_PRELOAD for a dynamically
// linked build) reaches libc before the filter is loaded. A count of
// zero means no program (libcontainer loaded the sandbox's filter): the
// trampoline then only installs the exec gate, which must be asked for.
//
// With descriptor SECCOMPEXEC_GATE_FD present (a unix socket), the
// trampoline also installs the exec gate's filter (execve and execveat
// return SECCOMP_RET_USER_NOTIF) with SECCOMP_FILTER_FLAG_NEW_LISTENER and
// sends the listener to the socket (SCM_RIGHTS, one byte "g") before it
// executes anything, so that every exec of the sandbox, the program's
// first included, waits for tether's verdict.
//
// SECCOMPEXEC_OBSERVE, SECCOMPEXEC_CREATE and SECCOMPEXEC_NOEXEC in the
// flags word are not seccomp flags (they are cleared before the flags reach
// seccomp(2)). With the gate, OBSERVE makes the gate's filter notify open,
// openat, creat and connect too (runtime observation; tether answers them
// with SECCOMP_USER_NOTIF_FLAG_CONTINUE); CREATE every system call that can
// name a directory entry (mkdir, mknod, symlink, link, rename in all their
// forms, creat, and open and openat with O_CREAT: the creation gate);
// NOEXEC leaves execve and execveat out (a gate for creations alone);
// SEALED the calls the mount plan's read-only workspace refuses unreported
// (chmod, chown, utimes, the path forms of setxattr and removexattr,
// unlink, rmdir, truncate, and open and openat for writing:
// sandbox/notify_sealed_linux.go).
#define SECCOMPEXEC_HEADER 16
#define SECCOMPEXEC_OBSERVE 0x80000000u
#define SECCOMPEXEC_CREATE 0x20000000u
#define SECCOMPEXEC_NOEXEC 0x10000000u
#define SECCOMPEXEC_SEALED 0x08000000u
#define SECCOMPEXEC_MAX_DATA (16 << 20)

// The Landlock section (sandbox/landlock.go writes it) describes a
// ruleset that the trampoline applies before it loads any filter, so that
// the program and every process it starts are confined: handled
// filesystem rights, handled network rights, scopes, padding (uint64
// each), the size of struct landlock_ruleset_attr to pass,
// landlock_restrict_self's flags, the rule count, the port count (uint32
// each), then each rule: its rights when the path is a directory and
// when it is not (uint64 each), the length of its path, the length of
// the prefix resolved following symbolic links (uint32 each; a mount
// point of tether's, "/", or the whole path) and the path (no NUL); then
// each TCP port a connect may go to (uint64 each), granted the handled
// network rights.
// Beneath that prefix the path is opened one component at a time with
// O_PATH|O_NOFOLLOW: a rule with a symbolic link there is left out and
// said on stderr, never followed. A path
// that does not exist is left out; any other failure ends the process
// without running the program.
#define SECCOMPEXEC_LANDLOCK_HEADER 48

// A session's supervisor (argv[1] SECCOMPEXEC_SUPERVISOR_ARG) applies the
// same section, read from the descriptor named by the environment
// variable SECCOMPEXEC_LANDLOCK_ENV, before the Go runtime starts its
// threads: every thread of the supervisor, and so every command, is
// confined.
#define SECCOMPEXEC_SUPERVISOR_ARG "tether-supervisor"
#define SECCOMPEXEC_LANDLOCK_ENV "_TETHER_LANDLOCK_FD"

// The creation helper (sandbox/notify_create_linux.go): with
// SECCOMPEXEC_CREATE, the process that installs the gate's filter first
// forks a helper, which is in the sandbox's namespaces, identity, Landlock
// domain and seccomp filter but not under the gate's filter, and is made
// non-dumpable. The listener's message carries the helper's pidfd as a
// second descriptor. The helper then serves the gate's socket: tether
// sends a request (struct seccompexec_create_req, then ngroups uint32
// groups, then the names, each NUL-terminated, with the directories they
// are relative to as SCM_RIGHTS), the helper takes the caller's umask,
// fsuid, fsgid, groups and effective capabilities, performs the call,
// takes its own back and answers with an int64 (the result or -errno)
// and, for an open, the new descriptor as SCM_RIGHTS. It ends when the
// socket closes.
#define SECCOMPEXEC_CREATE_MKDIR 1
#define SECCOMPEXEC_CREATE_MKNOD 2
#define SECCOMPEXEC_CREATE_SYMLINK 3
#define SECCOMPEXEC_CREATE_LINK 4
#define SECCOMPEXEC_CREATE_RENAME 5
#define SECCOMPEXEC_CREATE_OPEN 6
// bind(2) of an AF_UNIX socket to a pathname: name 0 (the last element, at
// most 107 bytes) in the directory of dirfd[0]; dirfd[1] is the socket.
#define SECCOMPEXEC_CREATE_BIND 7
// truncate(2) of name 0 to the length in dev: the helper opens the name
// without following a symlink (tether followed them and judged where it
// lands), truncates it only when it is a regular file (EISDIR, EINVAL as
// the kernel's truncate says otherwise), through its own /proc/self/fd.
#define SECCOMPEXEC_CREATE_TRUNCATE 8
// connect(2) of the AF_UNIX socket dirfd[0]: to the socket file dirfd[1]
// (an O_PATH descriptor of what tether resolved and judged), through the
// helper's own /proc/self/fd; or, when dirfd[1] is -1, to the address in
// name 0, hex-encoded (an abstract name may hold any byte). The socket is
// non-blocking for the call: a listener whose backlog is full fails it
// with EAGAIN rather than holding the helper, and with it every creation
// of the sandbox.
#define SECCOMPEXEC_CREATE_CONNECT 9
// chmod(2) of the file dirfd[0] (an O_PATH descriptor of what tether
// resolved, or the caller's own descriptor of an fchmod) to mode, through
// the helper's own /proc/self/fd.
#define SECCOMPEXEC_CREATE_CHMOD 10
// A link's flag beyond linkat's: name 0 is empty and dirfd[0] is the open
// file to link (the caller's own, which tether took with pidfd_getfd). The
// helper links it through its own /proc/self/fd with AT_SYMLINK_FOLLOW:
// AT_EMPTY_PATH would need the file's opener's credentials (f_cred) or
// CAP_DAC_READ_SEARCH, and the helper has neither.
#define SECCOMPEXEC_LINK_DESCRIPTOR (1ULL << 32)
// An open's or truncate's flag beyond open's: name 0 is empty and dirfd[0]
// is the file to open (the O_PATH descriptor of what a magic link such as
// /proc/self/fd/N reaches, which tether opened): the helper opens it
// through its own /proc/self/fd, as the kernel follows the caller's link.
#define SECCOMPEXEC_OPEN_DESCRIPTOR (1ULL << 32)
// At most this many supplementary groups are taken; a caller with more is
// refused by tether.
#define SECCOMPEXEC_CREATE_MAX_GROUPS 256

struct seccompexec_create_req {
	uint32_t op;
	// The directory each name is relative to: the index of the descriptor
	// in the message, or -1 for none (the name is absolute).
	int32_t dirfd[2];
	uint32_t umask;
	uint64_t flags; // open's, linkat's or renameat2's
	uint64_t mode;  // mkdir's, mknod's or open's
	uint64_t dev;   // mknod's; truncate's length
	uint64_t cap_effective;
	uint32_t fsuid, fsgid, ngroups;
	// The lengths of name 0, name 1 and a symlink's target, without their NUL.
	uint32_t len[3];
};

// seccompexec_create_syscalls fills nrs with the system calls the
// creation gate's filter notifies, and flags_arg with the argument number
// of the flags whose O_CREAT, or access mode or O_TRUNC without O_TMPFILE,
// makes it notify an open, or of the mode whose group write makes it
// notify a chmod (-1: always); returns how many.
int seccompexec_create_syscalls(int *nrs, int *flags_arg, int max);

// seccompexec_sealed_syscalls is seccompexec_create_syscalls for the calls
// the filter notifies with SECCOMPEXEC_SEALED (flags_arg: the flags whose
// access mode or O_TRUNC makes it notify an open).
int seccompexec_sealed_syscalls(int *nrs, int *flags_arg, int max);

// A session's supervisor (argv[1] SECCOMPEXEC_SUPERVISOR_ARG) starts the
// creation helper before its Go runtime starts, when the environment
// variable SECCOMPEXEC_CREATE_ENV names the helper's socket, and sends the
// helper's pidfd through it (one byte "h"). That helper is under the
// session's filter (libcontainer's, whose listener carries the gate).
#define SECCOMPEXEC_CREATE_ENV "_TETHER_CREATE_FD"

// apply_landlock applies a Landlock section of len bytes; returns 0 or an
// errno, with why saying what failed.
int seccompexec_apply_landlock(const char *sec, size_t len, char *why, size_t size);

#endif
