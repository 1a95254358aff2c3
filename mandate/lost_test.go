package mandate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestLostObservationsReported: an observe-mode call whose observation
// cannot be stored is allowed with a warning, and the next compile says
// how many calls its evidence lacks.
func TestLostObservationsReported(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	run := Run{Job: "j", ID: "r1", Mode: RunCron}
	require.NoError(t, s.Observe(ctx, run, term("git status")))
	s.faultHook = func(Call) error { return errors.New("disk full") }
	for range 3 {
		d := s.Check(ctx, run, term("curl https://example.com"))
		assert.Equal(t, Allow, d.Verdict, "observe mode never blocks")
		assert.Equal(t, LostWarning, d.Warning)
	}
	s.faultHook = nil
	d := s.Check(ctx, run, term("ls"))
	assert.Empty(t, d.Warning)
	v, err := s.Compile(ctx, "j")
	require.NoError(t, err)
	assert.Equal(t, 3, v.LostObservations)
}

// TestObservationsOnFullDisk: the store's directory is a tiny filesystem
// that fills up; calls keep being allowed with a warning, and once space is
// back the compile reports every call that was not recorded.
func TestObservationsOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tether-mandate-full", dir, "tmpfs", 0, "size=512k,mode=0700"); err != nil {
		testenv.SkipOrFail(t, "mounting a tmpfs: "+err.Error())
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	ctx := t.Context()
	s, err := Open(dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	run := Run{Job: "j", ID: "r1", Mode: RunCron}
	require.NoError(t, s.Observe(ctx, run, term("git status")))

	// Fill the rest of the filesystem.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	require.NoError(t, err)
	_, _ = f.Write(make([]byte, 1<<20)) // ENOSPC part way, as intended
	require.NoError(t, f.Close())

	long := "echo " + strings.Repeat("x", 8000)
	warned := 0
	for range 50 {
		d := s.Check(ctx, run, term(long))
		require.Equal(t, Allow, d.Verdict)
		if d.Warning != "" {
			warned++
		}
	}
	require.NotZero(t, warned, "the disk never filled up")

	require.NoError(t, os.Remove(filler))
	require.NoError(t, s.Observe(ctx, run, term("ls")))
	v, err := s.Compile(ctx, "j")
	require.NoError(t, err)
	assert.Equal(t, warned, v.LostObservations, "every call that was not recorded is counted")
}
