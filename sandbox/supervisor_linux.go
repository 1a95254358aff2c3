package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/sandbox/seccompexec"
)

// The supervisor is the init process of a session sandbox: this binary,
// re-executed inside the container as "/proc/self/exe tether-supervisor"
// with supervisorEnv set and the control socket as fd 3. It runs in the
// sandbox with the sandbox's namespaces, cgroup, capabilities and seccomp
// filter, so nothing it does is trusted by the host.

// SupervisorArg is the first argument of a session supervisor process.
const SupervisorArg = "tether-supervisor"

// supervisorEnv marks a supervisor process (with SupervisorArg); it is
// removed from the environment commands inherit.
const supervisorEnv = "_TETHER_SUPERVISOR"

// commandOOMScoreAdj is the OOM score adjustment of every command.
const commandOOMScoreAdj = "500"

// drainGrace is how long a finished command's output pipes may stay open
// (held by a child it left running) before its exit is reported anyway.
const drainGrace = 50 * time.Millisecond

// persistWrapper runs a shell string with its working directory and
// exported environment dumped to fd 3 when it exits, even through exit.
// The user's code runs with fd 3 closed, so its children never hold it.
const persistWrapper = `trap '__tether_rc=$?; { command cat /proc/self/environ; printf "\0\0"; } >&3 2>/dev/null; exit $__tether_rc' EXIT
__tether_s=$1; shift; eval "$__tether_s" 3>&-`

// IsSupervisor reports whether this process was started as a session
// supervisor.
func IsSupervisor() bool {
	return len(os.Args) > 1 && os.Args[1] == SupervisorArg && os.Getenv(supervisorEnv) == "1"
}

// init turns the process into the supervisor before any main package runs:
// it dispatches on its own marker so the container-init hook of the main
// package (IsInit/Init) needs no change to support sessions.
func init() {
	if IsSupervisor() {
		os.Exit(runSupervisor())
	}
}

// supervisor is the state of the supervisor process.
type supervisor struct {
	conn *os.File

	writeMu sync.Mutex // serialises frames on conn

	// mu guards the fields below and is held across fork so that the
	// reaper cannot see a child's exit before it is registered.
	mu    sync.Mutex
	procs map[int]*supProc    // by pid
	byID  map[uint64]*supProc // by request id
	env   []string            // persisted environment
	cwd   string              // persisted working directory

	// oomFD is the supervisor's own oom_score_adj, open for writing (-1
	// when it could not be opened), and oomOwn the value it had at start:
	// raised to commandOOMScoreAdj around each fork (exec).
	oomFD  int
	oomOwn []byte
}

// supProc is one command run by the supervisor.
type supProc struct {
	id      uint64
	pid     int
	persist bool
	stdin   *os.File // nil when closed or absent
	ptmx    *os.File // pty master, nil without a pty

	outMax int64

	mu        sync.Mutex // guards the fields below
	outN      int64
	truncated bool
	timedOut  bool
	finished  bool // the exit frame was sent: no output frames after it

	inMu   sync.Mutex // guards the input queue
	inQ    [][]byte
	inEOF  bool
	inBusy bool

	readers sync.WaitGroup
	exited  chan unix.WaitStatus
	rusage  unix.Rusage
	outputs []*os.File // stdout, stderr (or the pty master), read by forward
	stateR  *os.File   // persist dump pipe, read by readState

	state       bytes.Buffer // persist dump (fd 3), capped
	stateTooBig bool
	stateOK     chan struct{} // closed when readState is done
}

