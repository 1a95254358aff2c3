package main

import (
	"runtime"

	"github.com/tether-dev/tether/sandbox"
)

// init pins the main goroutine to the main thread before anything else
// runs, so the main thread — whose view /proc/self shows — never executes
// libcontainer code that enters a container's mount namespace. When
// libcontainer re-executes this binary as a container's init ("tether
// init"), it becomes that init and never returns. This also covers the test
// binary, which testscript runs as "tether".
func init() {
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}
