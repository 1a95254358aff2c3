package approval

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/testenv"
)

// TestFileAuditDiskFull fills a tiny filesystem with audit records until
// appends fail, keeps appending into the full disk, then frees space and
// appends again: every line of the log parses, and exactly the records
// whose Append succeeded are in it.
func TestFileAuditDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tether-audit-full", dir, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		testenv.SkipOrFail(t, "mounting a tmpfs: "+err.Error())
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })

	// A filler file we can delete to make room again later.
	filler := filepath.Join(dir, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 64<<10), 0o600))

	a, err := OpenFileAudit(filepath.Join(dir, "audit.jsonl"))
	require.NoError(t, err)
	defer a.Close()
	// Records of an odd size so that appends straddle page boundaries
	// and a failing one is usually written in part.
	cmd := strings.Repeat("x", 2999)
	var stored []string
	failures := 0
	for i := 0; failures < 20 && i < 10000; i++ {
		id := "r" + strconv.Itoa(i)
		err := a.Append(t.Context(), Decision{ID: id, Command: cmd, Stage: StageRoute})
		switch {
		case err == nil:
			require.Zero(t, failures, "an append succeeded after the disk filled up")
			stored = append(stored, id)
		case errors.Is(err, syscall.ENOSPC):
			failures++
		default:
			require.NoError(t, err)
		}
	}
	require.Equal(t, 20, failures, "the disk never filled up")
	require.NotEmpty(t, stored)

	require.NoError(t, os.Remove(filler))
	require.NoError(t, a.Append(t.Context(), Decision{ID: "after", Command: cmd, Stage: StageRoute}))
	stored = append(stored, "after")

	data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	require.NoError(t, err)
	rep, err := VerifyAudit(bytes.NewReader(data))
	require.NoError(t, err, "every line parses after the disk-full episode")
	assert.False(t, rep.TornTail)
	assert.Equal(t, len(stored), rep.Records, "exactly the acknowledged records are stored")
	assert.Equal(t, len(stored), bytes.Count(data, []byte{'\n'}))
}
