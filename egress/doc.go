// Package egress gives a sandbox network access by host name only: a
// per-sandbox forward proxy that enforces and observes the profile's
// network allow/deny lists and the hosts family of a job's mandate
// (DESIGN.md §4–5, network mode "proxy").
//
// It sits beside the sandbox in the pipeline. NewNamespace (root) makes a
// network namespace with only loopback, from the host side, and opens the
// proxy's listening socket on 127.0.0.1 inside it; the sandbox joins that
// namespace, so a program that ignores the proxy variables has no route
// anywhere, and no helper process runs in the sandbox. Proxy serves the
// socket from the host: HTTP forwarding of absolute-form requests (hop-by-hop
// headers stripped), CONNECT tunnels for TLS (never intercepted) and SOCKS5
// CONNECT on the same port.
//
// Policy decides each destination: deny rules win, then allow rules, then
// the enforced mandate's hosts; names are resolved on the host and every
// resolved address must be public unless an address or CIDR allow rule
// names it, and the proxy dials exactly the checked addresses (no second
// lookup, so no DNS rebinding). Unix sockets are never dialled, and
// loopback and private addresses — where the tether API and other host
// services listen — are refused unless allowed by address, which is meant
// for tests and development only.
//
// A CONNECT or SOCKS5 tunnel whose first bytes are a TLS ClientHello
// naming another server than the target is cut before any byte is
// forwarded (domain fronting by SNI). The hello is reassembled across TLS
// records and TCP segments; one that does not arrive whole (within 64 KiB
// and the idle timeout) or does not parse is refused the same way.
// Limits (connections, bytes) belong to the proxy, that is to the sandbox
// it serves: Begin only changes the attribution of later connections. Without TLS interception the proxy
// cannot see the HTTP Host inside the tunnel, so fronting by Host header
// on a CDN that also serves an allowed name remains possible, and clients
// using Encrypted Client Hello are refused when the outer name differs.
// Programs that resolve names themselves before using the proxy fail:
// the namespace has no DNS; the proxy resolves on the host.
//
// Every attempt is reported to Options.Observe as an Event (host, port,
// method, bytes, verdict, rule, duration, run and command); refusals are
// also reported synchronously to Options.OnDecision so a caller can record
// drift. HostFacts turns an allowed event into mandate facts; Recorder
// routes a proxy's events to the mandate store (allowed hosts as
// observations in observe mode, refusals by the enforced mandate as drift
// of family hosts), and MandateHostsOf reads the enforced hosts family.
package egress
