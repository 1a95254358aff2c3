// Package fspath resolves host paths the way the kernel will when they are
// used, for the checks that decide whether a path is tether's own or one
// the host trusts (config.OwnPaths, the sandbox's protected paths). It
// reads the file system (lstat, readlink) and needs no privilege.
package fspath

import (
	"os"
	"path/filepath"
)

// maxLinks is the kernel's MAXSYMLINKS.
const maxLinks = 40

// Real returns p (absolute) with every symlink of it resolved: those of
// its longest existing prefix, and a dangling link's target, followed as
// the kernel would once it is made. The part that does not exist yet is
// appended as it is. A loop returns p cleaned. p is cleaned lexically
// first: a ".." after a link is taken from the link's name, not its target.
func Real(p string) string { return real(filepath.Clean(p), maxLinks) }

func real(p string, n int) string {
	dir, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if target, err := os.Readlink(dir); err == nil && n > 0 { // a dangling link
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(dir), target)
			}
			return real(filepath.Join(target, rest), n-1)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
