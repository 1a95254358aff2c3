// Package dirlist lists directories that a sandboxed process may have
// filled: a few names at a time, up to a bound, so that a directory of
// millions of names neither fills the host's memory nor holds a walk past
// its budget while it is read. Every host-side walker of a workspace
// (search_files, the file rules' hard-link walk, the sandbox's
// nested-repository scan and disk-limit marking) lists through it. It
// needs no privilege.
package dirlist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	// Batch is how many names are read at once: between batches the
	// caller's more is asked.
	Batch = 1024
	// MaxEntries is the usual bound on the names of one directory: their
	// memory (about 100 bytes each) and the sort. A source tree's largest
	// directories hold a few thousand.
	MaxEntries = 100_000
)

// ErrTooLarge is Read's error for a directory of more names than its
// bound.
var ErrTooLarge = errors.New("too many directory entries")

// Read lists the directory dirfd (at rel, for errors) in batches of Batch
// entries, sorted by name; more is asked before each batch. It stops with
// what it has when more says no, and with ErrTooLarge (and no entries)
// past max entries. Other errors come with the entries read so far. dirfd
// stays the caller's: Read lists a duplicate of it, from its current
// offset.
func Read(dirfd int, rel string, max int, more func() bool) ([]os.DirEntry, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(dup), rel)
	defer d.Close()
	var entries []os.DirEntry
	sorted := func() []os.DirEntry {
		slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		return entries
	}
	for more() {
		batch, err := d.ReadDir(Batch)
		entries = append(entries, batch...)
		if len(entries) > max {
			return nil, fmt.Errorf("%s: %w (more than %d)", rel, ErrTooLarge, max)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return sorted(), err
		}
	}
	return sorted(), nil
}

// Always is a more for a walk bounded by max alone.
func Always() bool { return true }
