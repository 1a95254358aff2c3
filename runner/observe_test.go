package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/mandate"
)

// observedJob writes a small project: a Makefile that builds and runs a
// program, a shell test run reading its data, a python task that opens a
// file by a name no command text shows, and a python script that connects
// to a listener of its own.
func observedJob(t *testing.T, ws string) []string {
	t.Helper()
	files := map[string]string{
		"proj/Makefile":   "test: build\n\t./hello | grep -q hello && echo tests passed\nbuild:\n\tprintf '#!/bin/sh\\necho hello\\n' > hello && chmod +x hello\n",
		"tests/run.sh":    "read line < tests/data.txt && [ \"$line\" = ok ] && echo pass\n",
		"tests/data.txt":  "ok\n",
		"task.py":         "name = 'conf/' + 'se' + 'cret.ini'\nprint(open(name).read().strip())\n",
		"conf/secret.ini": "token=1\n",
		"net.py": "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n" +
			"c = socket.create_connection(s.getsockname()); c.close(); print('connected')\n",
	}
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	return []string{
		// The repository is made on the host (observedRepo): no sandbox can
		// make one (docs/workspace.md, "Nested repositories").
		"(cd repo && echo x > f && git add f && git -c user.email=t@example.com -c user.name=t commit -qm first && git log --oneline | wc -l)",
		"make -s -C proj test",
		"sh tests/run.sh",
		"python3 task.py",
		"python3 net.py",
	}
}

// TestObserveJobEvidence: the observe-mode runs of a real job (one-shot
// and in a session) make a compiled mandate whose paths family holds what
// the commands touched, by names their text does not show, and whose
// hosts family holds the address a script connected to; the read-only
// system tree is not in it, and the kernel's evidence adds no tool uses.
func TestObserveJobEvidence(t *testing.T) {
	r, store, _, ws := gateRunner(t)
	commands := observedJob(t, ws)
	const job = "observed"
	for _, session := range []string{"", "s1"} {
		require.NoError(t, os.RemoveAll(filepath.Join(ws, "repo")))
		gitOut, err := exec.Command("git", "init", "-q", filepath.Join(ws, "repo")).CombinedOutput()
		require.NoError(t, err, "%s", gitOut)
		var calls []RawCall
		for i, c := range commands {
			calls = append(calls, terminalCall(string(rune('a'+i)), c))
		}
		out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Job: job, Session: session, Calls: calls}, nil)
		for i, res := range out.Results {
			require.Equal(t, ClassSucceeded, res.Class, "session %q %s: %s %v", session, commands[i], res.Message, res.Output)
		}
		assert.Contains(t, out.Results[3].Output["stdout"], "token=1")
	}
	v, err := store.Compile(t.Context(), job)
	require.NoError(t, err)
	m, err := mandate.Load([]byte(v.Text))
	require.NoError(t, err)
	rules := func(rs []mandate.Rule) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Value)
		}
		return out
	}
	paths, hosts := rules(m.Paths), rules(m.Hosts)
	// What the commands only read is read-only; what they wrote (make's
	// build output) is read-write.
	for _, want := range []string{"read:conf/secret.ini", "read:task.py", "read:net.py", "read:tests/run.sh", "read:tests/data.txt", "read:proj/Makefile", "proj/hello"} {
		assert.Contains(t, paths, want, v.Text)
	}
	assert.True(t, slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, "repo/") || strings.HasPrefix(p, "read:repo/") }), v.Text)
	for _, p := range paths {
		p, _ := mandate.PathMode(p)
		assert.False(t, strings.HasPrefix(p, "/usr") || strings.HasPrefix(p, "/lib") || strings.HasPrefix(p, "/etc") ||
			strings.HasPrefix(p, "/proc") || strings.HasPrefix(p, "/tmp"), "a system or private path is evidence: %s\n%s", p, v.Text)
	}
	assert.Contains(t, hosts, "127.0.0.1", v.Text)
	assert.Contains(t, v.Text, `"read:conf/secret.ini"  # seen 2x`)
	require.Len(t, m.Tools, 1)
	assert.Equal(t, 2*len(commands), m.Tools[0].Seen, "the kernel's evidence is not a tool use of its own")

	// The compile is deterministic: the same evidence, the same text.
	again, err := store.Compile(t.Context(), job)
	require.NoError(t, err)
	assert.Equal(t, v.Text, again.Text)

	// The Leash Line shows the evidence like any other, and the exported
	// mandate holds it once approved.
	ll, err := store.Leash(t.Context(), job)
	require.NoError(t, err)
	assert.True(t, hasMark(ll, mandate.FamilyPaths, mandate.MarkPending, "read:conf/secret.ini"), "%+v", ll)
	for _, tr := range ll.Tracks {
		for _, m := range tr.Marks {
			switch m.Label {
			case "read:conf/secret.ini":
				assert.Equal(t, "read", m.Access, "the Leash Line says a read-only rule's access")
			case "proj/hello":
				assert.Equal(t, "read-write", m.Access)
			}
		}
	}
	assert.True(t, hasMark(ll, mandate.FamilyHosts, mandate.MarkPending, "127.0.0.1"), "%+v", ll)
	_, err = store.Approve(t.Context(), job, again.Number, "test")
	require.NoError(t, err)
	exp, err := store.Export(t.Context(), job)
	require.NoError(t, err)
	assert.Contains(t, rules(exp.Families[mandate.FamilyPaths]), "read:conf/secret.ini")

	// Enforcing, the sandbox is no longer observed: a call adds its own
	// record and no evidence (today's checks decide it).
	observing, err := store.Observing(t.Context(), job)
	require.NoError(t, err)
	assert.False(t, observing)
	ll, err = store.Leash(t.Context(), job)
	require.NoError(t, err)
	calls := ll.Calls
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Job: job, Calls: []RawCall{terminalCall("x", "python3 task.py")}}, nil)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, "%s", out.Results[0].Message)
	ll, err = store.Leash(t.Context(), job)
	require.NoError(t, err)
	assert.Equal(t, calls+1, ll.Calls)
}

