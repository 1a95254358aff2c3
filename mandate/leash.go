package mandate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// MarkKind is what a mark on a Leash Line track stands for.
type MarkKind string

// Mark kinds.
const (
	MarkAllowed MarkKind = "allowed" // an active rule; Level is its evidence
	MarkPending MarkKind = "pending" // a rule of the pending version not yet active
	MarkBlocked MarkKind = "blocked" // a drift record still open or escalated
	MarkWidened MarkKind = "widened" // a drift record whose widening was approved
)

// Mark is one glyph on a track.
type Mark struct {
	Kind  MarkKind `json:"kind"`
	Label string   `json:"label"`           // the rule, or the drift id
	Seen  int      `json:"seen,omitempty"`  // evidence of an allowed rule
	Level int      `json:"level,omitempty"` // 1–8 bar height of an allowed rule
	Drift string   `json:"drift,omitempty"` // drift id of a blocked or widened mark
	Call  string   `json:"call,omitempty"`  // redacted call of a drift mark
	// Access is, for a paths rule, what it allows: "read" or
	// "read-write" (PathModeName).
	Access string `json:"access,omitempty"`
}

// Track is one family's line.
type Track struct {
	Family string `json:"family"`
	Marks  []Mark `json:"marks"`
}

// LeashLine is the data behind `tether mandate status`: one track per family.
// Renderers (terminal, plain text, a browser's SVG) draw only what it holds.
type LeashLine struct {
	Job            string  `json:"job"`
	Mode           string  `json:"mode"`
	ActiveVersion  int     `json:"active_version,omitempty"`
	PendingVersion int     `json:"pending_version,omitempty"`
	MaxWrites      int     `json:"max_writes_per_run"`
	Calls          int     `json:"calls"`
	Tracks         []Track `json:"tracks"`
	// Other holds drift that no family's rules can cover: runs whose mode
	// was unknown, tampered text, evaluation failures.
	Other []Mark `json:"other,omitempty"`
	// Violation is the interactive_violation enforced for the job and
	// ViolationSource where it comes from (see ResolveViolation). The
	// store knows only the job's own setting; a caller that knows the
	// profile fills these in (Leash sets them from the job alone).
	Violation       string `json:"interactive_violation,omitempty"`
	ViolationSource string `json:"interactive_violation_source,omitempty"`
}

