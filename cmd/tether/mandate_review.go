package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/mandate"
)

// The review commands: diff, widen, approve, discard, drift resolve|dismiss.

// jobInfo returns the summary of one job.
func jobInfo(cmd *cobra.Command, s *mandate.Store, job string) (mandate.Job, error) {
	js, err := s.Jobs(cmd.Context())
	if err != nil {
		return mandate.Job{}, err
	}
	for _, j := range js {
		if j.Name == job {
			return j, nil
		}
	}
	return mandate.Job{}, fmt.Errorf("job %s: %w", job, mandate.ErrUnknownJob)
}

// violationOf is the interactive_violation enforced for j and where it
// comes from, for display: the job's own setting, else the default
// profile's.
func violationOf(j mandate.Job, profileViolation func() (string, string)) (value, source string) {
	profile, pv := profileViolation()
	return mandate.DescribeViolation(j.InteractiveViolation, profile, pv)
}

// stdinIsTerminal reports whether standard input is a terminal (a tty, not
// merely a character device such as /dev/null).
func stdinIsTerminal(cmd *cobra.Command) bool {
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func renderDiff(w io.Writer, d mandate.Diff, asJSON bool) error {
	if asJSON {
		return writeJSON(w, d)
	}
	return d.Render(w)
}

func newMandateDiffCmd(open storeOpener) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff JOB",
		Short: "Show the pending version against the approved one: rules added, changed, removed, and their reach",
		Long: `diff compares the job's newest pending version with the approved (active)
one, family by family: rules added (+), changed (~, with the rules they
replace) and removed (-), and max_writes_per_run. For each added or changed
rule it counts the distinct recorded calls the rule newly allows (with up to
20 examples) and lists the new reach it grants: a new host, writes to paths
not writable before, an option, program, variable or opaque segment that
executes code, an option that changes where a program reads its
configuration, a broader pattern covering an exact rule. The pending
version's SHA-256 is what "tether mandate approve --sha" takes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				d, err := s.Diff(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return renderDiff(cmd.OutOrStdout(), d, asJSON)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diff as JSON")
	return cmd
}

func newMandateDiscardCmd(open storeOpener) *cobra.Command {
	var by string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "discard JOB",
		Short: "Drop the job's pending version (it can never be approved); its drift records reopen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if by == "" {
				by = defaultActor()
			}
			return withStore(open, func(s *mandate.Store) error {
				v, err := s.Discard(cmd.Context(), args[0], by)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), v)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "discarded %s v%d (from %s, sha256 %s)\n", v.Job, v.Number, v.Source, v.SHA256[:mandate.ShortSHA])
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who discards (default: $USER, else the uid's user name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the discarded version as JSON")
	return cmd
}

func newMandateApproveCmd(open storeOpener) *cobra.Command {
	var n int
	var by, shaPrefix string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approve JOB [--sha PREFIX]",
		Short: "Approve the version you reviewed (by its SHA-256) and enforce it",
		Long: `approve prints the diff of the version against the approved one, then
approves it only if it is the version the reviewer saw: --sha takes a prefix
(at least 8 hex characters) of the SHA-256 that "tether mandate diff" and
"widen" print. Without a terminal on standard input --sha is required; on a
terminal, without --sha, approve asks for confirmation of the hash it just
printed. A version that changed in between (another widen, a new compile)
is refused.

--version picks a version other than the newest pending one, including an
earlier approved version that undo left behind.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job := args[0]
			if by == "" {
				by = defaultActor()
			}
			interactive := stdinIsTerminal(cmd)
			if shaPrefix == "" && !interactive {
				return usageErr("approve: --sha PREFIX is required when standard input is not a terminal; "+
					"review with `tether mandate diff %s` and pass the pending sha256 it prints", job)
			}
			return withStore(open, func(s *mandate.Store) error {
				out := cmd.OutOrStdout()
				// What the reviewer is shown: the diff of the newest
				// pending version, or the version asked for. The hash
				// asked about is the one of what was shown.
				var shown mandate.Version
				if n == 0 {
					d, err := s.Diff(cmd.Context(), job)
					if err != nil {
						return err
					}
					if !asJSON {
						if err := d.Render(cmd.ErrOrStderr()); err != nil {
							return err
						}
					}
					shown = mandate.Version{Number: d.Pending, SHA256: d.PendingSHA256}
				} else {
					v, err := s.Version(cmd.Context(), job, n)
					if err != nil {
						return err
					}
					shown = v
				}
				if shaPrefix == "" {
					if shown.Number == 0 {
						return fmt.Errorf("approving %s: %w", job, mandate.ErrNoPending)
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "approve %s v%d with sha256 %s? [y/N] ", job, shown.Number, shown.SHA256)
					line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
					if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
						return errors.New("not approved")
					}
					shaPrefix, n = shown.SHA256, shown.Number
				}
				v, err := s.ApproveReviewed(cmd.Context(), job, n, shaPrefix, by)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, v)
				}
				fmt.Fprintf(out, "approved %s v%d by %s (sha256 %s); job is enforcing\n", v.Job, v.Number, v.ApprovedBy, v.SHA256)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&n, "version", 0, "version to approve (default: newest pending)")
	cmd.Flags().StringVar(&shaPrefix, "sha", "", "prefix (8+ hex characters) of the reviewed version's SHA-256; required without a terminal")
	cmd.Flags().StringVar(&by, "by", "", "who approves (default: $USER, else the uid's user name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the approved version as JSON")
	return cmd
}

