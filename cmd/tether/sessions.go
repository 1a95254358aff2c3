package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/sandbox"
)

func init() { addCommand("sessions", newSessionsCmd) }

func newSessionsCmd() *cobra.Command {
	var stateRoot, prefix string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List or close session sandboxes",
		Long: `Session sandboxes keep a session's files, working directory and background
processes alive between its commands.

A session sandbox is owned by the long-lived tether process that opened it:
the daemon ("tether serve"), whose sessions an agent's API client, "tether
run --session S" and "tether shell --session S" use; an MCP server ("tether
mcp"); or "tether shell" without --session, for the life of the shell. These
commands work on the state root directly, whoever the owner is: "list" shows
every session sandbox found there, with its owner's pid and whether that
owner is still alive (a dead owner's sandbox is reaped by "tether gc");
"close" kills one sandbox's processes (its live owner then removes the rest;
for a dead owner, close runs the reaping itself). Closing a daemon session's
sandbox does not clear the session (its approvals, its client): do that with
"tether run --session S --close-session" or DELETE /v1/sessions/{id}, which
close its sandbox too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&stateRoot, "state-root", "", "state directory (default: $TETHER_STATE_ROOT, /run/tether or $XDG_RUNTIME_DIR/tether)")
	pf.StringVar(&prefix, "cgroup-prefix", "", "cgroup prefix (default: $TETHER_CGROUP_PREFIX or tether)")
	_ = pf.MarkHidden("state-root")
	_ = pf.MarkHidden("cgroup-prefix")
	opts := func() sandbox.GCOptions {
		r := runnerFor(stateRoot, prefix, "", 0)
		return sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix}
	}

	var listJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List session sandboxes in the state root with their owners",
		Long: `List the session sandboxes in the state root: container id, profile, session,
owner pid, whether the owner is alive, and the container's status.

Exit status: 0, or 1 when the state root cannot be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := sandbox.ListSessionSandboxes(opts())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if listJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			}
			if len(infos) == 0 {
				fmt.Fprintln(out, "no session sandboxes")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CONTAINER\tPROFILE\tSESSION\tOWNER\tOWNER ALIVE\tSTATUS")
			for _, i := range infos {
				alive := "no (tether gc reaps it)"
				if i.OwnerAlive {
					alive = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", i.ContainerID, i.Profile, i.Session, i.OwnerPID, alive, i.Status)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the list as JSON")

	var closeJSON bool
	closeCmd := &cobra.Command{
		Use:   "close CONTAINER|PROFILE/SESSION [--json]",
		Short: "Destroy a session sandbox and every process in it",
		Long: `Destroy a session sandbox, named by its container id or by PROFILE/SESSION
(as "tether sessions list" shows them). Its processes are killed at once; a
live owner sees the session end and removes its cgroups and state, and for a
dead owner they are reaped here.

Exit status: 0 closed; 1 no such session sandbox or it could not be removed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := opts()
			id, err := resolveSession(o, args[0])
			if err != nil {
				return err
			}
			rep, err := sandbox.KillSessionSandbox(o, id)
			if err != nil {
				return err
			}
			if closeJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Closed string            `json:"closed"`
					Reaped *sandbox.GCReport `json:"reaped"`
				}{id, rep}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "closed %s\n", id)
			}
			if len(rep.Errors) > 0 {
				return fmt.Errorf("could not remove everything:\n  %s", strings.Join(rep.Errors, "\n  "))
			}
			return nil
		},
	}
	closeCmd.Flags().BoolVar(&closeJSON, "json", false, "print what was closed as JSON")
	cmd.AddCommand(list, closeCmd)
	return cmd
}

// resolveSession maps a container id or PROFILE/SESSION to a container id.
func resolveSession(o sandbox.GCOptions, name string) (string, error) {
	infos, err := sandbox.ListSessionSandboxes(o)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, i := range infos {
		if i.ContainerID == name || i.Profile+"/"+i.Session == name {
			matches = append(matches, i.ContainerID)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no session sandbox %q (see tether sessions list): %w", name, sandbox.ErrNoProcess)
	case 1:
		return matches[0], nil
	}
	return "", errors.New("several session sandboxes match " + name + ": give a container id (" + strings.Join(matches, ", ") + ")")
}
