package protect

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// namedWS builds a workspace from files (path: content; a "->" prefix
// makes a symlink, a trailing "/" a directory) and returns its canonical
// path.
func namedWS(t *testing.T, files map[string]string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for p, c := range files {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch {
		case len(c) > 2 && c[:2] == "->":
			require.NoError(t, os.Symlink(c[2:], full))
		case p[len(p)-1] == '/':
			require.NoError(t, os.MkdirAll(full, 0o755))
		default:
			require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
		}
	}
	return ws
}

// namedReason is NamedReason for rel, its directory opened beneath ws as
// the runner's file tools open it (after resolving symlinks inside).
func namedReason(t *testing.T, ws, rel string) (string, error) {
	t.Helper()
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	real, err := filepath.EvalSymlinks(filepath.Join(ws, filepath.Dir(rel)))
	require.NoError(t, err)
	dir, err := filepath.Rel(ws, real)
	require.NoError(t, err)
	dfd, err := unix.Open(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	return NamedReason(root, dfd, ws, dir, path.Base(rel))
}

const head = "ref: refs/heads/main\n"

// TestNamedReason: every way a configuration names a file, reached as a
// file tool reaches it, is refused; what no configuration names is not.
func TestNamedReason(t *testing.T) {
	t.Parallel()
	ws := namedWS(t, map[string]string{
		".git/HEAD": head,
		".git/config": "[core]\n\thooksPath = .husky/_\n\tfsmonitor = \"sh tools/fsm.sh\"\n" +
			"[include]\n\tpath = ../tools/a.cfg\n[alias]\n\tlint = !./scripts/lint --fix\n\tst = status\n",
		"tools/a.cfg":     "[include]\n\tpath = b.cfg\n",
		"tools/b.cfg":     "[diff \"x\"]\n\ttextconv = ./bin/conv\n",
		"tools/fsm.sh":    "true\n",
		"husky-real/":     "",
		".husky":          "->husky-real",
		"src/main.go":     "package main\n",
		"sub/.git/HEAD":   head,
		"sub/.git/config": "[core]\n\thooksPath = hooks\n",
		"sub/hooks/":      "",
		"wt/.git":         "gitdir: ../gits/wt\n",
		"gits/wt/HEAD":    head,
		"wt/tools/run":    "true\n",
		"gits/wt/config":  "[alias]\n\tx = \"!sh -c 'tools/run'\"\n",
		"bare/HEAD":       head,
		"bare/config":     "[core]\n\thooksPath = myhooks\n",
	})
	refused := []string{
		".husky/pre-commit",          // through the symlink: its target is the hooks' directory
		"husky-real/pre-commit",      // the target itself, by its own name
		"husky-real/_/h",             // husky 9's stubs directory
		"tools/a.cfg", "tools/b.cfg", // include.path, and the file it includes
		"bin/conv",                // a program named in an included file
		"scripts/lint",            // an alias's program
		"tools/fsm.sh",            // an existing argument of core.fsmonitor
		"sub/hooks/post-checkout", // a nested repository's hooks
		"wt/tools/run",            // a .git file's repository, its work tree's top
		"bare/myhooks/pre-receive",
	}
	for _, rel := range refused {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755))
		why, err := namedReason(t, ws, rel)
		require.NoError(t, err, rel)
		assert.NotEmpty(t, why, rel)
	}
	allowed := []string{"src/main.go", "src/new.go", "scripts/other", "tools/run", "sub/scripts/lint", "bin/other", "status"}
	for _, rel := range allowed {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755))
		why, err := namedReason(t, ws, rel)
		require.NoError(t, err, rel)
		assert.Empty(t, why, rel)
	}
}

// TestNamedReasonTop: a hooks directory that is the work tree's top
// cannot be told from the tree: the write is refused, not allowed.
func TestNamedReasonTop(t *testing.T) {
	t.Parallel()
	ws := namedWS(t, map[string]string{".git/HEAD": head, ".git/config": "[core]\n\thooksPath = .\n", "a/": ""})
	_, err := namedReason(t, ws, "a/x")
	assert.ErrorIs(t, err, ErrNamesTop)
}

