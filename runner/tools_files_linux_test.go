package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/internal/dirlist"
)

// exchangeLoop swaps the names a and b (renameat2 RENAME_EXCHANGE) until
// the returned stop is called, which reports how many swaps were made.
func exchangeLoop(t *testing.T, a, b string) (stop func() int) {
	t.Helper()
	var n atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchanging %s and %s: %v", a, b, err)
				return
			}
			n.Add(1)
		}
	}()
	var once sync.Once
	stop = func() int {
		once.Do(func() { close(done); wg.Wait() })
		return int(n.Load())
	}
	t.Cleanup(func() { stop() })
	return stop
}

// raceWorkspace makes a workspace with a directory d and a symlink l to
// target, whose names a background loop keeps exchanging.
func raceWorkspace(t *testing.T, target string) (cfg *Runner, ws string, stop func() int) {
	t.Helper()
	c, ws := testConfig(t, "")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "d/config"), []byte("[core]\n# d\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "d/secret"), []byte("public\n"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(ws, "l")))
	return &Runner{Config: c}, ws, exchangeLoop(t, filepath.Join(ws, "d"), filepath.Join(ws, "l"))
}

// TestFileToolsRenameExchangeRace is the attack of issue 14: while a
// loop exchanges a directory with a symlink to .git, 1,000 rounds of
// write_file, patch and read_file on d/config never touch .git/config.
func TestFileToolsRenameExchangeRace(t *testing.T) {
	t.Parallel()
	r, ws, stop := raceWorkspace(t, ".git")
	gitConfig := filepath.Join(ws, ".git/config")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755))
	require.NoError(t, os.WriteFile(gitConfig, []byte("[core]\n\tbare = false\n"), 0o644))
	var before unix.Stat_t
	require.NoError(t, unix.Stat(gitConfig, &before))
	landed, refused := 0, 0
	for i := 0; i < 1000; i++ {
		out := r.Execute(t.Context(), Batch{Calls: []RawCall{
			rawCall("1", "write_file", args("path", "d/config", "content", "[core]\n\tfsmonitor = evil\n")),
			rawCall("2", "patch", args("path", "d/config", "old_string", "[core]", "new_string", "[core]")),
			rawCall("3", "write_file", args("path", "d/hooks/pre-commit", "content", "#!/bin/sh\necho evil\n")),
			rawCall("4", "read_file", args("path", "d/config")),
		}}, nil)
		for _, res := range out.Results[:3] {
			if res.Effect == EffectLanded {
				landed++
			} else {
				refused++
			}
		}
	}
	swaps := stop()
	t.Logf("%d swaps, %d writes landed in d, %d refused", swaps, landed, refused)
	require.Greater(t, swaps, 1000, "the race ran")
	assert.Positive(t, landed, "writes land when d is the directory")
	assert.Positive(t, refused, "and are refused when it is not")
	var after unix.Stat_t
	require.NoError(t, unix.Stat(gitConfig, &after))
	data, err := os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "[core]\n\tbare = false\n", string(data))
	assert.Equal(t, before.Ino, after.Ino, ".git/config was not replaced")
	assert.Equal(t, before.Mtim, after.Mtim, ".git/config was not written")
	_, err = os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no hook was planted")
	entries, err := os.ReadDir(filepath.Join(ws, ".git"))
	require.NoError(t, err)
	for _, e := range entries {
		assert.Contains(t, []string{"config", "hooks"}, e.Name(), "nothing new in .git")
	}
}

