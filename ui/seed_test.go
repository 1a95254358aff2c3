package ui_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/mandate"
)

// xssCall is a hostile command: its text lands in a drift record and must
// reach the page as text, never as markup.
const xssCall = `bash -c 'echo "<script>alert(1)</script><img src=x onerror=alert(2)>"'`

// seeded is a store with one job taken through the whole lifecycle: three
// observed runs, compile, approve (enforce), a poisoned cron run that drifts
// (d-1…d-5), a run of unknown mode (d-6), d-1 widened and approved (a widened
// triangle), and d-2 widened into a pending version (pending diamonds).
type seeded struct {
	Store   *mandate.Store
	Dir     string
	Job     string
	Widened mandate.WidenResult // the approved widening (d-1)
	Pending mandate.WidenResult // the pending widening
	Drift   []mandate.DriftRecord
}

const seedJob = "nightly-triage"

func seedStore(t testing.TB) *seeded {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	s, err := mandate.Open(dir, mandate.Options{Now: func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	ws := "/work/repo"
	for _, run := range []string{"r1", "r2", "r3"} {
		r := mandate.Run{Job: seedJob, ID: run, Mode: mandate.RunCron, CronIdentity: "cron:nightly"}
		for _, c := range []mandate.Call{
			{Tool: mandate.ToolTerminal, Command: "git status", Workspace: ws},
			{Tool: mandate.ToolTerminal, Command: "go test ./...", Workspace: ws},
			{Tool: mandate.ToolTerminal, Command: "git fetch https://github.com/tether-dev/tether", Workspace: ws},
			{Tool: "read_file", Paths: []string{ws + "/src/a.go"}, Workspace: ws},
			{Tool: "read_file", Paths: []string{ws + "/src/b.go"}, Workspace: ws},
			{Tool: "read_file", Paths: []string{ws + "/src/c.go"}, Workspace: ws},
			{Tool: "write_file", Paths: []string{ws + "/TRIAGE.md"}, Wrote: true, Workspace: ws},
		} {
			require.NoError(t, s.Observe(ctx, r, c))
		}
	}
	v1, err := s.Compile(ctx, seedJob)
	require.NoError(t, err)
	_, err = s.Approve(ctx, seedJob, v1.Number, "alice")
	require.NoError(t, err)

	poisoned := mandate.Run{Job: seedJob, ID: "r4", Mode: mandate.RunCron, CronIdentity: "cron:nightly"}
	for _, c := range []mandate.Call{
		{Tool: "read_file", Paths: []string{ws + "/docs/CHANGELOG.md"}, Workspace: ws},                          // d-1 paths, widened and approved
		{Tool: mandate.ToolTerminal, Command: "curl -s https://api.github.com/repos/x/y/issues", Workspace: ws}, // d-2 commands, hosts; widened, pending
		{Tool: mandate.ToolTerminal, Command: xssCall, Workspace: ws},                                           // d-3 commands
		{Tool: "read_file", Paths: []string{"/root/.aws/credentials"}, Workspace: ws},                           // d-4 paths
		{Tool: "write_file", Paths: []string{"/etc/cron.d/x"}, Wrote: true, Workspace: ws},                      // d-5 paths
	} {
		d := s.Check(ctx, poisoned, c)
		require.Equal(t, mandate.Block, d.Verdict, "call %+v", c)
	}
	// A run whose mode is unknown is blocked whatever it does: d-6, on no
	// family's track.
	unknown := mandate.Run{Job: seedJob, ID: "r5", Mode: mandate.RunUnknown}
	require.Equal(t, mandate.Block, s.Check(ctx, unknown, mandate.Call{Tool: mandate.ToolTerminal, Command: "git status", Workspace: ws}).Verdict)

	out := &seeded{Store: s, Dir: dir, Job: seedJob}
	out.Widened, err = s.Widen(ctx, seedJob, "d-1", false)
	require.NoError(t, err)
	_, err = s.Approve(ctx, seedJob, out.Widened.Version.Number, "bob")
	require.NoError(t, err)
	out.Pending, err = s.Widen(ctx, seedJob, "d-2", false)
	require.NoError(t, err)
	out.Drift, err = s.Drift(ctx, seedJob)
	require.NoError(t, err)
	return out
}
