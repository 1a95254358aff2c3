//go:build seccomp && linux

package sandbox

import (
	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// seccompAvailable reports whether this binary was built with seccomp support.
const seccompAvailable = true

// seccompProfile returns Docker's default seccomp profile for the spec's
// capabilities, with the io_uring syscalls explicitly denied: io_uring
// submits work that bypasses per-syscall filtering.
func seccompProfile(s *specs.Spec) (*specs.LinuxSeccomp, error) {
	prof, err := seccomp.GetDefaultProfile(s)
	if err != nil {
		return nil, err
	}
	eperm := uint(unix.EPERM)
	prof.Syscalls = append(prof.Syscalls, specs.LinuxSyscall{
		Names:    []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
		Action:   specs.ActErrno,
		ErrnoRet: &eperm,
	})
	return prof, nil
}
