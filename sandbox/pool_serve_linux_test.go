package sandbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsDevNull(t *testing.T) {
	open := func(path string) *os.File {
		f, err := os.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	plain := filepath.Join(t.TempDir(), "input")
	require.NoError(t, os.WriteFile(plain, []byte("data"), 0o600))

	assert.True(t, isDevNull(open(os.DevNull)))
	for name, in := range map[string]io.Reader{
		"nil": nil, "nil file": (*os.File)(nil), "a pipe": r, "a regular file": open(plain),
		"/dev/zero": open("/dev/zero"), "a reader": bytes.NewReader(nil),
	} {
		assert.False(t, isDevNull(in), name)
	}
}

// A pooled command whose stdin is /dev/null is asked for without stdin
// (the sandbox's own /dev/null reads the same), so no stdin frames follow;
// other input is still forwarded.
func TestRunPooledNullStdin(t *testing.T) {
	root := t.TempDir()
	l, err := ListenPool(root)
	require.NoError(t, err)
	defer l.Close()
	asked := make(chan *PoolRequest, 1)
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			var f poolFrame
			if _, err := readFrame(c, nil, &f); err == nil && f.Request != nil {
				asked <- f.Request
			}
			_ = writeFrame(c, &poolFrame{Op: poolNoMatch, Reason: "test"})
			c.Close()
		}
	}()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		want  bool
	}{{"/dev/null", null, false}, {"a pipe", r, true}} {
		_, err := RunPooled(t.Context(), root, PoolRequest{Args: []string{"true"}, Stdin: true}, nil, tc.stdin, nil, nil)
		require.True(t, errors.Is(err, ErrPoolEmpty), "%s: %v", tc.name, err)
		assert.Equal(t, tc.want, (<-asked).Stdin, tc.name)
	}
}

// A session command whose stdin is /dev/null reads the sandbox's own
// /dev/null (a character device, not a pipe from the host), and still
// reads end of file; other input still comes through its pipe.
func TestSessionNullStdin(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "null-stdin", testSpec())
	require.NoError(t, err)
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	script := `if [ -p /dev/stdin ]; then echo pipe; else echo not a pipe; fi; cat; echo end`
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		want  string
	}{
		{"/dev/null", null, "not a pipe\nend\n"},
		{"a reader", strings.NewReader("typed\n"), "pipe\ntyped\nend\n"},
	} {
		var out bytes.Buffer
		res, err := s.Run(t.Context(), Command{Shell: script, Stdin: tc.stdin, Stdout: &out})
		require.NoError(t, err, tc.name)
		assert.Equal(t, 0, res.ExitCode, tc.name)
		assert.Equal(t, tc.want, out.String(), tc.name)
	}
}
