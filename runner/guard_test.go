package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func call(name, key string) *Call { return &Call{ID: key, Name: name, Key: name + " " + key} }

func TestGuardIdenticalFailures(t *testing.T) {
	t.Parallel()
	for _, hard := range []bool{false, true} {
		tr := NewTurn(GuardConfig{HardStop: &hard}, false)
		c := call("terminal", `{"command":"make"}`)
		r1 := tr.After(c, failed("x", map[string]any{"n": 1}))
		assert.Empty(t, r1.Warning, "first failure: no warning")
		require.Nil(t, tr.Before(c))
		r2 := tr.After(c, failed("x", map[string]any{"n": 2}))
		assert.Contains(t, r2.Warning, "failed 2 times", "warn at 2")
		require.Nil(t, tr.Before(c))
		tr.After(c, failed("x", map[string]any{"n": 3}))
		stop := tr.Before(c)
		require.NotNil(t, stop, "blocked at 3")
		assert.Equal(t, "guardrail.identical-failures", stop.Rule)
		assert.Equal(t, ClassRefused, stop.Class)
		// A different call of the same tool still runs.
		assert.Nil(t, tr.Before(call("terminal", `{"command":"make test"}`)))
	}
}

func TestGuardToolFailuresAndHalt(t *testing.T) {
	t.Parallel()
	tr := NewTurn(GuardConfig{}, true) // unattended: hard stop on by default
	for i := 0; i < 4; i++ {
		c := call("terminal", string(rune('a'+i)))
		require.Nil(t, tr.Before(c))
		r := tr.After(c, failed("x", nil))
		if i+1 >= 3 {
			assert.Contains(t, r.Warning, "terminal has failed")
		}
	}
	c := call("terminal", "e")
	require.Nil(t, tr.Before(c))
	tr.After(c, failed("x", nil))
	stop := tr.Before(call("terminal", "f"))
	require.NotNil(t, stop, "tool blocked at 5 failures")
	assert.Equal(t, "guardrail.tool-failures", stop.Rule)
	assert.Nil(t, tr.Before(call("read_file", "g")), "other tools still run")
	assert.Empty(t, tr.Halted())
}

func TestGuardHaltOnlyWithHardStop(t *testing.T) {
	t.Parallel()
	run := func(unattended bool) *Turn {
		tr := NewTurn(GuardConfig{IdenticalBlock: 100, RepeatBlock: 100, RepeatHalt: 100}, unattended)
		c := call("terminal", "same")
		for i := 0; i < 5; i++ {
			tr.After(c, failed("x", map[string]any{"i": i}))
		}
		return tr
	}
	attended := run(false)
	assert.Empty(t, attended.Halted(), "attended platforms only warn at the halt threshold")
	unattended := run(true)
	assert.NotEmpty(t, unattended.Halted())
	stop := unattended.Before(call("read_file", "other"))
	require.NotNil(t, stop)
	assert.Equal(t, "guardrail.halt", stop.Rule)
}

func TestGuardNoProgress(t *testing.T) {
	t.Parallel()
	tr := NewTurn(GuardConfig{}, false)
	c := call("read_file", `{"path":"a"}`)
	same := succeeded("read", map[string]any{"content": "x"})
	for i := 1; i <= 3; i++ {
		require.Nil(t, tr.Before(c))
		r := tr.After(c, same)
		if i == 3 {
			assert.Contains(t, r.Warning, "no progress")
		} else {
			assert.Empty(t, r.Warning)
		}
	}
	require.Nil(t, tr.Before(c))
	tr.After(c, same)
	stop := tr.Before(c)
	require.NotNil(t, stop, "blocked at 4 identical results")
	assert.Equal(t, "guardrail.no-progress", stop.Rule)
	// The same call with a changing result is progress.
	tr2 := NewTurn(GuardConfig{}, false)
	for i := 0; i < 6; i++ {
		require.Nil(t, tr2.Before(c))
		tr2.After(c, succeeded("read", map[string]any{"content": i}))
	}
}

func TestGuardRefusalsNeverCount(t *testing.T) {
	t.Parallel()
	tr := NewTurn(GuardConfig{}, true)
	c := call("terminal", "rm")
	for i := 0; i < 20; i++ {
		tr.After(c, refused(GateGuardrail, "x", ""))
		tr.After(c, Result{Class: ClassBlocked})
		tr.After(c, Result{Class: ClassPending})
	}
	assert.Nil(t, tr.Before(c))
	assert.Empty(t, tr.Halted())
}

