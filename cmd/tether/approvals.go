package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/runner"
)

func init() { addCommand("approvals", newApprovalsCmd) }

// Environment variables of the approvals client.
const (
	envSocket      = "TETHER_SOCKET"       // the socket of tether serve
	envClientToken = "TETHER_CLIENT_TOKEN" // the client token that owns the sessions
)

// errNoDaemon is the message of every approvals subcommand when `tether
// serve` is not reachable.
var errNoDaemon = errors.New("tether serve is not running")

type approvalsFlags struct {
	socket  string
	token   string
	session string
	asJSON  bool
	mcp     bool
}

// envMCPApprovalDir overrides where `tether mcp` publishes its approval
// queue and where `tether approvals --mcp` looks for it.
const envMCPApprovalDir = "TETHER_MCP_APPROVAL_DIR"

func mcpApprovalDir() string {
	if d := os.Getenv(envMCPApprovalDir); d != "" {
		return d
	}
	return runner.DefaultMCPApprovalDir()
}

// useMCPQueue points f at the approval queue of the one running `tether
// mcp` of this user (--mcp): its socket, client token and session.
func useMCPQueue(f *approvalsFlags) error {
	if !f.mcp {
		return nil
	}
	qs, err := runner.MCPQueues(mcpApprovalDir())
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("finding the MCP servers' approval queues: %w", err)}
	}
	if f.session != "" {
		qs = slices.DeleteFunc(qs, func(q runner.MCPQueue) bool { return q.Session != f.session })
	}
	switch len(qs) {
	case 0:
		return &exitError{Code: 1, Err: fmt.Errorf("no running tether mcp publishes an approval queue in %s", mcpApprovalDir())}
	case 1:
	default:
		var ss []string
		for _, q := range qs {
			ss = append(ss, fmt.Sprintf("%s (pid %d, %s)", q.Session, q.PID, q.Cwd))
		}
		return &exitError{Code: 2, Err: fmt.Errorf("%d tether mcp servers are running; name one with --session: %s", len(qs), strings.Join(ss, ", "))}
	}
	f.socket, f.token, f.session = qs[0].Socket, qs[0].ClientToken, qs[0].Session
	return nil
}

func newApprovalsCmd() *cobra.Command {
	f := &approvalsFlags{}
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and answer approval requests waiting in tether serve's gateway queue",
		Long: `Commands that need approval on the gateway platform wait in the queue of the
running daemon, one queue per profile and session. These commands are its
client: they require "tether serve". When it is not running they change
nothing and exit 1 with "tether serve is not running".

The daemon is reached on --socket, else $TETHER_SOCKET, else its default
socket ($XDG_RUNTIME_DIR/tether/tether.sock; /run/tether/tether.sock for
root). The daemon shows a client only the sessions it created: give the
client token (the client_token of POST /v1/sessions) with --client-token
or $TETHER_CLIENT_TOKEN. For a session "tether run --session S" made, the
token is found on its own (--session S, by name or by the daemon's id).

With --mcp they answer the queue of the running "tether mcp" instead: when
its MCP client cannot elicit, a command needing approval waits there (up
to the profile's approvals.timeout) for a person on this machine. --mcp
finds the server's socket, client token and session itself; with several
servers running, name one with --session.

Answers always name a session (--session): one session never answers
another's requests. Without an ID or --all, the session's oldest request
is answered.

Exit status: 0 on success, 1 when the daemon is not running or has no
such request, 2 for bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.socket, "socket", "", "daemon socket (default: $TETHER_SOCKET, else the daemon's default socket)")
	pf.StringVar(&f.token, "client-token", "", "client token owning the sessions (default: $TETHER_CLIENT_TOKEN)")
	pf.StringVar(&f.session, "session", "", "session id")
	pf.BoolVar(&f.asJSON, "json", false, "print JSON")
	pf.BoolVar(&f.mcp, "mcp", false, "use the queue of the running tether mcp (its client cannot elicit) instead of tether serve's")
	cmd.AddCommand(newApprovalsListCmd(f), newApprovalsAnswerCmd(f, approval.VerdictApprove), newApprovalsAnswerCmd(f, approval.VerdictDeny))
	return cmd
}

func newApprovalsListCmd(f *approvalsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list [--session S] [--json]",
		Short: "List pending approval requests (oldest first)",
		Long: `List the pending requests of one session (--session), or of every session of
the client. Requires "tether serve"; not running: exit 1 with that message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := useMCPQueue(f); err != nil {
				return err
			}
			c, err := dialDaemon(f)
			if err != nil {
				return err
			}
			pending, err := c.Approvals(cmd.Context(), f.session)
			if err != nil {
				return apiErr(c, err)
			}
			out := struct {
				Pending []approval.Pending `json:"pending"`
			}{pending}
			if out.Pending == nil {
				out.Pending = []approval.Pending{}
			}
			w := cmd.OutOrStdout()
			if f.asJSON {
				return json.NewEncoder(w).Encode(out)
			}
			if len(out.Pending) == 0 {
				fmt.Fprintln(w, "no pending approval requests")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPROFILE\tSESSION\tAGE\tCOMMAND")
			for _, p := range out.Pending {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.Profile, p.Session,
					time.Since(p.Created).Round(time.Second), oneLine(p.Command))
			}
			return tw.Flush()
		},
	}
}

