package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/syntax"
)

// errShellNeedsDaemon is what tether shell --session says when no daemon
// answers.
var errShellNeedsDaemon = errors.New(`--session needs a running daemon (tether serve): the session is the daemon's; start it with "tether serve &", or drop --session for a shell in a sandbox of its own`)

// maxShellInput bounds one command typed into an attached shell (a line,
// or the lines of one unfinished construct), as the daemon bounds a body.
const maxShellInput = 1 << 20

// attachShell is tether shell --session NAME: a line-by-line shell on the
// daemon's session NAME, each command a terminal call through the daemon's
// gates. A PTY inside the session would hand the sandbox a terminal whose
// typed lines no gate sees; sending each command as a call keeps every one
// of them decided by the approval engine (and the mandate), as the
// agent's are, with the exec gate behind it.
func attachShell(cmd *cobra.Command, f runFlags, args []string) error {
	if err := checkSessionName(f.session); err != nil {
		return err
	}
	if len(args) > 0 {
		return usageErr("tether shell --session reads the commands from its input; give no PROGRAM (or use tether run --session %s -- PROGRAM)", f.session)
	}
	for _, name := range oneShotOnlyFlags {
		if cmd.Flags().Changed(name) {
			return usageErr("--%s does not apply with --session: the session's sandbox follows the daemon's profile", name)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), unix.SIGTERM, unix.SIGHUP)
	defer stop()
	ds, err := attachDaemonSession(ctx, f, false, errShellNeedsDaemon)
	if err != nil {
		return err
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	_, ttyErr := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS)
	interactive := ttyErr == nil
	prompt := func(more bool) {
		if !interactive {
			return
		}
		if more {
			fmt.Fprint(stderr, "> ")
			return
		}
		fmt.Fprintf(stderr, "tether:%s$ ", f.session)
	}
	if interactive {
		fmt.Fprintf(stderr, "tether: attached to the daemon's session %s (%s); each command goes through its gates; exit or ^D leaves\n", f.session, ds.sess.Session)
	}

	var last error // the status of the last command run
	in := bufio.NewReader(cmd.InOrStdin())
	var text strings.Builder
	prompt(false)
	for {
		line, rerr := in.ReadString('\n')
		text.WriteString(line)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return &exitError{Code: exitWrapper, Err: fmt.Errorf("reading the shell's input: %w", rerr)}
		}
		if text.Len() > maxShellInput {
			return &exitError{Code: exitWrapper, Err: fmt.Errorf("a command of over %d bytes; nothing of it ran", maxShellInput)}
		}
		command := strings.TrimSpace(text.String())
		complete := rerr != nil || command == "" || !incomplete(text.String())
		if !complete {
			prompt(true)
			continue
		}
		text.Reset()
		switch {
		case command == "" || strings.HasPrefix(command, "#"):
		case command == "exit" || command == "logout":
			return last
		default:
			// ^C stops the running command (the daemon stops it as it
			// stops a call whose client went away), not the shell.
			callCtx, stopCall := signal.NotifyContext(ctx, os.Interrupt)
			res, err := ds.call(callCtx, stderr, command, 0)
			interrupted := callCtx.Err() != nil && ctx.Err() == nil
			stopCall()
			if interrupted {
				fmt.Fprintln(stderr, "tether: interrupted")
				last = &exitError{Code: 130, Own: true}
				break
			}
			if err != nil {
				return &exitError{Code: exitWrapper, Err: fmt.Errorf("running in session %s: %w", f.session, err)}
			}
			last = reportSessionResult(stdout, stderr, false, res)
			var ee *exitError
			if errors.As(last, &ee) && !ee.Own {
				// A refusal: say why (once), and go on with the next
				// command; the status stays 125.
				fmt.Fprintf(stderr, "tether: %v\n", last)
				last = &exitError{Code: exitWrapper}
			}
		}
		if rerr != nil || ctx.Err() != nil {
			return last
		}
		prompt(false)
	}
}

// incomplete reports whether text is the start of a command that goes on
// on the next line (an open quote, loop, if, function body or pipe). Text
// that does not parse for another reason is complete: the daemon refuses
// it with its reason.
func incomplete(text string) bool {
	_, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	return syntax.IsIncomplete(err)
}
