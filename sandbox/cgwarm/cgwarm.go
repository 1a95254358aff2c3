// Package cgwarm takes the wait out of placing a container in its cgroups.
//
// Moving a process between cgroups takes the kernel's global
// cgroup_threadgroup_rwsem for writing. The first such write after a quiet
// spell waits for an RCU grace period (7-15 ms measured on this project's
// cgroup v1 hosts), while writes within a grace period of an earlier one do
// not wait. Every container start pays that wait once, when libcontainer
// moves the container's init into its cgroups — unless an earlier write has
// already paid it. Prime is that earlier write: started in the background
// some milliseconds before the container is placed, it turns the wait into
// time spent on set-up that had to happen anyway.
//
// The package imports nothing beyond the standard library so that a process
// can start Prime from its first package initialisers (see
// cmd/tether/internal/runwarm), long before main runs.
package cgwarm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Prime moves this process into the cgroup it is already in, in one
// hierarchy: a move that changes nothing but takes the lock. It blocks for
// the grace period when the lock is cold, so call it from a goroutine. Best
// effort: a host where it cannot write (no root, no cgroupfs) just keeps
// the wait.
func Prime() {
	file := procsFile()
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()))
}

// procsFile returns the cgroup.procs file of this process's own cgroup: in
// the v1 pids hierarchy on a v1 or hybrid host, else in the v2 tree.
func procsFile() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	return pickProcsFile(string(b), fileExists)
}

// pickProcsFile chooses procsFile's answer from the text of
// /proc/self/cgroup; exists says whether a path exists on this host.
func pickProcsFile(procCgroup string, exists func(string) bool) string {
	v2 := ""
	for _, line := range strings.Split(strings.TrimSpace(procCgroup), "\n") {
		// hierarchy-id:controllers:path
		id, rest, _ := strings.Cut(line, ":")
		controllers, path, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(path, "/") || strings.Contains(path, "..") {
			continue
		}
		for _, c := range strings.Split(controllers, ",") {
			if c == "pids" {
				return filepath.Join("/sys/fs/cgroup/pids", path, "cgroup.procs")
			}
		}
		if id == "0" && controllers == "" {
			v2 = path
		}
	}
	if v2 == "" {
		return ""
	}
	// On a hybrid host without a pids hierarchy the v2 tree is the unified
	// mount; on a v2 host it is /sys/fs/cgroup itself.
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if f := filepath.Join(root, v2, "cgroup.procs"); exists(f) {
			return f
		}
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
