package runner

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/sandbox"
)

// TestServeMandatePage: tether serve starts the read-only mandate page on
// its loopback address only when ui.enabled is set, and stops it on
// shutdown.
func TestServeMandatePage(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	d, _ := e.start(t) // stopped by the test's cleanup
	assert.Empty(t, d.PageURL(), "ui.enabled is off by default: no page")

	e = newDaemonEnv(t, sandbox.Runner{}, "")
	e.cfg.UI.Enabled, e.cfg.UI.Listen = true, "127.0.0.1:0"
	d, stop := e.start(t)
	url := d.PageURL()
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "<html")
	resp, err = http.Post(url, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "the page has no write endpoint")

	require.NoError(t, stop())
	_, err = http.Get(url)
	assert.Error(t, err, "the page stops with the daemon")
}

// TestServeRefusesPublicPage: a non-loopback ui.listen stops the daemon
// from starting rather than exposing the page.
func TestServeRefusesPublicPage(t *testing.T) {
	t.Parallel()
	e := newDaemonEnv(t, sandbox.Runner{}, "")
	e.cfg.UI.Enabled, e.cfg.UI.Listen = true, "0.0.0.0:0"
	d, err := NewDaemon(DaemonOptions{Config: e.cfg, Socket: e.socket})
	require.NoError(t, err)
	err = d.Serve(t.Context(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mandate page")
}
