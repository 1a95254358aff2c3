//go:build seccomp && linux

package sandbox

import (
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNativeSyscallsOnly checks that trimming the profile drops exactly the
// names that are no syscalls of this architecture (or unknown to
// libseccomp), keeps every rule's action and arguments, and leaves a
// profile listing other architectures alone.
func TestNativeSyscallsOnly(t *testing.T) {
	if nativeArch == "" {
		t.Skip("no native seccomp architecture known for this build")
	}
	spec := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: dockerCaps}}}
	full, err := seccompProfile(spec)
	require.NoError(t, err)
	trimmed, err := seccompProfile(spec)
	require.NoError(t, err)
	nativeSyscallsOnly(trimmed)

	kept := map[string]bool{}
	for _, sc := range trimmed.Syscalls {
		for _, n := range sc.Names {
			kept[n] = true
		}
	}
	dropped := 0
	for _, sc := range full.Syscalls {
		for _, n := range sc.Names {
			nr, err := libseccomp.GetSyscallFromName(n)
			native := err == nil && nr >= 0
			assert.Equal(t, native, kept[n], "syscall %q (resolves to %d, %v)", n, nr, err)
			if !native {
				dropped++
			}
		}
	}
	assert.Positive(t, dropped, "Docker's profile lists other architectures' syscalls")
	assert.True(t, kept["openat"] && kept["clone"] && kept["read"])

	// Every kept rule is its original with fewer names.
	i := 0
	for _, sc := range full.Syscalls {
		var names []string
		for _, n := range sc.Names {
			if kept[n] {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			continue
		}
		require.Less(t, i, len(trimmed.Syscalls))
		want := sc
		want.Names = names
		assert.Equal(t, want, trimmed.Syscalls[i])
		i++
	}
	assert.Equal(t, len(trimmed.Syscalls), i)

	multi, err := seccompProfile(spec)
	require.NoError(t, err)
	multi.Architectures = []specs.Arch{nativeArch, specs.ArchX86}
	nativeSyscallsOnly(multi)
	full.Architectures = multi.Architectures
	assert.Equal(t, full, multi, "a multi-architecture profile keeps every name")
}
