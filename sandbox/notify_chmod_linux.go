package sandbox

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// privBits are the mode bits no sandbox may set.
const privBits = unix.S_ISUID | unix.S_ISGID

// chmodBits are the bits the sandbox's filter refuses to a chmod (EPERM,
// fileRules): privBits and write for others.
const chmodBits = privBits | unix.S_IWOTH

// A chmod that gives the group write is the creation gate's (the filters
// notify it: fileRules' groupWrite rule, the trampoline's
// create_mode_nrs). Group write on what the sandbox leaves in the
// workspace lets every member of the file's group rewrite it (a Makefile,
// a script the person runs), as write for others lets every account; the
// creations already get it only in a directory its group shares
// (creationMode). A chmod is not refused for it, which would break
// extracting the archives `git archive` makes (0664 and 0775 entries) and
// `cp -p` of group-writable trees: the bit is taken off, unless the file
// is in a directory its group shares (groupShared), and the chmod
// succeeds with the rest of its mode. The helper performs it on the file
// tether resolved, with the caller's credentials (the kernel's owner
// check): a name swapped after the check only changes which file gets a
// mode without group write, which the caller could give it anyway.

// chmodCalls are the chmod forms the creation gate answers: the argument
// numbers of the path (-1 for fchmod's descriptor), of the directory
// descriptor (-1: the working directory, or none) and of fchmodat2's
// flags (-1: none).
var chmodCalls = map[string]struct{ path, dirfd, flags int }{
	"chmod":     {0, -1, -1},
	"fchmod":    {-1, 0, -1},
	"fchmodat":  {1, 0, -1},
	"fchmodat2": {1, 0, 3},
}

// answerChmod decides one chmod with group write: see above.
func (g *execGateRun) answerChmod(fd int, n *seccompNotif, call createCall) bool {
	answer := func(resp seccompNotifResp) bool {
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return true
	}
	fail := func(e unix.Errno) bool { return answer(seccompNotifResp{id: n.id, error: -int32(e)}) }
	if !g.performs {
		// No helper (nested-repos is in not_enforced): the kernel goes on.
		return answer(seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
	}
	file, shared, p, e := g.chmodTarget(n, call)
	if e != 0 {
		return fail(e)
	}
	req := createRequest{dirs: [2]*os.File{file, nil}, groupShared: shared}
	defer req.close()
	if _, _, e, why := g.perform(fd, n, call, &req); e != 0 {
		if why != "" {
			g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p, Reason: why})
		}
		if e == unix.EROFS && g.sealed != nil && p != "" {
			g.refuseSealed(fd, n, call, []string{p}, "", e)
		}
		return fail(e)
	}
	return answer(seccompNotifResp{id: n.id})
}

// chmodTarget returns the file chmod n names (an O_PATH descriptor, or the
// caller's own descriptor of an fchmod or an AT_EMPTY_PATH; the caller
// must close it), whether the directory it was found in is a group's
// shared one, and the path as read ("" for a descriptor); or the
// kernel's errno.
func (g *execGateRun) chmodTarget(n *seccompNotif, call createCall) (*os.File, bool, string, unix.Errno) {
	pid := int(n.pid)
	c := chmodCalls[call.name]
	var flags uint64
	if c.flags >= 0 {
		flags = n.args[c.flags]
	}
	if flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return nil, false, "", unix.EINVAL
	}
	var p string
	if c.path >= 0 {
		r := memReader{pid: pid}
		s, err := r.cstring(n.args[c.path], unix.PathMax)
		if err != nil {
			if strings.HasPrefix(err.Error(), "longer than") {
				return nil, false, "", unix.ENAMETOOLONG
			}
			return nil, false, "", unix.EFAULT
		}
		p = s
	}
	if c.path < 0 || p == "" && flags&unix.AT_EMPTY_PATH != 0 {
		// The descriptor's own file (its directory is not known: the bit
		// comes off).
		dirfd := int32(n.args[c.dirfd])
		if c.path >= 0 && dirfd == unix.AT_FDCWD {
			f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, false, "", unix.EPERM
			}
			return f, false, "", 0
		}
		f, e := callerFile(pid, int(dirfd))
		return f, false, "", e
	}
	if p == "" {
		return nil, false, "", unix.ENOENT
	}
	parent, rest, e := g.create.parentOf(pid, c.dirfd, n, p)
	if e != 0 {
		return nil, false, "", e
	}
	var file *os.File
	if flags&unix.AT_SYMLINK_NOFOLLOW == 0 {
		if parent, rest, file, e = g.create.follow(pid, parent, rest); e != 0 {
			return nil, false, "", e
		}
		if file != nil {
			return file, false, p, 0 // a magic link's file
		}
	}
	defer parent.Close()
	shared := groupShared(parent, "", false)
	if rest = strings.TrimRight(rest, "/"); rest == "" {
		rest = "."
	}
	fd, err := unix.Openat(int(parent.Fd()), rest, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		e, ok := err.(unix.Errno)
		if !ok {
			e = unix.EPERM
		}
		return nil, false, "", e
	}
	if rest == "." || rest == ".." {
		shared = false // the directory itself, or its parent: where it is was not looked at
	}
	return os.NewFile(uintptr(fd), p), shared, p, 0
}
