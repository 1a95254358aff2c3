// Command benchsession serves one warm tether session sandbox over a unix
// socket, for the "tether session (warm)" row of scripts/bench-launch.sh. It
// is a developer tool, not part of tether: it stands in for the daemon
// ("tether serve") that will own sessions.
//
// Usage:
//
//	benchsession serve -state-root DIR -cgroup-prefix NAME [-parent PID] SOCKET
//	benchsession exec SOCKET PROGRAM [ARG...]
//	client SOCKET PROGRAM [ARG...]          (./client: the same, smaller)
//
// serve opens the session (host layout, default seccomp, pids limit 1024,
// the exec gate with the approval engine's check as tether serve has it),
// runs one command in it to warm it up, prints "ready" and then runs each
// request in the session. It closes the session and exits when its parent
// process (or -parent PID) is gone or on SIGTERM/SIGINT. exec sends one command and exits with
// its status. The row uses ./client, which does the same with raw syscalls
// so that the launch of this (large, libcontainer-linked) binary does not
// count: it measures a tiny client's launch, the round trip and the command
// in the warm session.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
)

func init() {
	// The session's container init re-executes this binary (see the
	// sandbox package documentation).
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchsession serve [-state-root DIR] [-cgroup-prefix NAME] SOCKET | benchsession exec SOCKET PROGRAM [ARG...]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchsession:", err)
			os.Exit(1)
		}
	case "exec":
		os.Exit(execute(os.Args[2], os.Args[3:]))
	default:
		fmt.Fprintf(os.Stderr, "benchsession: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	stateRoot := fs.String("state-root", "", "session state root")
	prefix := fs.String("cgroup-prefix", "", "cgroup prefix")
	parent := fs.Int("parent", os.Getppid(), "exit when this process is gone")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		return errors.New("serve wants flags and one SOCKET")
	}
	// The pipeline tether serve assembles (runner.NewPipeline): its
	// session sandboxes pass the engine's exec gate. The audit log goes to
	// a throwaway state directory; no mandate store is opened.
	cfg, err := config.Default()
	if err != nil {
		return err
	}
	stateDir, err := os.MkdirTemp("", "benchsession-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	cfg.StateDir = stateDir
	p, err := runner.NewPipeline(runner.PipelineOptions{Config: cfg, Mandates: runner.MandatesNone,
		Sandbox: sandbox.Runner{StateRoot: *stateRoot, CgroupPrefix: *prefix}})
	if err != nil {
		return err
	}
	defer p.Close()
	m := p.Sessions
	ctx := context.Background()
	// The exec gate decides for the session's profile, which must be one
	// of the configuration's (an unknown one refuses every exec).
	s, err := m.Open(ctx, "default", "warm", sandbox.SessionSpec{Config: sandbox.Config{Limits: sandbox.Limits{Pids: 1024}}})
	if err != nil {
		return err
	}
	if _, err := s.Run(ctx, sandbox.Command{Args: []string{"/bin/true"}}); err != nil {
		return err
	}
	l, err := net.Listen("unix", fs.Arg(0))
	if err != nil {
		return err
	}
	defer l.Close()

	// Stop with the parent (the benchmark script) or a signal.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if syscall.Kill(*parent, 0) == syscall.ESRCH {
				stop <- syscall.SIGTERM
				return
			}
		}
	}()
	go func() {
		<-stop
		l.Close()
	}()
	fmt.Println("ready")
	for {
		c, err := l.Accept()
		if err != nil {
			return nil // closed by stop
		}
		go handle(ctx, s, c)
	}
}

// handle runs one request: NUL-separated argv on one line; the reply is
// the exit status as a decimal line.
func handle(ctx context.Context, s *sandbox.Session, c net.Conn) {
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	argv := strings.Split(strings.TrimSuffix(line, "\n"), "\x00")
	code := 125
	if res, err := s.Run(ctx, sandbox.Command{Args: argv}); res != nil {
		code = res.ExitCode
	} else {
		fmt.Fprintln(os.Stderr, "benchsession:", err)
	}
	fmt.Fprintf(c, "%d\n", code)
}

func execute(sock string, argv []string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchsession:", err)
		return 125
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "%s\n", strings.Join(argv, "\x00")); err != nil {
		return 125
	}
	var code int
	if _, err := fmt.Fscan(c, &code); err != nil {
		return 125
	}
	return code
}
