package mandate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// TestEngineWithHook runs the approval engine with the mandate hook: a
// cron call inside the mandate goes on to the normal flow, one outside it
// is denied at the mandate stage with its drift id.
func TestEngineWithHook(t *testing.T) {
	ctx := t.Context()
	s, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	defer s.Close()
	run := mandate.Run{Job: "nightly", ID: "r1", Mode: mandate.RunCron}
	require.NoError(t, s.Observe(ctx, run, mandate.Call{Tool: mandate.ToolTerminal, Command: "git status"}))
	_, err = s.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = s.Approve(ctx, "nightly", 0, "t")
	require.NoError(t, err)

	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.StateDir = t.TempDir()
	e, err := approval.NewEngine(cfg, approval.Options{Mandate: &mandate.Hook{Store: s}})
	require.NoError(t, err)

	d, err := e.Decide(ctx, approval.Request{Command: "git status", Platform: approval.PlatformCron, Job: "nightly", Session: "s"})
	require.NoError(t, err)
	assert.True(t, d.Allowed, "%+v", d)

	d, err = e.Decide(ctx, approval.Request{Command: "ls -la", Platform: approval.PlatformCron, Job: "nightly", Session: "s"})
	require.ErrorIs(t, err, approval.ErrDenied)
	assert.False(t, d.Allowed)
	assert.Equal(t, approval.StageMandate, d.Stage)
	assert.Equal(t, "d-1", d.DriftID)
	assert.Contains(t, d.Reason, "outside the job's mandate: commands")
}
