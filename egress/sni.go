package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// RefusedSNI: a tunnel's TLS ClientHello names another server than the
// CONNECT target (domain fronting on an allowed address).
const RefusedSNI Refusal = "sni-mismatch"

// maxHelloBytes bounds the TLS records a ClientHello may span (record
// headers included). A real ClientHello, post-quantum key shares included,
// is a few KiB; one that does not arrive whole within this is refused.
const maxHelloBytes = 64 << 10

// clientBufSize holds a whole ClientHello, however it is split into TLS
// records, so the server name can be read before any byte is forwarded.
const clientBufSize = maxHelloBytes

// errHelloIncomplete: a tunnel's bytes begin a TLS handshake whose
// ClientHello does not arrive whole (split past maxHelloBytes, cut short,
// interleaved with other records, or unparseable): its server name cannot
// be checked, so the tunnel is refused.
var errHelloIncomplete = errors.New("the TLS ClientHello did not arrive whole")

// helloServerName returns the server name of a TLS ClientHello at the
// start of br without consuming it: "" when the bytes are not a TLS
// handshake or the hello carries no name. The hello may be split across
// any number of TLS records and TCP segments: every record is read until
// the whole message is in (Go's TLS stack then parses it, as a server
// would). A handshake that does not yield a whole, parseable ClientHello
// within maxHelloBytes is errHelloIncomplete, never "no name". It blocks
// only until the client's records arrive (the server's first bytes are
// already being forwarded, so server-first protocols are not stalled).
func helloServerName(br *bufio.Reader) (string, error) {
	// One byte first: a client that sends fewer than a record header's
	// bytes and waits for an answer must not stall.
	if first, err := br.Peek(1); err != nil || first[0] != recordHandshake {
		return "", nil
	}
	end, err := helloEnd(br)
	if err != nil {
		return "", err
	}
	recs, err := br.Peek(end)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errHelloIncomplete, err)
	}
	var name string
	seen := false
	errSeen := errors.New("client hello read")
	srv := tls.Server(&helloConn{r: bytes.NewReader(recs)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name, seen = h.ServerName, true
			return nil, errSeen
		},
	})
	_ = srv.Handshake() // always fails: it stops after reading the hello
	if !seen {
		return "", fmt.Errorf("%w: it does not parse", errHelloIncomplete)
	}
	return name, nil
}

// TLS framing constants (RFC 8446 §5.1, §4).
const (
	recordHandshake  = 0x16
	recordHeaderLen  = 5
	maxRecordPayload = 16<<10 + 256 // TLSPlaintext, with room for legacy padding
	msgClientHello   = 1
)

// helloEnd returns how many bytes of br the records holding the whole
// first handshake message (the ClientHello) take: it reads record after
// record, without consuming, until the message's declared length is in.
func helloEnd(br *bufio.Reader) (int, error) {
	off := 0      // where the next record starts
	msgLen := -1  // the ClientHello's length, once its header is in
	var hs []byte // handshake bytes so far (only the first 4 are kept)
	have := 0     // handshake payload bytes so far
	for {
		hdr, err := br.Peek(off + recordHeaderLen)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errHelloIncomplete, err)
		}
		hdr = hdr[off:]
		n := int(binary.BigEndian.Uint16(hdr[3:5]))
		switch {
		case hdr[0] != recordHandshake:
			return 0, fmt.Errorf("%w: a record of type %d inside it", errHelloIncomplete, hdr[0])
		case hdr[1] != 3:
			return 0, fmt.Errorf("%w: record version %d.%d", errHelloIncomplete, hdr[1], hdr[2])
		case n == 0 || n > maxRecordPayload:
			return 0, fmt.Errorf("%w: a record of %d bytes", errHelloIncomplete, n)
		case off+recordHeaderLen+n > maxHelloBytes:
			return 0, fmt.Errorf("%w: it spans more than %d bytes", errHelloIncomplete, maxHelloBytes)
		}
		rec, err := br.Peek(off + recordHeaderLen + n)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errHelloIncomplete, err)
		}
		payload := rec[off+recordHeaderLen:]
		off += recordHeaderLen + n
		if len(hs) < 4 {
			hs = append(hs, payload[:min(len(payload), 4-len(hs))]...)
		}
		have += n
		if msgLen < 0 && len(hs) == 4 {
			if hs[0] != msgClientHello {
				return 0, fmt.Errorf("%w: the first handshake message is of type %d", errHelloIncomplete, hs[0])
			}
			msgLen = int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])
		}
		if msgLen >= 0 && have >= 4+msgLen {
			return off, nil
		}
	}
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
