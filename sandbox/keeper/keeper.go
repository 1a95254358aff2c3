// Package keeper is the watch that outlives a tether process: when the
// process that owns sandboxes dies, however it died (SIGKILL and OOM kills
// included), its keeper has every sandbox it left reaped at once.
//
// The kernel ties a parent-death signal to the thread that forked a
// child, libcontainer sets one only on its first bootstrap process, and a
// sandboxed command may clear its own; the pid 1 of a one-shot sandbox is
// the command itself. None of that can be relied on, so the watch lives
// outside every sandbox: a small process of its own, started by the owner
// (package sandbox), in its own session so that a signal to the owner's
// process group does not reach it, ignoring the termination signals.
//
// This package is the keeper's half. The owner starts this binary with
// argv [exe, Arg, owner pid] and the read end of a pipe as stdin, and
// writes lines to the pipe: "+ROOT\tPREFIX\n" before it builds a sandbox
// under state root ROOT and cgroup prefix PREFIX, "-ROOT\tPREFIX\n" once
// that sandbox is gone. A C constructor, which runs before the Go runtime,
// sees Arg and counts. When the pipe reads end-of-file (the owner's last
// descriptor closed: it exited, by any cause), the keeper waits for the
// owner's exit to complete (a pidfd: its locks are released by then) and,
// if any sandbox was outstanding, executes this binary again with argv
// [exe, ReapArg, ROOT, PREFIX, ...] for the pairs with outstanding
// sandboxes; package sandbox's Init runs its garbage collection for them,
// which kills what no live owner holds. Otherwise the keeper just exits: a
// clean exit costs no Go runtime at all.
package keeper

/*
#include "keeper.h"
*/
import "C"

// Arg is the keeper's argv[1].
const Arg = C.KEEPER_ARG

// ReapArg is argv[1] of the reaping process a keeper executes.
const ReapArg = C.KEEPER_REAP_ARG

// MaxLine is the longest hold line the keeper accepts (it ignores longer
// ones, so the owner refuses to build a sandbox it could not announce).
const MaxLine = C.KEEPER_MAX_LINE
