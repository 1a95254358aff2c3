//go:build !seccomp && linux

package sandbox

import "github.com/opencontainers/runtime-spec/specs-go"

// nativeSyscallsOnly needs libseccomp; without it there is no profile.
func nativeSyscallsOnly(*specs.LinuxSeccomp) {}
