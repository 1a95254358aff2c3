package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// The host layout shows a few /etc entries (rootfs.Layout.Binds under
// /etc/). Binding each one costs a mount per entry in every container, so
// Run instead binds one directory: a snapshot of those entries kept in the
// state root as etc-<hash>, rebuilt when the host's files change. Only
// world-readable files and directories are copied: /etc/ssl/private and
// anything else meant for root alone never enters a sandbox, whose root
// has CAP_DAC_OVERRIDE.

const etcSnapshotPrefix = "etc-"

// etcEntries splits a host layout's binds into the /etc entries and the rest.
func etcEntries(binds []string) (etc, other []string) {
	for _, b := range binds {
		if strings.HasPrefix(b, "/etc/") {
			etc = append(etc, b)
		} else {
			other = append(other, b)
		}
	}
	return etc, other
}

// etcItem is one file, directory or symlink of a snapshot.
type etcItem struct {
	path   string // absolute host path under /etc
	mode   fs.FileMode
	target string // symlink target
}

// hashEtc fingerprints the host state a snapshot of entries is taken from,
// cheaply enough to run before every container: see hashTree. A file
// rewritten in place deep inside a listed directory is not noticed until
// something else changes; `tether gc` then drops the old snapshot.
func hashEtc(entries []string) (string, error) {
	h := sha256.New()
	sorted := append([]string(nil), entries...)
	sort.Strings(sorted)
	for _, e := range sorted {
		if err := hashTree(h, e); err != nil {
			return "", fmt.Errorf("scanning host %s: %w", e, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashTree writes to h the mode, size and mtime of path and, for a
// world-readable directory, of every directory below it. Files inside a
// directory are not visited: adding, removing, renaming or replacing one
// (package managers replace files by renaming) changes the directory's
// mtime, which is hashed. A directory's link count is 2 plus its number of
// subdirectories on the filesystems that keep it (1 on those that do not),
// so one without subdirectories is not even listed: /etc/alternatives and
// /etc/ssl/certs hold hundreds of entries and cost one lstat each. A path
// that vanished or is not readable hashes as absent.
func hashTree(h io.Writer, path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOTDIR) {
			return nil
		}
		return err
	}
	fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d\n", path, st.Mode, st.Size, st.Mtim.Nano())
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o005 != 0o005 || st.Nlink == 2 {
		return nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	for _, d := range entries {
		if d.IsDir() {
			if err := hashTree(h, filepath.Join(path, d.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanEtc lists what a snapshot of entries holds: world-readable regular
// files and directories, and symlinks.
func scanEtc(entries []string) ([]etcItem, error) {
	var items []etcItem
	for _, e := range entries {
		err := filepath.WalkDir(e, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
					return nil // vanished, or not ours to show
				}
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			it := etcItem{path: p, mode: fi.Mode()}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				if it.target, err = os.Readlink(p); err != nil {
					return nil
				}
			case fi.IsDir():
				if fi.Mode().Perm()&0o005 != 0o005 {
					return fs.SkipDir // not world-readable: keep out
				}
			case fi.Mode().IsRegular():
				if fi.Mode().Perm()&0o004 == 0 {
					return nil
				}
			default:
				return nil // sockets, devices, fifos
			}
			items = append(items, it)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scanning host %s: %w", e, err)
		}
	}
	return items, nil
}

// etcSnapshot returns the snapshot directory for entries under stateRoot,
// building it if the host's files changed since the last one. Concurrent
// callers may both build; the first rename wins and the other copy is
// discarded.
func etcSnapshot(stateRoot string, entries []string) (string, error) {
	hash, err := hashEtc(entries)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(stateRoot, etcSnapshotPrefix+hash)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	items, err := scanEtc(entries)
	if err != nil {
		return "", err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := fmt.Sprintf("%s.tmp-%d-%x", dir, os.Getpid(), rnd)
	if err := buildEtc(tmp, items); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("building /etc snapshot: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(dir); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("publishing /etc snapshot: %w", err)
	}
	return dir, nil
}

// buildEtc copies items into dir, which stands for /etc.
func buildEtc(dir string, items []etcItem) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, it := range items {
		dst := filepath.Join(dir, strings.TrimPrefix(it.path, "/etc/"))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch {
		case it.mode&fs.ModeSymlink != 0:
			if err := os.Symlink(it.target, dst); err != nil {
				return err
			}
		case it.mode.IsDir():
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		default:
			if err := copyRegular(it.path, dst, it.mode.Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyRegular(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// staleEtcSnapshots lists snapshot directories (and abandoned temporary
// ones) under stateRoot other than keep.
func staleEtcSnapshots(stateRoot, keep string) []string {
	entries, _ := os.ReadDir(stateRoot)
	var out []string
	for _, e := range entries {
		p := filepath.Join(stateRoot, e.Name())
		if strings.HasPrefix(e.Name(), etcSnapshotPrefix) && p != keep {
			out = append(out, p)
		}
	}
	return out
}
