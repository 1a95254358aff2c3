package sandbox

import (
	"os"

	// Registers the device-rules manager so the devices cgroup is enforced.
	_ "github.com/opencontainers/cgroups/devices"
	"github.com/opencontainers/runc/libcontainer"
	// nsenter's C constructor joins the container's namespaces in the
	// re-executed init before the Go runtime starts.
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

// InitArg is the first argument with which libcontainer re-executes the
// current binary as a container's init.
const InitArg = "init"

// IsInit reports whether this process was started as a container's init.
func IsInit() bool {
	return len(os.Args) > 1 && os.Args[1] == InitArg && os.Getenv("_LIBCONTAINER_INITPIPE") != ""
}

// Init runs the container init and never returns. Call it from the main
// package's init function when IsInit reports true (and from TestMain of
// any test binary that starts sandboxes): libcontainer starts containers
// by re-executing /proc/self/exe with InitArg.
func Init() {
	libcontainer.Init()
	panic("libcontainer.Init returned")
}
