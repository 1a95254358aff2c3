package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unix sockets are the creation gate's too: bind(2) makes a name, and
// connect(2) reaches a listener through one.
//
// bind(2) of an AF_UNIX socket to a pathname creates a directory entry,
// a socket file, like mknod: the creation gate judges it as it judges the
// others (issue 14, the second red-team pass: a sandbox in a home bound
// its own listener at ~/.cache/git/credential/socket, and the host's next
// `git credential approve` handed it a password). In a home, no socket
// may be bound under a dot-entry at all
// (protect.Set.SocketReason).
//
// connect(2) to a pathname reaches whatever listens there, and a
// read-only mount does not stop it: in a home workspace a sandbox read a
// password from the person's running git credential-cache daemon and
// reached an ssh ControlMaster socket in the frozen ~/.ssh (the idmapped
// workspace makes the person's sockets the sandbox's own). No list of
// the sockets a person keeps can be complete, so the rule is the
// inverse: a pathname connect may reach only a socket this sandbox bound
// itself (boundSockets, by identity: a host socket the sandbox renames,
// links or finds at a name it bound before is another file). Abstract
// names live in the socket's network namespace, which is the sandbox's
// own unless it shares the host's (NetworkHost: Landlock's scope is the
// wall there, docs/workspace.md).
//
// Neither decision can be left to the kernel after a check: the address
// is in the caller's memory, which another thread can rewrite between
// the check and the kernel's own read (an abstract name turned into a
// path). So the gate takes the caller's socket itself (pidfd_getfd): a
// socket that is not AF_UNIX goes on (its family, which nothing can
// change, makes the kernel refuse any pathname); an AF_UNIX one is
// bound or connected with the bytes tether read. A bind: by tether itself
// for an abstract or unnamed address (no file is made), by the creation
// helper in the checked directory for a pathname (seccompexec.h,
// SECCOMPEXEC_CREATE_BIND), as the caller and under its umask without
// write for others (and for the group outside a group's shared
// directory, creationMode's rule). A connect: always by the helper
// (SECCOMPEXEC_CREATE_CONNECT), so that the listener sees a process of
// the sandbox as its peer, to the socket file tether opened and judged
// (through the helper's /proc/self/fd), or to the abstract address read.

// sunPathMax is the size of sockaddr_un's sun_path.
const sunPathMax = int(unsafe.Sizeof(unix.RawSockaddrUnix{}.Path))

// maxBoundSockets bounds how many sockets one sandbox's gate remembers
// having bound (boundSockets); a bind past it is refused.
const maxBoundSockets = 1 << 16

// socketID is a socket file's identity: device, inode and birth time
// (where the file system keeps one: an inode number is reused once its
// file is gone, by a socket the host binds later too).
type socketID struct {
	dev, ino uint64
	born     unix.StatxTimestamp
}

// socketIdentity returns the identity of name in dirfd (with
// unix.AT_EMPTY_PATH and "", of dirfd itself), not following a symlink.
func socketIdentity(dirfd int, name string, flags int) (socketID, bool) {
	var sx unix.Statx_t
	if unix.Statx(dirfd, name, flags|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &sx) != nil ||
		sx.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return socketID{}, false
	}
	id := socketID{dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), ino: sx.Ino}
	if sx.Mask&unix.STATX_BTIME != 0 {
		id.born = sx.Btime
	}
	return id, true
}

