package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectUser is the user's profile the project files below are layered
// over: something of every kind to widen.
const projectUser = `profiles:
  default:
    terminal:
      backend: sandbox
      cwd: /srv/ws
      network: {mode: proxy, allow: [pypi.org, github.com], deny: [10.0.0.0/8]}
      limits: {memory: 512MiB, pids: 100, sandbox_memory: 128MiB, sandbox_pids: 50, cpus: 1, timeout: 60s, output: 1MiB, tmpfs: 64MiB, disk: 1GiB}
      env_passthrough: [PATH, LANG]
      mounts: [{path: /srv/cache, mode: rw}, {path: /opt/tools}]
    approvals: {mode: smart, timeout: 120s, cron_mode: approve, unattended_mode: approve, deny: ["sudo *"],
                smart: {endpoint: "http://127.0.0.1:1", model: m}}
    files: {secret_files: ask}
    enabled_toolsets: [terminal, files]
    mandate: {interactive_violation: approve}
`

func projectProfile(t *testing.T) *Profile {
	t.Helper()
	cfg, err := Parse("user.yaml", []byte(projectUser), "/")
	require.NoError(t, err)
	return cfg.Profiles["default"]
}

// TestProjectCannotWiden: a project file that tries to allow more than the
// user's profile, through any field, is refused with file:line and what
// was refused; nothing of it is applied.
func TestProjectCannotWiden(t *testing.T) {
	user := projectProfile(t)
	for _, c := range []struct{ doc, want string }{
		{"approvals: {mode: \"off\"}", "approvals.mode: off would allow more than the profile's smart"},
		{"approvals: {cron_mode: approve}\nterminal: {network: {mode: host}}", "terminal.network.mode: host would allow more"},
		{"approvals: {timeout: 10m}", "approvals.timeout: 10m0s is higher than the profile's 2m0s"},
		{"approvals: {timeout: 0}", "only lower a limit to a positive value"},
		{"approvals: {command_allowlist: ['*']}", "approvals.command_allowlist cannot be set in a project file"},
		{"approvals: {smart: {policy: approve everything}}", "approvals.smart.policy cannot be set"},
		{"approvals: {webhook: {url: 'http://x'}}", "approvals.webhook.url cannot be set"},
		{"approvals: {mode: yolo}", "invalid approval mode \"yolo\""},
		{"files: {secret_files: allow}", "files.secret_files: allow would allow more than the profile's ask"},
		{"terminal: {cwd: /}", "terminal.cwd cannot be set"},
		{"terminal: {rootfs: /srv/evil}", "terminal.rootfs cannot be set"},
		{"terminal: {backend: host}", "may only set sandbox"},
		{"terminal: {persist_cwd: false}", "terminal.persist_cwd cannot be set"},
		{"terminal: {lifetime_seconds: 99999}", "terminal.lifetime_seconds cannot be set"},
		{"terminal: {network: {allow: [evil.com]}}", "evil.com is not allowed by the profile"},
		{"terminal: {network: {max_bytes: 1TiB}}", "terminal.network.max_bytes cannot be set"},
		{"terminal: {limits: {memory: 2GiB}}", "terminal.limits.memory: 2147483648 bytes is higher"},
		{"terminal: {limits: {pids: 1000}}", "terminal.limits.pids: 1000 is higher"},
		{"terminal: {limits: {sandbox_pids: 51}}", "terminal.limits.sandbox_pids: 51 is higher"},
		{"terminal: {limits: {sandbox_memory: 256MiB}}", "terminal.limits.sandbox_memory"},
		{"terminal: {limits: {cpus: 2}}", "terminal.limits.cpus: 2 is not lower"},
		{"terminal: {limits: {timeout: 1h}}", "terminal.limits.timeout: 1h0m0s is higher"},
		{"terminal: {limits: {output: 1GiB}}", "terminal.limits.output"},
		{"terminal: {limits: {tmpfs: 1GiB}}", "terminal.limits.tmpfs"},
		{"terminal: {limits: {disk: 2GiB}}", "terminal.limits.disk"},
		{"terminal: {limits: {disk: 0}}", "only lower a limit to a positive value"},
		{"terminal: {env_passthrough: [PATH, AWS_SECRET_ACCESS_KEY]}", "AWS_SECRET_ACCESS_KEY is not passed through"},
		{"terminal: {mounts: [{path: /home/u/.ssh}]}", "/home/u/.ssh is not a mount of the profile"},
		{"terminal: {mounts: [{path: /opt/tools, mode: rw}]}", "/opt/tools is read-only in the profile"},
		{"secrets: {values: {X: y}}", "secrets.values.X cannot be set"},
		{"secrets: {env_file: /etc/shadow}", "secrets.env_file cannot be set"},
		{"enabled_toolsets: [terminal, files, browser]", "\"browser\" is not enabled by the profile"},
		{"enabled_toolsets: []", "an empty list means the default toolsets"},
		{"mandate: {interactive_violation: approve}", "mandate.interactive_violation cannot be set"},
		{"profiles: {default: {}}", "unknown key \"profiles\""},
		{"state_dir: /tmp/x", "unknown key \"state_dir\""},
		{"approvals: {deny: [\"\"]}", "empty pattern"},
		{"files: {deny: [/etc/passwd]}", "absolute"},
	} {
		got, err := ParseProject("/srv/ws/.tether.yaml", []byte(c.doc+"\n"), user, "/srv/ws")
		require.Error(t, err, c.doc)
		assert.Nil(t, got, c.doc)
		assert.Contains(t, err.Error(), c.want, c.doc)
		assert.Contains(t, err.Error(), "/srv/ws/.tether.yaml:", c.doc)
	}
	// Every widening problem is reported, on its own line.
	_, err := ParseProject("p.yaml", []byte("approvals:\n  mode: \"off\"\nterminal:\n  limits:\n    memory: 4GiB\n"), user, "/srv/ws")
	var ie *InvalidError
	require.ErrorAs(t, err, &ie)
	require.Len(t, ie.Problems, 2)
	assert.Equal(t, 2, ie.Problems[0].Line)
	assert.Equal(t, 5, ie.Problems[1].Line)
	assert.True(t, errors.Is(err, ErrWidening))
	// The user's profile is untouched.
	assert.Equal(t, projectProfile(t), user)
}

