package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// GCOptions says whose leftovers GC reaps. The zero value means
// DefaultStateRoot() and the "tether" cgroup prefix.
type GCOptions struct {
	// StateRoot is the Runner.StateRoot to clean.
	StateRoot string
	// CgroupPrefix is the Runner.CgroupPrefix to clean.
	CgroupPrefix string
	// Caches also removes the state root's caches (shared empty roots,
	// /etc snapshots, compiled seccomp filters) when no container is
	// running. Runs keep them between calls; `tether gc` removes them.
	Caches bool
}

// GCReport lists what GC removed.
type GCReport struct {
	// Containers are the ids of dead containers reaped.
	Containers []string `json:"containers"`
	// Cgroups are the cgroup directories removed (every hierarchy).
	Cgroups []string `json:"cgroups"`
	// Mounts are mount points under the state root that were detached.
	Mounts []string `json:"mounts"`
	// StateDirs are state directories and files removed.
	StateDirs []string `json:"state_dirs"`
	// Live counts containers kept because their owning tether is alive.
	Live int `json:"live"`
	// Errors are what could not be removed.
	Errors []string `json:"errors,omitempty"`
}

// GC removes the containers, cgroups, mounts and state that a crashed tether
// left under the state root and cgroup prefix. A container whose owner still
// holds its lock (a live tether, this one included) is never touched.
func GC(opts GCOptions) (*GCReport, error) {
	r := Runner{StateRoot: opts.StateRoot, CgroupPrefix: opts.CgroupPrefix}
	stateRoot, prefix, _, err := r.paths()
	if err != nil {
		return nil, err
	}
	rep := &GCReport{Containers: []string{}, Cgroups: []string{}, Mounts: []string{}, StateDirs: []string{}}
	fail := func(err error) { rep.Errors = append(rep.Errors, err.Error()) }

	ids := map[string]bool{}
	for _, d := range []string{containersDir, rootsDir, locksDir} {
		entries, err := os.ReadDir(filepath.Join(stateRoot, d))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading state root: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if d == locksDir {
				if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".lock") {
					continue // a lock being born (see lockOwner)
				}
				name = strings.TrimSuffix(name, ".lock")
			}
			ids[name] = true
		}
	}
	var dead []string
	for id := range ids {
		lock, err := tryLock(filepath.Join(stateRoot, locksDir, id+".lock"))
		if err != nil {
			rep.Live++
			continue
		}
		dead = append(dead, id)
		defer func() {
			os.Remove(filepath.Join(stateRoot, locksDir, id+".lock"))
			lock.Close()
		}()
	}
	sort.Strings(dead)
	// Kill every dead container first, then wait for each: the processes
	// of all of them end within the same moment, not one after another.
	loaded := map[string]*libcontainer.Container{}
	for _, id := range dead {
		if c, err := libcontainer.Load(filepath.Join(stateRoot, containersDir), id); err == nil {
			_ = c.Signal(unix.SIGKILL)
			loaded[id] = c
		}
	}
	if len(dead) > 0 {
		for _, m := range mountsUnder(stateRoot) {
			if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
				fail(fmt.Errorf("unmounting %s: %w", m, err))
				continue
			}
			rep.Mounts = append(rep.Mounts, m)
		}
	}
	for _, id := range dead {
		rep.Containers = append(rep.Containers, id)
		if c := loaded[id]; c != nil {
			// The init is no child of ours: wait for whoever reaps it.
			for i := 0; i < 250; i++ {
				if st, err := c.Status(); err != nil || st == libcontainer.Stopped {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := c.Destroy(); err != nil {
				fail(fmt.Errorf("destroying container %s: %w", id, err))
			}
		}
		dirs, _ := cgroupDirs(prefix)
		for _, d := range dirs {
			if filepath.Base(d) != id {
				continue
			}
			killCgroup(d)
			if err := rmdirRetry(d); err != nil {
				fail(err)
				continue
			}
			rep.Cgroups = append(rep.Cgroups, d)
		}
		for _, p := range []string{filepath.Join(stateRoot, containersDir, id), filepath.Join(stateRoot, rootsDir, id), filepath.Join(stateRoot, locksDir, id+".lock")} {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				fail(fmt.Errorf("removing %s: %w", p, err))
				continue
			}
			rep.StateDirs = append(rep.StateDirs, p)
		}
	}
	rep.StateDirs = append(rep.StateDirs, removeDeadTempLocks(stateRoot, fail)...)
	rep.Cgroups = append(rep.Cgroups, removeOrphanCgroups(prefix)...)
	// Reservations of protected paths whose sandboxes are all gone.
	for _, err := range gcReservations(stateRoot, opts.Caches && rep.Live == 0) {
		fail(err)
	}
	for _, err := range gcDiskLimits(stateRoot) {
		fail(err)
	}
	rep.Cgroups = append(rep.Cgroups, removeIdleProfile(prefix)...)
	if opts.Caches && rep.Live == 0 {
		// No container runs, so none has these bound: shared roots and
		// /etc snapshots (rebuilt on the next run), and half-built ones;
		// and the compiled seccomp filters (compiled again when needed).
		caches := staleEtcSnapshots(stateRoot, "")
		if _, err := os.Lstat(filepath.Join(stateRoot, seccompDir)); err == nil {
			caches = append(caches, filepath.Join(stateRoot, seccompDir))
		}
		if entries, err := os.ReadDir(filepath.Join(stateRoot, skelDir)); err == nil {
			for _, e := range entries {
				caches = append(caches, filepath.Join(stateRoot, skelDir, e.Name()))
			}
		}
		for _, p := range caches {
			if err := os.RemoveAll(p); err != nil {
				fail(fmt.Errorf("removing %s: %w", p, err))
				continue
			}
			rep.StateDirs = append(rep.StateDirs, p)
		}
	}
	return rep, nil
}

