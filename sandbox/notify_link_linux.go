package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A link can name its existing file by an open descriptor of the caller's:
// linkat(fd, "", dir, name, AT_EMPTY_PATH), or linkat(AT_FDCWD,
// "/proc/self/fd/N", dir, name, AT_SYMLINK_FOLLOW), the way an O_TMPFILE
// made and written in place is given its name (an atomic file writer). The
// creation helper cannot make such a call with the names alone: the kernel
// lets AT_EMPTY_PATH link a file only for the credentials that opened it
// (f_cred) or with CAP_DAC_READ_SEARCH, and /proc/self/fd/N is the
// helper's own table, while the link's text ("/tmp/#123 (deleted)")
// names no file at all. So the gate takes the caller's open file itself
// (pidfd_getfd: the very file, not a reopen), judges it, and the helper
// links that file through its own /proc/self/fd (LinkDescriptor).
//
// Judged as a link by its path is: a file with no name (nlink 0: an
// O_TMPFILE) has no protected name, and its link is its creation, so it
// gets creationMode's bits (no write for others; for the group only in a
// group's shared directory); a file with names is judged by the one its
// descriptor was opened by (the kernel's path for it, checked to still be
// that file), and one the gate cannot name is refused.

// pidfdThread is PIDFD_THREAD (6.9): a pidfd of the thread itself, whose
// descriptor table pidfd_getfd reads (the caller may have unshared it).
const pidfdThread = unix.O_EXCL

// linkSource returns the caller's open file when a link's existing name
// (name, with the link's flags) is one of the caller's descriptors, or nil
// when it is an ordinary name (placed and judged as any other). dest is
// the checked directory of the new name. errno is the kernel's answer for
// a call that cannot link anything; why is set when the gate refuses (the
// caller records it).
func (c *createGate) linkSource(n *seccompNotif, call createCall, flags uint64, name string, dest *os.File) (_ *os.File, _ unix.Errno, why string) {
	pid := int(n.pid)
	num, missing := -1, unix.EBADF
	switch {
	case name == "" && flags&unix.AT_EMPTY_PATH == 0:
		return nil, unix.ENOENT, "" // the kernel's answer
	case name == "":
		d := int32(n.args[call.fromDir])
		if d == unix.AT_FDCWD {
			return nil, unix.EPERM, "" // the working directory: no directory is linked
		}
		if d < 0 {
			return nil, unix.EBADF, ""
		}
		num = int(d)
	case flags&unix.AT_SYMLINK_FOLLOW != 0:
		num, missing = c.callerFdName(n, name), unix.ENOENT
		if num < 0 {
			return nil, 0, ""
		}
	default:
		return nil, 0, ""
	}
	src, e := callerFile(pid, num)
	if e != 0 {
		if e != unix.EPERM {
			e = missing
		}
		return nil, e, ""
	}
	if why := c.judgeOpenFile(pid, num, src, dest); why != "" {
		src.Close()
		return nil, 0, why
	}
	return src, 0, ""
}

