package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The host half of the exec gate (see execgate.go): a goroutine per
// sandbox that receives the seccomp listener, then answers every exec
// notification. The filter half is either the trampoline's own (package
// seccompexec, one-shot sandboxes) or libcontainer's notify action with a
// listener socket (sessions, and one-shot sandboxes the trampoline cannot
// start).

// seccompNotif is struct seccomp_notif.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Bounds of what the gate reads from a caller's memory, the kernel's
// own: an exec beyond them is refused (ErrExecUnchecked), as the kernel
// would refuse most of them (E2BIG). Each argv string is at most
// MAX_ARG_STRLEN (32 pages), and the strings with their pointers at most
// the default ARG_MAX, a quarter of the 8 MiB stack (a process that
// raised its stack limit may pass more: refused here). A long linker
// line is read and checked whole (before session 13 an argv over
// 128 KiB in all was refused).
const (
	maxExecPath   = unix.PathMax
	maxExecString = 32 * 4096
	maxExecBytes  = 2 << 20
	// keptArgvBytes is how much of an argv the gate's records keep
	// (Result.Execs, ExecBlocked): the check reads it whole, a record
	// holds its first arguments (clipArgv).
	keptArgvBytes = 16 << 10
	// maxExecEvents is half the most execs a gate keeps, for observation.
	maxExecEvents = 4096
	// maxScriptDepth is how many scripts the kernel rewrites before it
	// runs a binary (exec_binprm: depth > 5 is ELOOP, so five scripts,
	// then the sixth file must be a binary).
	maxScriptDepth = 5
)

// execGateRun is the gate of one sandbox. serve's goroutine owns the
// listener; the fields under mu are read by the sandbox when it reports.
type execGateRun struct {
	check   ExecGate
	create  *createGate // nil: no creation gate
	profile string
	// observe: the filter notifies the observed calls too (Config.Observe);
	// shared are the directories inside the sandbox whose files are
	// recorded (the workspace's mount point and the binds').
	observe bool
	shared  []string
	// sealed reports whether a path inside the sandbox is where the mount
	// plan keeps the workspace read-only (Config.sealedAt); nil without
	// the plan.
	sealed  func(string) bool
	stop    int // an eventfd: written to end serve
	serving sync.WaitGroup
	closed  sync.Once
	// performs: the creation gate has a helper perform the calls it lets
	// through (creator_linux.go); creator is that helper once its listener
	// arrived (nil before, or when it never does: every creation is then
	// refused). Without performs the kernel goes on (not_enforced says so).
	performs bool
	creator  atomic.Pointer[creator]
	// creatorSet is closed once a supervisor's helper has arrived, or
	// never will (takeCreator); nil when it comes with the listener.
	creatorSet chan struct{}
	// pending are notifications received while the helper was performing
	// a call (serve's goroutine only): answered next.
	pending []seccompNotif
	// replays are the last call the helper performed for each thread,
	// for a restart of it (serve's goroutine only; see createReplay).
	replays map[uint32]*createReplay
	// boundSockets are the socket files the helper bound for the sandbox
	// (serve's goroutine only): the only ones a pathname connect may
	// reach (notify_socket_linux.go).
	boundSockets map[socketID]bool
	// createChild is the supervisor's end of the creation gate's socket
	// (a supervised sandbox's), until the supervisor has it.
	createChild *os.File

	mu   sync.Mutex
	sock *os.File      // where the listener comes from (trampoline), until received
	ln   *gateListener // or libcontainer's socket, until received
	// The newest blocks and execs; blockBase and execBase count those
	// dropped from the front.
	blocks              []ExecBlock
	blockPids           []int // the caller of each block
	execs               []ExecEvent
	blockBase, execBase int
	// creates are the newest refused creations (the creation gate);
	// createBase counts those dropped from the front.
	creates    []CreateBlock
	createBase int
	// sealedRefused are the newest creations the mount plan's read-only
	// workspace refused (EROFS, mountplan_linux.go); sealedBase counts
	// those dropped from the front.
	sealedRefused []PathRefused
	sealedBase    int
	err           error
	// busy is the time spent answering notifications up to sending the
	// answer, handled how many (for BenchmarkExecGate: the gate's own
	// share of an exec's cost);
	// observed counts the notifications of observed calls among them
	// (Result.observedNotifications).
	busy     time.Duration
	handled  int
	observed int
	// started is when answer received the notification it is on,
	// accounted whether that one is counted in busy yet (serve's
	// goroutine only; see respond).
	started   time.Time
	accounted bool
	// reader reads the callers' memory (serve's goroutine only).
	reader memReader
	// root is the sandbox's root directory, opened once from the first
	// exec's caller (serve's goroutine only; -1 until then, and always
	// without fixedRoot). fixedRoot: the sandbox has its seccomp filter
	// and no CAP_SYS_CHROOT, so no process of it can have another root
	// (Config.denyFilter); without it every exec opens its caller's
	// /proc/PID/root, the largest part of the gate's work on an exec (the
	// kernel builds a new pid's /proc entries on that first look-up).
	root      int
	fixedRoot bool
	// tid is the thread serve answers on (it is locked to it), for
	// benchmarks that read its CPU time.
	tid int
	// The accesses of an observed sandbox (observe_linux.go): accBase
	// counts those dropped from the front, accIndex finds the one to fold
	// a repeat into (at or after accFloor, the latest mark), accBytes is
	// the size of their targets, accLost counts observations lost.
	accs                                 []Access
	accIndex                             map[accessKey]int
	accBase, accFloor, accBytes, accLost int
	// allowed are the execs the check allowed during the current command
	// (decide), allowedBytes the size of their keys.
	allowed      map[string]struct{}
	allowedBytes int
	// keyBuf is where decide builds a key (serve's goroutine only).
	keyBuf []byte
}

// newExecGate returns a gate for check (nil when only the creation gate
// is wanted: an exec notification is then refused, as it cannot have
// been asked for) in a sandbox with config cfg (observed when
// cfg.Observe); start it with serve (or serveFrom), end it with close.
func newExecGate(profile string, check ExecGate, cfg Config) (*execGateRun, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating the exec gate: %w", err)
	}
	g := &execGateRun{check: check, profile: profile, stop: efd, root: -1, fixedRoot: cfg.denyFilter()}
	if cfg.Observe {
		g.observe, g.shared = true, cfg.sharedDirs()
	}
	if cfg.mountPlanned() {
		g.sealed = cfg.sealedAt
	}
	return g, nil
}

