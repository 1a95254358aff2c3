package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestEmbeddedDefaultLoads(t *testing.T) {
	cfg, err := Default()
	require.NoError(t, err)
	assert.Equal(t, EmbeddedSource, cfg.Source)
	p, ok := cfg.Profile("")
	require.True(t, ok)
	assert.Equal(t, "default", p.Name)
	assert.Equal(t, BackendSandbox, p.Terminal.Backend)
	assert.Equal(t, NetworkNone, p.Terminal.Network.Mode)
	assert.Equal(t, ModeManual, p.Approvals.Mode)
	assert.Equal(t, 300*time.Second, p.Approvals.Timeout.D())
	assert.Equal(t, UnattendedDeny, p.Approvals.CronMode)
	assert.Equal(t, UnattendedDeny, p.Approvals.UnattendedMode)
	assert.Equal(t, 300, p.Terminal.LifetimeSeconds)
	require.NotNil(t, p.Terminal.PersistCwd)
	assert.True(t, *p.Terminal.PersistCwd)
	require.NotNil(t, p.Terminal.Pool)
	assert.Equal(t, DefaultPool, *p.Terminal.Pool)
	assert.Equal(t, ViolationBlock, p.Mandate.InteractiveViolation)
	assert.Equal(t, "", p.Terminal.Cwd, "the default profile runs in the caller's cwd")
}

func TestExampleLoads(t *testing.T) {
	cfg, err := Load("example.yaml")
	require.NoError(t, err)
	p, ok := cfg.Profile("default")
	require.True(t, ok)
	assert.Equal(t, NetworkProxy, p.Terminal.Network.Mode)
	assert.Equal(t, []string{"pypi.org", "*.pythonhosted.org", "github.com:443"}, p.Terminal.Network.Allow)
	assert.Equal(t, ByteSize(1<<30), p.Terminal.Limits.Memory)
	assert.Equal(t, ByteSize(256<<20), p.Terminal.Limits.Tmpfs)
	assert.Equal(t, ByteSize(2<<30), p.Terminal.Limits.Disk)
	assert.InDelta(t, 1.5, p.Terminal.Limits.CPUs, 0.001)
	assert.Equal(t, 180*time.Second, p.Terminal.Limits.Timeout.D())
	home, _ := os.UserHomeDir()
	assert.Equal(t, filepath.Join(home, "work/project"), p.Terminal.Cwd)
	// The example leaves env_file unset (a set one must exist); a
	// relative one resolves against the config file's directory.
	assert.Empty(t, p.Secrets.EnvFile)
	rel, err := Parse("rel.yaml", []byte("profiles:\n  default:\n    secrets:\n      env_file: secrets.env\n"), "/etc/tether")
	require.NoError(t, err)
	rp, ok := rel.Profile("default")
	require.True(t, ok)
	assert.Equal(t, "/etc/tether/secrets.env", rp.Secrets.EnvFile, "relative paths resolve against the config file's directory")
	assert.Equal(t, []string{"sudo *", "git push --force*"}, p.Approvals.Deny)
	assert.Equal(t, "llama3.1:8b", p.Approvals.Smart.Model)
	n, ok := cfg.Profile("nightly")
	require.True(t, ok)
	assert.Equal(t, UnattendedApprove, n.Approvals.CronMode)
	assert.Equal(t, UnattendedDeny, n.Approvals.UnattendedMode)
	assert.Equal(t, "/srv/nightly", n.Terminal.Cwd)
}

