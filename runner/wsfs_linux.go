package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/protect"
)

// The file tools reach the workspace by descriptor. A path argument is
// first resolved as a string (resolveIn: symlinks inside the workspace are
// followed, the way a shell would), and that canonical, symlink-free path
// is what the mandate and the protected-path list judge. The kernel then
// opens exactly that path below the workspace's descriptor with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS: a symlink swapped in since the check
// (or a ".." that leaves) fails the open instead of being followed, and
// the opened object's own path (its /proc/self/fd link, which the kernel
// keeps for the object, not for the name) must still be the checked one,
// so a directory renamed in between is refused too. The object is then
// checked as an object: only regular files are read or replaced.
//
// Writes never write through an existing file: the content goes to a new
// temporary file created in the already-opened parent directory, which is
// renamed over the name (renameat on that directory's descriptor). A hard
// link to the old file, wherever its other names are, keeps the old
// content; a symlink planted at the name is replaced, not followed.

// ErrPathChanged is returned when the path a file tool checked no longer
// names the object it opened: a symlink or a rename raced the call.
var ErrPathChanged = errors.New("the path changed while it was being opened")

// ErrNotRegular is returned when a file tool is given something other
// than a regular file (a directory, FIFO, socket or device).
var ErrNotRegular = errors.New("not a regular file")

// wsFS is one workspace opened for a file-tool call. It is not safe for
// concurrent use; the caller must Close it.
type wsFS struct {
	root string // canonical absolute host path
	fd   int    // O_PATH descriptor of root
}

// openWS opens the workspace root, which must still be the canonical
// path it was configured as.
func openWS(root string) (*wsFS, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace: %w", err)
	}
	w := &wsFS{root: root, fd: fd}
	if p, err := fdPath(fd); err != nil || p != root {
		w.Close()
		return nil, fmt.Errorf("opening the workspace: %w (it is now %q)", ErrPathChanged, p)
	}
	return w, nil
}

// Close releases the workspace descriptor.
func (w *wsFS) Close() error { return unix.Close(w.fd) }

// fdPath returns the path the kernel holds for an open descriptor.
func fdPath(fd int) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

// relOf returns fd's current path relative to the workspace root.
func (w *wsFS) relOf(fd int) (string, error) {
	p, err := fdPath(fd)
	if err != nil {
		return "", fmt.Errorf("reading the opened path: %w", err)
	}
	if p == w.root {
		return ".", nil
	}
	if !strings.HasPrefix(p, w.root+"/") {
		return "", fmt.Errorf("%w: the opened object is no longer inside the workspace", ErrPathEscape)
	}
	return p[len(w.root)+1:], nil
}

// open opens rel (canonical, relative to the root) with flags, following
// no symlink at all and never leaving the root, and checks that the
// object opened is still at rel.
func (w *wsFS) open(rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	var fd int
	var err error
	for tries := 0; ; tries++ {
		fd, err = unix.Openat2(w.fd, rel, &how)
		// EAGAIN: a rename elsewhere raced a ".." lookup; the kernel asks
		// to retry.
		if (err == unix.EAGAIN && tries < 8) || err == unix.EINTR {
			continue
		}
		break
	}
	switch {
	case err == unix.EXDEV:
		return -1, fmt.Errorf("%w: %s", ErrPathEscape, rel)
	case err == unix.ELOOP:
		return -1, fmt.Errorf("%w: %s now holds a symlink", ErrPathChanged, rel)
	case err != nil:
		return -1, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	got, err := w.relOf(fd)
	if err == nil && got != path.Clean(rel) {
		err = fmt.Errorf("%w: %s is now at %s", ErrPathChanged, rel, got)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// kindError says what a non-regular object is.
func kindError(rel string, mode uint32) error {
	var what string
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		what = "a directory"
	case unix.S_IFIFO:
		what = "a FIFO"
	case unix.S_IFSOCK:
		what = "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		what = "a device"
	case unix.S_IFLNK:
		what = "a symlink"
	default:
		what = "not a file"
	}
	return fmt.Errorf("%w: %s is %s", ErrNotRegular, rel, what)
}

// fileID identifies an object (what a name is compared against).
type fileID struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), st.Ino} }

