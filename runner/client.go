package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tether-dev/tether/approval"
)

// Client talks to `tether serve` over its unix socket (or TCP with a
// bearer token). Safe for concurrent use once configured.
type Client struct {
	// Socket is the unix socket path; used when Addr is empty.
	Socket string
	// Addr is "host:port" for TCP; BearerToken is then required.
	Addr        string
	BearerToken string
	// ClientToken identifies the client (returned by CreateSession).
	ClientToken string
	// HTTP overrides the transport (tests); nil builds one.
	HTTP *http.Client
}

// NewClient returns a client for the unix socket at path.
func NewClient(socket string) *Client {
	return &Client{Socket: socket}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	if c.Addr != "" {
		c.HTTP = &http.Client{}
		return c.HTTP
	}
	sock := c.Socket
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 64,
	}
	c.HTTP = &http.Client{Transport: tr}
	return c.HTTP
}

func (c *Client) base() string {
	if c.Addr != "" {
		return "http://" + c.Addr
	}
	return "http://tether"
}

// APIError is a non-2xx answer of the daemon.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("tether serve: %s (HTTP %d)", e.Message, e.Status)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base()+path, rd)
	if err != nil {
		return err
	}
	c.headers(req)
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("calling tether serve (is it running? socket %s): %w", c.Socket, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading the answer of tether serve: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return &APIError{Status: resp.StatusCode, Message: e.Error}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding the answer of tether serve: %w", err)
		}
	}
	return nil
}

func (c *Client) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	if c.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.BearerToken)
	}
	if c.ClientToken != "" {
		req.Header.Set(HeaderClientToken, c.ClientToken)
	}
}

// Health is GET /v1/health.
func (c *Client) Health(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.do(ctx, http.MethodGet, "/v1/health", nil, &out)
}

// Tools is GET /v1/tools.
func (c *Client) Tools(ctx context.Context, profile string) ([]FunctionSchema, error) {
	var out struct {
		Tools []FunctionSchema `json:"tools"`
	}
	return out.Tools, c.do(ctx, http.MethodGet, "/v1/tools?profile="+url.QueryEscape(profile), nil, &out)
}

// SessionInfo is the answer of CreateSession.
type SessionInfo struct {
	Session     string `json:"session"`
	ClientToken string `json:"client_token"`
	Client      string `json:"client"`
	Profile     string `json:"profile"`
	Platform    string `json:"platform"`
	Job         string `json:"job"`
}

// SessionRequest is the body of CreateSession.
type SessionRequest struct {
	Profile  string `json:"profile,omitempty"`
	Platform string `json:"platform,omitempty"`
	Job      string `json:"job,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	// CallerCwd is the client's working directory, the workspace only when
	// the profile sets no terminal.cwd (Cwd insists on one).
	CallerCwd string `json:"caller_cwd,omitempty"`
}

// CreateSession is POST /v1/sessions. A client without a token gets one,
// stored in c.ClientToken for later calls.
func (c *Client) CreateSession(ctx context.Context, req SessionRequest) (SessionInfo, error) {
	var out SessionInfo
	if err := c.do(ctx, http.MethodPost, "/v1/sessions", req, &out); err != nil {
		return out, err
	}
	if c.ClientToken == "" {
		c.ClientToken = out.ClientToken
	}
	return out, nil
}

// ClearSession is DELETE /v1/sessions/{id}.
func (c *Client) ClearSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/sessions/"+url.PathEscape(id), nil, nil)
}

// Call is POST /v1/sessions/{id}/calls.
func (c *Client) Call(ctx context.Context, session, turn string, calls []RawCall) (BatchResult, error) {
	var out BatchResult
	err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(session)+"/calls",
		map[string]any{"turn": turn, "calls": calls}, &out)
	return out, err
}

// Approvals lists the pending requests of one session, or of every
// session of the client when session is "".
func (c *Client) Approvals(ctx context.Context, session string) ([]approval.Pending, error) {
	var out struct {
		Pending []approval.Pending `json:"pending"`
	}
	path := "/v1/approvals"
	if session != "" {
		path = "/v1/sessions/" + url.PathEscape(session) + "/approvals"
	}
	return out.Pending, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Decision is the body of Decide.
type Decision struct {
	ID      string `json:"id,omitempty"`
	All     bool   `json:"all,omitempty"`
	Verdict string `json:"verdict"`
	Scope   string `json:"scope,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Decide is POST /v1/sessions/{id}/approvals; it returns how many
// requests were answered.
func (c *Client) Decide(ctx context.Context, session string, d Decision) (int, error) {
	var out struct {
		Answered int `json:"answered"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(session)+"/approvals", d, &out)
	return out.Answered, err
}

// Events opens GET /v1/events and sends each approval event on the
// returned channel until ctx ends or the stream closes.
func (c *Client) Events(ctx context.Context) (<-chan approval.Pending, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/v1/events", nil)
	if err != nil {
		return nil, err
	}
	c.headers(req)
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &APIError{Status: resp.StatusCode, Message: "opening the event stream"}
	}
	ch := make(chan approval.Pending, 16)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "approval":
				var p approval.Pending
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &p) == nil {
					select {
					case ch <- p:
					case <-ctx.Done():
						return
					}
				}
			case line == "":
				event = ""
			}
		}
	}()
	return ch, nil
}

// WaitHealthy polls Health until it answers or ctx ends.
func (c *Client) WaitHealthy(ctx context.Context) error {
	for {
		if _, err := c.Health(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
