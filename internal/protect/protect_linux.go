package protect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHead bounds what HeadAt reads of a HEAD file: a valid one is a line.
const maxHead = 1 << 20

// HeadAt says what the HEAD entry of the directory dirfd makes of it
// (ClassifyHead), reading it without following a symlink and without
// blocking on a FIFO. A HEAD that exists but cannot be read is HeadValid:
// what cannot be told is treated as a git directory.
func HeadAt(dirfd int) HeadKind {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, "HEAD", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return HeadNone
		}
		return HeadValid
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, "HEAD", buf)
		if err != nil {
			return HeadValid
		}
		return ClassifyHead(true, buf[:n])
	case unix.S_IFREG:
		fd, err := unix.Openat(dirfd, "HEAD", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return HeadValid
		}
		f := os.NewFile(uintptr(fd), "HEAD")
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxHead))
		if err != nil {
			return HeadValid
		}
		return ClassifyHead(false, data)
	}
	return HeadNone
}

// ControlReason returns why creating, replacing or removing rest (a
// slash-separated path below the directory dirfd, which is at dir
// relative to the workspace root, "." for the root) would change git's
// control surface, or "" when it would not. Each directory from dirfd up
// to the root (root, an open descriptor of the workspace root, included)
// is judged as the object it is, reached by "..": one holding a valid
// HEAD is a git directory (a nested .git, a bare repository of any name,
// a directory a .git file names, a submodule's or worktree's), and rest's
// path below it is checked against GitDir. dir only names the directories
// in the message and in the path below each of them; the caller checks
// that dirfd is still at dir.
func ControlReason(root, dirfd int, dir, rest string) (string, error) {
	var rootSt unix.Stat_t
	if err := unix.Fstat(root, &rootSt); err != nil {
		return "", fmt.Errorf("reading the workspace root: %w", err)
	}
	var parts []string
	if dir = path.Clean(dir); dir != "." {
		parts = split(dir)
	}
	below := split(path.Clean(rest))
	cur, owned := dirfd, false
	defer func() {
		if owned {
			unix.Close(cur)
		}
	}()
	for {
		if HeadAt(cur) == HeadValid {
			if why := GitDirReason(path.Join(append([]string{"."}, parts...)...), strings.Join(below, "/")); why != "" {
				return why, nil
			}
		}
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return "", fmt.Errorf("reading %s: %w", path.Join(append([]string{"."}, parts...)...), err)
		}
		if st.Dev == rootSt.Dev && st.Ino == rootSt.Ino {
			return "", nil
		}
		if len(parts) == 0 {
			// dir said this was the root, and it is not: it moved.
			return "", fmt.Errorf("%s is no longer the directory it was opened as", dir)
		}
		parent, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("opening the parent of %s: %w", path.Join(parts...), err)
		}
		if owned {
			unix.Close(cur)
		}
		cur, owned = parent, true
		below = append([]string{parts[len(parts)-1]}, below...)
		parts = parts[:len(parts)-1]
	}
}
