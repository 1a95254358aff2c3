package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Kind says which sort of root a Layout describes.
type Kind string

const (
	// KindHost binds the host's system directories read-only into an empty root.
	KindHost Kind = "host"
	// KindDir uses a prepared root filesystem directory, mounted read-only.
	KindDir Kind = "dir"
)

// ErrUnusableRoot is returned (wrapped) when a prepared root directory is
// missing or cannot hold a command (no /bin/sh, not a directory...).
var ErrUnusableRoot = errors.New("unusable root filesystem")

// Layout is the plain-data description of a root filesystem. The zero value
// means "the host layout, probed when the sandbox starts" (see HostLayout).
type Layout struct {
	// Kind is KindHost, KindDir or empty (the zero value: host layout).
	Kind Kind `json:"kind,omitempty"`
	// Dir is the absolute path of the prepared root (KindDir only).
	Dir string `json:"dir,omitempty"`
	// Binds are absolute host paths bound read-only at the same path inside
	// an empty root (KindHost only): directories such as /usr and single
	// files such as /etc/passwd.
	Binds []string `json:"binds,omitempty"`
	// Symlinks maps a path in the root to its target, re-creating the host's
	// merged-/usr links (/bin -> usr/bin) rather than binding them (KindHost only).
	Symlinks map[string]string `json:"symlinks,omitempty"`
}

// hostDirs are the top-level system directories of the host layout. Each is
// bound read-only when it is a real directory, or re-created as a symlink
// when the host has a merged /usr (Debian 12: /bin -> usr/bin).
var hostDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// hostEtc is the part of /etc that programs need to start (dynamic linker
// cache, users and groups for `id`/`ls -l`, name resolution, TLS roots,
// Debian alternatives). The rest of /etc — /etc/shadow, ssh keys, credentials —
// stays outside the sandbox on purpose.
var hostEtc = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf",
	"/etc/ssl", "/etc/ca-certificates", "/etc/localtime", "/etc/mime.types",
	"/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/python3", "/etc/python3.11",
}

// HostLayout probes the host and returns its host layout: existing system
// directories bound read-only, merged-/usr symlinks re-created, and the
// small allow-list of /etc files. It fails when /usr is missing.
func HostLayout() (Layout, error) {
	return hostLayoutAt("/")
}

// hostLayoutAt probes a host whose root is at root (tests use a temp dir).
func hostLayoutAt(root string) (Layout, error) {
	l := Layout{Kind: KindHost, Symlinks: map[string]string{}}
	for _, d := range append(append([]string{}, hostDirs...), hostEtc...) {
		hp := filepath.Join(root, d)
		fi, err := os.Lstat(hp)
		if err != nil {
			continue // absent on this host: nothing to bind
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(hp)
			if err != nil {
				return Layout{}, fmt.Errorf("reading host link %s: %w", d, err)
			}
			// Only top-level links relative to the root (merged /usr) are
			// re-created; a link into /etc is bound as the file it names.
			if !strings.HasPrefix(d, "/etc/") && !filepath.IsAbs(target) {
				l.Symlinks[d] = target
				continue
			}
		}
		l.Binds = append(l.Binds, d)
	}
	if !contains(l.Binds, "/usr") {
		return Layout{}, fmt.Errorf("probing host layout: %w: %s/usr is missing", ErrUnusableRoot, strings.TrimSuffix(root, "/"))
	}
	return l, nil
}

// DirLayout returns the layout of a prepared root directory after checking
// with Validate that a command can start in it.
func DirLayout(dir string) (Layout, error) {
	l := Layout{Kind: KindDir, Dir: dir}
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if err := Validate(dir); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// Parse turns the --rootfs flag value ("host" or a directory) into a layout.
func Parse(s string) (Layout, error) {
	switch {
	case s == "" || s == "host":
		return HostLayout()
	default:
		abs, err := filepath.Abs(s)
		if err != nil {
			return Layout{}, fmt.Errorf("resolving rootfs %q: %w", s, err)
		}
		return DirLayout(abs)
	}
}

// Validate checks the layout's plain data without touching the filesystem.
func (l Layout) Validate() error {
	switch l.Kind {
	case "":
		return nil
	case KindHost:
		for _, b := range l.Binds {
			if !filepath.IsAbs(b) || filepath.Clean(b) != b || b == "/" {
				return fmt.Errorf("%w: host bind %q must be a clean absolute path other than /", ErrUnusableRoot, b)
			}
		}
		for p, target := range l.Symlinks {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" || target == "" {
				return fmt.Errorf("%w: host symlink %q -> %q is malformed", ErrUnusableRoot, p, target)
			}
		}
		return nil
	case KindDir:
		if !filepath.IsAbs(l.Dir) || filepath.Clean(l.Dir) == "/" {
			return fmt.Errorf("%w: root directory %q must be an absolute path other than /", ErrUnusableRoot, l.Dir)
		}
		return nil
	default:
		return fmt.Errorf("%w: unknown layout kind %q (want host or dir)", ErrUnusableRoot, l.Kind)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
