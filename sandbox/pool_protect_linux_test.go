package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rewriteExisting is a shell fragment that appends to each existing file
// it is given with an open for writing without O_CREAT (dd's nocreat:
// O_WRONLY|O_APPEND), which the creation gate is not asked about: only
// the sandbox's read-only binds stop it. It prints "WROTE path" for each
// write that went through.
const rewriteExisting = `for f in "$@"; do
  printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' | dd of="$f" conv=notrunc,nocreat oflag=append status=none 2>/dev/null && echo "WROTE $f"
done; echo done`

// hostSnapshot reads the files rels of ws from the host.
func hostSnapshot(t *testing.T, ws string, rels ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(ws, rel))
		require.NoError(t, err)
		m[rel] = string(b)
	}
	return m
}

// assertNoPlaceholders checks from the host that nothing of tether's is
// in ws while the pool's sandbox waits: the host's own git init, direnv
// or editor must find the workspace as it left it.
func assertNoPlaceholders(t *testing.T, ws string) {
	t.Helper()
	for _, name := range []string{".git", ".envrc", ".tether.yaml", "sub/.git"} {
		_, err := os.Lstat(filepath.Join(ws, name))
		assert.True(t, os.IsNotExist(err), "%s is in the workspace while the pooled sandbox waits (%v)", name, err)
	}
}

// A pooled sandbox is protected as the workspace is when it is taken, not
// as it was when the pool built it (red team P1, session 12): the host
// makes a repository after the fill (git init, and a nested one), then
// recreates it (rm -rf .git && git init) after the next fill; each pooled
// command tries to rewrite the repositories' config with an open that
// does not create, and the host finds each config unchanged after the
// sandbox is gone. While a sandbox waits, the workspace holds no
// reservation placeholder, so the host's git init works.
func TestPoolProtectsWhatTheHostMadeAfterTheFill(t *testing.T) {
	ps := newTestPools(t)
	ws, _ := poisonWorkspace(t, false)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	chownWorkspace(t, ws)
	p := PoolSpec{Profile: "late", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	waitReady(t, ps, "late", 1)
	assertNoPlaceholders(t, ws)

	// After the fill: the host makes both repositories (removing first
	// what an older tether's waiting sandbox left there and made git
	// init fail, as a person then does).
	require.NoError(t, os.RemoveAll(filepath.Join(ws, ".git")))
	hostGit(t, ws, "init", "-q")
	hostGit(t, filepath.Join(ws, "sub"), "init", "-q")
	chownWorkspace(t, ws) // the sandbox's identity owns them: only the protection stops it
	files := []string{".git/config", ".git/hooks/pre-commit.sample", "sub/.git/config"}
	before := hostSnapshot(t, ws, files...)
	res, out := pooledRun(t, ps, p, "set -- "+joinArgs(files)+"\n"+rewriteExisting)
	assert.Contains(t, out, "done")
	assert.NotContains(t, out, "WROTE", "a pooled command rewrote what a cold one could not")
	assert.Equal(t, before, hostSnapshot(t, ws, files...), "the host's repositories changed")
	assert.NotContains(t, res.NotEnforced, "nested-repos")

	// The pool refilled with the repositories there; the host starts the
	// history over (the red team's pool-protect2.sh) before the next take.
	waitReady(t, ps, "late", 1)
	require.NoError(t, os.RemoveAll(filepath.Join(ws, ".git")))
	hostGit(t, ws, "init", "-q")
	chownWorkspace(t, ws)
	before = hostSnapshot(t, ws, files...)
	_, out = pooledRun(t, ps, p, "set -- "+joinArgs(files)+"\n"+rewriteExisting)
	assert.Contains(t, out, "done")
	assert.NotContains(t, out, "WROTE", "a pooled command rewrote the recreated repository")
	assert.Equal(t, before, hostSnapshot(t, ws, files...), "the host's repositories changed")

	// The sandboxes are gone: their reservations with them.
	waitReady(t, ps, "late", 1)
	for _, name := range []string{".envrc", ".tether.yaml"} {
		_, err := os.Lstat(filepath.Join(ws, name))
		assert.True(t, os.IsNotExist(err), "%s stayed in the workspace", name)
	}
}

// The same for a home workspace's dot-entries: one the host makes after
// the fill (.tmux.conf, which a host tmux runs) is frozen in the pooled
// command as in a cold one.
func TestPoolProtectsHomeDotEntryMadeAfterTheFill(t *testing.T) {
	ps := newTestPools(t)
	ws, _ := poisonWorkspace(t, false)
	t.Setenv("HOME", ws)
	p := PoolSpec{Profile: "home", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	waitReady(t, ps, "home", 1)
	files := []string{".tmux.conf", ".config/git/config"}
	for _, f := range files {
		// An older tether's waiting sandbox left placeholders on the way.
		require.NoError(t, os.RemoveAll(filepath.Join(ws, strings.SplitN(f, "/", 2)[0])))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("# mine\n"), 0o644))
	}
	chownWorkspace(t, ws)
	before := hostSnapshot(t, ws, files...)
	_, out := pooledRun(t, ps, p, "set -- "+joinArgs(files)+"\n"+rewriteExisting)
	assert.Contains(t, out, "done")
	assert.NotContains(t, out, "WROTE", "a pooled command rewrote a home's dot-file")
	assert.Equal(t, before, hostSnapshot(t, ws, files...))
}