// takeCreator receives a supervisor's helper (its pidfd) on sock, which
// the helper then serves.
func (g *execGateRun) takeCreator(sock *os.File) {
	g.mu.Lock()
	g.sock = sock
	g.mu.Unlock()
	g.creatorSet = make(chan struct{})
	g.serving.Add(1)
	go func() {
		defer g.serving.Done()
		defer close(g.creatorSet)
		fds, err := recvFDs(sock, 1)
		var dup int
		if err == nil {
			if dup, err = unix.FcntlInt(sock.Fd(), unix.F_DUPFD_CLOEXEC, 0); err != nil {
				_ = unix.Close(fds[0])
			}
		}
		g.mu.Lock()
		_ = sock.Close()
		if g.sock == sock {
			g.sock = nil
		}
		g.mu.Unlock()
		if err != nil {
			return // every creation is refused
		}
		if c, err := newCreator(dup, fds[0]); err == nil {
			g.creator.Store(c)
		}
	}()
}

// serveFrom receives the listener on sock (SCM_RIGHTS, as the trampoline
// or a session's supervisor sends it), and serves it. With the creation
// helper's pidfd beside the listener, the helper serves sock: it becomes
// the gate's creator; else sock is closed. A sandbox whose trampoline
// never sends it (it failed first) ends serve at once.
func (g *execGateRun) serveFrom(sock *os.File) {
	g.mu.Lock()
	g.sock = sock
	g.mu.Unlock()
	g.serving.Add(1)
	go func() {
		defer g.serving.Done()
		fds, err := recvFDs(sock, 2)
		if err == nil && len(fds) == 2 {
			var dup int
			if dup, err = unix.FcntlInt(sock.Fd(), unix.F_DUPFD_CLOEXEC, 0); err != nil {
				_ = unix.Close(fds[1])
			} else if c, cerr := newCreator(dup, fds[1]); cerr != nil {
				err = cerr
			} else {
				g.creator.Store(c) // closed by shut
			}
			if err != nil {
				_ = unix.Close(fds[0])
			}
		}
		g.mu.Lock()
		_ = sock.Close()
		if g.sock == sock {
			g.sock = nil
		}
		g.mu.Unlock()
		if err != nil {
			g.fail(err)
			return
		}
		g.serve(fds[0])
	}()
}

// close ends the gate and waits for its goroutine; it is idempotent. Pending notifications
// fail (the kernel answers ENOSYS when the listener closes), so nothing
// executes unchecked after it. Call it once the sandbox's processes are
// gone, or to tear the sandbox down.
func (g *execGateRun) close() { g.closed.Do(g.shut) }

func (g *execGateRun) shut() {
	if c := g.creator.Load(); c != nil {
		defer c.close()
	}
	g.mu.Lock()
	if g.sock != nil {
		// Wakes a receive that would wait for a sandbox never started.
		_ = unix.Shutdown(int(g.sock.Fd()), unix.SHUT_RDWR)
	}
	if g.ln != nil {
		g.ln.close()
	}
	if g.createChild != nil {
		_ = g.createChild.Close()
	}
	g.mu.Unlock()
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(g.stop, one[:])
	g.serving.Wait()
	_ = unix.Close(g.stop)
	if g.root >= 0 {
		_ = unix.Close(g.root)
	}
	for _, r := range g.replays {
		r.close()
	}
}

// closeCreateChild closes this process's copy of the supervisor's end of
// the creation gate's socket, once the supervisor holds it.
func (g *execGateRun) closeCreateChild() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.createChild != nil {
		_ = g.createChild.Close()
		g.createChild = nil
	}
}

func (g *execGateRun) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
	}
}

// report returns the blocked execs and what was executed (the newest of
// each), and how many execs are no longer kept.
func (g *execGateRun) report() (blocks []ExecBlock, execs []ExecEvent, dropped int) {
	return g.since(gateMark{})
}

// gateMark is a point in a gate's record (a session's, which outlives
// its commands): the totals so far.
type gateMark struct{ blocks, execs, accs, lost, observed, creates, sealed int }

// mark returns the current end of the record; accesses recorded from now
// on are not folded into earlier ones.
func (g *execGateRun) mark() gateMark {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.accFloor = g.accBase + len(g.accs)
	clear(g.allowed)
	g.allowedBytes = 0
	return gateMark{g.blockBase + len(g.blocks), g.execBase + len(g.execs), g.accFloor, g.accLost, g.observed, g.createBase + len(g.creates), g.sealedBase + len(g.sealedRefused)}
}

// since returns what was recorded after m, and how many execs after m are
// no longer kept. The record keeps the newest entries, so a command's
// blocks are never all lost, however long its session has run.
func (g *execGateRun) since(m gateMark) (blocks []ExecBlock, execs []ExecEvent, dropped int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := max(m.blocks-g.blockBase, 0); i < len(g.blocks) {
		blocks = append(blocks, g.blocks[i:]...)
	}
	i := m.execs - g.execBase
	if i < 0 {
		dropped, i = -i, 0
	}
	if i < len(g.execs) {
		execs = append(execs, g.execs[i:]...)
	}
	return blocks, execs, dropped
}

// recvFDs receives up to max descriptors (at least one) from sock.
func recvFDs(sock *os.File, max int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("receiving the exec gate's listener: %w", err)
	}
	if n == 0 && oobn == 0 {
		return nil, errors.New("receiving the exec gate's listener: the sandbox sent none")
	}
	return parseRightsN(oob[:oobn], max)
}

// parseRights returns the one descriptor of an SCM_RIGHTS message, closing
// any others.
func parseRights(oob []byte) (int, error) {
	fds, err := parseRightsN(oob, 1)
	if err != nil {
		return -1, err
	}
	return fds[0], nil
}

// parseRightsN returns the first max descriptors (at least one) of an
// SCM_RIGHTS message, closing any others.
func parseRightsN(oob []byte, max int) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("receiving the exec gate's listener: %w", err)
	}
	var out []int
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, f := range fds {
			if len(out) < max {
				out = append(out, f)
			} else {
				_ = unix.Close(f)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("receiving the exec gate's listener: no descriptor in the message")
	}
	return out, nil
}

// serve answers notifications on the listener fd until every process of
// the filter is gone (POLLHUP) or close is called, then closes fd.
func (g *execGateRun) serve(fd int) {
	defer unix.Close(fd)
	// One thread answers every notification, and the kernel switches
	// between the caller and it on one CPU (kernel 6.6+; older kernels
	// refuse the flag and wake the thread as usual): each exec then costs
	// two context switches, not two wake-ups through the scheduler.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g.mu.Lock()
	g.tid = unix.Gettid()
	g.mu.Unlock()
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS), unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(g.stop), Events: unix.POLLIN}}
	for {
		if len(g.pending) > 0 {
			n := g.pending[0]
			g.pending = g.pending[1:]
			g.answer(fd, &n)
			continue
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			g.fail(fmt.Errorf("exec gate: poll: %w", err))
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process uses the filter any more
		}
		var n seccompNotif
		if err := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			// ENOENT: the caller was killed or interrupted meanwhile.
			if err == unix.ENOENT || err == unix.EINTR {
				continue
			}
			g.fail(fmt.Errorf("exec gate: receiving a notification: %w", err))
			return
		}
		g.answer(fd, &n)
	}
}

