package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tether-dev/tether/internal/protect"
	"github.com/tether-dev/tether/rootfs"
)

// Network is the network mode of a sandbox.
type Network string

const (
	// NetworkNone gives the sandbox its own network namespace with only a
	// loopback interface: no route to the host or the outside. The default.
	NetworkNone Network = "none"
	// NetworkHost shares the host's network namespace. Allowed only when the
	// profile explicitly asks (Config.AllowHostNetwork).
	NetworkHost Network = "host"
)

// SeccompMode says whether the seccomp filter must, may or must not be applied.
type SeccompMode string

const (
	// SeccompRequired refuses to run when the binary was built without
	// seccomp support (the default: fail closed).
	SeccompRequired SeccompMode = "required"
	// SeccompOptional applies the filter when available and runs without
	// it otherwise (the Result's NotEnforced says so).
	SeccompOptional SeccompMode = "optional"
	// SeccompOff runs without a seccomp filter.
	SeccompOff SeccompMode = "off"
)

// DefaultTmpfsBytes is the size of the sandbox's /tmp when Limits.TmpfsBytes is zero.
const DefaultTmpfsBytes = 64 << 20

// DefaultHostname is the sandbox's hostname when Config.Hostname is empty.
const DefaultHostname = "tether"

// DefaultEnv is the environment of a command when Config.Env is nil.
var DefaultEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/tmp",
	"LANG=C.UTF-8",
}

// Bind is an extra host path made visible in the sandbox.
type Bind struct {
	// Source is the absolute host path.
	Source string `json:"source"`
	// Destination is the absolute path inside the sandbox; empty means Source.
	Destination string `json:"destination,omitempty"`
	// ReadOnly mounts the bind read-only.
	ReadOnly bool `json:"read_only,omitempty"`
	// Scratch marks a writable directory that nothing on the host trusts
	// or runs afterwards (a test harness's throwaway tree): it is not
	// frozen like a workspace (no walk for repositories, no reservations,
	// no creation gate on its account). tether's configuration never sets
	// it: binds from terminal.mounts are frozen.
	Scratch bool `json:"scratch,omitempty"`
}

// Limits bound what one command may use. A zero field means "no limit",
// except TmpfsBytes, whose zero value means DefaultTmpfsBytes.
type Limits struct {
	// MemoryBytes caps the memory (RSS plus page cache, tmpfs included) of
	// all processes of the command; exceeding it OOM-kills a process.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Pids caps the number of processes and threads alive at once.
	Pids int64 `json:"pids,omitempty"`
	// CPUs caps CPU bandwidth in cores (1.5 = one and a half cores).
	CPUs float64 `json:"cpus,omitempty"`
	// Timeout is the wall-clock limit; on expiry the command gets SIGTERM,
	// a grace period, then SIGKILL.
	Timeout time.Duration `json:"timeout,omitempty"`
	// OutputBytes caps stdout and stderr together; the rest is discarded
	// and Result.OutputTruncated is set.
	OutputBytes int64 `json:"output_bytes,omitempty"`
	// TmpfsBytes is the size of the sandbox's /tmp.
	TmpfsBytes int64 `json:"tmpfs_bytes,omitempty"`
	// DiskBytes caps what may be added to the workspace while the command
	// (or the session) runs, through a project quota on the workspace's
	// filesystem (disk_linux.go); sandboxes of one workspace running at
	// once share it. Where the filesystem has no project quota it is
	// listed in Result.NotEnforced as "disk". Reaching it sets
	// Result.DiskLimitHit.
	DiskBytes int64 `json:"disk_bytes,omitempty"`
}

