package runner

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/sandbox"
)

// invokePipeline is the pipeline tether run assembles, over a profile
// with a secret and the workspace ws.
func invokePipeline(t *testing.T, mandates MandateUse, job string) (*Pipeline, string) {
	t.Helper()
	sb := testSandbox(t)
	cfg, ws := testConfig(t, "    secrets:\n      values: {API_TOKEN: s3cr3t-value-0123}\n")
	p, err := NewPipeline(PipelineOptions{Config: cfg, Sandbox: sb, Mandates: mandates, Job: job})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p, ws
}

// byteWriter writes one byte per Write, so a secret reaches the masker
// split across writes.
type byteWriter struct{ w io.Writer }

func (b byteWriter) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := b.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestInvokeIsTheAgentsPipeline attacks tether run's path from the
// command's side: a refused command never runs (its first half included),
// a script's hidden disk wipe is stopped at the exec gate and audited,
// and the profile's secret never reaches the caller's streams, however
// the command prints it.
func TestInvokeIsTheAgentsPipeline(t *testing.T) {
	p, ws := invokePipeline(t, MandatesForJob, "")
	require.Nil(t, p.Mandates, "no job: no mandate store opened")
	ctx := t.Context()
	place := func() Placement {
		pl, err := p.Runner.Place(ctx, "", ws, nil)
		require.NoError(t, err)
		return pl
	}

	// Hardline: nothing of it runs.
	marker := filepath.Join(ws, "ran")
	inv, err := p.Runner.Invoke(ctx, Invocation{Text: "touch " + marker + "; rm -rf /",
		Command: sandbox.Command{Shell: "touch " + marker + "; rm -rf /"}, Placement: place()})
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorIs(t, err, approval.ErrDenied)
	assert.Equal(t, approval.StageHardline, inv.Decision.Stage)
	assert.Nil(t, inv.Result)
	assert.NoFileExists(t, marker)

	// The exec gate: the script's payload is in no command text.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "check.sh"), []byte("d=/dev/sda; dd if=/dev/zero of=$d count=1\necho after\n"), 0o644))
	var out bytes.Buffer
	inv, err = p.Runner.Invoke(ctx, Invocation{Text: "sh check.sh", Command: sandbox.Command{Shell: "sh check.sh", Stdout: &out, Stderr: &out},
		Placement: place()})
	require.NoError(t, err)
	require.NotNil(t, inv.Result)
	require.Len(t, inv.ExecBlocked, 1)
	assert.Contains(t, inv.ExecBlocked[0].Command, "dd if=/dev/zero of=/dev/sda")
	assert.Equal(t, approval.StageExec, inv.ExecBlocked[0].Stage)
	assert.Contains(t, out.String(), "after", "the rest of the script ran")

	// Masking: printed whole, split over writes, and one byte at a time.
	out.Reset()
	cmd := `echo "a=$API_TOKEN"; printf 's3cr3t-'; sleep 0.2; printf 'value-0123\n'; echo "$API_TOKEN" | fold -w1 | tr -d '\n'; echo`
	inv, err = p.Runner.Invoke(ctx, Invocation{Text: cmd, Command: sandbox.Command{Shell: cmd, Stdout: byteWriter{&out}, Stderr: &out},
		Placement: place()})
	require.NoError(t, err)
	assert.Equal(t, 0, inv.Result.ExitCode)
	assert.NotContains(t, out.String(), "s3cr3t-value-0123")
	assert.Equal(t, "a=***\n***\n***\n", out.String())
}

// TestInvokeJobObservesAndEnforces: a job's call through Invoke is an
// observation of the job in observe mode, and refused (a drift record,
// nothing run) once an approved mandate does not cover it.
func TestInvokeJobObservesAndEnforces(t *testing.T) {
	p, ws := invokePipeline(t, MandatesForJob, "nightly")
	require.NotNil(t, p.Mandates)
	ctx := t.Context()
	pl, err := p.Runner.Place(ctx, "", ws, nil)
	require.NoError(t, err)
	run := func(cmd string) (*Invoked, error) {
		return p.Runner.Invoke(ctx, Invocation{Platform: approval.PlatformCron, Job: "nightly", Text: cmd,
			Command: sandbox.Command{Shell: cmd, Stdout: io.Discard, Stderr: io.Discard}, Placement: pl})
	}
	_, err = run("ls")
	require.NoError(t, err)
	v, err := p.Mandates.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = p.Mandates.ApproveReviewed(ctx, "nightly", v.Number, v.SHA256, "test")
	require.NoError(t, err)
	_, err = run("ls")
	require.NoError(t, err, "inside the mandate")
	marker := filepath.Join(ws, "outside")
	inv, err := run("touch " + marker)
	require.ErrorIs(t, err, ErrRefused)
	assert.Equal(t, approval.StageMandate, inv.Decision.Stage)
	assert.NotEmpty(t, inv.Decision.DriftID)
	assert.NoFileExists(t, marker)
}

// TestPipelineSessionsPassTheExecGate: a session sandbox of the assembled
// pipeline refuses a hardline exec that no command text shows.
func TestPipelineSessionsPassTheExecGate(t *testing.T) {
	p, ws := invokePipeline(t, MandatesNone, "")
	require.NotNil(t, p.Sessions.ExecGate)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "check.sh"), []byte("d=/dev/sda; dd if=/dev/zero of=$d count=1\n"), 0o644))
	out := p.Runner.Execute(t.Context(), Batch{Platform: approval.PlatformAPI, Session: "s1",
		Calls: []RawCall{rawCall("c", "terminal", args("command", "sh check.sh"))}}, nil)
	res := out.Results[0]
	assert.Equal(t, ClassBlocked, res.Class, "%s", res.Message)
	assert.Equal(t, GateExec, res.Gate)
	_, live := p.Sessions.Lookup("default", "s1")
	require.True(t, live)
	// Clearing the session closes its sandbox.
	p.Engine.ClearSession("default", "s1")
	_, live = p.Sessions.Lookup("default", "s1")
	assert.False(t, live)
}

// TestNewPipelineNeedsConfig fails closed without a configuration.
func TestNewPipelineNeedsConfig(t *testing.T) {
	_, err := NewPipeline(PipelineOptions{ConfigErr: errors.New("bad yaml")})
	require.ErrorIs(t, err, ErrNoConfig)
	assert.Contains(t, err.Error(), "bad yaml")
}

// TestInvokeRefusesAForeignPlacement: a placement made for another profile
// is not run under this call's decision.
func TestInvokeRefusesAForeignPlacement(t *testing.T) {
	cfg, ws := testConfig(t, "  other:\n    terminal:\n      limits: {sandbox_pids: 16}\n")
	p, err := NewPipeline(PipelineOptions{Config: cfg, Mandates: MandatesNone})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	pl, err := p.Runner.Place(t.Context(), "other", ws, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(16), pl.Config.Limits.Pids)
	_, err = p.Runner.Invoke(t.Context(), Invocation{Profile: "default", Text: "true", Command: sandbox.Command{Shell: "true"}, Placement: pl})
	require.ErrorIs(t, err, ErrTerminalPolicyUnavailable)
}
