package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xproxy "golang.org/x/net/proxy"

	"github.com/tether-dev/tether/internal/testenv"
)

// harness is a proxy on a host loopback listener with recorded events and
// a dialler that counts its calls.
type harness struct {
	p         *Proxy
	addr      string
	dials     atomic.Int64
	mu        sync.Mutex
	events    []Event
	decisions []Decision
}

func startProxy(t *testing.T, pol Policy, lim Limits) *harness {
	t.Helper()
	h := &harness{}
	var d net.Dialer
	h.p = New(Options{
		Policy: pol,
		Limits: lim,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			h.dials.Add(1)
			if network != "tcp" {
				return nil, fmt.Errorf("unexpected network %s", network)
			}
			return d.DialContext(ctx, network, address)
		},
		OnDecision: func(_ Attribution, dec Decision) {
			h.mu.Lock()
			h.decisions = append(h.decisions, dec)
			h.mu.Unlock()
		},
		Observe: func(ev Event) {
			h.mu.Lock()
			h.events = append(h.events, ev)
			h.mu.Unlock()
		},
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h.addr = l.Addr().String()
	done := make(chan error, 1)
	go func() { done <- h.p.Serve(l) }()
	t.Cleanup(func() {
		h.p.Close()
		assert.NoError(t, <-done)
	})
	return h
}

// eventsNow returns the events so far; Observe runs before the handler
// returns, so callers that finished a request see its event once the
// connection is closed. waitEvents polls for n events without timing.
func (h *harness) waitEvents(t *testing.T, n int) []Event {
	t.Helper()
	// A deadline, not a count of yields: on a quiet machine a million
	// yields took 0.33 s, less than the 500 ms idle timeout an event
	// waited for (CI4, session 14: TestProxyRefusesSplitClientHello).
	deadline := time.Now().Add(testenv.Scaled(10 * time.Second))
	for {
		h.mu.Lock()
		ev := append([]Event(nil), h.events...)
		h.mu.Unlock()
		if len(ev) >= n {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d events, want %d", len(ev), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) client(extra *tls.Config) *http.Client {
	u, _ := url.Parse("http://" + h.addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: extra, DisableKeepAlives: true}}
}

func hostPortOf(t *testing.T, rawURL string) (string, int) {
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	return u.Hostname(), port
}

func allowPolicy(t *testing.T, allow ...string) Policy {
	pol, err := NewPolicy(allow, nil)
	require.NoError(t, err)
	return pol
}

func TestProxyHTTPForward(t *testing.T) {
	var got http.Header
	var gotHost string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		gotHost = r.Host
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello %s %s %s", r.Method, r.URL.RequestURI(), body)
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	h := startProxy(t, allowPolicy(t, "127.0.0.1:"+strconv.Itoa(port)), Limits{})
	h.p.Begin(Attribution{Run: "run-1", Command: "cmd-1"})

	req, err := http.NewRequest("POST", srv.URL+"/path?q=1", strings.NewReader("payload"))
	require.NoError(t, err)
	req.Header.Set("X-Keep", "yes")
	req.Header.Set("X-Hop", "drop me")
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := h.client(nil).Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "hello POST /path?q=1 payload", string(body))
	assert.Equal(t, "yes", got.Get("X-Keep"))
	assert.Empty(t, got.Get("X-Hop"), "headers named by Connection are hop-by-hop")
	assert.Empty(t, got.Get("Proxy-Authorization"))
	assert.Equal(t, strings.TrimPrefix(srv.URL, "http://"), gotHost)

	// A Host header naming another virtual host is replaced by the
	// checked authority (no domain fronting).
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET %s/x HTTP/1.1\r\nHost: evil.example\r\n\r\n", srv.URL)
	r2, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, strings.TrimPrefix(srv.URL, "http://"), gotHost)

	var ev Event
	for _, e := range h.waitEvents(t, 2) {
		if e.Method == "POST" {
			ev = e
		}
	}
	assert.True(t, ev.Allowed)
	assert.Equal(t, "POST", ev.Method)
	assert.Equal(t, "127.0.0.1", ev.Host)
	assert.Equal(t, port, ev.Port)
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(port), ev.Rule)
	assert.Equal(t, Attribution{Run: "run-1", Command: "cmd-1"}, ev.Attribution)
	assert.Positive(t, ev.Up)
	assert.Positive(t, ev.Down)
	assert.EqualValues(t, 2, h.dials.Load())
}