func TestGuardInvalidTurns(t *testing.T) {
	t.Parallel()
	tr := NewTurn(GuardConfig{}, false)
	end, _ := tr.Batch(true)
	assert.False(t, end)
	end, _ = tr.Batch(true)
	assert.False(t, end)
	end, _ = tr.Batch(false) // a valid call resets the streak
	assert.False(t, end)
	for i := 0; i < 2; i++ {
		end, _ = tr.Batch(true)
		assert.False(t, end)
	}
	end, why := tr.Batch(true)
	assert.True(t, end, "third consecutive all-invalid batch ends the turn")
	assert.Contains(t, why, "3 consecutive")
}

// Fix and retest: a landed patch between identical failing runs resets
// their count, so the retest runs; without one, the third is refused.
// The per-tool failure count stays (raised here so it does not block first).
func TestGuardLandedMutationResetsIdentical(t *testing.T) {
	t.Parallel()
	tr := NewTurn(GuardConfig{ToolBlock: 8, ToolHalt: 9}, false)
	test := call("terminal", `{"command":"make test"}`)
	fix := call("patch", `{"path":"a.go"}`)
	for round := range 3 {
		for range 2 {
			require.Nil(t, tr.Before(test), "round %d", round)
			tr.After(test, failed("FAIL", map[string]any{"exit_code": 1}))
		}
		landed := succeeded("patched", nil)
		landed.Effect = EffectLanded
		tr.After(fix, landed)
	}
	require.Nil(t, tr.Before(test), "a patch landed since the last failures")

	// A patch that did not land changes nothing.
	for range 3 {
		tr.After(test, failed("FAIL", map[string]any{"exit_code": 1}))
	}
	notLanded := failed("patch did not apply", nil)
	notLanded.Effect = EffectNotLanded
	tr.After(fix, notLanded)
	stop := tr.Before(test)
	require.NotNil(t, stop)
	assert.Equal(t, "guardrail.identical-failures", stop.Rule)
}

// TestGuardChangedWorkspaceResets: between two identical failing calls, a
// change to the workspace that the call itself did not make (another
// call, a background process, a person) starts the call's counts afresh;
// what the call writes while it runs does not, so a command that writes
// logs and fails still trips the guardrail.
func TestGuardChangedWorkspaceResets(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	write("main.go", "package main\n")
	tr := NewTurn(GuardConfig{ToolWarn: 100, ToolBlock: 100, ToolHalt: 100}, false) // the per-tool count stays, by design
	tr.Watch(ws)
	c := call("terminal", `{"command":"make test"}`)
	for i := range 3 {
		require.Nil(t, tr.Before(c), "run %d", i+1)
		write("build.log", fmt.Sprintf("run %d\n", i)) // the command's own write
		tr.After(c, failed("tests failed", map[string]any{"exit_code": 1}))
	}
	require.NotNil(t, tr.Before(c), "three identical failures with only its own writes: refused")

	write("main.go", "package main // fixed by the terminal\n") // a change from elsewhere
	require.Nil(t, tr.Before(c), "the workspace changed: a new attempt")
	tr.After(c, failed("tests failed", map[string]any{"exit_code": 1}))
	require.Nil(t, tr.Before(c), "one failure since the change")
	tr.After(c, failed("tests failed", map[string]any{"exit_code": 1}))
	require.NoError(t, os.Remove(filepath.Join(ws, "build.log")))
	assert.Nil(t, tr.Before(c), "a removed file is a change too")
}

// TestGuardThresholdsFromConfig: a profile's guardrails set the
// thresholds of its turns.
func TestGuardThresholdsFromConfig(t *testing.T) {
	t.Parallel()
	cfg, _ := testConfig(t, "    guardrails:\n      identical_failures: {warn: 1, block: 2}\n      hard_stop: true\n")
	r := &Runner{Config: cfg, Guard: GuardConfig{ToolBlock: 9}}
	g := r.guard("")
	assert.Equal(t, 1, g.IdenticalWarn)
	assert.Equal(t, 2, g.IdenticalBlock)
	assert.Equal(t, 9, g.ToolBlock, "what the profile leaves alone stays the runner's")
	require.NotNil(t, g.HardStop)
	assert.True(t, *g.HardStop)
	tr := NewTurn(g, false)
	c := call("terminal", "x")
	tr.After(c, failed("x", nil))
	require.Nil(t, tr.Before(c))
	tr.After(c, failed("x", nil))
	assert.NotNil(t, tr.Before(c), "blocked at the profile's 2")
}
