package sandbox

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The creation helper's host side. A seccomp notification answered with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE lets the kernel read the caller's
// arguments again, after tether has read and checked them: another thread
// of the caller can rewrite a name in between (seccomp_unotify(2)). So the
// creation gate never continues a call it checked. It hands the names it
// read to a helper process of the sandbox (seccompexec.h), which performs
// the call and whose result the caller gets: an open's new descriptor
// through SECCOMP_IOCTL_NOTIF_ADDFD, anything else's return value or
// errno.
//
// Why a helper in the sandbox rather than tether itself (the alternatives,
// docs/workspace.md "Race"): the call must be made with the caller's view
// and rights. The helper is forked by the process that installs the gate's
// filter (the trampoline, or a session's supervisor) just before it does,
// so it is in the sandbox's namespaces (mount, user, pid), root, cgroup,
// Landlock domain and seccomp filter, with no_new_privs, and is not under
// the gate's filter itself. Per call it takes the caller's umask, fsuid,
// fsgid, groups and effective capabilities (never more than its own) and
// is given the caller's working directory or directory descriptor
// (SCM_RIGHTS, opened through /proc/PID). tether doing the call itself
// would need a thread that joins the sandbox's user namespace (impossible
// for a multithreaded process), and a helper started per call (like
// nsenter) costs a fork and exec each time.

// createHelperTimeout bounds one request: a helper the sandbox stopped
// (SIGSTOP) must not hold the gate, and every process of the sandbox
// waiting on it, for ever.
const createHelperTimeout = 10 * time.Second

// The request's header is struct seccompexec_create_req.
const createReqSize = 72

var _ = [1]struct{}{}[seccompexec.CreateReqSize-createReqSize] // the C struct's size

// creator is a sandbox's creation helper: the gate's socket, which the
// helper serves, and who the helper is on this host. It is used only by
// the serve goroutine of the listener whose calls it performs.
type creator struct {
	sock, pidfd int
	pid         int
	// root is the helper's root directory, mntNS and userNS its mount and
	// user namespaces: a caller with others cannot be acted for.
	root          fileID
	mntNS, userNS uint64
	// uids and gids map this host's ids into the helper's user namespace
	// (/proc shows the caller's ids as this process sees them).
	uids, gids idMap
	broken     string // why it can no longer be used
}

// idMap is a user namespace's uid_map or gid_map.
type idMap []struct{ inside, outside, count uint32 }

func readIDMap(path string) (idMap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m idMap
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var e struct{ inside, outside, count uint32 }
		if _, err := fmt.Sscan(line, &e.inside, &e.outside, &e.count); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		m = append(m, e)
	}
	return m, nil
}

// inside returns host id in the namespace, or false when it has none
// there.
func (m idMap) inside(host uint32) (uint32, bool) {
	for _, e := range m {
		if host >= e.outside && host-e.outside < e.count {
			return host - e.outside + e.inside, true
		}
	}
	return 0, false
}

// newCreator takes the helper whose pidfd came with the listener on sock.
// Both are the creator's, closed by close (also on error).
func newCreator(sock, pidfd int) (*creator, error) {
	c := &creator{sock: sock, pidfd: pidfd}
	pid, err := pidfdPid(pidfd)
	if err != nil {
		c.close()
		return nil, err
	}
	c.pid = pid
	proc := "/proc/" + strconv.Itoa(pid)
	var root, mnt, user unix.Stat_t
	for _, st := range []struct {
		name string
		st   *unix.Stat_t
	}{{"root", &root}, {"ns/mnt", &mnt}, {"ns/user", &user}} {
		if err := unix.Stat(proc+"/"+st.name, st.st); err != nil {
			c.close()
			return nil, fmt.Errorf("creation helper: %w", err)
		}
	}
	if c.uids, err = readIDMap(proc + "/uid_map"); err == nil {
		c.gids, err = readIDMap(proc + "/gid_map")
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("creation helper: %w", err)
	}
	// The pid was the helper's as long as it still runs.
	if !c.alive() {
		c.close()
		return nil, fmt.Errorf("creation helper: exited before it was asked anything")
	}
	c.root, c.mntNS, c.userNS = fileID{root.Dev, root.Ino}, mnt.Ino, user.Ino
	return c, nil
}

