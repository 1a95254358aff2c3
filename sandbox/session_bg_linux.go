package sandbox

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// maxFinishedBackground bounds how many finished background processes a
// session remembers for Processes and Process.
const maxFinishedBackground = 64

// Background is a handle on a command started in the background of a
// session. It is safe for concurrent use. The process dies with its
// session at the latest.
type Background struct {
	s      *Session
	c      *call
	stdout *ring
	stderr *ring
}

// Start starts cmd in the background of the session and returns once its
// program runs; a program that could not be started (not found, not
// executable, no pids left in the session's budget) is an error, with
// ErrNotFound or ErrNotExecutable where they apply. Its output is kept in
// bounded buffers (the most recent SessionOptions.BackgroundBytes per
// stream); it has no timeout (the session's lifetime bounds it) and
// cmd.Stdout/Stderr are ignored.
func (s *Session) Start(cmd Command) (*Background, error) {
	if cmd.Shell == "" && (len(cmd.Args) == 0 || cmd.Args[0] == "") {
		return nil, ErrNoCommand
	}
	size := s.spec.Options.BackgroundBytes
	if size <= 0 {
		size = DefaultBackgroundBytes
	}
	b := &Background{s: s, stdout: newRing(size), stderr: newRing(size)}
	b.c = &call{args: cmd.Args, shell: cmd.Shell, background: true, cw: &capWriter{}, stdout: b.stdout, stderr: b.stderr,
		running: make(chan struct{})}
	if err := s.begin(b.c, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.bg == nil {
		s.bg = map[uint64]*Background{}
	}
	s.bg[b.c.id] = b
	s.pruneBackground()
	s.mu.Unlock()
	req := &request{Op: opExec, ID: b.c.id, Args: cmd.Args, Shell: cmd.Shell, Background: true, HasStdin: cmd.Stdin != nil, GraceMS: s.grace.Milliseconds()}
	if err := s.send(req); err != nil {
		s.end(err)
		return nil, err
	}
	if cmd.Stdin != nil {
		go s.pumpStdin(b.c, cmd.Stdin, true)
	}
	// The supervisor answers at once (started, or the exit of a failed
	// start); one that does not breaks the session.
	t := time.NewTimer(watchdogSlack)
	defer t.Stop()
	select {
	case <-b.c.running:
		return b, nil
	case <-b.c.done:
	case <-t.C:
		s.end(fmt.Errorf("%w: no answer to starting background command %d", ErrSessionBroken, b.c.id))
		<-b.c.done
	}
	if rep := b.c.exit; rep != nil && rep.StartError == "" {
		return b, nil // started and already finished
	}
	if _, err := s.result(b.c); err != nil {
		return nil, err // says what could not be started, and why
	}
	return nil, fmt.Errorf("starting in the background: %w", ErrSessionBroken)
}

// pruneBackground forgets the oldest finished background processes.
// Preconditions: s.mu is held.
func (s *Session) pruneBackground() {
	var finished []uint64
	for id, b := range s.bg {
		select {
		case <-b.c.done:
			finished = append(finished, id)
		default:
		}
	}
	if len(finished) <= maxFinishedBackground {
		return
	}
	sort.Slice(finished, func(i, j int) bool { return finished[i] < finished[j] })
	for _, id := range finished[:len(finished)-maxFinishedBackground] {
		delete(s.bg, id)
	}
}

// ID is the process's handle within its session.
func (b *Background) ID() uint64 { return b.c.id }

// Done is closed when the process has exited or its session has ended.
func (b *Background) Done() <-chan struct{} { return b.c.done }

// Output returns the most recent output so far and whether older output
// was dropped.
func (b *Background) Output() (stdout, stderr []byte, dropped bool) {
	o, od := b.stdout.snapshot()
	e, ed := b.stderr.snapshot()
	return o, e, od || ed
}

// Wait waits for the process to exit (or ctx) and returns its Result.
func (b *Background) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-b.c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.s.result(b.c)
}

// Signal sends sig to the process's process group.
func (b *Background) Signal(sig unix.Signal) error {
	select {
	case <-b.c.done:
		return fmt.Errorf("signalling process %d: %w", b.c.id, ErrNoProcess)
	default:
	}
	return b.s.send(&request{Op: opSignal, ID: b.c.id, Signal: int(sig)})
}

// Process returns the background process with the given id.
func (s *Session) Process(id uint64) (*Background, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bg[id]; b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("process %d: %w", id, ErrNoProcess)
}

// Processes lists the session's running commands and its remembered
// background processes, by id.
func (s *Session) Processes() []ProcessInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[uint64]bool{}
	var out []ProcessInfo
	add := func(c *call) {
		if seen[c.id] {
			return
		}
		seen[c.id] = true
		pi := ProcessInfo{ID: c.id, Args: c.args, Shell: c.shell, Background: c.background, Started: c.started, Running: true}
		select {
		case <-c.done:
			pi.Running = false
			if c.exit != nil {
				pi.ExitCode = c.exit.ExitCode
				if c.exit.Signal > 0 {
					pi.ExitCode = 128 + c.exit.Signal
				}
			}
		default:
		}
		out = append(out, pi)
	}
	for _, c := range s.calls {
		add(c)
	}
	for _, b := range s.bg {
		add(b.c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ring keeps the last size bytes written to it. It is safe for concurrent use.
type ring struct {
	mu      sync.Mutex
	buf     []byte
	size    int
	dropped bool
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= r.size {
		p = p[len(p)-r.size:]
		r.dropped = r.dropped || n > len(p) || len(r.buf) > 0
		r.buf = append(r.buf[:0], p...)
		return n, nil
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
		r.dropped = true
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

func (r *ring) snapshot() ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.buf...), r.dropped
}