func runSupervisor() int {
	// Every thread of the supervisor counts against its session's pids
	// budget: one P, and the channel read through the poller rather than
	// by a thread blocked in read(2), keep them few.
	runtime.GOMAXPROCS(1)
	startThreads(supervisorIdleThreads)
	_ = unix.SetNonblock(3, true)
	// The session's commands run as the supervisor's own uid in its user
	// namespace: without this they could ptrace it or read its
	// /proc/1/{mem,environ,fd} (ptrace_may_access) and act on the host's
	// control channel. Non-dumpable, only CAP_SYS_PTRACE (which no sandbox
	// has) would let them. execve resets the flag for the commands
	// themselves, so it must be set here, before the first command exists.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		os.Stderr.WriteString("tether supervisor: making the supervisor non-dumpable: " + err.Error() + "\n")
		return 1
	}
	conn := os.NewFile(3, "control")
	unix.CloseOnExec(3)
	// Termination signals from inside the sandbox must not take the
	// supervisor down; catching them (rather than ignoring them) keeps
	// the default disposition for the commands it executes.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2)
	go func() {
		for range sigs {
		}
	}()
	cwd, _ := os.Getwd()
	var env []string
	for _, kv := range os.Environ() {
		// The Landlock descriptor's variable is gone from libc's
		// environment (seccompexec), not from the Go runtime's copy.
		if !strings.HasPrefix(kv, supervisorEnv+"=") && !strings.HasPrefix(kv, seccompexec.LandlockEnv+"=") && !strings.HasPrefix(kv, seccompexec.CreateEnv+"=") {
			env = append(env, kv)
		}
	}
	s := &supervisor{conn: conn, procs: map[int]*supProc{}, byID: map[uint64]*supProc{}, env: env, cwd: cwd}
	s.oomFD, s.oomOwn = openOwnOOMScore()
	// The first decode of a frame type builds its decoder by reflection
	// (~0.1 ms on a loaded 2-CPU VM, 2 µs after): paid here, before
	// ready, a pooled sandbox does not pay it on its one command's way.
	var warm request
	_ = decodeStrict([]byte(`{"op":"exec","id":1,"args":["true"],"timeout_ms":1,"grace_ms":1,"output_max":1}`), &warm)
	go s.reap()
	s.send(&reply{Op: opReady})
	var buf []byte
	for {
		var req request
		var err error
		buf, err = readFrame(conn, buf, &req)
		if err != nil {
			// The host closed the channel (or died): end the session.
			// Exiting pid 1 kills every process in the namespace.
			return 0
		}
		s.handle(&req)
	}
}

// supervisorIdleThreads is how many threads the supervisor starts before
// anything else, enough that the Go runtime never needs another
// (TestSupervisorSurvivesFullSession): one runs the supervisor's single P,
// the others wait for it to hand that P off while a goroutine is in a
// blocking system call (the signal loop, the fork of a command, the read
// of its exec status). Its threads count in the session's pids limit, and
// a runtime that cannot create a thread aborts ("failed to create new OS
// thread"): started once, before the first command, the supervisor's
// count is fixed and a session full of processes cannot take it down.
const supervisorIdleThreads = 6

// startThreads makes the Go runtime create n threads now: n goroutines
// each locked to its own thread, all parked at once, then unlocked. The
// runtime keeps an unlocked idle thread for reuse and never ends it.
func startThreads(n int) {
	var locked sync.WaitGroup
	release := make(chan struct{})
	var done sync.WaitGroup
	for range n {
		locked.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
}

func (s *supervisor) send(r *reply) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := writeFrame(s.conn, r); err != nil {
		os.Exit(1) // the host is gone or the frame is unencodable
	}
}

func (s *supervisor) handle(req *request) {
	s.mu.Lock()
	p := s.byID[req.ID]
	s.mu.Unlock()
	switch req.Op {
	case opExec:
		if p != nil || req.ID == 0 {
			return
		}
		s.exec(req)
	case opStdin:
		if p != nil && len(req.Data) > 0 {
			p.queueInput(append([]byte(nil), req.Data...), false)
		}
	case opEOF:
		if p != nil && p.ptmx == nil {
			p.queueInput(nil, true)
		}
	case opSignal:
		if p != nil && req.Signal > 0 && req.Signal < 65 {
			_ = unix.Kill(-p.pid, unix.Signal(req.Signal))
		}
	case opResize:
		if p != nil && p.ptmx != nil {
			_ = pty.Setsize(p.ptmx, &pty.Winsize{Rows: req.Rows, Cols: req.Cols})
		}
	}
}

