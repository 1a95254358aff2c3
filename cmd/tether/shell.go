package main

import (
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand("shell", newShellCmd) }

// interactiveShell starts bash when the sandbox has it, sh otherwise.
const interactiveShell = `if command -v bash >/dev/null 2>&1; then exec bash -i; else exec sh -i; fi`

func newShellCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:         "shell [flags] [-- PROGRAM [ARG...]] | shell --session NAME",
		Annotations: map[string]string{annoWrapper: "yes"},
		Short:       "Open a shell in a sandbox, or attach to a daemon session's",
		Long: `With --session NAME, attach to the daemon's session NAME (tether serve must be
running; the session is the one "tether run --session NAME" uses, created on
first use with --profile and --cwd). Each line you type (or a block that
continues over several lines, such as a loop) is sent to the daemon as one
terminal call, exactly as an agent's call: the approval engine decides it
(hardline floor, deny rules, the job's mandate, the approval queue, answered
with "tether approvals"), the exec gate checks every program it executes,
and it runs in the session's persistent sandbox, so the working directory,
files in /tmp and background processes carry over to the next line. Output
is the command's, masked like the agent's. A refused line prints why and the
shell goes on. It is not a terminal inside the sandbox: programs that need
one (editors, pagers, job control) do not work there; ^C stops the
running command; exit or end of input (^D) leaves, and the session stays
for the next attach. Without a daemon it
exits 125 and says how to start one.

Without --session, open an interactive shell (or PROGRAM) on a real terminal
allocated inside a sandbox of this process's own, placed as "tether run"
places a command: the profile's terminal policy (workspace, rootfs, network,
per-sandbox limits, protected paths, environment; see tether run --help),
which the flags may only narrow. The program itself is decided by the
approval engine first (on the cli platform: asked on the terminal when it
needs approval), and every program executed inside passes the exec gate
(hardline floor and deny rules on its real argv); the lines typed into an
interactive terminal cannot be analysed one by one, so they are not
approved one by one: use --session for that. tty, stty, job control and
full-screen programs work; the host terminal is put in raw mode and
restored on exit, and window size changes follow it. The profile's
per-command timeout and output cap do not apply to an interactive shell. The
sandbox is destroyed, with every process started in it, when the shell
exits ("tether sessions list" shows it while it lives). A profile whose
network is the egress proxy needs --network none here, or --session.

Exit status: the shell's own (126, 127 and 128+N included); with --session,
the status of the last line run (125 if it was refused); 125 when tether
itself did not run it (a usage error, including stdin not being a terminal
without --session, no daemon for --session, a refused program, or a sandbox
that could not be set up).`,
		Example: `  tether shell
  tether shell --memory 128M -- python3
  tether serve & tether shell --session work`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("session") {
				return attachShell(cmd, f, args)
			}
			if f.socket != "" {
				return usageErr("--socket goes with --session NAME")
			}
			return runShell(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profile, "profile", "", "profile name (default: the configuration's default_profile; its parent cgroup is <prefix>/<profile>)")
	fl.StringVar(&f.session, "session", "", "attach to the daemon's session NAME (needs tether serve; letters, digits, _ . -)")
	fl.StringVar(&f.socket, "socket", "", "daemon socket for --session (default: $TETHER_SOCKET, else the daemon's default socket)")
	addPolicyFlags(fl, &f)
	fl.StringVar(&f.gate.configPath, "config", "", "configuration file (default: $TETHER_CONFIG, XDG, /etc, else the embedded default)")
	fl.StringVar(&f.stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	fl.StringVar(&f.cgroupPrefix, "cgroup-prefix", "", "cgroup directory of all sandboxes (default: $TETHER_CGROUP_PREFIX or tether)")
	_ = fl.MarkHidden("state-root")
	_ = fl.MarkHidden("cgroup-prefix")
	return cmd
}

// localShellSession names tether shell's own session sandbox.
const localShellSession = "shell"

func runShell(cmd *cobra.Command, f runFlags, args []string) error {
	stdin := int(os.Stdin.Fd())
	saved, err := unix.IoctlGetTermios(stdin, unix.TCGETS)
	if err != nil {
		return usageErr("tether shell needs a terminal on stdin (use tether run for non-interactive commands, or tether shell --session NAME)")
	}
	conf, prof, err := runProfile(f.gate, f.profile)
	if err != nil {
		return err
	}
	f.gate.platform = "cli"
	r := runnerFor(f.stateRoot, f.cgroupPrefix, f.profile, 0)
	// Reap what a crashed tether left first, as tether run does.
	_, _ = sandbox.GC(sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
	// The pipeline every entry point uses: its session sandboxes pass the
	// engine's exec gate.
	rp, err := newRunPipeline(f.gate, conf, r)
	if err != nil {
		return err
	}
	defer rp.Close()

	ctx, stop := signal.NotifyContext(cmd.Context(), unix.SIGTERM, unix.SIGHUP)
	defer stop()
	pl, err := placeFromProfile(ctx, cmd.Flags(), f, rp.Runner, prof)
	if err != nil {
		return err
	}
	if pl.Proxy {
		return usageErr("profile %s's network is the egress proxy, which tether shell's own sandbox does not serve: pass --network none, or attach to a daemon session (tether shell --session NAME)", prof.Name)
	}
	cfg := pl.Config
	// An interactive shell is not one command: the profile's per-command
	// timeout and output cap do not apply to it (its limits do).
	cfg.Limits.Timeout, cfg.Limits.OutputBytes = 0, 0

	c := sandbox.Command{Args: args, Shell: interactiveShell}
	if len(args) > 0 {
		c.Shell = ""
	}
	text, err := commandText(c.Shell, args)
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	d, err := rp.Engine.Decide(ctx, approval.Request{Command: text, Profile: prof.Name, Platform: rp.platform, Cwd: pl.Root, Home: home})
	if err != nil {
		return rp.refusalOf(d, err, false)
	}

	s, err := rp.Sessions.Open(ctx, prof.Name, localShellSession, sandbox.SessionSpec{Config: cfg, ProfileLimits: pl.ProfileLimits})
	if err != nil {
		return fmt.Errorf("opening the session sandbox: %w", err)
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
