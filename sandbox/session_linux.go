package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// Labels stored in a session container's libcontainer config, read back
// by ListSessionSandboxes.
const (
	labelSession = "tether.session="
	labelProfile = "tether.profile="
	labelOwner   = "tether.owner="
	// labelPooled marks a pooled sandbox (Pools): a supervised sandbox
	// that serves one command.
	labelPooled = "tether.pooled=1"
)

// readyTimeout bounds how long a new supervisor may take to say it is up.
// A variable only so that the tests stretch it by the time scale under
// emulation (TestMain); tether never changes it.
var readyTimeout = 20 * time.Second

// watchdogSlack is added to a command's timeout and grace before the host
// gives up on the supervisor reporting its exit and destroys the session.
const watchdogSlack = 5 * time.Second

// Sessions owns the session sandboxes of one process, keyed by (profile,
// session). The zero value is ready to use; fields must not change after
// first use. A Sessions is safe for concurrent use. The owner must call
// Close before exiting (a crash leaves sandboxes for GC).
type Sessions struct {
	// StateRoot, CgroupPrefix, Grace and UserNSBase mean what they mean
	// on Runner; sessions and one-shot runs may share them.
	StateRoot    string
	CgroupPrefix string
	Grace        time.Duration
	UserNSBase   int
	// ExecGate, when set, decides every exec in every session sandbox:
	// the supervisor's own, each command's, and those of background
	// processes (see ExecEvent).
	ExecGate ExecGate
	// Pools, when set, are the owner's pooled sandboxes, which live in the
	// same profile cgroups: they count in each profile's pids budget next
	// to its sessions (admit), and a session that finds the budget full
	// takes its room from the profile's waiting pooled sandboxes first.
	Pools *Pools

	mu       sync.Mutex
	sessions map[sessionKey]*Session
	closed   bool
}

type sessionKey struct{ profile, name string }

// Open returns the live session (profile, name), creating its sandbox
// when there is none. An existing session with a different spec is an
// error wrapping ErrSpecChanged (close it first).
func (m *Sessions) Open(ctx context.Context, profile, name string, spec SessionSpec) (*Session, error) {
	if !nameRE().MatchString(name) {
		return nil, fmt.Errorf("%w: session name %q must be letters, digits, _ . - (at most 64)", ErrInvalidConfig, name)
	}
	key := sessionKey{profile, name}
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrSessionClosed
		}
		if m.sessions == nil {
			m.sessions = map[sessionKey]*Session{}
		}
		s := m.sessions[key]
		if s == nil {
			if err := m.admit(profile, spec); err != nil {
				m.mu.Unlock()
				return nil, err
			}
			// Reserve the key while the sandbox is built, so concurrent
			// first uses create one sandbox.
			s = &Session{mgr: m, key: key, spec: spec, ready: make(chan struct{})}
			m.sessions[key] = s
			m.mu.Unlock()
			s.readyErr = s.create(ctx)
			close(s.ready)
			if s.readyErr != nil {
				m.forget(s)
				return nil, s.readyErr
			}
			return s, nil
		}
		m.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if s.readyErr != nil || s.isDone() {
			m.forget(s) // a failed or dying session: build a new one
			continue
		}
		if !reflect.DeepEqual(s.spec, spec) {
			return nil, fmt.Errorf("opening session %s/%s: %w", profile, name, ErrSpecChanged)
		}
		return s, nil
	}
}

// admit checks that a new session of profile with spec fits in the
// profile's pids budget next to the sessions it already holds (being built
// included): each reserves its own pids limit.
//
// Preconditions: m.mu is held.
func (m *Sessions) admit(profile string, spec SessionSpec) error {
	total, each := spec.ProfileLimits.Pids, spec.Config.Limits.Pids
	if total <= 0 || each <= 0 {
		return nil // nothing to reserve against
	}
	n := int64(0)
	for k := range m.sessions {
		if k.profile == profile {
			n++
		}
	}
	// Waiting pooled sandboxes are speculative: a session goes first.
	pooled := m.Pools.held(profile)
	if over := (n+1)*each + pooled - total; over > 0 {
		pooled -= m.Pools.release(profile, over)
	}
	if (n+1)*each+pooled > total {
		held := ""
		if pooled > 0 {
			held = fmt.Sprintf(" and pooled sandboxes in use %d", pooled)
		}
		return fmt.Errorf("opening a session of profile %s: %w: %d sessions of %d pids each hold %d%s of %d (close a session, or raise limits.pids or lower limits.sandbox_pids)",
			profile, ErrSessionBudget, n, each, n*each, held, total)
	}
	return nil
}

