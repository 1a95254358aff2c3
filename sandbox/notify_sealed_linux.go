package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The mount plan's silent refusals (docs/landlock.md "The mount plan"):
// under the plan the workspace is mounted read-only except the mandate's
// write rules, and the kernel refuses a chmod, chown, utimes, setxattr,
// unlink, rmdir, truncate or open for writing there with EROFS before
// Landlock looks, so no audit record names the path. In a sandbox with the
// plan (and only there) the gate's filter also notifies these calls
// (sealedCalls); the gate reads the path, records it in
// Result.PathsRefused with the blocker "mount.read_only" when it lies in
// the sealed part of the workspace (Config.sealedAt), and lets the call go
// on: the kernel refuses it itself. The path is read from the caller's
// memory and resolved through /proc, so the record is what the caller
// asked for (best-effort, attacker-controlled); the refusal is the
// kernel's. The descriptor forms (fchmod, fchown, fsetxattr,
// fremovexattr; utimensat with a NULL path, which is futimens; the
// AT_EMPTY_PATH forms of fchownat, fchmodat2, utimensat, setxattrat and
// removexattrat) name the descriptor's own file: it is resolved through
// /proc/PID/fd/N, read while the call waits (keepSealed re-validates the
// notification afterwards). ftruncate is not notified: it needs a
// descriptor open for writing, which the sealed part never gives (the
// open fails, and is reported, first). Renames and links across a write
// tree's boundary cross a mount and fail with EXDEV; the creation gate,
// which performs them, reports their names in the sealed part
// (refuseSealed), a link's existing file included.

// sealedCall is one entry of sealedCalls. Argument numbers are -1 for
// none.
type sealedCall struct {
	name string // as libcontainer's filter names it
	op   string // as PathRefused.Op reports it
	// path is the argument number of the path (-1: a descriptor form,
	// which names dirfd's own file), dirfd that of the directory it is
	// relative to (-1: the working directory).
	path, dirfd int
	// flags is the argument number of open's flags (notified only for
	// writing, sealedOpenWrites) or of unlinkat's (AT_REMOVEDIR: rmdir).
	flags int
	// emptyPath is the argument number of the AT_ flags whose
	// AT_EMPTY_PATH makes an empty path name dirfd's own file.
	emptyPath int
}

