package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for zero Limits fields.
const (
	DefaultMaxConns    = 64
	DefaultDialTimeout = 10 * time.Second
	DefaultIdleTimeout = 2 * time.Minute
)

// ErrByteLimit is the error a connection ends with when the sandbox has
// used up Limits.MaxBytes.
var ErrByteLimit = errors.New("egress byte limit reached")

// Limits bound what the sandbox a proxy serves may do through it, over the
// proxy's whole life: every command of a session shares them, and a
// background process left running by one command gets no fresh allowance
// when the next command begins. The zero value means the defaults and no
// byte limit.
type Limits struct {
	// MaxConns caps concurrent client connections; 0 means
	// DefaultMaxConns. Connections over the cap are closed at once.
	MaxConns int
	// MaxBytes caps the bytes (both directions, all connections, all
	// commands) of the sandbox; 0 means no cap. The connection that
	// crosses it is cut, and later ones are refused.
	MaxBytes int64
	// DialTimeout bounds connecting upstream; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// IdleTimeout closes a connection with no traffic in either direction
	// for this long; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Attribution names what the sandbox is running, for events.
type Attribution struct {
	Run     string `json:"run,omitempty"`
	Command string `json:"command,omitempty"`
}

// Event is one connection attempt through the proxy: one proxied HTTP
// request, one CONNECT tunnel or one SOCKS5 connection.
type Event struct {
	Attribution
	Decision
	Time     time.Time     `json:"time"`
	Method   string        `json:"method"` // HTTP method, "CONNECT" or "SOCKS5"
	Dialled  string        `json:"dialled,omitempty"`
	Up       int64         `json:"bytes_up"`   // sandbox → destination
	Down     int64         `json:"bytes_down"` // destination → sandbox
	Duration time.Duration `json:"duration"`
	Err      string        `json:"error,omitempty"`
}

// Options configure a Proxy. Only Policy is required.
type Options struct {
	Policy Policy
	Limits Limits
	// Dial connects upstream; nil means a net.Dialer. It is only ever
	// called with network "tcp" and a literal "ip:port" that Policy
	// checked.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// OnDecision, when set, is called synchronously with each decision
	// before any dial (so a caller can record drift for a refusal).
	OnDecision func(Attribution, Decision)
	// Observe, when set, is called when each attempt ends, allowed or not.
	Observe func(Event)
	// Log receives internal errors; nil discards them.
	Log *slog.Logger
}

// Proxy is an HTTP forward proxy (absolute-form requests and CONNECT, no
// TLS interception) that also speaks SOCKS5 CONNECT on the same port.
// Create it with New; it is safe for concurrent use. The caller must call
// Close.
type Proxy struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	policy    Policy
	usage     *usage  // the sandbox's counters, for the proxy's life
	budget    *budget // the current command's attribution and usage
	conns     map[net.Conn]struct{}
	listeners []net.Listener
	closed    bool
	wg        sync.WaitGroup
}

// usage counts what the sandbox has used of its Limits.
type usage struct {
	max   int64
	used  atomic.Int64
	conns atomic.Int64
	// reserved is what reads in flight may still return (see reserve).
	reserved atomic.Int64
	// spent is set once a connection was cut at the budget: later
	// connections are refused, even if the cut left a few bytes unused.
	spent atomic.Bool
}

// exhausted reports whether the budget is spent.
func (u *usage) exhausted() bool {
	return u.max > 0 && (u.spent.Load() || u.used.Load() >= u.max)
}