func TestProxyKeepAliveAndCloseDelimited(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			// No length, no chunking possible after hijack: close-delimited.
			c, bw, _ := w.(http.Hijacker).Hijack()
			bw.WriteString("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nstreamed body")
			bw.Flush()
			c.Close()
			return
		}
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{})

	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	for _, p := range []string{"/a", "/b"} {
		fmt.Fprintf(c, "GET http://127.0.0.1:%d%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, p, port)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "ok "+p, string(b), "keep-alive client connection serves request %s", p)
	}
	fmt.Fprintf(c, "GET http://127.0.0.1:%d/stream HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "streamed body", string(b))
	assert.True(t, resp.Close)
}

func TestProxyCONNECT(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secret over tls")
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	h := startProxy(t, allowPolicy(t, "127.0.0.1:"+strconv.Itoa(port)), Limits{})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	resp, err := h.client(&tls.Config{RootCAs: pool}).Get(srv.URL)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "secret over tls", string(b))
	ev := h.waitEvents(t, 1)[0]
	assert.Equal(t, "CONNECT", ev.Method)
	assert.True(t, ev.Allowed)
	assert.Greater(t, ev.Down, int64(len("secret over tls")), "TLS bytes are counted, not plaintext")
}

func TestProxyRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "should not be reached")
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	res := &mapResolver{m: map[string][]string{"internal.test": {"10.0.0.5"}, "evil.example": {"127.0.0.1"}}}
	pol, err := NewPolicy([]string{"*.test", "*.example", "127.0.0.1:1"}, []string{"evil.example"})
	require.NoError(t, err)
	pol.Resolver = res
	h := startProxy(t, pol, Limits{})

	tests := []struct {
		name   string
		url    string
		tls    bool
		status int
		msg    string
	}{
		{"denied http", fmt.Sprintf("http://evil.example:%d/", port), false, 403, `tether egress: host evil.example refused by deny rule "evil.example"`},
		{"denied connect", fmt.Sprintf("https://evil.example:%d/", port), true, 403, ""},
		{"not allowed", srv.URL, false, 403, fmt.Sprintf("tether egress: host 127.0.0.1 port %d not in allow list", port)},
		{"private name", "http://internal.test/", false, 403, "tether egress: host internal.test resolves to private address 10.0.0.5"},
		{"private name connect", "https://internal.test/", true, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", h.addr)
			require.NoError(t, err)
			defer c.Close()
			u, _ := url.Parse(tt.url)
			if tt.tls {
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host, u.Host)
			} else {
				fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", tt.url, u.Host)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Contains(t, string(b), "tether egress: host ")
			if tt.msg != "" {
				assert.Equal(t, tt.msg+"\n", string(b))
			}
		})
	}
	assert.Zero(t, h.dials.Load(), "a refused destination is never dialled")
	evs := h.waitEvents(t, len(tests))
	for _, ev := range evs {
		assert.False(t, ev.Allowed)
	}
	h.mu.Lock()
	assert.Len(t, h.decisions, len(tests), "every refusal reaches OnDecision")
	h.mu.Unlock()
}

