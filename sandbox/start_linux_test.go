package sandbox

import (
	"errors"
	"testing"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartGuardedTurnsAPanicIntoAnError: a panic inside libcontainer's
// start (as its mount-source race panics with "send on closed channel") is
// an error wrapping ErrEnginePanic that names the panic, not the end of the
// process; a start's own error and success pass through unchanged.
func TestStartGuardedTurnsAPanicIntoAnError(t *testing.T) {
	t.Parallel()
	p := &libcontainer.Process{} // never started: the kill finds nothing
	err := startGuarded(p, func() error {
		ch := make(chan int)
		close(ch)
		ch <- 1 // the runtime panic libcontainer 1.5.3 hits
		return nil
	})
	require.ErrorIs(t, err, ErrEnginePanic)
	assert.ErrorContains(t, err, "send on closed channel")

	own := errors.New("unable to start init")
	assert.Equal(t, own, startGuarded(p, func() error { return own }))
	assert.NoError(t, startGuarded(p, func() error { return nil }))
}
