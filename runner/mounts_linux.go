package runner

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/internal/protect"
	"github.com/tether-dev/tether/sandbox"
)

// ErrUnsafeMount is returned (wrapped, with the reason) when a profile's
// terminal.mounts entry may not be shown to a sandbox as the host is now.
var ErrUnsafeMount = errors.New("refusing the mount")

// mountBinds checks a profile's terminal.mounts against the host as it is
// when a sandbox with workspace root (canonical) starts, and returns them
// as sandbox binds. own are tether's own paths (config.OwnPaths and the
// sandbox state root). Beyond the static checks of config.MountProblem,
// each path must exist, be reached through no symlink (it is opened by
// descriptor, RESOLVE_NO_SYMLINKS, and must still be at its path), be a
// directory or regular file, and not be the same object as, or hold or lie
// inside, the workspace or one of own however it is reached (a symlinked
// state_dir, a bind mount of it elsewhere: compared by device and inode
// along both paths). A writable mount must belong to the workspace's
// owner (the identity the sandbox already writes as) and hold none of the
// protected entries at its top (.git, .envrc, .tether.yaml, rc files): it
// has no protected-path freeze.
func mountBinds(mounts []config.Mount, root string, own []string) ([]sandbox.Bind, error) {
	if len(mounts) == 0 {
		return nil, nil
	}
	var wsSt unix.Stat_t
	if err := unix.Stat(root, &wsSt); err != nil {
		return nil, fmt.Errorf("%w: reading the workspace's owner: %w", ErrUnsafeMount, err)
	}
	// The objects no mount may be, hold or lie in: the workspace and
	// tether's own paths, by the path given and the path they resolve to.
	guarded := map[fileID]string{idOf(&wsSt): root}
	var guardedPaths []string
	for _, o := range own {
		if o == "" {
			continue
		}
		guardedPaths = append(guardedPaths, filepath.Clean(o))
		if r, err := filepath.EvalSymlinks(o); err == nil {
			guardedPaths = append(guardedPaths, r)
		}
		var st unix.Stat_t
		if unix.Stat(o, &st) == nil {
			guarded[idOf(&st)] = o
		}
	}
	out := make([]sandbox.Bind, 0, len(mounts))
	for _, m := range mounts {
		b, err := checkMount(m, root, &wsSt, guarded, guardedPaths)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrUnsafeMount, m.Path, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func checkMount(m config.Mount, root string, wsSt *unix.Stat_t, guarded map[fileID]string, guardedPaths []string) (sandbox.Bind, error) {
	p := filepath.Clean(m.Path)
	if why := config.MountProblem(p, root, guardedPaths); why != "" {
		return sandbox.Bind{}, errors.New(why)
	}
	canon, err := filepath.EvalSymlinks(p)
	if err != nil {
		return sandbox.Bind{}, fmt.Errorf("resolving it: %w (create it first, or remove the mount)", err)
	}
	if canon != p {
		return sandbox.Bind{}, fmt.Errorf("it is reached through a symlink (it resolves to %s); name the real path", canon)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return sandbox.Bind{}, fmt.Errorf("opening it without following symlinks: %w", err)
	}
	defer unix.Close(fd)
	if got, err := fdPath(fd); err != nil || got != p {
		return sandbox.Bind{}, fmt.Errorf("%w (it is now %q)", ErrPathChanged, got)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return sandbox.Bind{}, fmt.Errorf("reading it: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFREG:
	default:
		return sandbox.Bind{}, kindError(p, st.Mode)
	}
	// Inside a guarded object: one of the mount's ancestors (or itself)
	// is it, whatever path reaches it.
	for dir := p; ; dir = filepath.Dir(dir) {
		var ds unix.Stat_t
		if unix.Stat(dir, &ds) == nil {
			if g, ok := guarded[idOf(&ds)]; ok {
				return sandbox.Bind{}, fmt.Errorf("it is or lies inside %s (the same directory, reached another way)", g)
			}
		}
		if dir == "/" {
			break
		}
	}
	// Holding a guarded object: the mount is one of its ancestors.
	for _, g := range guarded {
		for dir := filepath.Dir(g); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
			var ds unix.Stat_t
			if unix.Stat(dir, &ds) == nil && idOf(&ds) == idOf(&st) {
				return sandbox.Bind{}, fmt.Errorf("it holds %s (reached another way)", g)
			}
		}
	}
	if m.Mode == config.MountRW {
		if st.Uid != wsSt.Uid {
			return sandbox.Bind{}, fmt.Errorf("a writable mount must belong to the workspace's owner (uid %d), the identity sandboxed commands write as; it belongs to uid %d (mount it ro)", wsSt.Uid, st.Uid)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			for _, e := range protect.Workspace() {
				var es unix.Stat_t
				if unix.Fstatat(fd, e.Path, &es, unix.AT_SYMLINK_NOFOLLOW) == nil {
					return sandbox.Bind{}, fmt.Errorf("it holds %s, and a writable mount has no protected-path freeze (mount it ro)", e.Path)
				}
			}
		}
	}
	return sandbox.Bind{Source: p, ReadOnly: m.Mode != config.MountRW}, nil
}