// reap collects every child's exit, commands and orphans alike: the
// supervisor is pid 1 of the sandbox, so orphans are reparented to it.
func (s *supervisor) reap() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGCHLD)
	for {
		for {
			var ws unix.WaitStatus
			var ru unix.Rusage
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, &ru)
			if err == unix.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			s.mu.Lock()
			p := s.procs[pid]
			delete(s.procs, pid)
			s.mu.Unlock()
			if p != nil {
				p.rusage = ru
				p.exited <- ws
			}
		}
		<-ch
	}
}

func (s *supervisor) exec(req *request) {
	p := &supProc{id: req.ID, outMax: req.OutputMax, exited: make(chan unix.WaitStatus, 1), persist: req.Persist && req.Shell != "" && !req.PTY, stateOK: make(chan struct{})}
	fail := func(kind string, err error) {
		code := 126
		if kind == startNotFound {
			code = 127
		} else if kind == startOther {
			code = 125
		}
		s.send(&reply{Op: opExit, ID: req.ID, ExitCode: code, StartError: kind, Message: truncate(err.Error(), 1024)})
	}

	s.mu.Lock()
	env := append([]string(nil), s.env...)
	cwd := s.cwd
	s.mu.Unlock()
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		// The persisted directory was removed: start at the root rather
		// than fail as if the program were missing.
		cwd = "/"
	}
	env = setEnv(env, "PWD", cwd)
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && !strings.ContainsRune(kv, 0) {
			env = setEnv(env, k, v)
		}
	}

	args := req.Args
	switch {
	case req.Shell != "" && p.persist:
		args = []string{"/bin/sh", "-c", persistWrapper, "sh", req.Shell}
	case req.Shell != "":
		args = []string{"/bin/sh", "-c", req.Shell}
	}
	if len(args) == 0 || args[0] == "" {
		fail(startOther, ErrNoCommand)
		return
	}
	path, err := lookPath(args[0], env, cwd)
	if err != nil {
		kind := startNoExec
		if errors.Is(err, os.ErrNotExist) {
			kind = startNotFound
		}
		fail(kind, err)
		return
	}

	// The child's ends of its files are raw descriptors, closed right
	// after the fork: the parent's reads see end of file as soon as the
	// command (and whatever it left holding them) is gone, not after
	// the parent's own post-fork work, and they cost no registration
	// with the runtime's poller.
	var childFDs []int
	closeChildEnds := func() {
		for _, fd := range childFDs {
			unix.Close(fd)
		}
		childFDs = nil
	}
	defer closeChildEnds()
	var outR, errR *os.File
	files := make([]uintptr, 3, 4)
	attr := &syscall.SysProcAttr{Setpgid: true}
	if req.PTY {
		ptmx, tty, err := pty.Open()
		if err != nil {
			fail(startOther, err)
			return
		}
		if req.Rows > 0 && req.Cols > 0 {
			_ = pty.Setsize(ptmx, &pty.Winsize{Rows: req.Rows, Cols: req.Cols})
		}
		ttyFD, err := unix.FcntlInt(tty.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		tty.Close()
		if err != nil {
			ptmx.Close()
			fail(startOther, os.NewSyscallError("fcntl", err))
			return
		}
		childFDs = append(childFDs, ttyFD)
		p.ptmx, p.stdin, outR = ptmx, ptmx, ptmx
		files[0], files[1], files[2] = uintptr(ttyFD), uintptr(ttyFD), uintptr(ttyFD)
		attr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		if req.HasStdin {
			w, r, err := childPipe(false)
			if err != nil {
				fail(startOther, err)
				return
			}
			childFDs = append(childFDs, r)
			p.stdin = w
			files[0] = uintptr(r)
		} else {
			null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				fail(startOther, &os.PathError{Op: "open", Path: os.DevNull, Err: err})
				return
			}
			childFDs = append(childFDs, null)
			files[0] = uintptr(null)
		}
		var ow, ew int
		if outR, ow, err = childPipe(true); err != nil {
			if p.stdin != nil {
				p.stdin.Close()
			}
			fail(startOther, err)
			return
		}
		childFDs = append(childFDs, ow)
		if errR, ew, err = childPipe(true); err != nil {
			outR.Close()
			if p.stdin != nil {
				p.stdin.Close()
			}
			fail(startOther, err)
			return
		}
		childFDs = append(childFDs, ew)
		files[1], files[2] = uintptr(ow), uintptr(ew)
	}
	var stateR *os.File
	if p.persist {
		r, w, err := childPipe(true)
		if err != nil {
			for _, f := range []*os.File{outR, errR, p.stdin} {
				if f != nil {
					f.Close()
				}
			}
			fail(startOther, err)
			return
		}
		stateR = r
		childFDs = append(childFDs, w)
		files = append(files, uintptr(w))
	}

	s.mu.Lock()
	raised := s.setOOMScore([]byte(commandOOMScoreAdj))
	pid, err := syscall.ForkExec(path, args, &syscall.ProcAttr{Dir: cwd, Env: env, Files: files, Sys: attr})
	if raised {
		s.setOOMScore(s.oomOwn)
	}
	if err == nil {
		p.pid = pid
		s.procs[pid] = p
		s.byID[p.id] = p
	}
	s.mu.Unlock()
	closeChildEnds()
	if err != nil {
		for _, f := range []*os.File{outR, errR, stateR, p.stdin} {
			if f != nil {
				f.Close()
			}
		}
		kind := startOther
		switch {
		case errors.Is(err, unix.ENOENT):
			kind = startNotFound
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EISDIR):
			kind = startNoExec
		}
		fail(kind, err)
		return
	}

	if req.Background {
		// Before any frame of its output or exit, so the host can tell a
		// start that failed (no pids left, say) from one that ran.
		s.send(&reply{Op: opStarted, ID: p.id})
	}
	p.readers.Add(1)
	p.outputs = append(p.outputs, outR)
	go s.forward(p, outR, 1)
	if errR != nil {
		p.readers.Add(1)
		p.outputs = append(p.outputs, errR)
		go s.forward(p, errR, 2)
	}
	if stateR != nil {
		p.stateR = stateR
		go p.readState(stateR)
	}
	go s.wait(p, time.Duration(req.TimeoutMS)*time.Millisecond, time.Duration(req.GraceMS)*time.Millisecond)
}