// openRead opens the regular file rel for reading. The object is first
// opened O_PATH, which has no side effect on any kind of file (a FIFO
// would block open(2), a device could act on it), and reopened for
// reading only once it is known to be a regular file.
func (w *wsFS) openRead(rel string) (*os.File, fileID, error) {
	pfd, err := w.open(rel, unix.O_PATH)
	if err != nil {
		return nil, fileID{}, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, fileID{}, fmt.Errorf("checking %s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fileID{}, kindError(rel, st.Mode)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fileID{}, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), rel), idOf(&st), nil
}

// readAll reads at most max bytes of the regular file rel, checking ctx
// between chunks.
func (w *wsFS) readAll(ctx context.Context, rel string, max int64) ([]byte, fileID, error) {
	f, id, err := w.openRead(rel)
	if err != nil {
		return nil, id, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, max))
	return data, id, err
}

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// mkdirAll creates the missing directories of dir (canonical, relative),
// each inside the already-opened parent, never through a symlink. As
// root, a new directory gets its parent's owner, so the workspace's owner
// keeps owning the tree.
func (w *wsFS) mkdirAll(dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		fd, err := w.open(prefix, unix.O_PATH|unix.O_DIRECTORY)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
		parent := "."
		if i > 0 {
			parent = strings.Join(parts[:i], "/")
		}
		pfd, err := w.open(parent, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(pfd, parts[i], 0o755)
		if err == nil {
			err = inheritOwner(pfd, parts[i])
		} else if err == unix.EEXIST {
			err = nil // made meanwhile; the next open checks what it is
		}
		unix.Close(pfd)
		if err != nil {
			return &os.PathError{Op: "mkdir", Path: prefix, Err: err}
		}
		fd, err = w.open(prefix, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		unix.Close(fd)
	}
	return nil
}

// checkControl refuses name in dir (canonical, relative) when it would lie
// on the control surface of a git directory at or above dir's deepest
// existing directory (protect.ControlReason, judged on the opened
// directories): ErrProtectedPath.
func (w *wsFS) checkControl(dir, name string) error {
	below := []string{name}
	for {
		fd, err := w.open(dir, unix.O_PATH|unix.O_DIRECTORY)
		if err == nil {
			defer unix.Close(fd)
			return controlErr(protect.ControlReason(w.fd, fd, dir, path.Join(below...)))
		}
		if !errors.Is(err, unix.ENOENT) || dir == "." {
			return err
		}
		below = append([]string{path.Base(dir)}, below...)
		dir = path.Dir(dir)
	}
}

// controlErr is ControlReason's answer as an error.
func controlErr(why string, err error) error {
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("%w: %s", ErrProtectedPath, why)
	}
	return nil
}

// inheritOwner gives name (in the directory dirfd) the directory's owner
// when tether runs as root; otherwise the file is the caller's already.
func inheritOwner(dirfd int, name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return err
	}
	return unix.Fchownat(dirfd, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
}

// replace writes data as the new content of rel (canonical, relative; not
// "."): a temporary file in rel's opened parent directory, renamed over
// the name. An existing rel must be a regular file; its permission bits
// (never setuid, setgid or sticky) and, as root, owner are kept. When
// expect is set, rel must still be that object (patch: the file read is
// the file replaced). mkdir creates missing parent directories first.
func (w *wsFS) replace(rel string, data []byte, mkdir bool, expect *fileID) (int, error) {
	dir, name := path.Split(rel)
	dir = path.Clean(dir)
	if name == "" || name == "." || name == ".." {
		return 0, fmt.Errorf("%s does not name a file", rel)
	}
	if mkdir {
		if err := w.mkdirAll(dir); err != nil {
			return 0, err
		}
	}
	dfd, err := w.open(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return 0, err
	}
	defer unix.Close(dfd)
	// Again on the directory written in (the caller checked before
	// anything was made, wsFS.checkControl): a git directory is judged as
	// the object it is, whatever its name.
	if err := controlErr(protect.ControlReason(w.fd, dfd, dir, name)); err != nil {
		return 0, err
	}
	mode, uid, gid := uint32(0o644), -1, -1
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return 0, kindError(rel, st.Mode)
		}
		if expect != nil && idOf(&st) != *expect {
			return 0, fmt.Errorf("%w: %s was replaced while it was being patched", ErrPathChanged, rel)
		}
		mode, uid, gid = st.Mode&0o777, int(st.Uid), int(st.Gid)
	case err == unix.ENOENT:
		if expect != nil {
			return 0, fmt.Errorf("%w: %s was removed while it was being patched", ErrPathChanged, rel)
		}
		var dst unix.Stat_t
		if err := unix.Fstat(dfd, &dst); err != nil {
			return 0, err
		}
		uid, gid = int(dst.Uid), int(dst.Gid)
	default:
		return 0, &os.PathError{Op: "stat", Path: rel, Err: err}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := ".tether-write-" + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return 0, &os.PathError{Op: "create", Path: path.Join(dir, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	n, err := f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(mode))
	}
	if err == nil && os.Geteuid() == 0 && uid >= 0 {
		err = f.Chown(uid, gid)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The directory must still be where it was checked: renamed under
		// a protected name since, it would carry the new file there.
		var got string
		if got, err = w.relOf(dfd); err == nil && got != dir {
			err = fmt.Errorf("%w: %s is now at %s", ErrPathChanged, dir, got)
		}
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return 0, err
	}
	// The rename is durable only once the directory is.
	_ = unix.Fsync(dfd)
	return n, nil
}
