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
)

func init() { addCommand(newApprovalsCmd) }

// Environment variables of the approvals client.
const (
	envSocket      = "TETHER_SOCKET"       // the socket of tether serve
	envClientToken = "TETHER_CLIENT_TOKEN" // the client token that owns the sessions
	headerClient   = "Tether-Client-Token" // runner.HeaderClientToken
)

// errNoDaemon is the message of every approvals subcommand when `tether
// serve` is not reachable.
var errNoDaemon = errors.New("tether serve is not running")

type approvalsFlags struct {
	socket  string
	token   string
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

The daemon is reached on --socket, else $TETHER_SOCKET, else its default
socket ($XDG_RUNTIME_DIR/tether/tether.sock; /run/tether/tether.sock for
root). The daemon shows a client only the sessions it created: give the
client token (the client_token of POST /v1/sessions) with --client-token
or $TETHER_CLIENT_TOKEN.

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
			c, err := dialDaemon(f)
			if err != nil {
				return err
			}
			path := "/v1/approvals"
			if f.session != "" {
				path = "/v1/sessions/" + url.PathEscape(f.session) + "/approvals"
			}
			var out struct {
				Pending []approval.Pending `json:"pending"`
			}
			if err := c.do(cmd.Context(), http.MethodGet, path, nil, &out); err != nil {
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
			req := decideBody{All: all, Verdict: string(v), Reason: "answered with tether approvals by " + userName()}
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
			body, _ := json.Marshal(req)
			var out struct {
				Answered int `json:"answered"`
			}
			path := "/v1/sessions/" + url.PathEscape(f.session) + "/approvals"
			if err := c.do(cmd.Context(), http.MethodPost, path, body, &out); err != nil {
				return err
			}
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
	}
	return cmd
}

// decideBody is the body of POST /v1/sessions/{id}/approvals.
type decideBody struct {
	ID      string `json:"id,omitempty"`  // "" answers the oldest
	All     bool   `json:"all,omitempty"` // every pending request of the session
	Verdict string `json:"verdict"`
	Scope   string `json:"scope,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// daemonClient speaks tether serve's HTTP API (runner.Server) over its
// unix socket.
type daemonClient struct {
	http   *http.Client
	socket string
	token  string
}

// defaultSocket mirrors runner.DefaultSocket: $XDG_RUNTIME_DIR/tether/
// tether.sock, else $TMPDIR/tether-<uid>/tether.sock, and
// /run/tether/tether.sock for root.
func defaultSocket() string {
	if os.Geteuid() == 0 {
		return "/run/tether/tether.sock"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "tether", "tether.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tether-%d", os.Geteuid()), "tether.sock")
}

// dialDaemon finds the socket and checks that the daemon answers on it.
func dialDaemon(f *approvalsFlags) (*daemonClient, error) {
	sock := f.socket
	if sock == "" {
		sock = os.Getenv(envSocket)
	}
	if sock == "" {
		sock = defaultSocket()
	}
	token := f.token
	if token == "" {
		token = os.Getenv(envClientToken)
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
	return &daemonClient{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}, socket: sock, token: token}, nil
}

func (c *daemonClient) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://tether"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set(headerClient, c.token)
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
