package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/mandate"
)

var (
	// ErrDisabled is returned by Start when the configuration's ui.enabled
	// is false (the default).
	ErrDisabled = errors.New("the mandate page is disabled (set ui.enabled: true in the configuration)")
	// ErrNotLoopback is returned for a listen address that is not on the
	// loopback interface.
	ErrNotLoopback = errors.New("the mandate page listens on loopback only")
)

// CheckListen reports whether addr ("host:port") may be listened on: its
// host must be "localhost" or a loopback IP. An empty host (every
// interface), 0.0.0.0, :: and any other name or address are refused.
func CheckListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want host:port such as %s: %w", addr, config.DefaultListen, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("listen address %q: %w (use 127.0.0.1:PORT or [::1]:PORT)", addr, ErrNotLoopback)
}

// Server is a running mandate page. Its methods are safe for concurrent
// use; the caller must call Close (or cancel the context given to Serve).
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen checks that addr is loopback, binds it and serves the read-only
// UI over store in the background. The store must stay open until the
// server is closed.
func Listen(addr string, store *mandate.Store, opts Options) (*Server, error) {
	if err := CheckListen(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	// "localhost" may resolve to a non-loopback address on a broken
	// hosts file: check what was actually bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("listen address %q bound %s: %w", addr, ln.Addr(), ErrNotLoopback)
	}
	s := &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           Handler(store, opts),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
		},
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Start starts the UI as the configuration says: ErrDisabled unless
// cfg.Enabled, then Listen on cfg.Listen. `tether serve` calls it and
// treats ErrDisabled as "no UI".
func Start(cfg config.UI, store *mandate.Store, opts Options) (*Server, error) {
	if !cfg.Enabled {
		return nil, ErrDisabled
	}
	addr := cfg.Listen
	if addr == "" {
		addr = config.DefaultListen
	}
	return Listen(addr, store, opts)
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the page's base URL, for printing.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Close stops the server, waiting up to five seconds for requests in
// flight, and returns the serving error, if any.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	return errors.Join(<-s.done, err)
}

// Serve listens on addr (loopback only) and serves the UI over store until
// ctx is cancelled or serving fails. ready, when non-nil, is called with the
// running server once it accepts connections.
func Serve(ctx context.Context, addr string, store *mandate.Store, opts Options, ready func(*Server)) error {
	s, err := Listen(addr, store, opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(s)
	}
	select {
	case <-ctx.Done():
		return s.Close()
	case err := <-s.done:
		s.done <- err // Close reads it
		s.Close()
		if err == nil {
			return nil
		}
		return fmt.Errorf("serving the mandate page: %w", err)
	}
}
