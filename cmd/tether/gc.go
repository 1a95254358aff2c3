package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand("gc", newGCCmd) }

func newGCCmd() *cobra.Command {
	var asJSON bool
	var stateRoot, prefix string
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove sandboxes, cgroups, mounts and state a crashed tether left behind",
		Long: `Remove the containers, cgroups (every hierarchy, including the hybrid
unified tree), mounts and state directories that a crashed tether left under
its state root and cgroup prefix. Containers whose tether is still running
are kept. "tether run" does this for its own state root when it starts.
When no sandbox is running, gc also removes the caches runs keep between
calls (shared empty roots, /etc snapshots).

Exit status: 0 when everything found was removed, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := runnerFor(stateRoot, prefix, "", 0)
			rep, err := sandbox.GC(sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix, Caches: true})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %d containers, %d cgroups, %d mounts, %d state entries; kept %d live\n",
					len(rep.Containers), len(rep.Cgroups), len(rep.Mounts), len(rep.StateDirs), rep.Live)
			}
			if len(rep.Errors) > 0 {
				return fmt.Errorf("could not remove everything:\n  %s", strings.Join(rep.Errors, "\n  "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	cmd.Flags().StringVar(&stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	cmd.Flags().StringVar(&prefix, "cgroup-prefix", "", "cgroup prefix (default: $TETHER_CGROUP_PREFIX or tether)")
	_ = cmd.Flags().MarkHidden("state-root")
	_ = cmd.Flags().MarkHidden("cgroup-prefix")
	return cmd
}
