package oracle

import (
	"os"
	"runtime"
	"testing"

	"github.com/tether-dev/tether/sandbox"
)

// init makes the test binary the container init when libcontainer
// re-executes it, with the main goroutine pinned to the main thread.
func init() {
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
