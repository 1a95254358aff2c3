package egress

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
)

// FuzzParseRule: any entry that parses re-parses to the same rule, and a
// name rule only ever holds a valid host name.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"example.com", "*.github.com", "api.github.com:443", "10.0.0.0/8",
		"[::1]:443", "::ffff:10.0.0.0/104", "127.0.0.1:8080", "*", "a..b", ":", "[]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		if r.Host != "" && !validHostName(r.Host) {
			t.Fatalf("rule %q holds invalid host %q", s, r.Host)
		}
		if (r.Host == "") == !r.Prefix.IsValid() {
			t.Fatalf("rule %q is neither or both a name and an address rule: %+v", s, r)
		}
		if r.Port < 0 || r.Port > 65535 {
			t.Fatalf("rule %q has port %d", s, r.Port)
		}
	})
}

// FuzzDecide: a host a sandbox names never reaches a special address
// unless an address rule allows it, whatever the text.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"example.com", "127.0.0.1", "::ffff:127.0.0.1", "[::1]", "10.0.0.5",
		"0x7f.1", "2130706433", "169.254.169.254", "EXAMPLE.com.", "fe80::1%lo", "64:ff9b::a00:5"} {
		f.Add(s, 443)
	}
	pol, _ := NewPolicy([]string{"*.com", "example.com", "0.0.0.0/0", "::/0"}, nil)
	pol.Resolver = &mapResolver{m: map[string][]string{"example.com": {"93.184.215.14"}, "evil.com": {"10.0.0.1"}}}
	f.Fuzz(func(t *testing.T, host string, port int) {
		// 0.0.0.0/0 and ::/0 allow every literal by address, so only
		// names can exercise the special-address check: drop them.
		p := pol
		p.Allow = p.Allow[:2]
		d := p.Decide(context.Background(), host, port)
		if !d.Allowed {
			if d.Message == "" || len(d.Addrs) > 0 {
				t.Fatalf("refusal without message or with addresses: %+v", d)
			}
			return
		}
		for _, a := range d.Addrs {
			if _, special := Special(a); special {
				t.Fatalf("host %q allowed to special address %s", host, a)
			}
		}
		if _, err := netip.ParseAddr(d.Host); err == nil {
			t.Fatalf("literal %q allowed without an address rule", host)
		}
	})
}

// FuzzSOCKSRequest: the SOCKS5 request parser never panics on hostile
// bytes and returns only valid ports.
func FuzzSOCKSRequest(f *testing.F) {
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 8, 'w', 'e', 'b', '.', 't', 'e', 's', 't', 0, 80})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 1, 187})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 22})
	f.Add([]byte{5, 2, 1, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		c1, c2 := net.Pipe()
		defer c1.Close()
		defer c2.Close()
		go func() { // swallow replies
			var buf [64]byte
			for {
				if _, err := c2.Read(buf[:]); err != nil {
					return
				}
			}
		}()
		host, port, err := socksRequest(c1, bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		if port < 0 || port > 65535 {
			t.Fatalf("bad port %d for %q", port, host)
		}
	})
}

// FuzzHelloServerName: reading a server name from hostile bytes never
// panics or hangs, and never consumes input.
func FuzzHelloServerName(f *testing.F) {
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0x16})
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), clientBufSize)
		_, _ = helloServerName(br)
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(rest, in) {
			t.Fatalf("helloServerName consumed input")
		}
	})
}
