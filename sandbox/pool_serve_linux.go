package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The pool socket lets a `tether run` of the same user take a sandbox from
// the daemon's pool instead of building one: <state root>/pool.sock, 0600,
// and the server admits only peers of its own uid (SO_PEERCRED), who could
// build the same sandbox themselves under the same state root. The client
// sends one poolFrame "run" (its spec, its policy digest and the command);
// the server answers "nomatch" (nothing ran: the client builds its own
// sandbox) or "accepted" once a sandbox is taken for it. The command runs
// only after the client's "go" (its approval decision, made meanwhile);
// the server then streams "output" frames and one "result". After "go"
// the client may send "stdin" and "eof" frames; closing the connection
// before "go" destroys the sandbox unused, after it cancels the command
// (SIGTERM, grace, SIGKILL).

// poolSocketName is the pool socket's name in the state root.
const poolSocketName = "pool.sock"

// poolResultFrame bounds the frames the daemon sends its client: a
// result carries what the cold path's does (up to 8192 execs with their
// argv, the observed accesses), far over maxFrame. A result larger still
// gives up its oldest execs and accesses, counted in ExecsDropped and
// AccessesLost (fitResult). The client's frames stay within maxFrame.
const poolResultFrame = 32 << 20

// ErrResultLost: the command was handed to the pooled sandbox (the
// client sent "go") and the connection ended before its result came
// back. The command may have run, in whole or in part; what it did and
// what the exec gate refused are not known to the caller (the daemon
// logs why it ended).
var ErrResultLost = errors.New("the command was handed to the pooled sandbox and may have run, but its result was lost")

// Pool frame operations.
const (
	poolRun      = "run"
	poolNoMatch  = "nomatch"
	poolAccepted = "accepted" // a sandbox is taken for the command
	poolGo       = "go"       // the client approved: run the command
	poolResult   = "result"
)

// PoolRequest is what a client asks of the daemon's pool: a sandbox of
// Spec for Profile, under the policy Policy (an opaque digest of what
// else decides about the command, compared with the server's), to run the
// command in, with its per-command limits.
type PoolRequest struct {
	// CgroupPrefix is the client's (Runner.CgroupPrefix): a daemon of
	// another prefix does not serve it.
	CgroupPrefix string        `json:"cgroup_prefix,omitempty"`
	Profile      string        `json:"profile"`
	Policy       string        `json:"policy"`
	Spec         SessionSpec   `json:"spec"`
	Args         []string      `json:"args,omitempty"`
	Shell        string        `json:"shell,omitempty"`
	Timeout      time.Duration `json:"timeout,omitempty"`
	OutputBytes  int64         `json:"output_bytes,omitempty"`
	Stdin        bool          `json:"stdin,omitempty"`
}

// poolFrame is one frame of the pool socket, either way.
type poolFrame struct {
	Op      string       `json:"op"`
	Request *PoolRequest `json:"request,omitempty"`
	Stream  int          `json:"stream,omitempty"` // output: 1 stdout, 2 stderr
	Data    []byte       `json:"data,omitempty"`   // output, stdin
	Result  *Result      `json:"result,omitempty"`
	Error   string       `json:"error,omitempty"` // result: why it failed
	Reason  string       `json:"reason,omitempty"`
}

// PoolSocket is the pool socket of the state root ("" means
// DefaultStateRoot()).
func PoolSocket(stateRoot string) string {
	if stateRoot == "" {
		stateRoot = DefaultStateRoot()
	}
	return filepath.Join(stateRoot, poolSocketName)
}

// ListenPool listens on the state root's pool socket (mode 0600), taking
// over a socket file a dead server left. The caller serves it with
// ServePool and closes it.
func ListenPool(stateRoot string) (*net.UnixListener, error) {
	path := PoolSocket(stateRoot)
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return nil, fmt.Errorf("creating the state root for the pool socket: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("listening on the pool socket %s: another daemon serves it", path)
	}
	_ = os.Remove(path)
	old := unix.Umask(0o177)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listening on the pool socket: %w", err)
	}
	return l, nil
}

// ServePool accepts clients on l until it is closed, serving each with
// choose: it returns the pool to run the request in, or a reason why none
// fits (answered "nomatch": the client builds its own sandbox).
func (ps *Pools) ServePool(ctx context.Context, l *net.UnixListener, choose func(*PoolRequest) (PoolSpec, string)) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accepting on the pool socket: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			ps.serveConn(ctx, c, choose)
		}()
	}
}

// peerOf returns the credentials of the client's process (SO_PEERCRED:
// as it connected), nil when they cannot be read.
func peerOf(c *net.UnixConn) *unix.Ucred {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return nil
	}
	return cred
}