// reserve returns how many bytes (at most want) a read may return before
// they are counted, and 0 once the budget is spent. A read takes at most
// half of what no other read in flight holds, so reads waiting on idle
// connections can never hold it all, and together they never exceed the
// budget: the sandbox moves at most MaxBytes. When every byte left is held
// by reads in flight, the budget counts as spent (the connection is cut a
// few bytes early rather than late). The caller must release the
// reservation after counting what it read.
func (u *usage) reserve(want int64) int64 {
	if u.max <= 0 {
		return want
	}
	for {
		used, res := u.used.Load(), u.reserved.Load()
		free := u.max - used - res
		if free <= 0 || u.spent.Load() {
			u.spent.Store(true)
			return 0
		}
		n := min(want, (free+1)/2)
		if u.reserved.CompareAndSwap(res, res+n) {
			return n
		}
	}
}

// release gives back a reservation (after add counted what was moved).
func (u *usage) release(n int64) {
	if u.max > 0 {
		u.reserved.Add(-n)
	}
}

// add counts n bytes and reports ErrByteLimit once the budget is spent.
func (u *usage) add(n int) error {
	if u.used.Add(int64(n)) > u.max && u.max > 0 {
		u.spent.Store(true)
		return ErrByteLimit
	}
	return nil
}

// budget is what a connection counts against: the sandbox's usage, under
// the attribution of the command current when it was accepted.
type budget struct {
	attr Attribution
	*usage
}

// New returns a proxy that serves nothing until Serve.
func New(opts Options) *Proxy {
	if opts.Limits.MaxConns <= 0 {
		opts.Limits.MaxConns = DefaultMaxConns
	}
	if opts.Limits.DialTimeout <= 0 {
		opts.Limits.DialTimeout = DefaultDialTimeout
	}
	if opts.Limits.IdleTimeout <= 0 {
		opts.Limits.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Dial == nil {
		d := &net.Dialer{}
		opts.Dial = d.DialContext
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{opts: opts, log: log, policy: opts.Policy, conns: map[net.Conn]struct{}{}}
	p.usage = &usage{max: opts.Limits.MaxBytes}
	p.budget = &budget{usage: p.usage}
	return p
}

// Begin starts a new command: later connections are attributed to a.
// They count against the same limits as every earlier command's: the
// limits belong to the sandbox, not to the command.
func (p *Proxy) Begin(a Attribution) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.budget = &budget{attr: a, usage: p.usage}
}

// SetPolicy replaces the policy for later connections (a session whose
// job's mandate changed).
func (p *Proxy) SetPolicy(pol Policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policy = pol
}

// Serve accepts connections on l until l fails or the proxy is closed. It
// closes l on return.
func (p *Proxy) Serve(l net.Listener) error {
	defer l.Close()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.listeners = append(p.listeners, l)
	p.mu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return nil
			}
			return fmt.Errorf("accepting proxy connection: %w", err)
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return nil
		}
		b, pol := p.budget, p.policy
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() {
				p.mu.Lock()
				delete(p.conns, c)
				p.mu.Unlock()
				c.Close()
			}()
			if n := b.conns.Add(1); n > int64(p.opts.Limits.MaxConns) {
				b.conns.Add(-1)
				p.report(b.attr, Event{Time: time.Now(), Decision: Decision{Refusal: RefusedLimit,
					Message: fmt.Sprintf("tether egress: more than %d concurrent connections", p.opts.Limits.MaxConns)}})
				return
			}
			defer b.conns.Add(-1)
			p.handle(c, b, pol)
		}()
	}
}

// Close stops serving: it closes the listeners given to Serve, cuts every
// open connection and waits for their handlers.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for _, l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

func (p *Proxy) report(a Attribution, ev Event) {
	ev.Attribution = a
	if ev.Err != "" {
		p.log.Debug("egress connection failed", "run", a.Run, "command", a.Command, "host", ev.Host, "port", ev.Port, "err", ev.Err)
	}
	if p.opts.Observe != nil {
		p.opts.Observe(ev)
	}
}

func (p *Proxy) decide(pol Policy, b *budget, host string, port int) Decision {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Limits.DialTimeout)
	defer cancel()
	d := pol.Decide(ctx, host, port)
	if d.Allowed && b.exhausted() {
		d = refuse(d.Host, port, RefusedLimit, "", "byte limit of %d bytes for this sandbox reached", b.max)
	}
	if p.opts.OnDecision != nil {
		p.opts.OnDecision(b.attr, d)
	}
	return d
}

