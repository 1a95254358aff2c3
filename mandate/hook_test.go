package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
)

func TestHook(t *testing.T) {
	s, ctx := enforced(t)
	h := &Hook{Store: s}
	call := func(job string, p approval.Platform, cmd string) approval.MandateVerdict {
		a, err := approval.Analyze(cmd, approval.AnalyzeOptions{})
		require.NoError(t, err)
		return h.CheckCall(ctx, approval.MandateCall{Profile: "default", Session: "s1", Job: job, Platform: p, Command: cmd, Analysis: a})
	}
	assert.Equal(t, approval.MandateNotApplicable, call("", approval.PlatformCron, "rm -rf x").Outcome, "no job, no mandate")
	assert.Equal(t, approval.MandateNotApplicable, call("fresh", approval.PlatformCron, "rm -rf x").Outcome, "observe mode")
	assert.Equal(t, approval.MandateAllow, call("j", approval.PlatformCron, "git status").Outcome)

	v := call("j", approval.PlatformCron, "git push --force")
	assert.Equal(t, approval.MandateBlock, v.Outcome)
	assert.NotEmpty(t, v.DriftID)
	assert.Equal(t, approval.MandateBlock, call("j", approval.PlatformCLI, "git push --force").Outcome, "job default is block")

	h.Violation = func(string) string { return "approve" }
	assert.Equal(t, approval.MandateEscalate, call("j", approval.PlatformCLI, "git push --force").Outcome)
	for _, p := range []approval.Platform{approval.PlatformCron, approval.PlatformWebhook, approval.PlatformAPI, approval.PlatformSingleQuery} {
		assert.Equal(t, approval.MandateBlock, call("j", p, "git push --force").Outcome, "%s never escalates", p)
	}
	assert.Equal(t, approval.MandateBlock, call("j", approval.Platform("pager"), "git status").Outcome, "an unknown platform might be cron")

	assert.Equal(t, approval.MandateBlock, (&Hook{}).CheckCall(ctx, approval.MandateCall{Job: "j", Command: "ls"}).Outcome, "no store fails closed")
}

func TestCallScriptMustMatchCommand(t *testing.T) {
	s, ctx := enforced(t)
	// A script from some other command is not trusted for this one.
	other, err := approval.Analyze("git status", approval.AnalyzeOptions{})
	require.NoError(t, err)
	d := s.Check(ctx, cron, Call{Tool: ToolTerminal, Command: "rm -rf /tmp/x", Script: other.Script})
	assert.Equal(t, Block, d.Verdict)
}