func TestStrictness(t *testing.T) {
	cases := []struct {
		name string
		text string
		line int
		msg  string
	}{
		{"unknown top-level key", "profiles:\n  default: {}\nstat_dir: /x\n", 3, `unknown key "stat_dir" in config`},
		{"unknown nested key", "profiles:\n  default:\n    terminal:\n      backend: host\n      netwrk: {}\n", 5, `unknown key "netwrk" in terminal`},
		{"bad enum", "profiles:\n  default:\n    approvals:\n      mode: sometimes\n", 4, `invalid approval mode "sometimes"`},
		{"bad backend", "profiles:\n  default:\n    terminal:\n      backend: docker\n", 4, `invalid backend "docker"`},
		{"bad duration", "profiles:\n  default:\n    approvals:\n      timeout: soon\n", 4, `invalid duration "soon"`},
		{"bad size", "profiles:\n  default:\n    terminal:\n      limits:\n        memory: lots\n", 5, `invalid size "lots"`},
		{"negative pids", "profiles:\n  default:\n    terminal:\n      limits:\n        pids: -1\n", 5, "limits.pids must not be negative"},
		{"bad disk", "profiles:\n  default:\n    terminal:\n      limits:\n        disk: plenty\n", 5, `invalid size "plenty"`},
		{"sandbox pids over the profile's", "profiles:\n  default:\n    terminal:\n      limits:\n        pids: 50\n        sandbox_pids: 100\n", 6, "limits.sandbox_pids (100) must not exceed limits.pids (50)"},
		{"sandbox pids too few", "profiles:\n  default:\n    terminal:\n      limits:\n        sandbox_pids: 3\n", 5, "limits.sandbox_pids 3 is too small"},
		{"sandbox memory over the profile's", "profiles:\n  default:\n    terminal:\n      limits:\n        memory: 64MiB\n        sandbox_memory: 128MiB\n", 6, "limits.sandbox_memory (134217728 bytes) must not exceed limits.memory (67108864 bytes)"},
		{"wrong type", "profiles:\n  default:\n    terminal:\n      lifetime_seconds: forever\n", 4, "cannot unmarshal"},
		{"negative pool", "profiles:\n  default:\n    terminal:\n      pool: -1\n", 4, "pool must be between 0 (no pool) and 16, got -1"},
		{"pool too large", "profiles:\n  default:\n    terminal:\n      pool: 17\n", 4, "pool must be between 0 (no pool) and 16, got 17"},
		{"bad cron mode", "profiles:\n  default:\n    approvals:\n      cron_mode: maybe\n", 4, "invalid unattended policy"},
		{"smart without endpoint", "profiles:\n  default:\n    approvals:\n      mode: smart\n", 4, "mode: smart needs"},
		{"bad endpoint", "profiles:\n  default:\n    approvals:\n      smart:\n        endpoint: ftp://x\n", 5, "invalid smart.endpoint"},
		{"allow without proxy", "profiles:\n  default:\n    terminal:\n      network:\n        allow: [example.com]\n", 4, "need mode: proxy"},
		{"bad host entry", "profiles:\n  default:\n    terminal:\n      network:\n        mode: proxy\n        allow:\n          - \"exa mple\"\n", 7, "invalid network entry"},
		{"bad env name", "profiles:\n  default:\n    terminal:\n      env_passthrough: [PATH, 1BAD]\n", 4, `invalid environment variable name "1BAD"`},
		{"bad profile name", "default_profile: a\nprofiles:\n  a: {}\n  ../evil: {}\n", 4, "invalid profile name"},
		{"missing default profile", "default_profile: prod\nprofiles:\n  dev: {}\n", 1, `default_profile "prod" is not defined`},
		{"no profiles", "state_dir: /tmp/x\n", 1, "no profiles defined"},
		{"duplicate key", "profiles:\n  default: {}\n  default: {}\n", 3, "already defined"},
		{"syntax error", "profiles:\n  default: [\n", 0, ""},
		{"two documents", "profiles:\n  default: {}\n---\nprofiles: {}\n", 0, "only one YAML document"},
		{"bad violation", "profiles:\n  default:\n    mandate:\n      interactive_violation: ignore\n", 4, "invalid interactive_violation"},
		{"bad allowlist glob", "profiles:\n  default:\n    approvals:\n      command_allowlist: [\"ls \\\\\"]\n", 4, "unfinished escape"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "config.yaml", tc.text)
			cfg, err := Load(path)
			require.Error(t, err)
			assert.Nil(t, cfg)
			var ie *InvalidError
			require.True(t, errors.As(err, &ie), "%T %v", err, err)
			require.NotEmpty(t, ie.Problems)
			p := ie.Problems[0]
			assert.Equal(t, path, p.File)
			if tc.line > 0 {
				assert.Equal(t, tc.line, p.Line, "%v", err)
				assert.Contains(t, err.Error(), path+":"+itoa(tc.line)+": ")
			} else {
				assert.Positive(t, p.Line, "%v", err)
			}
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestAllProblemsReported(t *testing.T) {
	path := writeFile(t, t.TempDir(), "c.yaml", "profiles:\n  default:\n    terminal:\n      limits:\n        pids: -1\n        cpus: -2\n")
	_, err := Load(path)
	var ie *InvalidError
	require.ErrorAs(t, err, &ie)
	require.Len(t, ie.Problems, 2)
	assert.Equal(t, 5, ie.Problems[0].Line)
	assert.Equal(t, 6, ie.Problems[1].Line)
}

func TestUnreadableFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	var ie *InvalidError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "reading config")
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "tether"), 0o700))
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv(EnvConfig, "")

	// Nothing anywhere (unless the machine has /etc/tether/config.yaml).
	if _, err := os.Stat(SystemPath); err != nil {
		got, err := Find("")
		require.NoError(t, err)
		assert.Equal(t, "", got)
	}

	xdgFile := writeFile(t, filepath.Join(xdg, "tether"), "config.yaml", "profiles: {default: {}}\n")
	got, err := Find("")
	require.NoError(t, err)
	assert.Equal(t, xdgFile, got)

	envFile := writeFile(t, dir, "env.yaml", "profiles: {default: {}}\n")
	t.Setenv(EnvConfig, envFile)
	got, err = Find("")
	require.NoError(t, err)
	assert.Equal(t, envFile, got)

	flagFile := writeFile(t, dir, "flag.yaml", "profiles: {default: {}}\n")
	got, err = Find(flagFile)
	require.NoError(t, err)
	assert.Equal(t, flagFile, got)

	_, err = Find(filepath.Join(dir, "nope.yaml"))
	assert.ErrorIs(t, err, ErrNotFound, "an explicit file never falls back")
	t.Setenv(EnvConfig, filepath.Join(dir, "nope.yaml"))
	_, err = Find("")
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	env := writeFile(t, dir, "s.env", "# comment\nexport A=1\nB=\"two words\"\nC='x=y'\n\n")
	s := Secrets{EnvFile: env, Values: map[string]string{"A": "override"}}
	got, err := s.LoadSecrets()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"A": "override", "B": "two words", "C": "x=y"}, got)

	bad := writeFile(t, dir, "bad.env", "A=1\nthis is hunter2\n")
	_, err = Secrets{EnvFile: bad}.LoadSecrets()
	require.Error(t, err)
	assert.Contains(t, err.Error(), ":2:")
	assert.NotContains(t, err.Error(), "hunter2", "a malformed line may hold a secret")

	_, err = Secrets{EnvFile: filepath.Join(dir, "missing.env")}.LoadSecrets()
	assert.Error(t, err, "an unreadable env file is an error, not an empty mapping")
}

