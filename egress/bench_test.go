package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"testing"
	"time"
)

// benchProxy serves a proxy allowing loopback and returns a dial function
// for a client: inside a fresh network namespace (the sandbox's path), or
// on a host loopback listener.
func benchProxy(b *testing.B, inNS bool) (dial func(ctx context.Context, network, addr string) (net.Conn, error), proxyAddr string) {
	pol, err := NewPolicy([]string{"127.0.0.1"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := New(Options{Policy: pol})
	var l net.Listener
	var d net.Dialer
	dial = d.DialContext
	if inNS {
		if os.Geteuid() != 0 {
			b.Skip("a network namespace needs root")
		}
		ns, err := NewNamespace()
		if err != nil {
			b.Skipf("cannot create a network namespace: %v", err)
		}
		b.Cleanup(func() { ns.Close() })
		l, dial = ns.Listener(), nsDialer(b, ns)
	}
	if l == nil {
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			b.Fatal(err)
		}
	}
	go p.Serve(l)
	b.Cleanup(func() { p.Close() })
	return dial, l.Addr().String()
}

// nsDialer dials from one thread that stays in ns for the benchmark (so
// client connections cost what they cost a sandboxed program, without a
// thread per dial as Namespace.Dial has). The thread is discarded after.
func nsDialer(b *testing.B, ns *Namespace) func(ctx context.Context, network, addr string) (net.Conn, error) {
	type req struct {
		network, addr string
		reply         chan net.Conn
	}
	reqs := make(chan req)
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if err := unixSetns(ns); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for r := range reqs {
			c, err := net.Dial(r.network, r.addr)
			if err != nil {
				c = nil
			}
			r.reply <- c
		}
	}()
	if err := <-ready; err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { close(reqs) })
	return func(_ context.Context, network, addr string) (net.Conn, error) {
		r := req{network, addr, make(chan net.Conn, 1)}
		reqs <- r
		if c := <-r.reply; c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("dialling %s in the namespace failed", addr)
	}
}

// BenchmarkEgressThroughput moves 16 MiB from a host loopback server
// directly and through a CONNECT tunnel in each iteration and reports both
// rates and their ratio.
func BenchmarkEgressThroughput(b *testing.B) {
	for _, mode := range []string{"netns", "loopback"} {
		b.Run(mode, func(b *testing.B) { benchThroughput(b, mode == "netns") })
	}
}

func benchThroughput(b *testing.B, inNS bool) {
	const size = 16 << 20
	chunk := make([]byte, 64<<10)
	src, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	go func() {
		for {
			c, err := src.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for n := 0; n < size; n += len(chunk) {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
		}
	}()
	dial, proxyAddr := benchProxy(b, inNS)
	ctx := context.Background()
	var direct, proxied time.Duration
	b.SetBytes(2 * size)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		c, err := net.Dial("tcp", src.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, c); err != nil || n != size {
			b.Fatalf("direct: %d bytes, %v", n, err)
		}
		c.Close()
		direct += time.Since(start)

		start = time.Now()
		c, err = dial(ctx, "tcp", proxyAddr)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", src.Addr())
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("CONNECT: %v %v", resp, err)
		}
		if n, err := io.Copy(io.Discard, br); err != nil || n != size {
			b.Fatalf("proxied: %d bytes, %v", n, err)
		}
		c.Close()
		proxied += time.Since(start)
	}
	mb := float64(size) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/direct.Seconds(), "direct-MiB/s")
	b.ReportMetric(mb/proxied.Seconds(), "proxied-MiB/s")
	b.ReportMetric(direct.Seconds()/proxied.Seconds(), "throughput-ratio")
}

// BenchmarkEgressLatency makes one small GET directly and one through the
// proxy per iteration, each on a new connection (as a one-shot command
// does), and reports both round trips and the added latency.
func BenchmarkEgressLatency(b *testing.B) {
	for _, mode := range []string{"netns", "loopback"} {
		b.Run(mode, func(b *testing.B) { benchLatency(b, mode == "netns") })
	}
}

func benchLatency(b *testing.B, inNS bool) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	dial, proxyAddr := benchProxy(b, inNS)
	pu, _ := url.Parse("http://" + proxyAddr)
	directClient := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	proxyClient := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyURL(pu), DialContext: dial}}
	get := func(c *http.Client) {
		resp, err := c.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		if body, _ := io.ReadAll(resp.Body); string(body) != "ok" {
			b.Fatalf("body %q", body)
		}
		resp.Body.Close()
	}
	var direct, proxied time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		get(directClient)
		direct += time.Since(start)
		start = time.Now()
		get(proxyClient)
		proxied += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Microseconds())/n, "direct-µs/op")
	b.ReportMetric(float64(proxied.Microseconds())/n, "proxied-µs/op")
	b.ReportMetric(float64((proxied-direct).Microseconds())/n, "added-µs/op")
	b.ReportMetric(proxied.Seconds()/direct.Seconds(), "latency-ratio")
}