// callerFile returns the open file of the caller's (thread pid's)
// descriptor num itself (pidfd_getfd: the very file, not a reopen); EPERM
// when the caller is gone, EBADF when it has no such descriptor.
func callerFile(pid, num int) (*os.File, unix.Errno) {
	pidfd, err := unix.PidfdOpen(pid, pidfdThread)
	if err == unix.EINVAL {
		// A kernel before 6.9: a thread group leader's own pidfd.
		pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err != nil {
		return nil, unix.EPERM
	}
	fd, err := unix.PidfdGetfd(pidfd, num, 0)
	unix.Close(pidfd)
	if err != nil {
		return nil, unix.EBADF
	}
	return os.NewFile(uintptr(fd), "caller's descriptor"), 0
}

// callerFdName returns N when name is, inside the caller's root, the
// caller's own /proc/self/fd/N (or thread-self's, or by its pid or
// thread's id: procSelf), on procfs; otherwise -1.
func (c *createGate) callerFdName(n *seccompNotif, name string) int {
	pid := int(n.pid)
	cred, err := readCallerCred(pid)
	if err != nil {
		return -1
	}
	var parts []string
	for _, p := range strings.Split(procSelf(name, cred), "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if !strings.HasPrefix(name, "/") || len(parts) < 4 || parts[0] != "proc" || parts[1] != cred.tgid {
		return -1
	}
	switch {
	case len(parts) == 4 && parts[2] == "fd":
	case len(parts) == 6 && parts[2] == "task" && parts[3] == cred.tid && parts[4] == "fd":
	default:
		return -1
	}
	num, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || num < 0 || strconv.Itoa(num) != parts[len(parts)-1] {
		return -1
	}
	// The directory must be procfs's: anything else at /proc is linked by
	// its name, as the kernel would.
	dir, _, e := c.parentOf(pid, -1, n, "/"+strings.Join(parts[:len(parts)-1], "/")+"/x")
	if e != 0 {
		return -1
	}
	defer dir.Close()
	var fs unix.Statfs_t
	if unix.Fstatfs(int(dir.Fd()), &fs) != nil || fs.Type != unix.PROC_SUPER_MAGIC {
		return -1
	}
	return num
}

// judgeReopened returns why the file a magic link reaches (follow: f, an
// O_PATH descriptor of it; text, the link's text) may not be opened by an
// open the creation gate judges, or "". A file without a name (a pipe,
// socket or memfd, an O_TMPFILE, a deleted file) has no protected one; a
// file with names is judged by the one the link shows, checked to still
// be that file, and one the gate cannot name is refused.
func (c *createGate) judgeReopened(pid int, text string, f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Sprintf("the creation gate could not read the file %s: %v", text, err)
	}
	if st.Nlink == 0 || !strings.HasPrefix(text, "/") {
		return ""
	}
	return c.judgeNamed(pid, text, &st)
}

// judgeNamed is judgeReopened and judgeOpenFile for a file (st) with
// names, p the one the kernel keeps for it.
func (c *createGate) judgeNamed(pid int, p string, st *unix.Stat_t) string {
	unnamed := fmt.Sprintf("%s has a name the creation gate cannot judge", p)
	if strings.HasSuffix(p, " (deleted)") {
		return unnamed
	}
	parent, rest, e := c.parentOf(pid, -1, nil, p)
	if e != 0 {
		return unnamed
	}
	defer parent.Close()
	var at unix.Stat_t
	if unix.Fstatat(int(parent.Fd()), strings.TrimRight(rest, "/"), &at, unix.AT_SYMLINK_NOFOLLOW) != nil || at.Dev != st.Dev || at.Ino != st.Ino {
		return unnamed + " (it is another file now)"
	}
	why, _, _ := c.judge(parent, rest)
	return why
}

// judgeOpenFile returns why the caller's open file src (its descriptor
// num) may not be given another name in dest, or "". A file without a
// name loses the bits creationMode takes from a new entry.
func (c *createGate) judgeOpenFile(pid, num int, src, dest *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return fmt.Sprintf("the creation gate could not read the file of descriptor %d: %v", num, err)
	}
	if st.Nlink == 0 {
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return "" // the kernel refuses it (only an O_TMPFILE is linkable)
		}
		mode := uint64(st.Mode & 0o7777)
		if want := creationMode(mode, dest, "", false); want != mode {
			// Through the magic link: src may be an O_PATH descriptor.
			if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(int(src.Fd())), uint32(want)); err != nil {
				return fmt.Sprintf("the creation gate could not take write for others from the unnamed file of descriptor %d: %v", num, err)
			}
		}
		return ""
	}
	buf := make([]byte, unix.PathMax)
	k, err := unix.Readlink("/proc/"+strconv.Itoa(pid)+"/fd/"+strconv.Itoa(num), buf)
	if err != nil || !strings.HasPrefix(string(buf[:k]), "/") {
		return fmt.Sprintf("the file of descriptor %d has a name the creation gate cannot judge", num)
	}
	return c.judgeNamed(pid, string(buf[:k]), &st)
}