// dial connects to the first reachable checked address.
func (p *Proxy) dial(d Decision) (net.Conn, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Limits.DialTimeout)
	defer cancel()
	var errs []error
	for _, a := range d.Addrs {
		addr := netip.AddrPortFrom(a, uint16(d.Port)).String()
		c, err := p.opts.Dial(ctx, "tcp", addr)
		if err == nil {
			return p.track(c), addr, nil
		}
		errs = append(errs, err)
	}
	return nil, "", fmt.Errorf("connecting to %s port %d: %w", d.Host, d.Port, errors.Join(errs...))
}

// track registers an upstream connection so Close cuts it too; closing
// the returned conn unregisters it.
func (p *Proxy) track(c net.Conn) net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
	}
	p.conns[c] = struct{}{}
	return &trackedConn{Conn: c, p: p}
}

type trackedConn struct {
	net.Conn
	p *Proxy
}

func (t *trackedConn) Close() error {
	t.p.mu.Lock()
	delete(t.p.conns, t.Conn)
	t.p.mu.Unlock()
	return t.Conn.Close()
}

func (t *trackedConn) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// handle serves one client connection: SOCKS5 when its first byte is 5,
// otherwise HTTP proxy requests until the client or a response closes.
func (p *Proxy) handle(c net.Conn, b *budget, pol Policy) {
	idle := p.opts.Limits.IdleTimeout
	cr := &limitReader{r: c, conn: c, idle: idle, left: maxHeaderBytes}
	br := bufio.NewReaderSize(cr, clientBufSize)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.socks(c, br, b, pol)
		return
	}
	for {
		cr.left = maxHeaderBytes
		req, err := http.ReadRequest(br)
		if errors.Is(err, errHeaderTooLarge) {
			writeError(c, http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("tether egress: request header larger than %d bytes", maxHeaderBytes))
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !isTimeout(err) && !errors.Is(err, net.ErrClosed) {
				writeError(c, http.StatusBadRequest, "tether egress: malformed proxy request: "+err.Error())
			}
			return
		}
		cr.left = -1 // the body is bounded by the byte budget instead
		if req.Method == http.MethodConnect {
			p.connect(c, br, req, b, pol)
			return
		}
		if !p.forward(c, req, b, pol) {
			return
		}
	}
}

// connect serves a CONNECT request: 403 before tunnelling when refused.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request, b *budget, pol Policy) {
	start := time.Now()
	ev := Event{Time: start, Method: http.MethodConnect}
	host, port, err := splitHostPort(req.Host, 443)
	if err != nil {
		ev.Decision = refuse(req.Host, 0, RefusedInvalid, "", "CONNECT target %q: %v", req.Host, err)
		writeError(c, http.StatusBadRequest, ev.Message)
		p.report(b.attr, ev)
		return
	}
	ev.Decision = p.decide(pol, b, host, port)
	if !ev.Allowed {
		writeError(c, refusalStatus(ev.Refusal), ev.Message)
		p.report(b.attr, ev)
		return
	}
	p.relay(c, br, b, ev, func(dialErr error) error {
		if dialErr != nil {
			writeError(c, http.StatusBadGateway, "tether egress: "+dialErr.Error())
			return dialErr
		}
		_, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		return err
	})
}

