package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientHello returns the first flight of a TLS client for serverName:
// one record holding the ClientHello.
func clientHello(t *testing.T, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		_ = tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true}).Handshake()
	}()
	hdr := make([]byte, 5)
	_, err := io.ReadFull(b, hdr)
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:5]))
	_, err = io.ReadFull(b, body)
	require.NoError(t, err)
	b.Close()
	return append(hdr, body...)
}

// resplit re-frames one handshake record's payload into records of at
// most size bytes.
func resplit(rec []byte, size int) []byte {
	payload := rec[5:]
	var out []byte
	for len(payload) > 0 {
		n := min(size, len(payload))
		out = append(out, recordHandshake, rec[1], rec[2], byte(n>>8), byte(n))
		out = append(out, payload[:n]...)
		payload = payload[n:]
	}
	return out
}

func TestHelloServerNameAcrossRecords(t *testing.T) {
	hello := clientHello(t, "denied.example")
	for _, size := range []int{len(hello), 200, 37, 3, 1} {
		in := resplit(hello, size)
		br := bufio.NewReaderSize(bytes.NewReader(in), clientBufSize)
		name, err := helloServerName(br)
		require.NoError(t, err, "records of %d bytes", size)
		assert.Equal(t, "denied.example", name, "records of %d bytes", size)
		assert.Equal(t, len(in), br.Buffered(), "nothing consumed")
	}

	bad := map[string][]byte{
		"cut short":           resplit(hello, 100)[:150],
		"alert inside":        append(resplit(hello, 100)[:105], 0x15, 3, 3, 0, 2, 2, 40),
		"not a client hello":  {recordHandshake, 3, 3, 0, 4, 2, 0, 0, 0},
		"empty record":        {recordHandshake, 3, 3, 0, 0},
		"oversized hello":     {recordHandshake, 3, 3, 0, 4, msgClientHello, 0xff, 0xff, 0xff},
		"unparseable content": {recordHandshake, 3, 3, 0, 6, msgClientHello, 0, 0, 2, 0xde, 0xad},
	}
	for name, in := range bad {
		br := bufio.NewReaderSize(bytes.NewReader(in), clientBufSize)
		_, err := helloServerName(br)
		assert.ErrorIs(t, err, errHelloIncomplete, name)
	}

	// Not TLS at all: no name, no error (plain protocols pass).
	name, err := helloServerName(bufio.NewReader(bytes.NewReader([]byte("SSH-2.0-x\r\n"))))
	require.NoError(t, err)
	assert.Empty(t, name)
}

// TestProxyRefusesSplitClientHello: a ClientHello for a denied name split
// across two TLS records, and across TCP segments sent apart, is refused
// before a byte reaches the server; one whose rest never comes is refused
// too.
func TestProxyRefusesSplitClientHello(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port := hostPortOf(t, srv.URL)
	pol := allowPolicy(t, "web.test", "127.0.0.1")
	pol.Resolver = &mapResolver{m: map[string][]string{"web.test": {"127.0.0.1"}}}
	h := startProxy(t, pol, Limits{IdleTimeout: 500 * time.Millisecond})

	hello := clientHello(t, "fronted.example")
	half := len(hello) / 2
	twoRecords := resplit(hello, half)
	cases := map[string][][]byte{
		"two records":                {twoRecords},
		"two records, two segments":  {twoRecords[:half+3], twoRecords[half+3:]},
		"one record, three segments": {hello[:3], hello[3:half], hello[half:]},
		"rest never sent":            {twoRecords[:half+5]},
	}
	for name, segments := range cases {
		t.Run(name, func(t *testing.T) {
			before := len(h.waitEvents(t, 0))
			c, err := net.Dial("tcp", h.addr)
			require.NoError(t, err)
			defer c.Close()
			fmt.Fprintf(c, "CONNECT web.test:%d HTTP/1.1\r\nHost: web.test:%d\r\n\r\n", port, port)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			for _, seg := range segments {
				_, err := c.Write(seg)
				require.NoError(t, err)
				time.Sleep(20 * time.Millisecond) // separate segments
			}
			var refused Event
			for _, ev := range h.waitEvents(t, before+1)[before:] {
				refused = ev
			}
			assert.Equal(t, RefusedSNI, refused.Refusal, refused.Message)
			assert.Zero(t, refused.Up, "no client byte reached the server")
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.ReadAll(br)
			require.NoError(t, err, "the tunnel is closed")
		})
	}
}
