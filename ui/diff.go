package ui

import (
	"github.com/tether-dev/tether/mandate"
)

// Change says how a rule differs between the approved and the pending
// version.
type Change string

// Changes, in the order a family's rows are listed.
const (
	Added     Change = "added"
	Changed   Change = "changed"
	Removed   Change = "removed"
	Unchanged Change = "unchanged"
)

// diffRow is one rule of a family in the pending diff.
type diffRow struct {
	Change Change
	Rule   string
	// Seen is the evidence written with the rule: the pending version's for
	// added, changed and unchanged rules, the approved one's for removed
	// rules.
	Seen int
	// Replaces, NewlyAllows, Examples and Reach are those of
	// mandate.RuleChange for added and changed rules.
	Replaces    []string
	NewlyAllows int
	Examples    []string
	Reach       []mandate.Reach
}

// familyDiff is the pending diff of one family.
type familyDiff struct {
	Family                             string
	Rows                               []diffRow
	Added, Changed, Removed, Unchanged int
}

// pendingDiff is mandate.Diff laid out for the page.
type pendingDiff struct {
	Pending  int // 0 when there is no pending version
	Approved int // 0 when nothing is active (observe mode)
	Families []familyDiff
	// MaxWrites holds max_writes_per_run of the approved and the pending
	// version.
	MaxWritesFrom, MaxWritesTo int
	Source                     string // how the pending version was made
	PendingSHA                 string
	NewlyAllows                int
}

// fromDiff lays out the store's diff (the same one `tether mandate diff`
// prints): per family added, changed, removed, then unchanged rules.
func fromDiff(d mandate.Diff) pendingDiff {
	p := pendingDiff{Pending: d.Pending, Approved: d.Approved, MaxWritesFrom: d.MaxWritesFrom, MaxWritesTo: d.MaxWritesTo,
		Source: d.Source, PendingSHA: d.PendingSHA256, NewlyAllows: d.NewlyAllows}
	if d.Pending == 0 {
		return p
	}
	for _, f := range d.Families {
		fd := familyDiff{Family: f.Family, Added: len(f.Added), Changed: len(f.Changed), Removed: len(f.Removed), Unchanged: len(f.Unchanged)}
		row := func(c Change, rc mandate.RuleChange) diffRow {
			return diffRow{Change: c, Rule: rc.Rule, Seen: rc.Evidence, Replaces: rc.Replaces, NewlyAllows: rc.NewlyAllows,
				Examples: rc.Examples, Reach: rc.Reach}
		}
		for _, rc := range f.Added {
			fd.Rows = append(fd.Rows, row(Added, rc))
		}
		for _, rc := range f.Changed {
			fd.Rows = append(fd.Rows, row(Changed, rc))
		}
		for _, r := range f.Removed {
			fd.Rows = append(fd.Rows, diffRow{Change: Removed, Rule: r.Value, Seen: r.Seen})
		}
		for _, r := range f.Unchanged {
			fd.Rows = append(fd.Rows, diffRow{Change: Unchanged, Rule: r.Value, Seen: r.Seen})
		}
		p.Families = append(p.Families, fd)
	}
	return p
}
