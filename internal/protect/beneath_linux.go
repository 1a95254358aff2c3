package protect

import (
	"strings"

	"golang.org/x/sys/unix"
)

// OpenBeneath is openat2(root, rel, how) for a rel of any length. The
// kernel refuses a path of PATH_MAX bytes or more (ENAMETOOLONG), and a
// sandbox can leave a directory chain deeper than that in its workspace:
// a walker that opened every directory by its full path from the root
// then failed, and every later sandbox of the workspace refused to start.
// A longer rel is opened a piece at a time, each piece (whole names, less
// than PATH_MAX) beneath the directory the last one opened, with how's
// resolve flags: no piece can leave the directory it starts in, so none
// leaves root either.
func OpenBeneath(root int, rel string, how *unix.OpenHow) (int, error) {
	if len(rel) < unix.PathMax {
		return unix.Openat2(root, rel, how)
	}
	dir := root
	defer func() {
		if dir != root {
			unix.Close(dir)
		}
	}()
	for len(rel) >= unix.PathMax {
		i := strings.LastIndexByte(rel[:unix.PathMax-1], '/')
		if i <= 0 {
			return -1, unix.ENAMETOOLONG // no name is this long (NAME_MAX)
		}
		fd, err := unix.Openat2(dir, rel[:i], &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: how.Resolve,
		})
		if err != nil {
			return -1, err
		}
		if dir != root {
			unix.Close(dir)
		}
		dir, rel = fd, strings.TrimLeft(rel[i:], "/")
	}
	return unix.Openat2(dir, rel, how)
}
