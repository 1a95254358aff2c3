package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// homeGit runs git on the host in dir as a person whose home is home: its
// global configuration (home/.gitconfig) in effect, with the repository's.
func homeGit(t *testing.T, dir, home string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// hostTrustRefused reports whether blocks hold a refusal because the host
// trusts the path.
func hostTrustRefused(blocks []CreateBlock) bool {
	for _, b := range blocks {
		if strings.Contains(b.Reason, "the host trusts it") {
			return true
		}
	}
	return false
}

// hostConfigScript plants a pre-commit hook in DIR and an fsmonitor
// command in team.gitconfig, printing WROTE-<what> for each that landed.
func hostConfigScript(dir, markers string) string {
	return fmt.Sprintf(`mkdir -p %[1]s && printf '#!/bin/sh\ntouch %[2]s/hook\n' > %[1]s/pre-commit && chmod 755 %[1]s/pre-commit && echo WROTE-HOOK
%[3]s
echo done`, dir, markers, fsmonitorLine("team.gitconfig", markers, "include"))
}

// TestPoisonHostTrustMidSession: the host changes the configuration it
// trusts outside the workspace after a session started: a global
// ~/.gitconfig that sets core.hooksPath and include.path into the
// workspace, an enclosing repository's core.hooksPath, a repository
// made above the workspace (git init) with one. The session's next
// command plants what they name; the creation gate reads the host's
// configuration again when a file it read (or a .git it looked for)
// changed, so nothing lands, and the host's git afterwards runs nothing
// planted. On the old code the gate knew only what was named at start:
// every plant landed and the host's commit ran the hook.
func TestPoisonHostTrustMidSession(t *testing.T) {
	t.Run("global", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		ws, markers := poisonWorkspace(t, true)
		s, end := openPoisonSession(t, ws)
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"),
			fmt.Appendf(nil, "[core]\n\thooksPath = %s/tools/hooks\n[include]\n\tpath = %s/team.gitconfig\n", ws, ws), 0o644))
		res, out := sessionRun(t, s, hostConfigScript("tools/hooks", markers))
		end()
		require.Contains(t, out, "done")
		assert.NotContains(t, out, "WROTE-HOOK")
		assert.NotContains(t, out, "WROTE-include")
		assert.True(t, hostTrustRefused(res.CreateBlocked), "%+v", res.CreateBlocked)
		assertNoPrivilege(t, ws)
		homeGit(t, ws, home, "status")
		homeGit(t, ws, home, "commit", "-q", "--allow-empty", "-m", "host")
		entries, err := os.ReadDir(markers)
		require.NoError(t, err)
		assert.Empty(t, entries, "planted code ran on the host")
	})
	t.Run("enclosing", func(t *testing.T) {
		mono, markers := poisonWorkspace(t, true)
		ws := filepath.Join(mono, "front")
		require.NoError(t, os.Mkdir(ws, 0o755))
		chownWorkspace(t, mono)
		s, end := openPoisonSession(t, ws)
		ownerGit(t, mono, "config", "core.hooksPath", "front/hooks")
		ownerGit(t, mono, "config", "include.path", "../front/team.gitconfig")
		res, out := sessionRun(t, s, hostConfigScript("hooks", markers))
		end()
		require.Contains(t, out, "done")
		assert.NotContains(t, out, "WROTE-HOOK")
		assert.NotContains(t, out, "WROTE-include")
		assert.True(t, hostTrustRefused(res.CreateBlocked), "%+v", res.CreateBlocked)
		assertHostClean(t, mono, markers, true)
	})
	t.Run("enclosing-made", func(t *testing.T) {
		mono, markers := poisonWorkspace(t, false)
		ws := filepath.Join(mono, "front")
		require.NoError(t, os.Mkdir(ws, 0o755))
		chownWorkspace(t, mono)
		s, end := openPoisonSession(t, ws)
		ownerGit(t, mono, "init", "-q")
		ownerGit(t, mono, "config", "core.hooksPath", "front/hooks")
		_, out := sessionRun(t, s, hostConfigScript("hooks", markers))
		end()
		require.Contains(t, out, "done")
		assert.NotContains(t, out, "WROTE-HOOK")
		ownerGit(t, mono, "commit", "-q", "--allow-empty", "-m", "owner")
		assertHostClean(t, mono, markers, true)
	})
}