// relay is the end of an allowed CONNECT or SOCKS5 request: it dials ev's
// decision, tells the client the outcome with reply (dialErr nil: the
// upstream connection is made; a reply error ends the request), tunnels
// both ways within b and reports ev.
func (p *Proxy) relay(c net.Conn, br *bufio.Reader, b *budget, ev Event, reply func(dialErr error) error) {
	up, addr, err := p.dial(ev.Decision)
	if err != nil {
		ev.Err = err.Error()
		_ = reply(err)
		ev.Duration = time.Since(ev.Time)
		p.report(b.attr, ev)
		return
	}
	defer up.Close()
	ev.Dialled = addr
	if reply(nil) != nil {
		return
	}
	ev.Up, ev.Down, err = p.tunnel(c, br, up, b, p.sniCheck(b, &ev))
	if err != nil {
		ev.Err = err.Error()
	}
	ev.Duration = time.Since(ev.Time)
	p.report(b.attr, ev)
}

// sniCheck returns the tunnel check refusing a TLS session whose server
// name differs from the target: it turns ev into a refusal and reports it
// to OnDecision.
func (p *Proxy) sniCheck(b *budget, ev *Event) func(*bufio.Reader) error {
	return func(br *bufio.Reader) error {
		name, err := helloServerName(br)
		if err == nil && !sniMismatch(ev.Host, name) {
			return nil
		}
		d := refuse(ev.Host, ev.Port, RefusedSNI, "", "TLS server name %q does not match tunnel host %s", name, ev.Host)
		if err != nil {
			d = refuse(ev.Host, ev.Port, RefusedSNI, "", "%v, so its server name cannot be checked against tunnel host %s", err, ev.Host)
		}
		ev.Decision = d
		if p.opts.OnDecision != nil {
			p.opts.OnDecision(b.attr, d)
		}
		return errors.New(d.Message)
	}
}

// forward proxies one absolute-form HTTP request over a fresh upstream
// connection. It reports whether the client connection may carry another
// request.
func (p *Proxy) forward(c net.Conn, req *http.Request, b *budget, pol Policy) (keep bool) {
	start := time.Now()
	ev := Event{Time: start, Method: req.Method}
	defer func() {
		ev.Duration = time.Since(start)
		p.report(b.attr, ev)
	}()
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		ev.Decision = refuse(req.Host, 0, RefusedInvalid, "", "only absolute http:// requests and CONNECT are proxied (got %q)", req.RequestURI)
		writeError(c, http.StatusBadRequest, ev.Message)
		return false
	}
	host, port, err := splitHostPort(req.URL.Host, 80)
	if err != nil {
		ev.Decision = refuse(req.URL.Host, 0, RefusedInvalid, "", "request host %q: %v", req.URL.Host, err)
		writeError(c, http.StatusBadRequest, ev.Message)
		return false
	}
	ev.Decision = p.decide(pol, b, host, port)
	if !ev.Allowed {
		writeError(c, refusalStatus(ev.Refusal), ev.Message)
		return false
	}
	up, addr, err := p.dial(ev.Decision)
	if err != nil {
		ev.Err = err.Error()
		writeError(c, http.StatusBadGateway, "tether egress: "+err.Error())
		return false
	}
	defer up.Close()
	ev.Dialled = addr
	idle := p.opts.Limits.IdleTimeout
	clientClose := req.Close
	removeHopHeaders(req.Header)
	req.RequestURI = ""
	// The Host header goes out as the checked authority: a different Host
	// would let a client reach another virtual host (domain fronting) on
	// an allowed address.
	req.Host = req.URL.Host
	req.Close = true // one request per upstream connection
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		req.Header.Del("Expect")
		if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false
		}
	}
	uc := &countConn{Conn: up, b: b, idle: idle}
	if err := req.Write(uc); err != nil {
		ev.Err = err.Error()
		ev.Up, ev.Down = uc.up, uc.down
		writeError(c, http.StatusBadGateway, "tether egress: sending request upstream: "+err.Error())
		return false
	}
	ur := &limitReader{r: uc, left: maxHeaderBytes}
	resp, err := http.ReadResponse(bufio.NewReader(ur), req)
	ur.left = -1
	if err != nil {
		ev.Err = err.Error()
		ev.Up, ev.Down = uc.up, uc.down
		writeError(c, http.StatusBadGateway, "tether egress: reading response: "+err.Error())
		return false
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	closeDelimited := resp.ContentLength < 0 && !chunked(resp.TransferEncoding) && req.Method != http.MethodHead &&
		resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified && resp.StatusCode >= 200
	resp.Close = clientClose || closeDelimited
	c.SetWriteDeadline(time.Time{})
	// Buffer so the status line and headers leave in one segment.
	bw := bufio.NewWriterSize(&idleWriter{Conn: c, idle: idle}, 32<<10)
	err = resp.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	ev.Up, ev.Down = uc.up, uc.down
	if err != nil {
		ev.Err = err.Error()
		return false
	}
	return !resp.Close
}

