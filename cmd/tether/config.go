package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/tether-dev/tether/config"
)

func init() { addCommand("config", newConfigCmd) }

func newConfigCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check and show tether's configuration",
		Long: `tether reads one YAML file, found at --config FILE, else $TETHER_CONFIG, else
$XDG_CONFIG_HOME/tether/config.yaml (~/.config/tether/config.yaml), else
/etc/tether/config.yaml. With none, a built-in default profile is used.
Loading is strict: unknown keys and bad values are errors reported as
file:line: message. Every key is documented in config/example.yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&file, "config", "", "config file (default: $TETHER_CONFIG, then the XDG and /etc paths)")
	cmd.AddCommand(newConfigCheckCmd(&file), newConfigShowCmd(&file))
	return cmd
}

// configCheckResult is `tether config check --json` output.
type configCheckResult struct {
	File     string           `json:"file"`
	OK       bool             `json:"ok"`
	Profiles []string         `json:"profiles,omitempty"`
	Problems []config.Problem `json:"problems,omitempty"`
}

func newConfigCheckCmd(file *string) *cobra.Command {
	var (
		asJSON  bool
		project string
	)
	cmd := &cobra.Command{
		Use:   "check [--config FILE] [--project DIR] [--json]",
		Short: "Validate a config file",
		Long: `Validate the config file (see "tether config --help" for where it is found)
and report every problem as file:line: message. Secrets env files are read
too: a profile whose secrets cannot be loaded has its calls refused.

--project DIR also checks DIR/.tether.yaml, the project file layered over
every profile for calls in that workspace: it may only narrow, and a
problem in it refuses every call there.

Exit status: 0 when the file is valid, 1 when it is not (or cannot be read).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res := configCheckResult{}
			path, err := config.Find(*file)
			var cfg *config.Config
			switch {
			case err != nil:
				res.File = *file
				res.Problems = []config.Problem{{File: *file, Msg: err.Error()}}
			case path == "":
				res.File = config.EmbeddedSource
				cfg, err = config.Default()
			default:
				res.File = path
				cfg, err = config.Load(path)
			}
			var ie *config.InvalidError
			if errors.As(err, &ie) {
				res.Problems = ie.Problems
			} else if err != nil && res.Problems == nil {
				res.Problems = []config.Problem{{File: res.File, Msg: err.Error()}}
			}
			if cfg != nil {
				res.Profiles = profileNames(cfg)
				// A secrets file that cannot be read refuses that
				// profile's calls at run time: report it now.
				res.Problems = cfg.CheckSecrets()
				if project != "" {
					res.Problems = append(res.Problems, projectProblems(cfg, project)...)
				}
				res.OK = len(res.Problems) == 0
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := json.NewEncoder(out).Encode(res); err != nil {
					return err
				}
			} else if res.OK {
				fmt.Fprintf(out, "%s: ok (profiles: %s)\n", res.File, strings.Join(res.Profiles, ", "))
			} else {
				for _, p := range res.Problems {
					fmt.Fprintln(cmd.ErrOrStderr(), p.String())
				}
			}
			if !res.OK {
				return &exitError{Code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON on stdout")
	cmd.Flags().StringVar(&project, "project", "", "also check DIR/.tether.yaml against every profile")
	return cmd
}

// projectProblems layers the project file of dir over each profile of cfg
// and returns the problems, once each.
func projectProblems(cfg *config.Config, dir string) []config.Problem {
	var out []config.Problem
	seen := map[string]bool{}
	for _, name := range profileNames(cfg) {
		_, err := config.LayerProject(cfg.Profiles[name], dir)
		if err == nil {
			continue
		}
		probs := []config.Problem{{File: filepath.Join(dir, config.ProjectFile), Msg: err.Error()}}
		var ie *config.InvalidError
		if errors.As(err, &ie) {
			probs = ie.Problems
		}
		for _, p := range probs {
			if k := p.String(); !seen[k] {
				seen[k] = true
				p.Msg = "profile " + name + ": " + p.Msg
				out = append(out, p)
			}
		}
	}
	return out
}

// shownProfile is `tether config show` output: one resolved profile with
// its secret values masked.
type shownProfile struct {
	Source         string `yaml:"source" json:"source"`
	StateDir       string `yaml:"state_dir" json:"state_dir"`
	Name           string `yaml:"profile" json:"-"`
	config.Profile `yaml:",inline"`
}

func newConfigShowCmd(file *string) *cobra.Command {
	var (
		asJSON  bool
		profile string
	)
	cmd := &cobra.Command{
		Use:   "show [--config FILE] [--profile P] [--json]",
		Short: "Print a profile as resolved, defaults applied and secrets masked",
		Long: `Print one profile of the configuration after loading: every default filled
in and relative paths made absolute. Secret values are printed as ***.

Exit status: 0 on success, 1 when the configuration is invalid or the
profile does not exist.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Resolve(*file)
			if err != nil {
				return &exitError{Code: 1, Err: err}
			}
			masked := cfg.Masked()
			p, ok := masked.Profile(profile)
			if !ok {
				return &exitError{Code: 1, Err: fmt.Errorf("no profile %q in %s (profiles: %s)",
					profile, cfg.Source, strings.Join(profileNames(cfg), ", "))}
			}
			shown := shownProfile{Source: cfg.Source, StateDir: cfg.StateDir, Name: p.Name, Profile: *p}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(shown)
			}
			enc := yaml.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent(2)
			if err := enc.Encode(shown); err != nil {
				return err
			}
			return enc.Close()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&profile, "profile", "", "profile to show (default: the config's default_profile)")
	return cmd
}

func profileNames(cfg *config.Config) []string {
	names := make([]string, 0, len(cfg.Profiles))
	for n := range cfg.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