// BenchmarkNamedReason is the cost the file tools add to a write three
// directories deep in a repository whose config names files.
func BenchmarkNamedReason(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	for p, c := range map[string]string{
		".git/HEAD":              head,
		".git/config":            "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../tools/shared.gitconfig\n[alias]\n\tlint = !./scripts/lint\n",
		"tools/shared.gitconfig": "[color]\n\tui = auto\n",
	} {
		require.NoError(b, os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644))
	}
	require.NoError(b, os.MkdirAll(filepath.Join(ws, "src/a/b"), 0o755))
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(root)
	dfd, err := unix.Open(filepath.Join(ws, "src/a/b"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(dfd)
	for b.Loop() {
		if why, err := NamedReason(root, dfd, ws, "src/a/b", "out.txt"); why != "" || err != nil {
			b.Fatal(why, err)
		}
	}
}

func TestLinkTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir, target, want string
		inside            bool
	}{
		{".git/hooks", "../../scripts/pre-commit", "scripts/pre-commit", true},
		{".git/hooks", "/ws/scripts/x", "scripts/x", true},
		{".git/hooks", "/ws", ".", true},
		{".git/hooks", "/ws/../etc/x", "", false},
		{".git/hooks", "/wsx/y", "", false},
		{".git/hooks", "../../../outside", "", false},
		{".git/hooks", "/bin/true", "", false},
		{".git/hooks", "real", ".git/hooks/real", true},
		{".git/hooks", "../..", ".", true},
	} {
		got, inside := LinkTarget("/ws", c.dir, c.target)
		assert.Equal(t, c.inside, inside, "%s -> %s", c.dir, c.target)
		assert.Equal(t, c.want, got, "%s -> %s", c.dir, c.target)
	}
}

