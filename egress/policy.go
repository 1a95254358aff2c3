package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests inject fixed answers.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Refusal says why a destination was refused; empty means allowed.
// Callers branch on it (only RefusedMandate is drift under an enforced
// mandate).
type Refusal string

// Refusals.
const (
	RefusedInvalid    Refusal = "invalid"     // not a valid host or port
	RefusedDeny       Refusal = "deny"        // a deny rule matched
	RefusedNotAllowed Refusal = "not-allowed" // no allow rule matched
	RefusedMandate    Refusal = "mandate"     // outside the enforced mandate's hosts
	RefusedResolve    Refusal = "resolve"     // the name did not resolve
	RefusedSpecial    Refusal = "special"     // resolves to a private/loopback/... address
	RefusedLimit      Refusal = "limit"       // a connection or byte limit was reached
)

// MandateHosts is the hosts family of a job's enforced mandate. Get it
// from the mandate store:
//
//	e, err := store.Export(ctx, job) // verified against the approved hash
//	hosts := egress.MandateHosts{Job: job, Version: e.Version}
//	for _, r := range e.Families[mandate.FamilyHosts] {
//		hosts.Rules = append(hosts.Rules, r.Value)
//	}
//
// Export fails when the job has no approved mandate (observe mode): then
// leave Policy.Mandate nil.
type MandateHosts struct {
	Job     string
	Version int
	// Rules are mandate host rules: "host", "*.domain" (strict
	// subdomains) or an IP literal. "=TEXT" rules (non-literal command
	// operands) never match a real destination and are ignored.
	Rules []string
}

// allows reports whether host (normalised) matches one of the rules.
func (m *MandateHosts) allows(host string) bool {
	for _, r := range m.Rules {
		r = normHost(r)
		if d, ok := strings.CutPrefix(r, "*."); ok {
			if strings.HasSuffix(host, "."+d) && len(host) > len(d)+1 {
				return true
			}
		} else if r == host && !strings.HasPrefix(r, "=") {
			return true
		}
	}
	return false
}

// Policy decides which destinations a sandbox may reach. The zero value
// refuses everything. It is plain data: safe for concurrent use as long as
// nobody mutates it.
//
// A destination (host, port) is allowed when, in order:
//  1. no deny rule matches its name, or, for an IP literal, its address;
//  2. an allow rule matches its name (name rules) or, for an IP literal,
//     its address (address and CIDR rules);
//  3. when Mandate is set, a mandate host rule matches it (the mandate
//     narrows the profile; it never widens it);
//  4. it resolves, and no resolved address matches a deny rule;
//  5. every resolved address is a public unicast address, or is covered
//     by an address or CIDR allow rule. Name rules never allow a private,
//     loopback, link-local or other special address: allowing loopback by
//     address is meant for tests and development only.
//
// The proxy dials exactly the addresses checked in step 5, so a name
// cannot resolve to one address for the check and another for the dial.
type Policy struct {
	Allow []Rule
	Deny  []Rule
	// Mandate is the enforced mandate's hosts family; nil when the job
	// has no enforced mandate (observe mode, or no job).
	Mandate *MandateHosts
	// Resolver looks up names; nil means net.DefaultResolver.
	Resolver Resolver
}

// NewPolicy builds a Policy from profile allow and deny entries
// (config.Network.Allow and Deny).
func NewPolicy(allow, deny []string) (Policy, error) {
	a, err := ParseRules(allow)
	if err != nil {
		return Policy{}, fmt.Errorf("parsing network allow list: %w", err)
	}
	d, err := ParseRules(deny)
	if err != nil {
		return Policy{}, fmt.Errorf("parsing network deny list: %w", err)
	}
	return Policy{Allow: a, Deny: d}, nil
}

// Decision is the policy's answer for one destination.
type Decision struct {
	Host    string  `json:"host"`
	Port    int     `json:"port"`
	Allowed bool    `json:"allowed"`
	Refusal Refusal `json:"refusal,omitempty"`
	// Rule is the text of the rule that decided: the allow rule for an
	// allowed destination, the deny rule for a denied one.
	Rule string `json:"rule,omitempty"`
	// Message is the refusal as shown to the sandboxed program.
	Message string `json:"message,omitempty"`
	// Addrs are the checked addresses to dial, in resolver order.
	Addrs []netip.Addr `json:"addrs,omitempty"`
}

func refuse(host string, port int, why Refusal, rule, format string, args ...any) Decision {
	return Decision{Host: host, Port: port, Refusal: why, Rule: rule,
		Message: "tether egress: " + fmt.Sprintf(format, args...)}
}

// Decide checks host and port against the policy, resolving names. It
// never dials.
func (p Policy) Decide(ctx context.Context, host string, port int) Decision {
	h := normHost(host)
	if port < 1 || port > 65535 {
		return refuse(h, port, RefusedInvalid, "", "port %d of host %s is invalid", port, h)
	}
	lit, err := netip.ParseAddr(h)
	isLit := err == nil
	if isLit {
		if lit.Zone() != "" {
			return refuse(h, port, RefusedInvalid, "", "host %s: zoned addresses are not allowed", h)
		}
		lit = lit.Unmap()
		h = lit.String()
	} else if !validHostName(h) {
		return refuse(h, port, RefusedInvalid, "", "host %q is not a valid host name", host)
	}

	for _, r := range p.Deny {
		if r.matchName(h, port) || (isLit && r.matchAddr(lit, port)) {
			return refuse(h, port, RefusedDeny, r.Text, "host %s refused by deny rule %q", h, r.Text)
		}
	}
	var allow *Rule
	for i, r := range p.Allow {
		if r.matchName(h, port) || (isLit && r.matchAddr(lit, port)) {
			allow = &p.Allow[i]
			break
		}
	}
	if allow == nil {
		return refuse(h, port, RefusedNotAllowed, "", "host %s port %d not in allow list", h, port)
	}
	if p.Mandate != nil && !p.Mandate.allows(h) {
		return refuse(h, port, RefusedMandate, "", "host %s not in the hosts of mandate %s v%d", h, p.Mandate.Job, p.Mandate.Version)
	}

	addrs := []netip.Addr{lit}
	if !isLit {
		res := p.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		addrs, err = res.LookupNetIP(ctx, "ip", h)
		if err != nil || len(addrs) == 0 {
			return refuse(h, port, RefusedResolve, "", "host %s does not resolve", h)
		}
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		for _, r := range p.Deny {
			if r.matchAddr(a, port) {
				return refuse(h, port, RefusedDeny, r.Text, "host %s (%s) refused by deny rule %q", h, a, r.Text)
			}
		}
		if class, special := Special(a); special && !p.addrAllowed(a, port) {
			if isLit {
				return refuse(h, port, RefusedSpecial, "", "host %s is a %s address (allow it by address to reach it)", h, class)
			}
			return refuse(h, port, RefusedSpecial, "", "host %s resolves to %s address %s", h, class, a)
		}
	}
	return Decision{Host: h, Port: port, Allowed: true, Rule: allow.Text, Addrs: addrs}
}

// addrAllowed reports whether an address or CIDR allow rule covers a.
func (p Policy) addrAllowed(a netip.Addr, port int) bool {
	for _, r := range p.Allow {
		if r.matchAddr(a, port) {
			return true
		}
	}
	return false
}
