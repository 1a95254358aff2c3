package mandate

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentStores has two Store handles on one directory (a CLI and a
// daemon) observing, checking and approving at once: no busy errors, no
// lost rows, per-run sequence numbers unique.
func TestConcurrentStores(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, Options{})
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(dir, Options{})
	require.NoError(t, err)
	defer b.Close()
	ctx := t.Context()
	require.NoError(t, a.Observe(ctx, Run{Job: "j", ID: "seed", Mode: RunCron}, term("git status")))
	_, err = a.Compile(ctx, "j")
	require.NoError(t, err)
	_, err = a.Approve(ctx, "j", 0, "t")
	require.NoError(t, err)

	const perWorker = 15
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := 0; w < 4; w++ {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := Run{Job: "j", ID: "shared", Mode: RunCron}
			for i := 0; i < perWorker; i++ {
				cmd := "git status"
				if i%3 == 0 {
					cmd = fmt.Sprintf("make t%d", i)
				}
				d := s.Check(ctx, run, term(cmd))
				if d.Err != nil {
					errs <- d.Err
				}
				if err := s.Observe(ctx, Run{Job: "k", ID: fmt.Sprintf("w%d", w), Mode: RunCron}, term("ls")); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var calls, distinctSeq, drift int
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT seq) FROM calls WHERE job = 'j' AND run = 'shared'`).Scan(&calls, &distinctSeq))
	assert.Equal(t, 4*perWorker, calls)
	assert.Equal(t, calls, distinctSeq)
	var sightings int
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*), SUM(count) FROM drift WHERE job = 'j'`).Scan(&drift, &sightings))
	assert.Equal(t, 5, drift, "each distinct make call is one drift record, numbered without collisions")
	assert.Equal(t, 4*5, sightings, "every make call is counted in its record")
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*) FROM calls WHERE job = 'k'`).Scan(&calls))
	assert.Equal(t, 4*perWorker, calls)
}

func TestPathsCannotClimbOutOfARule(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	ws := t.TempDir()
	run := Run{Job: "p", ID: "r", Mode: RunCron}
	for _, p := range []string{"src/a.go", "src/b.go", "src/c.go"} {
		require.NoError(t, s.Observe(ctx, run, Call{Tool: "read_file", Paths: []string{p}, Workspace: ws}))
	}
	v, err := s.Compile(ctx, "p")
	require.NoError(t, err)
	require.Contains(t, v.Text, "  - \"read:src/**\"  # seen 3x\n", "read_file reads")
	_, err = s.Approve(ctx, "p", 0, "t")
	require.NoError(t, err)
	for p, want := range map[string]Verdict{
		"src/new/deep.go":         Allow,
		ws + "/src/x.go":          Allow,
		"src/../../etc/passwd":    Block,
		"src/../secrets.txt":      Block,
		"/etc/passwd":             Block,
		"srcfoo/x":                Block,
		"$HOME/.aws/credentials":  Block,
		"~/.ssh/id_ed25519":       Block,
		"src/../src/still-ok.txt": Allow,
	} {
		d := s.Check(ctx, Run{Job: "p", ID: "c", Mode: RunCron}, Call{Tool: "read_file", Paths: []string{p}, Workspace: ws})
		assert.Equal(t, want, d.Verdict, p)
	}
	// Only read, so approved read-only: a write there is outside the
	// mandate, and its drift widens to a read-write rule of the path.
	d := s.Check(ctx, Run{Job: "p", ID: "w", Mode: RunCron}, Call{Tool: "write_file", Paths: []string{"src/a.go"}, Wrote: true, Workspace: ws})
	assert.Equal(t, Block, d.Verdict)
	assert.Contains(t, d.Failures, Failure{Family: FamilyPaths, Value: "src/a.go"})
	assert.NotContains(t, d.Failures, Failure{Family: FamilyPaths, Value: "read:src/a.go"})
}

func TestMigrations(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	var v int
	require.NoError(t, s.db.QueryRow("PRAGMA user_version").Scan(&v))
	assert.Equal(t, len(migrations), v)
	var mode string
	require.NoError(t, s.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	_, err = s.db.Exec("PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	_, err = Open(dir, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "newer than this tether")
}

func TestStateDir(t *testing.T) {
	t.Setenv("TETHER_STATE_DIR", "/x/y")
	d, err := StateDir()
	require.NoError(t, err)
	assert.Equal(t, "/x/y", d)
	t.Setenv("TETHER_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/xdg")
	d, err = StateDir()
	require.NoError(t, err)
	if os.Geteuid() == 0 {
		assert.Equal(t, "/var/lib/tether", d)
	} else {
		assert.Equal(t, "/xdg/tether", d)
	}
}
