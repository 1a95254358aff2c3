package mandate

import (
	"fmt"
	"io"
	"strings"
)

// ShortSHA is how many hex characters of a SHA-256 the review views show
// and suggest for `tether mandate approve --sha`.
const ShortSHA = 12

// Render writes d for a reviewer: per family the rules added (+), changed
// (~, with the rules they replace) and removed (-), each added or changed
// rule with the distinct recorded calls it newly allows (up to
// MaxPreviewExamples) and its reach, then max_writes_per_run and the
// pending version's SHA-256 to approve it by.
func (d Diff) Render(w io.Writer) error {
	var b strings.Builder
	if d.Pending == 0 {
		fmt.Fprintf(&b, "%s: no pending version", d.Job)
		if d.Approved > 0 {
			fmt.Fprintf(&b, " (v%d is active)", d.Approved)
		}
		b.WriteString("\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	against := "nothing approved (observe mode): every rule is new"
	if d.Approved > 0 {
		against = fmt.Sprintf("approved v%d (sha256 %s)", d.Approved, short(d.ApprovedSHA256))
	}
	fmt.Fprintf(&b, "%s: pending v%d (%s) against %s\n", d.Job, d.Pending, d.Source, against)
	fmt.Fprintf(&b, "pending sha256 %s\n", d.PendingSHA256)
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, f := range d.Families {
		var parts []string
		if n := len(f.Added); n > 0 {
			parts = append(parts, fmt.Sprintf("%d added", n))
		}
		if n := len(f.Changed); n > 0 {
			parts = append(parts, fmt.Sprintf("%d changed", n))
		}
		if n := len(f.Removed); n > 0 {
			parts = append(parts, fmt.Sprintf("%d removed", n))
		}
		if len(parts) == 0 {
			parts = append(parts, "no change")
		}
		fmt.Fprintf(&b, "\n%s: %s (%d unchanged)\n", f.Family, strings.Join(parts, ", "), len(f.Unchanged))
		for _, rc := range f.Added {
			renderChange(&b, "+", rc)
		}
		for _, rc := range f.Changed {
			renderChange(&b, "~", rc)
		}
		for _, r := range f.Removed {
			fmt.Fprintf(&b, "  - %s\n", r.Value)
		}
	}
	if d.MaxWritesFrom != d.MaxWritesTo {
		fmt.Fprintf(&b, "\n%s: %d -> %d\n", FamilyMaxWrites, d.MaxWritesFrom, d.MaxWritesTo)
	} else {
		fmt.Fprintf(&b, "\n%s: %d (unchanged)\n", FamilyMaxWrites, d.MaxWritesTo)
	}
	fmt.Fprintf(&b, "in all: newly allows %d distinct recorded call(s)\n", d.NewlyAllows)
	_, err := io.WriteString(w, b.String())
	return err
}

func renderChange(b *strings.Builder, sign string, rc RuleChange) {
	fmt.Fprintf(b, "  %s %s", sign, rc.Rule)
	if len(rc.Replaces) > 0 {
		fmt.Fprintf(b, " (replaces %s)", strings.Join(rc.Replaces, ", "))
	}
	fmt.Fprintf(b, "  # newly allows %d recorded call(s)\n", rc.NewlyAllows)
	for _, r := range rc.Reach {
		fmt.Fprintf(b, "      reach %s: %s\n", r.Kind, r.Detail)
	}
	for _, e := range rc.Examples {
		fmt.Fprintf(b, "      e.g. %s\n", e)
	}
}

func short(sha string) string {
	if len(sha) > ShortSHA {
		return sha[:ShortSHA]
	}
	return sha
}
