package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceAppendsStagesWithMonotonicTimes(t *testing.T) {
	old := traceFile
	t.Cleanup(func() { traceFile = old })

	traceFile = nil
	Trace("unset") // TETHER_TRACE unset: nothing, and no panic on nil

	path := filepath.Join(t.TempDir(), "trace")
	t.Setenv("TETHER_TRACE", path)
	traceFile = openTrace()
	require.NotNil(t, traceFile)
	Trace("first stage")
	Trace("second")
	require.NoError(t, traceFile.Close())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 2)
	var prev int64
	for i, want := range []string{"first stage", "second"} {
		f := strings.SplitN(lines[i], " ", 3)
		require.Len(t, f, 3, lines[i])
		ns, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, ns, prev, "times go forward")
		prev = ns
		assert.Equal(t, strconv.Itoa(os.Getpid()), f[1])
		assert.Equal(t, want, f[2])
	}
}