// pidfdPid returns the pid (in this process's pid namespace) of pidfd.
func pidfdPid(pidfd int) (int, error) {
	f, err := os.Open("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0, fmt.Errorf("creation helper: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("creation helper: pid %q", v)
			}
			return pid, nil
		}
	}
	return 0, fmt.Errorf("creation helper: descriptor %d is not a pidfd", pidfd)
}

// alive reports whether the helper has not exited.
func (c *creator) alive() bool {
	fds := []unix.PollFd{{Fd: int32(c.pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

func (c *creator) close() {
	_ = unix.Close(c.sock)
	_ = unix.Close(c.pidfd)
}

// createRequest is one call for the helper. names[0] is the call's first
// name (a link's existing one), names[1] its second (a link's or rename's
// new one); dirs are the directories they are relative to (nil: the name
// is absolute).
type createRequest struct {
	dirs   [2]*os.File
	names  [2]string
	target string
	flags  uint64
	// nofollow: the gate followed the final symlink itself (an open's, a
	// link's AT_SYMLINK_FOLLOW) and judged where it lands; the helper
	// must not follow one again.
	nofollow bool
	// groupShared: a chmod's file is in a directory its group shares,
	// where it may keep group write (notify_chmod_linux.go).
	groupShared bool
	// descriptor: dirs[0] is a link's existing file itself, the caller's
	// open file (createGate.linkSource), linked by the helper as it is;
	// or the file an open or truncate reaches by a magic link
	// (createGate.follow), which the helper opens as it is.
	descriptor bool
}

func (r *createRequest) close() {
	for _, d := range r.dirs {
		if d != nil {
			_ = d.Close()
		}
	}
}

// callerCred is what a caller creates files as, from /proc/TID/status.
type callerCred struct {
	umask, fsuid, fsgid uint32
	groups              []uint32
	capEff              uint64
	// tgid and tid in the sandbox's pid namespace (procfs "self" and
	// "thread-self" there).
	tgid, tid string
}

func readCallerCred(pid int) (callerCred, error) {
	var c callerCred
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return c, err
	}
	seen := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		key, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		var err error
		switch key {
		case "Umask":
			err = parseUint32(&c.umask, f, 0, 8)
		case "Uid":
			err = parseUint32(&c.fsuid, f, 3, 10)
		case "Gid":
			err = parseUint32(&c.fsgid, f, 3, 10)
		case "Groups":
			c.groups = make([]uint32, len(f))
			for i := range f {
				if err = parseUint32(&c.groups[i], f, i, 10); err != nil {
					break
				}
			}
		case "CapEff":
			if len(f) == 1 {
				c.capEff, err = strconv.ParseUint(f[0], 16, 64)
			} else {
				err = fmt.Errorf("CapEff %q", v)
			}
		case "NStgid":
			if len(f) > 0 {
				c.tgid = f[len(f)-1]
			}
		case "NSpid":
			if len(f) > 0 {
				c.tid = f[len(f)-1]
			}
		default:
			continue
		}
		if err != nil {
			return c, fmt.Errorf("reading %s of %d: %w", key, pid, err)
		}
		seen++
	}
	if seen != 7 {
		return c, fmt.Errorf("reading the credentials of %d: %d of 7 fields", pid, seen)
	}
	return c, nil
}

// inside turns the ids, which /proc shows as this host's, into the
// sandbox's user namespace's.
func (c *callerCred) inside(uids, gids idMap) error {
	var ok bool
	if c.fsuid, ok = uids.inside(c.fsuid); !ok {
		return fmt.Errorf("its fsuid has no id in the sandbox")
	}
	if c.fsgid, ok = gids.inside(c.fsgid); !ok {
		return fmt.Errorf("its fsgid has no id in the sandbox")
	}
	for i, g := range c.groups {
		if c.groups[i], ok = gids.inside(g); !ok {
			return fmt.Errorf("its group %d has no id in the sandbox", g)
		}
	}
	return nil
}

func parseUint32(dst *uint32, f []string, i, base int) error {
	if i >= len(f) {
		return fmt.Errorf("field %d missing", i)
	}
	v, err := strconv.ParseUint(f[i], base, 32)
	*dst = uint32(v)
	return err
}

// procSelf rewrites a name that starts with procfs's "self" or
// "thread-self" to the caller's own directory there: the helper would find
// its own. (Those reached through a symlink or "..", which the kernel
// resolves for whoever walks them, lead to the helper's; it holds only the
// directories of the call it performs.)
func procSelf(name string, c callerCred) string {
	rest := strings.TrimLeft(name, "/")
	if len(rest) == len(name) {
		return name
	}
	p, ok := strings.CutPrefix(rest, "proc")
	if !ok || !strings.HasPrefix(p, "/") {
		return name
	}
	p = strings.TrimLeft(p, "/")
	for _, self := range []struct{ name, dir string }{{"self", c.tgid}, {"thread-self", c.tgid + "/task/" + c.tid}} {
		if after, ok := strings.CutPrefix(p, self.name); ok && (after == "" || after[0] == '/') {
			return "/proc/" + self.dir + after
		}
	}
	return name
}

// perform has the helper make call n with the names the gate checked
// (req). It returns the call's value, or for an open the new descriptor
// (the caller must close it), or the errno the caller gets; why is set
// when the gate refuses to act (the refusal is recorded).
func (g *execGateRun) perform(fd int, n *seccompNotif, call createCall, req *createRequest) (val int64, newfd *os.File, errno unix.Errno, why string) {
	c := g.creator.Load()
	if c == nil && g.creatorSet != nil {
		// A supervisor's helper is on its way.
		select {
		case <-g.creatorSet:
		case <-time.After(createHelperTimeout):
		}
		c = g.creator.Load()
	}
	if c == nil {
		return 0, nil, unix.EPERM, "no creation helper runs in this sandbox: no name can be created"
	}
	if c.broken != "" {
		return 0, nil, unix.EPERM, c.broken
	}
	pid := int(n.pid)
	proc := "/proc/" + strconv.Itoa(pid)
	cred, err := readCallerCred(pid)
	if err != nil {
		return 0, nil, unix.EPERM, "" // the caller is gone
	}
	if len(cred.groups) > seccompexec.CreateMaxGroups {
		return 0, nil, unix.EPERM, fmt.Sprintf("the caller has more than %d groups: the creation gate cannot act for it", seccompexec.CreateMaxGroups)
	}
	var root, mnt, user unix.Stat_t
	if unix.Stat(proc+"/root", &root) != nil || unix.Stat(proc+"/ns/mnt", &mnt) != nil || unix.Stat(proc+"/ns/user", &user) != nil {
		return 0, nil, unix.EPERM, ""
	}
	if (fileID{root.Dev, root.Ino}) != c.root || mnt.Ino != c.mntNS || user.Ino != c.userNS {
		return 0, nil, unix.EPERM, "the caller has a root directory, mount or user namespace of its own: the creation gate cannot act for it"
	}
	if err := cred.inside(c.uids, c.gids); err != nil {
		return 0, nil, unix.EPERM, "the creation gate cannot act for the caller: " + err.Error()
	}
	// Where each name's directory comes from: a link's existing name is
	// its first, the names of the table its last (or both, a rename's).
	dirArg := [2]int{-1, -1}
	used := 1
	switch call.kind {
	case seccompexec.CreateLink:
		dirArg, used = [2]int{call.fromDir, call.dirfds[0]}, 2
	case seccompexec.CreateRename:
		dirArg, used = [2]int{call.dirfds[0], call.dirfds[1]}, 2
	default:
		dirArg[0] = call.dirfds[0]
	}
	for i := range used {
		if req.dirs[i] != nil {
			continue // a HEAD's checked parent
		}
		req.names[i] = procSelf(req.names[i], cred)
		if strings.HasPrefix(req.names[i], "/") {
			continue
		}
		dir, missing := proc+"/cwd", unix.ENOENT
		if a := dirArg[i]; a >= 0 && int32(n.args[a]) != unix.AT_FDCWD {
			d := int32(n.args[a])
			if d < 0 {
				return 0, nil, unix.EBADF, ""
			}
			dir, missing = proc+"/fd/"+strconv.Itoa(int(d)), unix.EBADF
		}
		f, err := os.OpenFile(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, nil, missing, ""
		}
		req.dirs[i] = f
	}
	req.flags = call.fixedFlags
	if call.flags >= 0 {
		req.flags = uint64(uint32(n.args[call.flags]))
	}
	var mode, dev uint64
	if call.mode >= 0 {
		mode = uint64(uint32(n.args[call.mode]))
	}
	if call.dev >= 0 {
		dev = uint64(uint32(n.args[call.dev]))
	}
	if call.kind == seccompexec.CreateTruncate {
		dev = n.args[1] // the length, all 64 bits of it
	}
	if creates(call.kind, req.flags) {
		mode = creationMode(mode, req.dirs[0], req.names[0], call.kind == seccompexec.CreateOpen && req.flags&unix.O_CREAT == 0)
	}
	if call.kind == seccompexec.CreateChmod && !req.groupShared {
		mode &^= unix.S_IWGRP
	}
	if call.kind == seccompexec.CreateRename || call.kind == seccompexec.CreateLink {
		exchange := call.kind == seccompexec.CreateRename && req.flags&unix.RENAME_EXCHANGE != 0
		if e := groupWriteStays(req, exchange); e != 0 {
			return 0, nil, e, ""
		}
	}
	if call.kind == seccompexec.CreateBind {
		// A socket's mode is the umask's alone: the same bits go.
		cred.umask |= uint32(0o777 &^ creationMode(0o777, req.dirs[0], "", false))
	}
	// Everything read through /proc was the waiting caller's.
	if !idValid(fd, n.id) {
		return 0, nil, unix.EPERM, ""
	}
	msg, rights := encodeCreate(call.kind, req, mode, dev, cred)
	val, newfd, err = c.call(msg, rights, call.kind == seccompexec.CreateOpen, g, fd)
	if err != nil {
		c.broken = fmt.Sprintf("the creation helper failed (%v): no name can be created", err)
		return 0, nil, unix.EPERM, c.broken
	}
	if val < 0 {
		e := unix.Errno(-val)
		if -val >= 4096 {
			e = unix.EPERM
		}
		return 0, nil, e, ""
	}
	return val, newfd, 0, ""
}

// creates reports whether a call of this kind with these flags makes a
// new entry with a mode: mkdir, mknod, and an open with O_CREAT or
// O_TMPFILE.
func creates(kind uint32, flags uint64) bool {
	switch kind {
	case seccompexec.CreateMkdir, seccompexec.CreateMknod:
		return true
	case seccompexec.CreateOpen:
		return flags&createFlags != 0
	}
	return false
}

// creationMode is the mode the helper creates an entry with: mode without
// write for others, and without write for the group unless the directory
// it is made in is a group's shared one (groupShared). The bits are taken
// from the mode rather than added to the umask so that a default ACL on
// the directory, which the kernel applies instead of the umask, cannot
// give them either. Nothing a sandbox creates can then be replaced or
// rewritten by another local account (docs/workspace.md, "Permissions"):
// a chmod adding write for others is refused by the filter (chmodBits).
// dir and name are where the entry is made (for an O_TMPFILE, name is
// the directory it is made in: tmpfile).
func creationMode(mode uint64, dir *os.File, name string, tmpfile bool) uint64 {
	mode &^= unix.S_IWOTH
	if mode&unix.S_IWGRP != 0 && !groupShared(dir, name, tmpfile) {
		mode &^= unix.S_IWGRP
	}
	return mode
}

// groupShared reports whether the directory a new entry is made in is
// group-writable and setgid: a directory its group shares, whose members
// can already replace every entry in it, and where every new entry gets
// that group (the setgid bit). A group-writable entry there gives the
// group nothing it does not have; anywhere else it gives the owner's group
// (or a group the directory happens to have) a file or directory of the
// sandbox's to rewrite, so the umask alone does not decide it.
func groupShared(dir *os.File, name string, tmpfile bool) bool {
	var st unix.Stat_t
	var err error
	if tmpfile {
		err = unix.Fstatat(int(dir.Fd()), name, &st, 0)
	} else {
		err = unix.Fstat(int(dir.Fd()), &st)
	}
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&(unix.S_IWGRP|unix.S_ISGID) == unix.S_IWGRP|unix.S_ISGID
}

// Group write stays where a group shares a directory (red team s14 F2).
// A creation or chmod keeps group write only in a directory that is
// group-writable and setgid (groupShared); a directory made in one is
// shared too (the kernel's setgid inheritance). A rename or link that
// would put a group-writable entry, or a setgid directory, in a directory
// that is not shared fails with EXDEV (mv then copies, and the copies are
// made by the rules above), so what the sandbox makes group-writable
// stays inside shared directories. The gate's view of the names cannot be
// swapped before the helper acts: every creation, rename and link of the
// sandbox is performed by the helper, one call at a time. Not covered: a
// chmod that takes group write and setgid off a shared directory is not
// notified (the filter notifies a chmod that gives group write), and the
// directory can then be moved out with the group-writable entries in it.

// groupWriteStays refuses (EXDEV) a rename or link (req: each name's
// directory, as the gate resolved and judged it, and the name in it) that
// puts a group-writable entry in a directory that is not shared: the
// link's or rename's existing entry under the new name, and for an
// exchange the other way too.
func groupWriteStays(req *createRequest, exchange bool) unix.Errno {
	moves := [][2]int{{0, 1}}
	if exchange {
		moves = append(moves, [2]int{1, 0})
	}
	for _, m := range moves {
		from, to := req.dirs[m[0]], req.dirs[m[1]]
		if from == nil || to == nil {
			return unix.EPERM // not resolved by the gate: nothing to judge by
		}
		var st unix.Stat_t
		var err error
		if m[0] == 0 && req.descriptor {
			err = unix.Fstat(int(from.Fd()), &st) // a link's open file itself
		} else {
			err = unix.Fstatat(int(from.Fd()), strings.TrimRight(req.names[m[0]], "/"), &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			continue // nothing there: the kernel's own answer follows
		}
		setgidDir := st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&unix.S_ISGID != 0
		if (st.Mode&unix.S_IFMT != unix.S_IFLNK && st.Mode&unix.S_IWGRP != 0 || setgidDir) && !groupShared(to, "", false) {
			return unix.EXDEV
		}
	}
	return 0
}

// encodeCreate lays out struct seccompexec_create_req, the groups and the
// strings, with the descriptors to send.
func encodeCreate(kind uint32, req *createRequest, mode, dev uint64, cred callerCred) ([]byte, []int) {
	ne := binary.NativeEndian
	b := make([]byte, createReqSize, createReqSize+4*len(cred.groups)+len(req.names[0])+len(req.names[1])+len(req.target)+3)
	ne.PutUint32(b[0:], kind)
	var rights []int
	for i, d := range req.dirs {
		idx := int32(-1)
		if d != nil {
			idx = int32(len(rights))
			rights = append(rights, int(d.Fd()))
		}
		ne.PutUint32(b[4+4*i:], uint32(idx))
	}
	ne.PutUint32(b[12:], cred.umask)
	flags := req.flags
	if req.nofollow {
		switch kind {
		case seccompexec.CreateOpen:
			flags |= unix.O_NOFOLLOW
		case seccompexec.CreateLink:
			flags &^= unix.AT_SYMLINK_FOLLOW
		}
	}
	if req.descriptor {
		switch kind {
		case seccompexec.CreateOpen:
			flags |= seccompexec.OpenDescriptor
		case seccompexec.CreateTruncate:
			flags = seccompexec.OpenDescriptor
		default:
			flags = seccompexec.LinkDescriptor
		}
	}
	ne.PutUint64(b[16:], flags)
	ne.PutUint64(b[24:], mode)
	ne.PutUint64(b[32:], dev)
	ne.PutUint64(b[40:], cred.capEff)
	ne.PutUint32(b[48:], cred.fsuid)
	ne.PutUint32(b[52:], cred.fsgid)
	ne.PutUint32(b[56:], uint32(len(cred.groups)))
	for i, s := range []string{req.names[0], req.names[1], req.target} {
		ne.PutUint32(b[60+4*i:], uint32(len(s)))
	}
	for _, gid := range cred.groups {
		b = ne.AppendUint32(b, gid)
	}
	for _, s := range []string{req.names[0], req.names[1], req.target} {
		b = append(append(b, s...), 0)
	}
	return b, rights
}

// call sends one request and waits for the answer: the result, and for an
// open that succeeded its descriptor. An error means the helper can no
// longer be trusted to answer. Meanwhile the gate's listener (fd) is
// served: a session's helper is under the filter that notifies it, and
// its own calls go on (answer); other notifications wait in g.pending.
func (c *creator) call(msg []byte, rights []int, open bool, g *execGateRun, listener int) (int64, *os.File, error) {
	var oob []byte
	if len(rights) > 0 {
		oob = unix.UnixRights(rights...)
	}
	if err := unix.Sendmsg(c.sock, msg, oob, nil, unix.MSG_NOSIGNAL); err != nil {
		return 0, nil, fmt.Errorf("sending: %w", err)
	}
	fds := []unix.PollFd{{Fd: int32(c.sock), Events: unix.POLLIN}, {Fd: int32(listener), Events: unix.POLLIN}}
	deadline := time.Now().Add(createHelperTimeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil, fmt.Errorf("no answer in %v", createHelperTimeout)
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, nil, fmt.Errorf("waiting: %w", err)
		}
		if fds[0].Revents != 0 {
			break
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			var n seccompNotif
			if ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)) != nil {
				continue
			}
			if int(n.pid) == c.pid {
				resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
				_ = ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
				continue
			}
			g.pending = append(g.pending, n)
		} else if fds[1].Revents != 0 {
			fds[1].Fd = -1 // the listener hung up: wait for the helper alone
		}
	}
	var b [8]byte
	rb := make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(c.sock, b[:], rb, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, nil, fmt.Errorf("receiving: %w", err)
	}
	var got *os.File
	if oobn > 0 {
		if fd, err := parseRights(rb[:oobn]); err == nil {
			got = os.NewFile(uintptr(fd), "created")
		}
	}
	if n != len(b) {
		if got != nil {
			got.Close()
		}
		return 0, nil, fmt.Errorf("an answer of %d bytes", n)
	}
	val := int64(binary.NativeEndian.Uint64(b[:]))
	if !open || val < 0 {
		if got != nil {
			got.Close()
		}
		return val, nil, nil
	}
	if got == nil {
		return 0, nil, fmt.Errorf("an open without its descriptor")
	}
	return val, got, nil
}

