package sandbox

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSessionInteractiveTTY(t *testing.T) {
	m := newTestSessions(t)
	s, err := m.Open(t.Context(), "default", "tty", testSpec())
	require.NoError(t, err)

	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	resize := make(chan Winsize)
	type ret struct {
		res *Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := s.Interactive(t.Context(),
			Command{Shell: `tty; stty size; echo "term=$TERM"; while read a; do [ "$a" = q ] && break; echo "got:$a"; stty size; done; [ -t 0 ] && echo stdin-is-tty; exit 7`},
			Terminal{Stdin: inR, Stdout: &out, Size: Winsize{Rows: 33, Cols: 101}, Resize: resize, Env: []string{"TERM=xterm-test"}})
		done <- ret{res, err}
	}()
	waitFor := func(s string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), s) }, 20*time.Second, 10*time.Millisecond, "waiting for %q in %q", s, out.String())
	}
	waitFor("33 101")
	_, err = inW.Write([]byte("hello\n"))
	require.NoError(t, err)
	waitFor("got:hello")
	resize <- Winsize{Rows: 40, Cols: 120}
	// The resize and the typed lines travel separately: type until the
	// shell reports the new size.
	require.Eventually(t, func() bool {
		_, err := inW.Write([]byte("again\n"))
		return err == nil && strings.Contains(out.String(), "40 120")
	}, 20*time.Second, 50*time.Millisecond)
	_, err = inW.Write([]byte("q\n"))
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, 7, r.res.ExitCode)
	text := strings.ReplaceAll(out.String(), "\r\n", "\n")
	assert.Regexp(t, `(?m)^/dev/pts/\d+$`, text)
	assert.Contains(t, text, "term=xterm-test\n")
	assert.Contains(t, text, "got:hello\n")
	assert.Contains(t, text, "stdin-is-tty\n")
	// Typed input is echoed by the terminal's line discipline.
	assert.Contains(t, text, "hello\n")
}