// clientProcess is the process of a pool client, held by a pidfd from
// the moment it is served, so that the used sandbox's teardown can wait
// for it to exit (serveConn). The zero value (fd -1) is a client not
// waited for: one in this process (tests), or one whose pidfd could not
// be opened.
type clientProcess struct{ fd int }

// holdClient opens a pidfd on the peer's process while its connection is
// live. A client that exited before this, its pid reused, makes a later
// waitExit wait for another process: at most the hang-up wait, and only
// the teardown's start is later.
func holdClient(peer *unix.Ucred) clientProcess {
	if peer == nil || int(peer.Pid) == os.Getpid() || peer.Pid <= 0 {
		return clientProcess{fd: -1}
	}
	fd, err := unix.PidfdOpen(int(peer.Pid), 0)
	if err != nil {
		return clientProcess{fd: -1}
	}
	return clientProcess{fd: fd}
}

// waitExit waits until the client's process has exited (its pidfd reads
// ready), at most until deadline.
func (cp clientProcess) waitExit(deadline time.Time) {
	if cp.fd < 0 {
		return
	}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(cp.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

func (cp clientProcess) close() {
	if cp.fd >= 0 {
		unix.Close(cp.fd)
	}
}

// serveConn serves one client: its request, then the command's frames.
func (ps *Pools) serveConn(ctx context.Context, c *net.UnixConn, choose func(*PoolRequest) (PoolSpec, string)) {
	var w sync.Mutex // serialises frames to c
	send := func(f *poolFrame) error {
		w.Lock()
		defer w.Unlock()
		return writeFrameMax(c, f, poolResultFrame)
	}
	logf := func(format string, args ...any) {
		if ps.Logf != nil {
			ps.Logf(format, args...)
		}
	}
	peer := peerOf(c)
	if peer == nil || int(peer.Uid) != os.Geteuid() {
		_ = send(&poolFrame{Op: poolNoMatch, Reason: "the pool serves its own user only"})
		return
	}
	Trace("daemon accepted")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var f poolFrame
	if _, err := readFrame(c, nil, &f); err != nil || f.Op != poolRun || f.Request == nil {
		if err != nil && !errors.Is(err, io.EOF) {
			logf("pool connection: reading the request: %v", err)
		}
		return
	}
	Trace("daemon request read")
	_ = c.SetReadDeadline(time.Time{})
	req := f.Request
	mine := Runner{StateRoot: ps.StateRoot, CgroupPrefix: ps.CgroupPrefix}
	theirs := Runner{StateRoot: ps.StateRoot, CgroupPrefix: req.CgroupPrefix}
	_, myPrefix, _, err := mine.paths()
	_, theirPrefix, _, err2 := theirs.paths()
	if err != nil || err2 != nil || myPrefix != theirPrefix {
		_ = send(&poolFrame{Op: poolNoMatch, Reason: "the run's cgroup prefix is not the daemon's"})
		return
	}
	Trace("daemon request checked")
	p, why := choose(req)
	if why != "" {
		_ = send(&poolFrame{Op: poolNoMatch, Reason: why})
		return
	}
	Trace("daemon pool chosen")
	s, err := ps.take(ctx, p)
	if err != nil {
		_ = send(&poolFrame{Op: poolNoMatch, Reason: err.Error()})
		return
	}
	Trace("daemon sandbox taken")
	// Whatever happens, this sandbox serves nothing else. Its processes
	// are killed before the client hears the result, but the rest of its
	// teardown (unmounts, cgroup and state removal: ~10 ms of CPU on this
	// 2-CPU class of machine) waits until the client has read the result,
	// hung up and exited, or poolHangupWait: it would otherwise compete
	// for the CPUs with the client's last steps (a Go process's exit
	// after its hang-up), which the caller waits for. A daemon that dies
	// meanwhile leaves the sandbox to GC, as any other.
	client := holdClient(peer)
	defer client.close()
	release := s.holdCleanup()
	defer release()
	defer s.end(ErrSessionClosed)
	if err := send(&poolFrame{Op: poolAccepted}); err != nil {
		logf("pool connection: the client left before the sandbox was handed over: %v", err)
		return
	}
	// Nothing runs before the client's go: a client that refused the
	// command, or went away, leaves the sandbox unused.
	var buf []byte
	var goFrame poolFrame
	if buf, err = readFrame(c, buf, &goFrame); err != nil || goFrame.Op != poolGo {
		return
	}
	Trace("daemon go read")
	// The connection is the command's lifeline: when the client goes,
	// the command is stopped.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stdin *io.PipeReader
	var stdinW *io.PipeWriter
	if req.Stdin {
		stdin, stdinW = io.Pipe()
		defer stdin.Close()
	}
	go func() {
		defer cancel()
		for {
			var in poolFrame
			var err error
			if buf, err = readFrame(c, buf, &in); err != nil {
				if stdinW != nil {
					stdinW.CloseWithError(io.ErrUnexpectedEOF)
				}
				return
			}
			switch {
			case stdinW == nil:
			case in.Op == "stdin" && len(in.Data) > 0:
				if _, err := stdinW.Write(in.Data); err != nil {
					stdinW = nil
				}
			case in.Op == "eof":
				stdinW.Close()
				stdinW = nil
			}
		}
	}()
	cmd := Command{Args: req.Args, Shell: req.Shell,
		Stdout: frameWriter{send, 1}, Stderr: frameWriter{send, 2}}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	res, err := s.Exec(ctx, cmd, ExecOptions{Timeout: req.Timeout, OutputBytes: req.OutputBytes})
	Trace("daemon exec returned")
	// Nothing the command left running outlives the result.
	s.kill()
	Trace("daemon sandbox killed")
	out := &poolFrame{Op: poolResult, Result: res}
	if err != nil {
		out.Error = err.Error()
	}
	var serr error
	if encoded, ferr := fitResult(out); ferr != nil {
		logf("pool connection: the result of %s in %s does not fit a frame: %v", poolCommand(req), s.id, ferr)
		serr = send(&poolFrame{Op: poolResult, Error: fmt.Sprintf("%v: %v", ErrResultLost, ferr)})
	} else {
		w.Lock()
		serr = writeEncodedFrame(c, encoded)
		w.Unlock()
	}
	if serr != nil {
		// The client gets no result: nothing it audits (the exec gate's
		// refusals included) reaches its record but this line.
		var blocked []string
		if res != nil {
			for _, b := range res.ExecBlocked {
				blocked = append(blocked, fmt.Sprintf("%q", b.Argv))
			}
		}
		logf("pool connection: sending the result of %s in %s failed (the client reports the result lost): %v; exec gate refusals: %d %s",
			poolCommand(req), s.id, serr, len(blocked), strings.Join(blocked, " "))
		return
	}
	Trace("daemon result sent")
	// The reader above cancels ctx when the client hangs up.
	ps.mu.Lock()
	wait := ps.hangupWait
	ps.mu.Unlock()
	if wait == 0 {
		wait = poolHangupWait
	}
	deadline := time.Now().Add(wait)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	client.waitExit(deadline)
	Trace("daemon client gone")
}

// fitResult trims f's result until f encodes within poolResultFrame: the
// oldest half of its execs, then of its observed accesses, at a time,
// each counted as the gate counts what it drops (ExecsDropped,
// AccessesLost), as the newest are kept everywhere else. It returns the
// encoding (the frame's body: the result is encoded once, on the
// critical path of every pooled call), and fails when the result is too
// large without them.
func fitResult(f *poolFrame) ([]byte, error) {
	for {
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		if len(b) <= poolResultFrame {
			return b, nil
		}
		res := f.Result
		switch {
		case res == nil:
			return nil, fmt.Errorf("%d bytes", len(b))
		case len(res.Execs) > 0:
			n := (len(res.Execs) + 1) / 2
			res.Execs, res.ExecsDropped = res.Execs[n:], res.ExecsDropped+n
		case len(res.Accesses) > 0:
			n := (len(res.Accesses) + 1) / 2
			res.Accesses, res.AccessesLost = res.Accesses[n:], res.AccessesLost+n
		default:
			return nil, fmt.Errorf("%d bytes without its execs and accesses", len(b))
		}
	}
}

// poolCommand names the request's command in the daemon's log.
func poolCommand(req *PoolRequest) string {
	if req.Shell != "" {
		return fmt.Sprintf("%q", truncateText(req.Shell, 80))
	}
	return fmt.Sprintf("%q", req.Args)
}

// truncateText cuts s to at most n bytes.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// poolHangupWait bounds how long a pooled sandbox's cleanup waits for its
// client to hang up and exit after the result (a `tether run` exits at
// once).
const poolHangupWait = 500 * time.Millisecond

// frameWriter sends a command's output as output frames.
type frameWriter struct {
	send   func(*poolFrame) error
	stream int
}

func (fw frameWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		n := min(len(rest), outputChunk)
		if err := fw.send(&poolFrame{Op: "output", Stream: fw.stream, Data: rest[:n]}); err != nil {
			return 0, err
		}
		rest = rest[n:]
	}
	return len(p), nil
}

// RunPooled asks the pool server of the state root for a sandbox matching
// req and runs the command in it once approve returns nil, streaming its
// output to stdout and stderr and stdin (when req.Stdin) to it. approve
// (the caller's approval decision; nil approves) runs while the server
// takes the sandbox, from the moment the request is sent; when it fails,
// nothing ran and RunPooled returns its error as is. An error wrapping
// ErrPoolEmpty means nothing ran: no server, no pool of that spec and
// policy, or none ready; the caller then builds its own sandbox. approve
// may have been called by then, and may still be running: the caller's
// own path asks it again, so it must give the same answer twice (a
// sync.Once). Any other error came
// after the command was handed over: one wrapping ErrResultLost means the
// command may have run and its result is unknown. Cancelling ctx stops
// the command.
func RunPooled(ctx context.Context, stateRoot string, req PoolRequest, approve func() error, stdin io.Reader, stdout, stderr io.Writer) (*Result, error) {
	if req.Stdin && isDevNull(stdin) {
		// The sandbox's own /dev/null reads the same, without stdin
		// frames.
		req.Stdin = false
	}
	Trace("pool dial")
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", PoolSocket(stateRoot))
	if err != nil {
		return nil, fmt.Errorf("%w: no pool server: %w", ErrPoolEmpty, err)
	}
	c := conn.(*net.UnixConn)
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	var w sync.Mutex
	send := func(f *poolFrame) error {
		w.Lock()
		defer w.Unlock()
		return writeFrame(c, f)
	}
	// The approval is decided while the server takes the sandbox and
	// protects its paths (the longer of the two), so it starts once the
	// request is on its way: started before the dial, it took the CPU
	// from the request and so delayed the take. Its answer is read only
	// after the server's, so nothing runs without the decision. A
	// request that fails ends the call before approve is asked: the
	// caller's own path asks it.
	err = send(&poolFrame{Op: poolRun, Request: &req})
	Trace("pool request sent")
	if err != nil {
		return nil, fmt.Errorf("%w: asking the pool server: %w", ErrPoolEmpty, err)
	}
	verdict := make(chan error, 1)
	go func() {
		if approve == nil {
			verdict <- nil
			return
		}
		verdict <- approve()
	}()
	var buf []byte
	var f poolFrame
	if buf, err = readFrame(c, buf, &f); err != nil {
		return nil, fmt.Errorf("%w: the pool server hung up: %w", ErrPoolEmpty, err)
	}
	Trace("pool answer read")
	switch f.Op {
	case poolNoMatch:
		return nil, fmt.Errorf("%w: %s", ErrPoolEmpty, f.Reason)
	case poolAccepted:
	default:
		return nil, fmt.Errorf("%w: unexpected first frame %q from the pool server", ErrPoolEmpty, f.Op)
	}
	if err := <-verdict; err != nil {
		return nil, err // the connection closes: the sandbox is destroyed unused
	}
	Trace("pool verdict read")
	// From here on the command may run: an error is not ErrPoolEmpty (the
	// caller must not run it again) but ErrResultLost.
	if err := send(&poolFrame{Op: poolGo}); err != nil {
		return nil, fmt.Errorf("%w: sending go: %w", ErrResultLost, err)
	}
	if req.Stdin && stdin != nil {
		go pumpPoolStdin(stdin, send)
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	for {
		if buf, err = readFrameMax(c, buf, &f, poolResultFrame); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: stopped: %w", ErrResultLost, ctx.Err())
			}
			return nil, fmt.Errorf("%w: the pool server hung up (the daemon's log may say why): %w", ErrResultLost, err)
		}
		switch f.Op {
		case "output":
			out := stdout
			if f.Stream == 2 {
				out = stderr
			}
			_, _ = out.Write(f.Data)
		case poolResult:
			Trace("pool result read")
			if f.Error != "" {
				return f.Result, poolError(f.Error)
			}
			return f.Result, nil
		default:
			return nil, fmt.Errorf("%w: unexpected frame %q", ErrResultLost, f.Op)
		}
	}
}

// pumpPoolStdin streams r to the pool server.
func pumpPoolStdin(r io.Reader, send func(*poolFrame) error) {
	buf := make([]byte, outputChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 && send(&poolFrame{Op: "stdin", Data: buf[:n]}) != nil {
			return
		}
		if err != nil {
			_ = send(&poolFrame{Op: "eof"})
			return
		}
	}
}

// poolError turns the server's error text back into the errors callers
// branch on (ErrNotFound, ErrNotExecutable, ErrResultLost), the rest as
// text.
func poolError(msg string) error {
	for _, e := range []error{ErrNotFound, ErrNotExecutable, ErrResultLost} {
		if len(msg) >= len(e.Error()) && msg[:len(e.Error())] == e.Error() {
			return fmt.Errorf("%w%s", e, msg[len(e.Error()):])
		}
	}
	return errors.New(msg)
}