// answer decides one notification. Every path that does not end in an
// explicit "continue" refuses the exec.
func (g *execGateRun) answer(fd int, n *seccompNotif) {
	if c := g.creator.Load(); c != nil && int(n.pid) == c.pid && c.alive() {
		// A session's creation helper, under the supervisor's filter
		// (observed or exec-gated) but not the creation gate's: its calls
		// are the gate's own, and nothing of the sandbox can change its
		// memory. While it runs, no other process has its pid.
		resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return
	}
	g.started, g.accounted = time.Now(), false
	defer g.account() // an answer not sent through respond (the creation gate's)
	if n.nr == unix.SYS_EXECVE || n.nr == unix.SYS_EXECVEAT {
		g.answerExec(fd, n) // of no other table: the lookups below are for the other calls
		return
	}
	// Counted whatever the sandbox's mode: a sandbox that is not observed
	// must get none (its filter has no rule for them; one would be
	// refused below, as an unexpected system call).
	observed := observedCall(n.nr)
	sealed, isSealed := sealedFor(n)
	isSealed = isSealed && g.sealed != nil && !creating(n) // a creation is the creation gate's
	if observed && !g.observe && (g.create != nil && creating(n) || isSealed) {
		observed = false // the creation gate's open(O_CREAT) or the mount plan's open for writing, not observation's
	}
	if observed {
		// Before the answer: the caller's command may end and report
		// right after it.
		g.mu.Lock()
		g.observed++
		g.mu.Unlock()
	}
	if call, ok := createCallFor(n.nr); ok && g.create != nil && creating(n) {
		// Refused, answered; else an observed open goes on to be recorded.
		if g.answerCreate(fd, n, call, observed && g.observe) {
			return
		}
	}
	if isSealed {
		// Recorded, and let go on to the kernel's EROFS; an observed
		// open is answered below, once observation has recorded it too.
		g.answerSealed(fd, n, sealed, !(observed && g.observe))
		if !(observed && g.observe) {
			return
		}
	}
	if observed && g.observe {
		g.answerObserved(fd, n)
		return
	}
	g.answerExec(fd, n) // refused: a call the filter should not have notified
}

// answerExec decides an exec (any other call is refused, as read finds it
// unexpected).
func (g *execGateRun) answerExec(fd int, n *seccompNotif) {
	resp := seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
	ev, err := g.safeRead(fd, n)
	var missing missingFile
	switch {
	case errors.Is(err, errGone):
		return // the caller is gone: nothing to answer
	case errors.As(err, &missing):
		var errno unix.Errno
		if !errors.As(missing.err, &errno) {
			errno = unix.ENOENT
		}
		resp.error = -int32(errno)
	case err != nil:
		g.refuse(ev, err)
	default:
		if err := g.decide(ev); err != nil {
			g.refuse(ev, err)
		} else {
			resp.error, resp.flags = 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
			if g.observe {
				g.observeExec(n, &ev)
			}
			g.keepExec(ev)
		}
	}
	g.respond(fd, &resp)
}

// respond sends resp, once the time spent on the notification since
// answer received it is counted (busy). Counted before the send: with
// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP the kernel switches to the woken
// caller inside the send, so the time the send takes is mostly the
// caller's own exec (or open) running on this CPU, not the gate's.
func (g *execGateRun) respond(fd int, resp *seccompNotifResp) {
	g.account()
	// ENOENT: the caller died or was interrupted (it will retry).
	_ = ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(resp))
}

// account counts the notification answer is on in busy and handled,
// once (serve's goroutine only).
func (g *execGateRun) account() {
	if g.accounted {
		return
	}
	g.accounted = true
	g.mu.Lock()
	g.busy += time.Since(g.started)
	g.handled++
	g.mu.Unlock()
}

// safeRead is read, turning a panic (a bug reading hostile data) into a
// refusal rather than the end of tether.
func (g *execGateRun) safeRead(fd int, n *seccompNotif) (ev ExecEvent, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrExecUnchecked, p)
		}
	}()
	return g.read(fd, n)
}

// decide asks the gate's check, refusing when it panics. An exec the
// check allowed is allowed again without asking while the same command
// runs, when everything the check is given (profile, argv and the vectors
// it runs as, which come from resolving its file anew) is the same: a
// build or a shell loop executes the same programs hundreds of times, and
// the check (the analyser on every vector) is most of an exec's cost.
// What decides is resolved for every exec before the memo is asked: a
// symlink swapped between two execs changes Runs, and so the key.
// The memo is cleared at each session command (mark), so a change of what
// the check reads (a project file) holds from the next command on, and a
// refusal is never remembered: each is asked and recorded.
func (g *execGateRun) decide(ev ExecEvent) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the exec gate's check failed: %v", p)
		}
	}()
	if g.check == nil {
		return errors.New("the exec gate has no check")
	}
	// Built in a buffer kept across execs, and looked up without a copy:
	// only a key that is stored becomes a string. A buffer grown by a
	// huge argv is not kept.
	g.keyBuf = appendAllowKey(g.keyBuf[:0], ev)
	defer func() {
		if cap(g.keyBuf) > 64<<10 {
			g.keyBuf = nil
		}
	}()
	g.mu.Lock()
	_, known := g.allowed[string(g.keyBuf)]
	g.mu.Unlock()
	if known {
		return nil
	}
	if err := g.check(ev); err != nil {
		return err
	}
	key := string(g.keyBuf)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.allowed) >= maxAllowed || g.allowedBytes+len(key) > maxAllowedBytes {
		clear(g.allowed)
		g.allowedBytes = 0
	}
	if g.allowed == nil {
		g.allowed = map[string]struct{}{}
	}
	g.allowed[key] = struct{}{}
	g.allowedBytes += len(key)
	return nil
}

// Bounds of decide's memo.
const (
	maxAllowed      = 1024
	maxAllowedBytes = 256 << 10
)

// appendAllowKey appends to b everything of ev the check may decide on
// (ExecGate) but the pids, unambiguously: each string's length before it
// (an argv string holds no NUL, but lengths need no such promise).
func appendAllowKey(b []byte, ev ExecEvent) []byte {
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	str(ev.Profile)
	str(ev.Path)
	for _, v := range append([][]string{ev.Argv}, ev.Runs...) {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, '[')
		for _, a := range v {
			str(a)
		}
	}
	return b
}

