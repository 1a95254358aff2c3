//go:build !seccomp && linux

package sandbox

import (
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// seccompAvailable reports whether this binary was built with seccomp
// support; this build (without -tags seccomp) has none.
const seccompAvailable = false

// SeccompProfile returns ErrSeccompUnavailable: this build has no seccomp.
func SeccompProfile() (*specs.LinuxSeccomp, error) { return nil, ErrSeccompUnavailable }

func isSeccompCompile() bool { return false }

func seccompCompileMain() {}

func compiledSeccomp(string, *configs.Seccomp) ([]byte, uint32, error) {
	return nil, 0, ErrSeccompUnavailable
}
