package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/mandate"
)

// failingAudit refuses every record, like a full or read-only disk.
type failingAudit struct{}

func (failingAudit) Append(context.Context, approval.Decision) error {
	return errors.New("no space left on device")
}

// TestFileToolsAudited: every file tool call, a write refused on a
// protected path included, has a record stored before it ran and one of
// its result, in the state directory's audit log.
func TestFileToolsAudited(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644))
	r := &Runner{Config: cfg}
	out := r.Execute(t.Context(), Batch{Session: "s1", Calls: []RawCall{
		rawCall("1", "write_file", map[string]any{"path": "b.txt", "content": "x"}),
		rawCall("2", "read_file", map[string]any{"path": "a.txt"}),
		rawCall("3", "patch", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"}),
		rawCall("4", "write_file", map[string]any{"path": ".bashrc", "content": "evil"}),
	}}, nil)
	require.Len(t, out.Results, 4)
	assert.Equal(t, ClassBlocked, out.Results[3].Class)

	f, err := os.Open(approval.AuditPath(cfg.StateDir))
	require.NoError(t, err)
	defer f.Close()
	rep, err := approval.VerifyAudit(f)
	require.NoError(t, err)
	require.Equal(t, 8, rep.Records, "a call record and a result record per call")
	recs := readAudit(t, approval.AuditPath(cfg.StateDir))
	type pair struct{ call, result *approval.Decision }
	byID := map[string]*pair{}
	for i := range recs {
		d := &recs[i]
		p := byID[d.ID]
		if p == nil {
			p = &pair{}
			byID[d.ID] = p
		}
		switch d.Event {
		case approval.EventToolCall:
			require.Nil(t, p.result, "the call record comes before the result")
			p.call = d
		case approval.EventToolResult:
			p.result = d
		default:
			t.Fatalf("unexpected record %+v", d)
		}
	}
	tools := map[string]int{}
	for _, p := range byID {
		require.NotNil(t, p.call)
		require.NotNil(t, p.result)
		assert.Equal(t, "s1", p.call.Session)
		tools[p.call.Tool]++
		if p.call.Paths[0] == ".bashrc" {
			assert.False(t, p.result.Allowed, "the blocked write is recorded as not run")
			assert.Contains(t, p.result.Reason, string(ClassBlocked))
		}
	}
	assert.Equal(t, map[string]int{"write_file": 2, "read_file": 1, "patch": 1}, tools)
}

// TestFileToolsFailClosedWithoutAudit: when the audit log cannot take the
// record, a file tool does nothing, like a terminal call.
func TestFileToolsFailClosedWithoutAudit(t *testing.T) {
	t.Parallel()
	broken := func(t *testing.T) (*Runner, string) {
		cfg, ws := testConfig(t, "")
		return &Runner{Config: cfg, Audit: failingAudit{}}, ws
	}
	unopenable := func(t *testing.T) (*Runner, string) {
		cfg, ws := testConfig(t, "")
		// The audit log's path is taken by a directory: it cannot open.
		require.NoError(t, os.MkdirAll(approval.AuditPath(cfg.StateDir), 0o700))
		return &Runner{Config: cfg}, ws
	}
	for name, mk := range map[string]func(*testing.T) (*Runner, string){"failing": broken, "unopenable": unopenable} {
		t.Run(name, func(t *testing.T) {
			r, ws := mk(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644))
			out := r.Execute(t.Context(), Batch{Calls: []RawCall{
				rawCall("1", "write_file", map[string]any{"path": "b.txt", "content": "x"}),
				rawCall("2", "patch", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"}),
				rawCall("3", "read_file", map[string]any{"path": "a.txt"}),
			}}, nil)
			for _, res := range out.Results {
				assert.Equal(t, ClassRefused, res.Class, res.Tool)
				assert.Equal(t, "audit.unavailable", res.Rule)
				assert.False(t, res.Ran)
				assert.Nil(t, res.Output, "nothing was read")
			}
			assert.NoFileExists(t, filepath.Join(ws, "b.txt"), "nothing was written")
			data, err := os.ReadFile(filepath.Join(ws, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, "one\n", string(data), "nothing was patched")
		})
	}
}

// readAudit returns the records of an audit log.
func readAudit(t *testing.T, path string) []approval.Decision {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []approval.Decision
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d approval.Decision
		require.NoError(t, json.Unmarshal(line, &d))
		out = append(out, d)
	}
	return out
}

// TestFileToolWarnsWhenObservationLost: a job's file tool call whose
// observation cannot be stored (here a trigger makes every stored call
// fail, as a full disk would, while reads work) still runs in observe mode and says in its
// result that it was not recorded.
func TestFileToolWarnsWhenObservationLost(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	store, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	_, err = store.DB().Exec(`CREATE TRIGGER full_disk BEFORE INSERT ON calls BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`)
	require.NoError(t, err)
	r := &Runner{Config: cfg, Mandates: store}
	out := r.Execute(t.Context(), Batch{Job: "j", Session: "s", Calls: []RawCall{
		rawCall("1", "write_file", map[string]any{"path": "b.txt", "content": "x"}),
	}}, nil)
	res := out.Results[0]
	assert.Equal(t, ClassSucceeded, res.Class)
	assert.Contains(t, res.Warning, mandate.LostWarning)
	assert.FileExists(t, filepath.Join(ws, "b.txt"))
}