func (g *execGateRun) refuse(ev ExecEvent, err error) {
	ev.Argv = clipArgv(ev.Argv, keptArgvBytes)
	b := blockFor(ev, err)
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.blocks); n > 0 && g.blockPids[n-1] == ev.Pid && sameBlock(g.blocks[n-1], b) {
		// The same process trying the same argv again: a $PATH search
		// that finds the program twice (/usr/bin and /bin, merged).
		return
	}
	if len(g.blocks) == 2*maxExecBlocks {
		g.blocks = append(g.blocks[:0], g.blocks[maxExecBlocks:]...)
		g.blockPids = append(g.blockPids[:0], g.blockPids[maxExecBlocks:]...)
		g.blockBase += maxExecBlocks
	}
	g.blocks = append(g.blocks, b)
	g.blockPids = append(g.blockPids, ev.Pid)
}

func sameBlock(a, b ExecBlock) bool {
	return a.Reason == b.Reason && a.Rule == b.Rule && equalArgs(a.Argv, b.Argv)
}

func (g *execGateRun) keepExec(ev ExecEvent) {
	ev.Runs = nil // the argv is the record; the aliases were for the check
	ev.Argv = clipArgv(ev.Argv, keptArgvBytes)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.execs = appendBounded(g.execs, &g.execBase, maxExecEvents, ev)
}

// clipArgv is argv's first arguments up to max bytes in all, then, when
// any were left out, one that says how many: a record of 8,192 execs
// must not hold 8,192 times ARG_MAX.
func clipArgv(argv []string, max int) []string {
	total := 0
	for i, a := range argv {
		total += len(a) + 1
		if total > max {
			rest := 0
			for _, b := range argv[i:] {
				rest += len(b) + 1
			}
			return append(argv[:i:i], fmt.Sprintf("[tether: %d more arguments, %d bytes, not kept]", len(argv)-i, rest))
		}
	}
	return argv
}

// appendBounded appends v to a gate record that keeps at most the newest
// 2*limit entries: when full, the oldest limit are dropped and *base (how
// many were dropped from the front, for marks) grows by limit.
func appendBounded[T any](s []T, base *int, limit int, v T) []T {
	if len(s) == 2*limit {
		s = append(s[:0], s[limit:]...)
		*base += limit
	}
	return append(s, v)
}

// missingFile: the exec's file (or its interpreter) cannot be resolved,
// most often because it does not exist (a $PATH search trying each
// directory): answered with the resolution's errno, not recorded.
type missingFile struct{ err error }

func (m missingFile) Error() string { return m.err.Error() }

// errGone: the notification is no longer valid (its caller died).
var errGone = errors.New("the exec's caller is gone")

// read reads the exec's path and argv from the caller's memory and works
// out what it may run as. The notification is re-validated after
// everything was read, so the bytes are the waiting caller's and not those
// of a process that reused its pid.
func (g *execGateRun) read(fd int, n *seccompNotif) (ExecEvent, error) {
	ev := ExecEvent{Profile: g.profile, Pid: int(n.pid)}
	pathPtr, argvPtr := n.args[0], n.args[1]
	dirfd, flags := int32(unix.AT_FDCWD), uint64(0)
	if n.nr == unix.SYS_EXECVEAT {
		dirfd, pathPtr, argvPtr, flags = int32(n.args[0]), n.args[1], n.args[2], n.args[4]
	} else if n.nr != unix.SYS_EXECVE {
		return ev, fmt.Errorf("exec gate: unexpected system call %d", n.nr)
	}
	// process_vm_readv, not /proc/PID/mem: no descriptor to open per exec.
	// The pid is the waiting caller's as long as the notification is valid,
	// which is checked after the reads.
	r := &g.reader
	r.reset(ev.Pid)
	r.prefetchExec(pathPtr, argvPtr)
	var err error
	if ev.Path, err = r.cstring(pathPtr, maxExecPath); err != nil {
		if !idValid(fd, n.id) {
			return ev, errGone
		}
		return ev, fmt.Errorf("%w: the path: %w", ErrExecUnchecked, err)
	}
	if ev.Argv, err = r.argv(argvPtr); err != nil {
		if !idValid(fd, n.id) {
			return ev, errGone
		}
		return ev, fmt.Errorf("%w: the arguments: %w", ErrExecUnchecked, err)
	}
	// One check after the reads and the resolution below covers both: a
	// notification still valid then had its caller waiting throughout.
	root := g.root
	if root < 0 {
		if root, err = openProc(strconv.Itoa(ev.Pid)+"/root", unix.O_PATH|unix.O_DIRECTORY); err != nil {
			if !idValid(fd, n.id) {
				return ev, errGone
			}
			return ev, missingFile{err}
		}
	}
	ev.Runs, err = runsAs(ev.Pid, root, dirfd, ev.Path, flags&unix.AT_EMPTY_PATH != 0, ev.Argv)
	// The names were resolved through the caller's root and working
	// directory: make sure they were still the waiting caller's (and so
	// is the root, before it is kept for the sandbox's other execs).
	valid := idValid(fd, n.id)
	if root != g.root {
		if valid && g.fixedRoot {
			g.root = root
		} else {
			_ = unix.Close(root)
		}
	}
	if !valid {
		return ev, errGone
	}
	return ev, err
}

// idValid reports whether notification id still waits for an answer.
// A raw system call: the ioctl waits at most for the listener's lock,
// which the kernel holds only briefly, so the runtime need not be told
// (which costs more than the ioctl). Interrupted taking the lock (EINTR)
// it says nothing of the notification: asked again.
func idValid(fd int, id uint64) bool {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_ID_VALID), uintptr(unsafe.Pointer(&id)))
		if e != unix.EINTR {
			return e == 0
		}
	}
}

