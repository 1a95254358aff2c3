package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bind(2) of an AF_UNIX socket to a pathname creates a directory entry,
// a socket file, like mknod: the creation gate judges it as it judges the
// others (issue 14, the second red-team pass: a sandbox in a home bound
// its own listener at ~/.cache/git/credential/socket, and the host's next
// `git credential approve` handed it a password). In a home, no socket
// may be bound under a dot-entry at all, the writable caches included
// (protect.Set.SocketReason).
//
// The decision cannot be left to the kernel after a check: the address is
// in the caller's memory, which another thread can rewrite between the
// check and the kernel's own read (an abstract name turned into a path).
// So the gate takes the caller's socket itself (pidfd_getfd): a socket
// that is not AF_UNIX goes on (its family, which nothing can change,
// makes the kernel refuse any pathname); an AF_UNIX one is bound by tether
// with the bytes it read, by tether itself for an abstract or unnamed
// address (no file is made: the socket's own network namespace holds the
// name), by the creation helper in the checked directory for a pathname
// (seccompexec.h, SECCOMPEXEC_CREATE_BIND), as the caller and under its
// umask without write for others (and for the group outside a group's
// shared directory, creationMode's rule).

// sunPathMax is the size of sockaddr_un's sun_path.
const sunPathMax = int(unsafe.Sizeof(unix.RawSockaddrUnix{}.Path))

// answerBind decides one bind: see above. It reports whether it answered
// (an observed call that goes on is recorded by the caller, passOn).
func (g *execGateRun) answerBind(fd int, n *seccompNotif, call createCall, passOn bool) bool {
	answer := func(resp seccompNotifResp) bool {
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return true
	}
	fail := func(e unix.Errno) bool { return answer(seccompNotifResp{id: n.id, error: -int32(e)}) }
	goOn := func() bool { // the kernel binds, with the caller's address
		if passOn {
			return false
		}
		return answer(seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
	}
	pidfd, err := unix.PidfdOpen(int(n.pid), 0)
	if err != nil {
		return fail(unix.EPERM) // the caller is gone
	}
	defer unix.Close(pidfd)
	sfd, err := unix.PidfdGetfd(pidfd, int(int32(n.args[0])), 0)
	if err != nil {
		return fail(unix.EBADF)
	}
	sock := os.NewFile(uintptr(sfd), "socket")
	defer sock.Close()
	if !idValid(fd, n.id) {
		return true // the pid was another process's
	}
	domain, err := unix.GetsockoptInt(sfd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fail(unix.ENOTSOCK)
	}
	if domain != unix.AF_UNIX {
		return goOn()
	}
	alen := int(uint32(n.args[2]))
	if alen < 2 || alen > 2+sunPathMax {
		return fail(unix.EINVAL)
	}
	r := memReader{pid: int(n.pid)}
	addr := make([]byte, alen)
	if k, err := r.readAt(addr, n.args[1]); err != nil || k < alen {
		return fail(unix.EFAULT)
	}
	if !idValid(fd, n.id) {
		return true
	}
	if binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return fail(unix.EINVAL)
	}
	name := addr[2:]
	if len(name) == 0 || name[0] == 0 {
		// Unnamed (autobind) or abstract: bound here, with the bytes read.
		_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(sfd), uintptr(unsafe.Pointer(&addr[0])), uintptr(alen))
		if e != 0 {
			return fail(e)
		}
		return answer(seccompNotifResp{id: n.id})
	}
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	p := string(name)
	parent, rest, e := g.create.parentOf(int(n.pid), -1, n, p)
	if e != 0 {
		return fail(e)
	}
	req := createRequest{dirs: [2]*os.File{parent, nil}, names: [2]string{rest, ""}}
	defer req.close()
	if refusedName(p) != "" {
		g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p, Reason: "a socket named " + refusedName(p) + " is refused: it would make a repository whose config and hooks the host's git runs"})
		return fail(unix.EPERM)
	}
	why, tree, at := g.create.judge(parent, rest)
	if why == "" && tree != nil {
		why = tree.set.SocketReason(at)
	}
	if why != "" {
		var st unix.Stat_t
		if unix.Fstatat(int(parent.Fd()), strings.TrimRight(rest, "/"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return fail(unix.EADDRINUSE) // the kernel's answer, which changes nothing
		}
		g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p, Reason: why})
		return fail(unix.EPERM)
	}
	if !g.performs {
		return goOn()
	}
	if passOn {
		g.recordObserved(fd, n)
	}
	dup, err := unix.FcntlInt(uintptr(sfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(unix.EMFILE)
	}
	req.dirs[1] = os.NewFile(uintptr(dup), "socket") // closed with req
	key := createKey{n.pid, n.nr, n.args, string(addr)}
	var val int64
	if rp := g.takeReplay(key); rp != nil {
		val = rp.val
	} else {
		var why string
		val, _, e, why = g.perform(fd, n, call, &req)
		if why != "" {
			g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p, Reason: why})
		}
		if e != 0 {
			if (e == unix.EROFS || e == unix.EXDEV) && g.sealed != nil {
				g.refuseSealed(fd, n, call, []string{p}, "", e)
			}
			return fail(e)
		}
	}
	resp := seccompNotifResp{id: n.id, val: val}
	sent := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) == nil
	// A restart of an interrupted call must find it: bound twice, it
	// would fail with EADDRINUSE.
	g.keepReplay(key, val, nil, 0, sent)
	return true
}
