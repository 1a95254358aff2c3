package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelPaths(t *testing.T) {
	k := KernelPaths([]string{
		"src/**", "Makefile", ".", "../shared/**", "/etc/hosts", "**", "$HOME/.cache/**", "~/.npmrc", "a/../b",
		"read:conf/**", "read:README.md", "read:$HOME/x", "rw:read:odd",
	}, "/work/proj")
	assert.Equal(t, []string{"/work/proj/src", "/work/shared", "/work/proj"}, k.Trees)
	assert.Equal(t, []string{"/work/proj/Makefile", "/work/proj", "/etc/hosts", "/work/proj/b", "/work/proj/read:odd"}, k.Files)
	assert.Equal(t, []string{"/work/proj/conf"}, k.ReadTrees)
	assert.Equal(t, []string{"/work/proj/README.md"}, k.ReadFiles)
	assert.Equal(t, []string{"$HOME/.cache/**", "~/.npmrc", "read:$HOME/x"}, k.Skipped, "non-literal rules are left to the text gate")

	// Without a workspace, relative rules name nothing the kernel can hold.
	k = KernelPaths([]string{"src/**", "/opt/x/**", "/**"}, "")
	assert.Equal(t, []string{"/opt/x", "/"}, k.Trees)
	assert.Empty(t, k.Files)
	assert.Equal(t, []string{"src/**"}, k.Skipped)
}

// A paths value's mode survives canonicalisation, and a path that itself
// begins like a mode is spelled so that it reads back as itself.
func TestPathModes(t *testing.T) {
	for _, c := range []struct {
		in, canon, path string
		ro              bool
	}{
		{"src/**", "src/**", "src/**", false},
		{"read:src/**", "read:src/**", "src/**", true},
		{"rw:src/**", "src/**", "src/**", false},
		{"rw:read:x", "rw:read:x", "read:x", false},
		{"read:read:x", "read:read:x", "read:x", true},
	} {
		v, err := canonRule(FamilyPaths, c.in)
		assert.NoError(t, err, c.in)
		assert.Equal(t, c.canon, v, c.in)
		p, ro := PathMode(v)
		assert.Equal(t, c.path, p, c.in)
		assert.Equal(t, c.ro, ro, c.in)
	}
	for _, bad := range []string{"read:", "rw:", ""} {
		_, err := canonRule(FamilyPaths, bad)
		assert.Error(t, err, bad)
	}
}

// A read-only rule allows reads only; a read-write rule (with or without
// a mode, as every rule was before modes) allows both.
func TestMatcherPathModes(t *testing.T) {
	x := NewMatcher(&Mandate{Tools: []Rule{{Value: "read_file"}}, Paths: []Rule{
		{Value: "read:conf/**"}, {Value: "read:README.md"}, {Value: "out/**"}, {Value: "notes.txt"},
	}})
	for _, c := range []struct {
		fact string
		ok   bool
	}{
		{"read:conf/a.ini", true},
		{"conf/a.ini", false}, // a write under a read-only rule
		{"read:README.md", true},
		{"README.md", false},
		{"read:out/x", true},
		{"out/x", true},
		{"read:notes.txt", true},
		{"notes.txt", true},
		{"read:secret", false},
		{"read:conf/../secret", false},
	} {
		assert.Equal(t, c.ok, x.pathAllowed(c.fact), c.fact)
	}
}

// A refusal that lacked only read rights widens to a read-only rule;
// one that lacked any write right to a read-write one.
func TestRefusedValue(t *testing.T) {
	assert.Equal(t, "read:conf/a.ini", refusedValue("conf/a.ini", "fs.read_file"))
	assert.Equal(t, "read:bin/tool", refusedValue("bin/tool", "fs.execute,fs.read_file"))
	assert.Equal(t, "conf/a.ini", refusedValue("conf/a.ini", "fs.write_file"))
	assert.Equal(t, "conf/a.ini", refusedValue("conf/a.ini", "fs.read_file,fs.truncate"))
	assert.Equal(t, "conf", refusedValue("conf", "fs.make_reg"))
	assert.Equal(t, "rw:read:x", refusedValue("read:x", "fs.write_file"))
}

// A refusal of the mount plan carries its operation into the drift record
// (its reason says unlink, chmod: not write) and into the Leash Line's
// notch; two operations on one path are two records, and a Landlock
// refusal (no op) says the access its blockers give.
func TestRecordPathRefusedOp(t *testing.T) {
	s, ctx := enforced(t)
	run := Run{Job: "j", ID: "r2", Mode: RunCron}
	// Paths relative to the workspace, as the runner gives them.
	c := Call{Tool: ToolTerminal, Command: "make test", Workspace: "/ws"}
	rm, err := s.RecordPathRefused(ctx, run, c, "secret/token", "unlink", "mount.read_only")
	require.NoError(t, err)
	chmod, err := s.RecordPathRefused(ctx, run, c, "secret/token", "chmod", "mount.read_only")
	require.NoError(t, err)
	read, err := s.RecordPathRefused(ctx, run, c, "secret/key", "", "fs.read_file")
	require.NoError(t, err)
	assert.NotEqual(t, rm, chmod, "a chmod and an rm of one path are two records")

	drift, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, d := range drift {
		reasons[d.ID] = d.Reason
	}
	assert.Contains(t, reasons[rm], "unlink secret/token (mount: mount.read_only)")
	assert.Contains(t, reasons[chmod], "chmod secret/token (mount: mount.read_only)")
	assert.Contains(t, reasons[read], "read secret/key (Landlock: fs.read_file)")

	ll, err := s.Leash(ctx, "j")
	require.NoError(t, err)
	calls := map[string]string{}
	for _, tr := range ll.Tracks {
		for _, m := range tr.Marks {
			if m.Drift != "" {
				calls[m.Drift] = m.Call
			}
		}
	}
	assert.Contains(t, calls[rm], "# refused by the kernel: unlink secret/token")
	assert.Contains(t, calls[chmod], "# refused by the kernel: chmod secret/token")
}
