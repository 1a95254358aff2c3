package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tether-dev/tether/approval"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	reg := Builtins()
	tool := func(n string) *Tool { x, _ := reg.Lookup(n); return x }
	tests := []struct {
		name       string
		tool       *Tool
		in         Result
		wantClass  Class
		wantEffect Effect
	}{
		{"write_file landed with bytes_written", tool("write_file"), succeeded("", map[string]any{"bytes_written": 3}), ClassSucceeded, EffectLanded},
		{"write_file landed with float bytes_written (decoded JSON)", tool("write_file"), succeeded("", map[string]any{"bytes_written": 3.0}), ClassSucceeded, EffectLanded},
		{"write_file without bytes_written did not land", tool("write_file"), succeeded("", map[string]any{"ok": true}), ClassFailed, EffectNotLanded},
		{"write_file failed", tool("write_file"), failed("", nil), ClassFailed, EffectNotLanded},
		{"patch landed only with success true", tool("patch"), succeeded("", map[string]any{"success": true}), ClassSucceeded, EffectLanded},
		{"patch success false", tool("patch"), failed("", map[string]any{"success": false}), ClassFailed, EffectNotLanded},
		{"patch success string is not proof", tool("patch"), succeeded("", map[string]any{"success": "true"}), ClassFailed, EffectNotLanded},
		{"read has no effect", tool("read_file"), succeeded("", nil), ClassSucceeded, EffectNone},
		{"terminal that ran may have done anything", tool("terminal"), failed("", nil), ClassFailed, EffectPossible},
		{"unknown tool is effect-capable", nil, succeeded("", nil), ClassSucceeded, EffectPossible},
		{"plugin without kind is effect-capable", &Tool{Name: "mcp_x"}, succeeded("", nil), ClassSucceeded, EffectPossible},
		{"refusal has no effect", tool("terminal"), refused(GateGuardrail, "r", ""), ClassRefused, EffectNone},
		{"blocked has no effect even if marked ran", tool("terminal"), Result{Class: ClassBlocked, Ran: true}, ClassBlocked, EffectNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.tool, tc.in)
			assert.Equal(t, tc.wantClass, got.Class)
			assert.Equal(t, tc.wantEffect, got.Effect)
		})
	}
}

func TestFromDecision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    approval.Decision
		want Class
	}{
		{"hardline", approval.Decision{Stage: approval.StageHardline, DecidedBy: "engine", Rules: []string{"hardline.rm-root"}}, ClassBlocked},
		{"deny glob", approval.Decision{Stage: approval.StageDenyGlob, DecidedBy: "engine"}, ClassBlocked},
		{"mandate", approval.Decision{Stage: approval.StageMandate, DecidedBy: "engine"}, ClassBlocked},
		{"person denied", approval.Decision{Stage: approval.StageRoute, Route: "gateway", DecidedBy: "api:c1"}, ClassBlocked},
		{"unattended policy denied", approval.Decision{Stage: approval.StageRoute, Route: "unattended", DecidedBy: "config:approvals.unattended_mode"}, ClassBlocked},
		{"nobody answered in time", approval.Decision{Stage: approval.StageRoute, Route: "gateway", DecidedBy: "gateway"}, ClassPending},
		{"nobody could be asked", approval.Decision{Stage: approval.StageRoute, Route: "cli", DecidedBy: "engine"}, ClassPending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fromDecision(tc.d)
			assert.Equal(t, tc.want, r.Class)
			assert.False(t, r.Ran)
			assert.NotNil(t, r.Decision)
		})
	}
}
