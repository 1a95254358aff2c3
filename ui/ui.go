package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/tether-dev/tether/mandate"
)

//go:embed assets
var assetFS embed.FS

//go:embed templates/*.html
var templateFS embed.FS

// ContentSecurityPolicy is sent with every response: only same-origin
// scripts, styles and fetches, no inline code, no framing, no forms.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// DefaultRefresh is how often the job page polls for new drift.
const DefaultRefresh = 5 * time.Second

// Options tunes Handler. The zero value is valid.
type Options struct {
	// Logger receives store errors behind 500 responses. Nil discards them.
	Logger *slog.Logger
	// Now is the clock used for "ago" texts; nil means time.Now.
	Now func() time.Time
	// Refresh is the live-refresh polling interval of the job page;
	// 0 means DefaultRefresh, negative turns live refresh off.
	Refresh time.Duration
	// Profile and ProfileViolation name the profile whose
	// mandate.interactive_violation applies to jobs without a setting of
	// their own, and that value; the page shows the enforced value and
	// where it comes from (mandate.ResolveViolation). Empty: "block".
	Profile, ProfileViolation string
}

// handler serves the pages. It holds no mutable state and is safe for
// concurrent use.
type handler struct {
	store   *mandate.Store
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	refresh time.Duration
	pages   map[string]*template.Template
	mux     *http.ServeMux
}

// Handler returns the read-only UI over store. It answers GET and HEAD only
// (405 for any other method, before any work), 404 for unknown paths and
// jobs, and sets the security headers on every response. The caller keeps
// ownership of store and must keep it open while the handler is in use.
func Handler(store *mandate.Store, opts Options) http.Handler {
	h := &handler{store: store, opts: opts, log: opts.Logger, now: opts.Now, refresh: opts.Refresh}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.refresh == 0 {
		h.refresh = DefaultRefresh
	}
	h.pages = parsePages()
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /{$}", h.jobs)
	h.mux.HandleFunc("GET /jobs/{job}", h.job)
	h.mux.HandleFunc("GET /jobs/{job}/drift.json", h.driftJSON)
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer(assets)))
	h.mux.HandleFunc("/", h.notFound)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		// Read-only: refuse before routing, so no handler ever runs.
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed: this page is read-only; approve and widen in the terminal", http.StatusMethodNotAllowed)
		return
	}
	if !loopbackHost(r.Host) {
		// A page elsewhere that rebinds its DNS name to 127.0.0.1 would
		// send its own name here; only loopback names reach the store.
		http.Error(w, "421 misdirected request: use a loopback address such as 127.0.0.1", http.StatusMisdirectedRequest)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether the Host header names the loopback
// interface: localhost or a loopback IP, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// assetType returns the content type of an embedded asset by extension. A
// switch rather than a map, so that nothing is built at init.
func assetType(ext string) (string, bool) {
	switch ext {
	case ".css":
		return "text/css; charset=utf-8", true
	case ".js":
		return "text/javascript; charset=utf-8", true
	case ".svg":
		return "image/svg+xml", true
	}
	return "", false
}

// assetServer serves the embedded assets without directory listings.
func assetServer(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		// Fixed types: the system's mime table varies, and nosniff makes
		// the browser refuse a script or style sheet with the wrong one.
		ctype, ok := assetType(path.Ext(r.URL.Path))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, "notfound", notFoundPage{Title: "Not found", Path: r.URL.Path})
}

type notFoundPage struct {
	Title string
	Path  string
	Job   string
}

