package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memfdExecScript writes a program's bytes into a memfd named "true" (a
// name no gate refuses) and executes it: it would leave ws/ran-memfd.
const memfdExecScript = `cat /proc/sys/vm/memfd_noexec; python3 -c "
import os
fd = os.memfd_create('true', 0)
os.write(fd, open('/usr/bin/touch', 'rb').read())
try:
    os.execve(fd, ['true', 'ran-memfd'], {})
except OSError as e:
    print('exec:', e.errno)
try:
    os.memfd_create('x', 0x10)
except OSError as e:
    print('MFD_EXEC:', e.errno)
"; /bin/echo ordinary`

// Every sandbox, one-shot and session (pooled sandboxes are sessions),
// has vm.memfd_noexec = 2 in its pid namespace: a program written into a
// memfd cannot be executed (EACCES, from the kernel, whatever the memfd is
// named), while programs from files run; the host's own setting is not
// touched. Before session 12 the memfd ran (red team E3).
func TestMemfdNoExec(t *testing.T) {
	requireSandbox(t)
	host, err := os.ReadFile("/proc/sys/vm/memfd_noexec")
	if err != nil {
		t.Skip("the kernel has no vm.memfd_noexec (Linux 6.3+)")
	}
	check := func(t *testing.T, ws, out string, notEnforced []string) {
		assert.NoFileExists(t, filepath.Join(ws, "ran-memfd"), out)
		assert.Equal(t, "2\nexec: 13\nMFD_EXEC: 13\nordinary\n", out)
		assert.NotContains(t, notEnforced, "memfd_noexec")
		now, err := os.ReadFile("/proc/sys/vm/memfd_noexec")
		require.NoError(t, err)
		assert.Equal(t, strings.TrimSpace(string(host)), strings.TrimSpace(string(now)), "the host's setting")
	}
	t.Run("one-shot", func(t *testing.T) {
		r := newTestRunner(t)
		ws := t.TempDir()
		res, out := run(t, r, Config{Workspace: ws}, memfdExecScript)
		check(t, ws, out, res.NotEnforced)
	})
	t.Run("session", func(t *testing.T) {
		m := newTestSessions(t)
		ws := t.TempDir()
		spec := testSpec()
		spec.Config.Workspace = ws
		s, err := m.Open(t.Context(), "default", "memfd", spec)
		require.NoError(t, err)
		out, res := sh(t, s, memfdExecScript)
		check(t, ws, out, res.NotEnforced)
	})
}
