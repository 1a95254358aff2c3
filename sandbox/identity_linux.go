package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/tether-dev/tether/sandbox/usernshold"
)

// usernsHold is a user namespace owned by a sandbox's host id, held by a
// helper process until the sandbox's init has joined it (package
// usernshold says why).
type usernsHold struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	path  string // /proc/PID/ns/user
}

// holdUserNS makes a user namespace owned by uid and gid whose only id, 0,
// is uid:gid. The caller must call release once the sandbox's init runs.
func holdUserNS(uid, gid int) (*usernsHold, error) {
	cmd := exec.Command("/proc/self/exe", usernshold.Arg)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("making the sandbox's user namespace: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("making the sandbox's user namespace: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("making the sandbox's user namespace: %w", err)
	}
	h := &usernsHold{cmd: cmd, stdin: stdin, path: "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/user"}
	var b [1]byte
	if _, err := io.ReadFull(stdout, b[:]); err != nil || b[0] != 'u' {
		h.release()
		if err == nil {
			err = errors.New("unshare failed")
		}
		return nil, fmt.Errorf("making the sandbox's user namespace: %w", err)
	}
	pid := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	for _, m := range []string{"uid_map", "gid_map"} {
		id := uid
		if m == "gid_map" {
			id = gid
		}
		if err := os.WriteFile(pid+"/"+m, []byte("0 "+strconv.Itoa(id)+" 1\n"), 0); err != nil {
			h.release()
			return nil, fmt.Errorf("mapping the sandbox's user namespace: %w", err)
		}
	}
	return h, nil
}

// release lets the holder go and reaps it. Safe to call more than once.
func (h *usernsHold) release() error {
	if h.stdin == nil {
		return nil
	}
	h.stdin.Close()
	h.stdin = nil
	_ = h.cmd.Wait()
	return nil
}
