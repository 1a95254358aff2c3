package sandbox

import (
	"os"
	"runtime"
	"testing"
)

// init makes the test binary act as the container init when libcontainer
// re-executes it (as runc's libcontainer/integration tests do).
func init() {
	if IsInit() {
		runtime.GOMAXPROCS(1)
		runtime.LockOSThread()
		Init()
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