// ioctlRet is ioctlPtr returning the ioctl's value.
func ioctlRet(fd int, req uint, arg unsafe.Pointer) (int, error) {
	for {
		r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// memReader reads NUL-terminated strings and pointer arrays of another
// process (process_vm_readv), with a total budget.
type memReader struct {
	pid   int
	total int
	buf   [4096]byte
	// ahead holds the spans the last prefetch read, in one system call
	// for several addresses (an exec's path and argv array, then its
	// strings); readAt serves reads from them.
	ahead  [prefetchSpans * prefetchChunk]byte
	spans  [prefetchSpans]memSpan
	nspans int
	// calls counts the reads made (system calls), for tests.
	calls int
}

// reset makes r a reader of process pid that has read nothing, keeping
// its buffers (the gate's reader, for every exec: no 12 KiB to zero).
func (r *memReader) reset(pid int) {
	r.pid, r.total, r.nspans, r.calls = pid, 0, 0, 0
}

// memSpan is n bytes of the process at addr, at off in ahead.
type memSpan struct {
	addr   uint64
	off, n int
}

// Bounds of a prefetch: how many spans, and at most how many bytes each
// a string gets (most argv strings are shorter; the rest of a longer
// one is read as before).
const (
	prefetchSpans = 32
	prefetchChunk = 256
)

// prefetch reads, in one system call, the given spans (at most
// prefetchSpans, in all at most len(ahead) bytes) for readAt,
// replacing those read before. The kernel stops at the first span it
// cannot read: that one and those after are not kept, and readAt reads
// them itself (with the error a direct read gets). Nothing is trusted
// more for having been read ahead: the bytes are those readAt would read
// a moment later, from a caller that waits.
func (r *memReader) prefetch(want []memSpan) {
	r.nspans = 0
	var remote [prefetchSpans]unix.RemoteIovec
	nr, off := 0, 0
	for _, w := range want {
		if w.addr == 0 || w.n <= 0 || nr == len(remote) || off+w.n > len(r.ahead) {
			continue // a NULL pointer: its reader says so
		}
		remote[nr] = unix.RemoteIovec{Base: uintptr(w.addr), Len: w.n}
		r.spans[nr] = memSpan{addr: w.addr, off: off, n: w.n}
		nr++
		off += w.n
	}
	if nr == 0 {
		return
	}
	local := []unix.Iovec{{Base: &r.ahead[0], Len: uint64(off)}}
	r.calls++
	got, err := unix.ProcessVMReadv(r.pid, local, remote[:nr], 0)
	if err != nil || got <= 0 {
		return
	}
	for r.nspans < nr && got > 0 {
		sp := &r.spans[r.nspans]
		sp.n = min(sp.n, got) // the last one read may stop short, at a page it could not read
		got -= sp.n
		r.nspans++
	}
}

// prefetchExec reads ahead the first bytes of an exec's path at pathPtr
// and the first block of its argv array at argvPtr (as argv reads it),
// in one system call.
func (r *memReader) prefetchExec(pathPtr, argvPtr uint64) {
	r.prefetch([]memSpan{{addr: pathPtr, n: pageChunk(pathPtr, prefetchChunk)}, {addr: argvPtr, n: argvBlock(argvPtr)}})
}

// pageChunk is how many bytes at addr to read ahead: up to n, not past
// addr's page.
func pageChunk(addr uint64, n int) int {
	return min(n, 4096-int(addr%4096))
}

// readAt reads len(b) bytes at addr of the process, or fewer up to an
// unmapped page (or the end of a span read ahead that holds addr, when
// that gives at least 8 bytes or all of b).
func (r *memReader) readAt(b []byte, addr uint64) (int, error) {
	for _, sp := range r.spans[:r.nspans] {
		if addr >= sp.addr && addr-sp.addr < uint64(sp.n) {
			if n := copy(b, r.ahead[sp.off+int(addr-sp.addr):sp.off+sp.n]); n >= min(len(b), 8) {
				return n, nil
			}
		}
	}
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	r.calls++
	n, err := unix.ProcessVMReadv(r.pid, local, remote, 0)
	if n <= 0 {
		// The sandbox chose the address: an unmapped page is an error
		// for its call, never a negative length for tether to slice by.
		if err == nil {
			err = errors.New("nothing read")
		}
		return 0, err
	}
	return n, nil
}

// cstring reads the string at addr, at most max bytes before its NUL.
func (r *memReader) cstring(addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", errors.New("NULL pointer")
	}
	var out []byte
	for {
		// Up to the end of addr's page, so that a string ending just
		// before an unmapped page reads; past a page, the rest of a long
		// string in reads of up to 64 KiB straight into out (a read
		// stops short at an unmapped page).
		chunk := r.buf[:4096-int(addr%4096)]
		if out != nil {
			out = slices.Grow(out, min(64<<10, max+1-len(out)))
			chunk = out[len(out):cap(out)]
		}
		n, err := r.readAt(chunk, addr)
		if n == 0 && err != nil {
			return "", err
		}
		if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
			out = append(out, chunk[:i]...)
			break
		}
		out = append(out, chunk[:n]...)
		if len(out) > max {
			return "", fmt.Errorf("longer than %d bytes", max)
		}
		addr += uint64(n)
	}
	if len(out) > max {
		return "", fmt.Errorf("longer than %d bytes", max)
	}
	r.total += len(out) + 1
	if r.total > maxExecBytes {
		return "", fmt.Errorf("more than %d bytes in all", maxExecBytes)
	}
	return string(out), nil
}

