package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/ui"
)

// get serves one request through h and returns the recorded response.
func do(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:7878"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func parse(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	require.NoError(t, err)
	return doc
}

// findAll returns the elements under n for which match is true, in
// document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := range n.Descendants() {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func byTag(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

// routes are every path the UI answers for the seeded store.
var routes = []string{"/", "/jobs/" + seedJob, "/jobs/" + seedJob + "/drift.json", "/assets/style.css", "/assets/refresh.js"}

func TestRoutes(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	tests := []struct {
		path, ctype, contains string
	}{
		{"/", "text/html; charset=utf-8", `href="/jobs/nightly-triage"`},
		{"/jobs/" + seedJob, "text/html; charset=utf-8", "Leash Line"},
		{"/jobs/" + seedJob + "/drift.json", "application/json", `"job":"nightly-triage"`},
		{"/assets/style.css", "text/css; charset=utf-8", "#leash"},
		{"/assets/refresh.js", "text/javascript; charset=utf-8", "drift-url"},
	}
	require.Len(t, tests, len(routes))
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, h, http.MethodGet, tt.path)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, tt.ctype, rec.Header().Get("Content-Type"))
			assert.Contains(t, rec.Body.String(), tt.contains)

			head := do(t, h, http.MethodHead, tt.path)
			assert.Equal(t, http.StatusOK, head.Code)
			assert.Empty(t, head.Body.String(), "HEAD has no body")
		})
	}
}

func TestJobsList(t *testing.T) {
	s := seedStore(t)
	rec := do(t, ui.Handler(s.Store, ui.Options{Now: func() time.Time { return time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC) }}), http.MethodGet, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	rows := findAll(parse(t, rec.Body.String()), func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-job") != "" })
	require.Len(t, rows, 1)
	cells := findAll(rows[0], func(n *html.Node) bool { return n.Data == "td" || n.Data == "th" })
	var got []string
	for _, c := range cells {
		got = append(got, strings.TrimSpace(text(c)))
	}
	// job, mode, active, pending, open drift (d-2…d-6), calls (3×7 observed,
	// 5 poisoned, 1 of unknown mode), runs, last run
	assert.Equal(t, []string{seedJob, "enforce", "v2", "◆ v3", "▼ 5", "27", "5", "2026-11-29 03:01:23Z (1 h ago)"}, got)
}

func TestMethodsRefused(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	ctx := context.Background()
	snapshot := func() string {
		jobs, err := s.Store.Jobs(ctx)
		require.NoError(t, err)
		drift, err := s.Store.Drift(ctx, seedJob)
		require.NoError(t, err)
		vs, err := s.Store.Versions(ctx, seedJob)
		require.NoError(t, err)
		var audit int
		require.NoError(t, s.Store.DB().QueryRow(`SELECT COUNT(*) FROM audit`).Scan(&audit))
		b, err := json.Marshal([]any{jobs, drift, vs, audit})
		require.NoError(t, err)
		return string(b)
	}
	before := snapshot()
	paths := append(slices.Clone(routes), "/nope", "/jobs/unknown", "/jobs/"+seedJob+"/approve", "/jobs/"+seedJob+"/widen")
	for _, p := range paths {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, "TRACE", "CONNECT"} {
			rec := do(t, h, m, p)
			assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%s %s", m, p)
			assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"), "%s %s", m, p)
		}
	}
	assert.Equal(t, before, snapshot(), "refused requests change nothing")
}

func TestNotFound(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	for _, p := range []string{
		"/nope", "/index.html", "/jobs", "/jobs/", "/jobs/unknown", "/jobs/unknown/drift.json",
		"/jobs/" + seedJob + "/approve", "/jobs/" + seedJob + "/drift.json/x",
		"/assets/", "/assets/nope.css", "/ui.go", "/templates/base.html",
	} {
		t.Run(p, func(t *testing.T) {
			rec := do(t, h, http.MethodGet, p)
			assert.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
		})
	}
	// A dot-dot path is cleaned by redirecting to /ui.go, itself a 404:
	// nothing outside the embedded assets is ever served.
	rec := do(t, h, http.MethodGet, "/assets/../ui.go")
	assert.Equal(t, http.StatusTemporaryRedirect, rec.Code)
	assert.Equal(t, "/ui.go", rec.Header().Get("Location"))
}

