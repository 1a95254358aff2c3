package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
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
// entry waits in the kernel until the gate has read the names from the
// caller's memory. A name whose last element is refused (refusedName, in
// any letter case: a case-folding directory finds .GIT as .git) fails
// with EPERM and is recorded; anything else continues. The same goes for a symlink's
// target: open(O_CREAT) follows a final symlink and creates what it names,
// so no symlink may point at such a name (and the walk at start refuses a
// workspace holding one). The decision therefore depends on the strings
// alone, never on the file system, which another process could change
// between the check and the call: what the kernel creates is named by the
// string it reads. What it cannot see: a thread or process that rewrites
// the string in the caller's memory between the gate's read and the
// kernel's own (the exec gate's argv race); see the Limits in
// docs/workspace.md.

// createFlags are the bits of open's flags that can create a file.
// O_TMPFILE includes O_DIRECTORY, so its own bit is tested.
const createFlags = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// CreateBlock is one creation the gate refused: a process of the sandbox
// tried to name a directory entry .git (or HEAD outside a .git directory). Every field but Op comes from the
// sandboxed process and is hostile data.
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
	// gitDirs are the identities of the git directories frozen in the
	// workspace (planProtection): git may write HEAD (and logs/HEAD) in
	// them, nowhere else.
	gitDirs map[fileID]bool
}

// fileID is a file's identity: st_dev and st_ino (the same through the
// sandbox's idmapped mount as on the host).
type fileID struct{ dev, ino uint64 }

// createCall says where a creating system call's strings are.
type createCall struct {
	op string
	// names are the argument numbers of the paths it creates or replaces
	// (both of a rename: RENAME_EXCHANGE gives the old name the new one's
	// entry), and dirfds those of the directories each is relative to (-1:
	// the working directory).
	names, dirfds []int
	// target is the argument number of a symlink's target, or -1.
	target int
}

// createCallFor returns where the strings of system call nr are, or false
// when it is not one the gate answers.
func createCallFor(nr int32) (createCall, bool) {
	switch nr {
	case unix.SYS_MKDIRAT:
		return createCall{"mkdir", []int{1}, []int{0}, -1}, true
	case unix.SYS_MKNODAT:
		return createCall{"mknod", []int{1}, []int{0}, -1}, true
	case unix.SYS_SYMLINKAT:
		return createCall{"symlink", []int{2}, []int{1}, 0}, true
	case unix.SYS_LINKAT:
		return createCall{"link", []int{3}, []int{2}, -1}, true
	case unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		return createCall{"rename", []int{1, 3}, []int{0, 2}, -1}, true
	case unix.SYS_OPENAT:
		return createCall{"open", []int{1}, []int{0}, -1}, true
	}
	return legacyCreateCall(nr)
}

// answerCreate decides one creating system call: EPERM for a .git, else
// the kernel goes on. The strings are read from the caller's memory and
// the notification is re-validated after the reads, so they are the
// waiting caller's and not those of a process that reused its pid.
//
// With passOn (an observed call, which answerObserved records), a call
// the gate lets through is not answered here: answerCreate reports
// whether it answered.
func (g *execGateRun) answerCreate(fd int, n *seccompNotif, call createCall, passOn bool) bool {
	resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	r := memReader{pid: int(n.pid)}
	var block *CreateBlock
	check := func(arg, dirfd int, what string) bool {
		s, err := r.cstring(n.args[arg], unix.PathMax)
		if err != nil {
			// The kernel would fail the call too: say how, rather than
			// let it read what the gate could not.
			resp.flags, resp.error = 0, -int32(unix.EFAULT)
			if strings.HasPrefix(err.Error(), "longer than") {
				resp.error = -int32(unix.ENAMETOOLONG)
			}
			return false
		}
		name := refusedName(s)
		if name == "HEAD" && dirfd != -2 {
			allowed, errno := g.create.headAllowed(int(n.pid), dirfd, n, s)
			if errno != 0 {
				// The directory it would be in does not exist (git makes
				// logs/ when that fails): the kernel's own answer, which
				// creates nothing.
				resp.flags, resp.error = 0, -int32(errno)
				return false
			}
			if allowed {
				name = ""
			}
		}
		if name != "" {
			block = &CreateBlock{Op: call.op, Pid: int(n.pid), Path: s,
				Reason: fmt.Sprintf("%s %s is refused: it would make a repository whose config and hooks the host's git runs", what, name)}
			resp.flags, resp.error = 0, -int32(unix.EPERM)
			return false
		}
		return true
	}
	ok := true
	for i, a := range call.names {
		if ok = check(a, call.dirfds[i], "naming an entry"); !ok {
			break
		}
	}
	if ok && call.target >= 0 {
		// A target is followed from wherever the link is: only the
		// string can say where that is.
		check(call.target, -2, "a symlink to")
	}
	if !idValid(fd, n.id) {
		return true // the caller is gone; the bytes may be another process's
	}
	if block != nil {
		g.refuseCreate(*block)
	}
	if passOn && resp.flags == unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE {
		return false
	}
	_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	return true
}

