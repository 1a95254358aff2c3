package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"

	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The exec gate through libcontainer's own seccomp plumbing, for sandboxes
// whose process is not started by the trampoline (sessions, whose init is
// the supervisor; one-shot sandboxes in a root the trampoline cannot run
// in). The sandbox's filter gets the notify action for execve and
// execveat; libcontainer's init loads it with a listener, and
// libcontainer's parent side (in this process) takes the listener from the
// init with pidfd_getfd and sends it to Seccomp.ListenerPath before the
// init executes anything.

// withNotify returns a copy of cfg that notifies a listener at
// listenerPath of execve and execveat (exec), of the calls observation
// records (observe; observedSyscalls) and of every system call that can
// name a directory entry (create; createNotifies), and of the calls the
// mount plan refuses unreported (sealed; sealedCalls): each rule of theirs
// that allows becomes the same rule (conditions included) that notifies,
// so what the sandbox's filter refuses stays refused (a mkdir or an
// open(O_CREAT) with a setuid mode still fails, fileRules), and an open
// without O_CREAT waits only when observed or, with sealed, when it
// writes (sealedOpenRules), which the creation gate judges too
// (gatedOpen). cfg (shared between sandboxes) is not changed.
func withNotify(cfg *configs.Seccomp, listenerPath string, exec, observe, create, sealed bool) *configs.Seccomp {
	c := *cfg
	c.ListenerPath = listenerPath
	c.Syscalls = make([]*configs.Syscall, 0, len(cfg.Syscalls)+2)
	for _, s := range cfg.Syscalls {
		if exec && (s.Name == "execve" || s.Name == "execveat") {
			continue
		}
		if (sealed || create) && !observe && s.Action == configs.Allow {
			if rules := sealedOpenRules(s); rules != nil {
				c.Syscalls = append(c.Syscalls, rules...)
				continue
			}
		}
		if s.Action == configs.Allow && (observe && slices.Contains(observedSyscalls, s.Name) || create && createNotifies(s) || sealed && sealedNotifies(s)) {
			n := *s
			n.Action = configs.Notify
			s = &n
		}
		c.Syscalls = append(c.Syscalls, s)
	}
	if exec {
		for _, name := range []string{"execve", "execveat"} {
			c.Syscalls = append(c.Syscalls, &configs.Syscall{Name: name, Action: configs.Notify})
		}
	}
	return &c
}

// createNotifies reports whether the allow rule s is one the creation gate
// turns into a notification: every rule of a system call of its table
// (createCalls), of open and openat the one for O_CREAT (fileRules'
// "creating"; those that write without it are sealedOpenRules'), and of
// the chmod calls the one for group write (fileRules' "groupWrite").
func createNotifies(s *configs.Syscall) bool {
	c, ok := createCallNamed(s.Name)
	if !ok {
		return false
	}
	if c.creating < 0 {
		return true
	}
	mask, want := uint64(createFlags), uint64(unix.O_CREAT)
	if c.kind == seccompexec.CreateChmod {
		mask, want = chmodBits|unix.S_IWGRP, unix.S_IWGRP // fileRules' groupWrite
	}
	for _, a := range s.Args {
		if a.Index == uint(c.creating) && a.Op == configs.MaskEqualTo && a.Value == mask && a.ValueTwo == want {
			return true
		}
	}
	return false
}

// sealedNotifies reports whether the allow rule s is one the mount plan's
// report turns into a notification: every rule of a call of sealedCalls
// but open and openat (sealedOpenRules).
func sealedNotifies(s *configs.Syscall) bool {
	for _, c := range sealedCalls {
		if c.name == s.Name {
			return c.op != "open-write"
		}
	}
	return false
}

// sealedOpenRules splits the allow rule s of open or openat that cannot
// create (fileRules' "noCreate") into the rule that reads, which still
// allows, and those that write (an access mode but O_RDONLY, or O_TRUNC),
// which notify; nil for any other rule.
func sealedOpenRules(s *configs.Syscall) []*configs.Syscall {
	c, ok := createCallNamed(s.Name)
	if !ok || c.creating < 0 || len(s.Args) != 1 {
		return nil
	}
	a := s.Args[0]
	if a.Index != uint(c.creating) || a.Op != configs.MaskEqualTo || a.Value != createFlags || a.ValueTwo != 0 {
		return nil
	}
	var rules []*configs.Syscall
	for _, acc := range []uint64{unix.O_RDONLY, unix.O_WRONLY, unix.O_RDWR, unix.O_ACCMODE} {
		for _, trunc := range []uint64{0, unix.O_TRUNC} {
			r := *s
			r.Args = []*configs.Arg{{Index: a.Index, Op: configs.MaskEqualTo, Value: createFlags | sealedOpenWrites, ValueTwo: acc | trunc}}
			if acc|trunc != 0 {
				r.Action = configs.Notify
			}
			rules = append(rules, &r)
		}
	}
	return rules
}

// gateListener is the socket libcontainer sends one sandbox's listener to.
type gateListener struct {
	ln   *net.UnixListener
	path string
}

