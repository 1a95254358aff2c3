package mandate

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rulesOfDiff returns the rules the pending version of d holds: what
// approving it activates, as the diff presents it.
func rulesOfDiff(d Diff) map[string][]string {
	out := map[string][]string{}
	for _, f := range d.Families {
		var rs []string
		for _, r := range f.Unchanged {
			rs = append(rs, r.Value)
		}
		for _, rc := range f.Added {
			rs = append(rs, rc.Rule)
		}
		for _, rc := range f.Changed {
			rs = append(rs, rc.Rule)
		}
		sort.Strings(rs)
		out[f.Family] = rs
	}
	return out
}

func activeRules(t *testing.T, s *Store, job string) map[string][]string {
	t.Helper()
	e, err := s.Export(t.Context(), job)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, f := range Families {
		var rs []string
		for _, r := range e.Families[f] {
			rs = append(rs, r.Value)
		}
		out[f] = rs
	}
	return out
}

// Two widens stack on one pending version; the diff shows both, and
// approving activates exactly what the diff showed (not only the newest
// widening).
func TestTwoWidensThenApproveActivateExactlyTheDiff(t *testing.T) {
	s, ctx := enforced(t)
	d1 := s.Check(ctx, cron, term("curl -X POST https://up.example.net/x"))
	d2 := s.Check(ctx, cron, term("git diff --stat"))
	require.Equal(t, Block, d1.Verdict)
	require.Equal(t, Block, d2.Verdict)
	_, err := s.Widen(ctx, "j", d1.DriftID, true)
	require.NoError(t, err)
	w2, err := s.Widen(ctx, "j", d2.DriftID, false)
	require.NoError(t, err)
	// widen's diff is the whole pending version, the earlier widening too.
	assert.Contains(t, rulesOfDiff(w2.Diff)[FamilyCommands], "curl -*")
	assert.Contains(t, rulesOfDiff(w2.Diff)[FamilyHosts], "*.example.net")

	diff, err := s.Diff(ctx, "j")
	require.NoError(t, err)
	assert.Equal(t, w2.Diff.PendingSHA256, diff.PendingSHA256)
	assert.Equal(t, w2.Version.SHA256, diff.PendingSHA256)
	_, err = s.ApproveReviewed(ctx, "j", 0, diff.PendingSHA256[:12], "rev")
	require.NoError(t, err)
	assert.Equal(t, rulesOfDiff(diff), activeRules(t, s, "j"))
}

// A version that changed since the review is not approved by accident.
func TestApproveReviewedRefusesAChangedVersion(t *testing.T) {
	s, ctx := enforced(t)
	d1 := s.Check(ctx, cron, term("git diff --stat"))
	_, err := s.Widen(ctx, "j", d1.DriftID, false)
	require.NoError(t, err)
	seen, err := s.Diff(ctx, "j")
	require.NoError(t, err)
	d2 := s.Check(ctx, cron, term("curl https://evil.example/x"))
	_, err = s.Widen(ctx, "j", d2.DriftID, false) // someone widens after the review
	require.NoError(t, err)
	_, err = s.ApproveReviewed(ctx, "j", 0, seen.PendingSHA256[:12], "rev")
	require.ErrorIs(t, err, ErrSHAMismatch)
	_, err = s.ApproveReviewed(ctx, "j", 0, "abc", "rev")
	require.Error(t, err, "a prefix shorter than MinSHAPrefix is refused")
	assert.Equal(t, Block, s.Check(ctx, cron, term("curl https://evil.example/x")).Verdict, "nothing was activated")
	v, ok, err := s.Active(ctx, "j")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 1, v.Number)
}

