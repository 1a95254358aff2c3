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
)

// The exec gate through libcontainer's own seccomp plumbing, for sandboxes
// whose process is not started by the trampoline (sessions, whose init is
// the supervisor; one-shot sandboxes in a root the trampoline cannot run
// in). The sandbox's filter gets the notify action for execve and
// execveat; libcontainer's init loads it with a listener, and
// libcontainer's parent side (in this process) takes the listener from the
// init with pidfd_getfd and sends it to Seccomp.ListenerPath before the
// init executes anything.

// withExecNotify returns a copy of cfg in which execve and execveat notify
// a listener at listenerPath, and with observe so do the calls that
// observation records (observedSyscalls): each rule of theirs that allows
// becomes the same rule (conditions included) that notifies, so what the
// sandbox's filter refuses stays refused. cfg (shared between sandboxes)
// is not changed.
func withExecNotify(cfg *configs.Seccomp, listenerPath string, observe bool) *configs.Seccomp {
	c := *cfg
	c.ListenerPath = listenerPath
	c.Syscalls = make([]*configs.Syscall, 0, len(cfg.Syscalls)+2)
	for _, s := range cfg.Syscalls {
		if s.Name == "execve" || s.Name == "execveat" {
			continue
		}
		if observe && s.Action == configs.Allow && slices.Contains(observedSyscalls, s.Name) {
			n := *s
			n.Action = configs.Notify
			s = &n
		}
		c.Syscalls = append(c.Syscalls, s)
	}
	for _, name := range []string{"execve", "execveat"} {
		c.Syscalls = append(c.Syscalls, &configs.Syscall{Name: name, Action: configs.Notify})
	}
	return &c
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
	go func() {
		defer close(g.done)
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

// startExecGate starts the exec gate of a sandbox about to be created
// from lc with config cfg (which says whether it is observed): through
// the trampoline's socket when tramp carries one, else through
// libcontainer's notify action (lc.Seccomp is replaced by a copy that has
// it). It returns nil when the sandbox has no filter to carry the gate
// (seccomp off, or a build without seccomp): the caller reports
// "exec_gate" as not enforced. The caller must call close on the result.
func startExecGate(profile string, check ExecGate, cfg Config, lc *configs.Config, tramp *trampoline) (*execGateRun, error) {
	if tramp != nil && tramp.gateHost != nil {
		g, err := newExecGate(profile, check, cfg)
		if err != nil {
			return nil, err
		}
		sock := tramp.gateHost
		tramp.gateHost = nil
		tramp.observe = cfg.Observe
		g.serveFrom(sock)
		return g, nil
	}
	if lc.Seccomp == nil {
		return nil, nil
	}
	l, err := listenGate()
	if err != nil {
		return nil, err
	}
	g, err := newExecGate(profile, check, cfg)
	if err != nil {
		l.close()
		return nil, err
	}
	lc.Seccomp = withExecNotify(lc.Seccomp, l.path, cfg.Observe)
	g.serveFromListener(l)
	return g, nil
}
