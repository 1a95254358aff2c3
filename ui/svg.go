package ui

import (
	"fmt"
	"strings"

	"github.com/tether-dev/tether/mandate"
)

// Geometry of the Leash Line drawing, in viewBox units. The SVG scales to
// the window's width; these only fix proportions.
const (
	svgLabelW   = 104 // family name column
	svgTrackH   = 70  // one track
	svgBaseline = 44  // the band's baseline within a track
	svgBarUnit  = 4   // bar height per evidence level (levels 1–8)
	svgBarW     = 8
	svgBarStep  = 11
	svgDiamond  = 7 // half-diagonal of a pending diamond
	svgMarkStep = 20
	svgMinW     = 480
	svgPad      = 12
)

// svgMark is one glyph: a bar (allowed), a diamond (pending), a downward
// notch (blocked) or an upward triangle (widened). The shapes differ, so
// the kinds read without colour.
type svgMark struct {
	Kind mandate.MarkKind
	// Rect is set for bars; Points for the polygons.
	X, Y, W, H int
	Points     string
	Title      string // the tooltip and accessible name
	Drift      string // drift id of blocked and widened marks
	Label      string // text under a drift mark (its id)
	LabelX     int
	LabelY     int
}

// svgTrack is one family's line.
type svgTrack struct {
	Family   string
	Y        int // top of the track
	LabelY   int
	Baseline int
	StartX   int // where the band starts, after the family name
	EndX     int
	Marks    []svgMark
	Summary  string // counts, for the accessible description
}

// leashSVG is the laid-out Leash Line.
type leashSVG struct {
	Width, Height int
	// DisplayW and DisplayH are the drawing's natural size in CSS pixels
	// (1.5× the viewBox); style.css shrinks it to narrower windows.
	DisplayW, DisplayH int
	Tracks             []svgTrack
	Desc               string
}

// layoutLeash places every mark of ll. It draws only what ll holds: the
// same data as the terminal renderings.
func layoutLeash(ll mandate.LeashLine) leashSVG {
	tracks := ll.Tracks
	if len(ll.Other) > 0 {
		tracks = append(append([]mandate.Track(nil), tracks...), mandate.Track{Family: "other", Marks: ll.Other})
	}
	out := leashSVG{Width: svgMinW}
	var desc []string
	for i, t := range tracks {
		top := i * svgTrackH
		base := top + svgBaseline
		st := svgTrack{Family: t.Family, Y: top, LabelY: base - 6, Baseline: base, StartX: svgLabelW}
		x := svgLabelW
		c := map[mandate.MarkKind]int{}
		for _, m := range t.Marks {
			c[m.Kind]++
			sm := svgMark{Kind: m.Kind, Drift: m.Drift}
			switch m.Kind {
			case mandate.MarkAllowed:
				h := min(max(m.Level, 1), 8) * svgBarUnit
				sm.X, sm.Y, sm.W, sm.H = x, base-h, svgBarW, h
				sm.Title = fmt.Sprintf("allowed %s rule: %s (seen %dx)", t.Family, m.Label, m.Seen)
				x += svgBarStep
			case mandate.MarkPending:
				cx, cy := x+svgDiamond, base-svgDiamond-4
				sm.Points = fmt.Sprintf("%d,%d %d,%d %d,%d %d,%d", cx, cy-svgDiamond, cx+svgDiamond, cy, cx, cy+svgDiamond, cx-svgDiamond, cy)
				sm.Title = fmt.Sprintf("pending %s rule: %s", t.Family, m.Label)
				x += 2*svgDiamond + 6
			case mandate.MarkBlocked, mandate.MarkWidened:
				// A label wide enough for the drift id sets the step.
				step := max(svgMarkStep, 7*len(m.Drift)+8)
				cx := x + step/2
				if m.Kind == mandate.MarkBlocked {
					// A notch: a triangle pointing down into the band.
					sm.Points = fmt.Sprintf("%d,%d %d,%d %d,%d", cx-7, base-20, cx+7, base-20, cx, base-2)
					sm.Title = fmt.Sprintf("%s blocked (%s): %s", m.Drift, t.Family, m.Call)
				} else {
					sm.Points = fmt.Sprintf("%d,%d %d,%d %d,%d", cx-7, base-2, cx+7, base-2, cx, base-20)
					sm.Title = fmt.Sprintf("%s widened (%s): %s", m.Drift, t.Family, m.Call)
				}
				if t.Family == "other" {
					sm.Title = fmt.Sprintf("%s blocked (%s, no rule can cover it): %s", m.Drift, m.Label, m.Call)
				}
				sm.Label, sm.LabelX, sm.LabelY = m.Drift, cx, base+16
				x += step
			default:
				continue
			}
			st.Marks = append(st.Marks, sm)
		}
		st.EndX = max(x, svgLabelW+40)
		st.Summary = fmt.Sprintf("%s: %d allowed, %d pending, %d blocked, %d widened",
			t.Family, c[mandate.MarkAllowed], c[mandate.MarkPending], c[mandate.MarkBlocked], c[mandate.MarkWidened])
		desc = append(desc, st.Summary)
		out.Width = max(out.Width, x+svgPad)
		out.Tracks = append(out.Tracks, st)
	}
	for i := range out.Tracks {
		out.Tracks[i].EndX = out.Width - svgPad
	}
	out.Height = max(len(tracks), 1)*svgTrackH + 4
	out.DisplayW, out.DisplayH = out.Width*3/2, out.Height*3/2
	out.Desc = strings.Join(desc, "; ") + "."
	return out
}
