package sandbox

import (
	"testing"
	"time"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/rootfs"
)

// testLayout is a host layout given as data, so translation tests do not
// depend on the machine.
var testLayout = rootfs.Layout{
	Kind:     rootfs.KindHost,
	Binds:    []string{"/usr", "/etc/passwd"},
	Symlinks: map[string]string{"/bin": "usr/bin"},
}

var testPlacement = Placement{CgroupPath: "/tether-unit/default/c1", RootDir: "/run/tether-unit/roots/c1"}

func TestValidateRejectsBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"relative workspace", Config{Workspace: "work"}, "absolute"},
		{"root workspace", Config{Workspace: "/"}, "must not be /"},
		{"workspace over proc", Config{Workspace: "/proc/self"}, "/proc"},
		{"workspace on tmp", Config{Workspace: "/tmp"}, "/tmp"},
		{"relative mount", Config{Workspace: "/w", WorkspaceMount: "w"}, "absolute"},
		{"mount without workspace", Config{WorkspaceMount: "/w"}, "without a workspace"},
		{"relative bind", Config{Binds: []Bind{{Source: "src"}}}, "absolute"},
		{"bind over dev", Config{Binds: []Bind{{Source: "/dev/sda", Destination: "/dev/sda"}}}, "/dev"},
		{"relative cwd", Config{Cwd: "sub"}, "absolute"},
		{"bad env", Config{Env: []string{"NOEQUALS"}}, "KEY=value"},
		{"empty env key", Config{Env: []string{"=x"}}, "KEY=value"},
		{"host network not allowed", Config{Network: NetworkHost}, "not allowed"},
		{"unknown network", Config{Network: "bridge"}, "unknown network"},
		{"negative memory", Config{Limits: Limits{MemoryBytes: -1}}, "negative memory"},
		{"tiny memory", Config{Limits: Limits{MemoryBytes: 1024}}, "minimum"},
		{"negative pids", Config{Limits: Limits{Pids: -5}}, "negative pids"},
		{"one pid", Config{Limits: Limits{Pids: 1}}, "minimum"},
		{"negative cpus", Config{Limits: Limits{CPUs: -0.5}}, "cpus"},
		{"negative timeout", Config{Limits: Limits{Timeout: -time.Second}}, "negative timeout"},
		{"negative output", Config{Limits: Limits{OutputBytes: -1}}, "negative output"},
		{"negative tmpfs", Config{Limits: Limits{TmpfsBytes: -1}}, "negative tmpfs"},
		{"unknown seccomp", Config{Seccomp: "maybe"}, "seccomp"},
		{"bad hostname", Config{Hostname: "a/b"}, "hostname"},
		{"bad layout kind", Config{Rootfs: rootfs.Layout{Kind: "zip"}}, "layout kind"},
		{"relative root dir", Config{Rootfs: rootfs.Layout{Kind: rootfs.KindDir, Dir: "root"}}, "absolute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
			_, err = tc.cfg.Libcontainer("c1", testPlacement)
			assert.ErrorIs(t, err, ErrInvalidConfig, "translation must refuse what Validate refuses")
		})
	}
}

func TestValidateAcceptsZeroAndTypicalConfigs(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{},
		{Workspace: "/tmp/ws"}, // under /tmp is fine: mounted over the tmpfs
		{Workspace: "/home/u/p", Cwd: "/home/u/p/sub", Env: []string{"A=b"}, Network: NetworkHost, AllowHostNetwork: true},
		{Limits: Limits{MemoryBytes: 512 << 20, Pids: 64, CPUs: 1.5, Timeout: time.Minute, OutputBytes: 1 << 20, TmpfsBytes: 1 << 20}},
	} {
		assert.NoError(t, cfg.Validate(), "%+v", cfg)
	}
}

// translate runs the pure translation with seccomp off, so these tests hold
// for builds with and without -tags seccomp.
func translate(t *testing.T, cfg Config, p Placement) *configs.Config {
	t.Helper()
	if cfg.Rootfs.Kind == "" {
		cfg.Rootfs = testLayout
	}
	if cfg.Seccomp == "" {
		cfg.Seccomp = SeccompOff
	}
	lc, err := cfg.Libcontainer("c1", p)
	require.NoError(t, err)
	return lc
}