// sealedCalls are the system calls the mount plan refuses unreported,
// keyed by number: the filters that notify them (the trampoline's,
// seccompexec.c sealed_nrs, and libcontainer's, sealedNotifies) and the
// gate that answers them (answerSealed) read it.
var sealedCalls = func() map[int32]sealedCall {
	m := map[int32]sealedCall{
		unix.SYS_FCHMODAT:      {name: "fchmodat", op: "chmod", path: 1, dirfd: 0, flags: -1, emptyPath: -1},
		unix.SYS_FCHMODAT2:     {name: "fchmodat2", op: "chmod", path: 1, dirfd: 0, flags: -1, emptyPath: 3},
		unix.SYS_FCHOWNAT:      {name: "fchownat", op: "chown", path: 1, dirfd: 0, flags: -1, emptyPath: 4},
		unix.SYS_UTIMENSAT:     {name: "utimensat", op: "utimes", path: 1, dirfd: 0, flags: -1, emptyPath: 3},
		unix.SYS_SETXATTRAT:    {name: "setxattrat", op: "setxattr", path: 1, dirfd: 0, flags: -1, emptyPath: 2},
		unix.SYS_REMOVEXATTRAT: {name: "removexattrat", op: "setxattr", path: 1, dirfd: 0, flags: -1, emptyPath: 2},
		unix.SYS_FCHMOD:        {name: "fchmod", op: "chmod", path: -1, dirfd: 0, flags: -1, emptyPath: -1},
		unix.SYS_FCHOWN:        {name: "fchown", op: "chown", path: -1, dirfd: 0, flags: -1, emptyPath: -1},
		unix.SYS_FSETXATTR:     {name: "fsetxattr", op: "setxattr", path: -1, dirfd: 0, flags: -1, emptyPath: -1},
		unix.SYS_FREMOVEXATTR:  {name: "fremovexattr", op: "setxattr", path: -1, dirfd: 0, flags: -1, emptyPath: -1},
		unix.SYS_SETXATTR:      {name: "setxattr", op: "setxattr", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
		unix.SYS_LSETXATTR:     {name: "lsetxattr", op: "setxattr", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
		unix.SYS_REMOVEXATTR:   {name: "removexattr", op: "setxattr", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
		unix.SYS_LREMOVEXATTR:  {name: "lremovexattr", op: "setxattr", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
		unix.SYS_UNLINKAT:      {name: "unlinkat", op: "unlink", path: 1, dirfd: 0, flags: 2, emptyPath: -1},
		unix.SYS_TRUNCATE:      {name: "truncate", op: "truncate", path: 0, dirfd: -1, flags: -1, emptyPath: -1},
		unix.SYS_OPENAT:        {name: "openat", op: "open-write", path: 1, dirfd: 0, flags: 2, emptyPath: -1},
	}
	for nr, c := range legacySealedCalls {
		m[nr] = c
	}
	return m
}()

// sealedOpenWrites are the bits of open's flags that make it write: an
// access mode other than O_RDONLY, or O_TRUNC. The filters notify an open
// only with one of them.
const sealedOpenWrites = unix.O_ACCMODE | unix.O_TRUNC

// sealedFor returns the entry of sealedCalls for the notification n, or
// false when n is not one (an open that only reads).
func sealedFor(n *seccompNotif) (sealedCall, bool) {
	c, ok := sealedCalls[n.nr]
	if ok && c.op == "open-write" && n.args[c.flags]&sealedOpenWrites == 0 {
		return sealedCall{}, false
	}
	return c, ok
}

// answerSealed records the call n (of sealedCalls) when the path it names
// lies in the sealed part of the workspace, and lets the kernel go on
// (which refuses it with EROFS there). answer is false for a call that
// another part of the gate answers (an observed open): it is only
// recorded here.
func (g *execGateRun) answerSealed(fd int, n *seccompNotif, call sealedCall, answer bool) {
	g.recordSealed(fd, n, call)
	if answer {
		resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		g.respond(fd, &resp)
	}
}

// recordSealed is answerSealed's record.
func (g *execGateRun) recordSealed(fd int, n *seccompNotif, call sealedCall) {
	defer func() { _ = recover() }() // hostile data: a bug loses a record, never the gate
	dirfd := int32(unix.AT_FDCWD)
	if call.dirfd >= 0 {
		dirfd = int32(n.args[call.dirfd])
	}
	// name "." is dirfd's own file: a descriptor form (fchmod, futimens,
	// an empty path with AT_EMPTY_PATH).
	name := "."
	switch {
	case call.path < 0:
		if dirfd < 0 {
			return // fchmod(-1): EBADF
		}
	case n.args[call.path] == 0 && call.op == "utimes" && call.dirfd >= 0:
		// utimensat(fd, NULL, …) (futimens) or futimesat(fd, NULL, …).
		if dirfd == unix.AT_FDCWD {
			return // EFAULT
		}
	default:
		r := memReader{pid: int(n.pid)}
		s, err := r.cstring(n.args[call.path], unix.PathMax)
		if err != nil {
			return // the kernel fails it (EFAULT) without touching anything
		}
		if s == "" && (call.emptyPath < 0 || n.args[call.emptyPath]&unix.AT_EMPTY_PATH == 0) {
			return // ENOENT
		}
		if s != "" {
			name = s
		}
	}
	op := call.op
	if n.nr == unix.SYS_UNLINKAT && n.args[call.flags]&unix.AT_REMOVEDIR != 0 {
		op = "rmdir"
	}
	raw, err := resolveName(int(n.pid), dirfd, name)
	if err != nil {
		return
	}
	if p := filepath.Clean(raw); g.sealed(p) {
		g.keepSealed(fd, n, []PathRefused{{Path: p, Op: op, Blockers: []string{"mount.read_only"}}})
	}
}