// openOwnOOMScore opens the supervisor's own oom_score_adj for writing
// and reads its value, for setOOMScore; -1 when it cannot.
//
// A command exceeding the session's memory limit must be what the OOM
// killer picks, not the supervisor, whose death ends the session. The
// command inherits the score from the fork, so it has it from its first
// instruction: the supervisor raises its own around the fork (the fork
// waits for the command's exec) and lowers it back, which needs no
// privilege as long as it does not go below where it started
// (oom_score_adj_min). Limit: while the fork waits for the exec (the
// exec gate's check included) the supervisor has the command's score too,
// so an OOM kill in that window may pick it (the kernel takes the largest
// process among equal scores; a command can also lower its own score to
// the supervisor's, before as now). Writing each command's
// /proc/PID/oom_score_adj instead came after its exec (a short command was
// gone before it), and its open for writing, in a sandbox with a
// workspace, was one round trip through the creation gate and its helper
// per command. Opened once here, for writing only (no O_CREAT, no
// O_TRUNC: what a Landlock ruleset's write right on /proc allows).
func openOwnOOMScore() (int, []byte) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return -1, nil
	}
	fd, err := unix.Open("/proc/self/oom_score_adj", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil
	}
	return fd, bytes.TrimSpace(own)
}

// setOOMScore writes v to the supervisor's own oom_score_adj and reports
// whether it took. Preconditions: s.mu is held (the score is the next
// fork's).
func (s *supervisor) setOOMScore(v []byte) bool {
	if s.oomFD < 0 {
		return false
	}
	_, err := unix.Write(s.oomFD, v)
	return err == nil
}

