package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
)

// Disk limits (Limits.DiskBytes) are project quotas on the workspace's
// filesystem (ext4 mounted with prjquota, or XFS with pquota). The
// workspace tree is given one project, the workspace root's inode number,
// and directories inherit it (FS_XFLAG_PROJINHERIT), so everything created
// in it is charged there; ext4 and XFS refuse to rename or hard-link into
// it a file of another project (EXDEV), so moving data in copies, and is
// charged. A sandboxed command cannot change a project id or the inherit
// flag: the kernel allows that only in the initial user namespace.
//
// While a sandbox with a disk limit runs, the project's hard block limit is
// what the project used when the first such sandbox of the workspace
// started plus that limit: sandboxes that run at once share one budget,
// and so does anything the host writes meanwhile (root's CAP_SYS_RESOURCE
// aside). The last one to end removes the limit. Holders coordinate with
// a lock file per project under the state root: each holds it shared; the
// one that takes it exclusive, without waiting, is the only one (first, or
// last). A workspace tether has never marked is walked once to set the
// project on the existing tree; one that already belongs to another
// project (the administrator's) is left alone.
//
// Where none of this is possible (no project quota on the filesystem, a
// kernel before quotactl_fd in 5.14, a workspace in someone else's
// project), the limit is listed in Result.NotEnforced as "disk".

// errDiskUnsupported wraps why a disk limit cannot be enforced here.
var errDiskUnsupported = errors.New("disk limit not enforceable")

const diskDir = "disk" // under the state root: <dev>-<project>.lock

// Kernel ABI (linux/fs.h, linux/quota.h); golang.org/x/sys has none of it.
const (
	fsIocFsgetxattr           = 0x801c581f // _IOR('X', 31, struct fsxattr)
	fsIocFssetxattr           = 0x401c5820 // _IOW('X', 32, struct fsxattr)
	fsXflagProjinherit        = 0x00000200
	prjQuota                  = 2
	qGetInfo                  = 0x800005
	qGetQuota                 = 0x800007
	qSetQuota                 = 0x800008
	qifBlimits                = 1
	qifDqblkSize              = 1024 // the unit of dqb_bhardlimit
	diskHitSlack       uint64 = 32 << 10
)

type fsxattr struct {
	Xflags, Extsize, Nextents, Projid, Cowextsize uint32
	Pad                                           [8]byte
}

type ifDqblk struct {
	Bhardlimit, Bsoftlimit, Curspace, Ihardlimit, Isoftlimit, Curinodes, Btime, Itime uint64
	Valid                                                                             uint32
	_                                                                                 uint32
}

type ifDqinfo struct {
	Bgrace, Igrace uint64
	Flags, Valid   uint32
}

func qcmd(cmd uint32) uint32 { return cmd<<8 | prjQuota }

func quotactlFd(fd int, cmd, id uint32, addr unsafe.Pointer) error {
	_, _, e := unix.Syscall6(unix.SYS_QUOTACTL_FD, uintptr(fd), uintptr(qcmd(cmd)), uintptr(id), uintptr(addr), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func ioctlFsxattr(fd int, req uintptr, a *fsxattr) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(a)))
	if e != 0 {
		return e
	}
	return nil
}

// diskLimitFor starts the disk limit of a sandbox with cfg, or notes in
// notEnforced that it cannot be enforced; nil without a limit.
func diskLimitFor(stateRoot string, cfg Config, notEnforced *[]string) (*diskLimit, error) {
	if cfg.Limits.DiskBytes <= 0 || cfg.Workspace == "" {
		return nil, nil
	}
	d, err := startDiskLimit(stateRoot, cfg.Workspace, cfg.Limits.DiskBytes)
	if errors.Is(err, errDiskUnsupported) {
		*notEnforced = append(*notEnforced, "disk")
		return nil, nil
	}
	return d, err
}

// diskLimit is one holder of a workspace's disk limit: a command or a
// session. Not safe for concurrent use; the holder must call release.
type diskLimit struct {
	ws      *os.File // the workspace directory
	project uint32
	lock    *os.File
}