func TestSecurityHeaders(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	for _, p := range append(slices.Clone(routes), "/nope") {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			rec := do(t, h, m, p)
			hd := rec.Header()
			assert.Equal(t, ui.ContentSecurityPolicy, hd.Get("Content-Security-Policy"), "%s %s", m, p)
			assert.Contains(t, hd.Get("Content-Security-Policy"), "default-src 'self'")
			assert.Contains(t, hd.Get("Content-Security-Policy"), "frame-ancestors 'none'")
			assert.NotContains(t, hd.Get("Content-Security-Policy"), "unsafe-inline")
			assert.Equal(t, "nosniff", hd.Get("X-Content-Type-Options"))
			assert.Equal(t, "no-referrer", hd.Get("Referrer-Policy"))
			assert.Equal(t, "DENY", hd.Get("X-Frame-Options"))
		}
	}
}

func TestRefusesForeignHost(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	for host, want := range map[string]int{
		"127.0.0.1:7878":         http.StatusOK,
		"localhost:7878":         http.StatusOK,
		"[::1]:7878":             http.StatusOK,
		"127.0.0.1":              http.StatusOK,
		"attacker.example:7878":  http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:7878":  http.StatusMisdirectedRequest,
		"192.168.1.10:7878":      http.StatusMisdirectedRequest,
		"":                       http.StatusMisdirectedRequest,
		"localhost.example:7878": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, want, rec.Code, "Host %q", host)
	}
}

// scripts returns the script elements of a page.
func scripts(doc *html.Node) []*html.Node { return findAll(doc, byTag("script")) }

// assertInert checks that no hostile markup became elements or handlers:
// the only script is the page's own, and no element has an on* attribute.
func assertInert(t *testing.T, doc *html.Node) {
	t.Helper()
	for _, sc := range scripts(doc) {
		assert.Equal(t, "/assets/refresh.js", attr(sc, "src"), "unexpected script element")
		assert.Empty(t, strings.TrimSpace(text(sc)), "inline script")
	}
	assert.Empty(t, findAll(doc, byTag("img")), "an img element was injected")
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			assert.False(t, strings.HasPrefix(a.Key, "on"), "event handler attribute %s on <%s>", a.Key, n.Data)
		}
	}
}

