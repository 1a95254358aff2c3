package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// validator applies defaults and checks values that decoding alone cannot,
// reporting each problem at the line of the offending key.
type validator struct {
	file     string
	root     *yaml.Node
	problems []Problem
	own      []string // tether's own paths (OwnPaths), which no mount may overlap
}

// lineOf returns the line of the value at path (mapping keys, or decimal
// indexes into sequences), or of its deepest existing ancestor.
func (v *validator) lineOf(path ...string) int {
	n := v.root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

func (v *validator) errorf(path []string, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: v.file, Line: v.lineOf(path...), Msg: fmt.Sprintf(format, args...)})
}

// Compiled on first use, not at init (see unknownField).
var envNamePatern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ValidName reports whether name is a valid profile or toolset name:
// letters, digits, '-', '_' and '.', not starting with a punctuation mark,
// at most 64 characters. Such a name is also safe as a file name.
//
// A loop, not the regexp ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$: the bounded
// repetition compiles to 64 copies (~0.12 ms), paid by every `tether run`
// that validates its configuration (issue 22).
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// check fills defaults into cfg and validates it.
func (v *validator) check(cfg *Config, baseDir string) {
	switch env := os.Getenv(EnvStateDir); {
	case env != "":
		cfg.StateDir = absPath(env, baseDir)
	case cfg.StateDir == "":
		cfg.StateDir = defaultStateDir()
	default:
		cfg.StateDir = absPath(cfg.StateDir, baseDir)
	}
	if cfg.UI.Listen == "" {
		cfg.UI.Listen = DefaultListen
	} else if _, port, err := net.SplitHostPort(cfg.UI.Listen); err != nil || port == "" {
		v.errorf([]string{"ui", "listen"}, "invalid ui.listen %q (want host:port, e.g. %s)", cfg.UI.Listen, DefaultListen)
	}
	if cfg.DefaultProfile == "" {
		cfg.DefaultProfile = DefaultProfileName
	}
	if len(cfg.Profiles) == 0 {
		v.errorf([]string{"profiles"}, "no profiles defined (add at least profiles: {%s: {}})", cfg.DefaultProfile)
		return
	}
	if _, ok := cfg.Profiles[cfg.DefaultProfile]; !ok {
		v.errorf([]string{"default_profile"}, "default_profile %q is not defined under profiles", cfg.DefaultProfile)
	}
	v.own = OwnPaths(cfg)
	for name, p := range cfg.Profiles {
		path := []string{"profiles", name}
		if !ValidName(name) {
			v.errorf(path, "invalid profile name %q (letters, digits, '-', '_', '.'; at most 64)", name)
		}
		if p == nil {
			p = &Profile{}
			cfg.Profiles[name] = p
		}
		p.Name = name
		v.checkProfile(p, path, baseDir)
	}
	v.checkCrossMounts(cfg)
}

