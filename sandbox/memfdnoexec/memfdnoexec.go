// Package memfdnoexec makes every memfd created in a sandbox
// non-executable: vm.memfd_noexec = 2 in the sandbox's pid namespace
// (Linux 6.3+). The sysctl is per pid namespace and hierarchical (a child
// namespace cannot lower it); it is written for the namespace of the
// process that writes it, by a process that is global root (the /proc/sys
// file's owner) with CAP_SYS_ADMIN over the namespace's user namespace.
// No process of a sandbox is global root, so tether writes it from outside.
//
// The helper is this binary started with argv [exe, Arg] and descriptor 3
// open on the sandbox's /proc/PID/ns/pid. A C constructor, before the Go
// runtime starts, makes the process undumpable, enters the pid namespace
// for its children (setns), forks, and the child, born in the sandbox's
// namespace, checks that it is (its /proc/self/ns/pid is descriptor 3's
// namespace: never the host's) and writes "2"; the helper exits with the
// child's status, the reason on stderr. It never reaches the Go runtime.
package memfdnoexec

/*
#include "memfdnoexec.h"
*/
import "C"

// Arg is the helper process's argv[1].
const Arg = C.MEMFDNOEXEC_ARG