// held is the pids budget profile's sessions reserve (each its own
// limit), zero for a nil m.
func (m *Sessions) held(profile string) int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, s := range m.sessions {
		if k.profile == profile {
			n += max(s.spec.Config.Limits.Pids, 0)
		}
	}
	return n
}

// Run runs cmd in the session (profile, name), opening it when needed.
func (m *Sessions) Run(ctx context.Context, profile, name string, spec SessionSpec, cmd Command) (*Result, error) {
	s, err := m.Open(ctx, profile, name, spec)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, cmd)
}

// Lookup returns the live session (profile, name), if any.
func (m *Sessions) Lookup(profile, name string) (*Session, bool) {
	m.mu.Lock()
	s := m.sessions[sessionKey{profile, name}]
	m.mu.Unlock()
	if s == nil {
		return nil, false
	}
	<-s.ready
	if s.readyErr != nil || s.isDone() {
		return nil, false
	}
	return s, true
}

// CloseSession closes the session (profile, name) and destroys its sandbox;
// closing a session that does not exist is not an error. The approval
// engine calls it when a session is cleared.
func (m *Sessions) CloseSession(profile, name string) error {
	m.mu.Lock()
	s := m.sessions[sessionKey{profile, name}]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	<-s.ready
	return s.Close()
}

// List describes the live sessions, sorted by profile and name.
func (m *Sessions) List() []SessionInfo {
	m.mu.Lock()
	var ss []*Session
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	var out []SessionInfo
	for _, s := range ss {
		select {
		case <-s.ready:
		default:
			continue
		}
		if s.readyErr == nil && !s.isDone() {
			out = append(out, s.Info())
		}
	}
	sortInfos(out)
	return out
}

