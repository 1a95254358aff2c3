package mandate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

// nightlyEnforced returns a store, closed at cleanup, whose job nightly
// enforces the mandate learned from one cron run of "git status".
func nightlyEnforced(t *testing.T) *mandate.Store {
	t.Helper()
	ctx := t.Context()
	s, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Observe(ctx, mandate.Run{Job: "nightly", ID: "r1", Mode: mandate.RunCron}, mandate.Call{Tool: mandate.ToolTerminal, Command: "git status"}))
	_, err = s.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = s.Approve(ctx, "nightly", 0, "t")
	require.NoError(t, err)
	return s
}

// TestEngineWithHook runs the approval engine with the mandate hook: a
// cron call inside the mandate goes on to the normal flow, one outside it
// is denied at the mandate stage with its drift id.
func TestEngineWithHook(t *testing.T) {
	ctx := t.Context()
	s := nightlyEnforced(t)

	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.StateDir = t.TempDir()
	e, err := approval.NewEngine(cfg, approval.Options{Mandate: mandate.NewHook(s, cfg)})
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

// TestEngineEscalatesInteractive: with the profile's interactive_violation
// "approve", an interactive call outside the mandate goes to a person (here
// no CLI prompter is configured, so the route denies), while the same call
// from cron is denied at the mandate stage.
func TestEngineEscalatesInteractive(t *testing.T) {
	ctx := t.Context()
	s := nightlyEnforced(t)

	cfg, err := config.Default()
	require.NoError(t, err)
	cfg.StateDir = t.TempDir()
	prof, ok := cfg.Profile("")
	require.True(t, ok)
	prof.Mandate.InteractiveViolation = config.ViolationApprove
	e, err := approval.NewEngine(cfg, approval.Options{Mandate: mandate.NewHook(s, cfg)})
	require.NoError(t, err)

	d, _ := e.Decide(ctx, approval.Request{Command: "ls -la", Platform: approval.PlatformCLI, Job: "nightly", Session: "s"})
	assert.NotEqual(t, approval.StageMandate, d.Stage, "escalated past the mandate stage to a route: %+v", d)
	assert.Equal(t, "d-1", d.DriftID)

	d, _ = e.Decide(ctx, approval.Request{Command: "ls -la", Platform: approval.PlatformCron, Job: "nightly", Session: "s"})
	assert.Equal(t, approval.StageMandate, d.Stage)
	ds, err := s.Drift(ctx, "nightly")
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, "open", ds[0].Status)
	assert.Equal(t, "escalated", ds[1].Status)
}