// removeOrphanCgroups removes container cgroups (prefix/<profile>/<id>)
// that hold no process: what is left when a crashed tether's state root
// is gone too. Only while no sandbox of any tether on the host lives under
// prefix (removeIdleProfile's exclusive prefix lock): a live sandbox of
// another state root sharing the prefix has a container cgroup that is
// empty between its creation and the container's start, and its lock is
// in a state root this tether cannot see (that removal failed a sandbox
// start: "cpuset.cpus: no such file or directory"). While one lives, its
// teardown's removeIdleProfile removes the orphans at the end.
func removeOrphanCgroups(prefix string) []string {
	return removeIdleCgroups(prefix, false)
}

// killCgroup SIGKILLs every process left in a dead container's cgroup
// directory (normally none: the pid namespace died with its init).
func killCgroup(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// removeIdleProfile removes, in every hierarchy, the container cgroups
// under prefix that hold no process (orphans: every sandbox has ended),
// the profile cgroups then empty, then prefix itself, and, once prefix is
// gone everywhere, its lock file. It does nothing while a sandbox of any
// tether on the host lives under prefix (it holds prefixLock shared):
// every sandbox calls this as the last step of its teardown, after its own
// cgroups are gone and its hold is dropped, so the last one out removes
// what is idle. When the exclusive lock cannot be had, whoever holds it is
// a live sandbox (which will do this at its end) or a removal that started
// after our hold was dropped, whose scan sees our cgroups gone. It returns
// the directories removed.
func removeIdleProfile(prefix string) []string {
	return removeIdleCgroups(prefix, true)
}

// removeIdleCgroups is removeOrphanCgroups (profiles false) and
// removeIdleProfile (true): under prefix's exclusive lock, the empty
// container cgroups, and with profiles the profile cgroups and prefix.
func removeIdleCgroups(prefix string, profiles bool) []string {
	if os.Geteuid() != 0 {
		return nil // rootless sandboxes have no cgroups
	}
	lock, err := prefixLock(prefix, unix.LOCK_EX|unix.LOCK_NB)
	if err != nil {
		return nil
	}
	defer lock.Close()
	mounts, err := cgroupMounts()
	if err != nil {
		return nil
	}
	var removed []string
	gone := true
	for _, m := range mounts {
		top := filepath.Join(m, prefix)
		entries, err := os.ReadDir(top)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			profile := filepath.Join(top, e.Name())
			containers, _ := os.ReadDir(profile)
			for _, c := range containers {
				// A single attempt: EBUSY means it still holds a process
				// (of a tether this one cannot see: it is left alone).
				if d := filepath.Join(profile, c.Name()); c.IsDir() && unix.Rmdir(d) == nil {
					removed = append(removed, d)
				}
			}
			if profiles && unix.Rmdir(profile) == nil {
				removed = append(removed, profile)
			}
		}
		if !profiles {
			continue
		}
		if err := unix.Rmdir(top); err == nil {
			removed = append(removed, top)
		} else if !errors.Is(err, unix.ENOENT) {
			gone = false
		}
	}
	if profiles && gone {
		// Still held: lockFile's waiters see the file gone and start over.
		os.Remove(lock.Name())
	}
	return removed
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return nil
	}
	out := make([]string, len(infos))
	for i, m := range infos {
		out[i] = m.Mountpoint
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// lockOwner creates and exclusively locks <state>/locks/<id>.lock for the
// life of a container. The file is made unnamed (O_TMPFILE), locked, then
// linked under its name, so GC never sees an unlocked lock file of a live
// container and a kill at any point leaves no half-made file. Where the
// filesystem has no O_TMPFILE the file is locked under a hidden name
// (.<id>.tmp) and renamed; GC removes such a file once its owner is dead.
func lockOwner(stateRoot, id string) (*os.File, error) {
	dir := filepath.Join(stateRoot, locksDir)
	final := filepath.Join(dir, id+".lock")
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		f := os.NewFile(uintptr(fd), final)
		if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking container lock: %w", err)
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, final, unix.AT_SYMLINK_FOLLOW); err != nil {
			f.Close()
			return nil, fmt.Errorf("publishing container lock: %w", err)
		}
		return f, nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, fmt.Errorf("creating container lock: %w", err)
	}
	tmp := filepath.Join(dir, "."+id+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating container lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("locking container lock: %w", err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	if err := os.Rename(tmp, final); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("publishing container lock: %w", err)
	}
	return f, nil
}

