package mandate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostRulePorts: a hosts rule may name a port; its host is what the
// text gate and the proxy match, its port what the kernel holds.
func TestHostRulePorts(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080":        "127.0.0.1:8080",
		"Example.COM:443":       "example.com:443",
		"*.example.com:443":     "*.example.com:443",
		"[::1]:22":              "[::1]:22",
		"[0:0::1]:22":           "[::1]:22",
		"::1":                   "::1", // a bare IPv6 address names no port
		"github.com":            "github.com",
		"=https://x.example:80": "=https://x.example:80",
	} {
		got, err := canonRule(FamilyHosts, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"h:0", "h:65536", "h:080", "h:+80", "h:", ":80", "[::1]", "[1.2.3.4]:80", "[fe80::1%eth0]:80", "[::1]:x"} {
		_, err := canonRule(FamilyHosts, bad)
		assert.Error(t, err, bad)
	}

	m := &Mandate{Hosts: []Rule{{Value: "127.0.0.1:8080"}, {Value: "*.example.com:443"}, {Value: "[::1]:22"}}}
	x := NewMatcher(m)
	for _, h := range []string{"127.0.0.1", "a.example.com", "::1"} {
		assert.True(t, x.hostAllowed(h), "a port rule allows its host: %s", h)
	}
	assert.False(t, x.hostAllowed("127.0.0.2"))
	assert.Equal(t, []string{"127.0.0.1", "*.example.com", "::1", "=x:1"}, RuleHosts([]string{"127.0.0.1:8080", "*.example.com:443", "[::1]:22", "=x:1"}))
}

// TestKernelPorts: the kernel can hold a hosts family to ports only when
// every rule names one; an empty family allows none.
func TestKernelPorts(t *testing.T) {
	ports, ok := KernelPorts([]string{"b.example:443", "127.0.0.1:8080", "[::1]:443"})
	assert.True(t, ok)
	assert.Equal(t, []uint16{443, 8080}, ports)
	ports, ok = KernelPorts(nil)
	assert.True(t, ok, "no host: no connect")
	assert.Empty(t, ports)
	assert.NotNil(t, ports)
	for _, fam := range [][]string{{"a.example:443", "b.example"}, {"::1"}, {"=https://x:443"}, {"*.example"}} {
		_, ok = KernelPorts(fam)
		assert.False(t, ok, "%q allows a host on every port", fam)
	}
}
