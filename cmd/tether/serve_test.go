package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/runner"
	"github.com/tether-dev/tether/sandbox"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SIGHUP reloads the daemon's configuration file: one that does not load
// (bad YAML, an invalid value) is refused with a log line and the
// configuration in force stays; a valid one is in force once it is read.
func TestServeReloadsOnHangup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tether.yaml")
	write := func(pids int) {
		y := fmt.Sprintf("state_dir: %s\nprofiles:\n  default:\n    terminal:\n      cwd: %s\n      limits: {sandbox_pids: %d}\n", filepath.Join(dir, "state"), dir, pids)
		require.NoError(t, os.WriteFile(path, []byte(y), 0o600))
	}
	write(40)
	cfg, err := config.Resolve(path)
	require.NoError(t, err)
	d, err := runner.NewDaemon(runner.DaemonOptions{Config: cfg, Sandbox: sandbox.Runner{StateRoot: filepath.Join(dir, "run")}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hup := make(chan os.Signal)
	done := make(chan struct{})
	go func() { defer close(done); reloadOnHangup(ctx, hup, d, path, log) }()
	sandboxPids := func() int { p, _ := d.Config().Profile("default"); return p.Terminal.Limits.SandboxPids }
	reloads := func(want string) {
		t.Helper()
		hup <- os.Interrupt // any signal: the channel is SIGHUP's
		require.Eventually(t, func() bool { return bytes.Contains([]byte(logs.String()), []byte(want)) }, 10*time.Second, 10*time.Millisecond, "log: %s", logs.String())
	}

	require.NoError(t, os.WriteFile(path, []byte("profiles: [not, a, map\n"), 0o600))
	reloads("configuration reload refused")
	assert.Same(t, cfg, d.Config(), "a file that does not parse replaced the configuration")
	logs.mu.Lock()
	logs.b.Reset()
	logs.mu.Unlock()
	require.NoError(t, os.WriteFile(path, []byte("profiles:\n  default:\n    terminal:\n      limits: {sandbox_pids: 3}\n"), 0o600))
	reloads("configuration reload refused")
	assert.Equal(t, 40, sandboxPids(), "an invalid configuration replaced the one in force")

	write(30)
	reloads("configuration reloaded")
	assert.Equal(t, 30, sandboxPids())
	cancel()
	<-done
}