// childPipe makes a pipe for a command: the end this process keeps, as a
// non-blocking file served by the runtime's poller, and the child's end as
// a raw close-on-exec descriptor (the caller closes it after the fork).
// With parentReads the child writes (its stdout, stderr, the persist
// dump); otherwise the child reads (its stdin).
func childPipe(parentReads bool) (*os.File, int, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, os.NewSyscallError("pipe2", err)
	}
	mine, theirs := fds[0], fds[1]
	if !parentReads {
		mine, theirs = fds[1], fds[0]
	}
	if err := unix.SetNonblock(mine, true); err != nil {
		unix.Close(mine)
		unix.Close(theirs)
		return nil, -1, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(mine), "|pipe"), theirs, nil
}

// forward relays one output stream as frames, enforcing the output cap
// (the host enforces it again: this copy is not trusted).
func (s *supervisor) forward(p *supProc, f *os.File, stream int) {
	defer f.Close()
	buf := make([]byte, outputChunk)
	eof := readUntilDrained(f, buf, func(b []byte) {
		p.mu.Lock()
		defer p.mu.Unlock()
		keep := int64(len(b))
		if p.outMax > 0 && p.outN+keep > p.outMax {
			keep = max(p.outMax-p.outN, 0)
			p.truncated = true
		}
		p.outN += keep
		if keep > 0 && !p.finished {
			s.send(&reply{Op: opOutput, ID: p.id, Stream: stream, Data: b[:keep]})
		}
	})
	p.readers.Done()
	if !eof {
		// Children the command left running still hold the stream: keep
		// reading (and discarding) so their writes do not get SIGPIPE.
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
		}
	}
}

// readUntilDrained reads f, handing data to handle, until end of file
// (true) or, once the reader is told the command has exited (a read
// deadline in the past, see drain), until the data already in the pipe has
// been read (false). Nothing the command wrote before it exited is lost,
// however late this goroutine runs.
func readUntilDrained(f *os.File, buf []byte, handle func([]byte)) bool {
	draining := false
	for {
		if draining && pending(f) == 0 {
			return false
		}
		n, err := f.Read(buf)
		if n > 0 {
			handle(buf[:n])
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && !draining:
			draining = true
			if f.SetReadDeadline(time.Time{}) != nil {
				return false
			}
		default:
			return true
		}
	}
}

// pending returns how many bytes can be read from f without blocking.
func pending(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n
}

