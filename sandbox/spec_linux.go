package sandbox

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
)

// Placement holds the host-side facts a translation needs that are not part
// of the sandbox description: where the container's cgroup and empty root
// live and which host ids back its user namespace. Run fills it in.
type Placement struct {
	// CgroupPath is the container's absolute cgroup path (a child of its
	// profile's parent cgroup), e.g. /tether/default/<id>.
	CgroupPath string
	// RootDir is the empty directory used as "/" for the host layout
	// (ignored for a prepared directory).
	RootDir string
	// EtcDir, when set, replaces the host layout's /etc/... binds with one
	// read-only bind of this directory at /etc (a snapshot of those entries).
	EtcDir string
	// Rootless says tether runs without root: cgroup limits are applied
	// best-effort (they are reported in Result.NotEnforced) and binds are
	// plain (an unprivileged user cannot make idmapped mounts).
	Rootless bool
	// HostUID and HostGID back container root, the only id of the
	// sandbox's user namespace: the invoking user when Rootless, else an
	// unprivileged id reserved for sandboxes (Runner.UserNSBase).
	HostUID, HostGID int
	// Owners are the on-disk owners of the workspace and of the binds'
	// sources, by host path. As root each is shown as container root
	// through an idmapped mount, so that what the sandbox creates there
	// belongs to that owner; a source missing here is taken as root's.
	Owners map[string]Owner
	// UserNSPath, when set, is a user namespace to join instead of
	// making one (identity_linux.go: one owned by HostUID, so that the
	// kernel charges the sandbox's per-user counts to HostUID, not root);
	// its only id must be HostUID:HostGID.
	UserNSPath string
	// Protect are the protected-path mounts (protect_linux.go), mounted
	// after the workspace and the binds, parents first.
	Protect []ProtectMount
	// LimitSwap makes a memory limit bound memory and swap together (no
	// swap beyond it), so it cannot be escaped by swapping out: set where
	// the kernel accounts swap to memory cgroups (swapLimitable).
	LimitSwap bool
	// NoExec are Config.NoExec's files found in the root layout
	// (noExecFiles), mounted noexec after every other mount.
	NoExec []NoExecFile
}

// Owner is a file's on-disk owner.
type Owner struct{ UID, GID int }

// dockerCaps is the sandbox's capability set: Docker's default minus
// CAP_MKNOD and CAP_NET_RAW (a sandboxed command has no use for device nodes
// or raw packets, and both widen the attack surface; see DESIGN.md §5),
// CAP_SETFCAP (file capabilities written on the workspace would be
// honoured by the host) and CAP_FSETID (it keeps setuid and setgid bits
// through writes and chowns), and CAP_SYS_CHROOT: without it (and without
// CAP_SYS_ADMIN, so with the filter no pivot_root, setns, mount or new
// user namespace either) no process of a sandbox with seccomp on can
// change its root, and the exec gate resolves every exec in the one root
// it opened once (execGateRun.root). Every capability is the sandbox's
// user namespace's, never the host's.
var dockerCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// maskedPaths and readonlyPaths are Docker's (moby oci/defaults.go).
var (
	maskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	readonlyPaths = []string{
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
	}
)

