package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tether-dev/tether/mandate"
)

// hostilePage is a job page whose every store-supplied text is s: the job
// name, rule values, drift calls, reasons, runs and families, and version
// sources. Fields that choose the page's structure (ids, statuses, counts)
// are fixed.
func hostilePage(s string) jobPage {
	active := &mandate.Mandate{
		Tools: []mandate.Rule{{Value: "terminal", Seen: 4}}, Paths: []mandate.Rule{{Value: s, Seen: 2}},
		Commands: []mandate.Rule{{Value: s + " -*", Seen: 1}}, MaxWritesPerRun: 2,
	}
	pending := &mandate.Mandate{Tools: active.Tools, Paths: active.Paths, Commands: active.Commands,
		Hosts: []mandate.Rule{{Value: s, Seen: 1}}, MaxWritesPerRun: 2}
	drift := []mandate.DriftRecord{
		{ID: "d-1", Families: []string{mandate.FamilyHosts, s}, Call: s, Reason: s, Run: s, Status: "widened", WidenedBy: 3},
		{ID: "d-2", Families: []string{mandate.FamilyPaths}, Call: s, Reason: s, Run: s, Status: "open"},
		{ID: "d-3", Families: []string{mandate.FamilyRun}, Call: s, Reason: s, Run: s, Status: "open"},
	}
	ll := mandate.BuildLeash(mandate.LeashLine{Job: s, Mode: "enforce", ActiveVersion: 2, PendingVersion: 3}, active, pending, drift)
	md := mandate.DiffMandates(active, pending, []mandate.RecordedCall{{Text: s, Facts: mandate.Facts{Tool: s, Hosts: []string{s}}}})
	md.Pending, md.Approved, md.Source = 3, 2, s
	diff := fromDiff(md)
	newest := make([]mandate.DriftRecord, len(drift))
	for i, d := range drift {
		newest[len(drift)-1-i] = d
	}
	t := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	return jobPage{
		Title: "Mandate of " + s,
		Job:   mandate.Job{Name: s, Mode: "enforce", ActiveVersion: 2, PendingVersion: 3, InteractiveViolation: "block", Calls: 9, Runs: 2, OpenDrift: 2},
		Leash: ll, SVG: layoutLeash(ll), Diff: diff, Drift: newest,
		Versions: []mandate.Version{{Job: s, Number: 2, Status: mandate.StatusApproved, Active: true, Source: s, SHA256: "ab", Created: t, ApprovedAt: t, ApprovedBy: s}},
		LastRun:  t, Ago: "1 h ago", Token: "t", DriftURL: jobURL(s) + "/drift.json", RefreshMS: 5000,
	}
}

// shape is the page's element structure: tag names and attribute names in
// document order, which hostile text must never change.
func shape(t testing.TB, body []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	require.NoError(t, err)
	var out []string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		e := n.Data
		for _, a := range n.Attr {
			e += " " + a.Key
		}
		out = append(out, e)
	}
	return out
}

// FuzzJobPageEscapes renders the job page with hostile text everywhere the
// store supplies text and checks that the page keeps exactly the structure
// it has with harmless text: no element, attribute or script injected.
func FuzzJobPageEscapes(f *testing.F) {
	for _, s := range []string{
		"x", `<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `</title><script>alert(1)</script>`,
		`]]><svg onload=alert(1)>`, `javascript:alert(1)`, `</code></td></tr></table><form action=/x>`,
		"{{.Job}}", `' onmouseover='alert(1)`, "<!--", "]]>", "&lt;script&gt;", "\u2028\u2029", "",
	} {
		f.Add(s)
	}
	pages := parsePages()
	render := func(t testing.TB, s string) []byte {
		var buf bytes.Buffer
		require.NoError(t, pages["job"].ExecuteTemplate(&buf, "base", hostilePage(s)))
		return buf.Bytes()
	}
	base := shape(f, render(f, "x"))
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r") {
			// The store holds UTF-8 text; the HTML parser rewrites NUL
			// and CR, which would make shapes differ for no injection.
			t.Skip()
		}
		got := shape(t, render(t, s))
		require.Equal(t, base, got, "hostile text %q changed the page's structure", s)
	})
}
