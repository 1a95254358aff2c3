package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoisonGitConfigNamedFiles: what a repository's frozen configuration
// names in the work tree is git's control surface too. core.hooksPath =
// .husky/_ (husky 9, whose stubs run .husky/HOOK), include.path and
// includeIf files (one not there yet), a shell alias's program (not
// there yet) and a script it runs, and a nested repository's hooks
// directory (not there yet): the sandbox writes, creates and renames
// them all, and afterwards the host's git status, commit and aliases run
// nothing it planted.
func TestPoisonGitConfigNamedFiles(t *testing.T) {
	r := newTestRunner(t)
	ws, markers := poisonWorkspace(t, true)
	write := func(rel, text string, mode os.FileMode) {
		p := filepath.Join(ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), mode))
	}
	// The project's own hook stub: it runs .husky/pre-commit when there is one.
	write(".husky/_/pre-commit", "#!/bin/sh\n[ -f .husky/pre-commit ] && exec sh .husky/pre-commit\nexit 0\n", 0o755)
	write("tools/shared.gitconfig", "[color]\n\tui = auto\n", 0o644)
	write("tools/fmt.sh", "exit 0\n", 0o644)
	hostGit(t, ws, "config", "core.hooksPath", ".husky/_")
	hostGit(t, ws, "config", "include.path", "../tools/shared.gitconfig")
	hostGit(t, ws, "config", "includeIf.gitdir:/.path", "../late.gitconfig")
	hostGit(t, ws, "config", "alias.lint", "!./scripts/lint")
	hostGit(t, ws, "config", "alias.fmt", "!sh tools/fmt.sh")
	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	hostGit(t, sub, "init", "-q")
	hostGit(t, sub, "config", "core.hooksPath", ".githooks")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "sub-one")
	chownWorkspace(t, ws)

	_, out := sandboxRun(t, r, ws, fmt.Sprintf(`m=%s
git -c user.name=s -c user.email=s@s commit -q --allow-empty -m sandbox && echo commit-ok
hook() { mkdir -p "$(dirname "$1")"; printf '#!/bin/sh\ntouch %%s/%%s\n' $m "$2" > "$1"; chmod 755 "$1"; }
hook .husky/pre-commit husky; hook .husky/_/pre-commit husky-stub; hook sub/.githooks/pre-commit sub-hook
printf '[core]\n\tfsmonitor = "touch %%s/include; false"\n' $m > tools/shared.gitconfig
printf '[core]\n\tfsmonitor = "touch %%s/late-include; false"\n' $m > late.gitconfig
hook scripts/lint alias-lint; echo "touch $m/alias-fmt" > tools/fmt.sh
mv .husky .husky-orig; mv tools tools-orig
mkdir -p .husky/_ tools; hook .husky/_/pre-commit husky-renamed
printf '[core]\n\tfsmonitor = "touch %%s/include-renamed; false"\n' $m > tools/shared.gitconfig
ls -la . .husky tools sub
`, markers))
	t.Log(out)
	assert.Contains(t, out, "commit-ok", "git work goes on")
	assertHostClean(t, ws, markers, true)
	hostGit(t, sub, "status")
	hostGit(t, sub, "commit", "-q", "--allow-empty", "-m", "host")
	for _, alias := range []string{"lint", "fmt"} {
		cmd := exec.Command("git", "-c", "safe.directory=*", alias)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
		o, _ := cmd.CombinedOutput() // lint's program does not exist: git says so
		t.Logf("git %s: %s", alias, o)
	}
	assertEmptyDir(t, markers)
}
