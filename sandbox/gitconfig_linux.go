package sandbox

import (
	"errors"
	"fmt"
	"path"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/protect"
)

// gitRepo is a frozen git directory and the top of its work tree (the git
// directory itself for a bare repository), both workspace-relative.
type gitRepo struct{ dir, top string }

// maxIncludeDepth is git's own bound on nested include.path files.
const maxIncludeDepth = 10

// configPath is a workspace path a repository's configuration names.
type configPath struct {
	rel     string
	kind    protect.Kind
	reserve bool // frozen even when missing: git would read or run what appears
}

// gitConfigPaths returns the workspace paths that the configuration of
// repos names (protect.ConfigRefs: core.hooksPath, include.path and the
// files it includes, the programs of core.fsmonitor, aliases, filters …),
// read beneath root without following symlinks. A hooks directory that is
// a work tree's top cannot be frozen without freezing the whole tree: it
// is refused (ErrUnsafeWorkspace).
//
// The configuration files themselves are frozen already (protect.GitDir);
// an included file is returned, and frozen by the caller, like any other.
func gitConfigPaths(root int, ws string, repos []gitRepo) ([]configPath, error) {
	var out []configPath
	seen := map[[2]string]bool{}
	var read func(file, top string, depth int) error
	read = func(file, top string, depth int) error {
		if depth > maxIncludeDepth || seen[[2]string{file, top}] {
			return nil
		}
		seen[[2]string{file, top}] = true
		data, err := readBeneath(root, file)
		if err != nil {
			// Missing, or not a plain file beneath the workspace (a
			// symlink, which the caller's freeze refuses).
			return nil
		}
		for _, ref := range protect.ConfigRefs(data) {
			rel, ok := ref.Resolve(ws, path.Dir(file), top)
			if !ok {
				continue
			}
			if rel == "." || rel == top {
				if ref.Kind == protect.Dir {
					return fmt.Errorf("%w: %s's %s names the work tree's top (%s), which cannot be frozen", ErrUnsafeWorkspace, file, ref.Key, ref.Path)
				}
				continue
			}
			if !named(root, rel, ref) {
				continue
			}
			out = append(out, configPath{rel: rel, kind: ref.Kind, reserve: ref.Missing})
			if ref.Include {
				if err := read(rel, top, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range repos {
		for _, f := range []string{"config", "config.worktree"} {
			if err := read(r.dir+"/"+f, r.top, 0); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// named reports whether ref's workspace path rel is to be frozen: always
// when ref is frozen missing too, else when it exists, and for a bare
// argument word (protect.ConfigRef.Arg) only as a regular file.
func named(root int, rel string, ref protect.ConfigRef) bool {
	switch {
	case ref.Missing:
		return true
	case !ref.Arg:
		return existsBeneath(root, rel)
	}
	fd, err := openBeneath(root, rel)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	m, err := fdMode(fd)
	return err == nil && m == unix.S_IFREG
}

// existsBeneath reports whether rel may exist under root: anything but a
// missing path (a symlink on the way counts, and the freeze refuses it).
func existsBeneath(root int, rel string) bool {
	fd, err := openBeneath(root, rel)
	if err == nil {
		unix.Close(fd)
		return true
	}
	return !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR)
}
