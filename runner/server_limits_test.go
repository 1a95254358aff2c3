package runner

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

// rawRequest sends text on a new connection to the socket and returns the
// response. It writes while it reads: the daemon may answer (413) and
// close before the whole request is sent.
func rawRequest(t *testing.T, socket, text string) (*http.Response, error) {
	t.Helper()
	c, err := net.Dial("unix", socket)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	go func() { _, _ = io.WriteString(c, text) }()
	return http.ReadResponse(bufio.NewReader(c), nil)
}

func post(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: tether\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestServeRejectsHostileBodies: too large is 413, trailing data after the
// JSON object is 400, and a body that trickles in is cut off (408) rather
// than holding the connection.
func TestServeRejectsHostileBodies(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.limits = Limits{BodyTimeout: 3 * time.Second} // room for 8 MiB under -race; the trickle case waits it out
	e.start(t)

	big := `{"profile":"` + strings.Repeat("x", maxBodyBytes) + `"}`
	resp, err := rawRequest(t, e.socket, post("/v1/sessions", big))
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, bodyOf(t, resp), "over")

	for _, trailing := range []string{`{} {}`, `{}garbage`, `{}]`, `{"profile":"default"}{"profile":"x"}`} {
		resp, err := rawRequest(t, e.socket, post("/v1/sessions", trailing))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, trailing)
		assert.Contains(t, bodyOf(t, resp), "data after the JSON object", trailing)
	}
	resp, err = rawRequest(t, e.socket, post("/v1/sessions", "{}\n"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "trailing white space is fine")

	// Headers promise 100 bytes; 10 arrive, then nothing.
	resp, err = rawRequest(t, e.socket, "POST /v1/sessions HTTP/1.1\r\nHost: tether\r\nContent-Length: 100\r\n\r\n{\"profile\"")
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Contains(t, bodyOf(t, resp), "did not arrive within")
}

// TestServeConnectionLimit: connections over the limit are answered 503
// and closed, and a slot is free again once a connection closes.
func TestServeConnectionLimit(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.limits = Limits{MaxConns: 4}
	e.start(t)
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("unix", e.socket)
		require.NoError(t, err)
		held = append(held, c)
		// A request on each makes sure the server accepted it.
		_, err = io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: tether\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	resp, err := rawRequest(t, e.socket, "GET /v1/health HTTP/1.1\r\nHost: tether\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, bodyOf(t, resp), "connections open")

	held[0].Close()
	require.Eventually(t, func() bool {
		c, err := net.Dial("unix", e.socket)
		if err != nil {
			return false
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: tether\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond, "a closed connection frees its slot")
	for _, c := range held[1:] {
		c.Close()
	}
}

// TestServeIdleConnectionsClosed: a keep-alive connection left idle is
// closed by the daemon.
func TestServeIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.limits = Limits{IdleConnTimeout: 100 * time.Millisecond}
	e.start(t)
	c, err := net.Dial("unix", e.socket)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: tether\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_ = bodyOf(t, resp)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the daemon closed the idle connection (not our 20s deadline)")
}

// TestServeSessionQuotaAndExpiry: one client cannot take more than its
// quota of sessions, and a session unused past SessionIdle is cleared and
// its client told so.
func TestServeSessionQuotaAndExpiry(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.limits = Limits{MaxSessionsPerClient: 3}
	d, _ := e.start(t)
	c := NewClient(e.socket)
	var ids []string
	for range 3 {
		s, err := c.CreateSession(t.Context(), SessionRequest{})
		require.NoError(t, err)
		ids = append(ids, s.Session)
	}
	_, err := c.CreateSession(t.Context(), SessionRequest{})
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.Status)
	assert.Contains(t, apiErr.Message, "quota")

	other := NewClient(e.socket)
	_, err = other.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err, "another client has its own quota")

	// ids[0] has not been used for longer than SessionIdle.
	d.Server.mu.Lock()
	d.Server.sessions[ids[0]].lastUsed.Store(time.Now().Add(-2 * time.Hour).UnixNano())
	d.Server.mu.Unlock()
	d.Server.expireOnce()
	_, err = c.Call(t.Context(), ids[0], "", nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusGone, apiErr.Status)
	assert.Contains(t, apiErr.Message, "expired")
	assert.Contains(t, apiErr.Message, "POST /v1/sessions")
	_, err = other.Call(t.Context(), ids[0], "", nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status, "another client learns nothing about it")
	_, err = c.Call(t.Context(), ids[1], "", nil)
	require.NoError(t, err, "a session in use stays")

	_, err = c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err, "the expired session's slot is free")
}

// TestServeBodyTimeoutSparesLongCalls: the body deadline ends once the
// body is read; a call waiting longer than it for an approval is not cut
// off, and the answer is its decision.
func TestServeBodyTimeoutSparesLongCalls(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.limits = Limits{BodyTimeout: 100 * time.Millisecond}
	e.start(t)
	c := NewClient(e.socket)
	s, err := c.CreateSession(t.Context(), SessionRequest{})
	require.NoError(t, err)
	type out struct {
		res BatchResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := c.Call(t.Context(), s.Session, "", []RawCall{rawCall("1", "terminal", map[string]any{"command": "git push --force"})})
		done <- out{res, err}
	}()
	var pending []approval.Pending
	require.Eventually(t, func() bool {
		pending, err = c.Approvals(t.Context(), s.Session)
		return err == nil && len(pending) == 1
	}, 10*time.Second, 5*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // past the body deadline: the call must still be waiting
	n, err := c.Decide(t.Context(), s.Session, Decision{ID: pending[0].ID, Verdict: "deny", Reason: "not now"})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	o := <-done
	require.NoError(t, o.err)
	require.Len(t, o.res.Results, 1)
	require.NotNil(t, o.res.Results[0].Decision)
	assert.Equal(t, approval.ApprovalAnswered, o.res.Results[0].Decision.Approval, "answered, not cancelled")
	assert.Contains(t, o.res.Results[0].Decision.Reason, "not now")
}
