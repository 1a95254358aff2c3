package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
)

// ProjectFile is the name of the per-project configuration in a workspace.
// It is on the protected-path list: no sandboxed command or file tool can
// create, change or remove it.
const ProjectFile = ".tether.yaml"

// MaxProjectSize caps a project file.
const MaxProjectSize = 256 << 10

// ErrWidening is returned (inside an *InvalidError) for a project file
// that tries to allow more than the user's profile.
var ErrWidening = errors.New("a project file may only narrow the profile")

// LayerProject returns p narrowed by the project file of workspace
// (workspace/.tether.yaml), or p itself when there is none. The file has a
// profile's keys, but only those that can narrow are accepted, each only
// in the narrowing direction (ProjectKeys):
//
//   - lists of restrictions are added to (approvals.deny, approvals.ask,
//     files.deny, files.ask, disabled_toolsets, terminal.network.deny);
//   - lists of permissions may only shrink (enabled_toolsets,
//     terminal.env_passthrough, terminal.mounts, whose entries must be the
//     profile's and may turn rw into ro, terminal.network.allow);
//   - levels may only tighten (approvals.mode off → smart → manual;
//     cron_mode and unattended_mode to deny; files.secret_files allow → ask
//     → deny; terminal.network.mode host → proxy → none; terminal.backend to
//     sandbox);
//   - limits and approvals.timeout may only be lowered.
//
// Anything else (cwd, rootfs, secrets, command_allowlist, smart, webhook,
// persist_cwd, proxy limits, mandate …) is refused, and so is every widening value:
// the error is an *InvalidError naming file:line and what was refused
// (errors.Is(err, ErrWidening)), and the caller must refuse the call — a
// project file that cannot be applied is never ignored. p is not modified.
func LayerProject(p *Profile, workspace string) (*Profile, error) {
	if p == nil || workspace == "" {
		return p, nil
	}
	name := filepath.Join(workspace, ProjectFile)
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: name, Msg: err.Error(), err: err}}}
	}
	defer f.Close()
	// The exec gate layers the file on every exec of a build: the result
	// is kept for the object as it is now (identity, size, times, read
	// from the descriptor the data comes from).
	key, keyed := projectKeyOf(f, name, p)
	if keyed {
		if r, ok := projectCache.get(key); ok {
			return r.p, r.err
		}
	}
	out, err := layerFrom(f, name, p, workspace)
	if keyed {
		projectCache.put(key, projectResult{out, err})
	}
	return out, err
}

func layerFrom(f *os.File, name string, p *Profile, workspace string) (*Profile, error) {
	data, err := readProject(f, name)
	if err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: name, Msg: err.Error(), err: err}}}
	}
	return ParseProject(name, data, p, workspace)
}

// projectKey identifies a project file's content for one user profile.
type projectKey struct {
	name         string
	user         *Profile
	dev, ino     uint64
	size         int64
	mtime, ctime syscall.Timespec
}

type projectResult struct {
	p   *Profile
	err error
}

// projectResults caches LayerProject's results. Safe for concurrent use.
type projectResults struct {
	mu sync.Mutex
	m  map[projectKey]projectResult // guarded by mu
}

var projectCache projectResults

func (c *projectResults) get(k projectKey) (projectResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	return r, ok
}

func (c *projectResults) put(k projectKey, r projectResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 256 {
		c.m = map[projectKey]projectResult{}
	}
	c.m[k] = r
}

func projectKeyOf(f *os.File, name string, p *Profile) (projectKey, bool) {
	fi, err := f.Stat()
	if err != nil {
		return projectKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return projectKey{}, false
	}
	return projectKey{name: name, user: p, dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}, true
}

// readProject reads a project file: a regular file (a FIFO or device is
// refused without blocking) of at most MaxProjectSize bytes. Its owner
// does not matter: it can only narrow.
func readProject(f *os.File, name string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the project file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w %s: it is not a regular file (%v)", ErrUntrustedFile, name, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProjectSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the project file: %w", err)
	}
	if len(data) > MaxProjectSize {
		return nil, fmt.Errorf("%w %s: it is over %d bytes", ErrUntrustedFile, name, MaxProjectSize)
	}
	return data, nil
}

