package rootfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// mountsUnder lists the mount points at or below dir (dir's symlinks
// resolved, as the kernel reports mount points), deepest first.
func mountsUnder(dir string) ([]string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	infos, err := mountinfo.GetMounts(mountinfo.PrefixFilter(real))
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	var points []string
	for _, m := range infos {
		points = append(points, m.Mountpoint)
	}
	// Deepest first, so that nested mounts are detached before their parents.
	slices.SortFunc(points, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(points), nil
}

// removeBuilt removes a build directory. os.RemoveAll does not stop at mount
// points, and debootstrap mounts /proc and /sys (and in a container binds
// /dev) into its target, so removing a killed build blindly could delete
// host files. With detach set (our own temporary build, where only the build
// mounted anything) mounts below dir are lazily unmounted first; without it
// (a user's directory) any mount makes removeBuilt refuse.
func removeBuilt(dir string, detach bool) error {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	mounts, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if detach {
		for _, m := range mounts {
			if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmounting %s: %w", m, err)
			}
		}
		if mounts, err = mountsUnder(dir); err != nil {
			return err
		}
	}
	if len(mounts) > 0 {
		return fmt.Errorf("refusing to remove %s: mounts remain below it (%s)", dir, strings.Join(mounts, ", "))
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}
