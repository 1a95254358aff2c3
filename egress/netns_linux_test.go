package egress

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/mandate"
)

// skipOrFail skips a privileged test with the reason, or fails it when
// REQUIRE_SANDBOX=1 says it must run.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("REQUIRE_SANDBOX") == "1" {
		t.Fatalf("REQUIRE_SANDBOX=1 but egress namespace tests cannot run: %s", reason)
	}
	t.Skip(reason)
}

// newTestNamespace makes a namespace or skips/fails with the reason.
func newTestNamespace(t testing.TB) *Namespace {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "creating a network namespace needs root")
	}
	ns, err := NewNamespace()
	if err != nil {
		skipOrFail(t, "cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "%s is not installed", tool)
		}
	}
}

// sandboxEnv is the host environment without proxy settings, plus the
// namespace's proxy variables.
func sandboxEnv(ns *Namespace, home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(k), "_proxy") || k == "HOME" || strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, append(ns.Env(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")...)
}

// inSandbox runs a real client inside the namespace (nsenter joins only the
// network namespace, like a sandbox in proxy mode sees the network).
func inSandbox(t *testing.T, ns *Namespace, home string, argv ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "nsenter", append([]string{"--net=" + ns.Path(), "--"}, argv...)...)
	cmd.Env = sandboxEnv(ns, home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// fixture is a namespace with a proxy and host-side test servers reachable
// by name through a fixed resolver (all names map to loopback).
type fixture struct {
	ns      *Namespace
	proxy   *Proxy
	home    string
	caFile  string
	web     int // plain HTTP test server port (hello, git repo)
	tlsPort int // TLS test server port (certificate for example.com)
	raw     net.Listener
	commit  string

	mu        sync.Mutex
	events    []Event
	decisions []Decision
	dialled   []string
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, Limits{}) }

// newFixtureWith is newFixture with the proxy's limits.
func newFixtureWith(t *testing.T, lim Limits) *fixture {
	requireTools(t, "nsenter", "curl", "git", "python3", "bash")
	ns := newTestNamespace(t)
	f := &fixture{ns: ns, home: t.TempDir()}

	// A bare repository served over dumb HTTP.
	root := t.TempDir()
	work := filepath.Join(root, "work")
	bare := filepath.Join(root, "repo.git")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+f.home)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", work)
	require.NoError(t, os.WriteFile(filepath.Join(work, "README"), []byte("hi\n"), 0o644))
	git("-C", work, "add", "README")
	git("-C", work, "commit", "-q", "-m", "first")
	f.commit = git("-C", work, "rev-parse", "HEAD")
	git("clone", "-q", "--bare", work, bare)
	git("-C", bare, "update-server-info")

	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from host %s", r.Method) })
	mux.Handle("/", http.FileServer(http.Dir(root)))
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	_, f.web = hostPortOf(t, web.URL)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello over tls")
	}))
	t.Cleanup(tlsSrv.Close)
	_, f.tlsPort = hostPortOf(t, tlsSrv.URL)
	f.caFile = filepath.Join(f.home, "ca.pem")
	require.NoError(t, os.WriteFile(f.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644))
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	f.raw = raw

	res := &mapResolver{m: map[string][]string{
		"web.test":      {"127.0.0.1"},
		"example.com":   {"127.0.0.1"}, // the httptest certificate's name; never resolved for real
		"denied.test":   {"127.0.0.1"},
		"internal.test": {"10.0.0.5"},
	}}
	pol, err := NewPolicy(
		[]string{"web.test", "example.com", "denied.test", "internal.test", "127.0.0.1"},
		[]string{"denied.test"})
	require.NoError(t, err)
	pol.Resolver = res
	var d net.Dialer
	f.proxy = New(Options{
		Policy: pol,
		Limits: lim,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			f.mu.Lock()
			f.dialled = append(f.dialled, address)
			f.mu.Unlock()
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !ap.Addr().IsLoopback() {
				return nil, fmt.Errorf("test dialler refuses non-loopback %s", address)
			}
			return d.DialContext(ctx, network, address)
		},
		OnDecision: func(_ Attribution, dec Decision) {
			f.mu.Lock()
			f.decisions = append(f.decisions, dec)
			f.mu.Unlock()
		},
		Observe: func(ev Event) {
			f.mu.Lock()
			f.events = append(f.events, ev)
			f.mu.Unlock()
		},
	})
	done := make(chan error, 1)
	go func() { done <- f.proxy.Serve(ns.Listener()) }()
	t.Cleanup(func() {
		f.proxy.Close()
		assert.NoError(t, <-done)
	})
	return f
}

func (f *fixture) snapshot() ([]Event, []Decision, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.events...), append([]Decision(nil), f.decisions...), append([]string(nil), f.dialled...)
}