func TestEscapesHostileData(t *testing.T) {
	s := seedStore(t)
	// Job names are validated on the way in; write a hostile one straight
	// into the database, as a damaged or tampered store could hold.
	hostile := `evil"><script>alert(3)</script>`
	_, err := s.Store.DB().Exec(`INSERT INTO jobs(name, created) VALUES (?, ?)`, hostile, time.Now().UTC().Format(time.RFC3339Nano))
	require.NoError(t, err)
	h := ui.Handler(s.Store, ui.Options{})

	t.Run("jobs list", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/")
		require.Equal(t, http.StatusOK, rec.Code)
		body := rec.Body.String()
		assert.NotContains(t, body, "<script>alert")
		doc := parse(t, body)
		assertInert(t, doc)
		var names []string
		for _, a := range findAll(doc, func(n *html.Node) bool { return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/jobs/") }) {
			names = append(names, text(a))
		}
		assert.Contains(t, names, hostile, "the name is shown as text")
	})
	t.Run("hostile job page", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/jobs/evil%22%3E%3Cscript%3Ealert(3)%3C%2Fscript%3E")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.NotContains(t, rec.Body.String(), "<script>alert")
		doc := parse(t, rec.Body.String())
		assertInert(t, doc)
		assert.Equal(t, "Mandate of "+hostile, strings.TrimSpace(text(findAll(doc, byTag("h1"))[0])))
	})
	t.Run("drift call", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/jobs/"+seedJob)
		require.Equal(t, http.StatusOK, rec.Code)
		body := rec.Body.String()
		assert.NotContains(t, body, "<script>alert")
		assert.NotContains(t, body, "<img")
		doc := parse(t, body)
		assertInert(t, doc)
		row := findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-drift") == "d-3" })
		require.Len(t, row, 1)
		assert.Contains(t, text(row[0]), xssCall, "the call reads verbatim as text")
		// The SVG tooltip carries the same text, escaped.
		notch := findAll(doc, func(n *html.Node) bool { return attr(n, "data-kind") == "blocked" && attr(n, "data-drift") == "d-3" })
		require.Len(t, notch, 1)
		assert.Contains(t, text(notch[0]), xssCall)
	})
	t.Run("unknown job in the URL", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/jobs/%3Cscript%3Ealert(4)%3C%2Fscript%3E")
		require.Equal(t, http.StatusNotFound, rec.Code)
		assert.NotContains(t, rec.Body.String(), "<script>alert")
		assert.Contains(t, rec.Body.String(), "&lt;script&gt;alert(4)")
		assertInert(t, parse(t, rec.Body.String()))
	})
	t.Run("drift.json", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/jobs/"+seedJob+"/drift.json")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.NotContains(t, rec.Body.String(), "<script>", "JSON escapes < and >")
		var doc struct {
			Drift []mandate.DriftRecord `json:"drift"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
		require.Len(t, doc.Drift, 6)
		assert.Equal(t, xssCall, doc.Drift[3].Call)
	})
}

// marks counts the Leash Line SVG's marks by kind, and collects the drift
// ids of blocked and widened marks per family track.
func marks(t *testing.T, doc *html.Node) (map[string]int, map[string][]string) {
	t.Helper()
	svgs := findAll(doc, func(n *html.Node) bool { return n.Data == "svg" && attr(n, "id") == "leash" })
	require.Len(t, svgs, 1)
	count := map[string]int{}
	ids := map[string][]string{}
	for _, tr := range findAll(svgs[0], func(n *html.Node) bool { return attr(n, "class") == "track" }) {
		fam := attr(tr, "data-family")
		for _, m := range findAll(tr, func(n *html.Node) bool { return attr(n, "data-kind") != "" }) {
			count[attr(m, "data-kind")]++
			if d := attr(m, "data-drift"); d != "" {
				ids[fam] = append(ids[fam], attr(m, "data-kind")+" "+d)
			}
		}
	}
	return count, ids
}

func TestLeashSVGMatchesStore(t *testing.T) {
	s := seedStore(t)
	ctx := context.Background()
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	require.Equal(t, http.StatusOK, rec.Code)
	count, ids := marks(t, parse(t, rec.Body.String()))

	// Expected counts, from the store's own records rather than the Leash
	// Line: one notch or triangle per drift record and failed family (or
	// one on the "other" track), one diamond per rule the pending widening
	// added, one bar per active rule.
	want := map[string]int{}
	wantIDs := map[string][]string{}
	for _, d := range slices.Backward(s.Drift) { // oldest first along the line
		kind := "blocked"
		if d.Status == "widened" {
			kind = "widened"
		}
		fams := slices.DeleteFunc(slices.Clone(d.Families), func(f string) bool { return !slices.Contains(mandate.Families, f) })
		if len(fams) == 0 {
			fams = []string{"other"}
		}
		for _, f := range fams {
			want[kind]++
			wantIDs[f] = append(wantIDs[f], kind+" "+d.ID)
		}
	}
	want["pending"] = len(s.Pending.Added)
	exp, err := s.Store.Export(ctx, seedJob)
	require.NoError(t, err)
	for _, rules := range exp.Families {
		want["allowed"] += len(rules)
	}
	assert.Equal(t, want, count)
	assert.Equal(t, wantIDs, ids)
	// And the figures themselves, so a change in the seed is noticed.
	assert.Equal(t, map[string]int{"allowed": 10, "pending": 2, "blocked": 6, "widened": 1}, count)
	assert.Equal(t, []string{"widened d-1", "blocked d-4", "blocked d-5"}, ids["paths"])
	assert.Equal(t, []string{"blocked d-6"}, ids["other"])
}

func TestLeashSVGBarHeights(t *testing.T) {
	s := seedStore(t)
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	doc := parse(t, rec.Body.String())
	heights := map[string]string{}
	for _, r := range findAll(doc, func(n *html.Node) bool { return n.Data == "rect" && attr(n, "data-kind") == "allowed" }) {
		heights[text(r)] = attr(r, "height")
	}
	// Evidence 9x is the most (a full bar, 8 levels × 4), 3x is level 3,
	// 1x level 1: height ∝ evidence, as in the terminal.
	assert.Equal(t, "32", heights["allowed tools rule: terminal (seen 9x)"])
	assert.Equal(t, "12", heights["allowed paths rule: TRIAGE.md (seen 3x)"])
	assert.Equal(t, "4", heights["allowed paths rule: read:docs/CHANGELOG.md (seen 1x)"])
}

func TestPendingDiff(t *testing.T) {
	s := seedStore(t)
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	doc := parse(t, rec.Body.String())
	got := map[string][]string{}
	for _, tbl := range findAll(doc, func(n *html.Node) bool { return n.Data == "table" && strings.Contains(attr(n, "class"), "diff") }) {
		for _, tr := range findAll(tbl, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-change") != "" }) {
			code := findAll(tr, byTag("code"))
			require.NotEmpty(t, code)
			got[attr(tbl, "data-family")] = append(got[attr(tbl, "data-family")], attr(tr, "data-change")+" "+text(code[0]))
		}
	}
	assert.Equal(t, map[string][]string{
		"tools":    {"unchanged read_file", "unchanged terminal", "unchanged write_file"},
		"paths":    {"unchanged TRIAGE.md", "unchanged read:docs/CHANGELOG.md", "unchanged read:src/**"},
		"commands": {"added curl -s", "unchanged git fetch", "unchanged git status", "unchanged go test"},
		"hosts":    {"added api.github.com", "unchanged github.com"},
	}, got)
	assert.Contains(t, text(doc), "Pending v3 (widen d-2) against approved v2")
	// The page shows the store's diff, reach included, as the CLI does.
	reach := findAll(doc, func(n *html.Node) bool { return attr(n, "data-reach") != "" })
	var kinds []string
	for _, n := range reach {
		kinds = append(kinds, attr(n, "data-reach")+" "+text(n))
	}
	assert.Contains(t, kinds, "new-host new-host: api.github.com")
	assert.Contains(t, text(doc), "--sha ")
}

func TestDriftTimeline(t *testing.T) {
	s := seedStore(t)
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	doc := parse(t, rec.Body.String())
	var got [][]string
	for _, tr := range findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-drift") != "" }) {
		var cells []string
		for _, c := range findAll(tr, func(n *html.Node) bool { return n.Data == "td" || n.Data == "th" }) {
			cells = append(cells, strings.TrimSpace(text(c)))
		}
		// id, family, reason, call, status (time and run checked below)
		got = append(got, []string{cells[0], cells[2], cells[3], cells[4], cells[5]})
		assert.Regexp(t, `^2026-11-29 03:01:\d\dZ$`, cells[1])
	}
	require.Len(t, got, 6)
	assert.Equal(t, []string{"d-6", "d-5", "d-4", "d-3", "d-2", "d-1"}, []string{got[0][0], got[1][0], got[2][0], got[3][0], got[4][0], got[5][0]}, "newest first")
	assert.Equal(t, []string{"d-5", "paths", "outside the mandate: paths", "write_file /etc/cron.d/x", "▼ open"}, got[1])
	assert.Equal(t, []string{"d-2", "commands, hosts", "outside the mandate: commands, hosts", "curl -s https://api.github.com/repos/x/y/issues", "▼ open (v3)"}, got[4])
	assert.Equal(t, []string{"d-1", "paths", "outside the mandate: paths", "read_file /work/repo/docs/CHANGELOG.md", "▲ widened (v2)"}, got[5])
	assert.Equal(t, "run", got[0][1])
}

func TestDriftJSONToken(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	token := func() string {
		rec := do(t, h, http.MethodGet, "/jobs/"+seedJob+"/drift.json")
		require.Equal(t, http.StatusOK, rec.Code)
		var doc struct {
			Token string `json:"token"`
			Open  int    `json:"open_drift"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
		require.NotEmpty(t, doc.Token)
		return doc.Token
	}
	t1 := token()
	assert.Equal(t, t1, token(), "stable while nothing changes")
	// The page embeds the same token its script compares against.
	page := do(t, h, http.MethodGet, "/jobs/"+seedJob).Body.String()
	live := findAll(parse(t, page), func(n *html.Node) bool { return attr(n, "id") == "live" })
	require.Len(t, live, 1)
	assert.Equal(t, t1, attr(live[0], "data-token"))
	assert.Equal(t, "/jobs/"+seedJob+"/drift.json", attr(live[0], "data-drift-url"))

	d := s.Store.Check(context.Background(), mandate.Run{Job: seedJob, ID: "r6", Mode: mandate.RunCron, CronIdentity: "cron:nightly"},
		mandate.Call{Tool: mandate.ToolTerminal, Command: "rm -rf /", Workspace: "/work/repo"})
	require.Equal(t, mandate.Block, d.Verdict)
	assert.NotEqual(t, t1, token(), "new drift changes the token")
}

