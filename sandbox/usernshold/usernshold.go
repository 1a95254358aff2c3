// Package usernshold makes user namespaces owned by an unprivileged id.
//
// The kernel charges a user namespace's per-user counts (inotify instances
// and watches, pending signals, locked memory, RLIMIT_NPROC...) to the
// namespace's owner in its parent namespace: a namespace that root
// creates, as libcontainer's init does, charges every sandbox process to
// host root. A namespace created by a process running as the sandbox's own
// host id charges that id instead.
//
// The holder is this binary started with argv [exe, Arg] and the sandbox's
// host uid and gid as its credentials. A C constructor, before the Go
// runtime starts, unshares a user namespace, writes one byte to stdout
// ('u', or 'e' when unshare failed), and waits for stdin to close. Its
// parent writes the namespace's id maps and lets libcontainer join it by
// /proc/PID/ns/user; once the container's init has joined, the holder may
// go. The holder never runs Go code.
package usernshold

/*
#include "usernshold.h"
*/
import "C"

// Arg is the holder's argv[1].
const Arg = C.USERNSHOLD_ARG
