package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
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
		// No Pdeathsig: the kernel sends it when the starting *thread*
		// exits, and Go ends a thread whose goroutine exits locked
		// (libcontainer's start goroutines do), which killed the holder
		// before it answered ("making the sandbox's user namespace: EOF",
		// 2 in 3,200 calls of scripts/load-test.sh). The holder ends when
		// its stdin closes, and that happens when this process dies too.
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

// prepareMountpoints creates, as root, the mount points of the workspace
// and the binds inside a prepared root directory: the sandbox's root (an
// unprivileged id) cannot create them in a root-owned tree, as
// libcontainer's init would otherwise. Nothing is followed out of the
// root. Destinations under /tmp are the sandbox's own tmpfs and left to
// libcontainer.
func prepareMountpoints(cfg Config) error {
	if cfg.Rootfs.Kind != rootfs.KindDir {
		return nil
	}
	type point struct {
		dest string
		dir  bool
	}
	var points []point
	if cfg.Workspace != "" {
		points = append(points, point{cfg.workspaceMount(), true})
	}
	for _, b := range cfg.Binds {
		fi, err := os.Stat(b.Source)
		if err != nil {
			return fmt.Errorf("reading bind source %s: %w", b.Source, err)
		}
		points = append(points, point{b.dest(), fi.IsDir()})
	}
	root, err := unix.Open(cfg.Rootfs.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening root %s: %w", cfg.Rootfs.Dir, err)
	}
	defer unix.Close(root)
	for _, pt := range points {
		rel := strings.TrimPrefix(filepath.Clean(pt.dest), "/")
		if rel == "tmp" || strings.HasPrefix(rel, "tmp/") {
			continue
		}
		parts := strings.Split(rel, "/")
		dir := root
		for i, c := range parts {
			last := i == len(parts)-1
			how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
			fd, err := unix.Openat2(dir, c, how)
			if errors.Is(err, unix.ENOENT) {
				if !last || pt.dir {
					err = unix.Mkdirat(dir, c, 0o755)
				} else {
					var f int
					if f, err = unix.Openat(dir, c, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err == nil {
						unix.Close(f)
					}
				}
				if err != nil && !errors.Is(err, unix.EEXIST) {
					break // libcontainer reports it, with its own words
				}
				fd, err = unix.Openat2(dir, c, how)
			}
			if dir != root {
				unix.Close(dir)
			}
			if err != nil {
				break // a symlink or a file on the way: libcontainer resolves it in the root
			}
			dir = fd
		}
		if dir != root {
			unix.Close(dir)
		}
	}
	return nil
}

// stateRootReachable returns an error saying what to do when the sandbox's
// root, host uid and gid id (root-started sandboxes), cannot traverse every
// directory down to stateRoot: its empty root lives under it, and
// libcontainer would fail with "remount-propagation ... permission
// denied" (a 0700 home or temporary directory above the state root).
func stateRootReachable(stateRoot string, id int) error {
	// Top down: the first directory that stops it is the one to fix.
	var dirs []string
	for dir := filepath.Clean(stateRoot); ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == "/" {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		dir := dirs[i]
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return fmt.Errorf("reading state root %s: %w", dir, err)
		}
		x := st.Mode&0o001 != 0 || (int(st.Uid) == id && st.Mode&0o100 != 0) || (int(st.Gid) == id && st.Mode&0o010 != 0)
		if !x {
			return fmt.Errorf("%w: the state root %s lies under %s (mode %04o), which the sandbox's unprivileged id %d cannot traverse: make it traversable (chmod o+x %s) or choose a state root outside it ($TETHER_STATE_DIR, state_dir, Runner.StateRoot)",
				ErrInvalidConfig, stateRoot, dir, st.Mode&0o7777, id, dir)
		}
	}
	return nil
}
