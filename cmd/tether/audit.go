package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

func init() { addCommand("audit", newAuditCmd) }

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Inspect the audit log",
	}
	cmd.AddCommand(newAuditVerifyCmd())
	return cmd
}

func newAuditVerifyCmd() *cobra.Command {
	var stateDir, configPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check that every line of the audit log is one whole record",
		Long: `verify reads the audit log (FILE, else <state_dir>/audit.jsonl) and checks
that every line parses as one record. A half-written last line (a writer
killed mid-append, or a full disk) is reported but is not corruption: the
next append cuts it off.

Exit status: 0 when every complete line is a record, 1 when some are not
(their line numbers are printed) or the log cannot be read.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				dir := stateDir
				if dir == "" {
					cfg, err := config.Resolve(configPath)
					if err != nil {
						return err
					}
					dir = cfg.StateDir
				}
				path = approval.AuditPath(dir)
			}
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("opening the audit log: %w", err)
			}
			defer f.Close()
			rep, verr := approval.VerifyAudit(f)
			if verr != nil && !errors.Is(verr, approval.ErrAuditCorrupt) {
				return verr
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := json.NewEncoder(out).Encode(struct {
					File string `json:"file"`
					OK   bool   `json:"ok"`
					approval.AuditReport
				}{path, verr == nil, rep}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%s: %d records", path, rep.Records)
				if len(rep.Bad) > 0 {
					fmt.Fprintf(out, ", %d lines that are not records: %v", len(rep.Bad), rep.Bad)
				}
				if rep.TornTail {
					fmt.Fprint(out, ", a half-written last line (cut off by the next append)")
				}
				fmt.Fprintln(out)
			}
			if verr != nil {
				return &exitError{Code: 1, Err: verr}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "state directory (default: the configuration's state_dir)")
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file whose state_dir to use")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