// callerSocket is what answerBind and answerConnect read of one call: the
// caller's socket (tether's own descriptor of the same open file, which
// the caller must close) and the address, or the answer to send when
// reading failed (done: the call was answered, or needs none).
func (g *execGateRun) callerSocket(fd int, n *seccompNotif, answer func(seccompNotifResp) bool) (sock *os.File, addr []byte, unixFamily, done bool) {
	fail := func(e unix.Errno) bool { return answer(seccompNotifResp{id: n.id, error: -int32(e)}) }
	pidfd, err := unix.PidfdOpen(int(n.pid), 0)
	if err != nil {
		return nil, nil, false, fail(unix.EPERM) // the caller is gone
	}
	defer unix.Close(pidfd)
	sfd, err := unix.PidfdGetfd(pidfd, int(int32(n.args[0])), 0)
	if err != nil {
		return nil, nil, false, fail(unix.EBADF)
	}
	sock = os.NewFile(uintptr(sfd), "socket")
	if !idValid(fd, n.id) {
		sock.Close()
		return nil, nil, false, true // the pid was another process's
	}
	domain, err := unix.GetsockoptInt(sfd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		sock.Close()
		return nil, nil, false, fail(unix.ENOTSOCK)
	}
	if domain != unix.AF_UNIX {
		return sock, nil, false, false
	}
	alen := int(uint32(n.args[2]))
	if alen < 2 {
		sock.Close()
		return nil, nil, false, fail(unix.EINVAL)
	}
	// A longer address is the kernel's EINVAL but for a datagram
	// socket's AF_UNSPEC (connect's "dissolve the association"), whose
	// length is not looked at past the family.
	addr = make([]byte, min(alen, 2+sunPathMax))
	r := memReader{pid: int(n.pid)}
	if k, err := r.readAt(addr, n.args[1]); err != nil || k < len(addr) {
		sock.Close()
		return nil, nil, false, fail(unix.EFAULT)
	}
	if !idValid(fd, n.id) {
		sock.Close()
		return nil, nil, false, true
	}
	if alen > len(addr) && binary.NativeEndian.Uint16(addr) != unix.AF_UNSPEC {
		sock.Close()
		return nil, nil, false, fail(unix.EINVAL)
	}
	return sock, addr, true, false
}

// pathName returns the pathname an AF_UNIX address names, or false for an
// abstract or unnamed one (or another family's).
func pathName(addr []byte) (string, bool) {
	if binary.NativeEndian.Uint16(addr) != unix.AF_UNIX || len(addr) == 2 || addr[2] == 0 {
		return "", false
	}
	name := addr[2:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name), true
}

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
	sock, addr, unixFamily, done := g.callerSocket(fd, n, answer)
	if done {
		return true
	}
	defer sock.Close()
	if !unixFamily {
		return goOn()
	}
	if binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return fail(unix.EINVAL)
	}
	p, named := pathName(addr)
	if !named {
		// Unnamed (autobind) or abstract: bound here, with the bytes read.
		_, _, e := unix.Syscall(unix.SYS_BIND, sock.Fd(), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
		if e != 0 {
			return fail(e)
		}
		return answer(seccompNotifResp{id: n.id})
	}
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
	if why == "" && len(g.boundSockets) >= maxBoundSockets {
		why = fmt.Sprintf("this sandbox has bound %d sockets, the most the creation gate keeps track of", maxBoundSockets)
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
	dup, err := unix.FcntlInt(sock.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(unix.EMFILE)
	}
	req.dirs[1] = os.NewFile(uintptr(dup), "socket") // closed with req
	if e := g.performSocket(fd, n, call, &req, sock, p, addr); e != 0 {
		return fail(e)
	}
	// What the helper bound is the sandbox's own from now on (a pathname
	// connect may reach it). The name still holds it: every rename and
	// link of the sandbox is performed by the helper, one call at a time,
	// after this one's answer has been read.
	if id, ok := socketIdentity(int(parent.Fd()), rest, 0); ok {
		if g.boundSockets == nil {
			g.boundSockets = make(map[socketID]bool)
		}
		g.boundSockets[id] = true
	}
	return true
}

// answerConnect decides one connect: see above. It reports whether it
// answered (an observed call that goes on is recorded by the caller,
// passOn).
func (g *execGateRun) answerConnect(fd int, n *seccompNotif, call createCall, passOn bool) bool {
	answer := func(resp seccompNotifResp) bool {
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return true
	}
	fail := func(e unix.Errno) bool { return answer(seccompNotifResp{id: n.id, error: -int32(e)}) }
	sock, addr, unixFamily, done := g.callerSocket(fd, n, answer)
	if done {
		return true
	}
	defer sock.Close()
	if !unixFamily || !g.performs {
		// Another family's connect cannot reach a unix socket. Without a
		// helper (a one-shot sandbox whose filter libcontainer loads,
		// which lists nested-repos in not_enforced) nothing can connect
		// for the caller: the kernel goes on.
		if passOn {
			return false
		}
		return answer(seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
	}
	if passOn {
		g.recordObserved(fd, n)
	}
	dup, err := unix.FcntlInt(sock.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(unix.EMFILE)
	}
	req := createRequest{dirs: [2]*os.File{os.NewFile(uintptr(dup), "socket"), nil}}
	defer req.close()
	p, named := pathName(addr)
	if !named {
		// Abstract, unnamed or AF_UNSPEC: the helper connects with the
		// bytes read, as the kernel would have.
		req.names[0] = hex.EncodeToString(addr)
	} else {
		target, e := g.connectTarget(n, p)
		if e != 0 {
			return fail(e)
		}
		req.dirs[1] = target
		id, _ := socketIdentity(int(target.Fd()), "", unix.AT_EMPTY_PATH)
		if !g.boundSockets[id] {
			g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p,
				Reason: "a socket this sandbox did not bind is refused: its listener is a process outside the sandbox (a person's git credential cache, an ssh ControlMaster), which would take the sandbox's requests for its owner's"})
			return fail(unix.EACCES)
		}
	}
	if e := g.performSocket(fd, n, call, &req, sock, p, addr); e != 0 {
		return fail(e)
	}
	return true
}

