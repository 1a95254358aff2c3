package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

func init() { addCommand("mandate", newMandateCmd) }

// Exit statuses of `tether mandate check`.
const (
	exitCheckEscalate = 2
	exitCheckBlocked  = 3
)

func newMandateCmd() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "mandate",
		Short: "Observe a job, compile and approve its mandate, enforce it, and manage drift",
		Long: `A mandate is a job's learned allow-policy. A job starts in observe mode: its
calls are recorded and never blocked. "compile" writes a pending version from
the observations; "diff" shows it against the approved one, rule by rule, with
what each new rule newly allows and reaches; "approve --sha" approves exactly
the version reviewed, stores the SHA-256 of its text and enforces it. Calls
outside the mandate are then blocked (or escalated, for interactive runs whose
interactive_violation is "approve") and become drift records, which "widen"
turns into a new pending version ("discard" drops it) and "drift resolve" or
"drift dismiss" close. "undo" walks back through approved versions to observe
mode; earlier approved versions stay approvable. "check" probes a call and
records nothing unless --record.

State lives in --state-dir, else the configuration's state_dir (the same
database tether serve and tether ui use), which defaults to $TETHER_STATE_DIR,
else /var/lib/tether for root, else $XDG_STATE_HOME/tether
(~/.local/state/tether).`,
	}
	var configPath string
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state directory (default: the configuration's state_dir)")
	cmd.PersistentFlags().StringVar(&configPath, "config", "", "configuration file whose state_dir to use (default: $TETHER_CONFIG, XDG, /etc, else the embedded default)")
	open := func() (*mandate.Store, error) {
		dir := stateDir
		if dir == "" {
			cfg, err := config.Resolve(configPath)
			if err != nil {
				return nil, err
			}
			dir = cfg.StateDir
		}
		return mandate.Open(dir, mandate.Options{})
	}
	// profileViolation is the default profile's interactive_violation,
	// which applies to jobs without a setting of their own.
	profileViolation := func() (profile, value string) {
		cfg, err := config.Resolve(configPath)
		if err != nil {
			return "", ""
		}
		p, ok := cfg.Profile("")
		if !ok {
			return "", ""
		}
		return p.Name, string(p.Mandate.InteractiveViolation)
	}
	cmd.AddCommand(
		newMandateObserveCmd(open), newMandateCheckCmd(open, profileViolation), newMandateCompileCmd(open),
		newMandateShowCmd(open), newMandateExportCmd(open), newMandateApproveCmd(open),
		newMandateUndoCmd(open), newMandateDriftCmd(open), newMandateWidenCmd(open),
		newMandateStatusCmd(open, profileViolation), newMandateJobsCmd(open, profileViolation), newMandateSetCmd(open, profileViolation),
		newMandateConnectionsCmd(open), newMandateDiffCmd(open), newMandateDiscardCmd(open), newMandateAnchorCmd(open),
	)
	return cmd
}

type storeOpener func() (*mandate.Store, error)

// withStore opens the store, runs fn and closes it.
func withStore(open storeOpener, fn func(*mandate.Store) error) error {
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// callFlags are the flags describing one call, shared by observe and check.
type callFlags struct {
	run       string
	tool      string
	paths     []string
	wrote     bool
	workspace string
}

func (f *callFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.run, "run", "", "run id the call belongs to (default: a new run)")
	cmd.Flags().StringVar(&f.tool, "tool", "", "tool name (default: terminal when a command is given)")
	cmd.Flags().StringArrayVar(&f.paths, "path", nil, "path the file tool touches (repeatable)")
	cmd.Flags().BoolVar(&f.wrote, "wrote", false, "the call writes")
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "workspace directory paths are made relative to")
}

func (f *callFlags) call(args []string) (mandate.Call, error) {
	c := mandate.Call{Tool: f.tool, Paths: f.paths, Wrote: f.wrote, Workspace: f.workspace}
	if len(args) > 1 {
		c.Command = strings.Join(args[1:], " ")
		if c.Tool == "" {
			c.Tool = mandate.ToolTerminal
		}
	}
	if c.Tool == "" {
		return c, errors.New("give a command after -- or a --tool (with --path for file tools)")
	}
	if c.Tool == mandate.ToolTerminal && c.Command == "" {
		return c, errors.New("a terminal call needs its command after --, e.g. -- 'git status'")
	}
	return c, nil
}

