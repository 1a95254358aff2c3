package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tether-dev/tether/internal/protect"
	"github.com/tether-dev/tether/sandbox"
)

// ErrPathEscape is returned when a path, after resolving symlinks, lies
// outside the workspace.
var ErrPathEscape = errors.New("path escapes the workspace")

// ErrProtectedPath is returned when the model tries to write a protected
// path (package protect's list: git's control surface, shell rc files,
// .envrc, ssh files, tether's own config and state).
var ErrProtectedPath = errors.New("path is protected")

// maxLinks bounds symlink resolution, as the kernel's MAXSYMLINKS.
const maxLinks = 40

// resolveIn resolves p (absolute, or relative to the workspace root)
// inside root, following symlinks component by component the way the
// kernel would, and returns the canonical path relative to root ("." for
// the root itself). A path that leaves root at any step, through "..", an
// absolute name or a symlink, is ErrPathEscape. Components that do not
// exist yet are kept as written. root must be absolute and canonical.
func resolveIn(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("%w: %s is outside %s", ErrPathEscape, p, root)
		}
		p = rel
	}
	pending := splitPath(p)
	var cur []string // canonical components so far
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("%w: %s", ErrPathEscape, p)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := append(slices.Clone(cur), c)
		fi, err := os.Lstat(filepath.Join(root, filepath.Join(next...)))
		if errors.Is(err, fs.ErrNotExist) {
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxLinks {
			return "", fmt.Errorf("resolving %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(filepath.Join(root, filepath.Join(next...)))
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			rel, err := filepath.Rel(root, filepath.Clean(target))
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return "", fmt.Errorf("%w: %s links to %s", ErrPathEscape, p, target)
			}
			cur = nil
			target = rel
		}
		pending = append(splitPath(target), pending...)
	}
	if len(cur) == 0 {
		return ".", nil
	}
	return filepath.Join(cur...), nil
}

func splitPath(p string) []string { return strings.Split(filepath.ToSlash(p), "/") }

// protectedSet is the protected paths of the workspace root: the one
// list of package protect (shared with the sandbox's binds), the git
// directory a root .git file names, tether's own config and state, and
// in a home directory (sandbox.IsHome) the home rule (protect.Set.Home).
func protectedSet(root string, extra []string) protect.Set {
	s := protect.Set{Root: root, Extra: extra, Home: sandbox.IsHome(root)}
	// Read without following a symlink: a .git symlink is itself
	// protected, and what it points at is not a .git file's target.
	f, err := os.OpenFile(filepath.Join(root, protect.GitDirName), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return s
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return s
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return s
	}
	if dir, err := protect.GitFileTarget(root, ".", data); err == nil {
		s.GitDirs = append(s.GitDirs, dir)
	}
	return s
}

// hiddenReason returns why rel (canonical, relative to root) may not even
// be read by the model: it is or lies inside tether's own config or state
// (extra), which hold approvals, the audit log and maybe secrets. A
// directory holding them may be read (listed, searched): the search skips
// them by identity.
func hiddenReason(root, rel string, extra []string) string {
	abs := filepath.Join(root, rel)
	for _, e := range extra {
		if e == "" {
			continue
		}
		if e = filepath.Clean(e); abs == e || strings.HasPrefix(abs, e+"/") {
			return fmt.Sprintf("%s is tether's own configuration or state: file tools neither read nor write it", e)
		}
	}
	return ""
}

// overlaps reports whether a and b (cleaned paths) are equal or one lies
// under the other.
func overlaps(a, b string) bool { return protect.Overlaps(a, b) }
