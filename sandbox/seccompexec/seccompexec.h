#ifndef TETHER_SECCOMPEXEC_H
#define TETHER_SECCOMPEXEC_H

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
// (uint32), the instructions (struct sock_filter), then the program's
// environment, each entry NUL-terminated. The trampoline itself starts
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
// SECCOMPEXEC_OBSERVE in the flags word is not a seccomp flag (it is
// cleared before the flags reach seccomp(2)): with the gate, it makes the
// gate's filter notify open, openat, creat and connect too (runtime
// observation; tether answers them with SECCOMP_USER_NOTIF_FLAG_CONTINUE).
#define SECCOMPEXEC_HEADER 8
#define SECCOMPEXEC_OBSERVE 0x80000000u
#define SECCOMPEXEC_MAX_DATA (16 << 20)

#endif