// viewRepo makes a repository at dir whose configuration names
// .githooks, and returns the workspace root's descriptor and the
// directory src/ as the place a name is created in.
func viewRepo(tb testing.TB, dir string) (root, src int) {
	tb.Helper()
	for _, d := range []string{".git/objects", ".git/refs", ".git/hooks", "src"} {
		require.NoError(tb, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(tb, os.WriteFile(filepath.Join(dir, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(tb, os.WriteFile(filepath.Join(dir, ".git/config"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(tb, err)
	src, err = unix.Openat(root, "src", unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(tb, err)
	tb.Cleanup(func() { unix.Close(src); unix.Close(root) })
	return root, src
}

// TestConfigViewFollowsChanges: a ConfigView's answer follows the
// configuration file as it is rewritten in place, renamed over, and as an
// include it names appears.
func TestConfigViewFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	root, src := viewRepo(t, dir)
	var v ConfigView
	repos := []GitRepo{{Dir: ".git", Top: "."}}
	reason := func(dirfd int, at, name string) string {
		why, err := v.Reason(root, dirfd, dir, at, name, repos)
		require.NoError(t, err)
		return why
	}
	assert.NotEmpty(t, reason(root, ".", ".githooks"))
	assert.Empty(t, reason(src, "src", "x"))
	// Rewritten in place (same inode): size and times change.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git/config"), []byte("[core]\n\thooksPath = src\n"), 0o644))
	assert.NotEmpty(t, reason(src, "src", "x"), "src is the hooks directory now")
	assert.Empty(t, reason(root, ".", ".githooks"))
	// Renamed over, as git config does.
	tmp := filepath.Join(dir, ".git/config.lock")
	require.NoError(t, os.WriteFile(tmp, []byte("[include]\n\tpath = ../extra.cfg\n"), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, ".git/config")))
	assert.Empty(t, reason(src, "src", "x"))
	assert.NotEmpty(t, reason(root, ".", "extra.cfg"), "a missing include is reserved")
	// The include appears, naming a hooks directory.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.cfg"), []byte("[core]\n\thooksPath = src\n"), 0o644))
	assert.NotEmpty(t, reason(src, "src", "x"), "the include's hooks directory")
}

// BenchmarkConfigView: what the creation gate's configuration check costs
// per creation in a repository, with the view's kept answer (the gate) and
// reading every file again (a nil view).
func BenchmarkConfigView(b *testing.B) {
	dir := b.TempDir()
	root, src := viewRepo(b, dir)
	repos := []GitRepo{{Dir: ".git", Top: "."}}
	for _, tc := range []struct {
		name string
		v    *ConfigView
	}{{"kept", &ConfigView{}}, {"read-again", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tc.v.Reason(root, src, dir, "src", "x", repos); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNamedReasonTildePaths: git expands ~/ in pathname values with the
// home of whoever runs it, so a repository's `core.hooksPath =
// ~/src/proj/hooks` (and include.path) name files of a workspace at
// ~/src/proj: they are refused as the relative spellings are (session 12
// red team, T1: the sandbox wrote both and the host's commit ran them).
func TestNamedReasonTildePaths(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	ws := filepath.Join(home, "src", "proj")
	for p, c := range map[string]string{
		".git/HEAD":   head,
		".git/config": "[core]\n\thooksPath = ~/src/proj/hooks\n[include]\n\tpath = ~/src/proj/inc.cfg\n",
		"hooks/":      "",
		"inc.cfg":     "[core]\n\tfsmonitor = ./fsm\n",
		"fsm":         "true\n",
		"src/a.go":    "package a\n",
	} {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if p[len(p)-1] == '/' {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	for _, rel := range []string{"hooks/pre-commit", "inc.cfg", "fsm"} {
		why, err := namedReason(t, ws, rel)
		require.NoError(t, err, rel)
		assert.NotEmpty(t, why, rel)
	}
	why, err := namedReason(t, ws, "src/a.go")
	require.NoError(t, err)
	assert.Empty(t, why)
	// ~user/ is that user's home; one that cannot be expanded names nothing.
	assert.Contains(t, expandTilde("~root/x", ws), "/root/x")
	assert.Empty(t, expandTilde("~no-such-user-tether/x", ws))
	assert.Equal(t, []string{"/h/x"}, ExpandTilde("~/x", []string{"/h"}))
	assert.Equal(t, []string{"/root/x"}, ExpandTilde("~root/x", []string{"/h"}))
}

// TestConfigViewOutsideInclude: an include outside the workspace is read
// for what it names inside (T2 of the session-12 second red team), its
// own relative include is taken from its directory, and a host edit of
// the outside file mid-session is followed by the view.
func TestConfigViewOutsideInclude(t *testing.T) {
	team, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := namedWS(t, map[string]string{
		".git/HEAD": head,
		"src/":      "",
		"tools/":    "",
	})
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/config"),
		[]byte("[include]\n\tpath = "+team+"/team.cfg\n[includeIf \"gitdir:/elsewhere/\"]\n\tpath = "+team+"/cond.cfg\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(team, "team.cfg"),
		[]byte("[core]\n\thooksPath = "+ws+"/hooks\n[include]\n\tpath = "+ws+"/inner.cfg\n\tpath = nested.cfg\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(team, "nested.cfg"), []byte("[alias]\n\tst = !"+ws+"/tools/st\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(team, "cond.cfg"), []byte("[core]\n\tfsmonitor = "+ws+"/tools/fsmon\n"), 0o644))
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	at := func(dir string) int {
		fd, err := unix.Open(filepath.Join(ws, dir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	rootFd, src, tools := at("."), at("src"), at("tools")
	var v ConfigView
	repos := []GitRepo{{Dir: ".git", Top: "."}}
	reason := func(dirfd int, dir, name string) string {
		why, err := v.Reason(root, dirfd, ws, dir, name, repos)
		require.NoError(t, err)
		return why
	}
	assert.Contains(t, reason(rootFd, ".", "hooks"), "core.hookspath", "the outside include's hooks directory")
	assert.Contains(t, reason(rootFd, ".", "inner.cfg"), "include.path", "the outside include's include inside")
	assert.Contains(t, reason(tools, "tools", "st"), "alias.st", "named by an include relative to the outside file")
	assert.Contains(t, reason(tools, "tools", "fsmon"), "core.fsmonitor", "an includeIf condition is taken as true")
	assert.Empty(t, reason(src, "src", "x"))
	// The host edits team.cfg mid-session (renamed over, as an editor saves).
	tmp := filepath.Join(team, "team.cfg.new")
	require.NoError(t, os.WriteFile(tmp, []byte("[core]\n\thooksPath = "+ws+"/src\n"), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(team, "team.cfg")))
	assert.NotEmpty(t, reason(src, "src", "x"), "src is the hooks directory now")
	assert.Empty(t, reason(rootFd, ".", "hooks"))
	assert.Empty(t, reason(tools, "tools", "st"), "nested.cfg is no longer included")
}

// TestConfigNamedOutsideIncludeTooLarge: an outside include larger than
// tether reads cannot be judged, so the answer is an error (the sandbox
// refuses to start), not the names of its first MiB.
func TestConfigNamedOutsideIncludeTooLarge(t *testing.T) {
	team := t.TempDir()
	ws := namedWS(t, map[string]string{".git/HEAD": head, ".git/config": "[include]\n\tpath = " + team + "/big.cfg\n"})
	big := make([]byte, maxConfigSize+1)
	for i := range big {
		big[i] = '\n'
	}
	require.NoError(t, os.WriteFile(filepath.Join(team, "big.cfg"), big, 0o644))
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	_, err = ConfigNamed(root, ws, []GitRepo{{Dir: ".git", Top: "."}})
	require.ErrorIs(t, err, ErrConfigTooLarge)
	require.NoError(t, os.Truncate(filepath.Join(team, "big.cfg"), maxConfigSize))
	_, err = ConfigNamed(root, ws, []GitRepo{{Dir: ".git", Top: "."}})
	require.NoError(t, err)
}
