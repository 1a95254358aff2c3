package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/tether-dev/tether/approval"
)

// DefaultMCPApprovalDir is where `tether mcp` publishes its approval
// queue: next to the daemon's socket, in a directory only this user can
// enter.
func DefaultMCPApprovalDir() string {
	return filepath.Join(filepath.Dir(DefaultSocket()), "mcp")
}

// publishQueue serves the daemon's approvals API for this server's own
// session on a unix socket in ApprovalDir and writes the MCPQueue file
// naming it. The returned stop removes both. The socket and the file are
// 0600 in a 0700 directory: only this user can list or answer.
func (m *MCP) publishQueue(ctx context.Context) (stop func(), err error) {
	dir := m.opts.ApprovalDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the approval queue directory %s: %w", dir, err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the approval queue directory %s must be a directory only its owner can open (%v)", dir, err)
	}
	pid := os.Getpid()
	sock := filepath.Join(dir, strconv.Itoa(pid)+".sock")
	info := filepath.Join(dir, strconv.Itoa(pid)+".json")
	_ = os.Remove(sock) // a predecessor with our pid is gone
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", sock, err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("restricting %s: %w", sock, err)
	}
	api := NewServer(ctx, m.runner, m.pipeline.Mandates, m.opts.Version, Limits{}, m.runner.log)
	tok := api.Adopt(m.session, m.profile, approval.PlatformCLI, m.opts.Job, m.opts.Cwd)
	b, err := json.Marshal(MCPQueue{PID: pid, Socket: sock, ClientToken: tok, Session: m.session, Profile: m.profile, Cwd: m.opts.Cwd})
	if err == nil {
		err = writeFileAtomic(info, b)
	}
	if err != nil {
		l.Close()
		os.Remove(sock)
		return nil, fmt.Errorf("publishing the approval queue: %w", err)
	}
	hs := &http.Server{Handler: api}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.runner.log.Warn("approval queue server", "err", err)
		}
	}()
	return func() {
		os.Remove(info)
		hs.Close()
		<-done
		os.Remove(sock)
	}, nil
}

// writeFileAtomic writes b to p (0600) whole: a reader sees the old file
// or the new one.
func writeFileAtomic(p string, b []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// MCPQueues returns the approval queues published in dir by running MCP
// servers (their process exists), skipping what dead ones left.
func MCPQueues(dir string) ([]MCPQueue, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []MCPQueue
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var q MCPQueue
		if json.Unmarshal(b, &q) != nil || q.PID <= 0 || q.Socket == "" {
			continue
		}
		if p, err := os.FindProcess(q.PID); err != nil || p.Signal(syscall.Signal(0)) != nil {
			continue
		}
		out = append(out, q)
	}
	return out, nil
}
