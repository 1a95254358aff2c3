package sandbox

import (
	"os"
	"runtime"
	"testing"
)

// init makes the test binary act as the container init when libcontainer
// re-executes it (as runc's libcontainer/integration tests do).
// It also pins the main goroutine to the main thread, so that the main
// thread (whose view /proc/self shows) never runs libcontainer code that
// enters a container's mount namespace.
func init() {
	runtime.LockOSThread()
	if IsInit() {
		Init()
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
