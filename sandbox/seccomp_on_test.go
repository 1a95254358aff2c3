//go:build seccomp && linux

package sandbox

import (
	"testing"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLibcontainerSeccompProfile(t *testing.T) {
	t.Parallel()
	for _, mode := range []SeccompMode{"", SeccompRequired, SeccompOptional} {
		lc, err := Config{Rootfs: testLayout, Seccomp: mode}.Libcontainer("c1", testPlacement)
		require.NoError(t, err)
		require.NotNil(t, lc.Seccomp, "mode %q", mode)
		assert.Equal(t, configs.Errno, lc.Seccomp.DefaultAction, "unlisted syscalls fail")
		denied := map[string]bool{}
		allowed := map[string]bool{}
		for _, s := range lc.Seccomp.Syscalls {
			switch s.Action {
			case configs.Errno:
				denied[s.Name] = true
			case configs.Allow:
				if len(s.Args) == 0 {
					allowed[s.Name] = true
				}
			}
		}
		for _, name := range []string{"io_uring_setup", "io_uring_enter", "io_uring_register"} {
			assert.True(t, denied[name], "%s explicitly denied", name)
			assert.False(t, allowed[name], "%s not allowed", name)
		}
		// ptrace is allowed by Docker's profile on kernels >= 4.8; the pid
		// namespace keeps host processes out of reach.
		for _, name := range []string{"keyctl", "bpf", "init_module", "finit_module", "mount", "unshare", "kexec_load"} {
			assert.False(t, allowed[name], "%s must not be unconditionally allowed", name)
		}
		assert.True(t, allowed["read"])
		if nativeArch != "" {
			assert.Len(t, lc.Seccomp.Architectures, 1, "only the native ABI")
		}
	}
	lc, err := Config{Rootfs: testLayout, Seccomp: SeccompOff}.Libcontainer("c1", testPlacement)
	require.NoError(t, err)
	assert.Nil(t, lc.Seccomp)
}

// SeccompProfile is exactly the filter a default sandbox's spec carries, so
// what the launch benchmark gives runc is what tether applies.
func TestSeccompProfileIsTheSandboxFilter(t *testing.T) {
	t.Parallel()
	s, err := Config{Rootfs: testLayout}.Spec(testPlacement)
	require.NoError(t, err)
	prof, err := SeccompProfile()
	require.NoError(t, err)
	assert.Equal(t, s.Linux.Seccomp, prof)
}