func TestDiffCountsDistinctCallsAndAttributesThem(t *testing.T) {
	s, ctx := enforced(t)
	var id string
	for i := 0; i < 3; i++ { // the same call three times, in three runs
		d := s.Check(ctx, Run{Job: "j", ID: fmt.Sprintf("c%d", i), Mode: RunCron}, term("git push --tags"))
		id = d.DriftID
	}
	s.Check(ctx, cron, term("git push -u origin x"))
	s.Check(ctx, cron, term("curl https://other.example/x")) // not git push
	res, err := s.Widen(ctx, "j", id, true)
	require.NoError(t, err)
	cmds := res.Diff.Families[2]
	require.Equal(t, FamilyCommands, cmds.Family)
	require.Len(t, cmds.Added, 1)
	assert.Equal(t, "git push -*", cmds.Added[0].Rule)
	assert.Equal(t, 2, cmds.Added[0].NewlyAllows, "counted once per distinct call")
	assert.Equal(t, []string{"git push --tags", "git push -u origin x"}, cmds.Added[0].Examples)
	assert.Equal(t, 2, res.Preview.NewlyAllowed)
}

func TestWidenDryRunWritesNothing(t *testing.T) {
	s, ctx := enforced(t)
	d := s.Check(ctx, cron, term("git push --tags"))
	before := dbDump(t, s)
	res, err := s.WidenDryRun(ctx, "j", d.DriftID, true)
	require.NoError(t, err)
	assert.True(t, res.DryRun)
	assert.Equal(t, 2, res.Version.Number)
	assert.Equal(t, "git push -*", res.Diff.Families[2].Added[0].Rule)
	assert.Equal(t, before, dbDump(t, s), "a dry run changes no row")
	res, err = s.WidenDryRun(ctx, "j", d.DriftID, false)
	require.NoError(t, err)
	assert.Equal(t, before, dbDump(t, s))
}

