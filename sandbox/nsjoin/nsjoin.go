// Package nsjoin lets a tether without root act inside a sandbox's mount
// namespace.
//
// Root tether mounts the protected paths from a thread that joins the
// sandbox's mount namespace (package sandbox, protect_linux.go). Without
// root that join needs capabilities the process has only inside the
// sandbox's user namespace, which it owns, and setns(2) into a user
// namespace refuses a multi-threaded process such as any Go program.
//
// The joining process is this binary started with argv [exe, Arg] and
// descriptors 3 and 4 open on the sandbox's /proc/PID/ns/user and
// /proc/PID/ns/mnt. A C constructor, before the Go runtime starts, makes
// the process undumpable and joins both namespaces (or writes why not to
// stderr and exits 1); then the Go runtime starts inside them and package
// sandbox's Init makes the mounts. The sandbox's processes cannot see the
// joining process: it stays in the host's pid namespace.
package nsjoin

/*
#include "nsjoin.h"
*/
import "C"

// Arg is the joining process's argv[1].
const Arg = C.NSJOIN_ARG
