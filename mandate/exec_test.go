package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An exec the sandbox's gate refused becomes open drift in the commands
// family, carrying the refused argv in its reason, drawn as a blocked mark
// (a red notch) on the Leash Line's commands track; it cannot be widened.
func TestRecordExec(t *testing.T) {
	s, ctx := enforced(t)
	run := Run{Job: "j", ID: "r2", Mode: RunCron}
	id, err := s.RecordExec(ctx, run, term("make test"), "dd if=/dev/zero of=/dev/sda", "blocked by the hardline floor (hardline.disk-write)")
	require.NoError(t, err)
	drift, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	require.NotEmpty(t, drift)
	d := drift[0]
	assert.Equal(t, id, d.ID)
	assert.Equal(t, []string{FamilyCommands}, d.Families)
	assert.Equal(t, "make test", d.Call)
	assert.Equal(t, "open", d.Status)
	assert.Contains(t, d.Reason, "refused at the exec gate: blocked by the hardline floor")

	ll, err := s.Leash(ctx, "j")
	require.NoError(t, err)
	var found bool
	for _, tr := range ll.Tracks {
		for _, m := range tr.Marks {
			if m.Drift == id {
				found = true
				assert.Equal(t, FamilyCommands, tr.Family)
				assert.Equal(t, MarkBlocked, m.Kind)
			}
		}
	}
	assert.True(t, found, "the exec block is a notch on the commands track")

	_, err = s.Widen(ctx, "j", id, false)
	assert.ErrorIs(t, err, ErrExecRefused)
	assert.ErrorIs(t, err, ErrNotWidenable)
}
