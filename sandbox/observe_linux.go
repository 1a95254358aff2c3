package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The host half of runtime observation (see execgate.go): the exec gate's
// listener also receives open, openat, creat and connect when the sandbox
// is observed, and answerObserved records each and lets it go on.

// observedCall reports whether nr is one of the system calls observation
// adds to the exec gate's filter.
func observedCall(nr int32) bool {
	switch nr {
	case unix.SYS_OPEN, unix.SYS_OPENAT, unix.SYS_CREAT, unix.SYS_CONNECT:
		return true
	}
	return false
}

// observedSyscalls are their names, as libcontainer's filter rules name them.
var observedSyscalls = []string{"open", "openat", "creat", "connect"}

// errNotRecorded: the call is of a kind observation leaves out (a
// directory walk, a connection that is not IP): nothing is recorded and
// nothing is lost.
var errNotRecorded = errors.New("not recorded")

// answerObserved records one observed call and lets the kernel carry it
// on, whatever happened while reading it: observation never refuses. What
// could not be read is counted lost.
func (g *execGateRun) answerObserved(fd int, n *seccompNotif) {
	resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	g.recordObserved(fd, n)
	g.respond(fd, &resp)
}

// recordObserved records what the observed call n asks for, without
// answering it (the creation gate performs a creating open itself).
func (g *execGateRun) recordObserved(fd int, n *seccompNotif) {
	a, err := g.safeReadAccess(fd, n)
	switch {
	case err == nil:
		g.record(a)
	case errors.Is(err, errGone), errors.Is(err, errNotRecorded):
	default:
		g.mu.Lock()
		g.accLost++
		g.mu.Unlock()
	}
}

// safeReadAccess is readAccess, turning a panic (a bug reading hostile
// data) into a lost observation rather than the end of tether.
func (g *execGateRun) safeReadAccess(fd int, n *seccompNotif) (a Access, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reading an observed call: %v", p)
		}
	}()
	return g.readAccess(fd, n)
}

// readAccess reads what an observed call asks for from the caller's
// memory and /proc, then re-validates the notification (so the bytes and
// the working directory were the waiting caller's, not those of a process
// that reused its pid).
func (g *execGateRun) readAccess(fd int, n *seccompNotif) (Access, error) {
	a := Access{Pid: int(n.pid), Count: 1}
	var err error
	var raw string // a file's name joined to its directory, not cleaned
	var creates bool
	switch n.nr {
	case unix.SYS_CONNECT:
		a.Kind = AccessConnect
		a.Target, err = readSockaddr(int(n.pid), n.args[1], n.args[2])
	case unix.SYS_OPEN, unix.SYS_OPENAT, unix.SYS_CREAT:
		dirfd, ptr, flags := int32(unix.AT_FDCWD), n.args[0], n.args[1]
		switch n.nr {
		case unix.SYS_OPENAT:
			dirfd, ptr, flags = int32(n.args[0]), n.args[1], n.args[2]
		case unix.SYS_CREAT:
			flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
		}
		if flags&(unix.O_PATH|unix.O_DIRECTORY) != 0 {
			// A directory walk or a handle: no file's content is read or
			// written through it.
			return a, errNotRecorded
		}
		a.Kind, creates = AccessRead, flags&unix.O_CREAT != 0
		if flags&unix.O_ACCMODE != unix.O_RDONLY || flags&(unix.O_CREAT|unix.O_TRUNC) != 0 {
			a.Kind = AccessWrite
		}
		r := memReader{pid: a.Pid}
		var name string
		if name, err = r.cstring(ptr, maxObservedPath); err == nil {
			raw, err = resolveName(a.Pid, dirfd, name)
			a.Target = path.Clean(raw)
		}
	default:
		return a, fmt.Errorf("observation: unexpected system call %d", n.nr)
	}
	if err != nil {
		if !idValid(fd, n.id) {
			return a, errGone
		}
		return a, err
	}
	recorded := true
	if a.Kind != AccessConnect {
		a.Target, recorded = g.place(a.Pid, raw)
		if recorded {
			identify(&a, creates)
		}
	}
	// After every read of the caller's memory and /proc entries.
	if !idValid(fd, n.id) {
		return a, errGone
	}
	if !recorded {
		return a, errNotRecorded
	}
	return a, nil
}

