package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/protect"
	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The creation gate (docs/workspace.md, "Nested repositories"): no process
// of a sandbox may give a directory entry the name .git, or HEAD outside a
// .git directory (a HEAD, objects/ and refs/ make any directory a bare
// repository to git), anywhere it can write. A .git made in any directory of the workspace (git init, git
// clone, mkdir, mv x sub/.git, ln -s, a hard link, a "gitdir:" file) is a
// repository whose config and hooks the host's git trusts as soon as a
// person runs git there; the repositories that exist when the sandbox
// starts are frozen instead (planProtection).
//
// The exec gate's listener carries it: every system call that can name an
// entry (createCalls) waits in the kernel until the gate has read the
// names from the caller's memory. A name whose last element is refused
// (refusedName, in any letter case: a case-folding directory finds .GIT
// as .git) fails with EPERM and is recorded. The same goes for a symlink's
// target: open(O_CREAT) follows a final symlink and creates what it names,
// so no symlink may point at such a name (and the walk at start refuses a
// workspace holding one). That refusal depends on the strings alone.
//
// Every other name is then judged by what it is at call time, whatever the
// mounts (the host can detach a frozen file's bind by renaming over it,
// or make a repository that has none): the directory it is in is resolved
// as the kernel will, and the name refused when the protected list or a
// git directory at or above it holds it (judge). What is allowed is
// performed by the sandbox's creation helper in that very directory, with
// the very strings checked (creator_linux.go): the kernel never reads them
// again, so a thread that rewrites them in the caller's memory, or swaps a
// directory on the way, after the check changes nothing.

// createFlags are the bits of open's flags that can create a file.
// O_TMPFILE includes O_DIRECTORY, so its own bit is tested.
const createFlags = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// CreateBlock is one creation the gate refused: a process of the sandbox
// tried to name a directory entry .git (or HEAD outside a .git directory),
// or to create or replace a protected entry. Every field but Op comes from
// the sandboxed process and is hostile data.
type CreateBlock struct {
	// Op is the system call: mkdir, mknod, symlink, link, rename, open.
	Op string `json:"op"`
	// Pid is the caller's process id on the host.
	Pid int `json:"pid"`
	// Path is the refused name as the caller passed it (for a symlink
	// whose target was refused, the target).
	Path string `json:"path"`
	// Reason says why.
	Reason string `json:"reason"`
}

// createGate is the creation gate's state in a sandbox's gate.
type createGate struct {
	// mu guards gitDirs and trees, which a pooled sandbox's gate gets
	// only when the sandbox is taken for its command (protect).
	mu sync.RWMutex
	// gitDirs are the identities of the git directories frozen in the
	// workspace (planProtection): git may write HEAD (and logs/HEAD) in
	// them, nowhere else.
	gitDirs map[fileID]bool
	// trees are the workspace and the writable binds: a name created in
	// one is judged by its protected list (judge).
	trees []gateTree
}

// gateTree is one tree whose names the creation gate judges: its root
// directory's identity and its protected list.
type gateTree struct {
	id  fileID
	set protect.Set
	// ws is the tree's host path, repos its repositories frozen at start
	// and git their configuration as it is now: a path it names is
	// refused even when the host named it after the sandbox started.
	ws    string
	repos []protect.GitRepo
	git   *protect.ConfigView
}

// fileID is a file's identity: st_dev and st_ino (the same through the
// sandbox's idmapped mount as on the host).
type fileID struct{ dev, ino uint64 }

// createCall is one entry of the creation gate's table: a system call that
// can name a directory entry, where its arguments are, and how the
// creation helper performs it. Argument numbers are -1 for none.
type createCall struct {
	name string // as libcontainer's filter names it
	op   string // as CreateBlock reports it
	kind uint32 // the helper's operation (seccompexec.Create*)
	// names are the argument numbers of the paths it creates or replaces
	// (both of a rename: RENAME_EXCHANGE gives the old name the new one's
	// entry), and dirfds those of the directories each is relative to (-1:
	// the working directory).
	names, dirfds []int
	// target is the argument number of a symlink's target.
	target int
	// from and fromDir: a link's existing name and its directory, which
	// are not checked (the file exists) but are passed on.
	from, fromDir int
	// flags, mode and dev: the arguments the helper passes on (open's,
	// linkat's or renameat2's flags); fixedFlags are creat's.
	flags, mode, dev int
	fixedFlags       uint64
	// creating is the argument number of the flags that make the call
	// the gate's (open and openat: gatedOpen; the filter notifies them
	// only then), or -1: it always is.
	creating int
}