func (v *validator) checkProfile(p *Profile, path []string, baseDir string) {
	at := func(keys ...string) []string { return append(append([]string{}, path...), keys...) }

	t := &p.Terminal
	if t.Backend == "" {
		t.Backend = BackendSandbox
	}
	if t.Cwd != "" {
		t.Cwd = absPath(t.Cwd, baseDir)
	}
	if t.Rootfs != "" {
		t.Rootfs = absPath(t.Rootfs, baseDir)
		if t.Backend == BackendHost {
			v.errorf(at("terminal", "rootfs"), "rootfs needs backend: sandbox")
		}
	}
	if t.Network.Mode == "" {
		t.Network.Mode = NetworkNone
	}
	if t.Network.Mode != NetworkProxy && (len(t.Network.Allow) > 0 || len(t.Network.Deny) > 0) {
		v.errorf(at("terminal", "network"), "network allow/deny lists need mode: proxy (mode is %s)", t.Network.Mode)
	}
	for _, list := range []struct {
		key     string
		entries []string
	}{{"allow", t.Network.Allow}, {"deny", t.Network.Deny}} {
		for i, h := range list.entries {
			if err := checkHostPattern(h); err != nil {
				v.errorf(at("terminal", "network", list.key, strconv.Itoa(i)), "%v", err)
			}
		}
	}
	v.checkProxyLimits(t.Network, at("terminal", "network"))
	if t.Backend == BackendHost && t.Network.Mode != NetworkNone && t.Network.Mode != NetworkHost {
		v.errorf(at("terminal", "network", "mode"), "backend: host cannot filter the network (use backend: sandbox for mode %s)", t.Network.Mode)
	}
	l := &t.Limits
	positive := func(key string, neg bool) {
		if neg {
			v.errorf(at("terminal", "limits", key), "limits.%s must not be negative", key)
		}
	}
	positive("memory", l.Memory < 0)
	positive("pids", l.Pids < 0)
	positive("cpus", l.CPUs < 0)
	positive("output", l.Output < 0)
	positive("tmpfs", l.Tmpfs < 0)
	positive("disk", l.Disk < 0)
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	} else if l.Memory > 0 && l.Memory < 4<<20 {
		v.errorf(at("terminal", "limits", "memory"), "limits.memory %d bytes is too small (at least 4MiB)", l.Memory)
	}
	if l.Pids == 0 {
		l.Pids = DefaultPids
	}
	positive("sandbox_memory", l.SandboxMemory < 0)
	positive("sandbox_pids", l.SandboxPids < 0)
	if l.SandboxMemory == 0 {
		l.SandboxMemory = min(DefaultSandboxMemory, l.Memory)
	} else if l.SandboxMemory > 0 && l.SandboxMemory < 4<<20 {
		v.errorf(at("terminal", "limits", "sandbox_memory"), "limits.sandbox_memory %d bytes is too small (at least 4MiB)", l.SandboxMemory)
	}
	if l.SandboxPids == 0 {
		l.SandboxPids = min(DefaultSandboxPids, l.Pids)
	} else if l.SandboxPids > 0 && l.SandboxPids < 16 {
		v.errorf(at("terminal", "limits", "sandbox_pids"), "limits.sandbox_pids %d is too small (at least 16: a session's supervisor and its threads count)", l.SandboxPids)
	}
	if l.SandboxMemory > l.Memory && l.Memory > 0 {
		v.errorf(at("terminal", "limits", "sandbox_memory"), "limits.sandbox_memory (%d bytes) must not exceed limits.memory (%d bytes), the whole profile's", l.SandboxMemory, l.Memory)
	}
	if l.SandboxPids > l.Pids && l.Pids > 0 {
		v.errorf(at("terminal", "limits", "sandbox_pids"), "limits.sandbox_pids (%d) must not exceed limits.pids (%d), the whole profile's", l.SandboxPids, l.Pids)
	}
	if l.CPUs == 0 {
		l.CPUs = DefaultCPUs
	}
	if l.Timeout == 0 {
		l.Timeout = Duration(DefaultCommandTimeout)
	}
	if l.Output == 0 {
		l.Output = DefaultOutput
	}
	if l.Tmpfs == 0 {
		l.Tmpfs = DefaultTmpfs
	}
	if t.LifetimeSeconds < 0 {
		v.errorf(at("terminal", "lifetime_seconds"), "lifetime_seconds must not be negative")
	} else if t.LifetimeSeconds == 0 {
		t.LifetimeSeconds = DefaultLifetimeSeconds
	}
	if t.PersistCwd == nil {
		yes := true
		t.PersistCwd = &yes
	}
	switch {
	case t.Pool == nil:
		n := DefaultPool
		t.Pool = &n
	case *t.Pool < 0 || *t.Pool > MaxPool:
		v.errorf(at("terminal", "pool"), "pool must be between 0 (no pool) and %d, got %d", MaxPool, *t.Pool)
	}
	v.checkMounts(t, at, baseDir, v.own)
	for i, name := range t.EnvPassthrough {
		if !envNamePatern().MatchString(name) {
			v.errorf(at("terminal", "env_passthrough", strconv.Itoa(i)), "invalid environment variable name %q", name)
		}
	}

	if p.Secrets.EnvFile != "" {
		p.Secrets.EnvFile = absPath(p.Secrets.EnvFile, baseDir)
		p.Secrets.envFileLine = v.lineOf(at("secrets", "env_file")...)
	}
	for name := range p.Secrets.Values {
		if !envNamePatern().MatchString(name) {
			v.errorf(at("secrets", "values", name), "invalid secret name %q (letters, digits and '_', not starting with a digit)", name)
		}
	}

	a := &p.Approvals
	if a.Mode == "" {
		a.Mode = ModeManual
	}
	if a.Timeout == 0 {
		a.Timeout = Duration(DefaultApprovalTimeout)
	}
	if a.CronMode == "" {
		a.CronMode = UnattendedDeny
	}
	if a.UnattendedMode == "" {
		a.UnattendedMode = UnattendedDeny
	}
	for i, g := range a.CommandAllowlist {
		if err := CheckGlob(g); err != nil {
			v.errorf(at("approvals", "command_allowlist", strconv.Itoa(i)), "command_allowlist entry: %v", err)
		}
	}
	for i, g := range a.Deny {
		if err := CheckGlob(g); err != nil {
			v.errorf(at("approvals", "deny", strconv.Itoa(i)), "deny entry: %v", err)
		}
	}
	for i, g := range a.Ask {
		if err := CheckGlob(g); err != nil {
			v.errorf(at("approvals", "ask", strconv.Itoa(i)), "ask entry: %v", err)
		}
	}
	s := &a.Smart
	if s.Timeout == 0 {
		s.Timeout = Duration(DefaultSmartTimeout)
	}
	if s.MaxDenials < 0 {
		v.errorf(at("approvals", "smart", "max_denials"), "smart.max_denials must not be negative")
	} else if s.MaxDenials == 0 {
		s.MaxDenials = DefaultSmartMaxDenials
	}
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(at("approvals", "smart", "endpoint"), "invalid smart.endpoint %q (want an http(s) URL)", s.Endpoint)
		}
	}
	if s.KeySecret != "" && !envNamePatern().MatchString(s.KeySecret) {
		v.errorf(at("approvals", "smart", "key_secret"), "invalid smart.key_secret %q (a secret name)", s.KeySecret)
	}
	if w := a.Webhook; w.URL != "" {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(at("approvals", "webhook", "url"), "invalid webhook.url %q (want an http(s) URL)", w.URL)
		}
	}
	if a.Webhook.TokenSecret != "" && !envNamePatern().MatchString(a.Webhook.TokenSecret) {
		v.errorf(at("approvals", "webhook", "token_secret"), "invalid webhook.token_secret %q (a secret name)", a.Webhook.TokenSecret)
	}
	if a.Webhook.TokenSecret != "" && a.Webhook.URL == "" {
		v.errorf(at("approvals", "webhook", "token_secret"), "webhook.token_secret without webhook.url")
	}
	if a.Mode == ModeSmart && (s.Endpoint == "" || s.Model == "") {
		v.errorf(at("approvals", "mode"), "mode: smart needs approvals.smart.endpoint and approvals.smart.model")
	}

	for _, list := range []struct {
		key   string
		names []string
	}{{"enabled_toolsets", p.EnabledToolsets}, {"disabled_toolsets", p.DisabledToolsets}} {
		for i, n := range list.names {
			if !ValidName(n) {
				v.errorf(at(list.key, strconv.Itoa(i)), "invalid toolset name %q", n)
			}
		}
	}
	v.checkFiles(&p.Files, at)
	g := p.Guardrails
	for _, th := range []struct {
		key string
		t   Threshold
	}{{"identical_failures", g.IdenticalFailures}, {"tool_failures", g.ToolFailures}, {"no_progress", g.NoProgress}} {
		t := th.t
		switch {
		case t.Warn < 0 || t.Block < 0 || t.Halt < 0:
			v.errorf(at("guardrails", th.key), "guardrails.%s: counts must not be negative", th.key)
		case (t.Warn > 0 && t.Block > 0 && t.Warn > t.Block) || (t.Block > 0 && t.Halt > 0 && t.Block > t.Halt) || (t.Warn > 0 && t.Halt > 0 && t.Warn > t.Halt):
			v.errorf(at("guardrails", th.key), "guardrails.%s: want warn <= block <= halt (got %d/%d/%d)", th.key, t.Warn, t.Block, t.Halt)
		}
	}
	if g.InvalidBatches < 0 {
		v.errorf(at("guardrails", "invalid_batches"), "guardrails.invalid_batches must not be negative")
	}
	if p.Mandate.InteractiveViolation == "" {
		p.Mandate.InteractiveViolation = ViolationBlock
	}
}