func mountAt(t *testing.T, lc *configs.Config, dest string) *configs.Mount {
	t.Helper()
	for _, m := range lc.Mounts {
		if m.Destination == dest {
			return m
		}
	}
	t.Fatalf("no mount at %s", dest)
	return nil
}

func TestLibcontainerIsolationDefaults(t *testing.T) {
	t.Parallel()
	lc := translate(t, Config{Workspace: "/home/u/proj"}, testPlacement)

	for _, ns := range []configs.NamespaceType{configs.NEWNS, configs.NEWPID, configs.NEWIPC, configs.NEWUTS, configs.NEWNET, configs.NEWCGROUP} {
		assert.True(t, lc.Namespaces.IsPrivate(ns), "namespace %s", ns)
	}
	assert.True(t, lc.Namespaces.Contains(configs.NEWUSER), "always a user namespace")
	require.Len(t, lc.Networks, 1)
	assert.Equal(t, "loopback", lc.Networks[0].Type)

	assert.True(t, lc.NoNewPrivileges)
	assert.True(t, lc.Readonlyfs)
	assert.Equal(t, testPlacement.RootDir, lc.Rootfs)
	assert.Equal(t, DefaultHostname, lc.Hostname)
	assert.Equal(t, int(unix.SIGKILL), lc.ParentDeathSignal)

	require.NotNil(t, lc.Capabilities)
	for _, set := range [][]string{lc.Capabilities.Bounding, lc.Capabilities.Effective, lc.Capabilities.Permitted} {
		assert.ElementsMatch(t, dockerCaps, set)
		for _, banned := range []string{"CAP_SYS_ADMIN", "CAP_SYS_MODULE", "CAP_SYS_PTRACE", "CAP_SYS_TIME", "CAP_NET_ADMIN", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SYS_RAWIO"} {
			assert.NotContains(t, set, banned)
		}
	}
	assert.Empty(t, lc.Capabilities.Ambient)
	assert.Empty(t, lc.Capabilities.Inheritable)

	for _, p := range []string{"/proc/kcore", "/proc/keys", "/sys/firmware", "/proc/timer_list"} {
		assert.Contains(t, lc.MaskPaths, p)
	}
	for _, p := range []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/irq"} {
		assert.Contains(t, lc.ReadonlyPaths, p)
	}

	usr := mountAt(t, lc, "/usr")
	assert.NotZero(t, usr.Flags&unix.MS_RDONLY, "host /usr must be read-only")
	assert.NotZero(t, usr.Flags&unix.MS_BIND)
	assert.NotZero(t, mountAt(t, lc, "/etc/passwd").Flags&unix.MS_RDONLY)
	assert.NotZero(t, mountAt(t, lc, "/sys").Flags&unix.MS_RDONLY)
	assert.NotZero(t, mountAt(t, lc, "/sys/fs/cgroup").Flags&unix.MS_RDONLY)

	ws := mountAt(t, lc, "/home/u/proj")
	assert.Equal(t, "/home/u/proj", ws.Source)
	assert.Zero(t, ws.Flags&unix.MS_RDONLY, "workspace is read-write")
	assert.NotZero(t, ws.Flags&unix.MS_NOSUID)

	tmp := mountAt(t, lc, "/tmp")
	assert.Equal(t, "tmpfs", tmp.Device)
	assert.Contains(t, tmp.Data, "size=67108864")
	assert.NotZero(t, tmp.Flags&unix.MS_NODEV)

	assert.Equal(t, testPlacement.CgroupPath, lc.Cgroups.Path)
	assert.Zero(t, lc.Cgroups.Resources.Memory)
	assert.Zero(t, lc.Cgroups.Resources.PidsLimit)
	assert.Zero(t, lc.Cgroups.Resources.CpuQuota)
	assert.False(t, lc.RootlessEUID)
}