// tunnel copies bytes both ways until either side closes, the sandbox's
// byte budget is spent or the connection idles. It returns the bytes sent
// up and down.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, up net.Conn, b *budget, check func(*bufio.Reader) error) (int64, int64, error) {
	idle := p.opts.Limits.IdleTimeout
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var upN, downN int64
	var upErr, downErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		downN, downErr = copyCounted(c, up, b, &last, idle)
		// The destination finished: tell the client, and stop reading it.
		closeWrite(c)
	}()
	if check != nil {
		if err := check(br); err != nil {
			up.Close()
			c.Close()
			<-done
			return 0, downN, err
		}
	}
	// Bytes the client sent after its request header go first.
	if n := br.Buffered(); n > 0 {
		buf, _ := br.Peek(n)
		w, err := up.Write(buf)
		upN = int64(w)
		if err == nil {
			err = b.add(w)
		}
		upErr = err
		br.Discard(n)
	}
	if upErr == nil {
		var n int64
		n, upErr = copyCounted(up, c, b, &last, idle)
		upN += n
	}
	closeWrite(up)
	if upErr != nil {
		// Cut the other direction too.
		up.Close()
		c.Close()
	}
	<-done
	return upN, downN, errors.Join(upErr, downErr)
}

// copyCounted copies src to dst, counting against b, closing both when the
// budget is spent. A read idles out only when neither direction moved for
// idle (last holds the newest activity of either direction).
func copyCounted(dst net.Conn, src net.Conn, b *budget, last *atomic.Int64, idle time.Duration) (int64, error) {
	// A splice returns only once it has moved its whole length, so its
	// bytes are counted late: with a byte budget, copy by reads, which
	// return what has arrived.
	if td, ok := tcpOf(dst); ok && b.max <= 0 {
		if ts, ok := tcpOf(src); ok {
			return spliceCounted(td, ts, b, last, idle)
		}
	}
	buf := make([]byte, 64<<10)
	var n int64
	var armed time.Time // when the read deadline was last pushed back
	for {
		// Pushing the deadline back costs a timer update; once a second
		// is plenty for an idle timeout measured in seconds or minutes.
		if now := time.Now(); now.Sub(armed) > time.Second || idle < 2*time.Second {
			src.SetReadDeadline(now.Add(idle))
			armed = now
		}
		limit := b.reserve(int64(len(buf)))
		if limit == 0 {
			dst.Close()
			src.Close()
			return n, ErrByteLimit
		}
		r, err := src.Read(buf[:limit])
		lerr := b.add(r)
		b.release(limit)
		if r > 0 {
			last.Store(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:r]); werr != nil {
				return n, werr
			}
			n += int64(r)
			if lerr != nil {
				dst.Close()
				src.Close()
				return n, lerr
			}
		}
		if err != nil {
			if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
				continue // the other direction is active
			}
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if errors.Is(err, net.ErrClosed) {
				return n, nil
			}
			return n, err
		}
	}
}