// assertRawUntouched checks that nothing reached the host's raw listener:
// the first connection it accepts is a sentinel dialled now.
func (f *fixture) assertRawUntouched(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp", f.raw.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	got, err := f.raw.Accept()
	require.NoError(t, err)
	defer got.Close()
	assert.Equal(t, c.LocalAddr().String(), got.RemoteAddr().String(), "the host listener accepted another connection first")
}

func TestNamespaceRealClients(t *testing.T) {
	f := newFixture(t)
	web := "http://web.test:" + strconv.Itoa(f.web)
	tlsURL := "https://example.com:" + strconv.Itoa(f.tlsPort) + "/"
	run := func(t *testing.T, argv ...string) (string, string, error) {
		t.Helper()
		f.proxy.Begin(Attribution{Run: "run-1", Command: t.Name()})
		return inSandbox(t, f.ns, f.home, argv...)
	}

	t.Run("curl http", func(t *testing.T) {
		out, stderr, err := run(t, "curl", "-sS", "-f", web+"/hello")
		require.NoError(t, err, stderr)
		assert.Equal(t, "hello from host GET", out)
	})
	t.Run("curl https via CONNECT", func(t *testing.T) {
		out, stderr, err := run(t, "curl", "-sS", "-f", "--cacert", f.caFile, tlsURL)
		require.NoError(t, err, stderr)
		assert.Equal(t, "hello over tls", out)
	})
	t.Run("curl socks5", func(t *testing.T) {
		out, stderr, err := run(t, "curl", "-sS", "-f", "--noproxy", "", "-x", "socks5h://"+strings.TrimPrefix(f.ns.ProxyURL(), "http://"), web+"/hello")
		require.NoError(t, err, stderr)
		assert.Equal(t, "hello from host GET", out)
	})
	t.Run("git ls-remote over http", func(t *testing.T) {
		out, stderr, err := run(t, "git", "ls-remote", web+"/repo.git")
		require.NoError(t, err, stderr)
		assert.Contains(t, out, f.commit+"\trefs/heads/main")
	})
	t.Run("python urllib http and https", func(t *testing.T) {
		const script = `import ssl, sys, urllib.request
print(urllib.request.urlopen(sys.argv[1]).read().decode())
ctx = ssl.create_default_context(cafile=sys.argv[3])
print(urllib.request.urlopen(sys.argv[2], context=ctx).read().decode())`
		out, stderr, err := run(t, "python3", "-c", script, web+"/hello", tlsURL, f.caFile)
		require.NoError(t, err, stderr)
		assert.Equal(t, "hello from host GET\nhello over tls\n", out)
	})
	t.Run("denied host names the rule", func(t *testing.T) {
		out, stderr, err := run(t, "curl", "-sS", "http://denied.test:"+strconv.Itoa(f.web)+"/hello")
		require.NoError(t, err, stderr)
		assert.Equal(t, "tether egress: host denied.test refused by deny rule \"denied.test\"\n", out)
		_, stderr, err = run(t, "curl", "-sS", "https://denied.test:"+strconv.Itoa(f.tlsPort)+"/")
		require.Error(t, err)
		assert.Contains(t, stderr, "403", "CONNECT is refused before tunnelling")
	})
	t.Run("private address refused before dialling", func(t *testing.T) {
		out, stderr, err := run(t, "curl", "-sS", "http://internal.test/")
		require.NoError(t, err, stderr)
		assert.Equal(t, "tether egress: host internal.test resolves to private address 10.0.0.5\n", out)
		out, _, err = run(t, "python3", "-c", `import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://internal.test/")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())`)
		require.NoError(t, err)
		assert.Equal(t, "403 tether egress: host internal.test resolves to private address 10.0.0.5\n", out)
	})
	t.Run("raw TCP without the proxy goes nowhere", func(t *testing.T) {
		port := strconv.Itoa(f.raw.Addr().(*net.TCPAddr).Port)
		_, stderr, err := run(t, "bash", "-c", "echo > /dev/tcp/127.0.0.1/"+port)
		require.Error(t, err)
		assert.Contains(t, stderr, "Connection refused")
		out, _, err := run(t, "python3", "-c", `import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    print("connected")
except OSError as e:
    print(type(e).__name__)`, port)
		require.NoError(t, err)
		assert.Equal(t, "ConnectionRefusedError\n", out)
		out, stderr, err = run(t, "curl", "-sS", "--noproxy", "*", "http://127.0.0.1:"+port+"/")
		require.Error(t, err, out)
		assert.Contains(t, stderr, "Failed to connect")
		f.assertRawUntouched(t)
	})

	events, decisions, dialled := f.snapshot()
	for _, a := range dialled {
		assert.True(t, strings.HasPrefix(a, "127.0.0.1:"), "dialled only loopback, got %s", a)
	}
	for _, ev := range events {
		if ev.Host == "internal.test" || ev.Host == "denied.test" {
			assert.False(t, ev.Allowed)
			assert.Empty(t, ev.Dialled)
		}
	}
	assert.NotEmpty(t, decisions)
	var allowed int
	for _, ev := range events {
		if ev.Allowed {
			allowed++
			assert.Equal(t, "run-1", ev.Run)
			assert.NotEmpty(t, ev.Command)
		}
	}
	assert.Len(t, dialled, allowed, "one dial per allowed attempt, none for refusals")
}

// TestNamespaceMandate: hosts observed through the proxy compile into the
// hosts family with evidence counts; an enforced mandate (approved in a
// real store, read back with Export) then refuses a host outside it, and
// the refusal reaches OnDecision as a hosts-family drift failure.
func TestNamespaceMandate(t *testing.T) {
	f := newFixture(t)
	web := "http://web.test:" + strconv.Itoa(f.web) + "/hello"
	tlsURL := "https://example.com:" + strconv.Itoa(f.tlsPort) + "/"
	for i := range 3 {
		f.proxy.Begin(Attribution{Run: "obs-1", Command: "c" + strconv.Itoa(i)})
		_, stderr, err := inSandbox(t, f.ns, f.home, "curl", "-sS", "-f", web)
		require.NoError(t, err, stderr)
	}
	_, stderr, err := inSandbox(t, f.ns, f.home, "curl", "-sS", "-f", "--cacert", f.caFile, tlsURL)
	require.NoError(t, err, stderr)
	_, _, err = inSandbox(t, f.ns, f.home, "curl", "-sS", "-f", "http://internal.test/")
	require.Error(t, err)

	events, _, _ := f.snapshot()
	var obs []mandate.Observation
	for _, ev := range events {
		if fs, ok := HostFacts(ev); ok {
			obs = append(obs, mandate.Observation{Run: ev.Run, Facts: fs})
		}
	}
	text := string(mandate.Compile("fetcher", obs).Marshal())
	assert.Contains(t, text, "hosts:\n  - example.com  # seen 1x\n  - web.test  # seen 3x\n")
	assert.NotContains(t, text, "internal.test", "refused attempts are not evidence")

	// Approve a mandate allowing web.test in a real store and enforce it.
	st, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	run := mandate.Run{Job: "fetcher", ID: "r1", Mode: mandate.RunInteractive}
	require.NoError(t, st.Observe(ctx, run, mandate.Call{Tool: mandate.ToolTerminal, Command: "curl -sS " + web}))
	_, err = st.Compile(ctx, "fetcher")
	require.NoError(t, err)
	_, err = st.Approve(ctx, "fetcher", 0, "test")
	require.NoError(t, err)
	e, err := st.Export(ctx, "fetcher")
	require.NoError(t, err)
	hosts := MandateHosts{Job: "fetcher", Version: e.Version}
	for _, r := range e.Families[mandate.FamilyHosts] {
		hosts.Rules = append(hosts.Rules, r.Value)
	}
	require.Equal(t, []string{"web.test"}, hosts.Rules)

	pol := f.proxy.policy
	pol.Mandate = &hosts
	f.proxy.SetPolicy(pol)
	_, _, dialledBefore := f.snapshot()
	out, stderr, err := inSandbox(t, f.ns, f.home, "curl", "-sS", "-f", web)
	require.NoError(t, err, stderr)
	assert.Equal(t, "hello from host GET", out)
	_, stderr, err = inSandbox(t, f.ns, f.home, "curl", "-sS", "--cacert", f.caFile, tlsURL)
	require.Error(t, err)
	assert.Contains(t, stderr, "403")
	out, _, err = inSandbox(t, f.ns, f.home, "curl", "-sS", "http://example.com:"+strconv.Itoa(f.web)+"/hello")
	require.NoError(t, err)
	assert.Equal(t, "tether egress: host example.com not in the hosts of mandate fetcher v1\n", out)

	_, decisions, dialled := f.snapshot()
	assert.Len(t, dialled, len(dialledBefore)+1, "only the mandate's host was dialled")
	var drift []mandate.Failure
	for _, d := range decisions {
		if fl, ok := DriftFailure(d); ok {
			drift = append(drift, fl)
		}
	}
	assert.Equal(t, []mandate.Failure{{Family: mandate.FamilyHosts, Value: "example.com"}, {Family: mandate.FamilyHosts, Value: "example.com"}}, drift)
}

// unixSetns moves the calling (locked) thread into ns.
func unixSetns(ns *Namespace) error {
	return unix.Setns(int(ns.fd.Fd()), unix.CLONE_NEWNET)
}
