package main

import (
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
		Use:         "shell [flags] [-- PROGRAM [ARG...]]",
		Annotations: map[string]string{annoWrapper: "yes"},
		Short:       "Open an interactive shell in a session sandbox",
		Long: `Open an interactive shell (or PROGRAM) on a terminal inside the sandbox of
session --session of profile --profile.

The sandbox is placed as "tether run" places a command: the profile's
terminal policy (workspace, rootfs, network, per-sandbox limits, protected
paths, environment; see tether run --help), which the flags may only narrow.
It is kept alive as a session: the shell gets a real controlling terminal
allocated inside the sandbox (tty, stty, job control and full-screen programs
work), the host terminal is put in raw mode and restored on exit, and window
size changes follow the host terminal. The profile's per-command timeout and
output cap do not apply to an interactive shell.

This command owns its session itself, outside the daemon: it is created when
the shell starts and destroyed, with every process started in it, when the
shell exits. It is not the daemon's session of the same name, and the shell's
commands do not pass the approval engine one by one (an interactive terminal
cannot be analysed command by command); to run commands in a daemon session,
through its gates, use "tether run --session S" with "tether serve" running.
Use "tether sessions list" to see session sandboxes and "tether sessions
close" to destroy one.

Exit status: the shell's own (126, 127 and 128+N included); 125 when tether
itself did not run it (a usage error, including stdin not being a terminal,
or a sandbox that could not be set up).`,
		Example: `  tether shell
  tether shell --profile default --session debug --memory 128M
  tether shell -- python3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShell(cmd, f, session, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "default", "profile name (parent cgroup <prefix>/<profile>)")
	fl.StringVar(&session, "session", "shell", "session name (letters, digits, _ . -)")
	addPolicyFlags(fl, &f)
	fl.StringVar(&f.gate.configPath, "config", "", "configuration file (default: $TETHER_CONFIG, XDG, /etc, else the embedded default)")
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
	conf, prof, err := runProfile(f.gate, f.profile)
	if err != nil {
		return err
	}
	pl, err := placeFromProfile(cmd.Flags(), f, conf, prof)
	if err != nil {
		return err
	}
	cfg := pl.cfg
	// An interactive shell is not one command: the profile's per-command
	// timeout and output cap do not apply to it (its limits do).
	cfg.Limits.Timeout, cfg.Limits.OutputBytes = 0, 0
	r := runnerFor(f.stateRoot, f.cgroupPrefix, f.profile, 0)
	// Reap what a crashed tether left first, as tether run does.
	_, _ = sandbox.GC(sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	m := &sandbox.Sessions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix}
	defer m.Close()

	ctx, stop := signal.NotifyContext(cmd.Context(), unix.SIGTERM, unix.SIGHUP)
	defer stop()
	s, err := m.Open(ctx, f.profile, session, sandbox.SessionSpec{Config: cfg, ProfileLimits: pl.profLimits})
	if err != nil {
		return fmt.Errorf("opening the session sandbox: %w", err)
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
		return &exitError{Code: exitWrapper, Err: err}
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