// place returns the path under which an access of process pid to raw (as
// resolveName makes it) is recorded, and whether it is recorded: only in
// the directories the sandbox shares with the host.
func (g *execGateRun) place(pid int, raw string) (string, bool) {
	if p := path.Clean(raw); g.shares(p) {
		return p, true
	}
	// A name in the sandbox's own writable places (or one of its /proc
	// links) may lead into the workspace through a symlink the sandbox
	// planted there: "ln -s $WS/secret /tmp/x; cat /tmp/x" reads the
	// workspace's file.
	real, ok := realName(pid, raw)
	if !ok {
		return "", false
	}
	real = path.Clean(real)
	return real, g.shares(real)
}

// scratchDirs are the sandbox's own writable places outside the host's
// files (and /proc, whose links lead anywhere): only there can a process
// plant a symlink that leads into the workspace. The rest of the sandbox's
// tree is read-only.
var scratchDirs = []string{"/tmp", "/dev", "/proc"}

// realName resolves name (absolute, inside the caller's root, not
// cleaned), when it lies in a scratch directory or climbs with "..",
// through its symlinks and the caller's /proc links, to the path of the
// file it leads to inside the sandbox; a file about to be created is its
// resolved directory's. It reports false for a name elsewhere or one that
// does not resolve.
func realName(pid int, name string) (string, bool) {
	scratch := strings.Contains(name, "/..")
	for _, d := range scratchDirs {
		for _, n := range []string{name, path.Clean(name)} {
			scratch = scratch || n == d || strings.HasPrefix(n, d+"/")
		}
	}
	if !scratch {
		return "", false
	}
	proc := "/proc/" + strconv.Itoa(pid)
	// The caller's own /proc links ("self" is the caller, which a walk
	// from this process cannot follow): /proc/self/fd/N, /dev/fd/N,
	// /proc/self/cwd, /proc/self/root, and what lies below them.
	if m := procLinkRE().FindStringSubmatch(path.Clean(name)); m != nil {
		link := m[2]
		if link == "" {
			link = "fd/" + m[1]
		}
		base, err := os.Readlink(proc + "/" + link)
		if err != nil || !strings.HasPrefix(base, "/") {
			return "", false
		}
		return path.Join(base, m[3]), true
	}
	root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(root)
	at := func(p string) (string, error) {
		fd, err := walkInRoot(root, "", p, func(string) {})
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		// The kernel names the file as the sandbox sees it: its mounts
		// are not reachable from this process's root.
		return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	}
	if real, err := at(name); err == nil {
		return real, strings.HasPrefix(real, "/")
	}
	dir, err := at(path.Dir(name))
	if err != nil || !strings.HasPrefix(dir, "/") {
		return "", false
	}
	return path.Join(dir, path.Base(name)), true
}