func TestObserveOnlyJob(t *testing.T) {
	dir := t.TempDir()
	s, err := mandate.Open(dir, mandate.Options{})
	require.NoError(t, err)
	defer s.Close()
	h := ui.Handler(s, ui.Options{})
	rec := do(t, h, http.MethodGet, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "No jobs yet")

	require.NoError(t, s.Observe(context.Background(), mandate.Run{Job: "fresh", ID: "r1", Mode: mandate.RunInteractive},
		mandate.Call{Tool: mandate.ToolTerminal, Command: "ls"}))
	rec = do(t, h, http.MethodGet, "/jobs/fresh")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	body := rec.Body.String()
	assert.Contains(t, body, "none (observe mode: every call allowed and recorded)")
	assert.Contains(t, body, "No pending version.")
	assert.Contains(t, body, "No drift")
	count, _ := marks(t, parse(t, body))
	assert.Empty(t, count, "no mandate, no marks")
}

func TestTamperedShown(t *testing.T) {
	s := seedStore(t)
	_, err := s.Store.DB().Exec(`UPDATE versions SET text = text || '# x' WHERE job = ? AND version = 2`, seedJob)
	require.NoError(t, err)
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	alerts := findAll(parse(t, rec.Body.String()), func(n *html.Node) bool { return attr(n, "role") == "alert" })
	require.Len(t, alerts, 1)
	assert.Contains(t, text(alerts[0]), "Tampered")
}