// createCalls is the creation gate's table, keyed by system call number:
// the filters that notify these calls (the trampoline's, whose own table
// TestCreateCallsMatchFilter compares, and libcontainer's, createNotifies)
// and the gate that answers them read it.
var createCalls = func() map[int32]createCall {
	m := map[int32]createCall{
		unix.SYS_MKDIRAT:   {name: "mkdirat", op: "mkdir", kind: seccompexec.CreateMkdir, names: []int{1}, dirfds: []int{0}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 2, dev: -1, creating: -1},
		unix.SYS_MKNODAT:   {name: "mknodat", op: "mknod", kind: seccompexec.CreateMknod, names: []int{1}, dirfds: []int{0}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 2, dev: 3, creating: -1},
		unix.SYS_SYMLINKAT: {name: "symlinkat", op: "symlink", kind: seccompexec.CreateSymlink, names: []int{2}, dirfds: []int{1}, target: 0, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
		unix.SYS_LINKAT:    {name: "linkat", op: "link", kind: seccompexec.CreateLink, names: []int{3}, dirfds: []int{2}, target: -1, from: 1, fromDir: 0, flags: 4, mode: -1, dev: -1, creating: -1},
		unix.SYS_RENAMEAT:  {name: "renameat", op: "rename", kind: seccompexec.CreateRename, names: []int{1, 3}, dirfds: []int{0, 2}, target: -1, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
		unix.SYS_RENAMEAT2: {name: "renameat2", op: "rename", kind: seccompexec.CreateRename, names: []int{1, 3}, dirfds: []int{0, 2}, target: -1, from: -1, fromDir: -1, flags: 4, mode: -1, dev: -1, creating: -1},
		unix.SYS_OPENAT:    {name: "openat", op: "open", kind: seccompexec.CreateOpen, names: []int{1}, dirfds: []int{0}, target: -1, from: -1, fromDir: -1, flags: 2, mode: 3, dev: -1, creating: 2},
		// truncate writes through a name; its length goes as the
		// helper's dev (perform).
		unix.SYS_TRUNCATE: {name: "truncate", op: "truncate", kind: seccompexec.CreateTruncate, names: []int{0}, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
		// bind's name is in a struct sockaddr_un (answerBind).
		unix.SYS_BIND: {name: "bind", op: "bind", kind: seccompexec.CreateBind, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
		// connect reaches a listener through a name (answerConnect).
		unix.SYS_CONNECT: {name: "connect", op: "connect", kind: seccompexec.CreateConnect, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: -1, dev: -1, creating: -1},
		// A chmod is the gate's when its mode gives the group write
		// (creating: the mode; answerChmod).
		unix.SYS_FCHMOD:    {name: "fchmod", op: "chmod", kind: seccompexec.CreateChmod, dirfds: []int{-1}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 1, dev: -1, creating: 1},
		unix.SYS_FCHMODAT:  {name: "fchmodat", op: "chmod", kind: seccompexec.CreateChmod, names: []int{1}, dirfds: []int{0}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 2, dev: -1, creating: 2},
		unix.SYS_FCHMODAT2: {name: "fchmodat2", op: "chmod", kind: seccompexec.CreateChmod, names: []int{1}, dirfds: []int{0}, target: -1, from: -1, fromDir: -1, flags: -1, mode: 2, dev: -1, creating: 2},
	}
	for nr, c := range legacyCreateCalls {
		m[nr] = c
	}
	return m
}()

// createCallFor returns the table's entry for system call nr, or false
// when it is not one the gate answers.
func createCallFor(nr int32) (createCall, bool) {
	c, ok := createCalls[nr]
	return c, ok
}

// createCallNamed returns the table's entry for the system call name.
func createCallNamed(name string) (createCall, bool) {
	for _, c := range createCalls {
		if c.name == name {
			return c, true
		}
	}
	return createCall{}, false
}

// answerCreate decides one creating system call: EPERM for a .git or a
// protected entry (judge), else the creation helper performs it with the
// names as read and the directories resolved here, and the
// caller gets the helper's result (the kernel never goes on: the caller
// could rewrite the names in its memory after they were read). The
// strings are read from the caller's memory and the notification is
// re-validated after the reads, so they are the waiting caller's and not
// those of a process that reused its pid.
//
// Without a helper (a one-shot sandbox whose filter libcontainer loads,
// which lists nested-repos in not_enforced) a call the gate lets through
// goes on; with passOn (an observed call, which answerObserved records)
// it is then not answered here: answerCreate reports whether it answered.
func (g *execGateRun) answerCreate(fd int, n *seccompNotif, call createCall, passOn bool) bool {
	switch call.kind {
	case seccompexec.CreateBind:
		return g.answerBind(fd, n, call, passOn)
	case seccompexec.CreateConnect:
		return g.answerConnect(fd, n, call, passOn)
	case seccompexec.CreateChmod:
		return g.answerChmod(fd, n, call)
	}
	r := memReader{pid: int(n.pid)}
	var errno unix.Errno
	var block *CreateBlock
	var raw []string // every string read, for the replay's key
	read := func(arg int) string {
		s, err := r.cstring(n.args[arg], unix.PathMax)
		raw = append(raw, s)
		if err != nil {
			// The kernel would fail the call too: say how, rather than
			// let it read what the gate could not.
			errno = unix.EFAULT
			if strings.HasPrefix(err.Error(), "longer than") {
				errno = unix.ENAMETOOLONG
			}
		}
		return s
	}
	flags := call.fixedFlags
	if call.flags >= 0 {
		flags = uint64(uint32(n.args[call.flags]))
	}
	// A refused creation fails with EPERM; a refused write of an existing
	// file with EROFS, as its read-only bind would have it.
	refused := unix.EPERM
	if writesOnly(call.kind, flags) {
		refused = unix.EROFS
	}
	if refused == unix.EROFS && (!g.performs || g.initBeforeHelper(n)) {
		// Not judged: without a helper (a one-shot sandbox whose filter
		// libcontainer loads, which lists nested-repos in not_enforced)
		// it could only be continued, which a thread defeats, and
		// libcontainer's init, under that filter, opens its exec FIFO
		// for writing by a name outside the sandbox's root.
		if sc, ok := sealedFor(n); ok && g.sealed != nil {
			g.recordSealed(fd, n, sc)
		}
		if passOn {
			return false
		}
		resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return true
	}
	refuse := func(what, s, name string) {
		block = &CreateBlock{Op: call.op, Pid: int(n.pid), Path: s,
			Reason: fmt.Sprintf("%s %s is refused: it would make a repository whose config and hooks the host's git runs", what, name)}
		errno = refused
	}
	var req createRequest
	defer req.close()
	slot := func(i int) int { // the request's name for call.names[i]
		if call.kind == seccompexec.CreateLink {
			return 1
		}
		return i
	}
	// place resolves the directory a name is in, as the kernel will, and
	// judges what the name is there (judge): the helper then acts in that
	// very directory, so a directory swapped on the way afterwards changes
	// nothing. An open that would follow a final symlink is judged, and
	// performed, at the symlink's end.
	place := func(dirfdArg, sl int, s string, head, follow, exclusive bool) {
		parent, rest, e := g.create.parentOf(int(n.pid), dirfdArg, n, s)
		if e != 0 {
			// The kernel's own answer (a missing directory: git makes
			// logs/ when that fails), which creates nothing.
			errno = e
			return
		}
		req.dirs[sl], req.names[sl] = parent, rest // closed with req
		if head && !g.create.headAllowed(parent) {
			refuse("naming an entry", s, "HEAD")
			return
		}
		if follow {
			var file *os.File
			if parent, rest, file, e = g.create.follow(int(n.pid), parent, rest); e != 0 {
				req.dirs[sl] = nil // closed by follow
				errno = e
				return
			}
			if file != nil {
				// A descriptor's link on procfs (/dev/stdout,
				// /proc/self/fd/N): the helper opens that very file,
				// judged by its name (rest is the link's text).
				req.dirs[sl], req.names[sl], req.descriptor = file, "", true
				if why := g.create.judgeReopened(int(n.pid), rest, file); why != "" {
					block = &CreateBlock{Op: call.op, Pid: int(n.pid), Path: s, Reason: why}
					errno = refused
				}
				return
			}
			req.dirs[sl], req.names[sl], req.nofollow = parent, rest, true
		}
		why, _, _ := g.create.judge(parent, rest)
		if why != "" {
			var st unix.Stat_t
			if exclusive && unix.Fstatat(int(parent.Fd()), strings.TrimRight(rest, "/"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				// The kernel's answer, which changes nothing (mkdir -p
				// goes on through an existing protected directory).
				errno = unix.EEXIST
				return
			}
			block = &CreateBlock{Op: call.op, Pid: int(n.pid), Path: s, Reason: why}
			errno = refused
		}
	}
	open := call.kind == seccompexec.CreateOpen
	excl := flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL
	var names []string // as read, for a refusal by the mount plan
	for i, a := range call.names {
		s := read(a)
		if errno != 0 {
			break
		}
		names = append(names, s)
		req.names[slot(i)] = s
		name := refusedName(s)
		if name != "" && name != "HEAD" {
			refuse("naming an entry", s, name)
			break
		}
		// A rename replaces or removes its names; an open that does not
		// create exclusively, and truncate, may write an existing file
		// (following a final symlink, unless O_NOFOLLOW); the others make
		// a new entry or fail with EEXIST.
		exclusive := call.kind != seccompexec.CreateRename && call.kind != seccompexec.CreateTruncate && (!open || excl)
		follow := open && flags&unix.O_NOFOLLOW == 0 && !excl || call.kind == seccompexec.CreateTruncate
		if place(call.dirfds[i], slot(i), s, name == "HEAD", follow, exclusive); errno != 0 {
			break
		}
	}
	if errno == 0 && call.target >= 0 {
		// A target is followed from wherever the link is: only the
		// string can say where that is.
		if req.target = read(call.target); errno == 0 {
			if name := refusedName(req.target); name != "" {
				refuse("a symlink to", req.target, name)
			}
		}
	}
	var from string // a link's existing name as read, for a refusal by the mount plan
	if errno == 0 && call.from >= 0 {
		// A second name for a protected file writes it.
		if req.names[0] = read(call.from); errno == 0 {
			from = req.names[0]
			var src *os.File
			var why string
			src, errno, why = g.create.linkSource(n, call, flags, from, req.dirs[1])
			switch {
			case why != "":
				block = &CreateBlock{Op: call.op, Pid: int(n.pid), Path: from, Reason: why}
				errno = unix.EPERM
			case errno != 0:
			case src != nil:
				// The caller's own open file, judged by the names it
				// has: linked as it is (LinkDescriptor).
				req.dirs[0], req.names[0], req.descriptor = src, "", true
			case from != "":
				// place makes it relative to the directory it checked.
				place(call.fromDir, 0, from, false, flags&unix.AT_SYMLINK_FOLLOW != 0, false)
			}
		}
	}
	answer := func(resp seccompNotifResp) bool {
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return true
	}
	if !idValid(fd, n.id) {
		return true // the caller is gone; the bytes may be another process's
	}
	if g.observe && block == nil && errno == 0 {
		g.observeNames(fd, n, call, names, from)
	}
	if block != nil {
		g.refuseCreate(*block)
	}
	if errno != 0 {
		return answer(seccompNotifResp{id: n.id, error: -int32(errno)})
	}
	if !g.performs {
		if passOn {
			return false
		}
		return answer(seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
	}
	if passOn {
		g.recordObserved(fd, n) // before the effect, as the kernel's own call
	}
	key := createKey{n.pid, n.nr, n.args, strings.Join(raw, "\x00")}
	var val int64
	var newfd *os.File
	var why string
	if rp := g.takeReplay(key); rp != nil {
		val, newfd, req.flags = rp.val, rp.fd, rp.flags
	} else {
		val, newfd, errno, why = g.perform(fd, n, call, &req)
	}
	if why != "" {
		g.refuseCreate(CreateBlock{Op: call.op, Pid: int(n.pid), Path: req.names[slot(0)], Reason: why})
	}
	if (errno == unix.EROFS || errno == unix.EXDEV) && g.sealed != nil {
		// EXDEV: a rename or link across a write tree's boundary (another
		// mount), refused before the read-only mount is looked at.
		sealedAs := call
		if call.kind == seccompexec.CreateOpen && writesOnly(call.kind, flags) {
			sealedAs.op = "open-write" // as sealedCalls names it
		}
		g.refuseSealed(fd, n, sealedAs, names, from, errno) // before the caller has its answer: its cwd is still the call's
	}
	if errno != 0 {
		return answer(seccompNotifResp{id: n.id, error: -int32(errno)})
	}
	sent := false // the answer reached the kernel (which may still drop it)
	if newfd == nil {
		resp := seccompNotifResp{id: n.id, val: val}
		sent = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) == nil
	} else {
		// Installed first, answered next. Not in one step (ADDFD_FLAG_SEND):
		// that ioctl waits for the caller, and when a signal (the Go
		// runtime's preemption) interrupts the wait, the kernel has already
		// marked the call answered but may not have installed the
		// descriptor (seen: tar x of 2,000 files got descriptors that were
		// not open). Without SEND an interrupted ADDFD installed nothing
		// and is retried.
		add := seccompNotifAddfd{id: n.id, srcfd: uint32(newfd.Fd())}
		if req.flags&unix.O_CLOEXEC != 0 {
			add.newfdFlags = unix.O_CLOEXEC
		}
		got, err := ioctlRet(fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add))
		switch err {
		case nil:
			resp := seccompNotifResp{id: n.id, val: int64(got)}
			sent = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) == nil
		case unix.ENOENT, unix.ESRCH:
			// The caller is gone, or was interrupted with the descriptor
			// queued but not installed (ESRCH): a restart finds the replay.
		default:
			// Not installed (EMFILE past the caller's limit).
			e, _ := err.(unix.Errno)
			if e == 0 {
				e = unix.EMFILE
			}
			newfd.Close()
			return answer(seccompNotifResp{id: n.id, error: -int32(e)})
		}
	}
	// Answered, interrupted or gone after the effect: a restart must find
	// it (createReplay says why even an answer that was sent may be lost).
	g.keepReplay(key, val, newfd, req.flags, sent)
	return true
}

// initBeforeHelper reports whether n comes from a supervised sandbox's
// init (its pid 1) before the supervisor has handed its creation helper
// over: libcontainer's init, which opens its exec FIFO for writing after
// it loaded the filter, or the supervisor's constructor, which starts the
// helper before the Go runtime and anything of the sandbox's runs. Its
// opens for writing go on as they are: nothing else can run yet, and no
// helper could perform them (it waits for this very open).
func (g *execGateRun) initBeforeHelper(n *seccompNotif) bool {
	if g.creatorSet == nil || g.creator.Load() != nil {
		return false
	}
	select {
	case <-g.creatorSet:
		return false // arrived, or never will: perform refuses
	default:
	}
	cred, err := readCallerCred(int(n.pid))
	return err == nil && cred.tgid == "1"
}

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// creating reports whether n is the creation gate's: every call of the
// table but open and openat that neither create nor write (gatedOpen),
// which an observed sandbox's filter notifies too.
func creating(n *seccompNotif) bool {
	c, ok := createCalls[n.nr]
	if ok && c.kind == seccompexec.CreateChmod {
		return n.args[c.creating]&unix.S_IWGRP != 0
	}
	return ok && (c.creating < 0 || gatedOpen(n.args[c.creating]))
}

// gatedOpen reports whether an open with these flags is the creation
// gate's: it can create a name (O_CREAT), or write an existing file
// through one (an access mode but O_RDONLY, or O_TRUNC: sealedOpenWrites)
// and is no O_TMPFILE, which names no entry. A frozen file whose bind the
// host detached (a rename over it from the host's mount namespace: `git
// config`, `sed -i`) is writable by such an open, so the gate judges the
// name where it is at call time, as it does a creation (C1 of the
// session-12 second red team). The filters test the same bits
// (seccompexec.c notify_gated; sealedOpenRules for libcontainer's).
func gatedOpen(flags uint64) bool {
	return flags&unix.O_CREAT != 0 || flags&createFlags == 0 && flags&sealedOpenWrites != 0
}

// writesOnly reports whether a call of the creation gate with these flags
// writes through an existing name and creates none: an open for writing
// without O_CREAT, or truncate. It is refused with EROFS, the answer of
// the read-only bind it stands in for.
func writesOnly(kind uint32, flags uint64) bool {
	return kind == seccompexec.CreateTruncate || kind == seccompexec.CreateOpen && flags&createFlags == 0
}

// parentOf resolves the directory that p (relative to the caller's
// descriptor dirfd, argument number dirfdArg of n; -1 for the working
// directory) names an entry in, as the kernel will, inside the caller's
// root; the caller re-validates n afterwards. It returns that directory
// (the caller must close it) and what p names in it.
//
// errno is the kernel's answer when there is no such directory (ENOENT,
// ENOTDIR: the call cannot create anything and fails with it).
func (c *createGate) parentOf(pid, dirfdArg int, n *seccompNotif, p string) (*os.File, string, unix.Errno) {
	dirfd := int32(unix.AT_FDCWD)
	if dirfdArg >= 0 {
		dirfd = int32(n.args[dirfdArg])
	}
	if maybeProcSelf(p) {
		// procfs's self is the caller's, not the gate's.
		cred, err := readCallerCred(pid)
		if err != nil {
			return nil, "", unix.EPERM // the caller is gone
		}
		p = procSelf(p, cred)
	}
	if dirfd != unix.AT_FDCWD && !strings.HasPrefix(p, "/") {
		// The kernel's answers for a descriptor that is no directory.
		var st unix.Stat_t
		if dirfd < 0 || unix.Stat("/proc/"+strconv.Itoa(pid)+"/fd/"+strconv.Itoa(int(dirfd)), &st) != nil {
			return nil, "", unix.EBADF
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil, "", unix.ENOTDIR
		}
	}
	dir, rest := splitName(p)
	_, f, err := resolveExec(pid, dirfd, dir, false)
	if err != nil {
		var e unix.Errno
		if !errors.As(err, &e) {
			e = unix.EPERM
		}
		return nil, "", e
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		f.Close()
		return nil, "", unix.ENOTDIR
	}
	return f, rest, 0
}

// splitName splits p into the directory it names an entry in ("." for
// none: the starting directory) and that entry, as the kernel's lookup
// of a path's parent does.
func splitName(p string) (dir, rest string) {
	dir = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		dir = dir[:i+1]
	} else {
		dir = ""
	}
	rest = p[len(dir):]
	if dir == "" {
		dir = "."
	}
	return dir, rest
}

// maybeProcSelf reports whether p may start with procfs's self or
// thread-self (procSelf rewrites those).
func maybeProcSelf(p string) bool {
	rest := strings.TrimLeft(p, "/")
	return len(rest) < len(p) && strings.HasPrefix(rest, "proc/")
}

// maxFollow is the kernel's bound on the symlinks one lookup follows.
const maxFollow = 40

// follow returns where an open that follows a final symlink lands: while
// rest is a symlink in parent, the directory its target names an entry in
// (resolved inside the caller's root) and that entry. It takes parent,
// and the caller must close the directory it returns.
//
// A symlink on procfs is a magic link (a descriptor's fd/N, which
// /dev/stdout reaches; cwd, root, exe): its text names no entry to open
// ("pipe:[…]", "/x (deleted)"), and the kernel follows it to the very
// file. follow then returns that file instead (an O_PATH descriptor, the
// caller must close it), with rest the link's text and no directory. It
// is followed only to a file the caller holds itself: the link must be a
// descriptor's, and reach the file of the caller's own descriptor of that
// number (tether, host root, may follow the links of processes the caller
// may not: the supervisor's, the helper's); else EACCES.
func (c *createGate) follow(pid int, parent *os.File, rest string) (_ *os.File, _ string, file *os.File, _ unix.Errno) {
	for range maxFollow {
		var st unix.Stat_t
		if unix.Fstatat(int(parent.Fd()), strings.TrimRight(rest, "/"), &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return parent, rest, nil, 0
		}
		buf := make([]byte, unix.PathMax)
		k, err := unix.Readlinkat(int(parent.Fd()), rest, buf)
		if err != nil {
			parent.Close()
			return nil, "", nil, unix.EPERM
		}
		target := string(buf[:k])
		var fs unix.Statfs_t
		if unix.Fstatfs(int(parent.Fd()), &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC {
			fd, err := unix.Openat(int(parent.Fd()), rest, unix.O_PATH|unix.O_CLOEXEC, 0)
			parent.Close()
			if err != nil {
				e, _ := err.(unix.Errno)
				if e == 0 {
					e = unix.EPERM
				}
				return nil, "", nil, e
			}
			file := os.NewFile(uintptr(fd), target)
			if !callerHolds(pid, rest, file) {
				file.Close()
				return nil, "", nil, unix.EACCES
			}
			return nil, target, file, 0
		}
		if maybeProcSelf(target) {
			// procfs's self is the caller's (/dev/stdout's
			// /proc/self/fd/1), not the gate's.
			cred, err := readCallerCred(pid)
			if err != nil {
				parent.Close()
				return nil, "", nil, unix.EPERM // the caller is gone
			}
			target = procSelf(target, cred)
		}
		dir, next := splitName(target)
		root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			parent.Close()
			return nil, "", nil, unix.EPERM
		}
		start := ""
		if !strings.HasPrefix(target, "/") {
			start = "/proc/self/fd/" + strconv.Itoa(int(parent.Fd()))
		}
		fd, err := walkInRoot(root, start, dir, func(string) {})
		unix.Close(root)
		parent.Close()
		if err != nil {
			var e unix.Errno
			if !errors.As(err, &e) {
				e = unix.EPERM
			}
			return nil, "", nil, e
		}
		parent, rest = os.NewFile(uintptr(fd), dir), next
	}
	parent.Close()
	return nil, "", nil, unix.ELOOP
}

// callerHolds reports whether the caller's own descriptor numbered name
// (a magic link's name, fd/N) is the same file as f.
func callerHolds(pid int, name string, f *os.File) bool {
	num, err := strconv.Atoi(name)
	if err != nil || num < 0 || strconv.Itoa(num) != name {
		return false
	}
	own, e := callerFile(pid, num)
	if e != 0 {
		return false
	}
	defer own.Close()
	var a, b unix.Stat_t
	return unix.Fstat(int(f.Fd()), &a) == nil && unix.Fstat(int(own.Fd()), &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// maxJudgeDepth bounds how far up judge looks for a tree's root.
const maxJudgeDepth = 1024

// judge returns why the creation gate refuses to create, replace or
// remove the entry rest in the directory parent, or "": whatever the
// mounts say, it decides by what the name is at call time. In a tree
// (the workspace or a writable bind: a directory at or above parent is
// its root, judged by identity) the entry's tree-relative path must not be
// on the tree's protected list (protect.Set.Reason: shell startup files,
// .envrc, tether's config and state, git's control surface under any
// .git), must not be on the control surface of a git directory at or
// above parent (protect.ControlReason: nested, bare and host-made ones,
// judged on the objects), and must not be what a repository's
// configuration names as it is now (protect.ConfigView.Reason: the
// repositories frozen at start and those at or above parent). Outside
// every tree nothing is refused. What it cannot tell is refused. It also
// returns the tree the entry is in and the entry's path there (nil and ""
// outside every tree).
func (c *createGate) judge(parent *os.File, rest string) (why string, _ *gateTree, at string) {
	name := strings.TrimRight(rest, "/")
	if c == nil {
		return "", nil, ""
	}
	c.mu.RLock()
	trees := c.trees
	c.mu.RUnlock()
	if len(trees) == 0 || name == "" || name == "." || name == ".." {
		return "", nil, "" // no new entry is named
	}
	// Up from parent by "..", each directory's identity, to a tree's
	// root or the caller's root.
	fds := []int{int(parent.Fd())}
	defer func() {
		for _, fd := range fds[1:] {
			unix.Close(fd)
		}
	}()
	var ids []fileID
	var tree *gateTree
	for len(fds) <= maxJudgeDepth {
		var st unix.Stat_t
		if err := unix.Fstat(fds[len(fds)-1], &st); err != nil {
			return fmt.Sprintf("the creation gate could not read a directory above %s: %v", rest, err), nil, ""
		}
		id := fileID{st.Dev, st.Ino}
		if len(ids) > 0 && id == ids[len(ids)-1] {
			return "", nil, "" // ".." of the caller's root is itself: outside every tree
		}
		ids = append(ids, id)
		for i := range trees {
			if trees[i].id == id {
				tree = &trees[i]
			}
		}
		if tree != nil {
			break
		}
		up, err := unix.Openat(fds[len(fds)-1], "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Sprintf("the creation gate could not open a directory above %s: %v", rest, err), nil, ""
		}
		fds = append(fds, up)
	}
	if tree == nil {
		return fmt.Sprintf("the creation gate could not tell where %s is: more than %d directories deep", rest, maxJudgeDepth), nil, ""
	}
	// The directories' names: the last of the path the kernel keeps for
	// parent, each checked to be the directory below it there.
	depth := len(fds) - 1
	var parts []string
	if depth > 0 {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(parent.Fd())))
		elems := strings.Split(strings.Trim(p, "/"), "/")
		if err != nil || len(elems) < depth || strings.HasSuffix(p, " (deleted)") {
			return fmt.Sprintf("the creation gate could not tell where %s is", rest), nil, ""
		}
		parts = elems[len(elems)-depth:]
		for i, part := range parts {
			var st unix.Stat_t
			below := ids[depth-1-i]
			if unix.Fstatat(fds[depth-i], part, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || (fileID{st.Dev, st.Ino}) != below {
				return fmt.Sprintf("the creation gate could not tell where %s is: a directory above it moved", rest), nil, ""
			}
		}
	}
	dir := path.Join(append([]string{"."}, parts...)...)
	at = path.Join(dir, name)
	if why := tree.set.Reason(at); why != "" {
		return why, nil, ""
	}
	why, err := protect.ControlReason(fds[depth], int(parent.Fd()), dir, name)
	if err == nil && why == "" {
		why, err = tree.git.Reason(fds[depth], int(parent.Fd()), tree.ws, dir, name, tree.repos)
	}
	if err != nil {
		return fmt.Sprintf("the creation gate could not judge %s: %v", at, err), nil, ""
	}
	return why, tree, at
}

// headAllowed reports whether a HEAD in the directory parent (resolved
// as the kernel will, parentOf) lies in a frozen git directory or in its
// logs/: git's own HEAD and reflog, in a repository whose control surface
// is frozen.
func (c *createGate) headAllowed(parent *os.File) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	gitDirs := c.gitDirs
	c.mu.RUnlock()
	if len(gitDirs) == 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(int(parent.Fd()), &st) != nil {
		return false
	}
	if gitDirs[fileID{st.Dev, st.Ino}] {
		return true
	}
	// logs/ of a frozen git directory: its parent is one, and it is named
	// logs there (a directory, not a link to elsewhere).
	up, err := unix.Openat(int(parent.Fd()), "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(up)
	var ust, lst unix.Stat_t
	if unix.Fstat(up, &ust) != nil || !gitDirs[fileID{ust.Dev, ust.Ino}] {
		return false
	}
	return unix.Fstatat(up, "logs", &lst, unix.AT_SYMLINK_NOFOLLOW) == nil && lst.Dev == st.Dev && lst.Ino == st.Ino
}

// refuseCreate records a refused creation, keeping the newest.
func (g *execGateRun) refuseCreate(b CreateBlock) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.creates); n > 0 && g.creates[n-1] == b {
		return // the same process retrying (mkdir -p, a $PATH-like search)
	}
	g.creates = appendBounded(g.creates, &g.createBase, maxExecBlocks, b)
}

// createsSince returns the refused creations recorded after m.
func (g *execGateRun) createsSince(m gateMark) []CreateBlock {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := max(m.creates-g.createBase, 0); i < len(g.creates) {
		return append([]CreateBlock(nil), g.creates[i:]...)
	}
	return nil
}

// createGate returns the creation gate's state for a sandbox with this
// protection (nil: rootless, which freezes nothing, lets git write HEAD
// nowhere but directly in a .git directory), or nil when !want.
func (pr *protection) createGate(want bool) *createGate {
	if !want {
		return nil
	}
	c := &createGate{}
	c.protect(pr)
	return c
}

// protect gives c the trees and git directories of pr (nil: none).
func (c *createGate) protect(pr *protection) {
	if pr == nil {
		return
	}
	var trees []gateTree
	for _, t := range pr.trees() {
		trees = append(trees, gateTree{id: t.rootID, set: t.set, ws: t.ws, repos: t.repos, git: &protect.ConfigView{Host: hostTrustedView(t.ws, t.repos)}})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gitDirs, c.trees = pr.gitDirIDs, trees
}
