package protect

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// DistinctChangeTimes reports whether the file system of fd gives every
// change made after a stat a change time distinct from the one that stat
// saw, so that equal stamps (Stamp, taken before a read) mean nothing
// changed since: ext4, xfs, btrfs and tmpfs since Linux 6.13 (multigrain
// timestamps). Elsewhere a change within one clock tick of the stamp
// keeps its times; a reader that must not miss one reads again.
func DistinctChangeTimes(fd int) bool {
	if !multigrainKernel() {
		return false
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return false
	}
	switch uint32(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}

// multigrainKernel reports whether the running kernel is Linux 6.13 or
// later, whose ext4, xfs, btrfs and tmpfs have multigrain timestamps.
var multigrainKernel = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	major, minor, ok := kernelRelease(unix.ByteSliceToString(u.Release[:]))
	return ok && (major > 6 || major == 6 && minor >= 13)
})

// kernelRelease parses the major and minor numbers of a kernel release
// ("6.18.44-fc-v1252").
func kernelRelease(r string) (major, minor int, ok bool) {
	a, rest, _ := strings.Cut(r, ".")
	b, _, _ := strings.Cut(rest, ".")
	b = b[:len(b)-len(strings.TrimLeft(b, "0123456789"))]
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil
}
