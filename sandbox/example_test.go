package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tether-dev/tether/sandbox"
)

// Running a shell command with limits in the current directory. Needs root
// for enforced limits (compile-only example).
func ExampleRunner_Run() {
	wd, _ := os.Getwd()
	r := &sandbox.Runner{Profile: "build"}
	res, err := r.Run(context.Background(), sandbox.Config{
		Workspace: wd,
		Limits:    sandbox.Limits{MemoryBytes: 512 << 20, Pids: 256, CPUs: 1, Timeout: time.Minute, OutputBytes: 1 << 20},
	}, sandbox.Command{Shell: "make test", Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "could not run:", err)
		return
	}
	fmt.Println("exit", res.ExitCode, "timed out", res.TimedOut, "oom", res.OOMKilled, "not enforced", res.NotEnforced)
}
