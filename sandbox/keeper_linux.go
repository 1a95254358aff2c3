package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tether-dev/tether/sandbox/keeper"
)

// The keeper (package keeper) reaps this process's sandboxes when it dies.
// Every sandbox is announced to it before anything of the sandbox exists
// and released once nothing of it is left, so that a death anywhere in
// between, a kill during the approval step included, leaves nothing
// running: the keeper sees the process end and has GC kill and remove what
// no live owner holds.

// keeperOff disables the keeper in this process (tests that simulate a
// crash and then reap by hand).
var keeperOff bool

// keeperConn is this process's keeper: the pipe it reads and what it was
// told, so that a keeper that died can be replaced with the same holds.
type keeperConn struct {
	mu    sync.Mutex
	w     *os.File       // write end of the keeper's pipe; nil: none running
	proc  *keeperProc    // the keeper reading w
	holds map[string]int // "ROOT\tPREFIX" -> outstanding sandboxes
}

var keeperState keeperConn

// keeperProc is a keeper process being started or running.
type keeperProc struct {
	started chan struct{} // closed once the exec is done (or failed)
	err     error         // why it could not be started; set before started closes
	exited  atomic.Bool   // it has ended (killed): its pipe has no reader
}

// wait waits until the keeper runs and reports whether it could be started.
func (p *keeperProc) wait() error {
	<-p.started
	return p.err
}

// keep announces a sandbox about to be built under stateRoot and cgroup
// prefix (without its leading slash) to this process's keeper, starting
// the keeper when none runs. The keeper is started in the background,
// alongside the sandbox's set-up: call wait before the sandbox's first
// process is started (its error wraps ErrKeeper). release says the
// sandbox is gone; call it once nothing of the sandbox is left.
func keep(stateRoot, prefix string) (release func(), wait func() error, err error) {
	if keeperOff {
		return func() {}, func() error { return nil }, nil
	}
	key := stateRoot + "\t" + prefix
	if strings.ContainsAny(stateRoot, "\t\n\x00") || strings.ContainsAny(prefix, "\t\n\x00") || len(key)+2 > keeper.MaxLine {
		return nil, nil, fmt.Errorf("%w: state root %q cannot be announced", ErrKeeper, stateRoot)
	}
	k := &keeperState
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.holds == nil {
		k.holds = map[string]int{}
	}
	k.holds[key]++
	if err := k.tell("+" + key + "\n"); err != nil {
		if k.holds[key]--; k.holds[key] == 0 {
			delete(k.holds, key)
		}
		return nil, nil, err
	}
	release = sync.OnceFunc(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.holds[key]--; k.holds[key] <= 0 {
			delete(k.holds, key)
		}
		// A keeper that cannot be told keeps the hold: at worst it reaps
		// after this process exits, which spares what others hold.
		_ = k.tell("-" + key + "\n")
	})
	return release, k.proc.wait, nil
}

// tell writes line to the keeper, replacing a keeper that is gone (with
// every current hold, line included: tell is called after the holds are
// updated).
//
// Preconditions: k.mu is held.
func (k *keeperConn) tell(line string) error {
	if k.w != nil && !k.proc.exited.Load() {
		// A keeper that does not read (stopped) is replaced rather than
		// waited for: every sandbox start would hang behind it.
		_ = k.w.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := k.w.WriteString(line); err == nil {
			return nil
		}
	}
	if k.w != nil {
		k.w.Close()
		k.w, k.proc = nil, nil
	}
	var all strings.Builder
	for key, n := range k.holds {
		for range n {
			all.WriteString("+" + key + "\n")
		}
	}
	w, proc, err := startKeeper(all.String())
	if err != nil {
		return err
	}
	k.w, k.proc = w, proc
	return nil
}

// revive replaces proc, a keeper that ended while this process lives,
// when it is the current keeper and sandboxes are outstanding, so that
// none stays unwatched until the next sandbox is announced.
func (k *keeperConn) revive(proc *keeperProc) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.proc != proc || len(k.holds) == 0 {
		return
	}
	k.w.Close()
	k.w, k.proc = nil, nil
	_ = k.tell("") // starts a keeper with every hold; retried at the next one if it fails
}

// startKeeper starts a keeper for this process, with holds already in its
// pipe, and returns the write end of the pipe. The exec runs in the
// background (it costs a few milliseconds); the keeper runs in a session
// of its own, so a signal to this process's group or terminal does not
// end it.
func startKeeper(holds string) (*os.File, *keeperProc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	// The holds fit in the pipe's buffer (a few lines; the keeper tracks
	// at most 256 pairs of at most 8 KiB), so this does not block.
	if _, err := w.WriteString(holds); err != nil {
		r.Close()
		w.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	proc := &keeperProc{started: make(chan struct{})}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{os.Args[0], keeper.Arg, strconv.Itoa(os.Getpid())},
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	go func() {
		err := cmd.Start()
		r.Close()
		if err != nil {
			proc.err = fmt.Errorf("%w: %w", ErrKeeper, err)
			proc.exited.Store(true)
			close(proc.started)
			return
		}
		close(proc.started)
		// It ends before this process only when killed: replace it at
		// once while sandboxes are outstanding.
		_ = cmd.Wait()
		proc.exited.Store(true)
		keeperState.revive(proc)
	}()
	return w, proc, nil
}

// isKeeperReap reports whether this process is the one a keeper executes
// to reap a dead owner's sandboxes.
func isKeeperReap() bool {
	return len(os.Args) > 1 && os.Args[1] == keeper.ReapArg
}

// keeperReapMain reaps the (state root, cgroup prefix) pairs in os.Args.
func keeperReapMain() {
	args := os.Args[2:]
	for i := 0; i+1 < len(args); i += 2 {
		_, _ = GC(GCOptions{StateRoot: args[i], CgroupPrefix: args[i+1]})
	}
	os.Exit(0)
}
