package mandate

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserveRuntime: what the kernel saw a call do becomes paths and hosts
// evidence of the job (files in the workspace relative, others absolute,
// the address without its port), adds no tool use or write, shows in the
// pending diff's examples with the kernel's words, and counts what cannot
// be a rule as lost.
func TestObserveRuntime(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	run := Run{Job: "j", ID: "r1", Mode: RunCron}
	ws := "/home/u/proj"
	c := term("python3 task.py")
	c.Workspace = ws
	require.NoError(t, s.Observe(ctx, run, c))
	on, err := s.Observing(ctx, "j")
	require.NoError(t, err)
	assert.True(t, on)
	require.NoError(t, s.ObserveRuntime(ctx, run, Runtime{
		Command: "python3 task.py", Workspace: ws,
		Read:      []string{ws + "/task.py", ws + "/conf/secret.ini", "/data/shared/in.csv", ws + "/bad-\xff.txt", ws},
		Written:   []string{ws + "/out/a", ws + "/out/b", ws + "/out/c", ws + "/new\nline"},
		Executed:  []string{ws + "/tool.sh"},
		Connected: []string{"10.0.0.7:5432", "[::ffff:192.0.2.1]:80", "not an address"},
		Programs:  []string{"python3", "tool.sh"},
		Lost:      2,
	}))
	v, err := s.Compile(ctx, "j")
	require.NoError(t, err)
	m, err := Load([]byte(v.Text))
	require.NoError(t, err)
	var paths, hosts []string
	for _, r := range m.Paths {
		paths = append(paths, r.Value)
	}
	for _, r := range m.Hosts {
		hosts = append(hosts, r.Value)
	}
	assert.Equal(t, []string{"out/**", "read:/data/shared/in.csv", "read:conf/secret.ini", "read:task.py", "read:tool.sh"}, paths,
		"what was only read or executed is read-only; what was written, read-write")
	assert.Equal(t, []string{"10.0.0.7", "192.0.2.1"}, hosts)
	require.Len(t, m.Tools, 1)
	assert.Equal(t, 1, m.Tools[0].Seen, "the kernel's record is not a second tool use")
	assert.Zero(t, m.MaxWritesPerRun)
	// The non-UTF-8 name, the control character and the bad address are
	// lost, with the two the sandbox lost.
	assert.Equal(t, 5, v.LostObservations)

	d, err := s.Diff(ctx, "j")
	require.NoError(t, err)
	var examples []string
	for _, f := range d.Families {
		if f.Family != FamilyPaths {
			continue
		}
		for _, rc := range f.Added {
			examples = append(examples, rc.Examples...)
		}
	}
	require.NotEmpty(t, examples)
	assert.True(t, strings.HasPrefix(examples[0], "python3 task.py [kernel: ran python3, tool.sh; read "), examples[0])
	assert.Contains(t, examples[0], "connected 10.0.0.7:5432")

	// Once the job enforces, nothing more is recorded.
	_, err = s.Approve(ctx, "j", v.Number, "test")
	require.NoError(t, err)
	on, err = s.Observing(ctx, "j")
	require.NoError(t, err)
	assert.False(t, on)
	err = s.ObserveRuntime(ctx, run, Runtime{Command: "x", Workspace: ws, Read: []string{ws + "/elsewhere"}})
	assert.True(t, errors.Is(err, ErrNotObserving), "%v", err)
}

// TestRuntimeTextBounded: the description of a huge record stays short and
// valid UTF-8.
func TestRuntimeTextBounded(t *testing.T) {
	rt := Runtime{Command: strings.Repeat("é", 3000), Workspace: "/w"}
	for i := range 5000 {
		rt.Read = append(rt.Read, "/w/"+strings.Repeat("x", i%50)+"\xff")
	}
	text := runtimeText(rt)
	assert.LessOrEqual(t, len(text), maxRuntimeText+8)
	assert.True(t, strings.HasSuffix(text, "…]"))
	assert.NotContains(t, text, "\xff")
}

// FuzzRuntimeEvidence: whatever names and addresses a sandboxed process
// hands the kernel, the mandate compiled from their record loads back from
// its text and allows exactly what was recorded as evidence; what cannot be
// a rule is counted lost, never written.
func FuzzRuntimeEvidence(f *testing.F) {
	f.Add("conf/secret.ini", "127.0.0.1:8080")
	f.Add("../../etc/shadow", "[::1]:22")
	f.Add("bad-\xff\xfe.txt", "not:an:address")
	f.Add("a\nb: c # d", "[::ffff:10.0.0.1]:0")
	f.Add("$HOME/~x/\"q\"", "1.2.3.4:99999")
	f.Fuzz(func(t *testing.T, name, addr string) {
		rt := Runtime{Workspace: "/w", Read: []string{"/w/" + name, "/" + name}, Written: []string{name}, Connected: []string{addr}}
		facts, lost := runtimeFacts(rt)
		require.Equal(t, 4, len(rt.Read)+len(rt.Written)+len(rt.Connected))
		require.LessOrEqual(t, len(facts.Paths)+len(facts.Hosts)+lost, 4+1, "each entry is evidence, the workspace itself, or lost")
		text := Compile("fz", []Observation{{Run: "r", Facts: facts}}).Marshal()
		m, err := Load(text)
		require.NoError(t, err, "compiled text must load:\n%s", text)
		for _, fl := range NewMatcher(m).Evaluate(facts, 0) {
			if fl.Family == FamilyPaths || fl.Family == FamilyHosts {
				t.Fatalf("recorded evidence %+v is not allowed by its own mandate:\n%s", fl, text)
			}
		}
		assert.LessOrEqual(t, len(runtimeText(rt)), maxRuntimeText+8)
	})
}