func TestProxyBadRequests(t *testing.T) {
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{})
	for _, raw := range []string{
		"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET https://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"CONNECT 127.0.0.1:99999 HTTP/1.1\r\nHost: 127.0.0.1:99999\r\n\r\n",
		"NONSENSE\r\n\r\n",
	} {
		c, err := net.Dial("tcp", h.addr)
		require.NoError(t, err)
		io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, raw)
		assert.Equal(t, 400, resp.StatusCode, raw)
		c.Close()
	}
	assert.Zero(t, h.dials.Load())
}

func TestProxySOCKS5(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "via socks")
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	res := &mapResolver{m: map[string][]string{"web.test": {"127.0.0.1"}, "internal.test": {"10.0.0.5"}}}
	pol, err := NewPolicy([]string{"web.test", "internal.test", "127.0.0.1"}, nil)
	require.NoError(t, err)
	pol.Resolver = res
	h := startProxy(t, pol, Limits{})
	d, err := xproxy.SOCKS5("tcp", h.addr, nil, xproxy.Direct)
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{DialContext: d.(xproxy.ContextDialer).DialContext, DisableKeepAlives: true}}

	resp, err := client.Get(fmt.Sprintf("http://web.test:%d/", port))
	require.NoError(t, err, "domain names are resolved on the host side")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "via socks", string(b))
	assert.EqualValues(t, 1, h.dials.Load())

	_, err = client.Get("http://internal.test:80/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not allowed by ruleset")
	assert.EqualValues(t, 1, h.dials.Load(), "the private destination is never dialled")
	evs := h.waitEvents(t, 2)
	assert.Equal(t, "SOCKS5", evs[0].Method)
	var refused Event
	for _, ev := range evs {
		if !ev.Allowed {
			refused = ev
		}
	}
	assert.Equal(t, RefusedSpecial, refused.Refusal)
}

func TestProxyByteLimit(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, big)
	}))
	defer srv.Close()
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{MaxBytes: 64 << 10})
	h.p.Begin(Attribution{Command: "big"})
	client := h.client(&tls.Config{InsecureSkipVerify: true})
	resp, err := client.Get(srv.URL)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	require.Error(t, err, "the tunnel is cut at the byte limit")
	ev := h.waitEvents(t, 1)[0]
	assert.Contains(t, ev.Err, ErrByteLimit.Error())
	assert.Less(t, ev.Down, int64(len(big)))

	// The spent budget refuses new connections of the same command...
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", strings.TrimPrefix(srv.URL, "https://"))
	r2, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, r2.StatusCode)
	c.Close()
	// ...and of the next command: the limit is the sandbox's.
	h.p.Begin(Attribution{Command: "small"})
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "small") }))
	defer srv2.Close()
	resp, err = h.client(nil).Get(srv2.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "a new command gets no fresh allowance")
}

// echoServer accepts connections and echoes what they send.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { up.Close() })
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return up
}

// tunnelTo opens a CONNECT tunnel through the proxy.
func (h *harness) tunnelTo(t *testing.T, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return c, br
}

// TestProxyLimitsOutliveCommands: a background process that opened a
// connection during one command keeps counting against the sandbox's
// limits through every later command. Across 50 commands it cannot move
// more than MaxBytes, nor hold more than MaxConns connections.
func TestProxyLimitsOutliveCommands(t *testing.T) {
	up := echoServer(t)
	const maxBytes = 64 << 10
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{MaxBytes: maxBytes, MaxConns: 2})
	h.p.Begin(Attribution{Command: "cmd-0"})
	bg, br := h.tunnelTo(t, up.Addr().String()) // the background process's connection
	chunk := make([]byte, 4<<10)
	buf := make([]byte, len(chunk))
	moved := 0
	var cut error
	for i := 1; i <= 50 && cut == nil; i++ {
		h.p.Begin(Attribution{Command: "cmd-" + strconv.Itoa(i)}) // the session's next command
		if _, err := bg.Write(chunk); err != nil {
			cut = err
			break
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			cut = err
			break
		}
		moved += 2 * len(chunk) // up and back down
	}
	require.Error(t, cut, "the background connection is cut at the sandbox's byte limit")
	assert.LessOrEqual(t, moved, maxBytes, "no fresh allowance per command")

	assert.LessOrEqual(t, h.p.usage.used.Load(), int64(maxBytes), "the proxy moved at most MaxBytes")

	// The budget stays spent for the commands that follow.
	h.p.Begin(Attribution{Command: "cmd-next"})
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", up.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
}