// TestFileToolsRenameExchangeRaceOutside: the same race with a symlink to
// a directory outside the workspace: its file is never read or written.
func TestFileToolsRenameExchangeRaceOutside(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("TOPSECRET\n"), 0o644))
	r, _, stop := raceWorkspace(t, outside)
	var before unix.Stat_t
	require.NoError(t, unix.Stat(secret, &before))
	for i := 0; i < 1000; i++ {
		out := r.Execute(t.Context(), Batch{Calls: []RawCall{
			rawCall("1", "read_file", args("path", "d/secret")),
			rawCall("2", "write_file", args("path", "d/secret", "content", "OWNED\n")),
			rawCall("3", "patch", args("path", "d/secret", "old_string", "OWNED", "new_string", "OWNED")),
			rawCall("4", "search_files", args("pattern", "TOPSECRET", "path", "d")),
			rawCall("5", "write_file", args("path", "d/new", "content", "x")),
		}}, nil)
		for _, res := range out.Results {
			assert.NotContains(t, res.Message, "TOPSECRET")
			assert.NotContains(t, fmt.Sprint(res.Output["content"]), "TOPSECRET")
			assert.Equal(t, nil, nonZeroCount(res), "search found nothing outside: %v", res.Output["matches"])
		}
	}
	require.Greater(t, stop(), 1000, "the race ran")
	data, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "TOPSECRET\n", string(data))
	var after unix.Stat_t
	require.NoError(t, unix.Stat(secret, &after))
	assert.Equal(t, before.Ino, after.Ino)
	assert.Equal(t, before.Mtim, after.Mtim)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing was created outside")
}

// nonZeroCount returns a search result's match count when it is not zero.
func nonZeroCount(res Result) any {
	if n, ok := res.Output["count"].(int); ok && n > 0 {
		return n
	}
	return nil
}

// TestWSReplaceRefusesSwappedPaths drives the descriptor layer alone
// (without the string resolution before it): while d and a symlink to
// .git are exchanged, replace("d/config") either writes d's own file or
// fails; .git/config never changes.
func TestWSReplaceRefusesSwappedPaths(t *testing.T) {
	t.Parallel()
	_, ws, stop := raceWorkspace(t, ".git")
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".git"), 0o755))
	gitConfig := filepath.Join(ws, ".git/config")
	require.NoError(t, os.WriteFile(gitConfig, []byte("orig\n"), 0o644))
	w, err := openWS(ws)
	require.NoError(t, err)
	defer w.Close()
	var changed, ok int
	for i := 0; i < 2000; i++ {
		_, err := w.replace("d/config", []byte("evil\n"), false, nil)
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrPathChanged):
			changed++
		default:
			require.NoError(t, err)
		}
		if data, _, rerr := w.readAll(t.Context(), "d/config", 100); rerr == nil {
			assert.NotEqual(t, "orig\n", string(data), "never read through the symlink")
		}
	}
	stop()
	t.Logf("%d written, %d refused as changed", ok, changed)
	assert.Positive(t, changed, "the race was seen")
	data, err := os.ReadFile(gitConfig)
	require.NoError(t, err)
	assert.Equal(t, "orig\n", string(data))
}

// TestFileToolsRefuseSpecialFiles gives a FIFO, a socket and a device to
// every file tool: each returns at once with an error naming the kind
// (a FIFO would otherwise block open(2) forever), and a search of the
// directory holding them skips them.
func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	require.NoError(t, unix.Mkfifo(filepath.Join(ws, "fifo"), 0o644))
	// A socket path must fit sun_path: bind from inside the directory.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(ws, "sock"), Net: "unix"})
	if err != nil {
		t.Fatalf("creating a socket in the workspace: %v", err)
	}
	defer l.Close()
	kinds := map[string]string{"fifo": "a FIFO", "sock": "a socket"}
	if err := unix.Mknod(filepath.Join(ws, "dev"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
		kinds["dev"] = "a device"
	} else if os.Geteuid() == 0 {
		t.Fatalf("mknod as root: %v", err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("needle\n"), 0o644))
	r := &Runner{Config: cfg}
	for name, kind := range kinds {
		calls := []RawCall{
			rawCall("1", "read_file", args("path", name)),
			rawCall("2", "write_file", args("path", name, "content", "x")),
			rawCall("3", "patch", args("path", name, "old_string", "a", "new_string", "b")),
			rawCall("4", "search_files", args("pattern", "x", "path", name)),
		}
		for _, c := range calls {
			done := make(chan Result, 1)
			go func() { done <- r.Execute(t.Context(), Batch{Calls: []RawCall{c}}, nil).Results[0] }()
			var res Result
			select {
			case res = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s on %s did not return", c.Name, name)
			}
			assert.Equal(t, ClassFailed, res.Class, "%s on %s: %s", c.Name, name, res.Message)
			assert.NotEqual(t, EffectLanded, res.Effect)
			assert.Contains(t, res.Message, name+" is "+kind, c.Name)
		}
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(filepath.Join(ws, name), &st))
		assert.NotEqual(t, uint32(unix.S_IFREG), st.Mode&unix.S_IFMT, "%s was not replaced", name)
	}
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "search_files", args("pattern", "needle|x"))}}, nil)
	require.Equal(t, ClassSucceeded, out.Results[0].Class, out.Results[0].Message)
	assert.Equal(t, 1, out.Results[0].Output["count"], "only the regular file was searched")
}

