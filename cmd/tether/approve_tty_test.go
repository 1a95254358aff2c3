package main

import (
	"context"
	"os"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/mandate"
)

// On a terminal, approve without --sha asks about the hash of the diff it
// printed, and approves only on "y".
func TestApproveOnATerminalConfirmsTheShownHash(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TETHER_STATE_DIR", dir)
	t.Setenv("NO_COLOR", "1")
	require.Equal(t, 0, run([]string{"mandate", "observe", "j", "--run", "r", "--", "git status"}))
	require.Equal(t, 0, run([]string{"mandate", "compile", "j"}))

	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	defer tty.Close()
	stdin, stderr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = tty, tty // the prompt goes to the terminal too
	defer func() { os.Stdin, os.Stderr = stdin, stderr }()
	go func() { // drain what tether writes to the terminal
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()

	_, err = ptmx.Write([]byte("n\n"))
	require.NoError(t, err)
	assert.Equal(t, 1, run([]string{"mandate", "approve", "j", "--by", "alice"}), "no is no")
	assert.Equal(t, "observe", jobMode(t, dir))

	_, err = ptmx.Write([]byte("y\n"))
	require.NoError(t, err)
	require.Equal(t, 0, run([]string{"mandate", "approve", "j", "--by", "alice"}))
	assert.Equal(t, "enforce", jobMode(t, dir))
}

func jobMode(t *testing.T, dir string) string {
	t.Helper()
	s, err := mandate.Open(dir, mandate.Options{})
	require.NoError(t, err)
	defer s.Close()
	js, err := s.Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, js, 1)
	return js[0].Mode
}
