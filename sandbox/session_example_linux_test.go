package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tether-dev/tether/sandbox"
)

// A long-lived process (the daemon) owns one Sessions; each tool call runs
// in the sandbox of its (profile, session), created on first use. This
// example needs root, so it is compiled but not run.
func ExampleSessions() {
	var sessions sandbox.Sessions // zero value: /run/tether, cgroup prefix "tether"
	defer sessions.Close()

	spec := sandbox.SessionSpec{
		Config: sandbox.Config{
			Workspace: "/home/me/project",
			Limits:    sandbox.Limits{MemoryBytes: 1 << 30, Pids: 512, Timeout: 30 * time.Second},
		},
		Options: sandbox.SessionOptions{PersistCwd: true, IdleTimeout: 5 * time.Minute},
	}
	ctx := context.Background()
	res, err := sessions.Run(ctx, "default", "chat-42", spec, sandbox.Command{Shell: "cd src && export GOFLAGS=-mod=mod", Stdout: os.Stdout})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exit", res.ExitCode)

	s, _ := sessions.Open(ctx, "default", "chat-42", spec)
	server, _ := s.Start(sandbox.Command{Shell: "python3 -m http.server 8000"})
	out, _, _ := server.Output()
	fmt.Printf("%s", out)

	// When the approval engine clears the session:
	_ = sessions.CloseSession("default", "chat-42")
}
