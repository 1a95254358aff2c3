package sandbox

import (
	"context"
	"fmt"
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

// helperEnv makes the test binary a stand-in tether that starts a long
// command and waits to be killed (TestGC* simulate a crash with it).
const helperEnv = "TETHER_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperMain(spec))
	}
	os.Exit(m.Run())
}

// helperMain runs "sleep 600" in a sandbox under the state root and cgroup
// prefix given as "STATE_ROOT:PREFIX".
func helperMain(spec string) int {
	var state, prefix string
	for i := len(spec) - 1; i >= 0; i-- {
		if spec[i] == ':' {
			state, prefix = spec[:i], spec[i+1:]
			break
		}
	}
	r := &Runner{StateRoot: state, CgroupPrefix: prefix}
	res, err := r.Run(context.Background(), Config{}, Command{Args: []string{"sleep", "600"}})
	fmt.Fprintln(os.Stderr, "helper: finished unexpectedly:", res, err)
	return 3
}
