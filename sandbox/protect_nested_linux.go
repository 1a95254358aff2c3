package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
	"github.com/tether-dev/tether/internal/protect"
)

// Nested repositories (docs/workspace.md). The host's git trusts every
// repository in the workspace, not only the root's: `git status` in sub/
// runs sub/.git/config's core.fsmonitor, and in a directory that is itself
// a git directory (a bare repository: HEAD, objects/, refs/) that
// directory's config. planProtection therefore walks the workspace once
// when a sandbox starts and freezes, like the root's .git,
//   - every entry named .git below the root (a directory, or a file naming
//     one; a symlink is refused, as at the root);
//   - every directory holding a HEAD that git would take for a repository's
//     (a bare repository);
//   - every other regular file named HEAD, read-only, so that it cannot be
//     rewritten into a valid one and complete a bare repository.
//
// A symlink whose target's last element is .git or HEAD is refused
// (ErrUnsafeWorkspace): open(O_CREAT) through it would create that name.
// New names are the creation gate's (notify_create_linux.go): no process of
// the sandbox can make a .git, or a HEAD outside a .git directory.
//
// The walk is bounded: it reads at most maxNestedDirs directories and
// maxNestedEntries names, and lists no directory of more than
// dirlist.MaxEntries names (a sandbox can make one of millions; it is
// listed dirlist.Batch names at a time, and given up on past the bound).
// A walk that could not read everything is truncated: the repositories
// found stay frozen, and the sandbox reports "nested-repos" in
// NotEnforced, never a clean workspace. It does not descend into git
// directories (they are frozen as a whole, modules/ and worktrees/
// included), into tether's own hidden directories, or through symlinks.
//
// A complete walk is kept (nestedScans) with the stamp (protect.Stamp,
// taken before the read) of every directory it listed and every HEAD it
// looked at, and serves the next sandbox of the same workspace only while
// each of those is as it was: what the walk found is a function of those
// listings and HEADs alone (a name made, removed or renamed changes its
// directory's times, a symlink cannot be rewritten in place, a HEAD
// rewritten in place changes its own), so an unchanged set of stamps is
// the same answer. A directory whose stamp changed is listed again, and
// still holds when its names and types are those of the kept walk but for
// reservation placeholders (links to reservedTarget, other than a .git or
// HEAD), which the walk passes over and which every sandbox makes and
// removes in the workspace's root as it comes and goes. Only where a change after a stat always gets a
// distinct change time (protect.DistinctChangeTimes: ext4, xfs, btrfs and
// tmpfs since Linux 6.13), and only when every stamped object is on the
// workspace's own file system, is a walk kept; elsewhere each sandbox
// walks again. A truncated walk is never kept.

const (
	// maxNestedDirs bounds the directories the walk reads: about 25 ms on
	// a warm cache per 10,000 directories. A checkout of Linux has 5,000;
	// node_modules trees of large projects reach 50,000.
	maxNestedDirs = 50_000
	// maxNestedEntries bounds the names the walk reads in all: a checkout
	// of Linux has 90,000.
	maxNestedEntries = 1_000_000
)

// nestedScan is what the walk found.
type nestedScan struct {
	repos     []string // workspace-relative git directories or .git entries
	heads     []string // HEAD files that are not a repository's
	truncated bool     // the walk did not read every directory
}

// scanNested returns the nested repositories of the workspace under root
// (an O_PATH descriptor): the kept walk of this workspace while its
// stamps hold, else a new walk (kept when it may be). skip are
// workspace-relative paths not to enter (the root's .git, tether's hidden
// paths).
func scanNested(root int, skip []string) (nestedScan, error) {
	key, keep := nestedKeyOf(root, skip)
	if keep {
		if sc, ok := nestedScans.get(root, key); ok {
			return sc, nil
		}
	}
	start := time.Now()
	sc, stamps, err := walkNested(root, skip)
	if err == nil && keep && !sc.truncated && keepable(stamps, key.dev, start) {
		nestedScans.put(key, sc, stamps)
	}
	return sc, err
}

