package egress

import (
	"net/netip"
	"sync"
)

// specialPrefixes are destinations a sandbox must not reach unless an
// address or CIDR allow rule names them: everything that is not a public
// unicast address. IsLoopback, IsPrivate and friends cover most; these
// cover the rest. They are parsed on first use, not at init: init work runs
// in every tether process, including the container init that `tether run`
// re-executes.
var specialPrefixes = sync.OnceValue(func() []netip.Prefix {
	return []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
		netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
		netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
		netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
		netip.MustParsePrefix("100::/64"),        // discard-only
		netip.MustParsePrefix("2001:db8::/32"),   // documentation
		netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
		netip.MustParsePrefix("192.0.2.0/24"),    // documentation
		netip.MustParsePrefix("198.51.100.0/24"), // documentation
		netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	}
})

// nat64 is the well-known NAT64 prefix: its addresses reach the IPv4
// address in their last 32 bits, which is checked in turn.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// sixToFour embeds an IPv4 address in bits 16–47.
var sixToFour = netip.MustParsePrefix("2002::/16")

// Special reports whether a is not a public unicast address: loopback,
// private (RFC 1918, unique local), link-local, unspecified, multicast,
// CGNAT, reserved or documentation ranges, or an IPv4-mapped, NAT64 or 6to4
// form of one of those. It returns a short class name for messages.
func Special(a netip.Addr) (class string, special bool) {
	if !a.IsValid() {
		return "invalid", true
	}
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback", true
	case a.IsPrivate():
		return "private", true
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local", true
	case a.IsUnspecified():
		return "unspecified", true
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast", true
	}
	if a.Is4() && netip.MustParsePrefix("100.64.0.0/10").Contains(a) {
		return "carrier-grade NAT", true
	}
	for _, p := range specialPrefixes() {
		if p.Contains(a) {
			return "reserved", true
		}
	}
	if nat64.Contains(a) {
		b := a.As16()
		if c, ok := Special(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})); ok {
			return c + " (via NAT64)", true
		}
	}
	if sixToFour.Contains(a) {
		b := a.As16()
		if c, ok := Special(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); ok {
			return c + " (via 6to4)", true
		}
	}
	return "", false
}
