package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

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

// scanNested walks the workspace under root (an O_PATH descriptor) for
// nested repositories. skip are workspace-relative paths not to enter
// (the root's .git, tether's hidden paths).
func scanNested(root int, skip []string) (nestedScan, error) {
	var sc nestedScan
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
		entries, err := readDirBeneath(root, dir, max)
		read += len(entries)
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
			return sc, err
		}
		rel := func(name string) string {
			if dir == "." {
				return name
			}
			return dir + "/" + name
		}
		if head, ok := findName(entries, "HEAD"); ok && dir != "." && !isGitName(dir) {
			switch isBareRepo(root, dir, head) {
			case protect.HeadValid:
				sc.repos = append(sc.repos, dir)
				continue // its inside is frozen as a git directory's
			case protect.HeadSeed:
				sc.heads = append(sc.heads, rel(head.Name()))
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
				if err := checkLinkTarget(root, p); err != nil {
					return sc, err
				}
			case e.IsDir():
				queue = append(queue, p)
			}
		}
	}
	return sc, nil
}

// readDirBeneath lists the directory rel under root without following
// symlinks, failing with dirlist.ErrTooLarge past max names.
func readDirBeneath(root int, rel string, max int) ([]os.DirEntry, error) {
	fd, err := protect.OpenBeneath(root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, unsafePath(rel, err)
	}
	defer unix.Close(fd)
	entries, err := dirlist.Read(fd, rel, max, dirlist.Always)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return entries, nil
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
