package approval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
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
// Several processes may append to the same file: each append holds an
// exclusive flock on it, so a record is one whole line or nothing. An
// append that fails part way (a full disk) is cut back off at once, and
// every append first cuts off a torn tail a killed or failed writer left
// behind (anything after the last newline), so every line parses.
// Safe for concurrent use; the caller must call Close.
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
	// O_RDWR, not O_APPEND: appends go at the end that the flock holder
	// has just checked, and the tail check reads the last bytes.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
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
	fd := int(a.f.Fd())
	if err := flockFd(fd, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking audit log: %w", err)
	}
	defer flockFd(fd, syscall.LOCK_UN) //nolint:errcheck // closing the file releases it too
	end, err := cutTornTail(a.f)
	if err != nil {
		return err
	}
	if n, err := a.f.WriteAt(line, end); err != nil {
		if n > 0 {
			// Half a record must not stay: the next append would
			// otherwise continue its line. Shrinking needs no space.
			if terr := a.f.Truncate(end); terr != nil {
				err = errors.Join(err, fmt.Errorf("cutting off the torn record: %w", terr))
			}
		}
		return fmt.Errorf("appending audit record: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		// The record may or may not be on disk; cut it off so the log
		// never holds a record whose decision was reported as failed.
		_ = a.f.Truncate(end)
		return fmt.Errorf("syncing audit log: %w", err)
	}
	return nil
}

// cutTornTail truncates f after its last newline (a record another
// writer left half-written) and returns the resulting size: where the
// next record goes.
//
// Preconditions: the caller holds f's flock.
func cutTornTail(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("checking audit log: %w", err)
	}
	size := fi.Size()
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("checking audit log tail: %w", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	// Search backwards for the last complete record.
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("checking audit log tail: %w", err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("cutting off a torn audit record: %w", err)
	}
	return end, nil
}

// flockFd applies a flock operation, retrying on EINTR.
func flockFd(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
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

// AuditReport is what VerifyAudit found.
type AuditReport struct {
	Records int   `json:"records"`       // lines that parse as a record
	Bad     []int `json:"bad,omitempty"` // 1-based numbers of the lines that do not
	// TornTail reports whether the file ends without a newline: a record
	// being written, or left half-written by a writer that died (the next
	// append cuts it off).
	TornTail bool `json:"torn_tail,omitempty"`
}

// ErrAuditCorrupt is returned by VerifyAudit when a complete line of the
// log is not one JSON record.
var ErrAuditCorrupt = errors.New("the audit log holds lines that are not records")

// VerifyAudit reads an audit log and checks that every complete line is one
// JSON record. It returns ErrAuditCorrupt (wrapped, with the line numbers)
// when one is not; a torn tail alone is reported but is not corruption.
func VerifyAudit(r io.Reader) (AuditReport, error) {
	var rep AuditReport
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			rep.TornTail = len(line) > 0
			break
		}
		if err != nil {
			return rep, fmt.Errorf("reading the audit log: %w", err)
		}
		var d Decision
		dec := json.NewDecoder(bytes.NewReader(line))
		if dec.Decode(&d) != nil || dec.InputOffset() != int64(len(line)-1) || d.ID == "" {
			rep.Bad = append(rep.Bad, n)
			continue
		}
		rep.Records++
	}
	if len(rep.Bad) > 0 {
		return rep, fmt.Errorf("%w: lines %v", ErrAuditCorrupt, rep.Bad)
	}
	return rep, nil
}
