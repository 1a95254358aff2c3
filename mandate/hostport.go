package mandate

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// A hosts rule may name a TCP port: "HOST:PORT" (a host name, an IPv4
// address or "*.domain") or "[IPv6]:PORT". The text gate and the egress
// proxy, which see host names, match its host; the port is for the kernel
// (KernelPorts), and a refused connect's drift widens to such a rule for
// the address the kernel refused. A rule without a port allows every
// port of its host.

// splitHostRule splits a hosts rule value into its host and the text of
// its port; hasPort is false for a value that names none (a name, an
// address, a bare IPv6 address, an exact "=TEXT" rule).
func splitHostRule(v string) (host, port string, hasPort bool) {
	switch {
	case strings.HasPrefix(v, "="):
		return v, "", false
	case strings.HasPrefix(v, "["):
		if i := strings.Index(v, "]:"); i > 0 {
			return v[1:i], v[i+2:], true
		}
	case strings.Count(v, ":") == 1:
		h, p, _ := strings.Cut(v, ":")
		return h, p, true
	}
	return v, "", false
}

// parsePort returns the port a rule's port text names: 1 to 65535 in
// decimal, without a sign or leading zeros.
func parsePort(p string) (uint16, bool) {
	n, err := strconv.ParseUint(p, 10, 16)
	return uint16(n), err == nil && n > 0 && strconv.FormatUint(n, 10) == p
}

// canonHostPort validates a hosts rule that names a port, given its
// host's canonical form (canonRule's), and returns the rule's.
func canonHostPort(v, host, port string) (string, error) {
	if _, ok := parsePort(port); !ok {
		return "", hostRuleError(v, "the port must be 1 to 65535")
	}
	if strings.HasPrefix(v, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", hostRuleError(v, "want [IPv6]:PORT")
		}
		return "[" + a.String() + "]:" + port, nil
	}
	return host + ":" + port, nil
}

func hostRuleError(v, why string) error {
	return fmt.Errorf("host rule %q: %s", v, why)
}

// ruleHost is a hosts rule's host: the rule without its port.
func ruleHost(v string) string {
	h, _, _ := splitHostRule(v)
	return h
}

// RuleHosts returns the hosts of hosts rules (values as written), their
// ports left out: what the egress proxy, which sees host names, holds a
// command to.
func RuleHosts(rules []string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = ruleHost(r)
	}
	return out
}

// KernelPorts returns the TCP ports a hosts family (rule values as
// written) lets a connect go to, for a Landlock ruleset, sorted, and
// whether the kernel can hold the family so: every rule names a port (an
// empty family allows no connect at all). Landlock knows ports, not
// addresses: a port is allowed to every host, and a rule without a port,
// which allows its host on every port, cannot be told from any other
// host's connect: then ok is false and nothing is restricted. The
// addresses are held by the egress proxy, where there is one.
func KernelPorts(rules []string) (ports []uint16, ok bool) {
	ports = []uint16{}
	for _, r := range rules {
		_, p, hasPort := splitHostRule(r)
		n, valid := parsePort(p)
		if !hasPort || !valid {
			return nil, false
		}
		ports = append(ports, n)
	}
	slices.Sort(ports)
	return slices.Compact(ports), true
}
