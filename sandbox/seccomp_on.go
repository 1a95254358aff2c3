//go:build seccomp && linux

package sandbox

import (
	"runtime"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// seccompAvailable reports whether this binary was built with seccomp support.
const seccompAvailable = true

// nativeArch is the seccomp architecture of this build, when known.
var nativeArch = map[string]specs.Arch{
	"amd64": specs.ArchX86_64,
	"arm64": specs.ArchAARCH64,
}[runtime.GOARCH]

// SeccompProfile returns the seccomp filter every sandbox gets unless its
// config turns seccomp off, in OCI runtime-spec form: seccompProfile for
// the sandbox's capability set, trimmed to this architecture's syscalls.
// scripts/bench-launch.sh hands it to runc for a like-for-like row.
func SeccompProfile() (*specs.LinuxSeccomp, error) {
	caps := &specs.LinuxCapabilities{Bounding: dockerCaps, Effective: dockerCaps, Permitted: dockerCaps}
	prof, err := seccompProfile(&specs.Spec{Process: &specs.Process{Capabilities: caps}})
	if err != nil {
		return nil, err
	}
	nativeSyscallsOnly(prof)
	return prof, nil
}

// seccompProfile returns Docker's default seccomp profile for the spec's
// capabilities, with three changes:
//   - the io_uring syscalls are explicitly denied: io_uring submits work
//     that bypasses per-syscall filtering;
//   - only the native architecture is listed, so syscalls through a
//     compatibility ABI (i386 int 0x80, x32) kill the caller instead of
//     being filtered a second time. Besides closing an old attack surface,
//     this makes the filter about ten times cheaper to build in every
//     container's init (~3 ms instead of ~30 ms of CPU on x86_64);
//   - the file-privilege rules of fileRules (seccomp_files_on.go).
func seccompProfile(s *specs.Spec) (*specs.LinuxSeccomp, error) {
	prof, err := seccomp.GetDefaultProfile(s)
	if err != nil {
		return nil, err
	}
	if nativeArch != "" {
		prof.Architectures = []specs.Arch{nativeArch}
	}
	eperm := uint(unix.EPERM)
	prof.Syscalls = append(prof.Syscalls, specs.LinuxSyscall{
		Names:    []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
		Action:   specs.ActErrno,
		ErrnoRet: &eperm,
	})
	fileRules(prof)
	return prof, nil
}
