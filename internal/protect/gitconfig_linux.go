package protect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
	"github.com/tether-dev/tether/internal/fspath"
)

// GitRepo is a git directory and the top of its work tree (the git directory
// itself for a bare repository), both workspace-relative.
type GitRepo struct{ Dir, Top string }

// Named is a workspace path that a repository's configuration names.
type Named struct {
	// Rel is the workspace-relative path.
	Rel string
	// Kind is File or Dir.
	Kind Kind
	// Reserve says the path is to be frozen even when missing: git would
	// read or run what appears there.
	Reserve bool
	// Key is the configuration variable that names it, for messages.
	Key string
}

// ErrNamesTop is returned by ConfigNamed when a hooks directory is a work
// tree's top: it cannot be frozen without freezing the whole tree.
var ErrNamesTop = errors.New("a repository's configuration names its work tree's top as the hooks directory")

// MaxIncludeDepth is git's own bound on nested include.path files.
const MaxIncludeDepth = 10

// ConfigNamed returns the workspace paths that the configuration of repos
// names (ConfigRefs: core.hooksPath, include.path and the files it
// includes, the programs of core.fsmonitor, aliases, filters …), read
// beneath root (an open descriptor of the workspace, whose host path is
// ws) without following symlinks. It is the one resolver the sandbox
// (which freezes the paths at start) and the runner's file tools (which
// refuse to write them, NamedReason) share.
//
// The configuration files themselves are on GitDir already; an included
// file is returned like any other.
func ConfigNamed(root int, ws string, repos []GitRepo) ([]Named, error) {
	var out []Named
	for _, r := range repos {
		named, err := repoNamed(root, ws, r, func(string) {})
		if err != nil {
			return nil, err
		}
		out = append(out, named...)
	}
	return out, nil
}