// Close closes every session and refuses new ones.
func (m *Sessions) Close() error {
	m.mu.Lock()
	m.closed = true
	var ss []*Session
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	var errs []error
	for _, s := range ss {
		<-s.ready
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Sessions) forget(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions[s.key] == s {
		delete(m.sessions, s.key)
	}
}

// Session is one live session sandbox. It is safe for concurrent use:
// commands may run in parallel. It is owned by its Sessions.
type Session struct {
	mgr  *Sessions
	key  sessionKey
	spec SessionSpec
	// single: a pooled sandbox, which serves exactly one foreground
	// command and no background ones (Pools). Its protected paths are
	// planned and mounted when it is taken (protect), not when it is
	// made (setupOptions.lateProtect).
	single bool
	// protectLate, set by create for a single sandbox, is its set-up's
	// protectLate for its supervisor.
	protectLate func() ([]string, error)

	ready    chan struct{} // closed when create has finished
	readyErr error

	// Set by create, then read-only.
	id        string
	created   time.Time
	container *libcontainer.Container
	conn      *os.File
	initDone  chan struct{} // closed when the supervisor process has exited
	// supStderr keeps the start and the end of what the supervisor wrote
	// to its stderr (a Go runtime's panic or fatal error), for the
	// session's error;
	// supStderrDone is closed when every writer has closed it.
	supStderr     *headTail
	supStderrDone chan struct{}
	cleanup       cleanup // the sandbox's teardown (setUp's undo)
	grace         time.Duration
	cgPaths       map[string]string // the container's cgroup directories when a memory limit is set (oomKills)
	gate          *execGateRun      // nil without Sessions.ExecGate and a workspace
	disk          *diskLimit        // the workspace's disk limit, when set and enforced
	// notEnforced lists protections this environment cannot apply.
	notEnforced []string
	// audit reads the paths the session's Landlock ruleset refused, made
	// by the domain of the supervisor, pid llPid; nil without a ruleset
	// (or without the audit records).
	audit *landlockAudit
	llPid int

	writeMu sync.Mutex // serialises frames to the supervisor

	mu       sync.Mutex // guards the fields below
	calls    map[uint64]*call
	bg       map[uint64]*Background // background processes, running or recently finished
	nextID   uint64
	active   int // commands running in the foreground
	lastUsed time.Time
	done     bool  // closing or closed
	doneErr  error // why it ended, for pending calls
	idle     *time.Timer
	maxAge   *time.Timer
	closeErr error
	closed   chan struct{} // closed when teardown is complete
	// cleanupHeld, when set (holdCleanup), is closed when the teardown
	// may go on from the kill to the cleanup.
	cleanupHeld chan struct{}
}

// call is one command in flight, from exec to its exit frame.
type call struct {
	id         uint64
	args       []string
	shell      string
	background bool
	started    time.Time

	cw             *capWriter
	stdout, stderr io.Writer

	done chan struct{} // closed on exit or when the session ends
	exit *reply        // nil when the session ended first

	// running is closed when the supervisor reports a background
	// command's program executed (nil for foreground commands).
	running chan struct{}
}

// create builds the session's sandbox and starts its supervisor.
func (s *Session) create(ctx context.Context) (err error) {
	m := s.mgr
	spec := s.spec
	s.grace = m.Grace
	if s.grace == 0 {
		s.grace = 2 * time.Second
	}
	if err := supervisorRunsIn(spec.Config.Rootfs); err != nil {
		return err
	}
	supervisorExe := "/proc/self/exe"
	sb, err := setUp(spec.Config, setupOptions{
		stateRoot: m.StateRoot, cgroupPrefix: m.CgroupPrefix, profile: s.key.profile,
		profileLimits: spec.ProfileLimits, userNSBase: m.UserNSBase, execGate: m.ExecGate,
		lateProtect: s.single,
		adjust: func(lc *configs.Config) {
			if exe, ok := hostExecutable(); ok {
				// Run the supervisor from a read-only, nosuid bind of this
				// binary rather than from libcontainer's per-container
				// sealed copy (a memfd the size of the binary, held for
				// the session's life). The sandbox cannot change the host
				// file: the mount is read-only and a running executable
				// refuses writes (ETXTBSY).
				lc.Mounts = append(lc.Mounts, &configs.Mount{
					Source: exe, Destination: supervisorPath, Device: "bind",
					Flags: unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV,
				})
				supervisorExe = supervisorPath
			}
			lc.Labels = append(lc.Labels, labelSession+s.key.name, labelProfile+s.key.profile, fmt.Sprintf("%s%d", labelOwner, os.Getpid()))
			if s.single {
				lc.Labels = append(lc.Labels, labelPooled)
			}
		},
	})
	if err != nil {
		return err
	}
	// On failure, undo what was built, in reverse; on success the same
	// steps are the session's teardown.
	undo := &sb.undo
	defer func() {
		if err != nil {
			_ = undo.run()
		}
	}()
	cfg := sb.cfg
	s.id, s.notEnforced, s.gate, s.disk = sb.id, sb.notEnforced, sb.gate, sb.disk
	container := sb.container
	s.container = container

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("creating supervisor channel: %w", err)
	}
	hostEnd, childEnd := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "supervisor-child")
	undo.addFunc(func() { hostEnd.Close() })
	s.conn = hostEnd

	process := &libcontainer.Process{
		Args:       []string{supervisorExe, SupervisorArg},
		Env:        append(append([]string(nil), cfg.env()...), supervisorEnv+"=1"),
		Cwd:        cfg.cwd(),
		ExtraFiles: []*os.File{childEnd},
		Init:       true,
	}
	if sb.landlock != nil {
		// The supervisor applies it before its Go runtime starts (package
		// seccompexec): it and every command it runs are confined.
		llFile, err := sealedMemfd("tether-landlock", sb.landlock)
		if err != nil {
			return err
		}
		defer llFile.Close()
		process.ExtraFiles = append(process.ExtraFiles, llFile)
		process.Env = append(process.Env, fmt.Sprintf("%s=%d", seccompexec.LandlockEnv, 3+len(process.ExtraFiles)-1))
		s.audit = sb.audit
	}
	if sb.gate != nil && sb.gate.createChild != nil {
		// The supervisor installs the creation gate, with its helper,
		// before its Go runtime starts (package seccompexec).
		process.ExtraFiles = append(process.ExtraFiles, sb.gate.createChild)
		process.Env = append(process.Env, fmt.Sprintf("%s=%d", seccompexec.CreateEnv, 3+len(process.ExtraFiles)-1))
	}
	// Read by the host without pause into a bounded buffer, so that the
	// supervisor never blocks on its stderr and the host keeps only
	// supervisorStderrSize bytes of it. Commands get descriptors of their
	// own: only the supervisor (and the creation helper it forks before
	// its runtime starts) writes here.
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating supervisor stderr: %w", err)
	}
	process.Stderr = stderrW
	s.supStderr, s.supStderrDone = newHeadTail(supervisorStderrSize), make(chan struct{})
	go func() {
		defer close(s.supStderrDone)
		_, _ = io.Copy(s.supStderr, stderrR)
		stderrR.Close()
	}()
	s.initDone = make(chan struct{})
	started := make(chan error, 1)
	// The container's init carries a parent-death signal, which the
	// kernel ties to the thread that forked it. Fork from a thread locked
	// for the session's lifetime, so the Go runtime never retires it while
	// the sandbox lives; it exits (unlocked never) once init has.
	go func() {
		runtime.LockOSThread()
		if err := startGuarded(process, func() error { return container.Run(process) }); err != nil {
			started <- err
			close(s.initDone)
			return
		}
		started <- nil
		_, _ = process.Wait()
		close(s.initDone)
	}()
	err = <-started
	childEnd.Close()
	stderrW.Close()
	if sb.gate != nil {
		sb.gate.closeCreateChild()
	}
	if err != nil {
		return fmt.Errorf("starting session supervisor: %w", err)
	}
	if s.audit != nil {
		if s.llPid, err = process.Pid(); err != nil {
			s.audit = nil
			s.notEnforced = append(s.notEnforced, "landlock_audit")
		} else {
			audit, pid := s.audit, s.llPid
			undo.addFunc(func() { audit.forget(pid) })
		}
	}
	// The teardown's first step: the supervisor is gone before its
	// channel and container are (SIGKILL covers a failed start, where
	// nothing closed the channel).
	undo.addFunc(func() {
		_ = container.Signal(unix.SIGKILL)
		<-s.initDone
	})
	// The supervisor is tether's own and runs nothing of the session's
	// before it is asked to.
	if err = sb.started(process); err != nil {
		hostEnd.Close()
		_ = container.Signal(unix.SIGKILL)
		return err
	}
	s.notEnforced = sb.notEnforced
	if sb.late {
		pid, err := process.Pid()
		if err != nil {
			hostEnd.Close()
			_ = container.Signal(unix.SIGKILL)
			return err
		}
		s.protectLate = func() ([]string, error) { return sb.protectLate(pid) }
	}

	// The first frame must be "ready".
	readyCh := make(chan error, 1)
	go func() {
		var rep reply
		_, err := readFrame(hostEnd, nil, &rep)
		if err == nil && rep.Op != opReady {
			err = fmt.Errorf("unexpected first frame %q", rep.Op)
		}
		readyCh <- err
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case err = <-readyCh:
	case <-t.C:
		err = errors.New("timed out")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		hostEnd.Close()
		_ = container.Signal(unix.SIGKILL)
		if errors.Is(err, io.EOF) && spec.Config.Rootfs.Kind == rootfs.KindDir && !selfIsStatic() {
			// supervisorRunsIn found the loader; what else the binary
			// links is not checked (the loader's complaint is on the
			// supervisor's stderr).
			return s.withSupervisorStderr(fmt.Errorf("waiting for session supervisor: %w (it exited before it was ready: this tether is dynamically linked, and %s may lack a library it links; build tether statically with `make build`)", err, spec.Config.Rootfs.Dir))
		}
		return s.withSupervisorStderr(fmt.Errorf("waiting for session supervisor: %w", err))
	}

	now := time.Now()
	s.created, s.lastUsed = now, now
	s.calls = map[uint64]*call{}
	s.closed = make(chan struct{})
	s.cleanup = undo.release()
	if cfg.Limits.MemoryBytes > 0 {
		s.cgPaths = sb.cgroupPaths
	}
	idle, maxAge := spec.Options.IdleTimeout, spec.Options.MaxAge
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	s.mu.Lock()
	s.idle = time.AfterFunc(idle, func() { s.idleCheck(idle) })
	s.maxAge = time.AfterFunc(maxAge, func() { s.end(ErrSessionClosed) })
	s.mu.Unlock()
	go s.readLoop()
	go func() {
		<-s.initDone
		s.end(s.withSupervisorStderr(fmt.Errorf("%w: supervisor exited", ErrSessionBroken)))
	}()
	return nil
}