// dbDump is every row of the tables a review may change.
func dbDump(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT version || status || sha256 FROM versions ORDER BY job, version`,
		`SELECT n || status || COALESCE(widened_version, '') || count FROM drift ORDER BY job, n`,
		`SELECT id || action FROM audit ORDER BY id`,
		`SELECT id FROM calls ORDER BY id`,
		`SELECT name || mode || COALESCE(active_version, '') FROM jobs ORDER BY name`,
	} {
		rows, err := s.db.Query(q)
		require.NoError(t, err)
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			out = append(out, v)
		}
		require.NoError(t, rows.Close())
	}
	return out
}

func TestDiscardDropsThePendingVersion(t *testing.T) {
	s, ctx := enforced(t)
	d := s.Check(ctx, cron, term("git push --tags"))
	w, err := s.Widen(ctx, "j", d.DriftID, false)
	require.NoError(t, err)
	v, err := s.Discard(ctx, "j", "bob")
	require.NoError(t, err)
	assert.Equal(t, w.Version.Number, v.Number)
	diff, err := s.Diff(ctx, "j")
	require.NoError(t, err)
	assert.Zero(t, diff.Pending)
	_, err = s.ApproveReviewed(ctx, "j", v.Number, v.SHA256, "bob")
	require.ErrorIs(t, err, ErrNotReapprovable)
	ds, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	assert.Zero(t, ds[0].WidenedBy, "the drift record is open again")
	_, err = s.Discard(ctx, "j", "bob")
	require.ErrorIs(t, err, ErrNoPending)
}

func TestProbeRecordsNothing(t *testing.T) {
	s, ctx := enforced(t)
	before := dbDump(t, s)
	assert.Equal(t, Block, s.Probe(ctx, cron, term("curl https://evil.example/")).Verdict)
	assert.Equal(t, Allow, s.Probe(ctx, cron, term("git status")).Verdict)
	assert.Equal(t, before, dbDump(t, s))
	// In observe mode too, and for a job never seen.
	_, err := s.Undo(ctx, "j", "x")
	require.NoError(t, err)
	before = dbDump(t, s)
	assert.Equal(t, Allow, s.Probe(ctx, cron, term("curl https://probe.example/")).Verdict)
	assert.Equal(t, Allow, s.Probe(ctx, Run{Job: "new", ID: "r", Mode: RunCron}, term("ls")).Verdict)
	assert.Equal(t, before, dbDump(t, s))
	v, err := s.Compile(ctx, "j")
	require.NoError(t, err)
	assert.NotContains(t, v.Text, "probe.example", "a compile after undo learns nothing from probes")
}

func TestDriftFoldsAndCloses(t *testing.T) {
	s, ctx := enforced(t)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, s.Check(ctx, Run{Job: "j", ID: fmt.Sprintf("c%d", i), Mode: RunCron}, term("git push --force")).DriftID)
	}
	assert.Equal(t, []string{"d-1", "d-1", "d-1"}, ids)
	ds, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, 3, ds[0].Count)
	assert.Equal(t, "c0", ds[0].Run)
	assert.Equal(t, "c2", ds[0].LastRun)
	assert.True(t, !ds[0].LastSeen.Before(ds[0].Time))

	require.ErrorIs(t, s.CloseDrift(ctx, "j", []string{"d-1"}, DriftResolved, " ", "bob"), ErrNoReason)
	require.ErrorIs(t, s.CloseDrift(ctx, "j", []string{"d-1", "d-9"}, DriftResolved, "fixed", "bob"), ErrUnknownDrift)
	ds, _ = s.Drift(ctx, "j")
	assert.Equal(t, DriftOpen, ds[0].Status, "all or nothing")
	require.NoError(t, s.CloseDrift(ctx, "j", []string{"d-1"}, DriftResolved, "the job was fixed", "bob"))
	require.ErrorIs(t, s.CloseDrift(ctx, "j", []string{"d-1"}, DriftDismissed, "x", "bob"), ErrDriftClosed)
	_, err = s.Widen(ctx, "j", "d-1", false)
	require.ErrorIs(t, err, ErrDriftClosed)
	ds, _ = s.Drift(ctx, "j")
	assert.Equal(t, []string{DriftResolved, "bob", "the job was fixed"}, []string{ds[0].Status, ds[0].ClosedBy, ds[0].ClosedReason})
	jobs, err := s.Jobs(ctx)
	require.NoError(t, err)
	assert.Zero(t, jobs[0].OpenDrift)
	// The same call later is a new record.
	assert.Equal(t, "d-2", s.Check(ctx, cron, term("git push --force")).DriftID)
	// Different verdicts do not fold.
	require.NoError(t, s.SetInteractiveViolation(ctx, "j", ViolationApprove))
	assert.Equal(t, "d-3", s.Check(ctx, interactive, term("git push --force")).DriftID)
}

func TestReapproveAfterUndo(t *testing.T) {
	s, ctx := enforced(t)
	d := s.Check(ctx, cron, term("git push --tags"))
	w, err := s.Widen(ctx, "j", d.DriftID, false)
	require.NoError(t, err)
	_, err = s.Approve(ctx, "j", 0, "a")
	require.NoError(t, err)
	for range 2 {
		_, err = s.Undo(ctx, "j", "a")
		require.NoError(t, err)
	}
	_, ok, err := s.Active(ctx, "j")
	require.NoError(t, err)
	require.False(t, ok, "back in observe mode")
	v, err := s.ApproveReviewed(ctx, "j", w.Version.Number, w.Version.SHA256[:8], "a")
	require.NoError(t, err, "an earlier approved version stays approvable after undo")
	assert.True(t, v.Active)
	assert.Equal(t, Allow, s.Check(ctx, cron, term("git push --tags")).Verdict)
	_, err = s.Approve(ctx, "j", w.Version.Number, "a")
	require.ErrorIs(t, err, ErrNoPending, "the active version is not approved twice")
}

func TestViolationIsTheJobsElseTheProfiles(t *testing.T) {
	s, ctx := enforced(t)
	outside := term("git push --force")
	withProfile := func(v string) Run { r := interactive; r.Violation = v; return r }
	assert.Equal(t, Block, s.Check(ctx, withProfile(""), outside).Verdict, "neither says: block")
	assert.Equal(t, Escalate, s.Check(ctx, withProfile(ViolationApprove), outside).Verdict, "the profile's applies without a job setting")
	require.NoError(t, s.SetInteractiveViolation(ctx, "j", ViolationBlock))
	assert.Equal(t, Block, s.Check(ctx, withProfile(ViolationApprove), outside).Verdict, "the job's setting wins over the profile's")
	require.NoError(t, s.SetInteractiveViolation(ctx, "j", ViolationApprove))
	assert.Equal(t, Escalate, s.Check(ctx, withProfile(ViolationBlock), outside).Verdict, "the job's setting wins over the profile's")
	jobs, err := s.Jobs(ctx)
	require.NoError(t, err)
	assert.Equal(t, ViolationApprove, jobs[0].InteractiveViolation)
	require.NoError(t, s.SetInteractiveViolation(ctx, "j", ViolationFromProfile))
	jobs, err = s.Jobs(ctx)
	require.NoError(t, err)
	assert.Empty(t, jobs[0].InteractiveViolation)
	assert.Equal(t, Block, s.Check(ctx, withProfile(ViolationBlock), outside).Verdict)
	assert.Equal(t, Block, s.Check(ctx, Run{Job: "j", ID: "c", Mode: RunCron, Violation: ViolationApprove}, outside).Verdict, "cron never escalates")

	v, src := ResolveViolation("", "nonsense")
	assert.Equal(t, []string{ViolationBlock, ViolationFromProfile}, []string{v, src}, "an unknown value blocks")
}

// The rules a "-*" rule, assignments and outside paths leave no way out
// through, attacked call by call.
func TestRulesCannotHideAWayOut(t *testing.T) {
	ws := "/work/repo"
	tests := []struct {
		rule, call string
		allowed    bool
	}{
		{"git diff -*", "git diff --stat --color HEAD~1", true},
		{"git diff -*", "git diff --frobnicate", false}, // unknown to the grammar: what cannot be ruled out is present
		{"git diff -* --frobnicate", "git diff --frobnicate", true},
		{"git diff -*", "git diff --output=reports/x.patch", false},
		{"git diff -*", "git diff --out=reports/x.patch", false}, // an abbreviation is the option
		{"git diff -* --output", "git diff --output=reports/x.patch", true},
		{"git diff -*", "git -c core.pager=sh diff", false},
		{"git diff -*", "git diff HEAD /etc/shadow", false},
		{"git diff -*", "git diff HEAD ../other/repo", false},
		{"git diff -*", "git diff HEAD src/a.go", true},
		{"sort -* -o", "sort -o/etc/cron.d/x in.txt", false}, // a value attached to a short option
		{"sort -* -o", "sort -o reports/x in.txt", true},
		{"make test", "make test CFLAGS+=-I/etc", false},
		{"make test CFLAGS+=-I/etc", "make test CFLAGS+=-I/etc", true},
		{"make test", "make test SHELL=/bin/bash BASH_ENV=reports/notes.md", false},
		{"make test", "make test BASH_ENV=reports/notes.md", false},
		{"make test", "make SHELL=/bin/sh test", false},
		{"make test", "make test", true},
		{"make test -*", "make test -f /tmp/Makefile", false},
		{"make test -*", "make test --eval=x", false},
		{"make test -*", "make test -j4", true},
		{"dd", "dd if=a of=/dev/sda", false},
		{"make test", "make test CFLAGS+=-O2", false},
		{"make test", "make test .SHELLFLAGS=-ec", false},
		{"tar -*", "tar -c -f out.tar --to-command=sh src", false},
		{"go test -*", "go test -exec=sh ./...", false},
		{"go test -*", "go test -toolexec sh ./...", false},
		{"go test -*", "go test -race -v -run TestX ./...", true},
		{"env GOFLAGS: go test -*", "GOFLAGS=-race go test -v ./...", true},
		{"curl -*", "curl -o out https://api.github.com/", false},
		{"curl -*", "curl -s https://api.github.com/", true},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" / "+tt.call, func(t *testing.T) {
			m := &Mandate{Job: "j", Tools: []Rule{{Value: ToolTerminal}}, Commands: []Rule{{Value: tt.rule}},
				Paths: []Rule{{Value: "src/**"}, {Value: "reports/**"}}, Hosts: []Rule{{Value: "api.github.com"}}}
			m2, err := Load(m.Marshal())
			require.NoError(t, err)
			f, err := extract(Call{Tool: ToolTerminal, Command: tt.call, Workspace: ws}, defaultParse)
			require.NoError(t, err)
			fails := NewMatcher(m2).Evaluate(f, 0)
			assert.Equal(t, tt.allowed, len(fails) == 0, "%+v", fails)
		})
	}
}

// A pattern widening names the risky options the call used, and the diff
// reports what they reach.
func TestPatternWidenNamesRiskyOptions(t *testing.T) {
	s, ctx := enforced(t)
	d := s.Check(ctx, cron, Call{Tool: ToolTerminal, Command: "git diff --output=src/x.patch --stat"})
	require.Equal(t, Block, d.Verdict)
	res, err := s.Widen(ctx, "j", d.DriftID, true)
	require.NoError(t, err)
	var rules []string
	var reach []Reach
	for _, rc := range res.Diff.Families[2].Added {
		rules = append(rules, rc.Rule)
		reach = append(reach, rc.Reach...)
	}
	assert.Equal(t, []string{"git diff -* --output"}, rules)
	assert.Contains(t, reach, Reach{Kind: ReachWrite, Detail: "option --output writes a file or device"})
}

func TestDiffReach(t *testing.T) {
	from := &Mandate{Job: "j", Commands: []Rule{{Value: "git push --force"}}, Paths: []Rule{{Value: "src/a.go"}}, Hosts: []Rule{{Value: "api.github.com"}}}
	to := &Mandate{Job: "j", Commands: []Rule{{Value: "git push -*"}, {Value: "env LD_PRELOAD: ls"}, {Value: "=bash -c \"$X\""}, {Value: "make test SHELL=/bin/bash"}, {Value: "tar -cf"}, {Value: "git diff -c"}},
		Paths: []Rule{{Value: "src/**"}}, Hosts: []Rule{{Value: "*.github.com"}, {Value: "evil.example"}}, Tools: []Rule{{Value: "patch"}}, MaxWritesPerRun: 2}
	d := DiffMandates(from, to, nil)
	kinds := map[string][]string{}
	for _, f := range d.Families {
		for _, rc := range append(slices.Clone(f.Added), f.Changed...) {
			for _, r := range rc.Reach {
				kinds[rc.Rule] = append(kinds[rc.Rule], r.Kind)
			}
		}
	}
	assert.Equal(t, []string{ReachNewTool}, kinds["patch"])
	assert.Equal(t, []string{ReachWrite, ReachBroader}, kinds["src/**"])
	assert.Equal(t, []string{ReachNewHost, ReachBroader}, kinds["*.github.com"])
	assert.Equal(t, []string{ReachNewHost}, kinds["evil.example"])
	assert.Equal(t, []string{ReachBroader}, kinds["git push -*"])
	assert.Equal(t, []string{ReachExec}, kinds["env LD_PRELOAD: ls"])
	assert.Equal(t, []string{ReachExec}, kinds[`=bash -c "$X"`])
	assert.Equal(t, []string{ReachExec, ReachExec}, kinds["make test SHELL=/bin/bash"])
	assert.Equal(t, []string{ReachWrite}, kinds["tar -cf"], "a cluster is read as its options: -f writes the archive")
	assert.Equal(t, []string{ReachConfig}, kinds["git diff -c"], "git's global -c, which a rule writes after the subcommand")
	// git push -* replaces git push --force: a change, not an addition.
	cmds := d.Families[2]
	require.Len(t, cmds.Changed, 1)
	assert.Equal(t, []string{"git push --force"}, cmds.Changed[0].Replaces)
	assert.Empty(t, cmds.Removed)
	assert.Equal(t, 0, d.MaxWritesFrom)
	assert.Equal(t, 2, d.MaxWritesTo)
}

// A store written by the previous schema migrates with its drift and
// settings kept.
func TestMigrationKeepsDriftAndSettings(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBName))
	require.NoError(t, err)
	tx, err := db.Begin()
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		_, err = tx.Exec(migrations[i])
		require.NoError(t, err)
	}
	_, err = tx.Exec(`PRAGMA user_version = 2`)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO jobs(name, mode, interactive_violation, created) VALUES ('a', 'observe', 'approve', 't'), ('b', 'observe', 'block', 't'), ('c', 'observe', 'block', 't')`,
		`INSERT INTO audit(time, job, actor, action, detail) VALUES ('t', 'b', 'cli', 'set', 'interactive_violation=block')`,
		`INSERT INTO runs(job, id, started, mode) VALUES ('a', 'r', 't', 'cron')`,
		`INSERT INTO calls(job, run, seq, tool, call_text, facts, wrote, outcome, time) VALUES ('a', 'r', 1, 'terminal', 'ls', '{}', 0, 'blocked', 't')`,
		`INSERT INTO drift(job, n, time, run, call_id, families, failures, call_text, reason, verdict, status) VALUES ('a', 1, 't1', 'r', 1, '["commands"]', '[]', 'ls', 'x', 'block', 'open')`,
	} {
		_, err = tx.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Close())

	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	jobs, err := s.Jobs(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"approve", "block", ""}, []string{jobs[0].InteractiveViolation, jobs[1].InteractiveViolation, jobs[2].InteractiveViolation},
		"an explicit setting stays the job's; the old default becomes the profile's")
	ds, err := s.Drift(t.Context(), "a")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, []any{"d-1", 1, "r", DriftOpen}, []any{ds[0].ID, ds[0].Count, ds[0].LastRun, ds[0].Status})
}