func newMandateWidenCmd(open storeOpener) *cobra.Command {
	var pattern, dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "widen JOB DRIFT-ID",
		Short: "Write a new pending version that also allows a drift record's call, and show the whole diff",
		Long: `widen covers every family the drift record's call failed, with the exact
subject by default (the verbatim "=text" form for an opaque segment). With
--pattern it uses broader rules ("program sub -* RISKY-OPTIONS", "DIR/**",
"*.domain"): "-*" never covers options that execute code, write files or
change where a program reads its configuration, so the rule names each one
the call used. widen builds on the newest pending version when there is one
and always prints the whole diff of the result against the approved version
(what approving would activate), with what each rule newly allows among the
recorded calls. --dry-run prints the same and writes nothing. Nothing is
activated until "tether mandate approve".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(open, func(s *mandate.Store) error {
				widen := s.Widen
				if dryRun {
					widen = s.WidenDryRun
				}
				r, err := widen(cmd.Context(), args[0], args[1], pattern)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, r)
				}
				if dryRun {
					fmt.Fprintf(out, "dry run: nothing written; widening %s would write v%d (pending)\n", args[1], r.Version.Number)
				} else {
					fmt.Fprintf(out, "v%d pending (from %s); approve with: tether mandate approve %s --sha %s\n",
						r.Version.Number, r.Version.Source, args[0], r.Version.SHA256[:mandate.ShortSHA])
				}
				for _, a := range r.Added {
					fmt.Fprintf(out, "  + %s\n", a.Value)
				}
				fmt.Fprintln(out)
				return r.Diff.Render(out)
			})
		},
	}
	cmd.Flags().BoolVar(&pattern, "pattern", false, "use broader rules")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the resulting diff and write nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newMandateDriftCloseCmd(open storeOpener, verb, status string) *cobra.Command {
	var reason, by string
	cmd := &cobra.Command{
		Use:   verb + " JOB DRIFT-ID... --reason TEXT",
		Short: fmt.Sprintf("Mark open drift records %s, with a reason", status),
		Long: fmt.Sprintf(`%s closes open or escalated drift records without changing the mandate
(resolved: the cause was dealt with elsewhere; dismissed: not worth acting
on). The record keeps who closed it and why; the same call blocked later
opens a new record. Every id must be open, or nothing changes.`, verb),
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return usageErr("%s: --reason is required", verb)
			}
			if by == "" {
				by = defaultActor()
			}
			return withStore(open, func(s *mandate.Store) error {
				if err := s.CloseDrift(cmd.Context(), args[0], args[1:], status, reason, by); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s of %s by %s\n", status, strings.Join(args[1:], ", "), args[0], by)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	cmd.Flags().StringVar(&by, "by", "", "who (default: $USER, else the uid's user name)")
	return cmd
}
