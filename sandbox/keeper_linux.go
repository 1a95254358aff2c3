package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/tether-dev/tether/sandbox/keeper"
)

// The keeper (package keeper) reaps this process's sandboxes when it dies.
// Every sandbox is announced to it before anything of the sandbox exists
// and released once nothing of it is left, so that a death anywhere in
// between, a kill during the approval step included, leaves nothing
// running: the keeper sees the process end and has GC kill and remove what
// no live owner holds.

// ErrKeeper: the keeper that reaps this process's sandboxes if it dies
// could not be started or told; nothing was started.
var ErrKeeper = errors.New("cannot start the keeper that reaps this process's sandboxes if it dies")

// keeperOff disables the keeper in this process (tests that simulate a
// crash and then reap by hand).
var keeperOff bool

// keeperConn is this process's keeper: the pipe it reads and what it was
// told, so that a keeper that died can be replaced with the same holds.
type keeperConn struct {
	mu    sync.Mutex
	w     *os.File       // write end of the keeper's pipe; nil: none running
	holds map[string]int // "ROOT\tPREFIX" -> outstanding sandboxes
}

var keeperState keeperConn

// keep announces a sandbox about to be built under stateRoot and cgroup
// prefix (without its leading slash) to this process's keeper, starting the
// keeper first when none runs. The returned release says the sandbox is
// gone; call it once nothing of the sandbox is left.
func keep(stateRoot, prefix string) (release func(), err error) {
	if keeperOff {
		return func() {}, nil
	}
	key := stateRoot + "\t" + prefix
	if strings.ContainsAny(key[:len(stateRoot)], "\t\n\x00") || strings.ContainsAny(prefix, "\t\n\x00") || len(key)+2 > keeper.MaxLine {
		return nil, fmt.Errorf("%w: state root %q cannot be announced", ErrKeeper, stateRoot)
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
		return nil, err
	}
	return sync.OnceFunc(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.holds[key]--; k.holds[key] <= 0 {
			delete(k.holds, key)
		}
		// A keeper that cannot be told keeps the hold: at worst it reaps
		// after this process exits, which spares what others hold.
		_ = k.tell("-" + key + "\n")
	}), nil
}

// tell writes line to the keeper, replacing a keeper that is gone (with
// every current hold, line included: tell is called after the holds are
// updated).
//
// Preconditions: k.mu is held.
func (k *keeperConn) tell(line string) error {
	if k.w != nil {
		if _, err := k.w.WriteString(line); err == nil {
			return nil
		}
		k.w.Close()
		k.w = nil
	}
	w, err := startKeeper()
	if err != nil {
		return err
	}
	var all strings.Builder
	for key, n := range k.holds {
		for range n {
			all.WriteString("+" + key + "\n")
		}
	}
	if _, err := w.WriteString(all.String()); err != nil {
		w.Close()
		return fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	k.w = w
	return nil
}

// startKeeper starts a keeper for this process and returns the write end
// of its pipe. The keeper runs in a session of its own, so a signal to
// this process's group or terminal does not end it.
func startKeeper() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{os.Args[0], keeper.Arg, strconv.Itoa(os.Getpid())},
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	// Reap it if it ends before this process does (killed); a later tell
	// then finds the pipe broken and starts another.
	go func() { _ = cmd.Wait() }()
	return w, nil
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