// drain tells the readers of files that the command has exited, after a
// short grace for them to see end of file on their own, and waits until
// done is closed.
func drain(done <-chan struct{}, files ...*os.File) {
	t := time.NewTimer(drainGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	bounded := false
	for _, f := range files {
		if f != nil && f.SetReadDeadline(time.Now()) != nil {
			bounded = true // not pollable: the reader cannot be told
		}
	}
	if !bounded {
		<-done
		return
	}
	t.Reset(time.Second)
	select {
	case <-done:
	case <-t.C:
	}
}

// readState collects the persist dump, stopping at its terminator.
func (p *supProc) readState(f *os.File) {
	defer f.Close()
	defer close(p.stateOK)
	buf := make([]byte, 32<<10)
	readUntilDrained(f, buf, func(b []byte) {
		if p.state.Len()+len(b) > 1<<20 {
			p.state.Reset() // too large to persist: drop it
			p.stateTooBig = true
		}
		if !p.stateTooBig {
			p.state.Write(b)
		}
	})
}

// wait enforces the timeout, waits for exit and output, then reports.
func (s *supervisor) wait(p *supProc, timeout, grace time.Duration) {
	var ws unix.WaitStatus
	if timeout > 0 {
		t := time.NewTimer(timeout)
		select {
		case ws = <-p.exited:
			t.Stop()
		case <-t.C:
			p.mu.Lock()
			p.timedOut = true
			p.mu.Unlock()
			_ = unix.Kill(-p.pid, unix.SIGTERM)
			if grace <= 0 {
				grace = 2 * time.Second
			}
			g := time.NewTimer(grace)
			select {
			case ws = <-p.exited:
				g.Stop()
			case <-g.C:
				_ = unix.Kill(-p.pid, unix.SIGKILL)
				ws = <-p.exited
			}
		}
	} else {
		ws = <-p.exited
	}
	// Output written before the exit is in the pipes: wait for end of
	// file or, when children hold the pipes open, for what is buffered.
	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	drain(drained, p.outputs...)
	if p.persist {
		drain(p.stateOK, p.stateR)
		s.applyState(p.state.Bytes())
	}

	r := &reply{Op: opExit, ID: p.id}
	switch {
	case ws.Signaled():
		r.Signal = int(ws.Signal())
		r.ExitCode = 128 + r.Signal
	default:
		r.ExitCode = ws.ExitStatus()
	}
	r.CPUMicros = p.rusage.Utime.Usec + p.rusage.Utime.Sec*1e6 + p.rusage.Stime.Usec + p.rusage.Stime.Sec*1e6
	r.MaxRSSKiB = p.rusage.Maxrss
	s.mu.Lock()
	delete(s.byID, p.id)
	s.mu.Unlock()
	p.mu.Lock()
	r.TimedOut, r.Truncated = p.timedOut, p.truncated
	p.finished = true
	s.send(r)
	p.mu.Unlock()
	if p.ptmx == nil {
		p.closeStdin()
	}
}

// queueInput hands data (or, with eof, the end of input) to the stdin
// writer. The queue is unbounded so that a command not reading its stdin
// never stalls the control channel; it lives in the sandbox's memory.
func (p *supProc) queueInput(data []byte, eof bool) {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if eof {
		p.inEOF = true
	} else {
		p.inQ = append(p.inQ, data)
	}
	if !p.inBusy {
		p.inBusy = true
		go p.writeInput()
	}
}

// writeInput drains the input queue in order.
func (p *supProc) writeInput() {
	for {
		p.inMu.Lock()
		if len(p.inQ) == 0 {
			eof := p.inEOF
			p.inBusy = false
			p.inMu.Unlock()
			if eof {
				p.closeStdin()
			}
			return
		}
		data := p.inQ[0]
		p.inQ = p.inQ[1:]
		p.inMu.Unlock()
		p.mu.Lock()
		in := p.stdin
		p.mu.Unlock()
		if in != nil {
			_, _ = in.Write(data)
		}
	}
}

func (p *supProc) closeStdin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
}

// applyState adopts a persist dump: NUL-separated KEY=value entries; the
// working directory is PWD.
func (s *supervisor) applyState(dump []byte) {
	if !bytes.HasSuffix(dump, []byte("\x00\x00")) {
		return
	}
	var env []string
	cwd := ""
	for _, kv := range strings.Split(strings.TrimRight(string(dump), "\x00"), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k == "_" || k == supervisorEnv || k == "SHLVL" {
			continue
		}
		if k == "PWD" {
			cwd = v
		}
		env = append(env, kv)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.env = env
	if filepath.IsAbs(cwd) {
		s.cwd = cwd
	}
}

// lookPath resolves prog the way a shell does, in the command's PATH.
func lookPath(prog string, env []string, cwd string) (string, error) {
	check := func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return &os.PathError{Op: "exec", Path: p, Err: os.ErrPermission}
		}
		return nil
	}
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(cwd, prog)
		}
		return prog, check(prog)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	var firstErr error
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		err := check(p)
		if err == nil {
			return p, nil
		}
		if firstErr == nil && !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", &os.PathError{Op: "exec", Path: prog, Err: os.ErrNotExist}
}

// setEnv returns env with key set to value.
func setEnv(env []string, key, value string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			env[i] = key + "=" + value
			return env
		}
	}
	return append(env, key+"="+value)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