const (
	// supervisorStderrSize bounds what is kept of the supervisor's
	// stderr: its first half and its last half. A Go runtime's panic
	// says what failed in its first lines (panic: …, fatal error: …,
	// SIGABRT: abort, then the failing goroutine); a message of tether's
	// own is a last line.
	supervisorStderrSize = 4 << 10
	// supervisorStderrGrace is how long a broken session waits for the
	// supervisor's stderr to be read to its end: its last words are
	// written before it dies, and read a moment later.
	supervisorStderrGrace = time.Second
)

// withSupervisorStderr returns err with what the supervisor wrote to its
// stderr, when it wrote anything and the session is not already ending (a
// teardown closes the channel, which the read loop sees).
func (s *Session) withSupervisorStderr(err error) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done {
		return err
	}
	select {
	case <-s.supStderrDone:
	case <-time.After(supervisorStderrGrace):
	}
	text := s.supStderr.text()
	if text == "" {
		return err
	}
	return fmt.Errorf("%w (the supervisor's stderr: %s)", err, text)
}

// headTail keeps the first and the last size/2 bytes written to it. Safe
// for concurrent use; the zero value is not usable (newHeadTail).
type headTail struct {
	mu   sync.Mutex
	head []byte
	tail *ring
}

func newHeadTail(size int) *headTail {
	return &headTail{head: make([]byte, 0, size/2), tail: newRing(size / 2)}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	k := min(len(p), cap(h.head)-len(h.head))
	h.head = append(h.head, p[:k]...)
	if k < n {
		_, _ = h.tail.Write(p[k:])
	}
	return n, nil
}