func TestLibcontainerLimits(t *testing.T) {
	t.Parallel()
	lc := translate(t, Config{Limits: Limits{MemoryBytes: 256 << 20, Pids: 100, CPUs: 1.5, TmpfsBytes: 8 << 20}}, testPlacement)
	r := lc.Cgroups.Resources
	assert.Equal(t, int64(256<<20), r.Memory)
	require.NotNil(t, r.PidsLimit)
	assert.Equal(t, int64(100), *r.PidsLimit)
	assert.Equal(t, int64(150000), r.CpuQuota)
	assert.Equal(t, uint64(100000), r.CpuPeriod)
	assert.Contains(t, mountAt(t, lc, "/tmp").Data, "size=8388608")
	assert.Zero(t, r.MemorySwap, "swap is left alone where the kernel cannot bound it")

	// Where it can, memory and swap together are bounded by the limit.
	p := testPlacement
	p.LimitSwap = true
	r = translate(t, Config{Limits: Limits{MemoryBytes: 256 << 20}}, p).Cgroups.Resources
	assert.Equal(t, int64(256<<20), r.MemorySwap)
	r = translate(t, Config{Limits: Limits{Pids: 10}}, p).Cgroups.Resources
	assert.Zero(t, r.MemorySwap, "no memory limit, no swap limit")
}

func TestLibcontainerBindsAndCwd(t *testing.T) {
	t.Parallel()
	lc := translate(t, Config{
		Workspace: "/src/p", WorkspaceMount: "/workspace",
		Binds: []Bind{{Source: "/data", ReadOnly: true}, {Source: "/cache", Destination: "/var/cache/x"}},
		Cwd:   "/workspace/sub", Env: []string{"A=1"}, Hostname: "box",
	}, testPlacement)
	assert.Equal(t, "/src/p", mountAt(t, lc, "/workspace").Source)
	assert.NotZero(t, mountAt(t, lc, "/data").Flags&unix.MS_RDONLY)
	rw := mountAt(t, lc, "/var/cache/x")
	assert.Equal(t, "/cache", rw.Source)
	assert.Zero(t, rw.Flags&unix.MS_RDONLY)
	assert.Equal(t, "box", lc.Hostname)

	c := Config{Workspace: "/src/p", WorkspaceMount: "/workspace"}
	assert.Equal(t, "/workspace", c.cwd(), "cwd defaults to the workspace mount")
	assert.Equal(t, "/", Config{}.cwd())
	assert.Equal(t, DefaultEnv, Config{}.env())
}

func TestLibcontainerNetworkHost(t *testing.T) {
	t.Parallel()
	lc := translate(t, Config{Network: NetworkHost, AllowHostNetwork: true}, testPlacement)
	assert.False(t, lc.Namespaces.Contains(configs.NEWNET))
	assert.Empty(t, lc.Networks)
	assert.True(t, lc.Namespaces.IsPrivate(configs.NEWPID), "other namespaces stay")
}

func TestLibcontainerUserNamespace(t *testing.T) {
	t.Parallel()
	p := testPlacement
	p.HostUID, p.HostGID = 1<<30, 1<<30
	p.Owners = map[string]Owner{"/w": {UID: 1000, GID: 1001}}
	lc := translate(t, Config{Workspace: "/w", Binds: []Bind{{Source: "/b", ReadOnly: true}}}, p)
	require.True(t, lc.Namespaces.Contains(configs.NEWUSER), "a user namespace by default, as root")
	// One id: nothing else can be set or chowned to.
	assert.Equal(t, []configs.IDMap{{ContainerID: 0, HostID: 1 << 30, Size: 1}}, lc.UIDMappings)
	assert.Equal(t, []configs.IDMap{{ContainerID: 0, HostID: 1 << 30, Size: 1}}, lc.GIDMappings)
	ws := mountAt(t, lc, "/w")
	require.NotNil(t, ws.IDMapping, "workspace is an idmapped mount")
	// The workspace's owner is shown as container root, and what
	// container root creates is stored as the owner's.
	assert.Equal(t, []configs.IDMap{{ContainerID: 1000, HostID: 1 << 30, Size: 1}}, ws.IDMapping.UIDMappings)
	assert.Equal(t, []configs.IDMap{{ContainerID: 1001, HostID: 1 << 30, Size: 1}}, ws.IDMapping.GIDMappings)
	assert.NotZero(t, ws.Flags&unix.MS_NOSUID, "nosuid")
	assert.NotZero(t, ws.Flags&unix.MS_NODEV, "nodev")
	b := mountAt(t, lc, "/b")
	require.NotNil(t, b.IDMapping, "binds too")
	assert.Equal(t, []configs.IDMap{{ContainerID: 0, HostID: 1 << 30, Size: 1}}, b.IDMapping.UIDMappings, "an unknown owner is root's")
	assert.NotContains(t, lc.Capabilities.Bounding, "CAP_SETFCAP")
	assert.NotContains(t, lc.Capabilities.Bounding, "CAP_FSETID")
	assert.NotContains(t, lc.Capabilities.Bounding, "CAP_MKNOD")
	assert.False(t, lc.RootlessEUID)
}