// removeDeadTempLocks removes the hidden lock files (.<id>.tmp) that a
// tether killed between creating and renaming one left: those no process
// has locked and whose creator, the pid in the id, is gone (no such
// process, or one started after the file was made: a reused pid).
func removeDeadTempLocks(stateRoot string, fail func(error)) []string {
	dir := filepath.Join(stateRoot, locksDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		id, isTemp := strings.CutSuffix(strings.TrimPrefix(name, "."), ".tmp")
		if !isTemp || !strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := e.Info()
		if err != nil || !creatorGone(id, fi.ModTime()) {
			continue
		}
		lock, err := tryLock(p)
		if err != nil {
			continue // its creator is between the lock and the rename
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			fail(fmt.Errorf("removing %s: %w", p, err))
		} else if err == nil {
			removed = append(removed, p)
		}
		lock.Close()
	}
	return removed
}

// creatorGone reports whether the process that made a container id
// (<profile>-<pid>-<hex>, see newID) at or before made is gone.
func creatorGone(id string, made time.Time) bool {
	parts := strings.Split(id, "-")
	if len(parts) < 3 {
		return true // not an id of ours: nobody is making it
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return true
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
		return true
	}
	started, ok := processStart(pid)
	if !ok {
		return false // unreadable: assume the creator lives
	}
	// A process younger than the file is not its creator: a reused pid.
	return started.After(made.Add(time.Second))
}

// processStart returns when process pid started (from /proc/<pid>/stat
// and the boot time in /proc/stat), and false when it cannot tell.
func processStart(pid int) (time.Time, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false
	}
	// Fields after the command name (which may hold spaces) in ")": state
	// is field 3, starttime field 22.
	i := strings.LastIndexByte(string(b), ')')
	fields := strings.Fields(string(b[i+1:]))
	if i < 0 || len(fields) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	boot, ok := readKey("/proc/stat", "btime")
	if !ok {
		return time.Time{}, false
	}
	const userHZ = 100 // sysconf(_SC_CLK_TCK) on every Linux architecture
	return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / userHZ), true
}

// tryLock takes an exclusive lock on an existing path without waiting. It
// fails when another open file (in any process) holds a lock on it.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// No lock file: its owner never got past creating it, or it was
		// reaped. Lock a placeholder so the caller's Close works.
		return os.Open(os.DevNull)
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
