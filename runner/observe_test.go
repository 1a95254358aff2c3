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
