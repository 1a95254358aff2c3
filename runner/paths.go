package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrPathEscape is returned when a path, after resolving symlinks, lies
// outside the workspace.
var ErrPathEscape = errors.New("path escapes the workspace")

// ErrProtectedPath is returned when the model tries to write a protected
// path (.git/hooks, .git/config, shell rc files, tether's own config and
// state).
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

// shellRC are files a shell runs at start; writing them plants code in
// the user's next shell.
var shellRC = []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".inputrc"}

// protectedReason returns why rel (canonical, relative to the workspace
// root) may not be written by the model, or "" when it may. extra are
// absolute directories or files that are protected wherever they appear
// (tether's config and state), root is the workspace's absolute path.
func protectedReason(root, rel string, extra []string) string {
	parts := splitPath(rel)
	for i, c := range parts {
		if c == ".git" && i+1 < len(parts) && (parts[i+1] == "hooks" || parts[i+1] == "config") {
			return ".git/" + parts[i+1] + " is protected: it runs or configures code outside the sandbox"
		}
		if c == ".git" && i+1 == len(parts) {
			return ".git itself is protected"
		}
	}
	base := parts[len(parts)-1]
	if slices.Contains(shellRC, base) {
		return base + " is a shell startup file and is protected"
	}
	if len(parts) >= 3 && parts[len(parts)-3] == ".config" && parts[len(parts)-2] == "fish" && base == "config.fish" {
		return "fish's config is protected"
	}
	abs := filepath.Join(root, rel)
	for _, e := range extra {
		if e == "" {
			continue
		}
		if overlaps(abs, e) {
			return fmt.Sprintf("%s is tether's own configuration or state and is protected", e)
		}
	}
	return ""
}

// overlaps reports whether a and b (cleaned paths) are equal or one lies
// under the other.
func overlaps(a, b string) bool {
	if a == b {
		return true
	}
	return within(a, b) || within(b, a)
}

// within reports whether p lies strictly under dir.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}
