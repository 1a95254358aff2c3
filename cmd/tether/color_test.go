package main

import (
	"os"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUseColor: colour only on a terminal, never with --no-color or a
// non-empty NO_COLOR (https://no-color.org: an empty NO_COLOR is unset).
func TestUseColor(t *testing.T) {
	ptm, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	file, err := os.Create(t.TempDir() + "/out")
	require.NoError(t, err)
	defer file.Close()

	t.Setenv("NO_COLOR", "")
	assert.True(t, useColor(tty, false), "a terminal")
	assert.False(t, useColor(tty, true), "--no-color")
	assert.False(t, useColor(file, false), "a file")
	t.Setenv("NO_COLOR", "1")
	assert.False(t, useColor(tty, false), "NO_COLOR=1")
}