// ParseProject applies the project file text data (named name, in
// workspace) to the user's profile p; see LayerProject.
func ParseProject(name string, data []byte, p *Profile, workspace string) (*Profile, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	var proj Profile
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&proj); err != nil && !errors.Is(err, io.EOF) {
			return nil, yamlError(name, err)
		}
	}
	v := &validator{file: name, root: &root}
	out := cloneProfile(p)
	keys := setKeys(&root)
	for _, key := range keys {
		rule, ok := projectRule(key)
		if !ok {
			v.widen(key, "%s cannot be set in a project file: it could allow more than the profile does (a project file may set: %s)",
				key, strings.Join(ProjectKeys(), ", "))
			continue
		}
		rule(v, key, p, &proj, out, workspace)
	}
	if len(v.problems) > 0 {
		sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Line < v.problems[j].Line })
		return nil, &InvalidError{Problems: v.problems}
	}
	n := &out.Terminal.Network
	if p.Terminal.Network.Mode == NetworkHost && n.Mode == NetworkProxy && !slices.Contains(keys, "terminal.network.allow") {
		n.Allow = nil // host → proxy with no allow list: nothing is allowed
	}
	if n.Mode != NetworkProxy && (len(n.Allow) > 0 || len(n.Deny) > 0) {
		if n.Mode == NetworkNone && !slices.Contains(keys, "terminal.network.allow") && !slices.Contains(keys, "terminal.network.deny") {
			n.Allow, n.Deny = nil, nil // none: the lists no longer apply
		} else {
			return nil, &InvalidError{Problems: []Problem{{File: name, Line: v.lineOf("terminal", "network"),
				Msg: fmt.Sprintf("terminal.network allow/deny lists need mode: proxy (the mode is %s)", n.Mode)}}}
		}
	}
	if l := out.Terminal.Limits; l.SandboxMemory > l.Memory || l.SandboxPids > l.Pids {
		return nil, &InvalidError{Problems: []Problem{{File: name, Line: v.lineOf("terminal", "limits"),
			Msg: "terminal.limits: sandbox_memory and sandbox_pids must not exceed memory and pids (lower them together)"}}}
	}
	return out, nil
}

// widen records a refused key of a project file.
func (v *validator) widen(key, format string, args ...any) {
	v.problems = append(v.problems, Problem{File: v.file, Line: v.lineOf(strings.Split(key, ".")...),
		Msg: fmt.Sprintf(format, args...), err: ErrWidening})
}

// setKeys returns the dotted keys a YAML document sets, down to the keys
// ProjectKeys names (a list or a scalar is one key).
func setKeys(root *yaml.Node) []string {
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	var out []string
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			out = append(out, prefix)
			return
		}
		if _, leaf := projectRule(prefix); leaf && prefix != "" {
			out = append(out, prefix)
			return
		}
		if len(n.Content) == 0 && prefix != "" {
			out = append(out, prefix)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if prefix != "" {
				k = prefix + "." + k
			}
			walk(n.Content[i+1], k)
		}
	}
	if n.Kind == yaml.MappingNode {
		walk(n, "")
	}
	return out
}

type projectFunc func(v *validator, key string, user, proj, out *Profile, workspace string)

// projectRules are the keys a project file may set, each with its check
// and how it narrows the profile. Built on first use, not at init (see
// unknownField).
var projectRules = sync.OnceValue(buildProjectRules)