// Spec translates the config into an OCI runtime spec (without process
// arguments, which Run supplies per command). It is pure: it reads nothing
// from the host, so it is unit-tested without root.
func (c Config) Spec(p Placement) (*specs.Spec, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	layout := c.Rootfs
	if layout.Kind == "" {
		return nil, fmt.Errorf("%w: rootfs layout not resolved (call rootfs.HostLayout first)", ErrInvalidConfig)
	}
	if !filepath.IsAbs(p.CgroupPath) {
		return nil, fmt.Errorf("%w: cgroup path %q must be absolute", ErrInvalidConfig, p.CgroupPath)
	}
	rootPath := layout.Dir
	if p.EtcDir != "" && !filepath.IsAbs(p.EtcDir) {
		return nil, fmt.Errorf("%w: /etc snapshot %q must be absolute", ErrInvalidConfig, p.EtcDir)
	}
	if layout.Kind == rootfs.KindHost {
		if !filepath.IsAbs(p.RootDir) {
			return nil, fmt.Errorf("%w: host layout needs an absolute empty root directory, got %q", ErrInvalidConfig, p.RootDir)
		}
		rootPath = p.RootDir
	}

	tmpfs := c.Limits.TmpfsBytes
	if tmpfs == 0 {
		tmpfs = DefaultTmpfsBytes
	}
	hostname := c.Hostname
	if hostname == "" {
		hostname = DefaultHostname
	}
	caps := append([]string(nil), dockerCaps...)

	s := &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: rootPath, Readonly: true},
		Hostname: hostname,
		Process: &specs.Process{
			User:            specs.User{UID: 0, GID: 0},
			Cwd:             c.cwd(),
			Env:             c.env(),
			NoNewPrivileges: true,
			Capabilities: &specs.LinuxCapabilities{
				Bounding: caps, Effective: caps, Permitted: caps,
			},
		},
		Linux: &specs.Linux{
			CgroupsPath:   p.CgroupPath,
			MaskedPaths:   append([]string(nil), maskedPaths...),
			ReadonlyPaths: append([]string(nil), readonlyPaths...),
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace},
				{Type: specs.CgroupNamespace},
			},
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
		},
	}
	if c.Network != NetworkHost {
		ns, err := c.netNamespace(p)
		if err != nil {
			return nil, err
		}
		s.Linux.Namespaces = append(s.Linux.Namespaces, ns)
	}
	// One id only: container root is HostUID and no other id exists in
	// the sandbox, so nothing it does can set or chown a file to another
	// user, and nothing in it is host root.
	s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace, Path: p.UserNSPath})
	if p.UserNSPath == "" {
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(p.HostUID), Size: 1}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(p.HostGID), Size: 1}}
	}

	s.Mounts = append(c.mounts(layout, p, tmpfs), p.protectMounts()...)
	if p.Rootless {
		// Without delegated cgroups there is nothing to put limits in:
		// libcontainer tolerates a failed cgroup only without an explicit
		// path and without limits. Run reports them in Result.NotEnforced.
		s.Linux.CgroupsPath = ""
	} else {
		c.Limits.resources(s.Linux.Resources, p.LimitSwap)
	}

	if c.Seccomp != SeccompOff {
		if !seccompAvailable {
			if c.Seccomp == "" || c.Seccomp == SeccompRequired {
				return nil, ErrSeccompUnavailable
			}
		} else {
			// Every sandbox has the capabilities dockerCaps, and so the
			// one filter of sandboxFilters.
			f, err := sandboxFilters(c.tcpOnly())
			if err != nil {
				return nil, fmt.Errorf("building seccomp profile: %w", err)
			}
			s.Linux.Seccomp = f.spec
		}
	}
	return s, nil
}