// TestObserveExecBlockNotch: in an observed job, an exec the gate refuses
// is still a red notch on the commands track, beside the evidence.
func TestObserveExecBlockNotch(t *testing.T) {
	r, store, _, ws := gateRunner(t, "reboot")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "boot.py"), []byte("import os\nopen('conf.txt', 'w').write('x')\nos.execv('./bin/reboot', ['reboot'])\n"), 0o644))
	const job = "notch"
	out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Job: job, Calls: []RawCall{terminalCall("a", "python3 boot.py")}}, nil)
	require.Equal(t, ClassBlocked, out.Results[0].Class, "%s", out.Results[0].Message)
	assert.Equal(t, GateExec, out.Results[0].Gate)
	assert.NoFileExists(t, filepath.Join(ws, "ran-reboot"))
	drift, err := store.Drift(t.Context(), job)
	require.NoError(t, err)
	require.Len(t, drift, 1)
	ll, err := store.Leash(t.Context(), job)
	require.NoError(t, err)
	assert.True(t, hasMark(ll, mandate.FamilyCommands, mandate.MarkBlocked, drift[0].ID), "%+v", ll)
	v, err := store.Compile(t.Context(), job)
	require.NoError(t, err)
	assert.Contains(t, v.Text, "conf.txt", "what the script wrote before the refused exec is evidence")
}

// hasMark reports whether ll's family track has a mark of kind labelled label.
func hasMark(ll mandate.LeashLine, family string, kind mandate.MarkKind, label string) bool {
	for _, t := range ll.Tracks {
		if t.Family != family {
			continue
		}
		for _, m := range t.Marks {
			if m.Kind == kind && m.Label == label {
				return true
			}
		}
	}
	return false
}

// TestObserveConnectEvidence: what a job's script tried to connect to is
// hosts evidence, whether the connect worked or not (the kernel is asked
// before it connects), with or without the egress proxy. The script
// connects to a closed loopback port (ECONNREFUSED) and to an address
// the sandbox has no route to. Behind the proxy the loopback one is left
// out (the proxy and the sandbox's own servers are there) and the other,
// which went around the proxy, is evidence: before session 14 nothing the
// sandbox connected to was recorded behind the proxy, so a direct connect
// left no trace in the mandate.
func TestObserveConnectEvidence(t *testing.T) {
	const script = `import errno, socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); port = l.getsockname()[1]; l.close()
for addr in (("127.0.0.1", port), ("192.0.2.7", 80)):
    s = socket.socket(); s.settimeout(5)
    try:
        s.connect(addr); print("connected")
    except OSError as e:
        print("failed", errno.errorcode.get(e.errno, e.errno))
    s.close()
`
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (*Runner, string)
		hosts []string // the compiled hosts family
	}{
		{"no proxy", func(t *testing.T) (*Runner, string) {
			r, _, _, ws := gateRunner(t)
			return r, ws
		}, []string{"127.0.0.1", "192.0.2.7"}},
		{"proxy", func(t *testing.T) (*Runner, string) { return proxyRunner(t) }, []string{"192.0.2.7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ws := tc.setup(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws, "conn.py"), []byte(script), 0o644))
			const job = "connector"
			out := r.Execute(t.Context(), Batch{Platform: approval.PlatformCron, Job: job,
				Calls: []RawCall{terminalCall("a", "python3 conn.py")}}, nil)
			res := out.Results[0]
			require.Equal(t, ClassSucceeded, res.Class, "%s %v", res.Message, res.Output)
			stdout, _ := res.Output["stdout"].(string)
			assert.Equal(t, 2, strings.Count(stdout, "failed"), "both connects fail: %s", stdout)
			v, err := r.Mandates.Compile(t.Context(), job)
			require.NoError(t, err)
			m, err := mandate.Load([]byte(v.Text))
			require.NoError(t, err)
			var hosts []string
			for _, h := range m.Hosts {
				hosts = append(hosts, h.Value)
			}
			assert.Equal(t, tc.hosts, hosts, v.Text)
		})
	}
}