// startDiskLimit applies a disk limit of limit bytes to the workspace ws
// for one holder. An error wrapping errDiskUnsupported means this host
// cannot enforce it; any other error means it should have and failed.
func startDiskLimit(stateRoot, ws string, limit int64) (_ *diskLimit, err error) {
	f, err := os.OpenFile(ws, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace for its disk limit: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	fd := int(f.Fd())
	var info ifDqinfo
	if err := quotactlFd(fd, qGetInfo, 0, unsafe.Pointer(&info)); err != nil {
		return nil, fmt.Errorf("%w: no project quota on the workspace's filesystem (%v)", errDiskUnsupported, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("reading the workspace: %w", err)
	}
	if st.Ino > math.MaxUint32 {
		return nil, fmt.Errorf("%w: the workspace's inode number does not fit a project id", errDiskUnsupported)
	}
	project := uint32(st.Ino)
	var attr fsxattr
	if err := ioctlFsxattr(fd, fsIocFsgetxattr, &attr); err != nil {
		return nil, fmt.Errorf("%w: reading the workspace's project: %v", errDiskUnsupported, err)
	}
	if attr.Projid != 0 && attr.Projid != project {
		return nil, fmt.Errorf("%w: the workspace already belongs to project %d", errDiskUnsupported, attr.Projid)
	}
	if attr.Projid != project || attr.Xflags&fsXflagProjinherit == 0 {
		// The root last: a walk cut short is done again next time.
		if err := markTree(fd, st.Dev, project); err != nil {
			return nil, fmt.Errorf("setting the workspace's project: %w", err)
		}
		if err := setProject(fd, project, true); err != nil {
			return nil, fmt.Errorf("setting the workspace's project: %w", err)
		}
	}
	dir := filepath.Join(stateRoot, diskDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating disk-limit state: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, strconv.FormatUint(st.Dev, 10)+"-"+strconv.FormatUint(uint64(project), 10)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening disk-limit lock: %w", err)
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	lfd := int(lock.Fd())
	if unix.Flock(lfd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		// No other holder: the budget starts from the usage now (a limit
		// left by a holder that died is replaced). The lock file names the
		// workspace, for GC to find the filesystem of a limit left behind.
		if err := lock.Truncate(0); err == nil {
			_, _ = lock.WriteAt([]byte(ws), 0)
		}
		var q ifDqblk
		if err := quotactlFd(fd, qGetQuota, project, unsafe.Pointer(&q)); err != nil {
			return nil, fmt.Errorf("reading the workspace's disk use: %w", err)
		}
		blocks := (q.Curspace + uint64(limit) + qifDqblkSize - 1) / qifDqblkSize
		if err := setBlockLimit(fd, project, blocks); err != nil {
			return nil, err
		}
	}
	// Shared while the holder lives (a conversion if exclusive).
	if err := unix.Flock(lfd, unix.LOCK_SH); err != nil {
		return nil, fmt.Errorf("locking disk-limit state: %w", err)
	}
	return &diskLimit{ws: f, project: project, lock: lock}, nil
}

func setBlockLimit(fd int, project uint32, blocks uint64) error {
	q := ifDqblk{Bhardlimit: blocks, Bsoftlimit: blocks, Valid: qifBlimits}
	if err := quotactlFd(fd, qSetQuota, project, unsafe.Pointer(&q)); err != nil {
		return fmt.Errorf("setting the workspace's disk limit: %w", err)
	}
	return nil
}

// setProject gives fd the project (and, for a directory, the inherit flag).
func setProject(fd int, project uint32, dir bool) error {
	var a fsxattr
	if err := ioctlFsxattr(fd, fsIocFsgetxattr, &a); err != nil {
		return err
	}
	a.Projid = project
	if dir {
		a.Xflags |= fsXflagProjinherit
	}
	return ioctlFsxattr(fd, fsIocFssetxattr, &a)
}

// maxMarkEntries bounds the names markTree reads in all (about 5 µs
// each: an ioctl pair per file). A checkout of Linux has 90,000.
const maxMarkEntries = 1_000_000

// markTree gives everything below the directory dirfd on device dev the
// project, without following symlinks or crossing mounts. Symlinks,
// FIFOs, sockets and devices hold no blocks and are left as they are.
//
// A tree it cannot read whole (a directory of more than
// dirlist.MaxEntries names, more than maxMarkEntries in all: a sandbox
// without a limit can make either) is not marked complete and the error
// wraps errDiskUnsupported: files left in another project would not be
// charged, so the limit is reported not enforced rather than under-counted.
func markTree(dirfd int, dev uint64, project uint32) error {
	m := marker{dev: dev, project: project, left: maxMarkEntries}
	return m.dir(dirfd, ".", 0)
}

// marker is one markTree walk.
type marker struct {
	dev     uint64
	project uint32
	left    int // names it may still read
}

func (m *marker) dir(dirfd int, rel string, depth int) error {
	if depth > 4096 {
		return errors.New("the workspace is nested too deep")
	}
	max := min(dirlist.MaxEntries, m.left)
	entries, err := dirlist.Read(dirfd, rel, max, dirlist.Always)
	m.left -= len(entries)
	if errors.Is(err, dirlist.ErrTooLarge) {
		return fmt.Errorf("%w: the workspace is too large to charge its files to the limit (%v; at most %d names in all)", errDiskUnsupported, err, maxMarkEntries)
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone meanwhile
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if (!isDir && st.Mode&unix.S_IFMT != unix.S_IFREG) || st.Dev != m.dev {
			continue
		}
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
		if isDir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != nil {
			continue // replaced meanwhile: the inherit flag covers new files
		}
		child := path.Join(rel, name)
		err = nil
		if isDir {
			err = m.dir(fd, child, depth+1)
		}
		if err == nil {
			if err = setProject(fd, m.project, isDir); err != nil {
				err = fmt.Errorf("%s: %w", child, err)
			}
		}
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// hit reports whether the workspace's use reached the limit (within
// diskHitSlack, less than one allocation can leave): a write was refused,
// or the next one will be. A single allocation refused whole (a large
// fallocate) that leaves the use below that is not seen.
func (d *diskLimit) hit() bool {
	var q ifDqblk
	if err := quotactlFd(int(d.ws.Fd()), qGetQuota, d.project, unsafe.Pointer(&q)); err != nil || q.Bhardlimit == 0 {
		return false
	}
	return q.Curspace+diskHitSlack >= q.Bhardlimit*qifDqblkSize
}

// release ends the holder; the last one removes the limit.
func (d *diskLimit) release() error {
	var err error
	if unix.Flock(int(d.lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		err = setBlockLimit(int(d.ws.Fd()), d.project, 0)
	}
	return errors.Join(err, d.lock.Close(), d.ws.Close())
}

// gcDiskLimits removes the disk limits that no holder of this state root
// holds any more (a tether that died holding one), so the host's own
// writes are not limited by a sandbox that is gone.
func gcDiskLimits(stateRoot string) []error {
	dir := filepath.Join(stateRoot, diskDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return []error{err}
	}
	var errs []error
	for _, e := range entries {
		if err := gcDiskLimit(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func gcDiskLimit(lockPath string) error {
	var dev, project uint64
	if _, err := fmt.Sscanf(filepath.Base(lockPath), "%d-%d.lock", &dev, &project); err != nil {
		return nil // not ours
	}
	lock, err := os.OpenFile(lockPath, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer lock.Close()
	if unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil // held: a live sandbox's
	}
	ws, err := os.ReadFile(lockPath)
	if err != nil || len(ws) == 0 {
		return nil
	}
	f, err := os.OpenFile(string(ws), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil // the workspace is gone, and its limit with it
	}
	defer f.Close()
	var st unix.Stat_t
	// Only the workspace the lock was made for: same device, same project.
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Dev != dev || st.Ino != project {
		return nil
	}
	var q ifDqblk
	if quotactlFd(int(f.Fd()), qGetQuota, uint32(project), unsafe.Pointer(&q)) != nil || q.Bhardlimit == 0 {
		return nil
	}
	return setBlockLimit(int(f.Fd()), uint32(project), 0)
}