// argv reads the NULL-terminated array of string pointers at addr. A NULL
// array is an empty argv, as the kernel takes it.
func (r *memReader) argv(addr uint64) ([]string, error) {
	if addr == 0 {
		return nil, nil
	}
	// The pointers are read a page-bounded block at a time (one system
	// call for most argvs), then each string.
	var ptrs []uint64
	var block [512]byte
	for done := false; !done; {
		// The kernel counts each pointer toward ARG_MAX too.
		if r.total+8*len(ptrs) > maxExecBytes {
			return nil, fmt.Errorf("more than %d bytes in all", maxExecBytes)
		}
		at := addr + uint64(8*len(ptrs))
		n, err := r.readAt(block[:argvBlock(at)], at)
		if err != nil || n < 8 {
			return nil, fmt.Errorf("reading argv[%d]: %v", len(ptrs), err)
		}
		for i := 0; i+8 <= n; i += 8 {
			ptr := binary.NativeEndian.Uint64(block[i:])
			if ptr == 0 {
				done = true
				break
			}
			ptrs = append(ptrs, ptr)
		}
	}
	r.total += 8 * len(ptrs)
	out := make([]string, 0, len(ptrs))
	var want [prefetchSpans]memSpan
	for i, ptr := range ptrs {
		if i%prefetchSpans == 0 {
			// The next strings' first bytes, in one system call.
			next := ptrs[i:min(i+prefetchSpans, len(ptrs))]
			for j, p := range next {
				want[j] = memSpan{addr: p, n: pageChunk(p, prefetchChunk)}
			}
			r.prefetch(want[:len(next)])
		}
		s, err := r.cstring(ptr, maxExecString)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// argvBlock is how many bytes of an argv array at addr argv reads at
// once: up to 64 pointers, not past addr's page but for a pointer across
// its end.
func argvBlock(addr uint64) int {
	return max(pageChunk(addr, 512), 8)
}

// runsAs lists the argument vectors an exec of path (relative to dirfd of
// process pid, whose root is the directory root; the descriptor itself
// with emptyPath) with argv may run as,
// besides argv itself: argv[0] replaced by each name the file goes by,
// and for a "#!" script, its interpreter's vectors (recursively, as the
// kernel does). Names are resolved inside the caller's root.
//
// Nothing unresolved is let through unchecked. When the file or a
// script's interpreter cannot be resolved (most often it does not exist:
// ENOENT, ENOTDIR, as in a $PATH search) the error is a missingFile: the
// gate answers with its errno instead of the kernel, which would refuse
// the exec too (or, for an error of tether's own, is not asked). When a
// regular file's first bytes cannot be read (tether, rootless, may not
// read a file the caller can execute: the kernel reads it whatever its
// mode) the error is ErrExecUnchecked: the exec is refused.
func runsAs(pid, root int, dirfd int32, file string, emptyPath bool, argv []string) (runs [][]string, err error) {
	// Vectors that differ only in argv[0]'s directory are one check: the
	// analyser names a program by its last element.
	add := func(v []string) {
		for _, r := range append(runs, argv) {
			if len(r) > 0 && len(v) > 0 && path.Base(r[0]) == path.Base(v[0]) && equalArgs(r[1:], v[1:]) {
				return
			}
		}
		runs = append(runs, v)
	}
	// A vector a program receives: also checked as what the multi-call
	// programs would make of it (execgate_argv0.go), whatever file runs.
	receives := func(v []string) {
		for _, r := range argv0Runs(v) {
			add(r)
		}
	}
	receives(argv)
	rest := []string(nil)
	if len(argv) > 1 {
		rest = argv[1:]
	}
	names, f, err := resolveExecFD(pid, root, dirfd, file, emptyPath)
	if err != nil {
		return nil, missingFile{err}
	}
	for _, name := range append([]string{path.Base(file)}, names...) {
		if name != "" && name != "." && name != "/" {
			add(append([]string{name}, rest...))
		}
	}
	// Each file the exec runs, the program first: a "#!" script runs its
	// interpreter with the script's path in place of argv[0]
	// (binfmt_script); a dynamic loader (isLoaderELF: what the file is,
	// whatever its name) runs the program it is given, which is then one
	// more file (a loader refuses a script; glibc's refuses itself, others
	// are followed).
	v, name, viaLoader := argv, file, false
	for depth := 0; f >= 0 && depth < maxScriptDepth; depth++ {
		interp, arg, script, loader, err := inspect(f)
		_ = unix.Close(f)
		f = -1
		if err != nil {
			return runs, fmt.Errorf("%w: reading the first bytes of %s: %w", ErrExecUnchecked, name, err)
		}
		switch {
		case loader:
			var vrest []string
			if len(v) > 1 {
				vrest = v[1:]
			}
			lv, argv0 := loaderArgs(vrest)
			if lv == nil {
				return runs, nil
			}
			add(lv)
			received := lv // what the program receives
			if argv0 != "" {
				received = append([]string{argv0}, lv[1:]...)
				add(received)
			}
			receives(received)
			vnames, vf, err := resolveExecFD(pid, root, unix.AT_FDCWD, lv[0], false)
			if err != nil {
				return runs, nil // the loader cannot open it either
			}
			for _, n := range vnames {
				add(append([]string{n}, lv[1:]...))
			}
			v, name, f, viaLoader = lv, lv[0], vf, true
		case script && !viaLoader:
			sv := []string{interp}
			if arg != "" {
				sv = append(sv, arg)
			}
			sv = append(append(sv, name), v[1:]...)
			add(sv)
			receives(sv)
			var inames []string
			if inames, f, err = resolveExecFD(pid, root, unix.AT_FDCWD, interp, false); err != nil {
				return runs, missingFile{err} // the kernel cannot run the interpreter either
			}
			for _, n := range inames {
				add(append([]string{n}, sv[1:]...))
			}
			v, name = sv, interp
		}
	}
	if f >= 0 {
		_ = unix.Close(f)
	}
	return runs, nil
}

// loaderArgs returns the vector a dynamic loader executed with args
// (ld.so [OPTION]... PROGRAM [ARG]...) runs, or nil when it runs nothing.
// The vector holds the program's path first, and the caller adds it by
// the names that file goes by; with --argv0 the program receives argv0
// in its place (the last one given, as glibc's loader takes it).
func loaderArgs(args []string) (v []string, argv0 string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--list", "--verify", "--help", "--version", "--list-tunables", "--list-diagnostics":
			return nil, ""
		case "--inhibit-cache":
		case "--argv0":
			if i+1 < len(args) {
				argv0 = args[i+1]
			}
			i++
		case "--inhibit-rpath", "--library-path", "--preload", "--audit", "--glibc-hwcaps-prefix", "--glibc-hwcaps-mask":
			i++
		default:
			if strings.HasPrefix(a, "--") {
				continue // an option of a newer loader, with its value attached or none
			}
			return append([]string{a}, args[i+1:]...), argv0
		}
	}
	return nil, ""
}

func equalArgs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// inspect reads a file's first bytes as the kernel does and says what it
// runs: a script's "#!" line (parseShebang), or that it is a dynamic
// loader (isLoaderELF). f is an O_PATH descriptor of the file. Only a
// regular file runs (the kernel refuses any other with EACCES); one whose
// first bytes cannot be read is an error.
func inspect(f int) (interp, arg string, script, loader bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return "", "", false, false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", "", false, false, nil
	}
	// Reopen the O_PATH descriptor for reading (never blocks: a regular file).
	rf, err := reopen(f, unix.O_RDONLY|unix.O_NOCTTY)
	if err != nil {
		return "", "", false, false, err
	}
	defer unix.Close(rf)
	readAt := func(b []byte, off int64) (int, error) {
		for {
			n, err := unix.Pread(rf, b, off)
			if err != unix.EINTR {
				return n, err
			}
		}
	}
	// The kernel's buffer is zeroed before the file's first bytes are
	// read into it: a short file reads as ending in NULs.
	var buf [binprmBufSize]byte
	if _, err = readAt(buf[:], 0); err != nil {
		return "", "", false, false, err
	}
	if interp, arg, script = parseShebang(&buf); script {
		return interp, arg, true, false, nil
	}
	return "", "", false, isLoaderELF(buf[:], readAt), nil
}

// binprmBufSize is the kernel's BINPRM_BUF_SIZE: how much of a file
// binfmt_script reads.
const binprmBufSize = 256

