package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/demo"
)

func init() { addCommand("demo", newDemoCmd) }

func newDemoCmd() *cobra.Command {
	var opts demo.Options
	var noColor bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Play the mandate scenario end to end in a throwaway workspace",
		Long: `demo observes a nightly-triage job for a few clean runs (real commands in the
sandbox), compiles and approves its mandate, then replays a poisoned run that
reads a credential file, writes outside the repository, calls an unknown host,
runs an opaque bash -c payload and a fork bomb, and runs a repository script
whose hidden disk wipe only the exec gate sees — each blocked, with drift
records. One drift is widened, approved, then undone, with the Leash Line
printed at each step.

It needs no configuration: the workspace and state live in a temporary
directory removed at the end (--dir and --keep to look at them afterwards).
It needs what the sandbox needs: root, or a rootless user namespace (limits
are then reported as not enforced).

Exit status: 0 when the scenario ran, 1 on an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Color = useColor(cmd.OutOrStdout(), noColor)
			if opts.Dir != "" {
				if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
					return err
				}
			}
			return demo.Run(cmd.Context(), cmd.OutOrStdout(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "directory for the workspace and state (default: a temporary directory)")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the directory at the end")
	cmd.Flags().IntVar(&opts.CleanRuns, "runs", 3, "number of observed clean runs")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "plain-text Leash Line (also NO_COLOR or non-terminal output)")
	return cmd
}