// text returns what was kept as printable UTF-8 text. The text is tether's
// own program's, but written inside the sandbox: other control
// characters than newline and tab are replaced, and a gap where bytes
// were dropped is marked, the line it cut removed.
func (h *headTail) text() string {
	h.mu.Lock()
	b := append([]byte(nil), h.head...)
	h.mu.Unlock()
	tail, dropped := h.tail.snapshot()
	if dropped {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i]
		}
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		return strings.TrimSpace(printable(b) + "\n…\n" + printable(tail))
	}
	return strings.TrimSpace(printable(append(b, tail...)))
}

func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || unicode.IsPrint(r) {
			return r
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
}

// supervisorPath is where this binary is bound read-only in a session
// sandbox (inside the sandbox's own /dev tmpfs, so no root filesystem is
// touched).
const supervisorPath = "/dev/.tether-supervisor"

// supervisorRunsIn checks that this binary can start inside root l as a
// session's supervisor, which is executed after the switch to the
// sandbox's root: a dynamically linked tether (a plain `go build`, a test
// binary) needs its loader there. The host layout binds the host's system
// directories, which hold it; a prepared root (tether rootfs build --from
// busybox) usually does not, and the supervisor would die before it
// speaks. Only the loader is checked: a root that has it but lacks a
// library the binary links still fails at the start.
func supervisorRunsIn(l rootfs.Layout) error {
	if l.Kind != rootfs.KindDir {
		return nil
	}
	interp, err := selfInterp()
	if err != nil {
		return fmt.Errorf("reading this binary's ELF interpreter: %w", err)
	}
	missing, err := rootfs.MissingInterpreter(l.Dir, interp)
	if err != nil {
		return fmt.Errorf("checking root %s for this binary's loader: %w", l.Dir, err)
	}
	if missing != "" {
		return fmt.Errorf("%w: a session runs tether inside its root as the supervisor, and %s lacks this tether's loader %s; build tether statically with `make build` (or use the host layout)", ErrDynamicBinary, l.Dir, missing)
	}
	return nil
}

// hostExecutable returns the path of the running binary when it still
// names the file being executed (not deleted or replaced), or, in a
// process RunSealed re-executed from a sealed copy, the file it was
// copied from.
func hostExecutable() (string, bool) {
	exe, dev, ino := sealedFrom.path, sealedFrom.dev, sealedFrom.ino
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", false
		}
		var b unix.Stat_t
		if unix.Stat("/proc/self/exe", &b) != nil {
			return "", false
		}
		dev, ino = b.Dev, b.Ino
	}
	var a unix.Stat_t
	if unix.Stat(exe, &a) != nil {
		return "", false
	}
	return exe, a.Dev == dev && a.Ino == ino
}

// idleCheck closes the session if nothing ran for the idle timeout.
func (s *Session) idleCheck(idle time.Duration) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	if left := idle - time.Since(s.lastUsed); s.active > 0 || left > 0 {
		if left <= 0 {
			left = idle
		}
		s.idle.Reset(left)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.end(fmt.Errorf("%w: idle for %s", ErrSessionClosed, idle))
}

