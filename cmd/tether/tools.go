package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
)

func init() { addCommand("tools", newToolsCmd) }

func newToolsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Show the tools a profile exposes to the model",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var cfgPath, profile string
	var asJSON bool
	schema := &cobra.Command{
		Use:   "schema [--profile P] [--json]",
		Short: "Print the OpenAI-format tool schemas a profile exposes",
		Long: `Print the tools the model of a profile can see: those of its enabled_toolsets
(default: terminal and files) minus its disabled_toolsets (subtracted last;
a tool name there hides that tool), whose availability check passes.

With --json, the OpenAI chat-completions "tools" array, ready to send to a
model. Exit status: 0, 1 for an unknown profile or a bad configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Resolve(cfgPath)
			if err != nil {
				return &exitError{Code: 1, Err: fmt.Errorf("loading the configuration: %w", err)}
			}
			prof, ok := cfg.Profile(profile)
			if !ok {
				return &exitError{Code: 1, Err: fmt.Errorf("unknown profile %q (see tether config show)", profile)}
			}
			reg := runner.Builtins()
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(reg.Schemas(prof))
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "TOOL\tTOOLSET\tKIND\tDESCRIPTION\n")
			for _, t := range reg.Visible(prof) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Toolset, t.Kind, t.Description)
			}
			return tw.Flush()
		},
	}
	fl := schema.Flags()
	fl.StringVar(&cfgPath, "config", "", "config file (default: $TETHER_CONFIG, then the XDG and /etc paths, then the embedded default)")
	fl.StringVar(&profile, "profile", "", "profile (default: the config's default profile)")
	fl.BoolVar(&asJSON, "json", false, "print the OpenAI tools array as JSON")
	cmd.AddCommand(schema)
	return cmd
}