// mounts lists the sandbox's mounts in order: kernel filesystems, the
// sized /tmp, the root layout's binds, then the workspace and extra binds
// (so they may sit under /tmp).
func (c Config) mounts(layout rootfs.Layout, p Placement, tmpfs int64) []specs.Mount {
	ms := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
	}
	if c.bindsHostSys(p) {
		// A fresh sysfs needs a network namespace owned by our user
		// namespace; bind the host's read-only instead.
		ms = append(ms, specs.Mount{Destination: "/sys", Type: "none", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}})
	} else {
		ms = append(ms,
			specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			specs.Mount{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		)
	}
	ms = append(ms, specs.Mount{
		Destination: "/tmp", Type: "tmpfs", Source: "tmpfs",
		Options: []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(tmpfs, 10)},
	})
	if layout.Kind == rootfs.KindHost {
		binds := append([]string(nil), layout.Binds...)
		if p.EtcDir != "" {
			_, binds = etcEntries(binds)
		}
		sort.Strings(binds) // parents before children
		for _, b := range binds {
			ms = append(ms, specs.Mount{Destination: b, Type: "bind", Source: b, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
		}
		if p.EtcDir != "" {
			ms = append(ms, specs.Mount{Destination: "/etc", Type: "bind", Source: p.EtcDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
		}
	}
	rw := func(src, dst string, ro bool) specs.Mount {
		opts := []string{"rbind", "nosuid", "nodev"}
		if ro {
			opts = append(opts, "ro")
		} else {
			opts = append(opts, "rw")
		}
		m := specs.Mount{Destination: dst, Type: "bind", Source: src, Options: opts}
		p.idmap(&m, src)
		return m
	}
	if c.Workspace != "" {
		ms = append(ms, rw(c.Workspace, c.workspaceMount(), false))
	}
	for _, b := range c.Binds {
		ms = append(ms, rw(b.Source, b.dest(), b.ReadOnly))
	}
	for _, f := range p.NoExec {
		ms = append(ms, specs.Mount{Destination: f.Dest, Type: "bind", Source: f.Host,
			Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
	}
	return ms
}

// idmap makes m, a bind of owner's path src, an idmapped mount that shows
// src's on-disk owner as container root and stores what container root
// creates as that owner. Rootless there is one id only, the user's own,
// and a plain bind already shows the user's files as container root's.
func (p Placement) idmap(m *specs.Mount, src string) {
	if p.Rootless {
		return
	}
	o := p.Owners[src]
	m.Options = append(m.Options, "idmap")
	m.UIDMappings = []specs.LinuxIDMapping{{ContainerID: uint32(o.UID), HostID: uint32(p.HostUID), Size: 1}}
	m.GIDMappings = []specs.LinuxIDMapping{{ContainerID: uint32(o.GID), HostID: uint32(p.HostGID), Size: 1}}
}

// resources maps the limits onto cgroup resources (a container's, or a
// profile's parent cgroup). With limitSwap a memory limit is the limit of
// memory and swap together: cgroup v1's memory.memsw.limit_in_bytes
// equal to it, cgroup v2's memory.swap.max 0.
func (l Limits) resources(r *specs.LinuxResources, limitSwap bool) {
	if l.MemoryBytes > 0 {
		m := l.MemoryBytes
		r.Memory = &specs.LinuxMemory{Limit: &m}
		if limitSwap {
			r.Memory.Swap = &m
		}
	}
	if l.Pids > 0 {
		p := l.Pids
		r.Pids = &specs.LinuxPids{Limit: &p}
	}
	if l.CPUs > 0 {
		period := uint64(100000)
		quota := int64(l.CPUs * float64(period))
		r.CPU = &specs.LinuxCPU{Period: &period, Quota: &quota}
	}
}

// specconvMu serialises specconv.CreateLibcontainerConfig: with a user
// namespace it rewrites the owner of every device node in place, and the
// default device nodes are package-level values of specconv shared by every
// translation (a data race between two sandboxes set up at once). Each
// translation then takes copies of its nodes under the lock.
var specconvMu sync.Mutex

// Libcontainer translates the config into libcontainer's configuration for
// a container named id. It is pure apart from libcontainer reading the
// process's working directory (used only for relative paths, which
// Validate rejects).
func (c Config) Libcontainer(id string, p Placement) (*configs.Config, error) {
	s, err := c.Spec(p)
	if err != nil {
		return nil, err
	}
	// The filter's translation is made once (sandboxFilters), not for
	// every sandbox.
	var filter *configs.Seccomp
	if f, err := sandboxFilters(c.tcpOnly()); err == nil && s.Linux.Seccomp == f.spec {
		s.Linux.Seccomp, filter = nil, f.lc
	}
	specconvMu.Lock()
	lc, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:      id,
		Spec:            s,
		RootlessEUID:    p.Rootless,
		RootlessCgroups: p.Rootless,
	})
	if err == nil {
		// Our own copies, so that the next translation's rewrite of the
		// shared nodes cannot race with this config being used.
		for i, d := range lc.Devices {
			c := *d
			lc.Devices[i] = &c
		}
	}
	specconvMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("translating sandbox config: %w", err)
	}
	if filter != nil {
		lc.Seccomp = filter
	}
	// If tether dies, its containers die with it (gc reaps the rest).
	lc.ParentDeathSignal = int(unix.SIGKILL)
	return lc, nil
}