// parseShebang is binfmt_script's load_script (fs/binfmt_script.c) on the
// first bytes of a file: the interpreter and its optional argument, or
// ok false where the kernel would not run it as a script (ENOEXEC). It
// follows the kernel step by step, because a gate that reads the line
// otherwise checks a program the kernel does not run: the line ends at
// the first newline, looked for only before the first NUL; without one,
// at the buffer's last byte, if a blank or NUL follows the interpreter's
// start (else its name may be cut: ENOEXEC); trailing blanks are dropped;
// the interpreter runs from the first non-blank to the next blank or NUL;
// the argument, when that was a blank, from the next non-blank to the
// line's end; each ends at a NUL too.
func parseShebang(buf *[binprmBufSize]byte) (interp, arg string, ok bool) {
	b := buf[:]
	if b[0] != '#' || b[1] != '!' {
		return "", "", false
	}
	spacetab := func(c byte) bool { return c == ' ' || c == '\t' }
	last := len(b) - 1 // buf_end: the last byte, inclusive below
	nonSpacetab := func(from, to int) int {
		for ; from <= to; from++ {
			if !spacetab(b[from]) {
				return from
			}
		}
		return -1
	}
	terminator := func(from, to int) int {
		for ; from <= to; from++ {
			if spacetab(b[from]) || b[from] == 0 {
				return from
			}
		}
		return -1
	}
	// strnchr stops at a NUL.
	end := -1
	for i := 0; i < len(b) && b[i] != 0; i++ {
		if b[i] == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		start := nonSpacetab(2, last)
		if start < 0 || terminator(start, last) < 0 {
			return "", "", false
		}
		end = last
	}
	for end > 0 && spacetab(b[end-1]) {
		end--
	}
	name := nonSpacetab(2, end)
	if name < 0 || name == end {
		return "", "", false
	}
	sep := terminator(name, end)
	argAt := -1
	if sep >= 0 && b[sep] != 0 {
		argAt = nonSpacetab(sep, end)
	}
	cstr := func(from, to int) string { // up to to (exclusive) or a NUL
		if i := bytes.IndexByte(b[from:to], 0); i >= 0 {
			to = from + i
		}
		return string(b[from:to])
	}
	if argAt >= 0 {
		arg = cstr(argAt, end)
	}
	nameEnd := end
	if sep >= 0 && sep < end {
		nameEnd = sep
	}
	return cstr(name, nameEnd), arg, true
}

// procDir and selfFdDir are this process's descriptors of the host's
// /proc and of its own /proc/self/fd, opened on first use and kept: the
// exec gate opens a name under them for every exec (the caller's root,
// the file to reopen), and a walk from them skips looking up "/proc",
// "self" and "fd" each time (most of what such an open costs).
var (
	procDir   = sync.OnceValues(func() (int, error) { return openDir("/proc") })
	selfFdDir = sync.OnceValues(func() (int, error) { return openDir("/proc/self/fd") })
)