// TestSearchFilesBounded runs a pathological search: a large counted
// repetition over files of long lines. It stops on its CPU budget with
// what it found, rather than running for minutes; and a pattern whose
// program is too large is refused before anything is read.
func TestSearchFilesBounded(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	line := strings.Repeat("a", 1<<20) + "\n"
	big := strings.Repeat(line, 8)
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, n), []byte(big), 0o644))
	}
	r := &Runner{Config: cfg}
	// 9 × 1001 instructions: under the program bound, but expensive for
	// every byte of 24 MiB.
	pat := strings.Repeat("(?:a{1000}b)", 9)
	out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "search_files", args("pattern", pat))}}, nil)
	res := out.Results[0]
	require.Equal(t, ClassSucceeded, res.Class, res.Message)
	assert.Equal(t, true, res.Output["truncated"])
	assert.Contains(t, res.Output["stopped_by"], "time", "stopped by its CPU or wall-clock budget")
	assert.Less(t, res.Output["bytes_searched"].(int64), int64(len(big)*3), "it did not read everything")

	out = r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "search_files", args("pattern", strings.Repeat("(?:a{1000})", 11)))}}, nil)
	assert.Equal(t, ClassFailed, out.Results[0].Class)
	assert.Contains(t, out.Results[0].Message, "too complex")
}

// TestSearchFilesCancelledMidFile: a search whose context ends while it
// reads a long file stops there, mid-file, not at the next file.
func TestSearchFilesCancelledMidFile(t *testing.T) {
	t.Parallel()
	_, ws := testConfig(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat(strings.Repeat("a", 1<<20)+"\n", 8)), 0o644))
	re, err := compileSearch("a+b")
	require.NoError(t, err)
	s := &search{re: re, max: 10, hidden: map[fileID]bool{}, cpuEnd: threadCPU() + time.Hour}
	s.ctx = cancelledOnceRead{Context: t.Context(), s: s}
	w, err := openWS(ws)
	require.NoError(t, err)
	defer w.Close()
	f, _, err := w.openRead("big.txt")
	require.NoError(t, err)
	defer f.Close()
	s.scan(f, "big.txt")
	assert.Contains(t, s.stopped, "time")
	assert.Less(t, s.bytes, int64(2<<20), "stopped inside the file")
}

// cancelledOnceRead is a context that is done once the search read
// anything.
type cancelledOnceRead struct {
	context.Context
	s *search
}

func (c cancelledOnceRead) Err() error {
	if c.s.bytes > 0 {
		return context.Canceled
	}
	return nil
}

// gitInit runs host git init with args in dir.
func gitInit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"init", "-q"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git init %v: %s", args, out)
}

