package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
)

// probeTools registers "probe_read" and "probe_write" tools that record
// when they start and end, and wait on gate (when set) before ending.
type probe struct {
	mu      sync.Mutex
	events  []string
	running atomic.Int32
	peak    atomic.Int32
	gate    map[string]chan struct{} // call id → released when closed
	started map[string]chan struct{}
}

func newProbe(ids ...string) *probe {
	p := &probe{gate: map[string]chan struct{}{}, started: map[string]chan struct{}{}}
	for _, id := range ids {
		p.gate[id] = make(chan struct{})
		p.started[id] = make(chan struct{})
	}
	return p
}

func (p *probe) handler(_ contextT, _ *Env, c *Call) Result {
	n := p.running.Add(1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	p.mu.Lock()
	p.events = append(p.events, "start "+c.ID)
	p.mu.Unlock()
	if ch := p.started[c.ID]; ch != nil {
		close(ch)
	}
	if ch := p.gate[c.ID]; ch != nil {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
		}
	}
	p.mu.Lock()
	p.events = append(p.events, "end "+c.ID)
	p.mu.Unlock()
	p.running.Add(-1)
	return succeeded(c.ID, map[string]any{"id": c.ID})
}

func probeRunner(t *testing.T, p *probe, workers int) *Runner {
	t.Helper()
	cfg, _ := testConfig(t, "    enabled_toolsets: [probe]\n")
	reg := NewRegistry()
	schema := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}
	require.NoError(t, reg.Register(Tool{Name: "probe_read", Toolset: "probe", Kind: KindRead, Paths: pathArg, Schema: schema, Handler: p.handler}))
	require.NoError(t, reg.Register(Tool{Name: "probe_write", Toolset: "probe", Kind: KindWrite, Paths: pathArg, Schema: schema, Handler: p.handler}))
	require.NoError(t, reg.Register(Tool{Name: "probe_plugin", Toolset: "probe", Schema: schema, Handler: p.handler}))
	return &Runner{Config: cfg, Registry: reg, Workers: workers}
}

func TestExecuteReadersRunInParallel(t *testing.T) {
	t.Parallel()
	p := newProbe("a", "b")
	r := probeRunner(t, p, 4)
	// Each reader waits until the other has started: both end quickly
	// only if they run at once (run one after the other, the first waits
	// out its 20s guard and the peak stays 1).
	go func() { <-p.started["b"]; close(p.gate["a"]) }()
	go func() { <-p.started["a"]; close(p.gate["b"]) }()
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{
		rawCall("a", "probe_read", args("path", "src")),
		rawCall("b", "probe_read", args("path", "src/x")),
	}}, nil)
	assert.Equal(t, []string{"a", "b"}, []string{out.Results[0].CallID, out.Results[1].CallID})
	assert.EqualValues(t, 2, p.peak.Load(), "the two readers overlapped")
}

func TestExecuteWriterWaitsForOverlappingReader(t *testing.T) {
	t.Parallel()
	p := newProbe()
	r := probeRunner(t, p, 4)
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{
		rawCall("r1", "probe_read", args("path", "src")),
		rawCall("w1", "probe_write", args("path", "src/a")),
		rawCall("r2", "probe_read", args("path", "other")),
		rawCall("p1", "probe_plugin", args("path", "x")),
		rawCall("r3", "probe_read", args("path", "other")),
	}}, nil)
	for i, id := range []string{"r1", "w1", "r2", "p1", "r3"} {
		assert.Equal(t, id, out.Results[i].CallID)
		assert.Equal(t, id, out.Results[i].Output["id"])
	}
	idx := func(ev string) int {
		for i, e := range p.events {
			if e == ev {
				return i
			}
		}
		t.Fatalf("no event %q in %v", ev, p.events)
		return -1
	}
	assert.Less(t, idx("end r1"), idx("start w1"), "the writer waits for the overlapping reader")
	assert.Less(t, idx("end w1"), idx("start p1"), "an unknown tool is a barrier")
	assert.Less(t, idx("end r2"), idx("start p1"))
	assert.Less(t, idx("end p1"), idx("start r3"))
}

