package ui

import (
	"fmt"

	"github.com/tether-dev/tether/mandate"
)

// Change says how a rule differs between the approved and the pending
// version.
type Change string

// Changes, in the order a family's rows are listed.
const (
	Added     Change = "added"
	Removed   Change = "removed"
	Unchanged Change = "unchanged"
)

// diffRow is one rule of a family in the pending diff.
type diffRow struct {
	Change Change
	Rule   string
	// Seen is the evidence written with the rule: the pending version's for
	// added and unchanged rules, the approved one's for removed rules.
	Seen int
}

// familyDiff is the pending diff of one family.
type familyDiff struct {
	Family                    string
	Rows                      []diffRow
	Added, Removed, Unchanged int
}

// pendingDiff compares the newest pending version with the active one.
type pendingDiff struct {
	Pending  int // 0 when there is no pending version
	Approved int // 0 when nothing is active (observe mode)
	Families []familyDiff
	// MaxWrites holds max_writes_per_run of the approved and the pending
	// version.
	MaxWritesFrom, MaxWritesTo int
	Source                     string // how the pending version was made
}

// diffVersions builds the pending diff from a job's versions (oldest first,
// as Store.Versions returns them).
func diffVersions(vs []mandate.Version) (pendingDiff, error) {
	var d pendingDiff
	var active, pending *mandate.Version
	for i := range vs {
		v := &vs[i]
		if v.Active {
			active = v
		}
		if v.Status == mandate.StatusPending && !v.Active {
			pending = v // the newest wins
		}
	}
	if pending == nil {
		return d, nil
	}
	d.Pending, d.Source = pending.Number, pending.Source
	to, err := mandate.Load([]byte(pending.Text))
	if err != nil {
		return d, fmt.Errorf("loading pending v%d: %w", pending.Number, err)
	}
	from := &mandate.Mandate{}
	if active != nil {
		d.Approved = active.Number
		if from, err = mandate.Load([]byte(active.Text)); err != nil {
			return d, fmt.Errorf("loading approved v%d: %w", active.Number, err)
		}
	}
	d.MaxWritesFrom, d.MaxWritesTo = from.MaxWritesPerRun, to.MaxWritesPerRun
	for _, f := range mandate.Families {
		d.Families = append(d.Families, diffFamily(f, rules(from, f), rules(to, f)))
	}
	return d, nil
}

// diffFamily lists added rules, then removed, then unchanged, each in the
// mandate's own (sorted) order.
func diffFamily(family string, from, to []mandate.Rule) familyDiff {
	fd := familyDiff{Family: family}
	inFrom := map[string]bool{}
	for _, r := range from {
		inFrom[r.Value] = true
	}
	inTo := map[string]bool{}
	for _, r := range to {
		inTo[r.Value] = true
	}
	for _, r := range to {
		if !inFrom[r.Value] {
			fd.Rows = append(fd.Rows, diffRow{Change: Added, Rule: r.Value, Seen: r.Seen})
			fd.Added++
		}
	}
	for _, r := range from {
		if !inTo[r.Value] {
			fd.Rows = append(fd.Rows, diffRow{Change: Removed, Rule: r.Value, Seen: r.Seen})
			fd.Removed++
		}
	}
	for _, r := range to {
		if inFrom[r.Value] {
			fd.Rows = append(fd.Rows, diffRow{Change: Unchanged, Rule: r.Value, Seen: r.Seen})
			fd.Unchanged++
		}
	}
	return fd
}

func rules(m *mandate.Mandate, family string) []mandate.Rule {
	switch family {
	case mandate.FamilyTools:
		return m.Tools
	case mandate.FamilyPaths:
		return m.Paths
	case mandate.FamilyCommands:
		return m.Commands
	case mandate.FamilyHosts:
		return m.Hosts
	}
	return nil
}