// connectTarget opens what a connect to the pathname p reaches, as the
// kernel finds it (inside the caller's root, a final symlink followed): an
// O_PATH descriptor the caller must close, or the kernel's errno (a
// missing name, ECONNREFUSED for a file that is no socket).
func (g *execGateRun) connectTarget(n *seccompNotif, p string) (*os.File, unix.Errno) {
	parent, rest, e := g.create.parentOf(int(n.pid), -1, n, p)
	if e != 0 {
		return nil, e
	}
	parent, rest, file, e := g.create.follow(int(n.pid), parent, rest)
	if e != 0 {
		return nil, e
	}
	if file == nil {
		// The symlinks followed: rest is no symlink (O_NOFOLLOW is the
		// check that it still is not).
		fd, err := unix.Openat(int(parent.Fd()), rest, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		parent.Close()
		if err != nil {
			e, ok := err.(unix.Errno)
			if !ok {
				e = unix.EPERM
			}
			return nil, e
		}
		file = os.NewFile(uintptr(fd), p)
	}
	var st unix.Stat_t
	if unix.Fstat(int(file.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		file.Close()
		return nil, unix.ECONNREFUSED
	}
	return file, 0
}

// performSocket has the helper perform a bind or connect of the caller's
// socket sock (req, with a descriptor of sock in dirs) and sends the caller the result; an error it returns
// unsent instead. A restart of an interrupted call finds the first
// result: bound or connected twice, it would fail with EADDRINUSE or
// EISCONN. The socket's own inode is part of what makes a call the same:
// a loop that makes a socket and connects it gets the same descriptor
// number and address every time, and each is a new connection.
func (g *execGateRun) performSocket(fd int, n *seccompNotif, call createCall, req *createRequest, sock *os.File, p string, addr []byte) unix.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(int(sock.Fd()), &st); err != nil {
		return unix.EBADF
	}
	key := createKey{n.pid, n.nr, n.args, string(addr) + "\x00" + strconv.FormatUint(st.Ino, 10)}
	var val int64
	if rp := g.takeReplay(key); rp != nil {
		val = rp.val
	} else {
		var why string
		var e unix.Errno
		val, _, e, why = g.perform(fd, n, call, req)
		if why != "" {
			g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: p, Reason: why})
		}
		if e != 0 {
			if (e == unix.EROFS || e == unix.EXDEV) && g.sealed != nil {
				g.refuseSealed(fd, n, call, []string{p}, "", e)
			}
			return e
		}
	}
	resp := seccompNotifResp{id: n.id, val: val}
	sent := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) == nil
	g.keepReplay(key, val, nil, 0, sent)
	return 0
}
