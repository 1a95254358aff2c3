package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tether-dev/tether/config"
)

// AllowEntry is one "always" approval stored in the allowlist file.
type AllowEntry struct {
	Pattern  string    `json:"pattern"` // normalised command text, a glob, or "=<exact source text>"
	Added    time.Time `json:"added"`
	By       string    `json:"by"`                 // who approved
	Decision string    `json:"decision,omitempty"` // the decision id that added it
}

// allowFile is the on-disk format of <state>/allowlist/<profile>.json.
type allowFile struct {
	Version int          `json:"version"`
	Entries []AllowEntry `json:"entries"`
}

// AllowlistStore keeps each profile's "always" approvals in
// <state_dir>/allowlist/<profile>.json, separate from the user's YAML
// (which is never rewritten); the engine merges the two. Writers from any
// number of goroutines and processes lose nothing: each Add takes an
// exclusive flock on <profile>.lock, re-reads the file, merges, writes a
// temporary file, fsyncs it, renames it over the old one and fsyncs the
// directory. Readers never lock: a rename is atomic. Safe for concurrent use.
type AllowlistStore struct {
	dir string
}

// NewAllowlistStore returns the store under stateDir.
func NewAllowlistStore(stateDir string) *AllowlistStore {
	return &AllowlistStore{dir: filepath.Join(stateDir, "allowlist")}
}

func (s *AllowlistStore) path(profile, ext string) (string, error) {
	if !config.ValidName(profile) {
		return "", fmt.Errorf("invalid profile name %q", profile)
	}
	return filepath.Join(s.dir, profile+ext), nil
}

// Load returns the profile's stored entries; none when the file does not
// exist. A corrupt file is an error (and the engine then ignores the
// stored entries: it fails closed towards asking).
func (s *AllowlistStore) Load(profile string) ([]AllowEntry, error) {
	p, err := s.path(profile, ".json")
	if err != nil {
		return nil, err
	}
	return readAllowFile(p)
}

func readAllowFile(p string) ([]AllowEntry, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading allowlist: %w", err)
	}
	var f allowFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reading allowlist %s: %w", p, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("reading allowlist %s: unsupported version %d", p, f.Version)
	}
	return f.Entries, nil
}

// Add merges entries into the profile's allowlist (an entry whose pattern
// is already present is skipped).
func (s *AllowlistStore) Add(profile string, entries ...AllowEntry) error {
	p, err := s.path(profile, ".json")
	if err != nil {
		return err
	}
	lockPath, _ := s.path(profile, ".lock")
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating allowlist directory: %w", err)
	}
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening allowlist lock: %w", err)
	}
	defer lock.Close() // releases the flock
	if err := flock(lock); err != nil {
		return fmt.Errorf("locking allowlist: %w", err)
	}

	// Re-read under the lock: another writer may have added entries.
	current, err := readAllowFile(p)
	if err != nil {
		return err // never overwrite a file we cannot read
	}
	changed := false
	for _, e := range entries {
		if e.Pattern == "" || slices.ContainsFunc(current, func(c AllowEntry) bool { return c.Pattern == e.Pattern }) {
			continue
		}
		current = append(current, e)
		changed = true
	}
	if !changed {
		return nil
	}
	data, err := json.MarshalIndent(allowFile{Version: 1, Entries: current}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding allowlist: %w", err)
	}
	return writeAtomic(p, append(data, '\n'))
}

// flock takes an exclusive lock on f, retrying on EINTR.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// writeAtomic replaces p with data: temporary file, fsync, rename, fsync
// of the directory.
func writeAtomic(p string, data []byte) error {
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, filepath.Base(p)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing allowlist: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing allowlist: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing allowlist: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing allowlist: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("replacing allowlist: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing allowlist directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing allowlist directory: %w", err)
	}
	return nil
}

// exactOnly reports whether a can be matched only by its exact source text
// ("=<text>" entries): it did not parse, holds opaque segments or defines
// functions, or has no simple command.
func exactOnly(a *Analysis) bool {
	return a.Script == nil || a.ParseErr != "" || len(a.Script.Opaque) > 0 ||
		len(a.Script.Functions) > 0 || len(a.Script.Commands) == 0
}

// MatchAllowlist reports whether the allowlist entries allow a, and the
// entry (or entries, joined by ", ") that did. An entry "=<text>" matches
// only the exact (trimmed) command text. Other entries are exact or glob
// patterns on normalised command text (NormalizeCommand); a compound
// command is allowed only when every one of its simple commands matches
// an entry. Commands the analyser cannot see into need an "=" entry.
func MatchAllowlist(entries []string, a *Analysis) (string, bool) {
	if a == nil || len(entries) == 0 {
		return "", false
	}
	exact := "=" + strings.TrimSpace(a.Command)
	for _, e := range entries {
		if e == exact {
			return e, true
		}
	}
	if exactOnly(a) {
		return "", false
	}
	var used []string
	for _, c := range a.Script.Commands {
		text := NormalizeCommand(c)
		i := slices.IndexFunc(entries, func(e string) bool { return !strings.HasPrefix(e, "=") && globMatch(e, text) })
		if i < 0 {
			return "", false
		}
		if !slices.Contains(used, entries[i]) {
			used = append(used, entries[i])
		}
	}
	return strings.Join(used, ", "), true
}

// AllowlistKeys returns the entries an "always" approval of a stores: the
// normalised text of each simple command, or "=<exact text>" for a command
// that can only be matched exactly.
func AllowlistKeys(a *Analysis) []string {
	if exactOnly(a) {
		return []string{"=" + strings.TrimSpace(a.Command)}
	}
	var keys []string
	for _, c := range a.Script.Commands {
		k := escapeGlob(NormalizeCommand(c))
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// escapeGlob makes s a glob that matches only s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
