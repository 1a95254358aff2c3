package ui_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/ui"
)

func TestCheckListen(t *testing.T) {
	for addr, want := range map[string]error{
		"127.0.0.1:7878": nil,
		"127.0.0.2:7878": nil,
		"localhost:8420": nil,
		"LOCALHOST:0":    nil,
		"[::1]:7878":     nil,
		":7878":          ui.ErrNotLoopback,
		"0.0.0.0:7878":   ui.ErrNotLoopback,
		"[::]:7878":      ui.ErrNotLoopback,
		"10.0.0.5:7878":  ui.ErrNotLoopback,
		"example.com:80": ui.ErrNotLoopback,
		"localhost.:80":  ui.ErrNotLoopback,
	} {
		err := ui.CheckListen(addr)
		if want == nil {
			assert.NoError(t, err, addr)
		} else {
			assert.ErrorIs(t, err, want, addr)
		}
	}
	assert.Error(t, ui.CheckListen("127.0.0.1"), "a port is required")
	assert.Error(t, ui.CheckListen(""))
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestStartDisabledListensNowhere(t *testing.T) {
	s := seedStore(t)
	addr := freeAddr(t)
	srv, err := ui.Start(config.UI{Enabled: false, Listen: addr}, s.Store, ui.Options{})
	require.ErrorIs(t, err, ui.ErrDisabled)
	assert.Nil(t, srv)
	_, err = net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "nothing listens when ui.enabled is false")
}

func TestStartDefaultConfigIsDisabled(t *testing.T) {
	cfg, err := config.Default()
	require.NoError(t, err)
	require.False(t, cfg.UI.Enabled, "the UI is off by default")
	s := seedStore(t)
	_, err = ui.Start(cfg.UI, s.Store, ui.Options{})
	assert.ErrorIs(t, err, ui.ErrDisabled)
}

func TestStartEnabled(t *testing.T) {
	s := seedStore(t)
	srv, err := ui.Start(config.UI{Enabled: true, Listen: "127.0.0.1:0"}, s.Store, ui.Options{})
	require.NoError(t, err)
	resp, err := http.Get(srv.URL() + "jobs/" + seedJob)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "Leash Line")

	resp, err = http.Post(srv.URL(), "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	require.NoError(t, srv.Close())
	_, err = net.DialTimeout("tcp", srv.Addr().String(), time.Second)
	assert.Error(t, err, "closed")
}

func TestStartRefusesNonLoopback(t *testing.T) {
	s := seedStore(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		srv, err := ui.Start(config.UI{Enabled: true, Listen: addr}, s.Store, ui.Options{})
		assert.ErrorIs(t, err, ui.ErrNotLoopback, addr)
		assert.Nil(t, srv)
		_, err = ui.Listen(addr, s.Store, ui.Options{})
		assert.ErrorIs(t, err, ui.ErrNotLoopback, addr)
		err = ui.Serve(t.Context(), addr, s.Store, ui.Options{}, nil)
		assert.ErrorIs(t, err, ui.ErrNotLoopback, addr)
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	s := seedStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan *ui.Server, 1)
	done := make(chan error, 1)
	go func() { done <- ui.Serve(ctx, "127.0.0.1:0", s.Store, ui.Options{}, func(s *ui.Server) { ready <- s }) }()
	var srv *ui.Server
	select {
	case srv = <-ready:
	case err := <-done:
		t.Fatalf("Serve returned early: %v", err)
	}
	resp, err := http.Get(srv.URL())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	err = <-done
	assert.True(t, err == nil || errors.Is(err, context.Canceled), "Serve: %v", err)
	_, err = net.DialTimeout("tcp", srv.Addr().String(), time.Second)
	assert.Error(t, err, "stopped")
}