// readLoop dispatches the supervisor's frames until the channel fails.
// Any protocol violation breaks the session.
func (s *Session) readLoop() {
	var buf []byte
	for {
		var rep reply
		var err error
		buf, err = readFrame(s.conn, buf, &rep)
		if cap(buf) > 4<<10 {
			buf = nil // do not keep a large buffer in an idle session
		}
		if err == nil {
			err = checkReply(&rep)
		}
		if err == nil {
			err = s.dispatch(&rep)
		}
		if err != nil {
			s.end(s.withSupervisorStderr(fmt.Errorf("%w: %w", ErrSessionBroken, err)))
			return
		}
	}
}

func (s *Session) dispatch(rep *reply) error {
	if rep.Op == opReady {
		return errors.New("second ready frame")
	}
	s.mu.Lock()
	c := s.calls[rep.ID]
	if c != nil && rep.Op == opExit {
		delete(s.calls, rep.ID)
	}
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("frame %s for unknown command %d", rep.Op, rep.ID)
	}
	switch rep.Op {
	case opStarted:
		if c.running == nil || c.exit != nil {
			return fmt.Errorf("started frame for command %d", rep.ID)
		}
		select {
		case <-c.running:
			return fmt.Errorf("second started frame for command %d", rep.ID)
		default:
			close(c.running)
		}
		Trace("session started frame")
	case opOutput:
		w := c.stdout
		if rep.Stream == 2 {
			w = c.stderr
		}
		_, _ = w.Write(rep.Data)
	case opExit:
		Trace("session exit frame")
		c.exit = rep
		close(c.done)
	}
	return nil
}

// send writes one frame to the supervisor.
func (s *Session) send(req *request) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := writeFrame(s.conn, req); err != nil {
		return fmt.Errorf("%w: writing to supervisor: %w", ErrSessionBroken, err)
	}
	return nil
}

// begin registers a new command; it fails when the session is done.
func (s *Session) begin(c *call, foreground bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.doneErr
	}
	if s.single && (s.nextID > 0 || !foreground) {
		// Checked here, where every command starts, not by the pool's
		// discipline alone.
		return ErrSandboxUsed
	}
	s.nextID++
	c.id = s.nextID
	c.started = time.Now()
	c.done = make(chan struct{})
	s.calls[c.id] = c
	if foreground {
		s.active++
	}
	s.lastUsed = c.started
	return nil
}

// finish marks a foreground command's end for the idle timer.
func (s *Session) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	s.lastUsed = time.Now()
}

// Run runs cmd in the session with the session Config's per-command limits.
func (s *Session) Run(ctx context.Context, cmd Command) (*Result, error) {
	return s.Exec(ctx, cmd, ExecOptions{})
}

// Exec runs cmd in the session and waits for it. Only this command is
// stopped by its timeout or by ctx (SIGTERM to its process group, the
// session's grace, SIGKILL); the session and its other processes go on.
// The Result's ExitCode is 127/126 with ErrNotFound/ErrNotExecutable when
// the program cannot be started. Output is written to cmd.Stdout/Stderr
// from the session's reader: slow writers delay the session's other
// commands.
func (s *Session) Exec(ctx context.Context, cmd Command, opts ExecOptions) (*Result, error) {
	if cmd.Shell == "" && (len(cmd.Args) == 0 || cmd.Args[0] == "") {
		return nil, ErrNoCommand
	}
	if isDevNull(cmd.Stdin) {
		// The supervisor gives a command without input its own
		// /dev/null: the same empty stdin, without a pipe, a pump and
		// its frames on the command's way.
		cmd.Stdin = nil
	}
	limits := s.spec.Config.Limits
	if opts.Timeout > 0 {
		limits.Timeout = opts.Timeout
	}
	if opts.OutputBytes > 0 {
		limits.OutputBytes = opts.OutputBytes
	}
	cw := &capWriter{limit: limits.OutputBytes}
	c := &call{args: cmd.Args, shell: cmd.Shell, cw: cw, stdout: cw.stream(cmd.Stdout), stderr: cw.stream(cmd.Stderr)}
	if err := s.begin(c, true); err != nil {
		return nil, err
	}
	defer s.finish()
	// What the exec gate and the Landlock ruleset refused while the
	// command ran is its record; with commands or background processes
	// running alongside, theirs is in it too (both see processes, not
	// calls).
	var mark gateMark
	if s.gate != nil {
		mark = s.gate.mark()
	}
	Trace("session exec")
	res, err := s.await(ctx, c, s.execRequest(c, cmd, limits), cmd.Stdin, limits.Timeout, nil)
	Trace("session awaited")
	if res != nil && s.gate != nil {
		res.ExecBlocked, res.Execs, res.ExecsDropped = s.gate.since(mark)
		res.CreateBlocked = s.gate.createsSince(mark)
		res.Accesses, res.AccessesLost, res.observedNotifications = s.gate.accessesSince(mark)
	}
	if res != nil && s.audit != nil {
		var aerr error
		if res.PathsRefused, aerr = s.audit.take(s.llPid); aerr != nil {
			res.NotEnforced = append(slices.Clip(res.NotEnforced), "landlock_audit")
		}
	}
	if res != nil && s.gate != nil {
		res.PathsRefused = append(res.PathsRefused, s.gate.sealedSince(mark)...)
	}
	return res, err
}

