package sandbox

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tether-dev/tether/rootfs"
)

// TestSessionOnPreparedRootNeedsItsLoader: a session on a busybox root
// runs this binary inside the root as its supervisor. The test binary is
// dynamically linked, like a plain `go build` of tether: the busybox root
// lacks its loader, and the session is refused up front with
// ErrDynamicBinary saying to build statically, nothing left behind —
// not the supervisor dying unheard ("waiting for session supervisor:
// EOF"). Given the host's loader only, the supervisor still dies (in the
// loader) and the error says a library may be missing; given the
// libraries this binary links too, the session runs: the check refuses
// exactly the missing loader. (The static binary on a busybox root: scripts/smoke.sh.)
func TestSessionOnPreparedRootNeedsItsLoader(t *testing.T) {
	requireSandbox(t)
	interp, err := selfInterp()
	require.NoError(t, err)
	require.NotEmpty(t, interp, "the test binary is expected to be dynamically linked (cgo)")
	m := newTestSessions(t)
	dir := filepath.Join(stateTempDir(t), "root")
	_, err = rootfs.Build(t.Context(), rootfs.BuildOptions{From: rootfs.FromBusybox, Dir: dir})
	if err != nil {
		t.Skipf("cannot build a busybox root here (busybox-static: scripts/provision.sh): %v", err)
	}
	spec := testSpec()
	spec.Config.Rootfs = rootfs.Layout{Kind: rootfs.KindDir, Dir: dir}

	var out bytes.Buffer
	_, err = m.Run(t.Context(), "p", "bare", spec, Command{Shell: "echo ran", Stdout: &out})
	require.ErrorIs(t, err, ErrDynamicBinary)
	assert.ErrorContains(t, err, interp)
	assert.ErrorContains(t, err, "make build")
	assert.Empty(t, out.String())
	assert.Empty(t, m.List(), "no session was made")

	// Give the root the loader and the libraries this binary links, as the
	// host has them.
	f, err := elf.Open("/proc/self/exe")
	require.NoError(t, err)
	libs, err := f.ImportedLibraries()
	f.Close()
	require.NoError(t, err)
	copyIn := func(hostPath, rootPath string) {
		real, err := filepath.EvalSymlinks(hostPath)
		require.NoError(t, err)
		b, err := os.ReadFile(real)
		require.NoError(t, err)
		dst := filepath.Join(dir, rootPath)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, b, 0o755))
	}
	copyIn(interp, interp)
	// The loader alone: the check passes, the supervisor dies in the
	// loader, and the error says why that may be.
	_, err = m.Run(t.Context(), "p", "nolibs", spec, Command{Shell: "echo ran", Stdout: &out})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrDynamicBinary)
	assert.ErrorContains(t, err, "may lack a library it links; build tether statically with `make build`")
	assert.Empty(t, out.String())
	for _, lib := range libs {
		found := false
		for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
			if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
				copyIn(filepath.Join(d, lib), filepath.Join(d, lib))
				found = true
				break
			}
		}
		require.True(t, found, "library %s of the test binary not found on the host", lib)
	}
	res, err := m.Run(t.Context(), "p", "loader", spec, Command{Shell: "echo ran; test -e /usr/bin/go || echo no-host-go", Stdout: &out})
	require.NoError(t, err)
	assert.Zero(t, res.ExitCode)
	assert.Equal(t, "ran\nno-host-go\n", out.String(), "the session runs in the prepared root")
}

// TestOneShotOnPreparedRootSaysWhatItsHelperWouldDo (red team s14 F5): a
// one-shot with a workspace on a busybox root, run by this dynamically
// linked test binary, cannot have the creation helper (the trampoline runs
// this binary inside the root, which lacks its loader), so the gate's
// rules that the helper performs are off: the result must say so by name
// (before, it listed only nested-repos while a host listener in the
// workspace was reachable and umask 0 left 0666/0777 entries). A static
// build (make build) has the helper in any root.
func TestOneShotOnPreparedRootSaysWhatItsHelperWouldDo(t *testing.T) {
	requireSandbox(t)
	interp, err := selfInterp()
	require.NoError(t, err)
	require.NotEmpty(t, interp, "the test binary is expected to be dynamically linked (cgo)")
	dir := filepath.Join(stateTempDir(t), "root")
	if _, err := rootfs.Build(t.Context(), rootfs.BuildOptions{From: rootfs.FromBusybox, Dir: dir}); err != nil {
		t.Skipf("cannot build a busybox root here (busybox-static: scripts/provision.sh): %v", err)
	}
	ws, _ := poisonWorkspace(t, false)
	var out bytes.Buffer
	cfg := Config{Workspace: ws, Rootfs: rootfs.Layout{Kind: rootfs.KindDir, Dir: dir}, Limits: Limits{Pids: 64, Timeout: 30 * time.Second}}
	res, err := newTestRunner(t).Run(t.Context(), cfg, Command{Shell: "echo ran", Stdout: &out, Stderr: &out})
	require.NoError(t, err, "output: %s", out.String())
	assert.Contains(t, out.String(), "ran")
	for _, rule := range helperRules {
		assert.Contains(t, res.NotEnforced, rule, "a rule the missing helper performs is not reported")
	}
}
