package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand(newShellCmd) }

// interactiveShell starts bash when the sandbox has it, sh otherwise.
const interactiveShell = `if command -v bash >/dev/null 2>&1; then exec bash -i; else exec sh -i; fi`

func newShellCmd() *cobra.Command {
	var f runFlags
	var session string
	cmd := &cobra.Command{
		Use:   "shell [flags] [-- PROGRAM [ARG...]]",
		Short: "Open an interactive shell in a session sandbox",
		Long: `Open an interactive shell (or PROGRAM) on a terminal inside the sandbox of
session --session of profile --profile.

The sandbox is the one "tether run" builds (namespaces, read-only root,
workspace, limits; see tether run --help), kept alive as a session: the shell
gets a real controlling terminal allocated inside the sandbox (tty, stty, job
control and full-screen programs work), the host terminal is put in raw mode
and restored on exit, and window size changes follow the host terminal.

Sessions are owned by a long-lived tether process. There is no daemon yet
("tether serve"), so this command owns the session itself: it is created when
the shell starts and destroyed, with every process started in it, when the
shell exits. Use "tether sessions list" to see session sandboxes and
"tether sessions close" to destroy one.

Exit status: the shell's; 2 usage error (including stdin not being a
terminal); 125 the sandbox could not be set up.`,
		Example: `  tether shell
  tether shell --profile default --session debug --memory 1G
  tether shell -- python3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShell(cmd, f, session, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "default", "profile name (parent cgroup <prefix>/<profile>)")
	fl.StringVar(&session, "session", "shell", "session name (letters, digits, _ . -)")
	fl.StringVar(&f.cwd, "cwd", "", "workspace and working directory (default: current directory)")
	fl.StringVar(&f.rootfs, "rootfs", "host", `root filesystem: "host" or a prepared directory`)
	fl.StringVar(&f.network, "network", "none", `network: "none" (loopback only) or "host"`)
	fl.StringVar(&f.memory, "memory", "", "memory limit of the whole session, e.g. 512M (default: none)")
	fl.Int64Var(&f.pids, "pids", 1024, "maximum number of processes and threads in the session (0: none)")
	fl.Float64Var(&f.cpus, "cpus", 0, "CPU limit in cores, e.g. 1.5 (0: none)")
	fl.StringVar(&f.tmpfsSize, "tmpfs-size", "64M", "size of the sandbox's /tmp")
	fl.StringVar(&f.seccomp, "seccomp", "required", `seccomp filter: "required", "optional" or "off"`)
	fl.BoolVar(&f.userns, "userns", false, "deprecated, no effect: every sandbox has its own user namespace (docs/workspace.md)")
	fl.StringVar(&f.stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	fl.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "cgroup directory of all sandboxes (default: $TETHER_CGROUP_PREFIX or tether)")
	_ = fl.MarkHidden("state-root")
	_ = fl.MarkHidden("cgroup-prefix")
	return cmd
}

func runShell(cmd *cobra.Command, f runFlags, session string, args []string) error {
	stdin := int(os.Stdin.Fd())
	saved, err := unix.IoctlGetTermios(stdin, unix.TCGETS)
	if err != nil {
		return usageErr("tether shell needs a terminal on stdin (use tether run for non-interactive commands)")
	}
	cfg, err := configFromFlags(f)
	if err != nil {
		return err
	}
	r := runnerFor(f.stateRoot, f.cgroupPrefix, f.profile, 0)
	// Reap what a crashed tether left first, as tether run does.
	_, _ = sandbox.GC(sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	m := &sandbox.Sessions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix}
	defer m.Close()

	ctx, stop := signal.NotifyContext(cmd.Context(), unix.SIGTERM, unix.SIGHUP)
	defer stop()
	s, err := m.Open(ctx, f.profile, session, sandbox.SessionSpec{Config: cfg})
	switch {
	case errors.Is(err, sandbox.ErrInvalidConfig):
		return &exitError{Code: exitUsage, Err: err}
	case err != nil:
		return &exitError{Code: exitSandboxErr, Err: err}
	}

	c := sandbox.Command{Args: args, Shell: interactiveShell}
	if len(args) > 0 {
		c.Shell = ""
	}
	term := sandbox.Terminal{Stdin: os.Stdin, Stdout: cmd.OutOrStdout(), Size: termSize(stdin)}
	if t := os.Getenv("TERM"); t != "" {
		term.Env = []string{"TERM=" + t}
	}
	resize := make(chan sandbox.Winsize, 1)
	term.Resize = resize
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, unix.SIGWINCH)
	defer signal.Stop(winch)
	go func() {
		for range winch {
			select {
			case resize <- termSize(stdin):
			default:
			}
		}
	}()

	if err := makeRaw(stdin, saved); err != nil {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("putting the terminal in raw mode: %w", err)}
	}
	res, err := s.Interactive(ctx, c, term)
	_ = unix.IoctlSetTermios(stdin, unix.TCSETS, saved)
	if res == nil {
		return &exitError{Code: exitSandboxErr, Err: err}
	}
	return exitFor(res.ExitCode, err)
}

// termSize reads the terminal's window size (zero when unknown).
func termSize(fd int) sandbox.Winsize {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil {
		return sandbox.Winsize{}
	}
	return sandbox.Winsize{Rows: ws.Row, Cols: ws.Col}
}

// makeRaw puts the terminal in raw mode (cfmakeraw): bytes, including
// ^C and ^Z, go to the sandbox's terminal, which interprets them.
func makeRaw(fd int, saved *unix.Termios) error {
	t := *saved
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	return unix.IoctlSetTermios(fd, unix.TCSETS, &t)
}
