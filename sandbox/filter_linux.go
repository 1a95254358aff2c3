package sandbox

import (
	"sync"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// sandboxFilter is the seccomp filter of every sandbox that has one, in the
// runtime spec's form and in libcontainer's.
type sandboxFilter struct {
	spec *specs.LinuxSeccomp
	lc   *configs.Seccomp
}

// sandboxFilters is SeccompProfile, built and translated once per process:
// every sandbox has the capability set dockerCaps, so every sandbox with
// seccomp on has this filter. Both forms are shared: never modify them.
var sandboxFilters = sync.OnceValues(func() (sandboxFilter, error) {
	prof, err := SeccompProfile()
	if err != nil {
		return sandboxFilter{}, err
	}
	lc, err := specconv.SetupSeccomp(prof)
	if err != nil {
		return sandboxFilter{}, err
	}
	return sandboxFilter{spec: prof, lc: lc}, nil
})
