package egress

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapResolver answers from a fixed table and counts lookups.
type mapResolver struct {
	m     map[string][]string
	calls int
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls++
	var out []netip.Addr
	for _, s := range r.m[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestParseRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		host     string
		wildcard bool
		prefix   string
		port     int
		bad      bool
	}{
		{in: "example.com", host: "example.com"},
		{in: "Example.COM.", host: "example.com"},
		{in: "*.github.com", host: "github.com", wildcard: true},
		{in: "api.github.com:443", host: "api.github.com", port: 443},
		{in: "10.0.0.0/8", prefix: "10.0.0.0/8"},
		{in: "10.1.2.3/8", prefix: "10.0.0.0/8"},
		{in: "127.0.0.1", prefix: "127.0.0.1/32"},
		{in: "127.0.0.1:8080", prefix: "127.0.0.1/32", port: 8080},
		{in: "[::1]:443", prefix: "::1/128", port: 443},
		{in: "::ffff:10.0.0.1", prefix: "10.0.0.1/32"},
		{in: "::ffff:10.0.0.0/104", prefix: "10.0.0.0/8"},
		{in: "", bad: true},
		{in: "*", bad: true},
		{in: "exa mple.com", bad: true},
		{in: "example.com:0", bad: true},
		{in: "example.com:99999", bad: true},
		{in: "-bad.com", bad: true},
		{in: "a..b", bad: true},
		{in: "fe80::1%eth0", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRule(tt.in)
			if tt.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.host, r.Host)
			assert.Equal(t, tt.wildcard, r.Wildcard)
			assert.Equal(t, tt.port, r.Port)
			if tt.prefix != "" {
				assert.Equal(t, tt.prefix, r.Prefix.String())
			} else {
				assert.False(t, r.IsAddress())
			}
		})
	}
}

func TestSpecial(t *testing.T) {
	t.Parallel()
	special := []string{"127.0.0.1", "10.0.0.5", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"0.0.0.0", "224.0.0.1", "100.64.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1",
		"fd12::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.5", "64:ff9b::a00:5", "2002:a00:5::1",
		"::127.0.0.1", "198.18.0.1", "192.0.2.1"}
	for _, s := range special {
		_, ok := Special(netip.MustParseAddr(s))
		assert.True(t, ok, "%s should be special", s)
	}
	public := []string{"1.1.1.1", "140.82.112.3", "2606:4700::1111", "::ffff:1.1.1.1", "64:ff9b::101:101", "100.128.0.1"}
	for _, s := range public {
		_, ok := Special(netip.MustParseAddr(s))
		assert.False(t, ok, "%s should be public", s)
	}
}

