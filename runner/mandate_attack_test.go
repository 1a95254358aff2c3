package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/mandate"
)

// The attack, run for real on the host backend: a job approved for
// "make test" writes reports/notes.md (a path it may write), then runs
// "make test SHELL=/bin/bash BASH_ENV=reports/notes.md", which would run
// that file as shell code. The mandate must refuse it, checked from the
// host afterwards: the file the payload creates does not exist. A control
// job in observe mode runs the same command and shows the payload works.
func TestMandateRefusesMakeShellInjection(t *testing.T) {
	t.Parallel()
	r, ws := hostRunner(t, "")
	ctx := t.Context()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "Makefile"), []byte("test:\n\ttrue\n"), 0o644))
	pwned := filepath.Join(ws, "pwned")
	payload := "touch " + pwned + "\n"
	hostile := "make test SHELL=/bin/bash BASH_ENV=reports/notes.md"

	job := Batch{Platform: approval.PlatformCron, Job: "nightly", Session: "run1", Calls: []RawCall{
		rawCall("1", "terminal", args("command", "make test")),
		rawCall("2", "write_file", args("path", "reports/notes.md", "content", "notes\n")),
	}}
	for _, res := range r.Execute(ctx, job, nil).Results {
		require.Equal(t, ClassSucceeded, res.Class, res.Message)
	}
	v, err := r.Mandates.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = r.Mandates.ApproveReviewed(ctx, "nightly", v.Number, v.SHA256, "test")
	require.NoError(t, err)

	job.Session = "run2"
	job.Calls = []RawCall{
		rawCall("1", "write_file", args("path", "reports/notes.md", "content", payload)),
		rawCall("2", "terminal", args("command", hostile)),
		rawCall("3", "terminal", args("command", "make test")),
	}
	out := r.Execute(ctx, job, nil).Results
	assert.Equal(t, ClassSucceeded, out[0].Class, "writing the report is inside the mandate: %s", out[0].Message)
	assert.Equal(t, ClassBlocked, out[1].Class, out[1].Message)
	assert.Equal(t, approval.RuleMandate, out[1].Rule)
	assert.Equal(t, ClassSucceeded, out[2].Class, out[2].Message)
	assert.NoFileExists(t, pwned, "the assignments are part of the rule: the payload never ran")

	// Control: the same command run directly, with nothing in the way,
	// runs the payload, so the assertion above can fail. (Through the
	// pipeline the approval tier now holds it too: make's SHELL= and
	// BASH_ENV= operands execute code.)
	ctl := exec.CommandContext(ctx, "sh", "-c", hostile)
	ctl.Dir = ws
	outb, err := ctl.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	assert.FileExists(t, pwned, "the attack works when nothing stops it")
}

// An approved "git diff -*" does not let the job write anywhere with
// --output (or its abbreviation): checked from the host, the target file
// does not exist; the control job shows the command writes it.
func TestMandateStarDoesNotCoverGitDiffOutput(t *testing.T) {
	t.Parallel()
	r, ws := hostRunner(t, "")
	ctx := t.Context()
	for _, c := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", c...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	job := Batch{Platform: approval.PlatformCron, Job: "nightly", Session: "run1", Calls: []RawCall{
		rawCall("1", "terminal", args("command", "git diff --stat")),
	}}
	require.Equal(t, ClassSucceeded, r.Execute(ctx, job, nil).Results[0].Class)
	v, err := r.Mandates.Compile(ctx, "nightly")
	require.NoError(t, err)
	_, err = r.Mandates.ApproveReviewed(ctx, "nightly", v.Number, v.SHA256, "test")
	require.NoError(t, err)
	// A blocked "git diff --no-color", widened to a pattern and approved.
	d := r.Mandates.Check(ctx, mandate.Run{Job: "nightly", ID: "run2", Mode: mandate.RunCron},
		mandate.Call{Tool: mandate.ToolTerminal, Command: "git diff --no-color"})
	require.NotEmpty(t, d.DriftID)
	w, err := r.Mandates.Widen(ctx, "nightly", d.DriftID, true)
	require.NoError(t, err)
	require.Contains(t, w.Version.Text, "git diff -*")
	_, err = r.Mandates.ApproveReviewed(ctx, "nightly", 0, w.Version.SHA256, "test")
	require.NoError(t, err)

	target := filepath.Join(ws, "reports.patch")
	job.Session = "run3"
	job.Calls = []RawCall{
		rawCall("1", "terminal", args("command", "git diff --no-color --stat")),
		rawCall("2", "terminal", args("command", "git diff --output="+target)),
		rawCall("3", "terminal", args("command", "git diff --out="+target)),
	}
	out := r.Execute(ctx, job, nil).Results
	assert.Equal(t, ClassSucceeded, out[0].Class, out[0].Message)
	assert.Equal(t, ClassBlocked, out[1].Class, out[1].Message)
	assert.Equal(t, ClassBlocked, out[2].Class, out[2].Message)
	assert.NoFileExists(t, target)

	ctl := Batch{Platform: approval.PlatformCron, Job: "control", Session: "c1", Calls: []RawCall{
		rawCall("1", "terminal", args("command", "git diff --output="+target)),
	}}
	res := r.Execute(ctx, ctl, nil).Results[0]
	require.Equal(t, ClassSucceeded, res.Class, res.Message)
	assert.FileExists(t, target, "the option really writes the file")
}