func TestExecuteWorkerPoolIsBounded(t *testing.T) {
	t.Parallel()
	p := newProbe()
	r := probeRunner(t, p, 2)
	var calls []RawCall
	for i := 0; i < 12; i++ {
		calls = append(calls, rawCall(fmt.Sprint(i), "probe_read", args("path", fmt.Sprintf("f%d", i))))
	}
	out := r.Execute(t.Context(), Batch{Calls: calls}, nil)
	require.Len(t, out.Results, 12)
	for i, res := range out.Results {
		assert.Equal(t, fmt.Sprint(i), res.CallID)
	}
	assert.LessOrEqual(t, p.peak.Load(), int32(2))
}

func TestWorkspaceRootIsRefused(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("t.yaml", []byte("state_dir: "+t.TempDir()+"\nprofiles:\n  default:\n    terminal:\n      cwd: /\n"), "")
	require.NoError(t, err)
	r := &Runner{Config: cfg}
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "write_file", args("path", "etc/x", "content", "x"))}}, nil)
	assert.Equal(t, ClassRefused, out.Results[0].Class)
	assert.Contains(t, out.Results[0].Message, "the workspace is /")
	_, err = os.Stat("/etc/x")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `"{\"command\":\"ls\",\"timeout\":\"30\"}"`, `{"command":`, `[]`, `""`,
		`{"path":"a","offset":1e400}`, `{"path":"a","limit":"-1"}`, `{"command":"ls"} x`, `"{\"path\":\"a\"}" "x"`} {
		f.Add("terminal", s)
		f.Add("read_file", s)
	}
	vis := Builtins().Visible(nil)
	f.Fuzz(func(t *testing.T, name, args string) {
		c, bad := Validate(vis, RawCall{ID: "x", Name: name, Arguments: json.RawMessage(args)})
		if (c == nil) == (bad == nil) {
			t.Fatalf("want exactly one of call and refusal: %v %v", c, bad)
		}
		if bad != nil {
			if bad.Class != ClassRefused || bad.Ran {
				t.Fatalf("a refusal must not run: %+v", bad)
			}
			return
		}
		// A valid call's arguments validate again from their own JSON.
		b, err := json.Marshal(c.Args)
		if err != nil {
			t.Fatal(err)
		}
		if _, bad := Validate(vis, RawCall{Name: name, Arguments: b}); bad != nil {
			t.Fatalf("re-validating %s: %s", b, bad.Message)
		}
	})
}

func FuzzResolveIn(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	_ = os.MkdirAll(filepath.Join(root, "a/b"), 0o755)
	_ = os.Symlink("../..", filepath.Join(root, "a/up"))
	_ = os.Symlink("b", filepath.Join(root, "a/in"))
	for _, s := range []string{"a/b/c", "a/up/x", "a/in/../b", "../x", "/etc", root + "/a", "a//b/./c", "a/in/../../.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := resolveIn(root, p)
		if err != nil {
			return
		}
		abs := filepath.Join(root, rel)
		if abs != root && !strings.HasPrefix(abs, root+"/") {
			t.Fatalf("%q resolved outside the root: %q", p, abs)
		}
	})
}

func TestExecuteStopsStartingCallsWhenCancelled(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	r := &Runner{Config: cfg}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := r.Execute(ctx, Batch{Calls: []RawCall{
		rawCall("1", "write_file", args("path", "a", "content", "x")),
		rawCall("2", "write_file", args("path", "b", "content", "y")),
	}}, nil)
	for _, res := range out.Results {
		assert.Equal(t, ClassRefused, res.Class)
		assert.Equal(t, "placement.cancelled", res.Rule)
	}
	assert.NoFileExists(t, filepath.Join(ws, "a"))
	assert.NoFileExists(t, filepath.Join(ws, "b"))
}