// creating reports whether n can create a name: every creating system
// call but open and openat without O_CREAT, which an observed sandbox's
// filter notifies too.
func creating(n *seccompNotif) bool {
	switch n.nr {
	case unix.SYS_OPENAT:
		return n.args[2]&unix.O_CREAT != 0
	}
	return legacyCreating(n)
}

// headAllowed reports whether the HEAD at p (relative to the caller's
// descriptor dirfd, argument number dirfdArg of n; -1 for the working
// directory) lies in a frozen git directory or in its logs/: git's own
// HEAD and reflog, in a repository whose control surface is frozen. The
// parent is resolved as the kernel will, inside the caller's root; the
// caller re-validates n afterwards. Another process can swap a directory
// on the way between this walk and the kernel's (docs/workspace.md).
//
// errno is ENOENT or ENOTDIR when the parent does not exist: the call
// cannot create anything and fails with it.
func (c *createGate) headAllowed(pid, dirfdArg int, n *seccompNotif, p string) (allowed bool, errno unix.Errno) {
	if c == nil || len(c.gitDirs) == 0 {
		return false, 0
	}
	dirfd := int32(unix.AT_FDCWD)
	if dirfdArg >= 0 {
		dirfd = int32(n.args[dirfdArg])
	}
	parent := strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(parent, '/'); i >= 0 {
		parent = parent[:i+1]
	} else {
		parent = "."
	}
	_, f, err := resolveExec(pid, dirfd, parent, false)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, err.(unix.Errno)
	}
	if err != nil || f == nil {
		return false, 0
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false, 0
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false, unix.ENOTDIR
	}
	if c.gitDirs[fileID{st.Dev, st.Ino}] {
		return true, 0
	}
	// logs/ of a frozen git directory: its parent is one, and it is named
	// logs there (a directory, not a link to elsewhere).
	up, err := unix.Openat(int(f.Fd()), "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, 0
	}
	defer unix.Close(up)
	var ust, lst unix.Stat_t
	if unix.Fstat(up, &ust) != nil || !c.gitDirs[fileID{ust.Dev, ust.Ino}] {
		return false, 0
	}
	return unix.Fstatat(up, "logs", &lst, unix.AT_SYMLINK_NOFOLLOW) == nil && lst.Dev == st.Dev && lst.Ino == st.Ino, 0
}

// refuseCreate records a refused creation, keeping the newest.
func (g *execGateRun) refuseCreate(b CreateBlock) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.creates); n > 0 && g.creates[n-1] == b {
		return // the same process retrying (mkdir -p, a $PATH-like search)
	}
	if len(g.creates) == 2*maxExecBlocks {
		g.creates = append(g.creates[:0], g.creates[maxExecBlocks:]...)
		g.createBase += maxExecBlocks
	}
	g.creates = append(g.creates, b)
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
	if pr != nil {
		c.gitDirs = pr.gitDirIDs
	}
	return c
}