func TestMasked(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte("profiles:\n  default:\n    secrets:\n      values: {TOKEN: hunter2}\n"), "/")
	require.NoError(t, err)
	m := cfg.Masked()
	assert.Equal(t, "***", m.Profiles["default"].Secrets.Values["TOKEN"])
	assert.Equal(t, "hunter2", cfg.Profiles["default"].Secrets.Values["TOKEN"], "the original is untouched")
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"10": 10, "1k": 1024, "512MiB": 512 << 20, "1.5G": 3 << 29, "2 gb": 2 << 30} {
		got, err := ParseByteSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "G", "1x", "-1", "1e3"} {
		_, err := ParseByteSize(in)
		assert.Error(t, err, in)
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv(EnvStateDir, "")
	cfg, err := Parse("x.yaml", []byte("state_dir: rel/state\nprofiles: {default: {}}\n"), "/base")
	require.NoError(t, err)
	assert.Equal(t, "/base/rel/state", cfg.StateDir)
	t.Setenv(EnvStateDir, "/env/state")
	cfg, err = Parse("x.yaml", []byte("state_dir: rel/state\nprofiles: {default: {}}\n"), "/base")
	require.NoError(t, err)
	assert.Equal(t, "/env/state", cfg.StateDir, "$TETHER_STATE_DIR wins, as for package mandate")
}

func TestByteSizeString(t *testing.T) {
	for in, want := range map[ByteSize]string{1 << 30: "1GiB", 512 << 20: "512MiB", 1536: "1536", 0: "0", 3 << 10: "3KiB"} {
		assert.Equal(t, want, in.String())
		back, err := ParseByteSize(want)
		require.NoError(t, err)
		assert.Equal(t, in, back)
	}
}

func TestCheckSecrets(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ok.env", "A=1\n")
	writeFile(t, dir, "bad.env", "A=1\nnot a pair\n")
	path := writeFile(t, dir, "c.yaml", "profiles:\n  a:\n    secrets:\n      env_file: ok.env\n  b:\n    secrets:\n      env_file: bad.env\n  c:\n    secrets:\n      env_file: missing.env\n  default: {}\n")
	cfg, err := Load(path)
	require.NoError(t, err)
	probs := cfg.CheckSecrets()
	require.Len(t, probs, 2)
	assert.Equal(t, 7, probs[0].Line)
	assert.Contains(t, probs[0].String(), "profile b:")
	assert.Contains(t, probs[0].String(), "bad.env:2: want NAME=VALUE")
	assert.Equal(t, 10, probs[1].Line)
	assert.Contains(t, probs[1].String(), "profile c: reading secrets env file")
}

// TestExampleDocumentsEveryKey: every key of the file format appears in
// example.yaml, so the documented example stays complete.
func TestExampleDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("example.yaml")
	require.NoError(t, err)
	text := string(data)
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Map || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct {
			return
		}
		for i := range rt.NumField() {
			f := rt.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			assert.Regexp(t, `(?m)^\s*`+regexp.QuoteMeta(key)+`:`, text, "example.yaml does not document %s%s", path, key)
			walk(f.Type, path+key+".")
		}
	}
	walk(reflect.TypeOf(Config{}), "")
}

// TestSandboxBudgetDefaults: each sandbox's own budget defaults to a share
// of the profile's, never more than the profile's own limit.
func TestSandboxBudgetDefaults(t *testing.T) {
	cfg, err := Parse("t.yaml", []byte("profiles:\n  default: {}\n  small:\n    terminal:\n      limits: {pids: 20, memory: 100MiB}\n"), t.TempDir())
	require.NoError(t, err)
	p, _ := cfg.Profile("default")
	l := p.Terminal.Limits
	assert.Equal(t, DefaultPids, l.Pids)
	assert.Equal(t, DefaultSandboxPids, l.SandboxPids)
	assert.Equal(t, DefaultSandboxMemory, l.SandboxMemory)
	s, _ := cfg.Profile("small")
	assert.Equal(t, 20, s.Terminal.Limits.SandboxPids)
	assert.Equal(t, ByteSize(100<<20), s.Terminal.Limits.SandboxMemory)
}
