package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

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
	if l.MemoryBytes > 0 {
		m := l.MemoryBytes
		res.Memory = &specs.LinuxMemory{Limit: &m}
	}
	if l.Pids > 0 {
		p := l.Pids
		res.Pids = &specs.LinuxPids{Limit: &p}
	}
	if l.CPUs > 0 {
		period := uint64(100000)
		quota := int64(l.CPUs * float64(period))
		res.CPU = &specs.LinuxCPU{Period: &period, Quota: &quota}
	}
	switch cgroups.Mode() {
	case cgroups.Unified:
		if _, err := cgroup2.NewManager("/sys/fs/cgroup", rel, cgroup2.ToResources(res)); err != nil {
			return fmt.Errorf("creating profile cgroup %s: %w", rel, err)
		}
	case cgroups.Legacy, cgroups.Hybrid:
		if _, err := cgroup1.New(cgroup1.StaticPath(rel), res); err != nil {
			return fmt.Errorf("creating profile cgroup %s: %w", rel, err)
		}
	default:
		return errors.New("creating profile cgroup: no cgroup hierarchy mounted")
	}
	return nil
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
		if n, ok := readKey(filepath.Join(p, "memory.oom_control"), "oom_kill"); ok && n > 0 {
			u.oomKilled = true
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
		if n, ok := readKey(filepath.Join(p, "memory.events"), "oom_kill"); ok && n > 0 {
			u.oomKilled = true
		}
	}
	return u
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