// CheckGlob reports whether g is a usable allowlist or deny glob: not empty
// and no dangling escape.
func CheckGlob(g string) error {
	if strings.TrimSpace(g) == "" {
		return fmt.Errorf("empty pattern")
	}
	if strings.HasSuffix(g, `\`) && !strings.HasSuffix(g, `\\`) {
		return fmt.Errorf("pattern %q ends with an unfinished escape", g)
	}
	return nil
}

var hostPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)
})

// checkHostPattern validates a network allow/deny entry.
func checkHostPattern(h string) error {
	host := h
	if hh, port, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("invalid port in network entry %q", h)
		}
		host = hh
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if _, _, err := net.ParseCIDR(host); err == nil {
		return nil
	}
	if !hostPattern().MatchString(host) {
		return fmt.Errorf("invalid network entry %q (want a host, *.domain, IP or CIDR, optionally :port)", h)
	}
	return nil
}

// absPath expands a leading "~/" and makes p absolute against base.
func absPath(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// EnvStateDir overrides state_dir (the same variable package mandate reads).
const EnvStateDir = "TETHER_STATE_DIR"

// defaultStateDir follows mandate.StateDir: /var/lib/tether for root, else
// $XDG_STATE_HOME/tether, else ~/.local/state/tether.
func defaultStateDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/tether"
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "tether")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "tether")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tether-%d", os.Getuid()))
}

// checkProxyLimits checks the egress proxy's limits: only for mode proxy,
// never negative, and a connect timeout of at least a millisecond (a
// smaller one could never connect).
func (v *validator) checkProxyLimits(n Network, path []string) {
	at := func(key string) []string { return append(append([]string{}, path...), key) }
	set := n.MaxConnections != 0 || n.MaxBytes != 0 || n.ConnectTimeout != 0 || n.IdleTimeout != 0
	if set && n.Mode != NetworkProxy {
		v.errorf(path, "max_connections, max_bytes, connect_timeout and idle_timeout need mode: proxy (mode is %s)", n.Mode)
	}
	for _, c := range []struct {
		key string
		bad bool
	}{
		{"max_connections", n.MaxConnections < 0},
		{"max_bytes", n.MaxBytes < 0},
		{"connect_timeout", n.ConnectTimeout < 0 || (n.ConnectTimeout > 0 && n.ConnectTimeout.D() < time.Millisecond)},
		{"idle_timeout", n.IdleTimeout < 0 || (n.IdleTimeout > 0 && n.IdleTimeout.D() < time.Millisecond)},
	} {
		if c.bad {
			v.errorf(at(c.key), "network.%s must be 0 (the default) or positive (durations at least 1ms)", c.key)
		}
	}
}