// createReplay is a call the helper performed, kept for a restart of it.
// On a filter without WAIT_KILLABLE_RECV (a session's: libcontainer
// loads it) a signal can interrupt the caller after the effect and before
// it has the answer, and the kernel restarts the call with the same
// arguments: that must get the first result, not a second effect (a
// second mkdir fails with EEXIST, a second open(O_EXCL) too). The answer
// can be lost even when SECCOMP_IOCTL_NOTIF_SEND succeeds: a caller woken
// by the signal just before the answer arrives still takes its
// "interrupted" path. So every performed call is kept, not only those
// whose answer tether saw fail, and a thread's next identical call within
// createReplayWindow gets it back; any other call of that thread drops
// it. The price (docs/workspace.md): a thread that repeats an identical
// creating call at once, with no other creating call between, gets the
// first success again instead of EEXIST.
//
// An open's descriptor is kept as it is only when tether saw its answer
// fail (the restart comes at once); after an answer that was sent it is
// kept as an O_PATH descriptor and opened again for a restart, since a
// descriptor open for writing would make the caller's exec of the file it
// just wrote fail with ETXTBSY (cc -o hello; ./hello).
type createReplay struct {
	key   createKey
	val   int64
	fd    *os.File // an open's descriptor, owned
	path  *os.File // or its file's O_PATH descriptor, owned
	flags uint64   // the open's flags
	until time.Time
}

