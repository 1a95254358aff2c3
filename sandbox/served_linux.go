package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
)

// A daemon's socket is tether's own path in every sandbox built under its
// state root, not only in the daemon's own (issue 14, the second red-team
// pass): a `tether run` of the same state root in the same workspace
// could otherwise unlink the socket there and listen in its place, and
// the next client would hand it its calls and approvals. The daemon
// records the paths (RecordServed) in the state root for as long as it
// serves; every sandbox's plan hides what the live records name
// (protectFor), as it hides the state root itself.

// servedDirName is the directory of a state root that holds the records.
const servedDirName = "served"

// maxServedRecords bounds the records read per sandbox (a state root
// holds one per live daemon; stale ones are removed as they are found).
const maxServedRecords = 256

// RecordServed records paths (absolute: a daemon's socket, and its
// directory when that is the socket's own) under stateRoot ("" for
// DefaultStateRoot) until release is called or the process dies. The
// record is locked for as long: a record whose lock is free is stale, and
// whoever reads it next removes it.
func RecordServed(stateRoot string, paths []string) (release func(), err error) {
	if stateRoot == "" {
		stateRoot = DefaultStateRoot()
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) || strings.ContainsRune(p, '\n') {
			return nil, fmt.Errorf("recording the daemon's paths: %q is not an absolute path on one line", p)
		}
	}
	// The state root as the sandboxes make it (setUp: 0711, so that a
	// sandbox's unprivileged id can reach its empty root under it), when
	// the daemon is first to make it; the record's own directory is
	// tether's alone.
	if err := os.MkdirAll(stateRoot, 0o711); err != nil {
		return nil, fmt.Errorf("recording the daemon's paths: %w", err)
	}
	dir := filepath.Join(stateRoot, servedDirName)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("recording the daemon's paths: %w", err)
	}
	// Written and locked under a temporary name, then renamed into place:
	// a reader never sees the record unlocked while its daemon lives.
	tmp, err := os.CreateTemp(dir, ".new-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("recording the daemon's paths: %w", err)
	}
	fail := func(err error) (func(), error) {
		tmp.Close()
		_ = os.Remove(tmp.Name())
		return nil, fmt.Errorf("recording the daemon's paths: %w", err)
	}
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := tmp.WriteString(strings.Join(paths, "\n") + "\n"); err != nil {
		return fail(err)
	}
	final := filepath.Join(dir, strings.TrimPrefix(filepath.Base(tmp.Name()), ".new-"))
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fail(err)
	}
	return func() {
		_ = os.Remove(final)
		tmp.Close()
	}, nil
}

// servedPaths returns the paths the live records under stateRoot name,
// removing the stale ones. A record that cannot be read refuses the
// sandbox: it may be a live daemon's.
func servedPaths(stateRoot string) ([]string, error) {
	dir := filepath.Join(stateRoot, servedDirName)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the daemons' records in %s: %w", dir, err)
	}
	defer unix.Close(fd)
	entries, err := dirlist.Read(fd, dir, maxServedRecords, dirlist.Always)
	if err != nil {
		return nil, fmt.Errorf("reading the daemons' records in %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".new-") || !e.Type().IsRegular() {
			continue // not yet in place (its daemon renames it when locked)
		}
		paths, live, err := readServed(fd, e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading the daemon's record %s: %w", filepath.Join(dir, e.Name()), err)
		}
		if live {
			out = append(out, paths...)
		}
	}
	return out, nil
}

// readServed reads one record in the directory dirfd: its paths, and
// whether its daemon lives (holds the lock). A stale record is removed.
func readServed(dirfd int, name string) ([]string, bool, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, false, nil // released meanwhile
	}
	if err != nil {
		return nil, false, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Nobody holds it: its daemon is gone.
		_ = unix.Unlinkat(dirfd, name, 0)
		return nil, false, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		return nil, false, err
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, false, err
	}
	var paths []string
	for _, p := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if !filepath.IsAbs(p) {
			return nil, false, fmt.Errorf("%q is not an absolute path", p)
		}
		paths = append(paths, filepath.Clean(p))
	}
	return paths, true, nil
}