// Leash builds the Leash Line of job from its active and pending versions
// and its drift records.
func (s *Store) Leash(ctx context.Context, job string) (LeashLine, error) {
	j, err := s.job(ctx, s.db, job)
	if err != nil {
		return LeashLine{}, err
	}
	vs, err := s.versions(ctx, s.db, job)
	if err != nil {
		return LeashLine{}, err
	}
	drift, err := s.Drift(ctx, job)
	if err != nil {
		return LeashLine{}, err
	}
	ll := LeashLine{Job: job, Mode: j.mode}
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls WHERE job = ?`, job).Scan(&ll.Calls); err != nil {
		return ll, fmt.Errorf("counting calls: %w", err)
	}
	active, pending := &Mandate{}, &Mandate{}
	for _, v := range vs {
		var target *Mandate
		switch {
		case v.Active:
			ll.ActiveVersion, target = v.Number, active
		case v.Status == StatusPending:
			ll.PendingVersion, target = v.Number, pending
		default:
			continue
		}
		m, err := Load([]byte(v.Text))
		if err != nil {
			return ll, fmt.Errorf("loading %s v%d: %w", job, v.Number, err)
		}
		*target = *m
	}
	ll.MaxWrites = active.MaxWritesPerRun
	slices.Reverse(drift) // oldest first along the line
	return BuildLeash(ll, active, pending, drift), nil
}

// BuildLeash fills ll's tracks from the active and pending mandates and the
// drift records (oldest first).
func BuildLeash(ll LeashLine, active, pending *Mandate, drift []DriftRecord) LeashLine {
	maxSeen := 1
	for _, f := range Families {
		for _, r := range *active.family(f) {
			maxSeen = max(maxSeen, r.Seen)
		}
	}
	ll.Tracks = nil
	for _, f := range Families {
		t := Track{Family: f, Marks: []Mark{}}
		have := map[string]bool{}
		for _, r := range *active.family(f) {
			have[r.Value] = true
			lvl := (r.Seen*8 + maxSeen - 1) / maxSeen
			t.Marks = append(t.Marks, Mark{Kind: MarkAllowed, Label: r.Value, Seen: r.Seen, Level: min(max(lvl, 1), 8), Access: ruleAccess(f, r.Value)})
		}
		for _, r := range *pending.family(f) {
			if !have[r.Value] {
				t.Marks = append(t.Marks, Mark{Kind: MarkPending, Label: r.Value, Seen: r.Seen, Access: ruleAccess(f, r.Value)})
			}
		}
		for _, d := range drift {
			if !slices.Contains(d.Families, f) || d.Status == DriftResolved || d.Status == DriftDismissed {
				continue
			}
			k := MarkBlocked
			if d.Status == "widened" {
				k = MarkWidened
			}
			t.Marks = append(t.Marks, Mark{Kind: k, Label: d.ID, Drift: d.ID, Call: d.Call})
		}
		ll.Tracks = append(ll.Tracks, t)
	}
	ll.Other = nil
	for _, d := range drift {
		if slices.ContainsFunc(d.Families, func(f string) bool { return slices.Contains(Families, f) }) ||
			d.Status == DriftResolved || d.Status == DriftDismissed {
			continue
		}
		k := MarkBlocked
		if d.Status == "widened" {
			k = MarkWidened
		}
		ll.Other = append(ll.Other, Mark{Kind: k, Label: strings.Join(d.Families, ","), Drift: d.ID, Call: d.Call})
	}
	return ll
}

var bars = []rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// Glyphs of the Leash Line.
const (
	glyphPending = '◆'
	glyphBlocked = '▼'
	glyphWidened = '▲'
)

type rgb struct{ r, g, b int }

var (
	colGreen  = rgb{46, 204, 113}
	colYellow = rgb{241, 196, 15}
	colRed    = rgb{231, 76, 60}
	colDim    = rgb{140, 140, 140}
)

func paint(c rgb, s string) string {
	return fmt.Sprintf("\x1b[38;2;%d;%d;%dm%s\x1b[0m", c.r, c.g, c.b, s)
}

func (ll LeashLine) header() string {
	h := fmt.Sprintf("Leash Line — job %s (%s", ll.Job, ll.Mode)
	if ll.ActiveVersion > 0 {
		h += fmt.Sprintf(", v%d active", ll.ActiveVersion)
	}
	if ll.PendingVersion > 0 {
		h += fmt.Sprintf(", v%d pending", ll.PendingVersion)
	}
	if ll.ActiveVersion == 0 {
		return h + fmt.Sprintf(", no mandate: every call is allowed and recorded; %d calls recorded)", ll.Calls)
	}
	return h + fmt.Sprintf(", %d calls recorded, max %d writes per run)", ll.Calls, ll.MaxWrites)
}

func counts(t Track) map[MarkKind]int {
	c := map[MarkKind]int{}
	for _, m := range t.Marks {
		c[m.Kind]++
	}
	return c
}

// RenderANSI draws ll for a truecolor terminal; see Render.
func (ll LeashLine) RenderANSI(w io.Writer) error { return ll.Render(w, true) }

// RenderPlain draws ll without colour, in the same layout; see Render.
func (ll LeashLine) RenderPlain(w io.Writer) error { return ll.Render(w, false) }

// Render draws ll: a header, then per family its counts and band (green
// bars whose height is the evidence, yellow ◆ for pending rules, red ▼ for
// blocked calls, yellow ▲ for blocked calls later widened) and one line per
// mark naming the rule or the drift record and its call. color only adds
// truecolor escapes: the layout and text are the same either way, so
// NO_COLOR changes colours and nothing else.
func (ll LeashLine) Render(w io.Writer, color bool) error {
	p := func(c rgb, s string) string {
		if !color {
			return s
		}
		return paint(c, s)
	}
	var b strings.Builder
	b.WriteString(ll.header() + "\n")
	if ll.Violation != "" {
		fmt.Fprintf(&b, "interactive_violation: %s (%s)\n", ll.Violation, ll.ViolationSource)
	}
	b.WriteString("legend: " + p(colGreen, "▁▄█") + " allowed (height = evidence)  " + p(colYellow, "◆") + " pending  " +
		p(colRed, "▼") + " blocked  " + p(colYellow, "▲") + " widened\n")
	glyph := func(m Mark) string {
		switch m.Kind {
		case MarkAllowed:
			return p(colGreen, string(bars[min(max(m.Level, 1), 8)-1]))
		case MarkPending:
			return p(colYellow, string(glyphPending))
		case MarkBlocked:
			return p(colRed, string(glyphBlocked))
		}
		return p(colYellow, string(glyphWidened))
	}
	for _, t := range ll.Tracks {
		c := counts(t)
		fmt.Fprintf(&b, "\n%s: %d allowed, %d pending, %d blocked, %d widened  ", t.Family,
			c[MarkAllowed], c[MarkPending], c[MarkBlocked], c[MarkWidened])
		if len(t.Marks) == 0 {
			b.WriteString(p(colDim, "·"))
		}
		for _, m := range t.Marks {
			b.WriteString(glyph(m))
		}
		b.WriteString("\n")
		marks := slices.Clone(t.Marks)
		sort.SliceStable(marks, func(i, j int) bool { return kindOrder(marks[i].Kind) < kindOrder(marks[j].Kind) })
		for _, m := range marks {
			switch m.Kind {
			case MarkAllowed:
				fmt.Fprintf(&b, "  [%s] %-8s %s (seen %dx)\n", glyph(m), "allowed", m.Label, m.Seen)
			case MarkPending:
				fmt.Fprintf(&b, "  [%s] %-8s %s\n", glyph(m), "pending", m.Label)
			default:
				fmt.Fprintf(&b, "  [%s] %-8s %s\n", glyph(m), m.Drift, m.Call)
			}
		}
	}
	if len(ll.Other) > 0 {
		fmt.Fprintf(&b, "\nother (no rule can cover): %d blocked  ", len(ll.Other))
		for range ll.Other {
			b.WriteString(p(colRed, string(glyphBlocked)))
		}
		b.WriteString("\n")
		for _, m := range ll.Other {
			fmt.Fprintf(&b, "  [%s] %-8s %s — %s\n", p(colRed, string(glyphBlocked)), m.Drift, m.Label, m.Call)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func kindOrder(k MarkKind) int {
	switch k {
	case MarkAllowed:
		return 0
	case MarkPending:
		return 1
	case MarkBlocked:
		return 2
	}
	return 3
}