func buildProjectRules() map[string]projectFunc {
	rules := map[string]projectFunc{
		"approvals.deny": func(v *validator, key string, user, proj, out *Profile, _ string) {
			addGlobs(v, key, proj.Approvals.Deny, &out.Approvals.Deny, CheckGlob)
		},
		"approvals.ask": func(v *validator, key string, user, proj, out *Profile, _ string) {
			addGlobs(v, key, proj.Approvals.Ask, &out.Approvals.Ask, CheckGlob)
		},
		"files.deny": func(v *validator, key string, user, proj, out *Profile, _ string) {
			addGlobs(v, key, proj.Files.Deny, &out.Files.Deny, CheckPathGlob)
		},
		"files.ask": func(v *validator, key string, user, proj, out *Profile, _ string) {
			addGlobs(v, key, proj.Files.Ask, &out.Files.Ask, CheckPathGlob)
		},
		"disabled_toolsets": func(v *validator, key string, user, proj, out *Profile, _ string) {
			out.DisabledToolsets = append(out.DisabledToolsets, proj.DisabledToolsets...)
		},
		"terminal.network.deny": func(v *validator, key string, user, proj, out *Profile, _ string) {
			addGlobs(v, key, proj.Terminal.Network.Deny, &out.Terminal.Network.Deny, checkHostPattern)
		},
		"enabled_toolsets": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if len(user.EnabledToolsets) > 0 {
				for _, t := range proj.EnabledToolsets {
					if !slices.Contains(user.EnabledToolsets, t) {
						v.widen(key, "enabled_toolsets: %q is not enabled by the profile (%s); a project file may only enable fewer", t, strings.Join(user.EnabledToolsets, ", "))
					}
				}
			}
			if len(proj.EnabledToolsets) == 0 {
				v.widen(key, "enabled_toolsets: an empty list means the default toolsets, which may be more than the profile's; list the ones to keep")
				return
			}
			out.EnabledToolsets = proj.EnabledToolsets
		},
		"terminal.env_passthrough": func(v *validator, key string, user, proj, out *Profile, _ string) {
			for _, e := range proj.Terminal.EnvPassthrough {
				if !slices.Contains(user.Terminal.EnvPassthrough, e) {
					v.widen(key, "terminal.env_passthrough: %s is not passed through by the profile; a project file may only pass fewer", e)
				}
			}
			out.Terminal.EnvPassthrough = proj.Terminal.EnvPassthrough
		},
		"terminal.mounts": func(v *validator, key string, user, proj, out *Profile, ws string) {
			var kept []Mount
			for _, m := range proj.Terminal.Mounts {
				if m.Path == "" {
					v.widen(key, "terminal.mounts: an entry has no path")
					continue
				}
				path := absPath(m.Path, ws)
				i := slices.IndexFunc(user.Terminal.Mounts, func(u Mount) bool { return u.Path == path })
				if i < 0 {
					v.widen(key, "terminal.mounts: %s is not a mount of the profile; a project file may only keep fewer", path)
					continue
				}
				mode := m.Mode
				if mode == "" {
					mode = MountRO
				}
				if mode != MountRO && mode != MountRW {
					v.widen(key, "terminal.mounts: invalid mode %q (want ro or rw)", m.Mode)
					continue
				}
				if mode == MountRW && user.Terminal.Mounts[i].Mode != MountRW {
					v.widen(key, "terminal.mounts: %s is read-only in the profile; a project file cannot make it writable", path)
					continue
				}
				kept = append(kept, Mount{Path: path, Mode: mode})
			}
			out.Terminal.Mounts = kept
		},
		"terminal.network.allow": func(v *validator, key string, user, proj, out *Profile, _ string) {
			for _, h := range proj.Terminal.Network.Allow {
				if err := checkHostPattern(h); err != nil {
					v.widen(key, "%v", err)
				} else if user.Terminal.Network.Mode != NetworkHost && !slices.Contains(user.Terminal.Network.Allow, h) {
					v.widen(key, "terminal.network.allow: %s is not allowed by the profile; a project file may only allow fewer hosts", h)
				}
			}
			out.Terminal.Network.Allow = proj.Terminal.Network.Allow
		},
		"terminal.network.mode": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if tighten(v, key, string(user.Terminal.Network.Mode), string(proj.Terminal.Network.Mode), "none", "proxy", "host") {
				out.Terminal.Network.Mode = proj.Terminal.Network.Mode
			}
		},
		"terminal.backend": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if proj.Terminal.Backend != BackendSandbox {
				v.widen(key, "terminal.backend: a project file may only set sandbox")
				return
			}
			out.Terminal.Backend = BackendSandbox
		},
		"approvals.mode": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if tighten(v, key, string(user.Approvals.Mode), string(proj.Approvals.Mode), "manual", "smart", "off") {
				out.Approvals.Mode = proj.Approvals.Mode
			}
		},
		"approvals.cron_mode": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if tighten(v, key, string(user.Approvals.CronMode), string(proj.Approvals.CronMode), "deny", "approve") {
				out.Approvals.CronMode = proj.Approvals.CronMode
			}
		},
		"approvals.unattended_mode": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if tighten(v, key, string(user.Approvals.UnattendedMode), string(proj.Approvals.UnattendedMode), "deny", "approve") {
				out.Approvals.UnattendedMode = proj.Approvals.UnattendedMode
			}
		},
		"files.secret_files": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if tighten(v, key, string(user.Files.SecretFiles), string(proj.Files.SecretFiles), "deny", "ask", "allow") {
				out.Files.SecretFiles = proj.Files.SecretFiles
			}
		},
		"approvals.timeout": func(v *validator, key string, user, proj, out *Profile, _ string) {
			if lower(v, key, int64(user.Approvals.Timeout), int64(proj.Approvals.Timeout), false, durationText) {
				out.Approvals.Timeout = proj.Approvals.Timeout
			}
		},
	}
	limit := func(get func(*Limits) *int64, unlimitedZero bool, show func(int64) string) projectFunc {
		return func(v *validator, key string, user, proj, out *Profile, _ string) {
			if lower(v, key, *get(&user.Terminal.Limits), *get(&proj.Terminal.Limits), unlimitedZero, show) {
				*get(&out.Terminal.Limits) = *get(&proj.Terminal.Limits)
			}
		}
	}
	bytesText := func(n int64) string { return strconv.FormatInt(n, 10) + " bytes" }
	count := func(n int64) string { return strconv.FormatInt(n, 10) }
	rules["terminal.limits.memory"] = limit(func(l *Limits) *int64 { return (*int64)(&l.Memory) }, false, bytesText)
	rules["terminal.limits.sandbox_memory"] = limit(func(l *Limits) *int64 { return (*int64)(&l.SandboxMemory) }, false, bytesText)
	rules["terminal.limits.output"] = limit(func(l *Limits) *int64 { return (*int64)(&l.Output) }, false, bytesText)
	rules["terminal.limits.tmpfs"] = limit(func(l *Limits) *int64 { return (*int64)(&l.Tmpfs) }, false, bytesText)
	rules["terminal.limits.disk"] = limit(func(l *Limits) *int64 { return (*int64)(&l.Disk) }, true, bytesText)
	rules["terminal.limits.timeout"] = limit(func(l *Limits) *int64 { return (*int64)(&l.Timeout) }, false, durationText)
	rules["terminal.limits.pids"] = intLimit(func(l *Limits) *int { return &l.Pids }, count)
	rules["terminal.limits.sandbox_pids"] = intLimit(func(l *Limits) *int { return &l.SandboxPids }, count)
	rules["terminal.limits.cpus"] = func(v *validator, key string, user, proj, out *Profile, _ string) {
		if u, p := user.Terminal.Limits.CPUs, proj.Terminal.Limits.CPUs; p <= 0 || p > u {
			v.widen(key, "%s: %g is not lower than the profile's %g; a project file may only lower limits", key, p, u)
			return
		}
		out.Terminal.Limits.CPUs = proj.Terminal.Limits.CPUs
	}
	return rules
}

