package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
)

func init() { addCommand(newApprovalsCmd) }

// EnvSocket names the socket of `tether serve`.
const envSocket = "TETHER_SOCKET"

// errNoDaemon is the message of every approvals subcommand when `tether
// serve` is not reachable.
var errNoDaemon = errors.New("tether serve is not running")

type approvalsFlags struct {
	socket  string
	config  string
	profile string
	session string
	asJSON  bool
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

The daemon is reached on --socket, else $TETHER_SOCKET, else
<state_dir>/tether.sock (state_dir from the configuration).

Answers always name a session (--session): one session never answers
another's requests. Without an ID or --all, the session's oldest request
is answered.

Exit status: 0 on success, 1 when the daemon is not running or has no
such request, 2 for bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.socket, "socket", "", "daemon socket (default: $TETHER_SOCKET, else <state_dir>/tether.sock)")
	pf.StringVar(&f.config, "config", "", "config file (for state_dir and the default profile)")
	pf.StringVar(&f.profile, "profile", "", "profile (default: the config's default_profile)")
	pf.StringVar(&f.session, "session", "", "session key")
	pf.BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.AddCommand(newApprovalsListCmd(f), newApprovalsAnswerCmd(f, approval.VerdictApprove), newApprovalsAnswerCmd(f, approval.VerdictDeny))
	return cmd
}

func newApprovalsListCmd(f *approvalsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list [--session S] [--json]",
		Short: "List pending approval requests (oldest first)",
		Long: `List the pending requests of one session (--session), or of every session of
the profile. Requires "tether serve"; not running: exit 1 with that message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := dialDaemon(f)
			if err != nil {
				return err
			}
			q := url.Values{"profile": {f.profile}, "session": {f.session}}
			var out struct {
				Pending []approval.Pending `json:"pending"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, "/v1/approvals?"+q.Encode(), nil, &out); err != nil {
				return err
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
		all   bool
		scope string
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
			req := approval.DecideRequest{Profile: f.profile, Session: f.session, All: all, Verdict: v, By: "cli:" + userName()}
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
				req.Scope = s
			}
			c, err := dialDaemon(f)
			if err != nil {
				return err
			}
			body, _ := json.Marshal(req)
			var out approval.DecideResponse
			if err := c.do(cmd.Context(), http.MethodPost, "/v1/approvals/decide", body, &out); err != nil {
				return err
			}
			if f.asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%sd %d request(s) in session %s\n", verb, out.Answered, f.session)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "answer every pending request of the session")
	if v == approval.VerdictApprove {
		cmd.Flags().StringVar(&scope, "scope", "once", "once, session or always")
	}
	return cmd
}

// daemonClient speaks the gateway API (approval.GatewayHandler) over the
// daemon's unix socket.
type daemonClient struct {
	http   *http.Client
	socket string
}

// dialDaemon finds the socket and checks that the daemon answers on it.
func dialDaemon(f *approvalsFlags) (*daemonClient, error) {
	sock := f.socket
	if sock == "" {
		sock = os.Getenv(envSocket)
	}
	if sock == "" {
		cfg, err := config.Resolve(f.config)
		if err != nil {
			return nil, &exitError{Code: 1, Err: fmt.Errorf("%w (and the configuration does not load: %v)", errNoDaemon, err)}
		}
		sock = filepath.Join(cfg.StateDir, "tether.sock")
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return nil, &exitError{Code: 1, Err: fmt.Errorf("%w (nothing listens on %s); start it with `tether serve`", errNoDaemon, sock)}
	}
	conn.Close()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	return &daemonClient{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}, socket: sock}, nil
}

func (c *daemonClient) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://tether"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &exitError{Code: 1, Err: fmt.Errorf("%w (%s: %v)", errNoDaemon, c.socket, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading the daemon's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = resp.Status
		}
		return &exitError{Code: 1, Err: errors.New(e.Error)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the daemon's answer: %w", err)
	}
	return nil
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
