package runner

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// proxyRunner returns a Runner over a sandbox profile in network mode
// proxy that allows loopback by address (tests only) except 127.0.0.2,
// with a real approval engine and mandate store.
func proxyRunner(t *testing.T, extra ...string) (*Runner, string) {
	t.Helper()
	sb := testSandbox(t)
	cfg, ws := testConfig(t, "      network:\n        mode: proxy\n        allow: [\"127.0.0.0/8\"]\n        deny: [\"127.0.0.2\"]\n"+strings.Join(extra, ""))
	store := testStore(t, cfg)
	eng := testEngine(t, cfg, approval.Options{Mandate: &mandate.Hook{Store: store}})
	sessions := testSessions(t, sb)
	return &Runner{Config: cfg, Engine: eng, Mandates: store, Sandbox: sb, Sessions: sessions}, ws
}

// webServer is an HTTP server on the host's loopback (127.0.0.1) that
// answers "hello" and counts requests.
func webServer(t *testing.T) (port string, hits *atomic.Int64) {
	t.Helper()
	n := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "hello from the host")
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return port, n
}

// viaProxy clears NO_PROXY, which names 127.0.0.1 (inside the namespace,
// the sandbox's own loopback): the test servers are on the host's.
const viaProxy = "NO_PROXY= no_proxy= "

func terminalCall(id, command string) RawCall {
	return rawCall(id, "terminal", args("command", command))
}

// liveSessionEgress counts the session egress boxes still open.
func liveSessionEgress() int {
	n := 0
	sessionEgress.Range(func(_, _ any) bool { n++; return true })
	return n
}

// netnsFDs counts this process's open descriptors on network namespaces:
// each egress namespace holds one while it lives.
func netnsFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "net:[") {
			n++
		}
	}
	return n
}

