package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/mandate"
)

func newMandateAnchorCmd(open storeOpener) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "anchor",
		Short: "Compare the enforcement anchor with the database, and reset it",
		Long: `The enforcement anchor (` + mandate.AnchorName + ` in the state directory,
beside tether.db) records which jobs enforce which approved mandate. When
tether.db is deleted, emptied or replaced, a job the anchor records as
enforcing is not silently back in observe mode: every call of it is refused
until an operator acts.

"anchor" lists the jobs whose enforcement the anchor or the database records;
a job marked LOST is refused. Restore tether.db from a backup, or accept the
database as it is with "anchor reset JOB": the anchor then records what the
database enforces (nothing, in observe mode).

Exit status: 0 when every job matches, 1 when one does not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(open, func(s *mandate.Store) error {
				st, err := s.AnchorStatus(cmd.Context())
				if err != nil {
					return err
				}
				lost := 0
				for _, j := range st {
					if !j.OK {
						lost++
					}
				}
				out := cmd.OutOrStdout()
				if asJSON {
					if st == nil {
						st = []mandate.AnchorJob{}
					}
					if err := writeJSON(out, st); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(out, "%-20s %-6s %-16s %s\n", "JOB", "STATE", "DATABASE", "ANCHOR")
					for _, j := range st {
						state := "ok"
						if !j.OK {
							state = "LOST"
						}
						fmt.Fprintf(out, "%-20s %-6s %-16s %s\n", j.Job, state, shortSum(j.Database), shortSums(j.Anchored))
					}
				}
				if lost > 0 {
					return &exitError{Code: 1, Err: fmt.Errorf("%d jobs' enforcement is missing from the database; their calls are refused (see tether mandate anchor --help)", lost)}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(newMandateAnchorResetCmd(open))
	return cmd
}

func newMandateAnchorResetCmd(open storeOpener) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "reset JOB",
		Short: "Accept the database's state of JOB as right: its calls run under it again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				if by == "" {
					by = defaultActor()
				}
				j, err := s.ResetAnchor(cmd.Context(), args[0], by)
				if err != nil {
					return err
				}
				if j.Database == "observe" {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: the anchor now records nothing; the job is in observe mode\n", j.Job)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: the anchor now records mandate sha256 %s\n", j.Job, j.Database)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who acknowledges (recorded in the store's audit table; default: $USER)")
	return cmd
}

func shortSum(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func shortSums(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shortSum(s)
	}
	return strings.Join(out, ",")
}