// TestFileToolsRefuseGitDirectories: git directories that no name gives
// away — a bare repository of any name at any depth, the workspace root
// as one, a git directory a nested .git file names — have their control
// surface refused to write_file and patch, reached directly or through a
// symlink, and nothing is made in them (not even a directory); their
// other files, and files beside them, are written as usual.
func TestFileToolsRefuseGitDirectories(t *testing.T) {
	t.Parallel()
	cfg, ws := testConfig(t, "")
	bare := filepath.Join(ws, "deep/a/b/proj.git")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	gitInit(t, bare, "--bare")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub2"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "store"), 0o755))
	gitInit(t, filepath.Join(ws, "sub2"), "--separate-git-dir", filepath.Join(ws, "store/gd"))
	require.NoError(t, os.Symlink("deep/a/b/proj.git", filepath.Join(ws, "link")))
	rootBareCfg, rootBare := testConfig(t, "")
	gitInit(t, rootBare, "--bare")

	snapshot := func(root string) map[string]string {
		files := map[string]string{}
		require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.Type().IsRegular() {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				files[rel] = string(b)
			} else {
				files[rel] = d.Type().String()
			}
			return nil
		}))
		return files
	}
	for _, tc := range []struct {
		name    string
		root    string
		refused []string
	}{
		{"nested", ws, []string{
			"deep/a/b/proj.git/config", "deep/a/b/proj.git/hooks/pre-receive", "deep/a/b/proj.git/hooks/new/dir/x",
			"deep/a/b/proj.git/objects/info/alternates", "deep/a/b/proj.git/info/attributes", "deep/a/b/proj.git/commondir",
			"deep/a/b/proj.git/worktrees/w/config", "deep/a/b/proj.git/config.worktree",
			"link/config", "link/hooks/post-update", "link/objects/info/http-alternates",
			"store/gd/config", "store/gd/hooks/post-checkout", "store/gd/modules/m/config",
		}},
		{"root", rootBare, []string{"config", "hooks/post-receive", "objects/info/alternates", "info/attributes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.root == rootBare {
				c = rootBareCfg
			}
			r := &Runner{Config: c}
			before := snapshot(tc.root)
			for _, p := range tc.refused {
				out := r.Execute(t.Context(), Batch{Calls: []RawCall{
					rawCall("1", "write_file", args("path", p, "content", "[core]\n\tfsmonitor = evil\n")),
					rawCall("2", "patch", args("path", p, "old_string", "[core]", "new_string", "[core]\n\tsshCommand = evil")),
				}}, nil)
				for _, res := range out.Results {
					assert.Equal(t, ClassBlocked, res.Class, "%s: %s", p, res.Message)
					assert.Equal(t, "path.protected", res.Rule, "%s: %s", p, res.Message)
					assert.NotEqual(t, EffectLanded, res.Effect)
				}
			}
			assert.Equal(t, before, snapshot(tc.root), "nothing in the workspace changed")
		})
	}
	t.Run("allowed", func(t *testing.T) {
		r := &Runner{Config: cfg}
		for _, p := range []string{"deep/a/b/notes.txt", "deep/a/b/proj.git/description", "store/notes/x.txt", "sub2/README"} {
			out := r.Execute(t.Context(), Batch{Calls: []RawCall{rawCall("1", "write_file", args("path", p, "content", "ok\n"))}}, nil)
			assert.Equal(t, EffectLanded, out.Results[0].Effect, "%s: %s", p, out.Results[0].Message)
			b, err := os.ReadFile(filepath.Join(ws, p))
			require.NoError(t, err)
			assert.Equal(t, "ok\n", string(b))
		}
	})
}

// TestFileToolsBareRepoExchangeRace: while a loop exchanges a plain
// directory d with a bare repository of another name, 1,000 calls of
// write_file and patch on d land only in the plain directory: the bare
// repository's config is never written, whichever name it has.
func TestFileToolsBareRepoExchangeRace(t *testing.T) {
	t.Parallel()
	c, ws := testConfig(t, "")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "d/config"), []byte("[core]\n# d\n"), 0o644))
	bare := filepath.Join(ws, "r")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	gitInit(t, bare, "--bare")
	orig, err := os.ReadFile(filepath.Join(bare, "config"))
	require.NoError(t, err)
	var before unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(bare, "config"), &before))
	stop := exchangeLoop(t, filepath.Join(ws, "d"), bare)
	r := &Runner{Config: c}
	landed, refused := 0, 0
	// One call a round, rotating (CI time): 1,000 writes in all.
	calls := []RawCall{
		rawCall("1", "write_file", args("path", "d/config", "content", "[core]\n\tfsmonitor = evil\n")),
		rawCall("2", "patch", args("path", "d/config", "old_string", "[core]", "new_string", "[core]")),
		rawCall("3", "write_file", args("path", "d/hooks/pre-receive", "content", "#!/bin/sh\necho evil\n")),
	}
	for i := 0; i < 1000; i++ {
		out := r.Execute(t.Context(), Batch{Calls: []RawCall{calls[i%len(calls)]}}, nil)
		for _, res := range out.Results {
			if res.Effect == EffectLanded {
				landed++
			} else {
				refused++
			}
		}
	}
	swaps := stop()
	t.Logf("%d swaps, %d writes landed, %d refused", swaps, landed, refused)
	require.Greater(t, swaps, 1000, "the race ran")
	assert.Positive(t, landed, "writes land when d is the plain directory")
	assert.Positive(t, refused, "and are refused when it is the repository")
	// The repository is whichever name holds its HEAD now.
	repo := bare
	if _, err := os.Lstat(filepath.Join(ws, "d/HEAD")); err == nil {
		repo = filepath.Join(ws, "d")
	}
	data, err := os.ReadFile(filepath.Join(repo, "config"))
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(data), "the bare repository's config was not written")
	var after unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(repo, "config"), &after))
	assert.Equal(t, before.Ino, after.Ino, "nor replaced")
	_, err = os.Lstat(filepath.Join(repo, "hooks/pre-receive"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no hook was planted")
}

// hugeDir makes dir/name holding n empty files and returns their sorted
// names.
func hugeDir(t *testing.T, dir, name string, n int) []string {
	t.Helper()
	d := filepath.Join(dir, name)
	require.NoError(t, os.Mkdir(d, 0o755))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("f%05d", i)
		fd, err := unix.Open(filepath.Join(d, names[i]), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		require.NoError(t, err)
		unix.Close(fd)
	}
	return names
}

func openDir(t *testing.T, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestSearchFilesHugeDirectory: a search that meets a directory of more
// entries than its bound stops there with a clear reason, keeping what it
// found before.
func TestSearchFilesHugeDirectory(t *testing.T) {
	t.Parallel()
	_, ws := testConfig(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("needle\n"), 0o644))
	hugeDir(t, ws, "huge", 2*dirlist.Batch+1)
	re, err := compileSearch("needle")
	require.NoError(t, err)
	s := &search{ctx: t.Context(), re: re, max: 10, hidden: map[fileID]bool{}, cpuEnd: threadCPU() + time.Hour, dirMax: 2 * dirlist.Batch}
	s.walk(openDir(t, ws), ".", 0)
	assert.Len(t, s.matches, 1, "a.txt, listed before huge, was searched")
	assert.Equal(t, fmt.Sprintf("directory entries (huge has more than %d)", 2*dirlist.Batch), s.stopped)
	assert.Equal(t, 1, s.files, "a.txt alone: nothing in huge was searched")

	s = &search{ctx: t.Context(), re: re, max: 10, hidden: map[fileID]bool{}, cpuEnd: threadCPU() + time.Hour, dirMax: 4 * dirlist.Batch}
	s.walk(openDir(t, ws), ".", 0)
	assert.Empty(t, s.stopped, "under the bound the whole directory is listed")
	assert.Equal(t, 2*dirlist.Batch+2, s.files)
}