// spliceCounted is copyCounted between two TCP connections without a
// byte budget: the kernel moves the bytes (splice) in bounded chunks, so
// counting and the idle timeout still apply per chunk.
func spliceCounted(dst, src *net.TCPConn, b *budget, last *atomic.Int64, idle time.Duration) (int64, error) {
	const chunk = 256 << 10
	var n int64
	var armed time.Time
	for {
		if now := time.Now(); now.Sub(armed) > time.Second || idle < 2*time.Second {
			src.SetReadDeadline(now.Add(idle))
			armed = now
		}
		r, err := dst.ReadFrom(&io.LimitedReader{R: src, N: chunk})
		lerr := b.add(int(r))
		if r > 0 {
			last.Store(time.Now().UnixNano())
			n += r
			if lerr != nil {
				dst.Close()
				src.Close()
				return n, lerr
			}
		}
		switch {
		case err != nil && isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle:
			continue // the other direction is active
		case err != nil && errors.Is(err, net.ErrClosed):
			return n, nil
		case err != nil:
			return n, err
		case r == 0:
			return n, nil // the source reached EOF
		}
	}
}

// tcpOf unwraps a tracked upstream connection to its TCP connection.
func tcpOf(c net.Conn) (*net.TCPConn, bool) {
	if t, ok := c.(*trackedConn); ok {
		c = t.Conn
	}
	tc, ok := c.(*net.TCPConn)
	return tc, ok
}

// maxHeaderBytes bounds a request or response header, so a hostile
// client or server cannot make tether buffer without end.
const maxHeaderBytes = 1 << 20

var errHeaderTooLarge = errors.New("header too large")

// limitReader fails once left bytes are read (left < 0: no limit) and,
// when conn is set, pushes conn's read deadline back before each read.
type limitReader struct {
	r    io.Reader
	conn net.Conn
	idle time.Duration
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left == 0 {
		return 0, errHeaderTooLarge
	}
	if l.left > 0 && int64(len(p)) > l.left {
		p = p[:l.left]
	}
	if l.conn != nil {
		l.conn.SetReadDeadline(time.Now().Add(l.idle))
	}
	n, err := l.r.Read(p)
	if l.left > 0 {
		l.left -= int64(n)
	}
	return n, err
}

// countConn counts an upstream connection's bytes against a budget and
// refreshes its deadline on each operation.
type countConn struct {
	net.Conn
	b        *budget
	idle     time.Duration
	up, down int64
}

func (c *countConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(p)
	c.down += int64(n)
	if lerr := c.b.add(n); lerr != nil {
		return n, lerr
	}
	return n, err
}

func (c *countConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(p)
	c.up += int64(n)
	if lerr := c.b.add(n); lerr != nil && err == nil {
		return n, lerr
	}
	return n, err
}

// idleWriter refreshes the client connection's write deadline per write.
type idleWriter struct {
	net.Conn
	idle time.Duration
}

func (w *idleWriter) Write(p []byte) (int, error) {
	w.Conn.SetWriteDeadline(time.Now().Add(w.idle))
	return w.Conn.Write(p)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func chunked(te []string) bool { return len(te) > 0 && te[0] == "chunked" }

// hopHeaders are connection-level headers a proxy must not forward.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// splitHostPort splits an authority, defaulting the port.
func splitHostPort(hostport string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port") {
			return "", 0, err
		}
		host, ps = strings.Trim(hostport, "[]"), strconv.Itoa(def)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("invalid port %q", ps)
	}
	if host == "" {
		return "", 0, errors.New("empty host")
	}
	return host, port, nil
}

func refusalStatus(r Refusal) int {
	switch r {
	case RefusedInvalid:
		return http.StatusBadRequest
	case RefusedResolve:
		return http.StatusBadGateway
	case RefusedLimit:
		return http.StatusTooManyRequests
	}
	return http.StatusForbidden
}

// writeError answers the client with a plain-text error and no keep-alive.
func writeError(c net.Conn, status int, msg string) {
	body := msg + "\n"
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Tether-Egress: refused\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}