// protect plans and mounts the protected paths of a pooled sandbox
// taken for its command, as a cold sandbox's are planned at its start:
// from what the workspace holds now. Nothing of the sandbox's has run;
// the caller runs the command only if it returns nil, and otherwise ends
// the sandbox. It is called once, before Exec.
func (s *Session) protect() error {
	if s.protectLate == nil {
		return nil
	}
	late := s.protectLate
	s.protectLate = nil
	notEnforced, err := late()
	if err != nil {
		return err
	}
	for _, ne := range notEnforced {
		if !slices.Contains(s.notEnforced, ne) {
			s.notEnforced = append(slices.Clip(s.notEnforced), ne)
		}
	}
	return nil
}

// Spec returns the spec the session was opened with.
func (s *Session) Spec() SessionSpec { return s.spec }

// execRequest is the exec frame of c.
func (s *Session) execRequest(c *call, cmd Command, limits Limits) *request {
	req := &request{
		Op: opExec, ID: c.id, Args: cmd.Args, Shell: cmd.Shell,
		TimeoutMS: limits.Timeout.Milliseconds(), GraceMS: s.grace.Milliseconds(),
		OutputMax: limits.OutputBytes, Persist: s.spec.Options.PersistCwd,
		HasStdin: cmd.Stdin != nil,
	}
	if limits.Timeout > 0 && req.TimeoutMS == 0 {
		req.TimeoutMS = 1
	}
	return req
}

// await sends the exec request, streams stdin and waits for the exit.
func (s *Session) await(ctx context.Context, c *call, req *request, stdin io.Reader, timeout time.Duration, onStart func()) (*Result, error) {
	oom := s.oomKills()
	if err := s.send(req); err != nil {
		s.end(err)
		return nil, err
	}
	Trace("session request sent")
	if onStart != nil {
		onStart()
	}
	if stdin != nil {
		go s.pumpStdin(c, stdin, !req.PTY)
	}
	var watchdog <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout + s.grace + watchdogSlack)
		defer t.Stop()
		watchdog = t.C
	}
	select {
	case <-c.done:
	case <-watchdog:
		s.end(fmt.Errorf("%w: command %d outlived its timeout", ErrSessionBroken, c.id))
		<-c.done
	case <-ctx.Done():
		s.stopCall(c)
	}
	res, err := s.result(c)
	if res != nil && s.oomKills() > oom {
		// The kernel's count, not the supervisor's word; with commands
		// running concurrently it may be another one's kill.
		res.OOMKilled = true
	}
	if res != nil && s.disk != nil {
		res.DiskLimitHit = s.disk.hit()
	}
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("running in session: %w", ctx.Err())
	}
	return res, err
}

// stopCall stops a command whose caller gave up: SIGTERM, grace, SIGKILL,
// and a supervisor that does not report the exit in time breaks the
// session.
func (s *Session) stopCall(c *call) {
	_ = s.send(&request{Op: opSignal, ID: c.id, Signal: int(unix.SIGTERM)})
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	_ = s.send(&request{Op: opSignal, ID: c.id, Signal: int(unix.SIGKILL)})
	t.Reset(watchdogSlack)
	select {
	case <-c.done:
	case <-t.C:
		s.end(fmt.Errorf("%w: command %d did not stop", ErrSessionBroken, c.id))
		<-c.done
	}
}

// isDevNull reports whether r is a file open on the null device (a
// command's stdin redirected from /dev/null, as for `tether run`
// under a scheduler): reading it gives end of file at once.
func isDevNull(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	// Stat, not Fd: Fd would switch a pollable file to blocking mode.
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3
}

// pumpStdin streams r to the command's stdin in chunks.
func (s *Session) pumpStdin(c *call, r io.Reader, eof bool) {
	buf := make([]byte, outputChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			select {
			case <-c.done:
				return
			default:
			}
			if s.send(&request{Op: opStdin, ID: c.id, Data: buf[:n]}) != nil {
				return
			}
		}
		if err != nil {
			break
		}
	}
	if eof {
		_ = s.send(&request{Op: opEOF, ID: c.id})
	}
}