// listenGate opens an abstract unix socket with an unguessable name. Only
// a connection from this very process (libcontainer's parent side) is
// taken: the name is reachable from anywhere in the host's network
// namespace.
func listenGate() (*gateListener, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("naming the exec gate's socket: %w", err)
	}
	path := "@tether-exec-gate-" + hex.EncodeToString(b[:])
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listening for the exec gate: %w", err)
	}
	return &gateListener{ln: ln, path: path}, nil
}

// close stops listening; a gate already received keeps running.
func (l *gateListener) close() { _ = l.ln.Close() }

// serveFromListener takes the listener libcontainer sends to l and serves
// it; l is closed once it has (or when accepting fails).
func (g *execGateRun) serveFromListener(l *gateListener) {
	g.ln = l
	g.serving.Add(1)
	go func() {
		defer g.serving.Done()
		fd, err := l.accept()
		g.mu.Lock()
		l.close()
		g.ln = nil
		g.mu.Unlock()
		if err != nil {
			g.fail(err)
			return
		}
		g.serve(fd)
	}()
}

// accept takes connections until one from this process delivers a
// descriptor.
func (l *gateListener) accept() (int, error) {
	for {
		conn, err := l.ln.AcceptUnix()
		if err != nil {
			return -1, fmt.Errorf("accepting the exec gate's listener: %w", err)
		}
		fd, err := recvFromSelf(conn)
		_ = conn.Close()
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, errNotSelf) {
			continue // someone else on the host: ignore them
		}
		return -1, err
	}
}

var errNotSelf = errors.New("exec gate connection from another process")

// recvFromSelf reads libcontainer's message (the container's state as
// JSON, with the listener as SCM_RIGHTS) from a connection made by this
// process.
func recvFromSelf(conn *net.UnixConn) (int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var credErr error
	_ = raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if credErr != nil {
		return -1, fmt.Errorf("exec gate: peer credentials: %w", credErr)
	}
	if int(cred.Pid) != os.Getpid() {
		return -1, errNotSelf
	}
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return -1, fmt.Errorf("receiving the exec gate's listener: %w", err)
	}
	return parseRights(oob[:oobn])
}

// startExecGate starts the gate of a sandbox about to be created from lc
// with config cfg (which says whether it is observed): the exec gate when
// check is set, the creation gate when create is. Through the
// trampoline's socket when tramp carries one; else through libcontainer's
// notify action (lc.Seccomp is replaced by a copy that has it). A
// supervised sandbox's (a session's or pooled one's) supervisor starts the
// creation helper on the socket in g.createChild, which the caller passes
// to it. The creation gate performs the calls it lets through
// (g.performs) except in a one-shot sandbox without the trampoline, where
// no helper can run (the caller reports helperRules as not enforced). It
// returns nil when the sandbox has no filter to carry the gate (seccomp
// off, or a build without seccomp, and no trampoline): the caller reports
// "exec_gate" and helperRules as not enforced. The caller must call close on the
// result.
func startExecGate(profile string, check ExecGate, cfg Config, create *createGate, lc *configs.Config, tramp *trampoline, supervised bool) (_ *execGateRun, err error) {
	if tramp != nil && tramp.gateHost != nil {
		g, err := newExecGate(profile, check, cfg)
		if err != nil {
			return nil, err
		}
		g.create, g.performs = create, create != nil
		sock := tramp.gateHost
		tramp.gateHost = nil
		tramp.observe, tramp.create, tramp.noExec, tramp.sealed = cfg.Observe, create != nil, check == nil, cfg.mountPlanned()
		g.serveFrom(sock)
		return g, nil
	}
	if lc.Seccomp == nil {
		return nil, nil
	}
	g, err := newExecGate(profile, check, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			g.close()
		}
	}()
	g.create = create
	if supervised && create != nil {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("creation gate socket: %w", err)
		}
		g.createChild = os.NewFile(uintptr(fds[1]), "create-gate-child")
		g.performs = true
		g.takeCreator(os.NewFile(uintptr(fds[0]), "create-gate"))
	}
	l, err := listenGate()
	if err != nil {
		return nil, err
	}
	lc.Seccomp = withNotify(lc.Seccomp, l.path, check != nil, cfg.Observe, create != nil, cfg.mountPlanned())
	g.serveFromListener(l)
	return g, nil
}

// gateNotEnforced names what a sandbox without a gate lacks.
func gateNotEnforced(exec, create bool) []string {
	var names []string
	if exec {
		names = append(names, "exec_gate")
	}
	if create {
		names = append(names, helperRules...)
	}
	return names
}

// helperRules names, for not_enforced, the rules of the creation gate
// that only its helper performs: nested repositories judged without a swap
// window, a unix connect reaching only the sandbox's own sockets, no
// group- or world-writable creation whatever the umask, a chmod losing
// group write. A sandbox whose gate has no helper lists each of them.
var helperRules = []string{"nested-repos", "unix-connect", "created-modes", "group-write"}
