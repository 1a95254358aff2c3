package sandbox

import (
	"os"

	// Registers the device-rules manager so the devices cgroup is enforced.
	_ "github.com/opencontainers/cgroups/devices"
	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor joins the container's namespaces in the
	// re-executed init before the Go runtime starts.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"

	// The trampoline that loads a precompiled seccomp filter in a sandbox
	// is a C constructor of this binary (see run_linux.go).
	_ "github.com/tether-dev/tether/sandbox/seccompexec"
	// So is the holder that makes a sandbox's user namespace as its own
	// host id (identity_linux.go).
	_ "github.com/tether-dev/tether/sandbox/usernshold"

	// So is the process that joins a sandbox's namespaces for a rootless
	// tether to mount its protected paths (protect_linux.go).
	_ "github.com/tether-dev/tether/sandbox/nsjoin"
	// So is the helper that makes a sandbox's memfds non-executable
	// (memfd_linux.go).
	_ "github.com/tether-dev/tether/sandbox/memfdnoexec"

	// The keeper that reaps this process's sandboxes when it dies is a C
	// constructor of this binary too (keeper_linux.go).
	_ "github.com/tether-dev/tether/sandbox/keeper"
)

// InitArg is the first argument with which libcontainer re-executes the
// current binary as a container's init.
const InitArg = "init"

// IsInit reports whether this process was started as a container's init,
// as the helper that compiles seccomp filters (seccomp_compiled.go), or as
// the reaper a keeper starts when its owner died (keeper_linux.go), or as
// the process that mounts a rootless sandbox's protected paths
// (protect_linux.go).
func IsInit() bool {
	return len(os.Args) > 1 && os.Args[1] == InitArg && os.Getenv("_LIBCONTAINER_INITPIPE") != "" ||
		isSeccompCompile() || isKeeperReap() || isProtectJoin()
}

// Init runs the container init (or the seccomp helper) and never returns.
// Call it from the main package's init function when IsInit reports true
// (and from TestMain of any test binary that starts sandboxes):
// libcontainer starts containers by re-executing /proc/self/exe with
// InitArg, and the sandbox starts its helper the same way.
func Init() {
	if isSeccompCompile() {
		seccompCompileMain()
		panic("seccompCompileMain returned")
	}
	if isKeeperReap() {
		keeperReapMain()
		panic("keeperReapMain returned")
	}
	if isProtectJoin() {
		protectJoinMain()
		panic("protectJoinMain returned")
	}
	libcontainer.Init()
	panic("libcontainer.Init returned")
}