// TestProjectNarrows: what a project file may set narrows the profile.
func TestProjectNarrows(t *testing.T) {
	user := projectProfile(t)
	doc := `approvals:
  mode: manual
  timeout: 30s
  cron_mode: deny
  unattended_mode: deny
  deny: ["git push*"]
  ask: ["make deploy*"]
files:
  deny: ["secrets/**"]
  ask: ["*.sqlite"]
  secret_files: deny
terminal:
  network: {mode: proxy, allow: [pypi.org], deny: [pypi.org:80]}
  limits: {memory: 256MiB, sandbox_memory: 64MiB, pids: 80, sandbox_pids: 40, cpus: 0.5, timeout: 10s, output: 64KiB, tmpfs: 16MiB, disk: 100MiB}
  env_passthrough: [PATH]
  mounts: [{path: /srv/cache}]
enabled_toolsets: [files]
disabled_toolsets: [patch]
`
	p, err := ParseProject("p.yaml", []byte(doc), user, "/srv/ws")
	require.NoError(t, err)
	a := p.Approvals
	assert.Equal(t, ModeManual, a.Mode)
	assert.Equal(t, 30*time.Second, a.Timeout.D())
	assert.Equal(t, UnattendedDeny, a.CronMode)
	assert.Equal(t, UnattendedDeny, a.UnattendedMode)
	assert.Equal(t, []string{"sudo *", "git push*"}, a.Deny, "added to the user's")
	assert.Equal(t, []string{"make deploy*"}, a.Ask)
	assert.Equal(t, []string{"secrets/**"}, p.Files.Deny)
	assert.Equal(t, []string{"*.sqlite"}, p.Files.Ask)
	assert.Equal(t, FileDeny, p.Files.SecretFiles)
	n := p.Terminal.Network
	assert.Equal(t, []string{"pypi.org"}, n.Allow)
	assert.Equal(t, []string{"10.0.0.0/8", "pypi.org:80"}, n.Deny)
	l := p.Terminal.Limits
	assert.Equal(t, ByteSize(256<<20), l.Memory)
	assert.Equal(t, 40, l.SandboxPids)
	assert.Equal(t, 0.5, l.CPUs)
	assert.Equal(t, ByteSize(100<<20), l.Disk)
	assert.Equal(t, []string{"PATH"}, p.Terminal.EnvPassthrough)
	assert.Equal(t, []Mount{{Path: "/srv/cache", Mode: MountRO}}, p.Terminal.Mounts, "fewer mounts; rw may become ro")
	assert.Equal(t, []string{"files"}, p.EnabledToolsets)
	assert.Equal(t, []string{"patch"}, p.DisabledToolsets)
	// Untouched fields stay the user's; the user's profile is unchanged.
	assert.Equal(t, "/srv/ws", p.Terminal.Cwd)
	assert.Equal(t, ModeSmart, user.Approvals.Mode)
	assert.Equal(t, []string{"sudo *"}, user.Approvals.Deny)

	// network none drops the proxy lists; an empty file changes nothing.
	p, err = ParseProject("p.yaml", []byte("terminal: {network: {mode: none}}\n"), user, "/srv/ws")
	require.NoError(t, err)
	assert.Equal(t, NetworkNone, p.Terminal.Network.Mode)
	assert.Empty(t, p.Terminal.Network.Allow)
	p, err = ParseProject("p.yaml", []byte("# nothing\n"), user, "/srv/ws")
	require.NoError(t, err)
	assert.Equal(t, user, p)
}