// result turns a finished call into a Result.
func (s *Session) result(c *call) (*Result, error) {
	res := &Result{ContainerID: s.id, Duration: time.Since(c.started), NotEnforced: s.notEnforced}
	rep := c.exit
	if rep == nil {
		s.mu.Lock()
		err := s.doneErr
		s.mu.Unlock()
		return nil, fmt.Errorf("running in session: %w", err)
	}
	res.ExitCode = rep.ExitCode
	if rep.Signal > 0 {
		res.Signal = unix.SignalName(unix.Signal(rep.Signal))
		res.ExitCode = 128 + rep.Signal
	}
	res.TimedOut = rep.TimedOut
	res.OutputTruncated = rep.Truncated || c.cw.truncated()
	res.CPUTime = time.Duration(rep.CPUMicros) * time.Microsecond
	res.PeakMemory = rep.MaxRSSKiB << 10
	prog := c.shell
	if len(c.args) > 0 {
		prog = c.args[0]
	}
	switch rep.StartError {
	case startNotFound:
		return res, fmt.Errorf("%w: %s", ErrNotFound, prog)
	case startNoExec:
		return res, fmt.Errorf("%w: %s", ErrNotExecutable, prog)
	case startOther:
		return nil, fmt.Errorf("starting %s in session: %s", prog, strings.ToValidUTF8(rep.Message, "?"))
	}
	return res, nil
}

// oomKills reads the session memory cgroup's OOM-kill counter (v1 or v2),
// zero when there is no memory limit.
func (s *Session) oomKills() int64 {
	return oomKills(s.cgPaths)
}

// isDone reports whether the session is closing or closed.
func (s *Session) isDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Info describes the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionInfo{
		Profile: s.key.profile, Session: s.key.name, ContainerID: s.id,
		Created: s.created, LastUsed: s.lastUsed, Running: len(s.calls),
	}
}

// Close ends the session: every process in it is killed and its container,
// cgroups, root and lock are removed. It waits for the teardown and returns
// its error; closing again returns the same.
func (s *Session) Close() error {
	s.end(ErrSessionClosed)
	<-s.closed
	return s.closeErr
}

// Done returns a channel closed when the session has been torn down.
func (s *Session) Done() <-chan struct{} { return s.closed }

// end starts the teardown once, recording why for pending commands.
func (s *Session) end(why error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done, s.doneErr = true, why
	s.idle.Stop()
	s.maxAge.Stop()
	s.mu.Unlock()
	s.mgr.forget(s)
	go s.teardown()
}

func (s *Session) teardown() {
	Trace("session teardown")
	defer Trace("session torn down")
	s.kill()
	s.mu.Lock()
	held := s.cleanupHeld
	s.mu.Unlock()
	if held != nil {
		<-held
	}
	err := s.cleanup.run()
	s.mu.Lock()
	calls := s.calls
	s.calls = map[uint64]*call{}
	s.closeErr = err
	s.mu.Unlock()
	for _, c := range calls {
		close(c.done) // c.exit stays nil: the session ended first
	}
	close(s.closed)
}

// kill kills every process of the sandbox: closing the channel makes the
// supervisor (pid 1) exit, which kills the pid namespace; SIGKILL covers
// a supervisor that does not. Killing again does nothing.
func (s *Session) kill() {
	s.conn.Close()
	_ = s.container.Signal(unix.SIGKILL)
}

// holdCleanup makes the teardown of s, whenever it starts, kill the
// sandbox's processes at once (kill) but wait with the rest (unmounting,
// removing its cgroups, container state and root) until release is
// called. release may be called more than once; the caller must call it.
func (s *Session) holdCleanup() (release func()) {
	held := make(chan struct{})
	s.mu.Lock()
	s.cleanupHeld = held
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(held) }) }
}

// HostPIDs returns the host pids of every process in the session sandbox
// (from its cgroup), supervisor included.
func (s *Session) HostPIDs() ([]int, error) {
	return s.container.Processes()
}

func sortInfos(infos []SessionInfo) {
	sort.Slice(infos, func(i, j int) bool {
		if infos[i].Profile != infos[j].Profile {
			return infos[i].Profile < infos[j].Profile
		}
		return infos[i].Session < infos[j].Session
	})
}