func newApprovalsAnswerCmd(f *approvalsFlags, v approval.Verdict) *cobra.Command {
	var (
		all    bool
		scope  string
		reason string
	)
	verb := "approve"
	if v == approval.VerdictDeny {
		verb = "deny"
	}
	cmd := &cobra.Command{
		Use:   verb + " --session S [--all | ID]",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a pending request: the session's oldest, one by ID, or --all",
		Long: `Answer pending requests of one session: the oldest without arguments, the
request ID, or every one with --all. Requires "tether serve"; not running:
exit 1 with that message.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := useMCPQueue(f); err != nil {
				return err
			}
			req := runner.Decision{All: all, Verdict: string(v), Reason: "answered with tether approvals by " + userName()}
			if reason != "" {
				req.Reason = strings.Join(strings.Fields(reason), " ") + " (" + req.Reason + ")"
			}
			if len(args) == 1 {
				req.ID = args[0]
			}
			if f.session == "" {
				return &exitError{Code: 2, Err: errors.New("--session is required: answers always name their session (see tether approvals list)")}
			}
			if all && req.ID != "" {
				return &exitError{Code: 2, Err: errors.New("give either an ID or --all, not both")}
			}
			if v == approval.VerdictApprove {
				s, err := approval.ParseScope(scope)
				if err != nil {
					return &exitError{Code: 2, Err: err}
				}
				req.Scope = string(s)
			}
			c, err := dialDaemon(f)
			if err != nil {
				return err
			}
			n, err := c.Decide(cmd.Context(), f.session, req)
			if err != nil {
				return apiErr(c, err)
			}
			out := struct {
				Answered int `json:"answered"`
			}{n}
			if f.asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			done := map[string]string{"approve": "approved", "deny": "denied"}[verb]
			fmt.Fprintf(cmd.OutOrStdout(), "%s %d request(s) in session %s\n", done, out.Answered, f.session)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "answer every pending request of the session")
	if v == approval.VerdictApprove {
		cmd.Flags().StringVar(&scope, "scope", "once", "once, session or always")
	} else {
		cmd.Flags().StringVar(&reason, "reason", "", "why, told to the agent with the denial")
	}
	return cmd
}

// dialDaemon finds the socket (--socket, $TETHER_SOCKET, the daemon's
// default) and checks that the daemon answers on it.
func dialDaemon(f *approvalsFlags) (*runner.Client, error) {
	sock := f.socket
	if sock == "" {
		sock = os.Getenv(envSocket)
	}
	if sock == "" {
		sock = runner.DefaultSocket()
	}
	c := runner.NewClient(sock)
	c.ClientToken = f.token
	if c.ClientToken == "" {
		c.ClientToken = os.Getenv(envClientToken)
	}
	if c.ClientToken == "" && f.session != "" {
		// A session tether run --session made: its token is in this
		// user's private memory of CLI sessions.
		if s := rememberedSession(sock, f.session); s != nil {
			c.ClientToken, f.session = s.ClientToken, s.Session
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		var ae *runner.APIError
		if !errors.As(err, &ae) {
			return nil, &exitError{Code: 1, Err: fmt.Errorf("%w (nothing listens on %s); start it with `tether serve`", errNoDaemon, sock)}
		}
	}
	return c, nil
}

// rememberedSession finds the CLI session that tether run --session
// remembered for the daemon on sock, by its name (s1) or the daemon's id
// (s-…); nil when there is none.
func rememberedSession(sock, session string) *cliSession {
	if abs, err := filepath.Abs(sock); err == nil {
		sock = abs
	}
	dir, err := cliSessionDir(sock)
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, file := range files {
		s, err := loadCLISession(file)
		if err == nil && s != nil && (s.Name == session || s.Session == session) {
			return s
		}
	}
	return nil
}

// apiErr maps a client error to exit status 1: the daemon's own message
// for an API error, "not running" when it stopped answering.
func apiErr(c *runner.Client, err error) error {
	var ae *runner.APIError
	if errors.As(err, &ae) {
		return &exitError{Code: 1, Err: errors.New(ae.Message)}
	}
	return &exitError{Code: 1, Err: fmt.Errorf("%w (%s: %v)", errNoDaemon, c.Socket, err)}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprintf("uid%d", os.Getuid())
}
