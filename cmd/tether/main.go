// Command tether is the execution control plane between an AI agent's tool
// calls and real effects on a Linux host. This package is thin: it parses
// flags, calls one library entry point per subcommand and maps the result to a
// shell-style exit code. Each subcommand lives in its own file and registers
// itself with addCommand.
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/sandbox"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// command is a subcommand's name and constructor.
type command struct {
	name string
	make func() *cobra.Command
}

// commands holds the subcommands, registered from init functions in this
// package's files. Each is constructed only when the tree needs it
// (newRootCmd): building every command tree (flags, help text) is work
// tether run's start would otherwise pay before the pool answers.
var commands []command

// addCommand registers the subcommand name, made by c; name must be c's
// cobra name (TestCommandNames).
func addCommand(name string, c func() *cobra.Command) {
	commands = append(commands, command{name, c})
}

// Exit statuses shared by the subcommands. tether run and tether shell are
// wrappers (as env, timeout, nice and chroot are): the command's own status
// passes through and every status of tether's own is exitWrapper.
const (
	exitFailure = 1   // the subcommand failed
	exitUsage   = 2   // bad flags, arguments or configuration: nothing was done
	exitWrapper = 125 // tether run / shell: tether itself did not run the command (or lost its status: sandbox.ErrResultLost)
)

// Annotations on a command that change how its errors map to exit statuses.
const (
	// annoWrapper marks tether run and tether shell: any error of
	// tether's own exits exitWrapper (and is printed as JSON on stdout
	// when --json is set), only the command's own status passes through.
	annoWrapper = "tether/wrapper"
	// annoUsageExit overrides exitUsage for a command whose 2 means
	// something else (tether check: 2 is "approval needed").
	annoUsageExit = "tether/usage-exit"
)

// exitError carries a specific exit status out of a subcommand. A nil Err
// means the status is the whole message (nothing more to print). Own marks
// the status of the command tether ran (run, shell), which a wrapper
// passes through; every other status is tether's own. Reported means the
// wrapper's --json document (which holds the error) is already on stdout.
type exitError struct {
	Code     int
	Err      error
	Own      bool
	Reported bool
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// usageError marks bad input (flags, arguments): nothing was done. It maps
// to the command's usage status (exitUsage, exitWrapper for wrappers).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// newRootCmd builds the command tree: every subcommand, or with only
// naming one, that subcommand alone (its help, flags and errors are the
// same; help, completion and suggestions for a mistyped name need the
// whole tree, which an unknown name gets).
func newRootCmd(only ...string) *cobra.Command {
	root := &cobra.Command{
		Use:   "tether",
		Short: "Execution control plane for an AI agent's tool calls",
		Long: `tether decides, gate by gate, whether an agent's shell command or file edit
may run, runs what is allowed inside per-profile Linux namespaces and cgroups,
and reports exactly what happened.

Exit status: each subcommand's --help lists its own. In general 0 success,
1 failure, 2 usage error (bad flags, arguments, unknown subcommand); tether run
and tether shell pass the command's own status through and exit 125 when
tether itself did not run it; tether check exits 0, 2 or 3 by verdict.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	subset := commands
	if len(only) == 1 {
		if i := slices.IndexFunc(commands, func(c command) bool { return c.name == only[0] }); i >= 0 {
			subset = commands[i : i+1]
		}
	}
	for _, c := range subset {
		root.AddCommand(c.make())
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &usageError{err: err}
	})
	conventions(root)
	return root
}

// Exit statuses of the commands whose help does not list their own.
const (
	groupExitHelp = "Exit status: 0 when the help was shown, 2 for an unknown subcommand."
	leafExitHelp  = "Exit status: 0 on success, 1 on failure, 2 for bad usage (flags, arguments)."
)

// conventions applies the CLI's conventions to the whole tree: argument
// errors are usage errors; a command that groups subcommands refuses an
// unknown one (cobra prints the group's help and exits 0 for
// "tether mandate bogus"); a help page that lists no exit statuses gets the
// general ones, which is what such a command returns.
func conventions(c *cobra.Command) {
	// A group only groups; a command with subcommands that also runs
	// itself (tether mandate drift JOB) checks its own arguments.
	group := c.HasSubCommands() && !c.Runnable()
	if !strings.Contains(c.Long, "Exit status") {
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		text := leafExitHelp
		if group {
			text = groupExitHelp
		}
		c.Long = long + "\n\n" + text
	}
	if group {
		c.SuggestionsMinimumDistance = 2
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += " (did you mean " + strings.Join(s, " or ") + "?)"
			}
			return &usageError{err: fmt.Errorf("%s; see %s --help", msg, cmd.CommandPath())}
		}
		if !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	} else if orig := c.Args; orig != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := orig(cmd, args); err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return &usageError{err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		conventions(sub)
	}
}

// main runs the root command and exits with the status of exitStatus.
func main() {
	sandbox.Trace("client main")
	code := run(os.Args[1:])
	sandbox.Trace("client exit")
	os.Exit(code)
}

func run(args []string) int {
	var root *cobra.Command
	if len(args) > 0 {
		root = newRootCmd(args[0])
	} else {
		root = newRootCmd()
	}
	root.SetArgs(args)
	c, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	code := exitStatus(c, err)
	if msg := errorText(err); msg != "" {
		fmt.Fprintln(os.Stderr, "tether:", msg)
	}
	var ee *exitError
	if c.Annotations[annoWrapper] != "" && code == exitWrapper && !(errors.As(err, &ee) && ee.Reported) {
		if f := c.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
			writeErrorJSON(c.OutOrStdout(), err)
		}
	}
	return code
}

// exitStatus maps the error of command c to its exit status.
func exitStatus(c *cobra.Command, err error) int {
	var ee *exitError
	isExit := errors.As(err, &ee)
	if c.Annotations[annoWrapper] != "" {
		if isExit && ee.Own {
			return ee.Code
		}
		return exitWrapper
	}
	var ue *usageError
	switch {
	case isExit:
		return ee.Code
	case errors.As(err, &ue):
		if n, convErr := strconv.Atoi(c.Annotations[annoUsageExit]); convErr == nil {
			return n
		}
		return exitUsage
	}
	return exitFailure
}

// errorText is what tether prints on stderr for err ("" for a bare status).
func errorText(err error) string {
	var ee *exitError
	if errors.As(err, &ee) && ee.Err == nil {
		return ""
	}
	return err.Error()
}