func TestLibcontainerRootless(t *testing.T) {
	t.Parallel()
	p := testPlacement
	p.Rootless, p.HostUID, p.HostGID = true, 1234, 1235
	lc := translate(t, Config{Workspace: "/w", Limits: Limits{MemoryBytes: 64 << 20}}, p)
	require.True(t, lc.Namespaces.Contains(configs.NEWUSER), "rootless always gets a user namespace")
	assert.Equal(t, []configs.IDMap{{ContainerID: 0, HostID: 1234, Size: 1}}, lc.UIDMappings)
	assert.Equal(t, []configs.IDMap{{ContainerID: 0, HostID: 1235, Size: 1}}, lc.GIDMappings)
	assert.True(t, lc.RootlessEUID)
	assert.True(t, lc.RootlessCgroups)
	assert.Empty(t, lc.Cgroups.Path, "no cgroup path: libcontainer then tolerates an undelegated hierarchy")
	assert.Zero(t, lc.Cgroups.Resources.Memory, "limits are reported as not enforced, not silently attempted")
	assert.Nil(t, mountAt(t, lc, "/w").IDMapping, "a one-id mapping needs no idmapped mount")
	assert.True(t, lc.Namespaces.IsPrivate(configs.NEWNET), "rootless keeps network isolation")
	assert.True(t, lc.NoNewPrivileges)
}

func TestLibcontainerPreparedDir(t *testing.T) {
	t.Parallel()
	lc := translate(t, Config{Rootfs: rootfs.Layout{Kind: rootfs.KindDir, Dir: "/srv/root"}}, testPlacement)
	assert.Equal(t, "/srv/root", lc.Rootfs)
	assert.True(t, lc.Readonlyfs)
	for _, m := range lc.Mounts {
		assert.NotEqual(t, "/usr", m.Destination, "a prepared root gets no host binds")
	}
}

func TestLibcontainerPlacementErrors(t *testing.T) {
	t.Parallel()
	cfg := Config{Rootfs: testLayout, Seccomp: SeccompOff}
	_, err := cfg.Libcontainer("c1", Placement{CgroupPath: "rel/path", RootDir: "/r"})
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = cfg.Libcontainer("c1", Placement{CgroupPath: "/t/c1"})
	assert.ErrorIs(t, err, ErrInvalidConfig, "host layout without an empty root")
	_, err = Config{Seccomp: SeccompOff}.Libcontainer("c1", testPlacement)
	assert.ErrorIs(t, err, ErrInvalidConfig, "unresolved layout")
}

func TestCapWriter(t *testing.T) {
	t.Parallel()
	var a, b []byte
	c := &capWriter{limit: 10}
	wa := c.stream(writerFunc(func(p []byte) { a = append(a, p...) }))
	wb := c.stream(writerFunc(func(p []byte) { b = append(b, p...) }))
	n, err := wa.Write([]byte("123456"))
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	n, err = wb.Write([]byte("abcdef"))
	require.NoError(t, err)
	assert.Equal(t, 6, n, "the writer reports everything written so the command never sees EPIPE")
	_, _ = wa.Write([]byte("zzz"))
	assert.Equal(t, "123456", string(a))
	assert.Equal(t, "abcd", string(b))
	assert.True(t, c.truncated())

	u := &capWriter{}
	_, _ = u.stream(nil).Write(make([]byte, 1<<20))
	assert.False(t, u.truncated(), "zero limit means unlimited")
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
