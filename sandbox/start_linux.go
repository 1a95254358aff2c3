package sandbox

import (
	"fmt"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// startGuarded runs start, libcontainer's Container.Start or Run of
// process, and turns a panic inside it into an error wrapping
// ErrEnginePanic: one sandbox that fails to start must not take the whole
// process (tether serve, tether mcp) and every other sandbox's supervision
// down with it.
//
// The panic it is for: libcontainer 1.5.3's goCreateMountSources gives its
// mount-source thread one minute, after which a context.AfterFunc closes
// the request channel; a container init that asks for a mount source
// (idmapped or host-only bind mounts, as a workspace is) after that races
// the request function's send on that closed channel against its
// ctx.Done case, and the send panics about one time in two. A set-up that
// slow happens only on a machine under heavy load (it was seen in the
// cgroup v2 guest under TCG emulation). The race came with runc PR #4908
// (switching goCreateMountSources to ctx.AfterFunc).
//
// libcontainer's own clean-up on a failed start runs only for a returned
// error, not a panic, so the init is killed here; the caller's failure
// path then destroys the container (its cgroups and state) as for any
// failed start.
func startGuarded(process *libcontainer.Process, start func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			// Errors only say the init is gone already or never started.
			_ = process.Signal(unix.SIGKILL)
			_, _ = process.Wait()
			err = fmt.Errorf("%w: %v", ErrEnginePanic, r)
		}
	}()
	return start()
}