// TestProxyConnLimitOutlivesCommands: connections held open by earlier
// commands' background processes count against the sandbox's MaxConns.
func TestProxyConnLimitOutlivesCommands(t *testing.T) {
	up := echoServer(t)
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{MaxConns: 3})
	for i := range 3 {
		h.p.Begin(Attribution{Command: "cmd-" + strconv.Itoa(i)})
		h.tunnelTo(t, up.Addr().String()) // left open, as a background process would
	}
	h.p.Begin(Attribution{Command: "cmd-3"})
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := c.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "a fourth connection is over the sandbox's limit, whichever command opens it")
}

func TestProxyMaxConns(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo
		}
	}()
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{MaxConns: 1})
	first, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer first.Close()
	fmt.Fprintf(first, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", up.Addr())
	br := bufio.NewReader(first)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	io.WriteString(first, "ping")
	buf := make([]byte, 4)
	_, err = io.ReadFull(br, buf)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(buf))

	second, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer second.Close()
	n, err := second.Read(buf)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "a connection over the limit is closed at once")
	ev := h.waitEvents(t, 1)[0]
	assert.Equal(t, RefusedLimit, ev.Refusal)
}

func TestProxyIdleTimeout(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer up.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := up.Accept()
		if err == nil {
			accepted <- c // silent: never writes
		}
	}()
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{IdleTimeout: 50 * time.Millisecond})
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", up.Addr())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	silent := <-accepted
	defer silent.Close()
	// Neither side says anything: the proxy closes the tunnel on its own.
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF)
	ev := h.waitEvents(t, 1)[0]
	assert.Contains(t, ev.Err, "timeout")
}

func TestProxyHeaderLimit(t *testing.T) {
	h := startProxy(t, allowPolicy(t, "127.0.0.1"), Limits{})
	c, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer c.Close()
	go func() {
		io.WriteString(c, "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Big: ")
		chunk := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB, never ending the header
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	assert.Zero(t, h.dials.Load())
}

func TestProxyTLSServerNameMustMatch(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls ok")
	}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	pol := allowPolicy(t, "web.test", "127.0.0.1")
	pol.Resolver = &mapResolver{m: map[string][]string{"web.test": {"127.0.0.1"}}}
	h := startProxy(t, pol, Limits{})
	tunnel := func(serverName string) (string, error) {
		c, err := net.Dial("tcp", h.addr)
		require.NoError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "CONNECT web.test:%d HTTP/1.1\r\nHost: web.test:%d\r\n\r\n", port, port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		tc := tls.Client(&bufConn{Conn: c, r: br}, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			return "", err
		}
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", serverName)
		b, err := io.ReadAll(tc)
		return string(b), err
	}
	out, err := tunnel("web.test")
	require.NoError(t, err)
	assert.Contains(t, out, "tls ok")

	_, err = tunnel("fronted.example")
	require.Error(t, err, "a ClientHello for another name is never forwarded")
	var refused Event
	for _, ev := range h.waitEvents(t, 2) {
		if ev.Refusal == RefusedSNI {
			refused = ev
		}
	}
	assert.Equal(t, `tether egress: TLS server name "fronted.example" does not match tunnel host web.test`, refused.Message)
	assert.Zero(t, refused.Up, "no client byte reached the server")
	h.mu.Lock()
	assert.Equal(t, RefusedSNI, h.decisions[len(h.decisions)-1].Refusal)
	h.mu.Unlock()
}

// bufConn reads through a bufio.Reader that may hold bytes already.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }
