package approval

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func analysis(t *testing.T, cmd string) *Analysis {
	t.Helper()
	a, err := Analyze(cmd, AnalyzeOptions{Home: "/home/u", Cwd: "/home/u/p"})
	require.NoError(t, err)
	return a
}

func TestMatchAllowlist(t *testing.T) {
	cases := []struct {
		entries []string
		cmd     string
		want    bool
	}{
		{[]string{"rm -rf ./build"}, "rm -rf ./build", true},
		{[]string{"rm -rf ./build"}, "/bin/rm -rf ./build", true},
		{[]string{"rm -rf ./build"}, "rm -rf ./build2", false},
		{[]string{"rm -rf ./*"}, "rm -rf ./dist", true},
		{[]string{"rm -rf ./build"}, "sudo rm -rf ./build", false},
		{[]string{"rm -rf ./build"}, "rm -rf ./build && rm -rf ./dist", false},
		{[]string{"rm -rf ./build", "rm -rf ./dist"}, "rm -rf ./build && rm -rf ./dist", true},
		{[]string{"rm -rf ./build", "curl x", "sh"}, "rm -rf ./build; curl x | sh", false},
		{[]string{"=curl x | sh"}, "curl x | sh", true},
		{[]string{"=curl x | sh"}, "curl x | sh ", true},
		{[]string{"=curl x | sh"}, "curl x | bash", false},
		{[]string{"*"}, "curl x | sh", false},
		{[]string{"echo hi"}, "echo hi > ~/.bashrc", false},
		{[]string{"rm -r a b"}, "rm -r 'a b'", false},
		{[]string{`rm -r '\*'`}, "rm -r '*'", true},
		{[]string{`rm -r '\*'`}, "rm -r x", false},
		{[]string{"git push --force origin *"}, "git push --force origin main", true},
		{nil, "rm -rf ./build", false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q in %q", tc.cmd, tc.entries), func(t *testing.T) {
			_, ok := MatchAllowlist(tc.entries, analysis(t, tc.cmd))
			assert.Equal(t, tc.want, ok)
		})
	}
}

func TestAllowlistKeysRoundTrip(t *testing.T) {
	for _, cmd := range []string{"rm -rf ./build", "rm -r 'a b' && git push --force", "rm -r '*'", "curl x | sh", "echo hi > ~/.bashrc"} {
		a := analysis(t, cmd)
		keys := AllowlistKeys(a)
		_, ok := MatchAllowlist(keys, a)
		assert.True(t, ok, "%q with %q", cmd, keys)
	}
	keys := AllowlistKeys(analysis(t, "rm -r '*'"))
	_, ok := MatchAllowlist(keys, analysis(t, "rm -r x"))
	assert.False(t, ok, "a stored command is literal, never a glob: %q", keys)
}

func TestAllowlistStoreConcurrentGoroutines(t *testing.T) {
	s := NewAllowlistStore(t.TempDir())
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, s.Add("p", AllowEntry{Pattern: "cmd " + strconv.Itoa(i)}))
		}()
	}
	wg.Wait()
	entries, err := s.Load("p")
	require.NoError(t, err)
	assert.Len(t, entries, n)
	require.NoError(t, s.Add("p", AllowEntry{Pattern: "cmd 3"}))
	entries, _ = s.Load("p")
	assert.Len(t, entries, n, "duplicates are not added")
	other, err := s.Load("q")
	require.NoError(t, err)
	assert.Empty(t, other)
}

const helperEnv = "TETHER_TEST_ALLOWLIST_HELPER"

// TestAllowlistHelperProcess is run by TestAllowlistStoreConcurrentProcesses
// in child processes; on its own it does nothing.
func TestAllowlistHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("helper process for TestAllowlistStoreConcurrentProcesses")
	}
	var dir string
	var id, count int
	_, err := fmt.Sscanf(spec, "%d %d %s", &id, &count, &dir)
	require.NoError(t, err)
	s := NewAllowlistStore(dir)
	for j := range count {
		require.NoError(t, s.Add("shared", AllowEntry{Pattern: fmt.Sprintf("proc %d entry %d", id, j), Added: time.Now()}))
	}
}

func TestAllowlistStoreConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 6, 8
	cmds := make([]*exec.Cmd, procs)
	for i := range procs {
		c := exec.Command(os.Args[0], "-test.run=^TestAllowlistHelperProcess$", "-test.count=1")
		c.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %s", helperEnv, i, each, dir))
		cmds[i] = c
		require.NoError(t, c.Start())
	}
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "helper %d", i)
	}
	entries, err := NewAllowlistStore(dir).Load("shared")
	require.NoError(t, err)
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Pattern] = true
	}
	for i := range procs {
		for j := range each {
			assert.True(t, got[fmt.Sprintf("proc %d entry %d", i, j)], "proc %d entry %d lost", i, j)
		}
	}
	assert.Len(t, entries, procs*each)
	leftovers, _ := filepath.Glob(filepath.Join(dir, "allowlist", "*.tmp"))
	assert.Empty(t, leftovers, "no temporary files remain")
}

func TestAllowlistStoreRefusesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s := NewAllowlistStore(dir)
	p := filepath.Join(dir, "allowlist", "p.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte("{not json"), 0o600))
	require.Error(t, s.Add("p", AllowEntry{Pattern: "x"}))
	data, _ := os.ReadFile(p)
	assert.Equal(t, "{not json", string(data), "an unreadable file is never overwritten")
	_, err := s.Load("p")
	assert.Error(t, err)
	assert.Error(t, s.Add("../evil", AllowEntry{Pattern: "x"}), "profile names are file names")
}

// TestCorruptAllowlistAsks: a corrupt store is ignored, so the call asks.
func TestCorruptAllowlistAsks(t *testing.T) {
	cfg := testConfig(t, "  default: {}\n")
	p := filepath.Join(cfg.StateDir, "allowlist", "default.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(`{"version":1,"entries":[{"pattern":"*"}]`), 0o600))
	e, _ := newEngine(t, cfg, Options{})
	d, err := e.Decide(t.Context(), Request{Command: "rm -rf ./x", Platform: PlatformCLI})
	require.ErrorIs(t, err, ErrDenied)
	assert.Equal(t, StageRoute, d.Stage)
}
