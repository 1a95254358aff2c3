package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// unifiedMount is where the cgroup v2 hierarchy is mounted on a host that
// has no other (cgroups.Mode() == cgroups.Unified).
const unifiedMount = "/sys/fs/cgroup"

// delegatedLeaf is the cgroup, under a delegated subtree, that a tether
// process found at the top of the subtree moves itself into: cgroup v2
// lets a cgroup hold processes or enable controllers for its children, not
// both, and the sandboxes' cgroups need the controllers.
const delegatedLeaf = "tether-daemon"

// cgroupBase is the cgroup under which tether's cgroups (the prefix, its
// profiles and containers) live: "" (the root of every hierarchy), or, on
// cgroup v2 when this process runs in a subtree that systemd delegated to
// it (a unit with Delegate=yes), that subtree, such as
// /system.slice/tether.service. systemd then owns and manages everything
// outside the subtree, and a delegated service must keep to its own.
//
// Only root places cgroups. The first call also moves this process into the subtree's delegatedLeaf
// when it is at the top of the subtree (see enterDelegatedLeaf).
var cgroupBase = sync.OnceValues(func() (string, error) {
	// Rootless sandboxes have no cgroups; v1 controllers are never delegated.
	if os.Geteuid() != 0 || cgroups.Mode() != cgroups.Unified {
		return "", nil
	}
	self, err := ownCgroup("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	base := delegatedAncestor(unifiedMount, self, 0)
	if base == "" {
		return "", nil
	}
	if self == base {
		if err := enterDelegatedLeaf(unifiedMount, base, os.Getpid()); err != nil {
			return "", err
		}
	}
	return base, nil
})

// ownCgroup reads a process's cgroup v2 path from /proc/PID/cgroup (the
// "0::PATH" line).
func ownCgroup(procFile string) (string, error) {
	b, err := os.ReadFile(procFile)
	if err != nil {
		return "", fmt.Errorf("reading this process's cgroup: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return filepath.Clean(p), nil
		}
	}
	return "", fmt.Errorf("reading this process's cgroup: no cgroup v2 entry in %s", procFile)
}

// delegatedAncestor returns the nearest of cgroup self and its ancestors
// (paths under the v2 mount) that was delegated to uid: systemd marks a
// delegated cgroup with the trusted.delegate extended attribute, which only
// a process privileged on the host can set, and hands it to the unit's
// user. A subtree delegated to someone else (a user's own service manager,
// user@UID.service) is that user's to change, so root's sandboxes never
// live in it. "" means none: tether's cgroups go at the root.
func delegatedAncestor(mount, self string, uid int) string {
	for p := self; p != "/"; p = filepath.Dir(p) {
		dir := filepath.Join(mount, p)
		buf := make([]byte, 8)
		n, err := unix.Getxattr(dir, "trusted.delegate", buf)
		if err != nil || strings.TrimSpace(string(buf[:n])) != "1" {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(dir, &st) != nil || int(st.Uid) != uid {
			return ""
		}
		return p
	}
	return ""
}

// enterDelegatedLeaf moves process pid (tether's own) from the top of the
// delegated subtree base into base/delegatedLeaf, so that base can enable the
// controllers its children (the sandboxes' cgroups) need. Another process
// left at the top (a unit whose main process is a shell that did not exec
// tether) would keep the controllers off: that is an error naming it.
func enterDelegatedLeaf(mount, base string, pid int) error {
	leaf := filepath.Join(mount, base, delegatedLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating the delegated cgroup's leaf %s: %w", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("moving tether into %s: %w", leaf, err)
	}
	b, err := os.ReadFile(filepath.Join(mount, base, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("reading the delegated cgroup %s: %w", base, err)
	}
	if others := strings.Fields(string(b)); len(others) > 0 {
		return fmt.Errorf("%w: the delegated cgroup %s still holds processes %s besides tether's; make tether the unit's main process (see contrib/tether.service)",
			ErrCgroupDelegation, base, strings.Join(others, " "))
	}
	return nil
}

// cgroupLockDir holds one lock file for each cgroup prefix in use on the
// host (prefixLock). It is host-wide, not per state root: tethers with
// different state roots may share a prefix, and the cgroups under it are
// the host's.
const cgroupLockDir = "/run/tether/cgroup-locks"

// ErrUnsafeCgroupLockDir: cgroupLockDir (or its parent) is not a directory
// only root controls. Its locks keep one tether from removing a profile
// cgroup that another is filling (whose limits its sandbox would then
// escape), so tether refuses to create cgroups rather than trust them.
var ErrUnsafeCgroupLockDir = errors.New("the cgroup lock directory is not root's own")

// prefixLock opens and flocks the host-wide lock of cgroup prefix (an
// absolute cgroup path, see Runner.paths) with how. Every sandbox holds it
// shared (LOCK_SH) from before it creates a cgroup under prefix until its
// own cgroups are gone; removeIdleProfile takes it exclusively without
// waiting (LOCK_EX|LOCK_NB) to remove the profiles and the prefix, so no
// cgroup is removed between another sandbox's creating its profile cgroup
// (with the profile's limits) and placing its container in it.
func prefixLock(prefix string, how int) (*os.File, error) {
	dir, err := checkedRootDir(cgroupLockDir, "cgroup lock directory", ErrUnsafeCgroupLockDir)
	if err != nil {
		return nil, err
	}
	// Prefix names hold no "+" (Runner.paths), so the name is the
	// prefix's alone; a prefix too long for a file name is hashed.
	name := strings.ReplaceAll(strings.Trim(prefix, "/"), "/", "+")
	if len(name) > 200 {
		name = fmt.Sprintf("%x", sha256.Sum256([]byte(prefix)))
	}
	return lockFile(filepath.Join(dir, name+".lock"), how)
}

// cgroupMounts returns the mount point of every cgroup hierarchy on the host:
// each v1 controller (and named hierarchy) and the v2 tree, including the
// hybrid /sys/fs/cgroup/unified one.
func cgroupMounts() ([]string, error) {
	infos, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup", "cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	out := make([]string, len(infos))
	for i, m := range infos {
		out[i] = m.Mountpoint
	}
	return out, nil
}

// cgroupDirs lists the directories at or under rel (an absolute cgroup path
// such as /tether/default) in every hierarchy, deepest first.
func cgroupDirs(rel string) ([]string, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range mounts {
		top := filepath.Join(m, rel)
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // vanished or absent in this hierarchy
			}
			if d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs, nil
}

// removeCgroupTree removes rel and everything under it in every hierarchy.
// It fails (leaving the rest) where a cgroup still holds processes.
func removeCgroupTree(rel string) error {
	dirs, err := cgroupDirs(rel)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if err := rmdirRetry(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rmdirRetry removes an empty cgroup directory, retrying briefly: the kernel
// reports EBUSY for a short while after the last process of a cgroup exits.
func rmdirRetry(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		err = unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

// ensureProfileCgroup creates (or updates) the profile's parent cgroup at
// rel with the profile's limits, in every hierarchy the mode uses.
func ensureProfileCgroup(rel string, l Limits) error {
	res := &specs.LinuxResources{}
	switch cgroups.Mode() {
	case cgroups.Unified:
		// The swap limit is written apart, as libcontainer writes a
		// container's: a kernel without memory.swap.max has no swap to
		// bound.
		l.resources(res, false)
		if _, err := cgroup2.NewManager(unifiedMount, rel, cgroup2.ToResources(res)); err != nil {
			return fmt.Errorf("creating profile cgroup %s: %w", rel, err)
		}
		if l.MemoryBytes > 0 && swapLimitable() {
			err := os.WriteFile(filepath.Join(unifiedMount, rel, "memory.swap.max"), []byte("0"), 0)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("limiting swap of profile cgroup %s: %w", rel, err)
			}
		}
	case cgroups.Legacy, cgroups.Hybrid:
		l.resources(res, swapLimitable())
		if _, err := cgroup1.New(cgroup1.StaticPath(rel), res); err != nil {
			return fmt.Errorf("creating profile cgroup %s: %w", rel, err)
		}
	default:
		return errors.New("creating profile cgroup: no cgroup hierarchy mounted")
	}
	return nil
}

// swapLimitable reports whether the kernel accounts swap to memory
// cgroups, so that a memory limit can bound swap too (Placement.LimitSwap):
// on cgroup v1, where the memory hierarchy has memory.memsw.* files (swap
// accounting is on); on cgroup v2, where the kernel has swap at all
// (/proc/swaps) and was not booted without swap accounting: its memory
// controller then has memory.swap.max.
var swapLimitable = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return false // rootless sandboxes have no cgroups
	}
	switch cgroups.Mode() {
	case cgroups.Unified:
		if _, err := os.Stat("/proc/swaps"); err != nil {
			return false
		}
		// Booted without swap accounting, the kernel has no
		// memory.swap.* files (where libcontainer and ensureProfileCgroup
		// then write nothing).
		b, _ := os.ReadFile("/proc/cmdline")
		for _, arg := range strings.Fields(string(b)) {
			if arg == "cgroup.memory=noswap" || arg == "swapaccount=0" {
				return false
			}
		}
		return true
	case cgroups.Legacy, cgroups.Hybrid:
		mounts, err := cgroupMounts()
		if err != nil {
			return false
		}
		for _, m := range mounts {
			if _, err := os.Stat(filepath.Join(m, "memory.memsw.limit_in_bytes")); err == nil {
				return true
			}
		}
	}
	return false
})

// swapUnbounded reports whether a memory limit here leaves swap unbounded:
// the kernel can swap (it has /proc/swaps) but does not account swap to
// memory cgroups (swapLimitable). Such a limit is reported not enforced
// as "swap".
func swapUnbounded() bool {
	if swapLimitable() {
		return false
	}
	_, err := os.Stat("/proc/swaps")
	return err == nil
}

// usage is what the kernel accounted to a finished container's cgroup.
type usage struct {
	cpu       time.Duration
	peakMem   int64
	oomKilled bool
}

// readUsage reads CPU time, peak memory and the OOM-kill counter from the
// container's cgroup directories (libcontainer's CgroupPaths: controller
// name -> path; "" is the v2 or hybrid unified path). Missing files leave
// the field zero: a rootless container may have no cgroup at all.
func readUsage(paths map[string]string) usage {
	var u usage
	if p, ok := paths["cpuacct"]; ok {
		if n, err := readInt(filepath.Join(p, "cpuacct.usage")); err == nil {
			u.cpu = time.Duration(n)
		}
	}
	if p, ok := paths["memory"]; ok {
		if n, err := readInt(filepath.Join(p, "memory.max_usage_in_bytes")); err == nil {
			u.peakMem = n
		}
	}
	// The v2 files exist only where controllers are (not in the hybrid
	// unified tree), so trying them in every mode is harmless.
	if p, ok := paths[""]; ok {
		if u.cpu == 0 {
			if n, ok := readKey(filepath.Join(p, "cpu.stat"), "usage_usec"); ok {
				u.cpu = time.Duration(n) * time.Microsecond
			}
		}
		if u.peakMem == 0 {
			if n, err := readInt(filepath.Join(p, "memory.peak")); err == nil {
				u.peakMem = n
			}
		}
	}
	u.oomKilled = oomKills(paths) > 0
	return u
}

// oomKills reads the OOM-kill counter of a container's memory cgroup
// (paths as for readUsage): v1's memory.oom_control, or v2's memory.events,
// which counts the kills in the cgroup's descendants too (a session's
// calls). Zero when neither file exists (no memory controller, rootless).
func oomKills(paths map[string]string) int64 {
	if p, ok := paths["memory"]; ok {
		if n, ok := readKey(filepath.Join(p, "memory.oom_control"), "oom_kill"); ok {
			return n
		}
	}
	if p, ok := paths[""]; ok {
		if n, ok := readKey(filepath.Join(p, "memory.events"), "oom_kill"); ok {
			return n
		}
	}
	return 0
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readKey reads "key value" lines (memory.oom_control, memory.events, cpu.stat).
func readKey(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
