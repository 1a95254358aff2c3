//go:build !seccomp && linux

package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeccompRequiredRefusesWithoutSupport(t *testing.T) {
	t.Parallel()
	for _, mode := range []SeccompMode{"", SeccompRequired} {
		_, err := Config{Rootfs: testLayout, Seccomp: mode}.Libcontainer("c1", testPlacement)
		assert.ErrorIs(t, err, ErrSeccompUnavailable, "mode %q", mode)
	}
	lc, err := Config{Rootfs: testLayout, Seccomp: SeccompOptional}.Libcontainer("c1", testPlacement)
	require.NoError(t, err)
	assert.Nil(t, lc.Seccomp, "optional runs unfiltered (and Run reports it in NotEnforced)")
}
