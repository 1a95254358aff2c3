package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one parsed network allow or deny entry: a host name, a
// "*.domain" wildcard (strict subdomains only, as in mandate host rules),
// an IP address or a CIDR prefix, each optionally restricted to one port.
// The zero value matches nothing.
type Rule struct {
	// Text is the entry as written, used to name the rule in refusals.
	Text string
	// Host is a lower-case host name without a trailing dot; empty for an
	// address rule.
	Host string
	// Wildcard reports that Host is a domain whose strict subdomains match.
	Wildcard bool
	// Prefix is the address or CIDR of an address rule (an address is a
	// full-length prefix); invalid for a name rule.
	Prefix netip.Prefix
	// Port restricts the rule to one port; 0 means any port.
	Port int
}

// ParseRule parses one allow or deny entry ("example.com", "*.example.com",
// "10.0.0.0/8", "::1", "api.example.com:443", "[::1]:8080").
func ParseRule(s string) (Rule, error) {
	r := Rule{Text: s}
	host := strings.TrimSpace(s)
	if host == "" {
		return Rule{}, fmt.Errorf("parsing network rule: empty entry")
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, fmt.Errorf("parsing network rule %q: invalid port %q", s, p)
		}
		host, r.Port = h, n
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Rule{}, fmt.Errorf("parsing network rule %q: zoned addresses are not supported", s)
		}
		a = a.Unmap()
		r.Prefix = netip.PrefixFrom(a, a.BitLen())
		return r, nil
	}
	if p, err := netip.ParsePrefix(host); err == nil {
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		r.Prefix = p.Masked()
		return r, nil
	}
	if d, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard = true
		host = d
	}
	host = normHost(host)
	if !validHostName(host) {
		return Rule{}, fmt.Errorf("parsing network rule %q: want a host, *.domain, IP or CIDR, optionally :port", s)
	}
	r.Host = host
	return r, nil
}

// ParseRules parses a list of entries, naming the first bad one.
func ParseRules(list []string) ([]Rule, error) {
	out := make([]Rule, 0, len(list))
	for _, s := range list {
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// IsAddress reports whether r is an address or CIDR rule.
func (r Rule) IsAddress() bool { return r.Prefix.IsValid() }

// String returns the entry as written.
func (r Rule) String() string { return r.Text }

// matchName reports whether r names host (already normalised) on port.
func (r Rule) matchName(host string, port int) bool {
	if r.Host == "" || (r.Port != 0 && r.Port != port) {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host) && len(host) > len(r.Host)+1
	}
	return host == r.Host
}

// matchAddr reports whether r is an address rule covering a on port.
func (r Rule) matchAddr(a netip.Addr, port int) bool {
	if !r.Prefix.IsValid() || (r.Port != 0 && r.Port != port) {
		return false
	}
	return r.Prefix.Contains(a.Unmap())
}

// normHost lower-cases h and drops brackets and one trailing dot.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	return h
}

// validHostName reports whether h is a syntactically valid DNS name made of
// letters, digits, hyphens and underscores (no empty labels).
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
