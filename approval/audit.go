package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// AuditSink receives every decision the engine makes. Append must make the
// record durable before it returns; the engine turns an allow into a deny
// when Append fails.
type AuditSink interface {
	Append(ctx context.Context, d Decision) error
}

// AuditPath is where the file audit log lives in a state directory.
func AuditPath(stateDir string) string { return filepath.Join(stateDir, "audit.jsonl") }

// FileAudit appends decisions as JSON lines to a file, fsyncing each one.
// Several processes may append to the same file (O_APPEND, one write per
// record). Safe for concurrent use; the caller must call Close.
type FileAudit struct {
	mu sync.Mutex
	f  *os.File
}

// OpenFileAudit opens (creating it and its directory, private to the user)
// the audit log at path.
func OpenFileAudit(path string) (*FileAudit, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating audit directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", err)
	}
	return &FileAudit{f: f}, nil
}

// Append writes d as one line and syncs the file.
func (a *FileAudit) Append(_ context.Context, d Decision) error {
	line, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("appending audit record: %w", os.ErrClosed)
	}
	if _, err := a.f.Write(line); err != nil {
		return fmt.Errorf("appending audit record: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("syncing audit log: %w", err)
	}
	return nil
}

// Close closes the file.
func (a *FileAudit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
