package sandbox

import (
	"testing"

	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Network mode proxy is translated without root: it joins the given
// namespace (no loopback setup: the namespace's maker brought lo up) and
// binds the host's /sys read-only: a fresh sysfs needs a network
// namespace owned by the sandbox's user namespace, which the proxy's is not.
func TestLibcontainerNetworkProxy(t *testing.T) {
	t.Parallel()
	const path = "/proc/4242/fd/7"
	lc := translate(t, Config{Network: NetworkProxy, NetNSPath: path}, testPlacement)
	require.True(t, lc.Namespaces.Contains(configs.NEWNET))
	assert.Equal(t, path, lc.Namespaces.PathOf(configs.NEWNET))
	assert.Empty(t, lc.Networks, "a joined namespace is not set up again")
	assert.Equal(t, "/sys", mountAt(t, lc, "/sys").Source, "the host's /sys, read-only")
	assert.True(t, lc.Namespaces.IsPrivate(configs.NEWPID), "other namespaces stay private")

	p := testPlacement
	p.HostUID, p.HostGID = 1<<30, 1<<30
	lc = translate(t, Config{Network: NetworkProxy, NetNSPath: path}, p)
	assert.Equal(t, path, lc.Namespaces.PathOf(configs.NEWNET))

	p.Rootless = true
	_, err := Config{Rootfs: testLayout, Seccomp: SeccompOff, Network: NetworkProxy, NetNSPath: path}.Libcontainer("c1", p)
	assert.ErrorIs(t, err, ErrInvalidConfig, "rootless cannot join the proxy namespace")
}

func TestValidateNetworkProxy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no path", Config{Network: NetworkProxy}, "needs the path"},
		{"relative path", Config{Network: NetworkProxy, NetNSPath: "ns/net"}, "must be absolute"},
		{"path without proxy", Config{NetNSPath: "/proc/1/ns/net"}, "only proxy joins one"},
		{"path with host", Config{Network: NetworkHost, AllowHostNetwork: true, NetNSPath: "/proc/1/ns/net"}, "only proxy joins one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.NoError(t, Config{Network: NetworkProxy, NetNSPath: "/proc/1/fd/3"}.Validate())
}