// createReplayWindow bounds how long a performed call waits for its
// restart; maxReplays how many threads' calls are kept at once.
const (
	createReplayWindow = time.Second
	maxReplays         = 64
)

func (r *createReplay) close() {
	for _, f := range []*os.File{r.fd, r.path} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// reopenFlags are an open's flags without those that made its effect:
// opened again, the file is neither created nor truncated a second time.
const reopenFlags = ^uint64(unix.O_CREAT | unix.O_EXCL | unix.O_TRUNC | unix.O_TMPFILE | unix.O_NOCTTY)

// createKey is what makes a call the same call: the thread, the system
// call, its arguments and the strings read from them.
type createKey struct {
	tid     uint32
	nr      int32
	args    [6]uint64
	strings string
}

// takeReplay returns the thread's kept call if key is that call and its
// window is open; whatever the thread had kept is dropped.
func (g *execGateRun) takeReplay(key createKey) *createReplay {
	r := g.replays[key.tid]
	if r == nil {
		return nil
	}
	delete(g.replays, key.tid)
	if r.key != key || time.Now().After(r.until) {
		r.close()
		return nil
	}
	if r.path != nil {
		f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(r.path.Fd())), int(r.flags&reopenFlags)|unix.O_CLOEXEC, 0)
		r.path.Close()
		r.path = nil
		if err != nil {
			return nil // gone meanwhile: the call is performed again
		}
		r.fd = f
	}
	return r
}

