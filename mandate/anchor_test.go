package mandate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enforcedIn makes job "j" enforce a mandate in a store on dir and closes
// the store, returning the approved SHA-256.
func enforcedIn(t *testing.T, dir string) string {
	t.Helper()
	ctx := t.Context()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Observe(ctx, Run{Job: "j", ID: "r1", Mode: RunCron}, term("git status")))
	_, err = s.Compile(ctx, "j")
	require.NoError(t, err)
	v, err := s.Approve(ctx, "j", 0, "alice")
	require.NoError(t, err)
	return v.SHA256
}

func removeDB(t *testing.T, dir string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Remove(filepath.Join(dir, DBName+suffix))
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	}
}

// TestLostStoreNeverTurnsEnforcementOff: a state directory whose job
// enforced a mandate, and whose database is then deleted, emptied or
// replaced, refuses that job's calls (terminal and file tools) with a
// clear error until an operator resets the anchor.
func TestLostStoreNeverTurnsEnforcementOff(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"deleted": removeDB,
		"emptied": func(t *testing.T, dir string) {
			removeDB(t, dir)
			require.NoError(t, os.WriteFile(filepath.Join(dir, DBName), nil, 0o600))
		},
		"truncated": func(t *testing.T, dir string) {
			// Checkpointed, then cut to zero: the WAL is gone too.
			require.NoError(t, os.Truncate(filepath.Join(dir, DBName), 0))
			for _, suffix := range []string{"-wal", "-shm"} {
				_ = os.Remove(filepath.Join(dir, DBName+suffix))
			}
		},
		"replaced by a store where the job observes": func(t *testing.T, dir string) {
			other := t.TempDir()
			s, err := Open(other, Options{})
			require.NoError(t, err)
			require.NoError(t, s.Observe(t.Context(), Run{Job: "j", ID: "r", Mode: RunCron}, term("rm -rf ./x")))
			require.NoError(t, s.Close())
			removeDB(t, dir)
			copyFile(t, filepath.Join(other, DBName), filepath.Join(dir, DBName))
		},
		"replaced by a store enforcing another mandate": func(t *testing.T, dir string) {
			other := t.TempDir()
			s, err := Open(other, Options{})
			require.NoError(t, err)
			ctx := t.Context()
			for _, c := range []string{"git status", "rm -rf ./x", "curl https://evil.example"} {
				require.NoError(t, s.Observe(ctx, Run{Job: "j", ID: "r", Mode: RunCron}, term(c)))
			}
			_, err = s.Compile(ctx, "j")
			require.NoError(t, err)
			_, err = s.Approve(ctx, "j", 0, "mallory")
			require.NoError(t, err)
			require.NoError(t, s.Close())
			removeDB(t, dir)
			copyFile(t, filepath.Join(other, DBName), filepath.Join(dir, DBName))
		},
	}
	for name, lose := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sum := enforcedIn(t, dir)
			lose(t, dir)

			s, err := Open(dir, Options{})
			require.NoError(t, err)
			defer s.Close()
			ctx := t.Context()
			for _, c := range []Call{term("rm -rf ./x"), term("git status"), {Tool: "write_file", Paths: []string{"a"}, Wrote: true}} {
				d := s.Check(ctx, cron, c)
				assert.Equal(t, Block, d.Verdict, "a call of the job whose enforcement was lost is refused: %s", c.Command)
				require.ErrorIs(t, d.Err, ErrEnforcementLost)
				assert.Contains(t, d.Reason, "tether mandate anchor reset j", "the error says what to do")
				assert.Contains(t, d.Reason, sum[:12], "and which mandate was enforced")
			}
			d := s.Check(ctx, Run{Job: "other", ID: "r", Mode: RunCron}, term("ls"))
			assert.Equal(t, Allow, d.Verdict, "other jobs are not affected")

			st, err := s.AnchorStatus(ctx)
			require.NoError(t, err)
			require.Len(t, st, 1)
			assert.False(t, st[0].OK)

			// The operator accepts the database as it is.
			_, err = s.ResetAnchor(ctx, "j", "operator")
			require.NoError(t, err)
			d = s.Check(ctx, cron, term("git status"))
			assert.NotErrorIs(t, d.Err, ErrEnforcementLost)
			assert.Equal(t, Allow, d.Verdict)
		})
	}
}

// TestAnchorFollowsApproveAndUndo: approving, approving again and undoing
// keep the anchor in step, so no legitimate change is ever refused.
func TestAnchorFollowsApproveAndUndo(t *testing.T) {
	dir := t.TempDir()
	sum := enforcedIn(t, dir)
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	a, err := s.readAnchor()
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"j": {sum}}, a.Jobs)

	require.NoError(t, s.Observe(ctx, Run{Job: "j", ID: "r2", Mode: RunCron}, term("go test ./...")))
	// Enforce mode records calls as "allowed"/"blocked"; compile reads
	// observations, so widen through a fresh observation run.
	_, err = s.Compile(ctx, "j")
	require.NoError(t, err)
	v2, err := s.Approve(ctx, "j", 0, "alice")
	require.NoError(t, err)
	a, _ = s.readAnchor()
	assert.Equal(t, map[string][]string{"j": {v2.SHA256}}, a.Jobs)
	assert.Equal(t, Allow, s.Check(ctx, cron, term("git status")).Verdict)

	_, err = s.Undo(ctx, "j", "alice")
	require.NoError(t, err)
	a, _ = s.readAnchor()
	assert.Equal(t, map[string][]string{"j": {sum}}, a.Jobs)
	assert.Equal(t, Allow, s.Check(ctx, cron, term("git status")).Verdict)

	_, err = s.Undo(ctx, "j", "alice")
	require.NoError(t, err)
	a, _ = s.readAnchor()
	assert.Empty(t, a.Jobs, "back in observe mode: nothing to lose")
	assert.Equal(t, Allow, s.Check(ctx, cron, term("rm -rf ./x")).Verdict)
}

// TestCorruptAnchorFailsClosed: an anchor that cannot be read refuses
// every job's calls.
func TestCorruptAnchorFailsClosed(t *testing.T) {
	dir := t.TempDir()
	enforcedIn(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, AnchorName), []byte("{garbage"), 0o600))
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	d := s.Check(t.Context(), Run{Job: "any", ID: "r", Mode: RunCron}, term("ls"))
	assert.Equal(t, Block, d.Verdict)
	assert.Contains(t, d.Reason, AnchorName)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, 0o600))
}