func TestAssetsAreEmbedded(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{})
	page := do(t, h, http.MethodGet, "/jobs/"+seedJob).Body.String()
	doc := parse(t, page)
	// Every referenced resource is same-origin and served: no CDN.
	var refs []string
	for _, n := range findAll(doc, func(n *html.Node) bool { return n.Data == "link" || n.Data == "script" }) {
		refs = append(refs, attr(n, "href")+attr(n, "src"))
	}
	assert.Equal(t, []string{"/assets/favicon.svg", "/assets/style.css", "/assets/refresh.js"}, refs)
	for _, r := range refs {
		rec := do(t, h, http.MethodGet, r)
		require.Equal(t, http.StatusOK, rec.Code, r)
		b, _ := io.ReadAll(rec.Body)
		// The favicon's xmlns is a name, not a fetch.
		assert.NotContains(t, strings.ReplaceAll(string(b), `xmlns="http://www.w3.org/2000/svg"`, ""), "http://")
		assert.NotContains(t, string(b), "https://")
	}
}

// The page shows the interactive_violation that is enforced and where it
// comes from: the profile's until the job has its own.
func TestJobPageShowsEnforcedViolation(t *testing.T) {
	s := seedStore(t)
	h := ui.Handler(s.Store, ui.Options{Profile: "nightly", ProfileViolation: "approve"})
	violation := func() string {
		rec := do(t, h, http.MethodGet, "/jobs/"+seedJob)
		doc := parse(t, rec.Body.String())
		dd := findAll(doc, func(n *html.Node) bool { return attr(n, "data-violation") != "" })
		require.Len(t, dd, 1)
		return strings.Join(strings.Fields(text(dd[0])), " ")
	}
	assert.Equal(t, "approve (from profile nightly's mandate.interactive_violation; the job has no setting)", violation())
	require.NoError(t, s.Store.SetInteractiveViolation(t.Context(), seedJob, "block"))
	assert.Equal(t, "block (set on the job)", violation())
}