// repoNamed is ConfigNamed for one repository. Before it looks at a path
// (a configuration file, a named path whose existence decides whether it
// is frozen, the hooks directory) it calls look with it: a
// workspace-relative path beneath root, or the absolute host path of an
// included file outside the workspace. ConfigView keeps the answer while
// none of them changes.
//
// Reading a configuration file is separate from freezing a path: every
// include is followed for its content wherever it is (ten deep, every
// includeIf condition taken as true, which fails closed), and only the
// names inside the workspace are returned. A team configuration outside
// the checkout (include.path = /srv/team.cfg) that names the checkout's
// hooks/ then protects hooks/, though team.cfg itself is out of the
// sandbox's reach and needs no freeze.
func repoNamed(root int, ws string, r GitRepo, look func(file string)) ([]Named, error) {
	var out []Named
	seen := map[string]bool{}
	wsReal := fspath.Real(ws)
	var read func(file string, depth int) error
	read = func(file string, depth int) error {
		if depth > MaxIncludeDepth || seen[file] {
			return nil
		}
		seen[file] = true
		look(file)
		outside := path.IsAbs(file)
		var data []byte
		var err error
		if outside {
			data, err = ReadHostConfig(file)
			if errors.Is(err, ErrConfigTooLarge) {
				return err // fail closed: git reads it whole
			}
		} else {
			data, err = readBeneath(root, file)
		}
		if err != nil {
			// Missing, or not a plain file beneath the workspace (a
			// symlink, which the sandbox's freeze refuses).
			return nil
		}
		for _, ref := range ConfigRefs(data) {
			if outside && ref.Base == BaseFile && ref.Path != "" && !path.IsAbs(ref.Path) && !strings.HasPrefix(ref.Path, "~") {
				// Relative to the including file, which is outside.
				ref.Path = path.Join(path.Dir(file), ref.Path)
			}
			rel, ok := ref.Resolve(ws, path.Dir(file), r.Top)
			if !ok {
				if ref.Include {
					for _, abs := range includeOutside(ref, ws, file) {
						// A host path that reaches the workspace through a
						// symlink is the workspace file git reads.
						if inRel, in := strings.CutPrefix(fspath.Real(abs), wsReal+"/"); in {
							out = append(out, Named{Rel: inRel, Kind: File, Reserve: true, Key: ref.Key})
							abs = inRel
						}
						if err := read(abs, depth+1); err != nil {
							return err
						}
					}
				}
				continue
			}
			if rel == "." || rel == r.Top {
				if ref.Kind == Dir {
					return fmt.Errorf("%w: %s's %s is %s", ErrNamesTop, file, ref.Key, ref.Path)
				}
				continue
			}
			look(rel)
			if !ref.Frozen(root, rel) {
				continue
			}
			out = append(out, Named{Rel: rel, Kind: ref.Kind, Reserve: ref.Missing, Key: ref.Key})
			if ref.Include {
				if err := read(rel, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, f := range []string{"config", "config.worktree"} {
		if err := read(path.Join(r.Dir, f), 0); err != nil {
			return nil, err
		}
	}
	// A link added to, removed from or replaced in hooks/ changes the
	// directory's modification time.
	look(path.Join(r.Dir, "hooks"))
	links, err := hookLinks(root, ws, r.Dir)
	if err != nil {
		return nil, err
	}
	return append(out, links...), nil
}

// ConfigView is a creation gate's view of its workspace's git
// configuration: the paths each repository's configuration names
// (ConfigNamed), read again whenever a file they were read from has
// changed. The host's `git config core.hooksPath .githooks` in the middle
// of a session then protects .githooks at the session's next write, not
// only in later sandboxes; a view that only read the files at start would
// let the session plant the hooks the host's next commit runs.
//
// Change is told by what lstat says of every path the answer looked at
// (its device, inode, mode, size, modification and change times, or that
// it was missing), taken before it was read: a file changed after its
// stamp was taken is read again at the next call. A rewrite in place that
// keeps the size is told by its times: since Linux 6.13 ext4, xfs, btrfs
// and tmpfs give a change made after a stat a distinct change time
// (multigrain timestamps); elsewhere such a rewrite within one clock tick
// of the stamp goes unseen until the file changes again. The zero value is ready
// for use; it is safe for concurrent use.
type ConfigView struct {
	// Host, when set, returns what the host trusts outside the workspace
	// whose root is root and that is, or names, a path in it: the global,
	// system and an enclosing repository's configuration, a per-user
	// file linked into it (sandbox/hosttrust_linux.go). It calls look with
	// every absolute host path whose content or presence decides its
	// answer, before reading it; the answer is read again when one of
	// them changes, so a host that sets a global core.hooksPath in the
	// middle of a session is followed at the session's next write.
	Host func(root int, look func(hostPath string)) ([]Named, error)

	mu      sync.Mutex
	answers map[GitRepo]viewAnswer
	host    *viewAnswer // Host's answer, once read
}

// maxViewRepos bounds the repositories a ConfigView keeps answers for
// (the host can make any number mid-session): past it they are dropped
// and read again.
const maxViewRepos = 1024

// viewAnswer is one repository's answer and the stamps it was read at.
type viewAnswer struct {
	stamps []viewStamp
	named  []Named
	err    error
}

// viewStamp is what a path beneath the workspace (or an included host
// file outside it, absolute) was when an answer was read.
type viewStamp struct {
	rel string
	st  Stamp
}

// Stamp is lstat's view of a path (its device, inode, mode, size,
// modification and change times), or its errno: what a reader compares
// to tell whether the object changed since it was stamped (see
// ConfigView for when a change is seen). Stamps are comparable with ==.
type Stamp struct {
	dev, ino, size uint64
	mode           uint32
	mtime, ctime   unix.Timespec
	errno          unix.Errno
}

// stampOf is StampBeneath for a workspace-relative path and stampHost for
// the absolute host path of an included file outside the workspace.
func stampOf(root int, p string) Stamp {
	if path.IsAbs(p) {
		return stampHost(p)
	}
	return StampBeneath(root, p)
}

// stampHost takes the stamp of the host file p as ReadHostConfig (and the
// host's git) reads it, following symlinks: an edit of the file, or a link
// moved to another one, changes it.
func stampHost(p string) Stamp {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		e, ok := err.(unix.Errno)
		if !ok || e == 0 {
			e = unix.EIO
		}
		return Stamp{errno: e}
	}
	return statStamp(&st)
}

// statStamp is the stamp of what st describes.
func statStamp(st *unix.Stat_t) Stamp {
	return Stamp{dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size), mode: st.Mode, mtime: st.Mtim, ctime: st.Ctim}
}

// StampFd takes the stamp of the open file fd.
func StampFd(fd int) (Stamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Stamp{}, err
	}
	return statStamp(&st), nil
}

// Dev is the device of the stamped object (0 for a stamp of an errno).
func (s Stamp) Dev() uint64 { return s.dev }

// ChangedBefore reports whether the stamped object's change time is
// before t (false for a stamp of an errno).
func (s Stamp) ChangedBefore(t time.Time) bool {
	return s.errno == 0 && time.Unix(s.ctime.Unix()).Before(t)
}

// StampBeneath takes rel's stamp beneath root, following no symlink (the
// readers refuse them too).
func StampBeneath(root int, rel string) Stamp {
	fd, err := OpenBeneath(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err == nil {
		defer unix.Close(fd)
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil {
			return statStamp(&st)
		}
	}
	e, ok := err.(unix.Errno)
	if !ok || e == 0 {
		e = unix.EIO
	}
	return Stamp{errno: e}
}

// named returns ConfigNamed's answer for r, read again unless every path
// it looked at is as it was.
func (v *ConfigView) named(root int, ws string, r GitRepo) ([]Named, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a, ok := v.answers[r]; ok && a.fresh(root) {
		return a.named, a.err
	}
	var a viewAnswer
	a.named, a.err = repoNamed(root, ws, r, func(rel string) {
		a.stamps = append(a.stamps, viewStamp{rel, stampOf(root, rel)})
	})
	if v.answers == nil || len(v.answers) >= maxViewRepos {
		v.answers = map[GitRepo]viewAnswer{}
	}
	v.answers[r] = a
	return a.named, a.err
}

// hostNamed returns v.Host's answer, read again unless every path it
// looked at is as it was.
func (v *ConfigView) hostNamed(root int) ([]Named, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.host != nil && v.host.fresh(root) {
		return v.host.named, v.host.err
	}
	a := &viewAnswer{}
	a.named, a.err = v.Host(root, func(p string) {
		a.stamps = append(a.stamps, viewStamp{p, stampHost(p)})
	})
	v.host = a
	return a.named, a.err
}

// fresh reports whether every path a looked at is as it was.
func (a viewAnswer) fresh(root int) bool {
	for _, s := range a.stamps {
		if stampOf(root, s.rel) != s.st {
			return false
		}
	}
	return true
}

// hookLinks returns the workspace paths that the symlinks in the hooks
// directory of the git directory dir point to (`hooks/pre-commit ->
// ../../scripts/pre-commit`): git runs the target, so it is named as a
// hook, frozen even when missing.
func hookLinks(root int, ws, dir string) ([]Named, error) {
	hooks := path.Join(dir, "hooks")
	fd, err := OpenBeneath(root, hooks, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, nil // no hooks directory (or not a plain one, which the freeze refuses)
	}
	defer unix.Close(fd)
	entries, err := dirlist.Read(fd, hooks, dirlist.MaxEntries, dirlist.Always)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", hooks, err)
	}
	var out []Named
	buf := make([]byte, unix.PathMax)
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		n, err := unix.Readlinkat(fd, e.Name(), buf)
		if err != nil {
			continue // gone meanwhile
		}
		if rel, ok := LinkTarget(ws, hooks, string(buf[:n])); ok && rel != "." {
			out = append(out, Named{Rel: rel, Kind: File, Reserve: true, Key: "hooks/" + e.Name() + " links to it"})
		}
	}
	return out, nil
}