// TestTerminalProxyMode runs curl in a one-shot sandbox in proxy mode:
// the allowed host answers through the proxy, a denied host gets the
// proxy's 403 naming the rule, and raw TCP without the proxy fails.
func TestTerminalProxyMode(t *testing.T) {
	r, ws := proxyRunner(t)
	port, hits := webServer(t)
	// A raw connection that ignores the proxy variables (in a script:
	// "bash -c" needs an approval the cron platform cannot give).
	fds := netnsFDs(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "raw.sh"), []byte("echo hi > /dev/tcp/127.0.0.1/"+port+"\n"), 0o644))
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Calls: []RawCall{
		terminalCall("ok", viaProxy+"curl -sS -f http://127.0.0.1:"+port+"/hello"),
		terminalCall("denied", viaProxy+"curl -sS -w ' %{http_code}' http://127.0.0.2:"+port+"/"),
		terminalCall("raw", "bash raw.sh"),
		terminalCall("noproxy", "curl -sS --noproxy '*' http://127.0.0.1:"+port+"/"),
		terminalCall("env", "echo $HTTP_PROXY; readlink /proc/self/ns/net"),
	}}, nil)
	res := out.Results
	require.Equal(t, ClassSucceeded, res[0].Class, "%s %v", res[0].Message, res[0].Output)
	assert.Equal(t, "hello from the host", res[0].Output["stdout"])
	assert.Equal(t, ClassSucceeded, res[1].Class, "%s %v", res[1].Message, res[1].Output)
	assert.Equal(t, "tether egress: host 127.0.0.2 refused by deny rule \"127.0.0.2\"\n 403", res[1].Output["stdout"])
	assert.Equal(t, ClassFailed, res[2].Class, "raw TCP has no route out: %s %v", res[2].Message, res[2].Output)
	assert.Contains(t, res[2].Output["stderr"], "Connection refused")
	assert.Equal(t, ClassFailed, res[3].Class, "curl without the proxy fails: %v", res[3].Output)
	assert.EqualValues(t, 1, hits.Load(), "only the proxied request reached the host")
	require.Equal(t, ClassSucceeded, res[4].Class, "%s %v", res[4].Message, res[4].Output)
	host, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+\nnet:\[\d+\]\n$`, res[4].Output["stdout"])
	assert.NotContains(t, res[4].Output["stdout"], host, "the sandbox is not in the host's network namespace")
	assert.Equal(t, fds, netnsFDs(t), "every one-shot namespace was released")
}

// TestTerminalProxyModeMandate: in observe mode the hosts a job's
// commands contact through the proxy become its mandate's hosts family
// with evidence, also when no argument names them; under the approved
// mandate a new host is refused and recorded as drift (family hosts).
func TestTerminalProxyModeMandate(t *testing.T) {
	r, ws := proxyRunner(t)
	ctx := t.Context()
	port, hits := webServer(t)
	script := filepath.Join(ws, "fetch.sh")
	// The host is inside a script: argument guessing cannot see it.
	require.NoError(t, os.WriteFile(script, []byte(viaProxy+"curl -sS -f http://127.0.0.1:"+port+"/hello\n"), 0o644))
	job := Batch{Platform: approval.PlatformCron, Job: "fetcher", Session: "run1",
		Calls: []RawCall{terminalCall("1", "sh fetch.sh")}}
	for range 2 {
		out := r.Execute(ctx, job, nil)
		require.Equal(t, ClassSucceeded, out.Results[0].Class, "%s %v", out.Results[0].Message, out.Results[0].Output)
	}
	// A URL in the arguments is not guessed as well: the proxy's record of
	// the connection is the only evidence (one connection, one count).
	direct := Batch{Platform: approval.PlatformCron, Job: "fetcher", Session: "run1",
		Calls: []RawCall{terminalCall("1", viaProxy+"curl -sS -f http://127.0.0.1:"+port+"/hello")}}
	out := r.Execute(ctx, direct, nil)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, "%s %v", out.Results[0].Message, out.Results[0].Output)
	assert.EqualValues(t, 3, hits.Load())
	v, err := r.Mandates.Compile(ctx, "fetcher")
	require.NoError(t, err)
	assert.Contains(t, v.Text, "hosts:\n  - \"127.0.0.1\"  # seen 3x\n", v.Text)
	_, err = r.Mandates.Approve(ctx, "fetcher", v.Number, "test")
	require.NoError(t, err)

	// Enforced: the known host still answers, a new one (allowed by the
	// profile) is refused before any dial and becomes drift.
	require.NoError(t, os.WriteFile(script, []byte("export "+viaProxy+"\ncurl -sS -f http://127.0.0.1:"+port+"/hello; echo; curl -sS http://127.0.0.3:"+port+"/\n"), 0o644))
	job.Session = "run2"
	out = r.Execute(ctx, job, nil)
	res := out.Results[0]
	require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
	assert.Equal(t, "hello from the host\ntether egress: host 127.0.0.3 not in the hosts of mandate fetcher v"+strconv.Itoa(v.Number)+"\n", res.Output["stdout"])
	assert.EqualValues(t, 4, hits.Load())
	drift, err := r.Mandates.Drift(ctx, "fetcher")
	require.NoError(t, err)
	require.Len(t, drift, 1)
	assert.Equal(t, []string{mandate.FamilyHosts}, drift[0].Families)
	assert.Equal(t, "terminal (contacted 127.0.0.3)", drift[0].Call)
	assert.Equal(t, "run2", drift[0].Run)
}

// TestTerminalProxyModeSession: a session sandbox keeps one proxy for its
// lifetime, and closing the session closes it.
func TestTerminalProxyModeSession(t *testing.T) {
	r, _ := proxyRunner(t, "")
	port, hits := webServer(t)
	before, fds := liveSessionEgress(), netnsFDs(t)
	b := Batch{Platform: approval.PlatformCron, Session: "s1", Calls: []RawCall{
		terminalCall("1", viaProxy+"curl -sS -f http://127.0.0.1:"+port+"/a; echo; readlink /proc/self/ns/net"),
	}}
	var netns []any
	for range 2 {
		out := r.Execute(t.Context(), b, nil)
		res := out.Results[0]
		require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
		netns = append(netns, res.Output["stdout"])
	}
	assert.EqualValues(t, 2, hits.Load())
	assert.Equal(t, netns[0], netns[1], "one namespace for the session")
	assert.Equal(t, before+1, liveSessionEgress())
	assert.Equal(t, fds+1, netnsFDs(t), "the live session holds its namespace")
	sess, ok := r.Sessions.Lookup("default", "s1")
	require.True(t, ok)
	require.NoError(t, r.Sessions.CloseSession("default", "s1"))
	<-sess.Done()
	// The box is closed by a goroutine woken by Done: wait for it.
	for i := 0; liveSessionEgress() != before; i++ {
		require.Less(t, i, 10_000_000, "the session's egress was not closed")
		runtime.Gosched()
	}
	assert.Equal(t, fds, netnsFDs(t), "the session's namespace was released")
}

// TestTerminalProxyModeByteLimit: the profile's max_bytes reaches the
// proxy: a response larger than the budget is cut.
func TestTerminalProxyModeByteLimit(t *testing.T) {
	r, _ := proxyRunner(t, "        max_bytes: 64\n")
	port, _ := webServer(t)
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Calls: []RawCall{
		terminalCall("1", viaProxy+"curl -sS http://127.0.0.1:"+port+"/hello"),
	}}, nil)
	res := out.Results[0]
	assert.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
	assert.Equal(t, "tether egress: sending request upstream: egress byte limit reached\n", res.Output["stdout"])
}

// BenchmarkEgressBox measures what network mode proxy adds to a one-shot
// command: making the namespace and proxy, and closing them.
func BenchmarkEgressBox(b *testing.B) {
	requireSandbox(b)
	r := &Runner{}
	r.init()
	for b.Loop() {
		box, err := newEgressBox(r, config.Network{Mode: config.NetworkProxy})
		if err != nil {
			b.Fatal(err)
		}
		box.close()
	}
}