// Folded drift shows its count; a dismissed record says who and why.
func TestDriftTimelineShowsCountAndClosing(t *testing.T) {
	s := seedStore(t)
	ctx := t.Context()
	run := mandate.Run{Job: seedJob, ID: "r9", Mode: mandate.RunCron}
	call := mandate.Call{Tool: "write_file", Paths: []string{"/etc/cron.d/x"}, Wrote: true}
	d := s.Store.Check(ctx, run, call)
	require.Equal(t, mandate.Block, d.Verdict)
	require.Equal(t, d.DriftID, s.Store.Check(ctx, run, call).DriftID, "the same call folds")
	require.NoError(t, s.Store.CloseDrift(ctx, seedJob, []string{d.DriftID}, mandate.DriftDismissed, "<b>known</b>", "eve"))
	rec := do(t, ui.Handler(s.Store, ui.Options{}), http.MethodGet, "/jobs/"+seedJob)
	doc := parse(t, rec.Body.String())
	rows := findAll(doc, func(n *html.Node) bool { return attr(n, "data-drift") == d.DriftID })
	require.Len(t, rows, 1)
	row := strings.Join(strings.Fields(text(rows[0])), " ")
	assert.Regexp(t, `seen [0-9]+x, last`, row)
	assert.Contains(t, row, "dismissed")
	assert.Contains(t, row, "by eve: <b>known</b>", "the reason is text, escaped")
	assert.NotContains(t, rec.Body.String(), "<b>known</b>")
}

// TestRuntimeEvidenceShown: what the kernel saw a call do (runtime
// observation) is on the job page like any other evidence: its rules on the
// Leash Line and in the pending diff, whose examples carry the kernel's
// record, escaped.
func TestRuntimeEvidenceShown(t *testing.T) {
	ctx := context.Background()
	s, err := mandate.Open(t.TempDir(), mandate.Options{})
	require.NoError(t, err)
	defer s.Close()
	run := mandate.Run{Job: "seen", ID: "r1", Mode: mandate.RunCron}
	ws := "/work/repo"
	require.NoError(t, s.Observe(ctx, run, mandate.Call{Tool: mandate.ToolTerminal, Command: "python3 task.py", Workspace: ws}))
	require.NoError(t, s.ObserveRuntime(ctx, run, mandate.Runtime{Command: "python3 task.py", Workspace: ws,
		Read: []string{ws + "/conf/<b>secret</b>.ini"}, Connected: []string{"127.0.0.1:8080"}, Programs: []string{"python3"}}))
	_, err = s.Compile(ctx, "seen")
	require.NoError(t, err)
	rec := do(t, ui.Handler(s, ui.Options{}), http.MethodGet, "/jobs/seen")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parse(t, rec.Body.String())
	assertInert(t, doc)
	count, _ := marks(t, doc)
	assert.Equal(t, 4, count["pending"], "the tool, the command, the path and the host")
	page := text(doc)
	assert.Contains(t, page, "pending: read:conf/<b>secret</b>.ini")
	assert.Contains(t, page, "pending: 127.0.0.1")
	var examples []string
	for _, n := range findAll(doc, func(n *html.Node) bool { return strings.Contains(attr(n, "class"), "example") }) {
		examples = append(examples, text(n))
	}
	assert.Contains(t, examples, "python3 task.py [kernel: ran python3; read conf/<b>secret</b>.ini; connected 127.0.0.1:8080]")
}
