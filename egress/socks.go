package egress

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication. Domain names are
// resolved on the host side by the policy, like HTTP requests.
const (
	socksVersion        = 5
	socksNoAuth         = 0
	socksNoAcceptable   = 0xff
	socksCmdConnect     = 1
	socksAtypIPv4       = 1
	socksAtypDomain     = 3
	socksAtypIPv6       = 4
	socksSucceeded      = 0
	socksGeneralFailure = 1
	socksNotAllowed     = 2
	socksHostUnreach    = 4
	socksCmdUnsupported = 7
	socksAtypUnsupport  = 8
)

// socks serves one SOCKS5 client whose first byte has been peeked.
func (p *Proxy) socks(c net.Conn, br *bufio.Reader, b *budget, pol Policy) {
	start := time.Now()
	c.SetDeadline(time.Now().Add(p.opts.Limits.IdleTimeout))
	host, port, err := socksRequest(c, br)
	if err != nil {
		if rep, ok := err.(socksError); ok {
			socksReply(c, byte(rep))
		}
		return
	}
	c.SetDeadline(time.Time{})
	ev := Event{Time: start, Method: "SOCKS5"}
	ev.Decision = p.decide(pol, b, host, port)
	if !ev.Allowed {
		socksReply(c, socksNotAllowed)
		p.report(b.attr, ev)
		return
	}
	p.relay(c, br, b, ev, func(dialErr error) error {
		if dialErr != nil {
			return socksReply(c, socksHostUnreach)
		}
		return socksReply(c, socksSucceeded)
	})
}

// socksError is a reply code to send before giving up.
type socksError byte

func (e socksError) Error() string { return fmt.Sprintf("socks5 error reply %d", byte(e)) }

// socksRequest performs the method negotiation and reads the request.
func socksRequest(c net.Conn, br *bufio.Reader) (string, int, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", 0, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, err
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == socksNoAuth
	}
	if !ok {
		c.Write([]byte{socksVersion, socksNoAcceptable})
		return "", 0, fmt.Errorf("socks5 client offers no usable method")
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return "", 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return "", 0, err
	}
	if req[0] != socksVersion {
		return "", 0, socksError(socksGeneralFailure)
	}
	var host string
	switch req[3] {
	case socksAtypIPv4:
		var a [4]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return "", 0, err
		}
		host = netip.AddrFrom4(a).String()
	case socksAtypIPv6:
		var a [16]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return "", 0, err
		}
		host = netip.AddrFrom16(a).String()
	case socksAtypDomain:
		n, err := br.ReadByte()
		if err != nil {
			return "", 0, err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", 0, err
		}
		host = string(name)
	default:
		return "", 0, socksError(socksAtypUnsupport)
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return "", 0, err
	}
	if req[1] != socksCmdConnect {
		return "", 0, socksError(socksCmdUnsupported)
	}
	return host, int(binary.BigEndian.Uint16(pb[:])), nil
}

// socksReply sends a reply with an unspecified bound address.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}
