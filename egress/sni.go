package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"time"
)

// RefusedSNI: a tunnel's TLS ClientHello names another server than the
// CONNECT target (domain fronting on an allowed address).
const RefusedSNI Refusal = "sni-mismatch"

// clientBufSize holds a whole TLS record (ClientHello included) so the
// server name can be read before any byte is forwarded.
const clientBufSize = 16<<10 + 5 + 256

// helloServerName returns the server name of a TLS ClientHello at the
// start of br without consuming it; "" when the bytes are not a TLS
// handshake, carry no name, or do not fit one record. It blocks only
// until the client's first record arrives (the server's first bytes are
// already being forwarded, so server-first protocols are not stalled).
func helloServerName(br *bufio.Reader) string {
	// One byte first: a client that sends fewer than a record header's
	// bytes and waits for an answer must not stall.
	if first, err := br.Peek(1); err != nil || first[0] != 0x16 {
		return ""
	}
	hdr, err := br.Peek(5)
	if err != nil || hdr[1] != 3 {
		return ""
	}
	n := int(binary.BigEndian.Uint16(hdr[3:5]))
	rec, err := br.Peek(5 + n)
	if err != nil {
		return ""
	}
	var name string
	errSeen := errors.New("client hello read")
	srv := tls.Server(&helloConn{r: bytes.NewReader(rec)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name = h.ServerName
			return nil, errSeen
		},
	})
	_ = srv.Handshake() // always fails: it stops after reading the hello
	return name
}

// sniMismatch reports whether a tunnel to host may not carry a TLS
// session for name: names must agree, except that IP-literal targets
// carry no name to compare.
func sniMismatch(host, name string) bool {
	if name == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	return normHost(name) != host
}

// helloConn feeds recorded bytes to a TLS server and drops its replies.
type helloConn struct{ r *bytes.Reader }

func (c *helloConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *helloConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }
