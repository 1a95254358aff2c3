package egress

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox"
)

// init makes the test binary act as the container init when libcontainer
// re-executes it, and pins the main goroutine to the main thread (see
// package sandbox).
func init() {
	runtime.LockOSThread()
	if sandbox.IsInit() {
		sandbox.Init()
	}
}

var sandboxSeq atomic.Int64

// sandboxRunner returns a Runner with a unique state root and cgroup
// prefix, removed (through sandbox.GC) after the test.
func sandboxRunner(t *testing.T) *sandbox.Runner {
	t.Helper()
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		skipOrFail(t, "no cgroup filesystem: %v", err)
	}
	state, err := os.MkdirTemp("", "egr")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(state, 0o711))
	r := &sandbox.Runner{
		StateRoot:    state,
		CgroupPrefix: fmt.Sprintf("tether-test-%d-egress-%d", os.Getpid(), sandboxSeq.Add(1)),
		Grace:        300 * time.Millisecond,
	}
	t.Cleanup(func() {
		rep, err := sandbox.GC(sandbox.GCOptions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix})
		assert.NoError(t, err)
		if rep != nil {
			assert.Empty(t, rep.Errors)
		}
		os.RemoveAll(state)
		for _, dir := range cgroupDirs(r.CgroupPrefix) {
			os.Remove(dir)
			_, err := os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "cgroup %s left behind", dir)
		}
	})
	return r
}

// cgroupDirs lists r's prefix directory in every cgroup hierarchy.
func cgroupDirs(prefix string) []string {
	var out []string
	ms, _ := filepath.Glob("/sys/fs/cgroup/*/" + prefix)
	out = append(out, ms...)
	if _, err := os.Stat("/sys/fs/cgroup/" + prefix); err == nil {
		out = append(out, "/sys/fs/cgroup/"+prefix)
	}
	return out
}

// sandboxConfig is a sandbox in network mode proxy joined to f's
// namespace, with the proxy's environment.
func (f *fixture) sandboxConfig() sandbox.Config {
	return sandbox.Config{
		Network:   sandbox.NetworkProxy,
		NetNSPath: f.ns.Path(),
		Env:       append(append([]string(nil), sandbox.DefaultEnv...), f.ns.Env()...),
		Seccomp:   sandbox.SeccompOptional,
		Limits:    sandbox.Limits{Timeout: time.Minute},
	}
}