func openDir(name string) (int, error) {
	fd, err := unix.Open(name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

// openProc opens name ("PID/root") under /proc with flags (O_CLOEXEC
// added).
func openProc(name string, flags int) (int, error) {
	return openUnder(procDir, "/proc/", name, flags)
}

// reopen opens this process's descriptor fd anew with flags (O_CLOEXEC
// added), as its /proc/self/fd link does: an O_PATH descriptor opened
// for reading.
func reopen(fd, flags int) (int, error) {
	return openUnder(selfFdDir, "/proc/self/fd/", strconv.Itoa(fd), flags)
}

func openUnder(dir func() (int, error), dirName, name string, flags int) (int, error) {
	d, err := dir()
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(d, name, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dirName + name, Err: err}
	}
	return fd, nil
}

// selfPathRE matches the paths that name one of the caller's own
// descriptors (the number captured) or its own executable ("exe"): its
// procfs "self" means the caller, which tether's walk of the sandbox's
// /proc cannot follow (there "self" is nobody: tether is not in the
// sandbox's pid namespace), and both are magic links, which the kernel
// follows to the file itself, not to the name their text shows (an
// unlinked file's "(deleted)", a path of tether's mount namespace).
// Compiled on first use, not at init (init work runs in every sandbox).
var selfPathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/+(?:(?:proc/+(?:self|thread-self)|dev)/+fd/+([0-9]+)/*|proc/+(?:self|thread-self)/+(exe))$`)
})

// resolveExec resolves an exec's file inside process pid's root: the names
// of the symlinks' targets it goes through (last elements), and the file,
// opened O_PATH, or nil with the error that stopped the walk.
func resolveExec(pid int, dirfd int32, file string, emptyPath bool) ([]string, *os.File, error) {
	root, err := openProc(strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(root)
	names, fd, err := resolveExecFD(pid, root, dirfd, file, emptyPath)
	if err != nil {
		return names, nil, err
	}
	return names, os.NewFile(uintptr(fd), file), nil
}

// resolveExecFD is resolveExec inside root, the caller's root directory
// (the exec gate's: opened once per sandbox where that is fixed), returning
// the bare descriptor (an *os.File costs system calls of its own).
func resolveExecFD(pid, root int, dirfd int32, file string, emptyPath bool) ([]string, int, error) {
	// A descriptor's own file (fexecve): its /proc/PID entry on this host,
	// opened (which follows the magic link to the file, as the kernel
	// does), its text giving the file's name.
	if emptyPath && file == "" {
		return openMagic(pid, "fd/"+strconv.Itoa(int(dirfd)))
	}
	// A name of the caller's own descriptor or executable: the same, but
	// only where the name means that for the caller, its /proc the
	// sandbox's procfs (and /dev/fd its link there). In a directory the
	// caller chrooted into, /proc/self/exe may be any symlink it made: the
	// name is then walked as any other.
	if maybeFdPath(file) {
		if m := selfPathRE().FindStringSubmatch(file); m != nil && procIsCallers(root, strings.HasPrefix(strings.TrimLeft(file, "/"), "dev/")) {
			if m[2] != "" {
				return openMagic(pid, "exe")
			}
			if n, err := strconv.Atoi(m[1]); err == nil && n <= 1<<20 {
				return openMagic(pid, "fd/"+m[1])
			}
		}
	}
	proc := "/proc/" + strconv.Itoa(pid)
	start := ""
	switch {
	case strings.HasPrefix(file, "/"):
	case dirfd == unix.AT_FDCWD:
		start = proc + "/cwd"
	default:
		start = proc + "/fd/" + strconv.Itoa(int(dirfd))
	}
	var names []string
	fd, err := walkInRoot(root, start, file, func(target string) { names = append(names, path.Base(target)) })
	if err != nil {
		return names, -1, err
	}
	return names, fd, nil
}

// openMagic opens the magic link /proc/PID/link of the caller on this
// host (following it to its file) and returns the file's name.
func openMagic(pid int, link string) ([]string, int, error) {
	name := strconv.Itoa(pid) + "/" + link
	fd, err := openProc(name, unix.O_PATH)
	if err != nil {
		return nil, -1, err
	}
	target, _ := os.Readlink("/proc/" + name)
	return magicNames(target), fd, nil
}

// magicNames returns the names a magic link's target text gives its
// file: the last element, without the " (deleted)" of an unlinked file,
// and for a memfd ("/memfd:NAME (deleted)") also the last element of the
// NAME memfd_create gave it: a memfd named "reboot" goes by "reboot".
func magicNames(target string) []string {
	target = strings.TrimSuffix(target, " (deleted)")
	names := []string{path.Base(target)}
	if m, ok := strings.CutPrefix(target, "/memfd:"); ok && m != "" {
		if b := path.Base(m); b != names[0] {
			names = append(names, b)
		}
	}
	return names
}

// procIsCallers reports whether "/proc" inside root (a caller's root) is
// a procfs, not a directory or symlink the caller made (after chroot),
// and, with dev, whether its /dev/fd is the link to /proc/self/fd. Inside
// a sandbox with seccomp nothing can be mounted (its filter refuses mount
// and unshare), so a procfs there is the sandbox's: its "self" is the
// caller. (With seccomp off it may be mounted over: docs/exec-gate.md.)
func procIsCallers(root int, dev bool) bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(root, "/proc", &how)
	if err != nil {
		return false
	}
	var st unix.Statfs_t
	err = unix.Fstatfs(fd, &st)
	_ = unix.Close(fd)
	if err != nil || st.Type != unix.PROC_SUPER_MAGIC {
		return false
	}
	if !dev {
		return true
	}
	if fd, err = unix.Openat2(root, "/dev", &how); err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [32]byte
	n, err := unix.Readlinkat(fd, "fd", buf[:])
	return err == nil && strings.TrimRight(string(buf[:n]), "/") == "/proc/self/fd"
}

// maybeFdPath reports whether file can match selfPathRE (it starts with
// slashes and "proc/" or "dev/"): most execs skip the regular expression.
func maybeFdPath(file string) bool {
	rest := strings.TrimLeft(file, "/")
	return len(rest) < len(file) && (strings.HasPrefix(rest, "proc/") || strings.HasPrefix(rest, "dev/"))
}

// walkInRoot resolves file component by component under root (a
// descriptor of the caller's "/"), from the directory start names on this
// host ("" for root itself), following symlinks as the kernel would for
// the caller, with absolute targets and ".." kept inside root. link is
// called with the target of every symlink met as the last component. It
// returns an O_PATH descriptor of the file.
//
// An absolute name whose last component is a plain name is resolved by
// the kernel's own walk (openInRoot: a few system calls, not three per
// component); where that walk refuses what this one follows (a magic
// link, a concurrent rename), this one decides.
func walkInRoot(root int, start, file string, link func(string)) (int, error) {
	if last := file[strings.LastIndexByte(file, '/')+1:]; strings.HasPrefix(file, "/") && last != "" && last != "." && last != ".." {
		var targets []string
		fd, err := openInRoot(root, file, func(t string) { targets = append(targets, t) })
		if err == nil || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			for _, t := range targets {
				link(t)
			}
			return fd, err
		}
	}
	return walkComponents(root, start, file, link)
}

// openInRoot opens the absolute name file O_PATH inside root with
// openat2(RESOLVE_IN_ROOT): the kernel follows the symlinks on the way as
// it does for a process whose root is root. A symlink as the last
// component is opened itself, its target passed to link and followed
// from the symlink's directory, as walkComponents does, so that the names
// a file goes by are seen. Magic links are not followed (their text is,
// by walkComponents).
func openInRoot(root int, file string, link func(string)) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	}
	var buf [unix.PathMax]byte
	for links := 0; ; links++ {
		fd, err := unix.Openat2(root, file, &how)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return fd, nil
		}
		n, err := unix.Readlinkat(fd, "", buf[:])
		_ = unix.Close(fd)
		if err != nil {
			return -1, err
		}
		if links >= 40 { // the kernel's MAXSYMLINKS
			return -1, unix.ELOOP
		}
		target := string(buf[:n])
		link(target)
		last := target[strings.LastIndexByte(target, '/')+1:]
		if last == "" || last == "." || last == ".." {
			return -1, unix.EXDEV // not a plain name: walkComponents decides
		}
		if !strings.HasPrefix(target, "/") {
			// Relative to the symlink's directory, unresolved: the
			// kernel walks "dir/target" as it would the link.
			target = file[:strings.LastIndexByte(file, '/')+1] + target
		}
		file = target
	}
}

// walkComponents is walkInRoot's own walk, one component at a time.
func walkComponents(root int, start, file string, link func(string)) (int, error) {
	dir, err := unix.Dup(root)
	if err != nil {
		return -1, err
	}
	if start != "" {
		_ = unix.Close(dir)
		if dir, err = unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return -1, err
		}
	}
	var rootSt unix.Stat_t
	if err := unix.Fstat(root, &rootSt); err != nil {
		_ = unix.Close(dir)
		return -1, err
	}
	parts := strings.Split(file, "/")
	if strings.HasPrefix(file, "/") {
		_ = unix.Close(dir)
		if dir, err = unix.Dup(root); err != nil {
			return -1, err
		}
	}
	for links := 0; len(parts) > 0; {
		comp := parts[0]
		parts = parts[1:]
		if comp == "" || comp == "." {
			continue
		}
		if comp == ".." {
			var st unix.Stat_t
			if unix.Fstat(dir, &st) == nil && st.Dev == rootSt.Dev && st.Ino == rootSt.Ino {
				continue // ".." of the root is the root
			}
		}
		next, err := unix.Openat(dir, comp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = unix.Close(dir)
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			_ = unix.Close(next)
			_ = unix.Close(dir)
			return -1, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			_ = unix.Close(dir)
			dir = next
			continue
		}
		if links++; links > 40 { // the kernel's MAXSYMLINKS
			_ = unix.Close(next)
			_ = unix.Close(dir)
			return -1, unix.ELOOP
		}
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(next, "", buf)
		_ = unix.Close(next)
		if err != nil {
			_ = unix.Close(dir)
			return -1, err
		}
		target := string(buf[:n])
		if len(parts) == 0 || allEmpty(parts) {
			link(target)
		}
		parts = append(strings.Split(target, "/"), parts...)
		if strings.HasPrefix(target, "/") {
			_ = unix.Close(dir)
			if dir, err = unix.Dup(root); err != nil {
				return -1, err
			}
		}
	}
	return dir, nil
}

func allEmpty(parts []string) bool {
	for _, p := range parts {
		if p != "" && p != "." {
			return false
		}
	}
	return true
}