// Config is the plain-data description of one sandbox. It holds no open
// resources; Libcontainer translates it and Run executes it. The zero value
// is a valid config: host root layout, no workspace, cwd "/", DefaultEnv,
// no network, a one-id user namespace, no limits except a
// DefaultTmpfsBytes /tmp, seccomp required, hostname DefaultHostname.
type Config struct {
	// Rootfs is the root filesystem layout; the zero value is the host
	// layout, probed when the sandbox starts.
	Rootfs rootfs.Layout `json:"rootfs"`
	// Workspace is an absolute host directory bound read-write into the
	// sandbox at WorkspaceMount. Empty means no workspace.
	Workspace string `json:"workspace,omitempty"`
	// WorkspaceMount is where the workspace appears inside the sandbox;
	// empty means the same path as on the host.
	WorkspaceMount string `json:"workspace_mount,omitempty"`
	// Binds are extra host paths made visible in the sandbox.
	Binds []Bind `json:"binds,omitempty"`
	// Env is the command's environment ("KEY=value"); nil means DefaultEnv.
	Env []string `json:"env,omitempty"`
	// Cwd is the absolute working directory inside the sandbox; empty means
	// the workspace mount point when there is a workspace, "/" otherwise.
	Cwd string `json:"cwd,omitempty"`
	// UserNS is ignored: every sandbox runs in its own user namespace
	// whose only id, container root, is an unprivileged host id, and the
	// workspace is shown through an idmapped mount as its owner's
	// (docs/workspace.md). Kept so that configs and callers that set it
	// still build.
	//
	// Deprecated: always on.
	UserNS bool `json:"userns,omitempty"`
	// Hide are tether's own configuration and state (absolute host
	// paths). Those inside the workspace are hidden in the sandbox: an
	// empty read-only directory or file is mounted over each (a missing
	// one is made first, as an empty 0700 directory: tether may be about to
	// create it), and the directories on the way cannot be renamed. A
	// workspace inside one of them is refused (ErrUnsafeWorkspace), and so
	// is one holding any when tether runs without root. The runner's state
	// root is always hidden this way.
	Hide []string `json:"hide,omitempty"`
	// Network is the network mode; empty means NetworkNone.
	Network Network `json:"network,omitempty"`
	// AllowHostNetwork must be set (by the profile) for Network to be NetworkHost.
	AllowHostNetwork bool `json:"allow_host_network,omitempty"`
	// NetNSPath is the network namespace a NetworkProxy sandbox joins
	// (egress.Namespace.Path); empty for the other modes.
	NetNSPath string `json:"netns_path,omitempty"`
	// Limits bound the command's resources.
	Limits Limits `json:"limits"`
	// Seccomp is the seccomp mode; empty means SeccompRequired.
	Seccomp SeccompMode `json:"seccomp,omitempty"`
	// Hostname is the sandbox's hostname; empty means DefaultHostname.
	Hostname string `json:"hostname,omitempty"`
	// Landlock, when set, confines every process of the sandbox with a
	// Landlock ruleset (see Landlock); nil confines nothing.
	Landlock *Landlock `json:"landlock,omitempty"`
	// Observe makes the exec gate record, besides every exec, the files
	// the sandbox's processes open in the workspace and the binds, and the
	// connections they make (Result.Accesses): the runtime evidence of a
	// job whose mandate is observing. It needs an ExecGate (Runner's or
	// Sessions'), and costs a round trip to tether per open and connect,
	// so only observed sandboxes have it.
	Observe bool `json:"observe,omitempty"`
	// NoExec are programs of the sandbox's read-only system tree that no
	// process of it may run: absolute paths inside the sandbox. Each one
	// that is a regular file of the root layout (the host layout's binds,
	// or a prepared root) is bound onto itself read-only and noexec, so
	// the kernel refuses to execute it (EACCES) or map it executable,
	// whatever name reached it: a symlink swapped between the exec gate's
	// check and the kernel's own look-up lands there (docs/exec-gate.md).
	// Symbolic links (a multi-call program behind them has other uses)
	// and paths outside the tree are left out. The runner lists the files
	// of the programs its hardline floor refuses outright.
	NoExec []string `json:"no_exec,omitempty"`
}

// Validate reports the first problem with the config as an error wrapping
// ErrInvalidConfig. It does not touch the filesystem.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if err := c.Rootfs.Validate(); err != nil {
		return bad("rootfs: %v", err)
	}
	if c.Workspace != "" {
		if err := absPath("workspace", c.Workspace); err != nil {
			return bad("%v", err)
		}
		if c.Workspace == "/" {
			return bad("workspace must not be / (bind a project directory)")
		}
	}
	if c.WorkspaceMount != "" {
		if c.Workspace == "" {
			return bad("workspace mount %q given without a workspace", c.WorkspaceMount)
		}
		if err := absPath("workspace mount", c.WorkspaceMount); err != nil {
			return bad("%v", err)
		}
		if err := notReserved(c.WorkspaceMount); err != nil {
			return bad("workspace mount: %v", err)
		}
	} else if c.Workspace != "" {
		if err := notReserved(c.Workspace); err != nil {
			return bad("workspace: %v", err)
		}
	}
	for i, h := range c.Hide {
		if err := absPath(fmt.Sprintf("hidden path %d", i), h); err != nil {
			return bad("%v", err)
		}
	}
	for i, p := range c.NoExec {
		if err := absPath(fmt.Sprintf("no-exec path %d", i), p); err != nil {
			return bad("%v", err)
		}
	}
	for i, b := range c.Binds {
		if err := absPath(fmt.Sprintf("bind %d source", i), b.Source); err != nil {
			return bad("%v", err)
		}
		if b.Destination != "" {
			if err := absPath(fmt.Sprintf("bind %d destination", i), b.Destination); err != nil {
				return bad("%v", err)
			}
		}
		if err := notReserved(b.dest()); err != nil {
			return bad("bind %d: %v", i, err)
		}
		if err := c.bindApart(b); err != nil {
			return bad("bind %d: %v", i, err)
		}
	}
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			return bad("environment entry %q is not KEY=value", kv)
		}
	}
	if c.Cwd != "" {
		if err := absPath("cwd", c.Cwd); err != nil {
			return bad("%v", err)
		}
	}
	switch c.Network {
	case "", NetworkNone:
	case NetworkHost:
		if !c.AllowHostNetwork {
			return bad("network host is not allowed by this profile (use network none, or allow host network in the profile)")
		}
	case NetworkProxy:
	default:
		return bad("unknown network mode %q (want none, host or proxy)", c.Network)
	}
	if err := c.validateProxyNetwork(); err != nil {
		return bad("%v", err)
	}
	l := c.Limits
	switch {
	case l.MemoryBytes < 0:
		return bad("negative memory limit %d", l.MemoryBytes)
	case l.MemoryBytes > 0 && l.MemoryBytes < 4<<20:
		return bad("memory limit %d bytes is below the 4 MiB minimum", l.MemoryBytes)
	case l.Pids < 0:
		return bad("negative pids limit %d", l.Pids)
	case l.Pids > 0 && l.Pids < 2:
		return bad("pids limit %d is below the minimum of 2", l.Pids)
	case l.CPUs < 0 || l.CPUs != l.CPUs:
		return bad("invalid cpus limit %v", l.CPUs)
	case l.CPUs > 0 && l.CPUs < 0.01:
		return bad("cpus limit %v is below the minimum of 0.01", l.CPUs)
	case l.Timeout < 0:
		return bad("negative timeout %s", l.Timeout)
	case l.OutputBytes < 0:
		return bad("negative output limit %d", l.OutputBytes)
	case l.TmpfsBytes < 0:
		return bad("negative tmpfs size %d", l.TmpfsBytes)
	case l.DiskBytes < 0:
		return bad("negative disk limit %d", l.DiskBytes)
	case l.DiskBytes > 0 && c.Workspace == "":
		return bad("a disk limit needs a workspace")
	}
	switch c.Seccomp {
	case "", SeccompRequired, SeccompOptional, SeccompOff:
	default:
		return bad("unknown seccomp mode %q (want required, optional or off)", c.Seccomp)
	}
	if c.Hostname != "" && (len(c.Hostname) > 64 || strings.ContainsAny(c.Hostname, "/ \x00\n")) {
		return bad("invalid hostname %q", c.Hostname)
	}
	return nil
}