func intLimit(get func(*Limits) *int, show func(int64) string) projectFunc {
	return func(v *validator, key string, user, proj, out *Profile, _ string) {
		if lower(v, key, int64(*get(&user.Terminal.Limits)), int64(*get(&proj.Terminal.Limits)), false, show) {
			*get(&out.Terminal.Limits) = *get(&proj.Terminal.Limits)
		}
	}
}

func durationText(n int64) string { return time.Duration(n).String() }

// projectRule returns the rule of a project file key.
func projectRule(key string) (projectFunc, bool) {
	f, ok := projectRules()[key]
	return f, ok
}

// ProjectKeys returns the keys a project file may set, sorted.
func ProjectKeys() []string {
	rules := projectRules()
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tighten reports whether proj is at least as strict as user on the scale
// levels (strictest first), recording a problem otherwise.
func tighten(v *validator, key, user, proj string, levels ...string) bool {
	pi, ui := slices.Index(levels, proj), slices.Index(levels, user)
	switch {
	case pi < 0:
		v.widen(key, "%s: invalid value %q (want one of %s)", key, proj, strings.Join(levels, ", "))
		return false
	case ui >= 0 && pi > ui:
		v.widen(key, "%s: %s would allow more than the profile's %s; a project file may only tighten it (to %s)",
			key, proj, user, strings.Join(levels[:ui+1], " or "))
		return false
	}
	return true
}

// lower reports whether proj is a positive value no higher than user (any
// positive value when user is 0 and unlimitedZero: no limit), recording a
// problem otherwise.
func lower(v *validator, key string, user, proj int64, unlimitedZero bool, show func(int64) string) bool {
	if proj <= 0 {
		v.widen(key, "%s: a project file may only lower a limit to a positive value (the profile's is %s)", key, show(user))
		return false
	}
	if proj > user && !(unlimitedZero && user == 0) {
		v.widen(key, "%s: %s is higher than the profile's %s; a project file may only lower limits", key, show(proj), show(user))
		return false
	}
	return true
}

// addGlobs appends the project's entries to a restriction list, checking
// each.
func addGlobs(v *validator, key string, add []string, to *[]string, check func(string) error) {
	for i, g := range add {
		if err := check(g); err != nil {
			v.problems = append(v.problems, Problem{File: v.file, Line: v.lineOf(append(strings.Split(key, "."), strconv.Itoa(i))...),
				Msg: fmt.Sprintf("%s entry: %v", key, err)})
			continue
		}
		*to = append(*to, g)
	}
}

// cloneProfile copies p deeply enough that narrowing the copy leaves p
// unchanged.
func cloneProfile(p *Profile) *Profile {
	c := *p
	c.EnabledToolsets = slices.Clone(p.EnabledToolsets)
	c.DisabledToolsets = slices.Clone(p.DisabledToolsets)
	c.Terminal.EnvPassthrough = slices.Clone(p.Terminal.EnvPassthrough)
	c.Terminal.Mounts = slices.Clone(p.Terminal.Mounts)
	c.Terminal.Network.Allow = slices.Clone(p.Terminal.Network.Allow)
	c.Terminal.Network.Deny = slices.Clone(p.Terminal.Network.Deny)
	c.Approvals.Deny = slices.Clone(p.Approvals.Deny)
	c.Approvals.Ask = slices.Clone(p.Approvals.Ask)
	c.Approvals.CommandAllowlist = slices.Clone(p.Approvals.CommandAllowlist)
	c.Files.Deny = slices.Clone(p.Files.Deny)
	c.Files.Ask = slices.Clone(p.Files.Ask)
	return &c
}