// walkNested walks the workspace under root for nested repositories,
// returning what it found and the stamps of what it read.
func walkNested(root int, skip []string) (nestedScan, []nestedStamp, error) {
	var sc nestedScan
	var stamps []nestedStamp
	queue := []string{"."}
	read := 0 // names read so far
	for dirs := 0; len(queue) > 0; dirs++ {
		if dirs == maxNestedDirs || read >= maxNestedEntries {
			sc.truncated = true
			break
		}
		dir := queue[0]
		queue = queue[1:]
		max := min(dirlist.MaxEntries, maxNestedEntries-read)
		entries, st, err := readDirBeneath(root, dir, max)
		read += len(entries)
		if err == nil {
			stamps = append(stamps, nestedStamp{rel: dir, st: st, dir: true, sum: listingSum(root, dir, entries)})
		} else if st != (protect.Stamp{}) {
			stamps = append(stamps, nestedStamp{rel: dir, st: st})
		}
		if err != nil {
			switch {
			case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
				continue // gone meanwhile (a host process): nothing to freeze
			case errors.Is(err, dirlist.ErrTooLarge):
				// Not read: what it holds is not known to be clean. The
				// rest of the workspace is still walked.
				sc.truncated = true
				read += max
				continue
			}
			return sc, nil, err
		}
		rel := func(name string) string {
			if dir == "." {
				return name
			}
			return dir + "/" + name
		}
		if head, ok := findName(entries, "HEAD"); ok && dir != "." && !isGitName(dir) {
			// Before the read: a rewrite after it changes the stamp.
			p := rel(head.Name())
			stamps = append(stamps, nestedStamp{rel: p, st: protect.StampBeneath(root, p)})
			switch isBareRepo(root, dir, head) {
			case protect.HeadValid:
				sc.repos = append(sc.repos, dir)
				continue // its inside is frozen as a git directory's
			case protect.HeadSeed:
				sc.heads = append(sc.heads, p)
			}
		}
		for _, e := range entries {
			p := rel(e.Name())
			if slices.Contains(skip, p) {
				continue
			}
			switch {
			case isGitName(e.Name()):
				if p != protect.GitDirName {
					sc.repos = append(sc.repos, p)
				}
			case e.Type() == os.ModeSymlink:
				// Its target cannot change in place: replacing it
				// changes this directory's stamp.
				if err := checkLinkTarget(root, p); err != nil {
					return sc, nil, err
				}
			case e.IsDir():
				queue = append(queue, p)
			}
		}
	}
	return sc, stamps, nil
}

// readDirBeneath lists the directory rel under root without following
// symlinks, failing with dirlist.ErrTooLarge past max names. The stamp is
// the directory's, taken before the listing (zero when it could not be
// opened).
func readDirBeneath(root int, rel string, max int) ([]os.DirEntry, protect.Stamp, error) {
	fd, err := protect.OpenBeneath(root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, protect.Stamp{}, unsafePath(rel, err)
	}
	defer unix.Close(fd)
	st, err := protect.StampFd(fd)
	if err != nil {
		return nil, protect.Stamp{}, fmt.Errorf("reading %s: %w", rel, err)
	}
	entries, err := dirlist.Read(fd, rel, max, dirlist.Always)
	if err != nil {
		return nil, st, fmt.Errorf("reading %s: %w", rel, err)
	}
	return entries, st, nil
}

// nestedStamp is the stamp of a directory or HEAD a walk read
// (workspace-relative); for a directory it listed, dir is set and sum is
// the listing's (listingSum).
type nestedStamp struct {
	rel string
	st  protect.Stamp
	dir bool
	sum [sha256.Size]byte
}

// holds reports whether s is still true of the workspace under root: the
// stamp is the same, or s is a listed directory whose listing, read again,
// has the same sum.
func (s nestedStamp) holds(root int) bool {
	if protect.StampBeneath(root, s.rel) == s.st {
		return true
	}
	if !s.dir {
		return false
	}
	entries, _, err := readDirBeneath(root, s.rel, dirlist.MaxEntries)
	return err == nil && listingSum(root, s.rel, entries) == s.sum
}