// keepReplay keeps a performed call (owning fd, an open's descriptor, of
// flags; sent: its answer reached the kernel) for its thread, dropping
// what has expired, and the oldest past maxReplays.
func (g *execGateRun) keepReplay(key createKey, val int64, fd *os.File, flags uint64, sent bool) {
	now := time.Now()
	var path *os.File
	if fd != nil && sent {
		// Only a regular file is opened again (a FIFO's open could block
		// the listener); performing any other open again is harmless.
		var st unix.Stat_t
		p, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(fd.Fd())), unix.O_PATH|unix.O_CLOEXEC, 0)
		fd.Close()
		fd = nil
		if err != nil {
			return
		}
		if unix.Fstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(p)
			return
		}
		path = os.NewFile(uintptr(p), "replay")
	}
	if g.replays == nil {
		g.replays = make(map[uint32]*createReplay)
	}
	if old := g.replays[key.tid]; old != nil {
		old.close()
	}
	var oldest *createReplay
	for tid, r := range g.replays {
		if now.After(r.until) {
			r.close()
			delete(g.replays, tid)
		} else if oldest == nil || r.until.Before(oldest.until) {
			oldest = r
		}
	}
	if len(g.replays) >= maxReplays && oldest != nil {
		oldest.close()
		delete(g.replays, oldest.key.tid)
	}
	g.replays[key.tid] = &createReplay{key: key, val: val, fd: fd, path: path, flags: flags, until: now.Add(createReplayWindow)}
}
