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

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// commands holds the constructors of the subcommands, registered from init
// functions in this package's files.
var commands []func() *cobra.Command

func addCommand(c func() *cobra.Command) { commands = append(commands, c) }

// exitError carries a specific exit status out of a subcommand. A nil Err
// means the status is the whole message (nothing more to print).
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tether",
		Short: "Execution control plane for an AI agent's tool calls",
		Long: `tether decides, gate by gate, whether an agent's shell command or file edit
may run, runs what is allowed inside per-profile Linux namespaces and cgroups,
and reports exactly what happened.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

// main runs the root command. Exit status: the subcommand's own (see each
// command's --help), 1 for usage or internal errors.
func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(os.Stderr, "tether:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(os.Stderr, "tether:", err)
	return 1
}
