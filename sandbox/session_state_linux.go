package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// SandboxInfo describes a session sandbox found in a state root, whoever
// owns it.
type SandboxInfo struct {
	ContainerID string `json:"container_id"`
	Profile     string `json:"profile"`
	Session     string `json:"session"`
	// OwnerPID is the process that created it (0 if unknown).
	OwnerPID int `json:"owner_pid"`
	// OwnerAlive: the owner still holds the sandbox's lock. A sandbox
	// whose owner is dead is GC's to reap.
	OwnerAlive bool `json:"owner_alive"`
	// Status is libcontainer's view: running, stopped, ...
	Status string `json:"status"`
}

// ListSessionSandboxes lists the session sandboxes under a state root (as
// GC sees it: opts.StateRoot, default DefaultStateRoot()), including those
// of other processes and of crashed owners. One-shot Run containers are
// not listed.
func ListSessionSandboxes(opts GCOptions) ([]SandboxInfo, error) {
	r := Runner{StateRoot: opts.StateRoot, CgroupPrefix: opts.CgroupPrefix}
	stateRoot, _, _, err := r.paths()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(stateRoot, containersDir))
	if errors.Is(err, os.ErrNotExist) {
		return []SandboxInfo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state root: %w", err)
	}
	out := []SandboxInfo{}
	for _, e := range entries {
		c, err := libcontainer.Load(filepath.Join(stateRoot, containersDir), e.Name())
		if err != nil {
			continue // being created or destroyed
		}
		info := SandboxInfo{ContainerID: c.ID()}
		isSession := false
		for _, l := range c.Config().Labels {
			switch {
			case strings.HasPrefix(l, labelSession):
				info.Session, isSession = strings.TrimPrefix(l, labelSession), true
			case strings.HasPrefix(l, labelProfile):
				info.Profile = strings.TrimPrefix(l, labelProfile)
			case strings.HasPrefix(l, labelOwner):
				info.OwnerPID, _ = strconv.Atoi(strings.TrimPrefix(l, labelOwner))
			}
		}
		if !isSession {
			continue
		}
		if st, err := c.Status(); err == nil {
			info.Status = st.String()
		}
		info.OwnerAlive = lockHeld(filepath.Join(stateRoot, locksDir, c.ID()+".lock"))
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ContainerID < out[j].ContainerID })
	return out, nil
}

// lockHeld reports whether another open file holds a lock on path.
func lockHeld(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil
}

// KillSessionSandbox kills every process of the session sandbox id under
// the state root. Its owner, if alive, sees the session break and removes
// the rest; for a dead owner GC is run to reap it. It returns ErrNoProcess
// wrapped when there is no such session sandbox.
func KillSessionSandbox(opts GCOptions, id string) (*GCReport, error) {
	list, err := ListSessionSandboxes(opts)
	if err != nil {
		return nil, err
	}
	for _, info := range list {
		if info.ContainerID != id {
			continue
		}
		r := Runner{StateRoot: opts.StateRoot}
		stateRoot, _, _, _ := r.paths()
		if c, err := libcontainer.Load(filepath.Join(stateRoot, containersDir), id); err == nil {
			if err := c.Signal(unix.SIGKILL); err != nil && !errors.Is(err, libcontainer.ErrNotRunning) {
				return nil, fmt.Errorf("killing session sandbox %s: %w", id, err)
			}
		}
		if info.OwnerAlive {
			return &GCReport{}, nil
		}
		return GC(opts)
	}
	return nil, fmt.Errorf("session sandbox %q: %w", id, ErrNoProcess)
}