// TestSandboxProxyMode runs real clients in a sandbox (sandbox.Run,
// network mode proxy) joined to the proxy's namespace.
func TestSandboxProxyMode(t *testing.T) {
	f := newFixture(t)
	r := sandboxRunner(t)
	web := "http://web.test:" + strconv.Itoa(f.web)
	tlsURL := "https://example.com:" + strconv.Itoa(f.tlsPort) + "/"
	rawPort := strconv.Itoa(f.raw.Addr().(*net.TCPAddr).Port)
	cfg := f.sandboxConfig()
	cfg.Binds = []sandbox.Bind{{Source: f.home, Destination: "/egress", ReadOnly: true}}
	run := func(t *testing.T, shell string) (string, string, int) {
		t.Helper()
		f.proxy.Begin(Attribution{Run: "sbx", Command: t.Name()})
		var out, errb bytes.Buffer
		res, err := r.Run(t.Context(), cfg, sandbox.Command{Shell: shell, Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		return out.String(), errb.String(), res.ExitCode
	}
	// The command runs in the sandbox, in the proxy's namespace (joined
	// before the sandbox's own user namespace is made).
	var st unix.Stat_t
	require.NoError(t, unix.Stat(f.ns.Path(), &st))
	out, stderr, code := run(t, "hostname; readlink /proc/self/ns/net")
	require.Zero(t, code, stderr)
	assert.Equal(t, fmt.Sprintf("%s\nnet:[%d]\n", sandbox.DefaultHostname, st.Ino), out)

	tests := []struct {
		name, shell, want, wantErr string
		code                       int
	}{
		{name: "curl http", shell: "curl -sS -f " + web + "/hello", want: "hello from host GET"},
		{name: "curl https via CONNECT", shell: "curl -sS -f --cacert /egress/ca.pem " + tlsURL, want: "hello over tls"},
		{name: "git ls-remote", shell: "git ls-remote " + web + "/repo.git", want: f.commit + "\trefs/heads/main\n"},
		{name: "python urllib", shell: `python3 -c 'import ssl, urllib.request; print(urllib.request.urlopen("` + web + `/hello").read().decode()); print(urllib.request.urlopen("` + tlsURL + `", context=ssl.create_default_context(cafile="/egress/ca.pem")).read().decode())'`,
			want: "hello from host GET\nhello over tls\n"},
		{name: "denied names the rule", shell: "curl -sS http://denied.test:" + strconv.Itoa(f.web) + "/",
			want: "tether egress: host denied.test refused by deny rule \"denied.test\"\n"},
		{name: "private address refused", shell: "curl -sS http://internal.test/",
			want: "tether egress: host internal.test resolves to private address 10.0.0.5\n"},
		{name: "raw TCP fails", shell: "bash -c 'echo > /dev/tcp/127.0.0.1/" + rawPort + "'", wantErr: "Connection refused", code: 1},
		{name: "raw TCP from python fails", shell: `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ` + rawPort + `), timeout=5)'`,
			wantErr: "ConnectionRefusedError", code: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := run(t, tt.shell)
			assert.Equal(t, tt.code, code, stderr)
			if tt.want != "" {
				assert.Contains(t, out, tt.want)
			}
			if tt.wantErr != "" {
				assert.Contains(t, stderr, tt.wantErr)
			}
		})
	}
	f.assertRawUntouched(t)

	events, _, dialled := f.snapshot()
	for _, a := range dialled {
		assert.True(t, strings.HasPrefix(a, "127.0.0.1:"), "dialled only loopback, got %s", a)
	}
	var allowed int
	for _, ev := range events {
		if ev.Allowed {
			allowed++
			assert.Equal(t, "sbx", ev.Run)
		}
	}
	assert.Len(t, dialled, allowed, "one dial per allowed attempt, none for refusals")
	assert.GreaterOrEqual(t, allowed, 5)
}

// TestSessionProxyMode: a session sandbox in proxy mode keeps using the
// proxy across calls, each attributed to its own command through Begin.
func TestSessionProxyMode(t *testing.T) {
	f := newFixture(t)
	r := sandboxRunner(t)
	sessions := &sandbox.Sessions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix, Grace: r.Grace}
	defer sessions.Close()
	spec := sandbox.SessionSpec{Config: f.sandboxConfig()}
	web := "http://web.test:" + strconv.Itoa(f.web) + "/hello"
	for i := range 2 {
		f.proxy.Begin(Attribution{Run: "session", Command: strconv.Itoa(i)})
		var out, errb bytes.Buffer
		res, err := sessions.Run(t.Context(), "default", "egress-test", spec, sandbox.Command{Shell: "curl -sS -f " + web, Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		require.Zero(t, res.ExitCode, errb.String())
		assert.Equal(t, "hello from host GET", out.String())
	}
	require.NoError(t, sessions.CloseSession("default", "egress-test"))
	events, _, _ := f.snapshot()
	var cmds []string
	for _, ev := range events {
		if ev.Allowed {
			cmds = append(cmds, ev.Command)
		}
	}
	assert.Equal(t, []string{"0", "1"}, cmds)
}

// TestSessionBackgroundProcessUnderProxyLimits: a background process that
// one command of a session leaves running keeps fetching through the
// proxy while the session runs more commands. The byte limit is the sandbox's: once
// spent, the background process is refused under whichever command is
// current, instead of getting a fresh allowance with each.
func TestSessionBackgroundProcessUnderProxyLimits(t *testing.T) {
	const maxBytes = 4096
	f := newFixtureWith(t, Limits{MaxBytes: maxBytes})
	r := sandboxRunner(t)
	sessions := &sandbox.Sessions{StateRoot: r.StateRoot, CgroupPrefix: r.CgroupPrefix, Grace: r.Grace}
	defer sessions.Close()
	spec := sandbox.SessionSpec{Config: f.sandboxConfig()}
	web := "http://web.test:" + strconv.Itoa(f.web) + "/hello"
	run := func(i int, shell string) string {
		t.Helper()
		f.proxy.Begin(Attribution{Run: "session", Command: strconv.Itoa(i)})
		var out, errb bytes.Buffer
		res, err := sessions.Run(t.Context(), "default", "egress-bg", spec, sandbox.Command{Shell: shell, Stdout: &out, Stderr: &errb})
		require.NoError(t, err)
		require.Zero(t, res.ExitCode, errb.String())
		return out.String()
	}
	run(0, "(while :; do if curl -sS -f -o /dev/null "+web+" 2>/dev/null; then echo ok; else echo refused; fi >> /tmp/bg.log; sleep 0.02; done) >/dev/null 2>&1 &")
	// The session's next commands, until the background process has been
	// refused under several of them (bounded: 300 commands).
	refusedUnder := map[string]bool{}
	for i := 1; i <= 300 && len(refusedUnder) < 3; i++ {
		run(i, "sleep 0.1")
		events, _, _ := f.snapshot()
		for _, ev := range events {
			if !ev.Allowed && ev.Refusal == RefusedLimit {
				refusedUnder[ev.Command] = true
			}
		}
	}
	log := run(1000, "cat /tmp/bg.log")
	require.NoError(t, sessions.CloseSession("default", "egress-bg"))

	ok, refused := strings.Count(log, "ok\n"), strings.Count(log, "refused\n")
	events, _, _ := f.snapshot()
	var total int64
	laterRefusals := 0
	for _, ev := range events {
		total += ev.Up + ev.Down
		if !ev.Allowed && ev.Refusal == RefusedLimit && ev.Command != "0" {
			laterRefusals++
		}
	}
	t.Logf("background fetches: %d ok, %d refused; proxy bytes %d of %d; %d refusals under %d later commands", ok, refused, total, maxBytes, laterRefusals, len(refusedUnder))
	require.NotZero(t, ok, "the background process ran")
	assert.NotZero(t, refused, "the sandbox's budget ran out")
	assert.GreaterOrEqual(t, len(refusedUnder), 3, "it stays spent under the commands that follow")
	assert.LessOrEqual(t, total, int64(2*maxBytes), "20 commands did not bring 20 fresh allowances")
}
