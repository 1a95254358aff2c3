package egress

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Namespace is a network namespace made for one sandbox from the host
// side: loopback up and nothing else (no route anywhere), with a TCP
// listener on 127.0.0.1 inside it that tether serves from the host. A
// sandbox joins it by Path; programs inside reach the proxy through the
// environment from Env. Creating one needs CAP_SYS_ADMIN (root).
//
// The caller must call Close. Methods are safe for concurrent use.
type Namespace struct {
	fd       *os.File // pins the namespace while tether holds it
	listener net.Listener
	port     int
}

// NewNamespace creates the namespace and its proxy listener.
//
// The namespace work runs on a dedicated OS thread that is never returned
// to the Go scheduler: the goroutine locks it, unshares, and exits still
// locked, so the runtime discards the thread instead of running other
// goroutines in the sandbox's namespace.
func NewNamespace() (*Namespace, error) {
	type result struct {
		ns  *Namespace
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		ns, err := newNamespaceOnThread()
		ch <- result{ns, err}
	}()
	r := <-ch
	return r.ns, r.err
}

// Preconditions: the calling goroutine is locked to a thread it abandons.
func newNamespaceOnThread() (*Namespace, error) {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("creating network namespace: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return nil, err
	}
	fd, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("opening network namespace: %w", err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("listening in network namespace: %w", err)
	}
	return &Namespace{fd: fd, listener: l, port: l.Addr().(*net.TCPAddr).Port}, nil
}

// loopbackUp sets IFF_UP on lo in the current thread's namespace.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	return nil
}

// Path is a path naming the namespace, for setns or for a container
// config's network namespace path. It stays valid until Close and only
// while this process lives.
func (n *Namespace) Path() string {
	return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(int(n.fd.Fd()))
}

// Listener is the proxy's listening socket inside the namespace; pass it
// to Proxy.Serve (which closes it).
func (n *Namespace) Listener() net.Listener { return n.listener }

// ProxyURL is the proxy's address as seen from inside the namespace.
func (n *Namespace) ProxyURL() string { return "http://127.0.0.1:" + strconv.Itoa(n.port) }

// Env returns the proxy variables for a command in the namespace, in both
// cases. NO_PROXY covers loopback, which inside the namespace is only the
// sandbox's own. The same port also speaks SOCKS5 for clients configured
// with socks5h://127.0.0.1:PORT.
func (n *Namespace) Env() []string {
	u := n.ProxyURL()
	const noProxy = "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + u, "http_proxy=" + u,
		"HTTPS_PROXY=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

// Dial connects from inside the namespace (on a thread that is then
// discarded). Tether uses it for health checks; tests use it as an
// in-sandbox client.
func (n *Namespace) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if err := unix.Setns(int(n.fd.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("entering network namespace: %w", err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, address)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// Close releases the namespace; it disappears once no process is in it.
// It closes the listener too (harmless if Serve already did).
func (n *Namespace) Close() error {
	n.listener.Close()
	return n.fd.Close()
}