// LinkTarget returns the workspace-relative path that a symlink in the
// workspace directory dir with target names, cleaned lexically as the
// kernel resolves it when no directory on the way is a link (the freeze
// refuses those), and whether it lies in the workspace, whose host path is
// ws ("." for the workspace itself).
func LinkTarget(ws, dir, target string) (string, bool) {
	if path.IsAbs(target) {
		p, ws := path.Clean(target), path.Clean(ws)
		if p == ws {
			return ".", true
		}
		if rel, ok := strings.CutPrefix(p, ws+"/"); ok {
			return rel, true
		}
		return "", false
	}
	p := path.Clean(dir + "/" + target)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// Frozen reports whether ref's workspace path rel (under the workspace
// root, an open descriptor) is to be frozen: always when ref is frozen
// missing too, else when it exists, and for a bare argument word
// (ConfigRef.Arg) only as a regular file.
func (ref ConfigRef) Frozen(root int, rel string) bool {
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
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
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

func openBeneath(dir int, rel string) (int, error) {
	return OpenBeneath(dir, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// readBeneath reads at most 1 MiB (and a byte, so that a larger file is
// told) of the regular file rel under dir, never through a symlink and
// without blocking on a FIFO.
func readBeneath(dir int, rel string) ([]byte, error) {
	fd, err := OpenBeneath(dir, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("reading %s: not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return data, nil
}

// ErrConfigTooLarge is returned for a host configuration file larger than
// tether reads: what it names cannot be told, so the caller refuses.
var ErrConfigTooLarge = errors.New("larger than 1 MiB: what it names cannot be told")

// maxConfigSize bounds a configuration file read (a byte more is read, so
// that a larger file is told and refused).
const maxConfigSize = 1 << 20

// ReadHostConfig reads the host configuration file p (absolute) as the
// host's git does, following symlinks, but only a regular file of at most
// maxConfigSize, without blocking on a FIFO or a device. It is the one
// reader of configuration outside the workspace: the repository's
// includes here and the host-trusted files (the global configuration and
// the enclosing repository's) in the sandbox.
func ReadHostConfig(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("reading %s: not a regular file", p)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("reading %s: %w", p, ErrConfigTooLarge)
	}
	return data, nil
}

// includeOutside returns the absolute host paths the include ref of the
// configuration file (workspace-relative, or absolute when outside) may
// name when Resolve found none in the workspace: every expansion of ~/
// git may make, the path itself, or the relative path from the file's
// directory. None for a path that depends on an environment ($VAR).
func includeOutside(ref ConfigRef, ws, file string) []string {
	p := ref.Path
	switch {
	case p == "" || strings.Contains(p, "$"):
		return nil
	case strings.HasPrefix(p, "~"):
		return expandTilde(p, ws)
	case path.IsAbs(p):
		return []string{path.Clean(p)}
	case path.IsAbs(file):
		return []string{path.Join(path.Dir(file), p)}
	}
	return []string{path.Join(ws, path.Dir(file), p)}
}

// objID is a file's identity.
type objID struct{ dev, ino uint64 }

// fileKey is a directory's identity and a name in it.
type fileKey struct {
	dir  objID
	name string
}

// NamedReason returns why creating or replacing name in the directory
// dirfd (at dir relative to the workspace root, "." for the root; root is
// an open descriptor of the workspace root, whose host path is ws) would
// change a path a repository's configuration names (ConfigNamed), or ""
// when it would not. The repositories are those whose work tree holds
// dirfd, found on the opened directories from dirfd up to the root (a
// .git directory or file in one, or a bare repository that one is).
//
// The match is made on objects, not strings: each named path's parent is
// opened beneath root (following symlinks that stay beneath it, as the
// host's git does) and compared by device and inode with dirfd and its
// ancestors, so a differently spelt path (letter case on a casefold
// directory, a symlinked parent) to the same file is refused too. A
// configuration that cannot be judged (ErrNamesTop) refuses the write.
func NamedReason(root, dirfd int, ws, dir, name string) (string, error) {
	return (*ConfigView)(nil).Reason(root, dirfd, ws, dir, name, nil)
}

// Reason is NamedReason with the answers of v (a nil v reads every file
// again), and the repositories known besides those whose work tree holds
// dirfd: every repository of the workspace frozen at start, whose
// configuration may name a path anywhere in the workspace
// (core.hooksPath = ../tools/hooks of a nested one).
func (v *ConfigView) Reason(root, dirfd int, ws, dir, name string, known []GitRepo) (string, error) {
	var rootSt unix.Stat_t
	if err := unix.Fstat(root, &rootSt); err != nil {
		return "", fmt.Errorf("reading the workspace root: %w", err)
	}
	var parts []string
	if dir = path.Clean(dir); dir != "." {
		parts = split(dir)
	}
	// levels[k] is the k-th directory up from dirfd and its child on the
	// way to name (name itself for k = 0).
	var levels []fileKey
	var repos []GitRepo
	cur, owned, child := dirfd, false, name
	defer func() {
		if owned {
			unix.Close(cur)
		}
	}()
	for {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return "", fmt.Errorf("reading %s: %w", path.Join(append([]string{"."}, parts...)...), err)
		}
		levels = append(levels, fileKey{objID{uint64(st.Dev), st.Ino}, child})
		here := path.Join(append([]string{"."}, parts...)...)
		if r, ok := repoAt(cur, ws, here); ok {
			repos = append(repos, r)
		}
		if st.Dev == rootSt.Dev && st.Ino == rootSt.Ino {
			break
		}
		if len(parts) == 0 {
			return "", fmt.Errorf("%s is no longer the directory it was opened as", dir)
		}
		parent, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("opening the parent of %s: %w", here, err)
		}
		if owned {
			unix.Close(cur)
		}
		cur, owned, child = parent, true, parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	// The object name is now, if any: a named file reached through a
	// symlink is matched as the object it is.
	var target objID
	var tst unix.Stat_t
	hasTarget := unix.Fstatat(dirfd, name, &tst, unix.AT_SYMLINK_NOFOLLOW) == nil
	if hasTarget {
		target = objID{uint64(tst.Dev), tst.Ino}
	}
	for _, r := range known {
		if !slices.Contains(repos, r) {
			repos = append(repos, r)
		}
	}
	for _, r := range repos {
		var named []Named
		var err error
		if v == nil {
			named, err = repoNamed(root, ws, r, func(string) {})
		} else {
			named, err = v.named(root, ws, r)
		}
		if err != nil {
			return "", err
		}
		for _, n := range named {
			if namedMatch(root, n, levels, target, hasTarget) {
				return fmt.Sprintf("%s is protected: the repository's configuration names it (%s), and git runs or reads it", n.Rel, n.Key), nil
			}
		}
	}
	if v != nil && v.Host != nil {
		named, err := v.hostNamed(root)
		if err != nil {
			return "", err
		}
		for _, n := range named {
			if namedMatch(root, n, levels, target, hasTarget) {
				return fmt.Sprintf("%s is protected: the host trusts it (%s), and runs or reads it", n.Rel, n.Key), nil
			}
		}
	}
	return "", nil
}

// namedMatch reports whether n is the name written (levels[0]), or for a
// directory holds it (any level). n is resolved beneath root following
// symlinks that stay beneath it, as the host's git resolves it, and
// compared by identity: its parent and last name, and the object itself
// when it exists (a file or directory reached through a symlink).
func namedMatch(root int, n Named, levels []fileKey, target objID, hasTarget bool) bool {
	parent, base := path.Split(n.Rel)
	if p, ok := idBeneath(root, path.Clean("./"+parent)); ok {
		for i, l := range levels {
			// Names compare as Reason's do, in any letter case.
			if l.dir == p && strings.EqualFold(l.name, base) && (i == 0 || n.Kind == Dir) {
				return true
			}
		}
	}
	obj, ok := idBeneath(root, n.Rel)
	if !ok {
		return false
	}
	if n.Kind == Dir {
		for _, l := range levels {
			if l.dir == obj {
				return true
			}
		}
		return false
	}
	return hasTarget && target == obj
}

// repoAt returns the repository whose work tree top (or bare git
// directory) is the directory fd, at here (workspace-relative).
func repoAt(fd int, ws, here string) (GitRepo, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, GitDirName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return GitRepo{Dir: path.Join(here, GitDirName), Top: here}, true
		case unix.S_IFREG:
			data, err := readBeneath(fd, GitDirName)
			if err != nil {
				return GitRepo{}, false
			}
			if t, err := GitFileTarget(ws, here, data); err == nil {
				return GitRepo{Dir: t, Top: here}, true
			}
		}
		return GitRepo{}, false
	}
	if path.Base(here) != GitDirName && HeadAt(fd) == HeadValid {
		return GitRepo{Dir: here, Top: here}, true
	}
	return GitRepo{}, false
}

// idBeneath opens rel beneath root, following symlinks that stay beneath
// it, and returns its identity.
func idBeneath(root int, rel string) (objID, bool) {
	fd, err := OpenBeneath(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return objID{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return objID{}, false
	}
	return objID{uint64(st.Dev), st.Ino}, true
}

// expandTilde returns the absolute paths git may make of p (~/x or
// ~user/x) in the workspace ws's own configuration: ExpandTilde with the
// home of each user whose git may read it (HomesFor).
func expandTilde(p, ws string) []string {
	return ExpandTilde(p, HomesFor(ws))
}

// ExpandTilde returns the absolute paths git's pathname expansion may make
// of p, which starts with ~: ~/ with each of homes (the homes of the users
// whose git reads the file p came from), ~user/ with that user's home.
// None when it cannot be expanded.
func ExpandTilde(p string, homes []string) []string {
	name, rest, _ := strings.Cut(p[1:], "/")
	if name != "" {
		homes = nil
		if u, err := user.Lookup(name); err == nil && u.HomeDir != "" {
			homes = []string{u.HomeDir}
		}
	}
	var out []string
	for _, h := range homes {
		if path.IsAbs(h) {
			out = append(out, path.Join(h, rest))
		}
	}
	return out
}

// HomesFor returns the homes a host git reading the configuration of the
// workspace ws may expand ~/ with: this process's $HOME, root's, and the
// home of the workspace's owner (who runs git there when it is not root).
func HomesFor(ws string) []string {
	var homes []string
	add := func(h string) {
		if h != "" && !slices.Contains(homes, h) {
			homes = append(homes, h)
		}
	}
	add(os.Getenv("HOME"))
	if u, err := user.LookupId("0"); err == nil {
		add(u.HomeDir)
	}
	var st unix.Stat_t
	if unix.Stat(ws, &st) == nil {
		if u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10)); err == nil {
			add(u.HomeDir)
		}
	}
	return homes
}
