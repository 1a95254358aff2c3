package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// RequiredMountPoints returns the directories every prepared root must hold
// because the sandbox mounts onto them and the root is mounted read-only, so
// they cannot be created at run time: /proc, /sys, /dev and /tmp.
func RequiredMountPoints() []string { return []string{"/proc", "/sys", "/dev", "/tmp"} }

// Validate checks that dir is a root filesystem a sandboxed command can start
// in: a directory holding an executable /bin/sh (whose ELF interpreter, when it
// is dynamically linked, exists in the root too) and the RequiredMountPoints
// plus mountPoints (for example the workspace's mount point) as directories.
// Paths are resolved inside dir, the way they are seen from inside the root:
// an absolute symlink such as /bin/sh -> /bin/busybox names dir/bin/busybox,
// never the host's file.
//
// The error wraps ErrUnusableRoot and lists every problem found, so a caller
// (tether rootfs build after building; the sandbox before using a --rootfs
// directory) can show it as is. Validate reads only; it needs no privileges
// beyond reading dir.
func Validate(dir string, mountPoints ...string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrUnusableRoot, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w %s: not a directory", ErrUnusableRoot, dir)
	}
	var problems []string
	if p := checkShell(dir); p != "" {
		problems = append(problems, p)
	}
	for _, mp := range append(RequiredMountPoints(), mountPoints...) {
		p, err := securejoin.SecureJoin(dir, mp)
		if err != nil {
			problems = append(problems, fmt.Sprintf("resolving %s: %v", mp, err))
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("missing mount point %s", mp))
		case err != nil:
			problems = append(problems, fmt.Sprintf("checking mount point %s: %v", mp, err))
		case !fi.IsDir():
			problems = append(problems, fmt.Sprintf("mount point %s is not a directory", mp))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w %s: %s (build one with `tether rootfs build --from busybox DIR`)", ErrUnusableRoot, dir, strings.Join(problems, "; "))
	}
	return nil
}

// checkShell describes what is wrong with dir's /bin/sh, "" when nothing is.
func checkShell(dir string) string {
	sh, err := securejoin.SecureJoin(dir, "/bin/sh")
	if err != nil {
		return fmt.Sprintf("resolving /bin/sh: %v", err)
	}
	fi, err := os.Stat(sh)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing /bin/sh"
	case err != nil:
		return fmt.Sprintf("checking /bin/sh: %v", err)
	case !fi.Mode().IsRegular():
		return "/bin/sh is not a regular file"
	case fi.Mode().Perm()&0o111 == 0:
		return "/bin/sh is not executable"
	}
	// A shell script or another non-ELF file is left to the kernel; a
	// dynamically linked shell needs its loader inside the root.
	interp, err := Interpreter(sh)
	if err != nil {
		return ""
	}
	missing, err := MissingInterpreter(dir, interp)
	switch {
	case err != nil:
		return fmt.Sprintf("resolving /bin/sh's loader %s: %v", interp, err)
	case missing != "":
		return fmt.Sprintf("/bin/sh needs the loader %s, which the root lacks", interp)
	}
	return ""
}

// MissingInterpreter returns interp, a program's ELF interpreter
// (Interpreter), when the root dir lacks it, so that the program cannot
// start inside dir; "" when interp is "" (a static program) or dir holds
// it. interp is resolved inside dir, as the kernel resolves it once dir is
// the root: an absolute symlink on the way names a file in dir, never the
// host's.
func MissingInterpreter(dir, interp string) (string, error) {
	if interp == "" {
		return "", nil
	}
	ld, err := securejoin.SecureJoin(dir, interp)
	if err != nil {
		return "", fmt.Errorf("resolving %s in %s: %w", interp, dir, err)
	}
	switch _, err := os.Stat(ld); {
	case errors.Is(err, fs.ErrNotExist):
		return interp, nil
	case err != nil:
		return "", fmt.Errorf("checking %s in %s: %w", interp, dir, err)
	}
	return "", nil
}