// denyFilter reports whether the sandbox has its seccomp filter (Spec),
// which with the capabilities dockerCaps refuses every way to change a
// process's root: chroot, pivot_root, setns, mount and new namespaces.
func (c Config) denyFilter() bool { return c.Seccomp != SeccompOff && seccompAvailable }

// workspaceMount returns where the workspace appears inside the sandbox.
func (c Config) workspaceMount() string {
	if c.WorkspaceMount != "" {
		return c.WorkspaceMount
	}
	return c.Workspace
}

// cwd returns the effective working directory inside the sandbox.
func (c Config) cwd() string {
	switch {
	case c.Cwd != "":
		return c.Cwd
	case c.Workspace != "":
		return c.workspaceMount()
	default:
		return "/"
	}
}

// env returns the effective environment.
func (c Config) env() []string {
	if c.Env == nil {
		return DefaultEnv
	}
	return c.Env
}

// sharedDirs are the directories inside the sandbox that show the host's
// files: the workspace's mount point and the binds' destinations. They
// are where observation records files.
func (c Config) sharedDirs() []string {
	var out []string
	if c.Workspace != "" {
		out = append(out, filepath.Clean(c.workspaceMount()))
	}
	for _, b := range c.Binds {
		out = append(out, filepath.Clean(b.dest()))
	}
	return out
}

func (b Bind) dest() string {
	if b.Destination != "" {
		return b.Destination
	}
	return b.Source
}

func absPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q must be an absolute path", what, p)
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("%s contains a NUL byte", what)
	}
	return nil
}

// reserved are mount points the sandbox itself owns; a bind on or under them
// would undo its protections (a writable /proc, a host /dev). Binds under
// /tmp are fine (mounted over the sandbox's tmpfs); /tmp itself is not.
var reserved = []string{"/", "/proc", "/sys", "/dev", "/tmp"}

func notReserved(p string) error {
	clean := filepath.Clean(p)
	for _, r := range reserved {
		under := r != "/" && r != "/tmp" && strings.HasPrefix(clean, r+"/")
		if clean == r || under {
			return fmt.Errorf("%q would cover the sandbox's own %s", p, r)
		}
	}
	return nil
}

// bindApart refuses a bind whose source is the host's root or overlaps the
// workspace or a hidden path, and one whose destination overlaps the
// workspace's mount: it would show the workspace (or tether's own files)
// a second time, without the protected-path freeze or the hiding.
func (c Config) bindApart(b Bind) error {
	src := filepath.Clean(b.Source)
	if src == "/" {
		return fmt.Errorf("source / would show the whole host")
	}
	if c.Workspace != "" {
		if protect.Overlaps(src, filepath.Clean(c.Workspace)) {
			return fmt.Errorf("source %s overlaps the workspace %s", src, c.Workspace)
		}
		if protect.Overlaps(filepath.Clean(b.dest()), filepath.Clean(c.workspaceMount())) {
			return fmt.Errorf("destination %s overlaps the workspace's mount %s", b.dest(), c.workspaceMount())
		}
	}
	for _, h := range c.Hide {
		if h != "" && protect.Overlaps(src, filepath.Clean(h)) {
			return fmt.Errorf("source %s overlaps tether's own %s", src, h)
		}
	}
	return nil
}