func TestPolicyDecide(t *testing.T) {
	t.Parallel()
	res := &mapResolver{m: map[string][]string{
		"api.github.com":   {"140.82.112.5"},
		"github.com":       {"140.82.112.3"},
		"internal.test":    {"10.0.0.5"},
		"mixed.test":       {"1.2.3.4", "10.0.0.5"},
		"mapped.test":      {"::ffff:127.0.0.1"},
		"corp.example":     {"10.1.2.3"},
		"evil.example":     {"1.2.3.4"},
		"pypi.org":         {"151.101.0.223"},
		"files.pypi.org":   {"151.101.0.224"},
		"blocked-ip.test":  {"203.0.114.9"},
		"rebind.github.io": {"192.168.0.1"},
	}}
	pol, err := NewPolicy(
		[]string{"*.github.com", "github.com:443", "internal.test", "mixed.test", "mapped.test", "corp.example", "10.0.0.0/8",
			"127.0.0.1:8080", "pypi.org", "*.pypi.org", "*.example", "blocked-ip.test", "*.github.io"},
		[]string{"evil.example", "203.0.114.0/24", "files.pypi.org"})
	require.NoError(t, err)
	pol.Resolver = res
	// 10.0.0.0/8 is allowed by CIDR: corp.example and internal.test resolve
	// there. Drop it for the private-address cases.
	noCIDR := pol
	noCIDR.Allow = nil
	for _, r := range pol.Allow {
		if r.Text != "10.0.0.0/8" {
			noCIDR.Allow = append(noCIDR.Allow, r)
		}
	}

	tests := []struct {
		name    string
		pol     Policy
		host    string
		port    int
		refusal Refusal
		rule    string
		msg     string
	}{
		{name: "wildcard", pol: pol, host: "api.github.com", port: 443, rule: "*.github.com"},
		{name: "wildcard is strict", pol: noCIDR, host: "github.com", port: 80, refusal: RefusedNotAllowed, msg: "tether egress: host github.com port 80 not in allow list"},
		{name: "port rule", pol: pol, host: "github.com", port: 443, rule: "github.com:443"},
		{name: "case and dot", pol: pol, host: "API.GitHub.com.", port: 443, rule: "*.github.com"},
		{name: "deny wins", pol: pol, host: "evil.example", port: 443, refusal: RefusedDeny, rule: "evil.example",
			msg: `tether egress: host evil.example refused by deny rule "evil.example"`},
		{name: "deny beats wildcard allow", pol: pol, host: "files.pypi.org", port: 443, refusal: RefusedDeny, rule: "files.pypi.org"},
		{name: "deny by resolved address", pol: pol, host: "blocked-ip.test", port: 443, refusal: RefusedDeny, rule: "203.0.114.0/24"},
		{name: "private by name", pol: noCIDR, host: "internal.test", port: 443, refusal: RefusedSpecial,
			msg: "tether egress: host internal.test resolves to private address 10.0.0.5"},
		{name: "private allowed by CIDR", pol: pol, host: "internal.test", port: 443, rule: "internal.test"},
		{name: "one private answer refuses all", pol: noCIDR, host: "mixed.test", port: 443, refusal: RefusedSpecial},
		{name: "mapped loopback", pol: noCIDR, host: "mapped.test", port: 443, refusal: RefusedSpecial,
			msg: "tether egress: host mapped.test resolves to loopback address 127.0.0.1"},
		{name: "rebinding wildcard", pol: pol, host: "rebind.github.io", port: 443, refusal: RefusedSpecial},
		{name: "loopback literal by address", pol: pol, host: "127.0.0.1", port: 8080, rule: "127.0.0.1:8080"},
		{name: "loopback literal other port", pol: pol, host: "127.0.0.1", port: 8081, refusal: RefusedNotAllowed},
		{name: "mapped literal", pol: pol, host: "::ffff:127.0.0.1", port: 8080, rule: "127.0.0.1:8080"},
		{name: "private literal by CIDR", pol: pol, host: "10.9.9.9", port: 22, rule: "10.0.0.0/8"},
		{name: "metadata literal", pol: pol, host: "169.254.169.254", port: 80, refusal: RefusedNotAllowed},
		{name: "unresolvable", pol: pol, host: "nope.github.com", port: 443, refusal: RefusedResolve},
		{name: "invalid host", pol: pol, host: "a b", port: 443, refusal: RefusedInvalid},
		{name: "invalid port", pol: pol, host: "github.com", port: 0, refusal: RefusedInvalid},
		{name: "zero policy refuses", pol: Policy{Resolver: res}, host: "github.com", port: 443, refusal: RefusedNotAllowed},
		{name: "mandate allows", pol: withMandate(pol, "pypi.org", "*.github.com"), host: "api.github.com", port: 443, rule: "*.github.com"},
		{name: "mandate narrows", pol: withMandate(pol, "pypi.org"), host: "api.github.com", port: 443, refusal: RefusedMandate,
			msg: "tether egress: host api.github.com not in the hosts of mandate job v2"},
		{name: "mandate never widens", pol: withMandate(pol, "other.org"), host: "other.org", port: 443, refusal: RefusedNotAllowed},
		{name: "mandate exact-text rule ignored", pol: withMandate(pol, "=$URL"), host: "pypi.org", port: 443, refusal: RefusedMandate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.pol.Decide(t.Context(), tt.host, tt.port)
			assert.Equal(t, tt.refusal, d.Refusal, d.Message)
			assert.Equal(t, tt.refusal == "", d.Allowed)
			if tt.rule != "" {
				assert.Equal(t, tt.rule, d.Rule)
			}
			if tt.msg != "" {
				assert.Equal(t, tt.msg, d.Message)
			}
			if d.Allowed {
				assert.NotEmpty(t, d.Addrs)
			} else {
				assert.Empty(t, d.Addrs)
			}
		})
	}
}

func withMandate(p Policy, hosts ...string) Policy {
	p.Mandate = &MandateHosts{Job: "job", Version: 2, Rules: hosts}
	return p
}