// procLinkRE matches the caller's own /proc links: group 1 the descriptor
// of /dev/fd/N, group 2 the link under /proc/self ("fd/N", "cwd",
// "root"), group 3 the rest of the name.
var procLinkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/(?:dev/fd/([0-9]+)|proc/(?:self|thread-self)/(fd/[0-9]+|cwd|root))(/.*)?$`)
})

// resolveName makes the absolute name, inside the caller's root, of name
// as a call relative to dirfd of process pid names it: joined to the
// caller's working directory or the directory behind dirfd as the kernel
// shows them (/proc/PID/cwd, /proc/PID/fd/N), not cleaned (".." after a
// symlink is not the lexical parent). A descriptor that is not (or no
// longer) a directory, closed by another thread meanwhile, is an error.
func resolveName(pid int, dirfd int32, name string) (string, error) {
	if name == "" {
		return "", errors.New("an empty name")
	}
	if strings.HasPrefix(name, "/") {
		return name, nil
	}
	link := "/proc/" + strconv.Itoa(pid) + "/cwd"
	if dirfd != unix.AT_FDCWD {
		if dirfd < 0 {
			return "", fmt.Errorf("directory descriptor %d", dirfd)
		}
		link = "/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(int(dirfd))
	}
	base, err := os.Readlink(link)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", name, err)
	}
	if !strings.HasPrefix(base, "/") {
		// "pipe:[N]", "socket:[N]", an anonymous inode: not a directory.
		return "", fmt.Errorf("resolving %q: descriptor %d is %s", name, dirfd, base)
	}
	return base + "/" + name, nil
}

// readSockaddr reads the address of a connect(2) and writes it as
// "IP:port". Addresses of other families (unix sockets, netlink) are not
// recorded.
func readSockaddr(pid int, addr, size uint64) (string, error) {
	if addr == 0 || size < 2 {
		return "", errNotRecorded
	}
	var buf [unix.SizeofSockaddrInet6]byte
	n := min(int(min(size, uint64(len(buf)))), len(buf))
	r := memReader{pid: pid}
	got, err := r.readAt(buf[:n], addr)
	if err != nil {
		return "", fmt.Errorf("reading a connect's address: %w", err)
	}
	b := buf[:got]
	if len(b) < 2 {
		return "", errors.New("reading a connect's address: short")
	}
	port := func() uint16 { return binary.BigEndian.Uint16(b[2:4]) }
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4-8 {
			return "", errors.New("reading a connect's address: short")
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port()).String(), nil
	case unix.AF_INET6:
		if len(b) < 24 {
			return "", errors.New("reading a connect's address: short")
		}
		ip := netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		return netip.AddrPortFrom(ip, port()).String(), nil
	}
	return "", errNotRecorded
}

// shares reports whether p lies in one of the directories whose files the
// observation records.
func (g *execGateRun) shares(p string) bool {
	for _, d := range g.shared {
		if p == d || strings.HasPrefix(p, d+"/") || d == "/" {
			return true
		}
	}
	return false
}

// observeExec records, in an observed sandbox, an exec let through: its
// parent (for the tree) and its file as an access (so a script run by
// its path is evidence as much as one an interpreter opens). Called
// before the exec is answered, while the caller's working directory is
// still the one it named the file from.
func (g *execGateRun) observeExec(n *seccompNotif, ev *ExecEvent) {
	defer func() {
		if p := recover(); p != nil { // a bug reading hostile data: lost, not the end of tether
			g.mu.Lock()
			g.accLost++
			g.mu.Unlock()
		}
	}()
	ev.PPid = parentPid(ev.Pid)
	dirfd := int32(unix.AT_FDCWD)
	if n.nr == unix.SYS_EXECVEAT {
		dirfd = int32(n.args[0])
	}
	name := ev.Path
	if name == "" { // fexecve: the file behind the descriptor
		if t, err := os.Readlink("/proc/" + strconv.Itoa(ev.Pid) + "/fd/" + strconv.Itoa(int(dirfd))); err == nil {
			name = t
		}
	}
	raw, err := resolveName(ev.Pid, dirfd, name)
	if err != nil {
		g.mu.Lock()
		g.accLost++
		g.mu.Unlock()
		return
	}
	if target, ok := g.place(ev.Pid, raw); ok {
		a := Access{Kind: AccessExec, Target: target, Pid: ev.Pid, Count: 1}
		identify(&a, false)
		g.record(a)
	}
}

// identify fills in what file a's target (a path inside the sandbox of
// process a.Pid) is before the call goes on: its device, inode and
// number of links, or Missing when no file has the name and the call
// does not create one. A name that cannot be looked up (a directory
// without search permission for tether, a /proc link) is left
// unidentified: neither missing nor one file.
func identify(a *Access, creates bool) {
	root, err := unix.Open("/proc/"+strconv.Itoa(a.Pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(root)
	fd, err := walkInRoot(root, "", a.Target, func(string) {})
	if err != nil {
		a.Missing = !creates && errors.Is(err, unix.ENOENT)
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	a.Dev, a.Ino = st.Dev, st.Ino
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		a.Links = st.Nlink
	}
}

// observeNames records, in an observed sandbox, the names of a link or
// rename the creation gate let through (names and from as it read them,
// relative to the call's directory descriptors): a link's existing name
// is read through its new one, so it is a read of the file it names; a
// rename writes both its names. Without this "ln secret/key ok/x; cat
// ok/x" would be evidence of ok/x only. fd and n are the notification,
// re-validated after the caller's /proc entries were read.
func (g *execGateRun) observeNames(fd int, n *seccompNotif, call createCall, names []string, from string) {
	pid := int(n.pid)
	var accs []Access
	add := func(kind AccessKind, dirfdArg int, s string) {
		if s == "" {
			return
		}
		dirfd := int32(unix.AT_FDCWD) // link(2), rename(2): no descriptor
		if dirfdArg >= 0 {
			dirfd = int32(n.args[dirfdArg])
		}
		raw, err := resolveName(pid, dirfd, s)
		if err != nil {
			g.mu.Lock()
			g.accLost++
			g.mu.Unlock()
			return
		}
		if target, ok := g.place(pid, raw); ok {
			a := Access{Kind: kind, Target: target, Pid: pid, Count: 1}
			identify(&a, kind == AccessWrite) // a rename's new name need not exist
			accs = append(accs, a)
		}
	}
	switch call.kind {
	case seccompexec.CreateLink:
		add(AccessRead, call.fromDir, from)
	case seccompexec.CreateRename:
		for i, s := range names {
			add(AccessWrite, call.dirfds[i], s)
		}
	}
	if !idValid(fd, n.id) {
		return // the bytes and links may be another process's
	}
	for _, a := range accs {
		g.record(a)
	}
}

// parentPid reads the parent's pid from /proc/PID/stat (0 when gone).
func parentPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// "pid (comm) state ppid …": comm may hold anything, ")" included.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

type accessKey struct {
	kind   AccessKind
	target string
}

// record adds a, folding it into the same access recorded since the
// latest mark. Past maxAccesses entries or maxAccessBytes of targets, the
// older half is dropped and counted lost.
func (g *execGateRun) record(a Access) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := accessKey{a.Kind, a.Target}
	if i, ok := g.accIndex[k]; ok && i >= g.accFloor {
		g.accs[i-g.accBase].Count++
		return
	}
	if len(g.accs) == 2*maxAccesses || g.accBytes+len(a.Target) > 2*maxAccessBytes {
		half := max(len(g.accs)/2, 1)
		// Only what was recorded since the latest mark is this command's
		// loss; older entries were another command's, already reported.
		g.accLost += max(g.accBase+half-max(g.accFloor, g.accBase), 0)
		for _, d := range g.accs[:half] {
			g.accBytes -= len(d.Target)
			if i, ok := g.accIndex[accessKey{d.Kind, d.Target}]; ok && i < g.accBase+half {
				delete(g.accIndex, accessKey{d.Kind, d.Target})
			}
		}
		g.accs = append(g.accs[:0], g.accs[half:]...)
		g.accBase += half
	}
	if g.accIndex == nil {
		g.accIndex = map[accessKey]int{}
	}
	g.accIndex[k] = g.accBase + len(g.accs)
	g.accs = append(g.accs, a)
	g.accBytes += len(a.Target)
}

// accessesSince returns the accesses recorded after m, how many
// observations after m were lost (unreadable, or dropped over the bounds),
// and how many notifications of observed calls came after m.
func (g *execGateRun) accessesSince(m gateMark) (accs []Access, lost, notified int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := max(m.accs-g.accBase, 0); i < len(g.accs) {
		accs = append(accs, g.accs[i:]...)
	}
	return accs, g.accLost - m.lost, g.observed - m.observed
}
