package ui_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tether-dev/tether/ui"
)

// BenchmarkJobPage renders the seeded job page (Leash Line, diff, drift,
// versions) through the handler, store reads included.
func BenchmarkJobPage(b *testing.B) {
	s := seedStore(b)
	h := ui.Handler(s.Store, ui.Options{})
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/jobs/"+seedJob, nil)
		req.Host = "127.0.0.1:7878"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
