package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/approval"
)

func init() { addCommand("rules", newRulesCmd) }

// rulesEntry is one catalog entry in tether rules --json.
type rulesEntry struct {
	ID          string   `json:"id"`
	Tier        string   `json:"tier"`
	Description string   `json:"description"`
	Match       []string `json:"match,omitempty"`
	NoMatch     []string `json:"no_match,omitempty"`
}

func newRulesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the command analyzer's rule catalog",
		Long: `rules lists every rule "tether check" applies: its stable id, its tier
(hardline: never runs; approval: a person must approve; allow: the safe
class of read-only commands) and its one-line description, which is also the
key that session and "always" approvals store. With --json, each rule also
carries its must-match and must-not-match examples.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules := approval.Rules()
			out := cmd.OutOrStdout()
			if asJSON {
				list := make([]rulesEntry, 0, len(rules))
				for _, r := range rules {
					list = append(list, rulesEntry{ID: r.ID, Tier: r.Tier.String(), Description: r.Description, Match: r.Match, NoMatch: r.NoMatch})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(list); err != nil {
					return fmt.Errorf("writing rules: %w", err)
				}
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIER\tDESCRIPTION")
			for _, r := range rules {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Tier, r.Description)
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("writing rules: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON with each rule's examples")
	return cmd
}