func TestProgramExecutes(t *testing.T) {
	for _, p := range []string{"bash", "python3", "perl", "node", "awk", "make", "xargs", "env", "nohup"} {
		assert.True(t, programExecutes(p), p)
	}
	for _, p := range []string{"git", "ls", "cat", "curl", "grep", "unknown-tool"} {
		assert.False(t, programExecutes(p), p)
	}
}

func TestStarRuleNamesRiskyOptionsCanonically(t *testing.T) {
	for in, want := range map[string]string{
		"sort -* -o":          "sort -* --output",
		"sort -* --out":       "sort -* --output",  // a unique abbreviation, as sort reads it
		"git diff -* --out":   "git diff -* --out", // ambiguous (--output, --output-directory): kept as written
		"make test -* -f":     "make test -* --file",
		"tool -* -x":          "tool -* -x", // unknown program: kept as written
		"git diff --stat -*":  "git diff -* --stat",
		"curl -o --output -s": "curl --output -o -s", // without -*: flags as written
	} {
		got, err := canonRule(FamilyCommands, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

// TestDriftFoldsOnlyIdenticalFailures: redaction hides a secret-looking
// word of the call text ("token x"), so two calls that differ only there
// read the same; they fold only when they failed the same way, and a
// different failure keeps its own record instead of overwriting the first.
func TestDriftFoldsOnlyIdenticalFailures(t *testing.T) {
	s, ctx := enforced(t)
	a := s.Check(ctx, cron, term("curl --oauth2-bearer token https://a.example/"))
	b := s.Check(ctx, cron, term("curl --oauth2-bearer token https://b.example/"))
	again := s.Check(ctx, cron, term("curl --oauth2-bearer token https://a.example/"))
	require.NotEmpty(t, a.DriftID)
	assert.NotEqual(t, a.DriftID, b.DriftID, "another host is another record")
	assert.Equal(t, a.DriftID, again.DriftID, "the same call folds")
	ds, err := s.Drift(ctx, "j")
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, ds[0].Call, ds[1].Call, "the redacted texts are the same")
	hosts := map[string]int{}
	for _, d := range ds {
		for _, f := range d.failures {
			if f.Family == "hosts" {
				hosts[f.Value] = d.Count
			}
		}
	}
	assert.Equal(t, map[string]int{"a.example": 2, "b.example": 1}, hosts)
}
