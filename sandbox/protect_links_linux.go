package sandbox

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
	"github.com/tether-dev/tether/internal/protect"
)

// Links out of frozen entries (docs/workspace.md). A read-only bind
// freezes a name, not what the host reaches through it:
//   - a regular file with another name (a hard link: `ln scripts/pre-commit
//     .git/hooks/pre-commit`, a dotfiles checkout hard-linked to ~/.bashrc)
//     is rewritten through that name, and the frozen one changes with it.
//     Where the other name is cannot be told without stat-ing the whole
//     workspace, so such a file is refused (ErrUnsafeWorkspace): replace
//     the link with a copy;
//   - a symlink inside a frozen directory that points into the workspace
//     (`.git/hooks/pre-commit -> ../../scripts/pre-commit`, `.local/bin/x
//     -> ../../proj/bin/x`) makes its target part of what the host runs or
//     reads: the target is frozen as the entry is (pinned parents, bound
//     read-only, reserved when missing). A link to the workspace root
//     itself is refused: it would freeze everything.
// Symlinks to outside the workspace are left alone: no command of the
// sandbox can reach their targets.

const (
	// maxFrozenEntries bounds the names linksIn reads in all the frozen
	// directories of one sandbox: hooks/ and info/ hold a few; a home's
	// .local/lib or .emacs.d some thousands. Past it the sandbox reports
	// "protected-links" in NotEnforced.
	maxFrozenEntries = 100_000
	// maxFrozenDepth bounds how deep linksIn descends.
	maxFrozenDepth = 32
)

// linkCheck is one sandbox's check of its frozen entries. Not safe for
// concurrent use.
type linkCheck struct {
	root      int    // the workspace, O_PATH
	ws        string // its host path, for absolute link targets
	left      int    // names it may still read
	truncated bool   // stopped at maxFrozenEntries
}

// singleName refuses the regular file fd (at rel) when it has other names.
func singleName(fd int, rel string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
		return hardLinked(rel, uint64(st.Nlink))
	}
	return nil
}

func hardLinked(rel string, n uint64) error {
	return fmt.Errorf("%w: %s has %d names (hard links): a command could rewrite it through another one; replace the link with a copy", ErrUnsafeWorkspace, rel, n)
}

// linksIn walks the frozen directory rel: it refuses a regular file with
// other names and returns the workspace-relative targets of the symlinks
// that point into the workspace. skipObjects leaves out directories named
// objects (git's object stores under modules/ and worktrees/, whose packs
// a local clone hard-links; they make git run nothing).
func (c *linkCheck) linksIn(rel string, skipObjects bool, depth int) ([]string, error) {
	if depth > maxFrozenDepth {
		return nil, fmt.Errorf("%w: %s is nested too deep to check for links", ErrUnsafeWorkspace, rel)
	}
	if c.left <= 0 {
		c.truncated = true
		return nil, nil
	}
	fd, err := protect.OpenBeneath(c.root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, unsafePath(rel, err)
	}
	defer unix.Close(fd)
	entries, err := dirlist.Read(fd, rel, c.left, dirlist.Always)
	c.left -= len(entries)
	if errors.Is(err, dirlist.ErrTooLarge) {
		c.truncated, c.left = true, 0
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	var targets []string
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return nil, fmt.Errorf("reading %s/%s: %w", rel, e.Name(), err)
			}
			if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
				return nil, hardLinked(rel+"/"+e.Name(), uint64(st.Nlink))
			}
		case e.IsDir():
			if skipObjects && e.Name() == "objects" {
				continue
			}
			more, err := c.linksIn(rel+"/"+e.Name(), skipObjects, depth+1)
			if err != nil {
				return nil, err
			}
			targets = append(targets, more...)
		case e.Type()&fs.ModeSymlink != 0:
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(fd, e.Name(), buf)
			if err != nil {
				return nil, fmt.Errorf("reading %s/%s: %w", rel, e.Name(), err)
			}
			target, inside := protect.LinkTarget(c.ws, rel, string(buf[:n]))
			switch {
			case !inside:
			case target == ".":
				return nil, fmt.Errorf("%w: %s links to the workspace itself", ErrUnsafeWorkspace, rel+"/"+e.Name())
			default:
				targets = append(targets, target)
			}
		}
	}
	return targets, nil
}