// render executes page into a buffer first, so a template error becomes a
// clean 500 instead of half a page.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "base", data); err != nil {
		h.fail(w, r, fmt.Errorf("rendering %s: %w", page, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// fail logs err and answers 500 without its detail: store errors may name
// paths the page has no reason to show.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.log.Error("mandate page failed", "path", r.URL.Path, "err", err)
	http.Error(w, "500 internal error: see tether's log", http.StatusInternalServerError)
}

// jobsPage is the data of the jobs list.
type jobsPage struct {
	Title string
	Jobs  []jobRow
}

type jobRow struct {
	mandate.Job
	LastRun time.Time
	Ago     string
}

func (h *handler) jobs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	jobs, err := h.store.Jobs(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := jobsPage{Title: "Mandates"}
	for _, j := range jobs {
		last, err := lastRun(ctx, h.store, j.Name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		p.Jobs = append(p.Jobs, jobRow{Job: j, LastRun: last, Ago: ago(h.now(), last)})
	}
	h.render(w, r, http.StatusOK, "jobs", p)
}

// lastRun is when the job's newest run started; zero when it never ran.
// The store's Job summary does not carry it, so it is read here, with a
// read-only query.
func lastRun(ctx context.Context, s *mandate.Store, job string) (time.Time, error) {
	var started string
	if err := s.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(started), '') FROM runs WHERE job = ?`, job).Scan(&started); err != nil {
		return time.Time{}, fmt.Errorf("reading last run of %s: %w", job, err)
	}
	if started == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, started)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading last run of %s: %w", job, err)
	}
	return t, nil
}

// ago says how long before now t was, coarsely.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// jobPage is the data of a job's page.
type jobPage struct {
	Title    string
	Job      mandate.Job
	LastRun  time.Time
	Ago      string
	Leash    mandate.LeashLine
	SVG      leashSVG
	Diff     pendingDiff
	Drift    []mandate.DriftRecord
	Versions []mandate.Version
	Tampered bool
	// Token changes whenever the drift or the versions change; the page's
	// script reloads when drift.json reports a different one.
	Token      string
	DriftURL   string
	RefreshMS  int64
	ActiveSHA  string
	PendingSHA string
	// Violation is the interactive_violation enforced for the job and
	// ViolationSource where it comes from.
	Violation, ViolationSource string
}

func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("job")
	j, ok, err := findJob(ctx, h.store, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !ok {
		h.render(w, r, http.StatusNotFound, "notfound", notFoundPage{Title: "Unknown job", Path: r.URL.Path, Job: name})
		return
	}
	ll, err := h.store.Leash(ctx, name)
	if err != nil {
		h.fail(w, r, fmt.Errorf("building the Leash Line of %s: %w", name, err))
		return
	}
	drift, vs, err := h.driftAndVersions(ctx, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d, err := h.store.Diff(ctx, name)
	diff := fromDiff(d)
	if err != nil {
		h.fail(w, r, fmt.Errorf("diffing versions of %s: %w", name, err))
		return
	}
	last, err := lastRun(ctx, h.store, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := jobPage{
		Title: "Mandate of " + name, Job: j, LastRun: last, Ago: ago(h.now(), last),
		Leash: ll, SVG: layoutLeash(ll), Diff: diff, Drift: drift, Versions: vs,
		Token: token(drift, vs), DriftURL: jobURL(name) + "/drift.json",
	}
	p.Violation, p.ViolationSource = h.violation(j)
	if h.refresh > 0 {
		p.RefreshMS = h.refresh.Milliseconds()
	}
	for _, v := range vs {
		switch {
		case v.Active:
			p.ActiveSHA = v.SHA256
		case v.Status == mandate.StatusPending && v.Number == j.PendingVersion:
			p.PendingSHA = v.SHA256
		}
	}
	if j.ActiveVersion > 0 {
		// Export checks the active text against its approved SHA-256; a
		// mismatch is what a reviewer most needs to see.
		if _, err := h.store.Export(ctx, name); errors.Is(err, mandate.ErrTampered) {
			p.Tampered = true
		} else if err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, r, http.StatusOK, "job", p)
}

// findJob returns the job's summary, or ok false when the store has no such
// job.
func findJob(ctx context.Context, s *mandate.Store, name string) (mandate.Job, bool, error) {
	jobs, err := s.Jobs(ctx)
	if err != nil {
		return mandate.Job{}, false, err
	}
	for _, j := range jobs {
		if j.Name == name {
			return j, true, nil
		}
	}
	return mandate.Job{}, false, nil
}

// driftDoc is the body of drift.json.
type driftDoc struct {
	Job            string                `json:"job"`
	Token          string                `json:"token"`
	Open           int                   `json:"open_drift"`
	ActiveVersion  int                   `json:"active_version,omitempty"`
	PendingVersion int                   `json:"pending_version,omitempty"`
	Drift          []mandate.DriftRecord `json:"drift"`
}

func (h *handler) driftJSON(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("job")
	j, ok, err := findJob(ctx, h.store, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			json.NewEncoder(w).Encode(map[string]string{"error": "unknown job"})
		}
		return
	}
	drift, vs, err := h.driftAndVersions(ctx, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	doc := driftDoc{Job: name, Token: token(drift, vs), Open: j.OpenDrift,
		ActiveVersion: j.ActiveVersion, PendingVersion: j.PendingVersion, Drift: drift}
	if doc.Drift == nil {
		doc.Drift = []mandate.DriftRecord{}
	}
	body, err := json.Marshal(doc) // escapes <, > and & as \u003c…
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// token fingerprints what the job page shows that drift or a version change
// can alter.
func token(drift []mandate.DriftRecord, vs []mandate.Version) string {
	hs := sha256.New()
	for _, d := range drift {
		fmt.Fprintf(hs, "d %s %s %d\n", d.ID, d.Status, d.WidenedBy)
	}
	for _, v := range vs {
		fmt.Fprintf(hs, "v %d %s %s %v\n", v.Number, v.Status, v.SHA256, v.Active)
	}
	return hex.EncodeToString(hs.Sum(nil))[:16]
}

// jobURL is the path of a job's page, its name escaped as one segment.
func jobURL(name string) string { return "/jobs/" + url.PathEscape(name) }

// driftAndVersions reads a job's drift records and versions, which the job
// page and its refresh endpoint both show.
func (h *handler) driftAndVersions(ctx context.Context, job string) ([]mandate.DriftRecord, []mandate.Version, error) {
	drift, err := h.store.Drift(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	vs, err := h.store.Versions(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	return drift, vs, nil
}

// violation is the interactive_violation enforced for j and where it comes
// from, in words.
func (h *handler) violation(j mandate.Job) (string, string) {
	return mandate.DescribeViolation(j.InteractiveViolation, h.opts.Profile, h.opts.ProfileViolation)
}