// listingSum is the digest of what the walk reads of the listing entries
// of dir: each name and type, but for reservation placeholders that are
// not named .git or HEAD (the walk passes over them: checkLinkTarget).
func listingSum(root int, dir string, entries []os.DirEntry) [sha256.Size]byte {
	h := sha256.New()
	for _, e := range entries {
		name := e.Name()
		if e.Type() == os.ModeSymlink && !isGitName(name) && !strings.EqualFold(name, "HEAD") && isReservationLink(root, path.Join(dir, name)) {
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, e.Type())
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// isReservationLink reports whether rel under root is a symlink to
// reservedTarget (a reservation of any tether).
func isReservationLink(root int, rel string) bool {
	fd, err := openBeneath(root, rel)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return strings.HasPrefix(linkTarget(fd), reservedTarget)
}

// nestedKey is what a kept walk is found by: the workspace's identity and
// what the walk skipped.
type nestedKey struct {
	dev, ino uint64
	skip     string // skip's paths, NUL-separated
}

// nestedKeyOf returns the key of a walk of root, and whether a walk of it
// may be kept (protect.DistinctChangeTimes).
func nestedKeyOf(root int, skip []string) (nestedKey, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return nestedKey{}, false
	}
	return nestedKey{dev: st.Dev, ino: st.Ino, skip: strings.Join(skip, "\x00")}, protect.DistinctChangeTimes(root)
}

// keepable reports whether a walk that started at start with these
// stamps may be kept: it stamped the workspace's root first, and every
// stamp is of an object on the workspace's device dev (a file system
// mounted inside it may tell changes apart less finely; a stamp of an
// errno has no device). An object changed less than racyStamp before the
// walk could change again within its file system's timestamp granularity
// (a second on ext2 and ext3 with small inodes) and keep its times: such a
// HEAD makes the walk not kept, such a directory is listed again at every
// check (its stamp is cleared; no stamp taken is the zero one).
func keepable(stamps []nestedStamp, dev uint64, start time.Time) bool {
	if len(stamps) == 0 || stamps[0].rel != "." {
		return false
	}
	settled := start.Add(-racyStamp)
	for i, s := range stamps {
		if s.st.Dev() != dev {
			return false
		}
		if !s.st.ChangedBefore(settled) {
			if !s.dir {
				return false
			}
			stamps[i].st = protect.Stamp{}
		}
	}
	return true
}

// racyStamp is how long before a walk an object must have last changed for
// its stamp to be trusted (keepable).
const racyStamp = 2 * time.Second

// maxKeptScans bounds the workspaces whose walks are kept; past it one
// is dropped.
const maxKeptScans = 32

// nestedScans are the kept walks of this process (see above).
var nestedScans scanCache

// scanCache keeps complete walks by workspace. The zero value is ready for
// use; it is safe for concurrent use.
type scanCache struct {
	mu    sync.Mutex
	scans map[nestedKey]keptScan
}

// keptScan is a walk's answer and the stamps it holds while.
type keptScan struct {
	sc     nestedScan
	stamps []nestedStamp
}

// get returns the kept walk of key when every one of its stamps is, under
// root, what it was; one that no longer holds is dropped.
func (c *scanCache) get(root int, key nestedKey) (nestedScan, bool) {
	c.mu.Lock()
	k, ok := c.scans[key]
	c.mu.Unlock()
	if !ok {
		return nestedScan{}, false
	}
	for _, s := range k.stamps {
		if !s.holds(root) {
			c.mu.Lock()
			delete(c.scans, key)
			c.mu.Unlock()
			return nestedScan{}, false
		}
	}
	return k.sc.clone(), true
}

// put keeps the walk sc of key with its stamps.
func (c *scanCache) put(key nestedKey, sc nestedScan, stamps []nestedStamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scans == nil {
		c.scans = map[nestedKey]keptScan{}
	}
	if _, ok := c.scans[key]; !ok && len(c.scans) >= maxKeptScans {
		for k := range c.scans {
			delete(c.scans, k)
			break
		}
	}
	c.scans[key] = keptScan{sc: sc.clone(), stamps: stamps}
}

// clone is a copy of sc that shares no slice with it.
func (sc nestedScan) clone() nestedScan {
	return nestedScan{repos: slices.Clone(sc.repos), heads: slices.Clone(sc.heads), truncated: sc.truncated}
}

func findName(entries []os.DirEntry, name string) (os.DirEntry, bool) {
	for _, e := range entries {
		if strings.EqualFold(e.Name(), name) {
			return e, true
		}
	}
	return nil, false
}

// isBareRepo says what the HEAD entry of dir makes of it (git's
// validate_headref, protect.ClassifyHead). One that cannot be read is
// treated as valid: freeze what cannot be told.
func isBareRepo(root int, dir string, head os.DirEntry) protect.HeadKind {
	p := dir + "/" + head.Name()
	switch {
	case head.Type() == os.ModeSymlink:
		fd, err := openBeneath(root, p)
		if err != nil {
			return protect.HeadValid
		}
		defer unix.Close(fd)
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return protect.HeadValid
		}
		// A link out of refs/ can only be replaced, and a new HEAD cannot
		// be made.
		return protect.ClassifyHead(true, buf[:n])
	case head.Type().IsRegular():
		data, err := readBeneath(root, p)
		if err != nil {
			return protect.HeadValid
		}
		return protect.ClassifyHead(false, data)
	}
	return protect.HeadNone
}

// checkLinkTarget refuses the symlink rel when open(O_CREAT) through it
// would create a .git, or a HEAD outside a .git directory.
func checkLinkTarget(root int, rel string) error {
	fd, err := openBeneath(root, rel)
	if err != nil {
		return unsafePath(rel, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	if target := string(buf[:n]); !strings.HasPrefix(target, reservedTarget) && refusedName(target) != "" {
		return fmt.Errorf("%w: %s is a symlink to %s (creating a file through it would make a repository)", ErrUnsafeWorkspace, rel, target)
	}
	return nil
}

// refusedName returns the name no sandbox may create at p (".git", or
// "HEAD" outside a .git directory), or "" when p may be created.
func refusedName(p string) string {
	elems := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
	if len(elems) == 0 {
		return ""
	}
	last := elems[len(elems)-1]
	switch {
	case strings.EqualFold(last, protect.GitDirName):
		return protect.GitDirName
	case strings.EqualFold(last, "HEAD"):
		if len(elems) >= 2 && strings.EqualFold(elems[len(elems)-2], protect.GitDirName) {
			return "" // the HEAD of a .git directory: a frozen one
		}
		return "HEAD"
	}
	return ""
}

// isGitName reports whether the last element of p is .git, in any letter
// case: a case-folding directory finds .GIT as .git.
func isGitName(p string) bool {
	p = strings.TrimRight(p, "/")
	return strings.EqualFold(path.Base(p), protect.GitDirName)
}