// A pooled sandbox whose workspace the host replaced after the fill (a
// fresh clone into the same path) is not used: its container bound the
// old directory. The call runs cold (ErrPoolEmpty: nothing ran) and the
// pool refills with the new one.
func TestPoolDiscardsSandboxOfReplacedWorkspace(t *testing.T) {
	ps := newTestPools(t)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	p := PoolSpec{Profile: "moved", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	waitReady(t, ps, "moved", 1)
	require.NoError(t, os.Rename(ws, filepath.Join(parent, "old")))
	require.NoError(t, os.Mkdir(ws, 0o755))
	_, err := ps.Run(t.Context(), p, Command{Shell: "touch here"}, ExecOptions{Timeout: 30 * time.Second})
	require.ErrorIs(t, err, ErrPoolEmpty)
	assert.NoFileExists(t, filepath.Join(parent, "old", "here"), "the command ran in the replaced workspace")
	assert.NoFileExists(t, filepath.Join(ws, "here"))
	res, out := pooledRun(t, ps, p, "touch here; echo ok")
	assert.Equal(t, 0, res.ExitCode, out)
	assert.FileExists(t, filepath.Join(ws, "here"))
}

// joinArgs quotes args for a shell's set --.
func joinArgs(args []string) string {
	s := ""
	for _, a := range args {
		s += "'" + a + "' "
	}
	return s
}

// The nested-repository walk of one pooled call is kept for the next one
// of the same workspace only while nothing it read changed
// (protect_nested_linux.go). Between pooled calls the host, one change at
// a time (each alone would leave the rest of the last walk as it was),
// makes a repository deep in a tree the last walk read (only its parent
// directory changes), renames the parent of a nested repository the last
// call froze, and rewrites in place a HEAD the last walk found invalid
// (no listing changes) so that its directory becomes a bare repository.
// The next call removes that repository's config and changes its mode:
// the creation gate does not see unlink or chmod, only the freeze stops
// them. The host finds the config as it was after the sandbox is gone.
func TestPoolProtectsWhatTheHostChangedSinceTheLastCall(t *testing.T) {
	ps := newTestPools(t)
	ws, _ := poisonWorkspace(t, true)
	for _, d := range []string{"a/b/c", "x/sub", "bare/objects", "bare/refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	hostGit(t, filepath.Join(ws, "x/sub"), "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bare/HEAD"), []byte("not yet\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bare/config"), []byte("[core]\n"), 0o644))
	chownWorkspace(t, ws)
	p := PoolSpec{Profile: "kept", Size: 1, Spec: SessionSpec{Config: Config{Workspace: ws, Limits: Limits{Pids: 128}}}}
	ps.Prepare(p)
	// What changed less than racyStamp ago is not trusted by its stamp
	// (keepable): the HEAD would keep the first walk from being kept.
	time.Sleep(racyStamp + 100*time.Millisecond)
	res, out := pooledRun(t, ps, p, "echo first")
	require.Equal(t, 0, res.ExitCode, out)

	for _, step := range []struct {
		name, file string
		change     func()
	}{
		{"nested git init", "a/b/c/.git/config", func() {
			hostGit(t, filepath.Join(ws, "a/b/c"), "init", "-q")
			// Only the new repository is the sandbox identity's: a chown
			// of the rest would change every stamp the last walk took.
			chownWorkspace(t, filepath.Join(ws, "a/b/c/.git"))
		}},
		{"parent renamed", "y/sub/.git/config", func() {
			require.NoError(t, os.Rename(filepath.Join(ws, "x"), filepath.Join(ws, "y")))
		}},
		// Last: a walk that read a HEAD changed within racyStamp is not
		// kept, so the next step would find none.
		{"HEAD rewritten in place", "bare/config", func() {
			head, err := os.OpenFile(filepath.Join(ws, "bare/HEAD"), os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			_, err = head.WriteString("ref: refs/heads/main\n")
			require.NoError(t, err)
			require.NoError(t, head.Close())
		}},
	} {
		require.True(t, keptWalkOf(t, ws), "before %s: the last call's walk was not kept, so the next would not test it", step.name)
		step.change()
		before := hostSnapshot(t, ws, step.file)
		fi, err := os.Lstat(filepath.Join(ws, step.file))
		require.NoError(t, err)
		_, out := pooledRun(t, ps, p, "f="+joinArgs([]string{step.file})+`
chmod 0666 "$f" 2>/dev/null && echo CHMOD
rm -f "$f" 2>/dev/null && echo REMOVED
echo done`)
		assert.Contains(t, out, "done", step.name)
		assert.NotContains(t, out, "CHMOD", "%s: a pooled command changed the mode of %s", step.name, step.file)
		assert.NotContains(t, out, "REMOVED", "%s: a pooled command removed %s", step.name, step.file)
		assert.Equal(t, before, hostSnapshot(t, ws, step.file), step.name)
		after, err := os.Lstat(filepath.Join(ws, step.file))
		require.NoError(t, err)
		assert.Equal(t, fi.Mode(), after.Mode(), "%s: %s's mode changed", step.name, step.file)
	}
}

// keptWalkOf reports whether this process keeps a nested-repository walk
// of the workspace ws.
func keptWalkOf(t *testing.T, ws string) bool {
	t.Helper()
	fi, err := os.Stat(ws)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	nestedScans.mu.Lock()
	defer nestedScans.mu.Unlock()
	for k := range nestedScans.scans {
		if k.dev == st.Dev && k.ino == st.Ino {
			return true
		}
	}
	return false
}
