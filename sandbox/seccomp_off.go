//go:build !seccomp && linux

package sandbox

import "github.com/opencontainers/runtime-spec/specs-go"

// seccompAvailable reports whether this binary was built with seccomp
// support; this build (without -tags seccomp) has none.
const seccompAvailable = false

func seccompProfile(*specs.Spec) (*specs.LinuxSeccomp, error) { return nil, ErrSeccompUnavailable }