// TestLayerProject: the file in the workspace is read when present (a
// FIFO is refused without blocking), and its absence changes nothing.
func TestLayerProject(t *testing.T) {
	user := projectProfile(t)
	ws := t.TempDir()
	p, err := LayerProject(user, ws)
	require.NoError(t, err)
	assert.Same(t, user, p)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ProjectFile), []byte("approvals: {mode: manual}\n"), 0o644))
	p, err = LayerProject(user, ws)
	require.NoError(t, err)
	assert.Equal(t, ModeManual, p.Approvals.Mode)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ProjectFile), []byte("approvals: {mode: \"off\"}\n"), 0o644))
	_, err = LayerProject(user, ws)
	assert.ErrorIs(t, err, ErrWidening)
	require.NoError(t, os.Remove(filepath.Join(ws, ProjectFile)))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws, ProjectFile), 0o600))
	_, err = LayerProject(user, ws)
	assert.ErrorIs(t, err, ErrUntrustedFile)
}

// FuzzParseProject: whatever a project file says (it is written in the
// workspace, by anyone who can write there), the result is an error or a
// profile no wider than the user's: levels at least as strict, limits no
// higher, restriction lists a superset, permission lists a subset.
func FuzzParseProject(f *testing.F) {
	for _, s := range []string{
		"approvals: {mode: manual, deny: [\"x *\"]}\n",
		"terminal: {network: {mode: none}, limits: {memory: 1MiB}}\n",
		"terminal: {mounts: [{path: /srv/cache}], env_passthrough: [PATH]}\n",
		"files: {secret_files: deny, ask: [\"*.db\"]}\nenabled_toolsets: [files]\n",
		"terminal: {network: {allow: [pypi.org]}}\n",
		"approvals: {mode: \"off\"}\n",
		"terminal: {backend: sandbox, limits: {disk: 1G, cpus: 0.5}}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		user := projectProfile(t)
		p, err := ParseProject("p.yaml", []byte(doc), user, "/srv/ws")
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || p != nil {
				t.Fatalf("error %T %v with profile %v", err, err, p)
			}
			return
		}
		rank := func(v string, levels ...string) int { return slices.Index(levels, v) }
		check := func(ok bool, what string) {
			if !ok {
				t.Fatalf("%s widened by %q: %+v", what, doc, p)
			}
		}
		a, u := p.Approvals, user.Approvals
		check(rank(string(a.Mode), "manual", "smart", "off") <= rank(string(u.Mode), "manual", "smart", "off"), "approvals.mode")
		check(a.CronMode == u.CronMode || a.CronMode == UnattendedDeny, "cron_mode")
		check(a.UnattendedMode == u.UnattendedMode || a.UnattendedMode == UnattendedDeny, "unattended_mode")
		check(a.Timeout > 0 && a.Timeout <= u.Timeout, "approvals.timeout")
		check(slices.Equal(a.CommandAllowlist, u.CommandAllowlist), "command_allowlist")
		check(a.Smart == u.Smart && a.Webhook == u.Webhook, "smart/webhook")
		check(len(a.Deny) >= len(u.Deny) && slices.Equal(a.Deny[:len(u.Deny)], u.Deny), "approvals.deny")
		check(rank(string(p.Files.SecretFiles), "deny", "ask", "allow") <= rank(string(user.Files.SecretFiles), "deny", "ask", "allow"), "secret_files")
		tt, ut := p.Terminal, user.Terminal
		check(tt.Cwd == ut.Cwd && tt.Rootfs == ut.Rootfs && tt.Backend == BackendSandbox, "cwd/rootfs/backend")
		check(rank(string(tt.Network.Mode), "none", "proxy", "host") <= rank(string(ut.Network.Mode), "none", "proxy", "host"), "network.mode")
		for _, h := range tt.Network.Allow {
			check(slices.Contains(ut.Network.Allow, h), "network.allow")
		}
		for _, d := range ut.Network.Deny {
			check(tt.Network.Mode == NetworkNone || slices.Contains(tt.Network.Deny, d), "network.deny")
		}
		l, ul := tt.Limits, ut.Limits
		check(l.Memory <= ul.Memory && l.SandboxMemory <= ul.SandboxMemory && l.Pids <= ul.Pids && l.SandboxPids <= ul.SandboxPids &&
			l.CPUs <= ul.CPUs && l.Timeout <= ul.Timeout && l.Output <= ul.Output && l.Tmpfs <= ul.Tmpfs && l.Disk <= ul.Disk &&
			l.Memory > 0 && l.Pids > 0 && l.CPUs > 0 && l.Timeout > 0 && l.Output > 0 && l.Tmpfs > 0 && l.Disk > 0, "limits")
		check(tt.LifetimeSeconds == ut.LifetimeSeconds && *tt.PersistCwd == *ut.PersistCwd, "lifetime/persist_cwd")
		for _, e := range tt.EnvPassthrough {
			check(slices.Contains(ut.EnvPassthrough, e), "env_passthrough")
		}
		for _, m := range tt.Mounts {
			i := slices.IndexFunc(ut.Mounts, func(um Mount) bool { return um.Path == m.Path })
			check(i >= 0 && (m.Mode == MountRO || ut.Mounts[i].Mode == MountRW), "mounts")
		}
		for _, ts := range p.EnabledToolsets {
			check(slices.Contains(user.EnabledToolsets, ts), "enabled_toolsets")
		}
		check(len(p.EnabledToolsets) > 0, "enabled_toolsets emptied")
		check(p.Secrets.EnvFile == user.Secrets.EnvFile && len(p.Secrets.Values) == len(user.Secrets.Values), "secrets")
		check(p.Mandate == user.Mandate, "mandate")
	})
}
