package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunGated checks the gate between the sandbox's start-up and the
// program: the gate runs while the sandbox starts, the program runs only
// when the gate passes, a refusal is returned as is with nothing run and
// nothing left behind, and the gate is not consulted when the sandbox
// cannot be built.
func TestRunGated(t *testing.T) {
	errRefused := errors.New("refused by the test gate")
	tests := []struct {
		name      string
		cfg       func(ws string) Config
		gateErr   error
		wantErr   error
		wantRan   bool
		wantCalls int
	}{
		{name: "approved", cfg: func(ws string) Config { return Config{Workspace: ws} }, wantRan: true, wantCalls: 1},
		{name: "refused", cfg: func(ws string) Config { return Config{Workspace: ws} }, gateErr: errRefused, wantErr: errRefused, wantCalls: 1},
		{name: "sandbox not built", cfg: func(ws string) Config { return Config{Workspace: ws, Hostname: "bad host name"} }, wantErr: ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRunner(t)
			ws := t.TempDir()
			var calls atomic.Int32
			gate := func() error {
				calls.Add(1)
				// The sandbox is being started while the gate is
				// consulted (its cgroup appears), yet the program does
				// not run.
				assert.Eventually(t, func() bool {
					dirs, err := cgroupDirs("/" + r.CgroupPrefix)
					return err == nil && len(dirs) > 0
				}, 10*time.Second, time.Millisecond, "the sandbox starts while the gate decides")
				time.Sleep(50 * time.Millisecond)
				_, err := os.Stat(filepath.Join(ws, "ran"))
				assert.ErrorIs(t, err, os.ErrNotExist, "the program ran before the gate")
				return tt.gateErr
			}
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := r.RunGated(ctx, tt.cfg(ws), Command{Shell: "touch ran", Stdout: &out, Stderr: &out}, gate)
			assert.Equal(t, tt.wantCalls, int(calls.Load()))
			_, statErr := os.Stat(filepath.Join(ws, "ran"))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.wantErr == errRefused {
					assert.Same(t, errRefused, err, "the gate's error is returned as is")
				}
				assert.Nil(t, res)
				assert.ErrorIs(t, statErr, os.ErrNotExist, "a refused program must not run")
				return
			}
			require.NoError(t, err, "output: %s", out.String())
			assert.Equal(t, 0, res.ExitCode, "output: %s", out.String())
			assert.Equal(t, tt.wantRan, statErr == nil)
		})
	}
}