func (f *callFlags) runID() string {
	if f.run != "" {
		return f.run
	}
	return "cli-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

func newMandateObserveCmd(open storeOpener) *cobra.Command {
	var cf callFlags
	var cron bool
	cmd := &cobra.Command{
		Use:   "observe JOB [flags] [-- 'COMMAND']",
		Short: "Record one call of a job's run as an observation",
		Example: `  tether mandate observe nightly --run r1 -- 'git status'
  tether mandate observe nightly --run r1 --tool write_file --path src/a.go --wrote`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cf.call(args)
			if err != nil {
				return err
			}
			mode := mandate.RunInteractive
			if cron {
				mode = mandate.RunCron
			}
			run := mandate.Run{Job: args[0], ID: cf.runID(), Mode: mode}
			return withStore(open, func(s *mandate.Store) error {
				if err := s.Observe(cmd.Context(), run, c); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "observed %s call for job %s (run %s)\n", c.Tool, run.Job, run.ID)
				return nil
			})
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&cron, "cron", false, "the run is a cron run")
	return cmd
}

func newMandateCheckCmd(open storeOpener, profileViolation func() (string, string)) *cobra.Command {
	var cf callFlags
	var runMode string
	var asJSON, record bool
	cmd := &cobra.Command{
		Use:         "check JOB [flags] [-- 'COMMAND']",
		Annotations: map[string]string{annoUsageExit: "1"}, // 2 is "escalate"
		Short:       "Decide a call under the job's mandate (exit 0 allowed, 3 blocked, 2 escalate)",
		Long: `check decides one call as enforcement would. It records nothing unless
--record is given (then the call is an observation in observe mode, an
allowed call or drift in enforce mode), so a reviewer's probes never teach
the mandate or show up as drift.

Without --run-mode the run's mode is unknown, and in enforce mode a run that
might be a cron run is blocked outright. Exit status: 0 allowed, 3 blocked,
2 escalate to the approval prompt, 1 error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cf.call(args)
			if err != nil {
				return err
			}
			var mode mandate.RunMode
			switch runMode {
			case "interactive":
				mode = mandate.RunInteractive
			case "cron":
				mode = mandate.RunCron
			case "", "unknown":
				mode = mandate.RunUnknown
			default:
				return fmt.Errorf("--run-mode %q: want interactive, cron or unknown", runMode)
			}
			run := mandate.Run{Job: args[0], ID: cf.runID(), Mode: mode}
			// As enforcement does: the job's interactive_violation, else
			// the (default) profile's.
			_, run.Violation = profileViolation()
			return withStore(open, func(s *mandate.Store) error {
				decide := s.Probe
				if record {
					decide = s.Check
				}
				d := decide(cmd.Context(), run, c)
				out := cmd.OutOrStdout()
				if asJSON {
					if err := writeJSON(out, d); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(out, "%s (%s mode", d.Verdict, d.Mode)
					if d.Version > 0 {
						fmt.Fprintf(out, ", v%d", d.Version)
					}
					fmt.Fprint(out, ")")
					if d.Reason != "" {
						fmt.Fprintf(out, ": %s", d.Reason)
					}
					fmt.Fprintln(out)
					for _, f := range d.Failures {
						fmt.Fprintf(out, "  %s: %s\n", f.Family, f.Value)
					}
					if d.DriftID != "" {
						fmt.Fprintf(out, "drift %s recorded; widen with: tether mandate widen %s %s\n", d.DriftID, run.Job, d.DriftID)
					}
				}
				switch d.Verdict {
				case mandate.Allow:
					return nil
				case mandate.Escalate:
					return &exitError{Code: exitCheckEscalate}
				}
				return &exitError{Code: exitCheckBlocked}
			})
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&runMode, "run-mode", "", "interactive, cron or unknown (default unknown)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decision as JSON")
	cmd.Flags().BoolVar(&record, "record", false, "record the call (observation, allowed call or drift) as enforcement would")
	return cmd
}

func newMandateCompileCmd(open storeOpener) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compile JOB",
		Short: "Compile the job's observations into a new pending mandate version",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				v, err := s.Compile(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				if v.LostObservations > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: the evidence is incomplete: %d observations of %s could not be recorded (calls on a full or failing disk, or what the kernel saw a call do: unreadable names, more than one call's record holds); the mandate lacks what they did\n", v.LostObservations, v.Job)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "compiled %s v%d (pending); review, then: tether mandate approve %s\n", v.Job, v.Number, v.Job)
				_, err = io.WriteString(cmd.OutOrStdout(), v.Text)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new version as JSON")
	return cmd
}

func newMandateShowCmd(open storeOpener) *cobra.Command {
	var n int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show JOB",
		Short: "Print a mandate version's YAML (default: the newest version)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				v, err := s.Version(cmd.Context(), args[0], n)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				active := ""
				if v.Active {
					active = ", active"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s v%d (%s%s, from %s)\n", v.Job, v.Number, v.Status, active, v.Source)
				_, err = io.WriteString(cmd.OutOrStdout(), v.Text)
				return err
			})
		},
	}
	cmd.Flags().IntVar(&n, "version", 0, "version number")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newMandateExportCmd(open storeOpener) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export JOB --json",
		Short: "Export the active mandate as JSON value/evidence pairs per family",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				e, err := s.Export(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return writeJSON(cmd.OutOrStdout(), e)
			})
		},
	}
	cmd.Flags().Bool("json", true, "print as JSON (the only format)")
	return cmd
}

// defaultActor names who runs the command: $USER, else the user name of
// the process's uid (services often run without $USER), else "uid:N".
func defaultActor() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	uid := os.Getuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid:" + strconv.Itoa(uid)
}

func newMandateUndoCmd(open storeOpener) *cobra.Command {
	var by string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "undo JOB",
		Short: "Reactivate the previous approved version, or return to observe mode",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if by == "" {
				by = defaultActor()
			}
			return withStore(open, func(s *mandate.Store) error {
				r, err := s.Undo(cmd.Context(), args[0], by)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), r)
				}
				if r.To == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "undid v%d; %s is back in observe mode with no mandate\n", r.From, args[0])
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "undid v%d; %s now enforces v%d\n", r.From, args[0], r.To)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who undoes (default: $USER)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what changed as JSON")
	return cmd
}

func newMandateDriftCmd(open storeOpener) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "drift JOB",
		Short: "List the job's drift records (blocked or escalated calls), newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				ds, err := s.Drift(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					if ds == nil {
						ds = []mandate.DriftRecord{}
					}
					return writeJSON(out, ds)
				}
				if len(ds) == 0 {
					fmt.Fprintf(out, "no drift for %s\n", args[0])
					return nil
				}
				for _, d := range ds {
					seen := ""
					if d.Count > 1 {
						seen = fmt.Sprintf("  seen %dx, last %s run %s", d.Count, d.LastSeen.UTC().Format(time.RFC3339), d.LastRun)
					}
					fmt.Fprintf(out, "%-6s %-9s %s  run %s  [%s]  %s%s\n       %s\n", d.ID, d.Status, d.Time.UTC().Format(time.RFC3339),
						d.Run, strings.Join(d.Families, ","), d.Call, seen, d.Reason)
					if d.ClosedReason != "" {
						fmt.Fprintf(out, "       %s by %s: %s\n", d.Status, d.ClosedBy, d.ClosedReason)
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(newMandateDriftCloseCmd(open, "resolve", mandate.DriftResolved), newMandateDriftCloseCmd(open, "dismiss", mandate.DriftDismissed))
	return cmd
}

func newMandateStatusCmd(open storeOpener, profileViolation func() (string, string)) *cobra.Command {
	var noColor, asJSON bool
	cmd := &cobra.Command{
		Use:   "status JOB",
		Short: "Draw the job's Leash Line: allowed, pending, blocked and widened per family",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				ll, err := s.Leash(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				j, err := jobInfo(cmd, s, args[0])
				if err != nil {
					return err
				}
				ll.Violation, ll.ViolationSource = violationOf(j, profileViolation)
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, ll)
				}
				return ll.Render(out, useColor(out, noColor))
			})
		},
	}
	cmd.Flags().BoolVar(&noColor, "no-color", false, "plain text without colour")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the Leash Line data as JSON")
	return cmd
}

// useColor reports whether w is a terminal and colour is not turned off
// (--no-color or a non-empty NO_COLOR).
func useColor(w io.Writer, noColor bool) bool {
	if noColor || os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newMandateJobsCmd(open storeOpener, profileViolation func() (string, string)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List jobs with their mode and versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				js, err := s.Jobs(cmd.Context())
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				profile, pv := profileViolation()
				views := mandate.ViewJobs(js, profile, pv)
				if asJSON {
					return writeJSON(out, views)
				}
				fmt.Fprintf(out, "%-20s %-8s %-7s %-8s %6s %5s %6s  %s\n", "JOB", "MODE", "ACTIVE", "PENDING", "CALLS", "RUNS", "DRIFT", "INTERACTIVE VIOLATION")
				for _, j := range views {
					fmt.Fprintf(out, "%-20s %-8s %-7s %-8s %6d %5d %6d  %s (%s)\n", j.Name, j.Mode, vlabel(j.ActiveVersion), vlabel(j.PendingVersion),
						j.Calls, j.Runs, j.OpenDrift, j.EnforcedViolation, j.ViolationSource)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func vlabel(n int) string {
	if n == 0 {
		return "-"
	}
	return "v" + strconv.Itoa(n)
}

func newMandateSetCmd(open storeOpener, profileViolation func() (string, string)) *cobra.Command {
	var violation string
	cmd := &cobra.Command{
		Use:   "set JOB --interactive-violation block|approve|profile",
		Short: "Set what an interactive run's call outside the mandate does",
		Long: `set stores the job's interactive_violation. The job's setting, when it has
one, is what is enforced; without one the profile's mandate.interactive_violation
applies (default block). "profile" removes the job's setting. Cron and other
unattended runs are only ever blocked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if violation == "" {
				return errors.New("nothing to set: give --interactive-violation block|approve")
			}
			return withStore(open, func(s *mandate.Store) error {
				if err := s.SetInteractiveViolation(cmd.Context(), args[0], violation); err != nil {
					return err
				}
				j, err := jobInfo(cmd, s, args[0])
				if err != nil {
					return err
				}
				v, src := violationOf(j, profileViolation)
				fmt.Fprintf(cmd.OutOrStdout(), "%s: interactive_violation = %s (%s)\n", args[0], v, src)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&violation, "interactive-violation", "", "block, approve (escalate to the approval prompt) or profile (use the profile's)")
	return cmd
}

func newMandateConnectionsCmd(open storeOpener) *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "connections JOB",
		Short: "List the job's network connection attempts through the egress proxy, newest first",
		Long: `connections lists what the egress proxy (network mode proxy) saw of the job's
commands: host, port, method, allowed or refused with the rule, bytes and
the run. An empty JOB ("") lists connections of commands that belong to no job.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return usageErr("--limit must be at least 1")
			}
			return withStore(open, func(s *mandate.Store) error {
				cs, err := s.Connections(cmd.Context(), args[0], limit)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					if cs == nil {
						cs = []mandate.Connection{}
					}
					return writeJSON(out, cs)
				}
				if len(cs) == 0 {
					fmt.Fprintf(out, "no connections recorded for %q\n", args[0])
					return nil
				}
				for _, c := range cs {
					verdict := "allowed"
					if !c.Allowed {
						verdict = "REFUSED"
					}
					fmt.Fprintf(out, "%s  %-7s %-7s %s:%d  up %d B  down %d B  run %s  rule %q\n", c.Time.UTC().Format(time.RFC3339),
						verdict, c.Method, c.Host, c.Port, c.BytesUp, c.BytesDown, c.Run, c.Rule)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().IntVar(&limit, "limit", 100, "show at most this many")
	return cmd
}
