// Package cgwarm takes the wait out of placing a container in its cgroups.
//
// Moving a process between cgroups takes the kernel's global
// cgroup_threadgroup_rwsem for writing. The first such write after a quiet
// spell waits for an RCU grace period (5-15 ms measured on this project's
// cgroup v1 hosts), while writes within a grace period of an earlier one do
// not wait. Every container start pays that wait once, when libcontainer
// moves the container's init into its cgroups — unless an earlier write has
// already paid it. Prime is that earlier write: started in the background
// some milliseconds before the container is placed, it turns the wait into
// time spent on set-up that had to happen anyway.
//
// The work is done in C (cgwarm.c) so that it can start before the Go
// runtime does: a constructor begins Prime on a thread of its own when the
// binary is run as `tether run` by root (argv[0] named tether, argv[1]
// "run"), about 0.3 ms into the process, where the earliest Go package
// initialiser would start it some milliseconds later. Runner.RunGated calls
// Prime again for library users, which costs nothing once the lock is warm.
package cgwarm

/*
#include <stdlib.h>
#include "cgwarm.h"
*/
import "C"

import "unsafe"

// Prime moves this process into the cgroup it is already in, in one
// hierarchy: a move that changes nothing but takes the lock. It blocks for
// the grace period when the lock is cold, so call it from a goroutine. Best
// effort: a host where it cannot write (no root, no cgroupfs) just keeps
// the wait.
func Prime() { C.cgwarm_prime() }

// procsFile is the C function Prime uses to choose its cgroup.procs file,
// for tests: procCgroup is the text of /proc/self/cgroup and paths are
// looked up under sysroot ("" for the real root).
func procsFile(procCgroup, sysroot string) string {
	text, root := C.CString(procCgroup), C.CString(sysroot)
	defer C.free(unsafe.Pointer(text))
	defer C.free(unsafe.Pointer(root))
	var out [1200]C.char
	if C.cgwarm_procs_file(text, root, &out[0], C.size_t(len(out))) == 0 {
		return ""
	}
	return C.GoString(&out[0])
}

// wanted is the C constructor's choice for `tether run ARGS...` with
// $TETHER_STATE_ROOT set to envStateRoot, for tests.
func wanted(args []string, envStateRoot string) bool {
	argv := make([]*C.char, 0, len(args)+3)
	for _, a := range append([]string{"tether", "run"}, args...) {
		c := C.CString(a)
		defer C.free(unsafe.Pointer(c))
		argv = append(argv, c)
	}
	argv = append(argv, nil)
	env := C.CString(envStateRoot)
	defer C.free(unsafe.Pointer(env))
	return C.cgwarm_wanted(C.int(len(argv)-1), &argv[0], env) != 0
}
