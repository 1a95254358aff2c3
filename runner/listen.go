package runner

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// limitListener holds at most cap(sem) connections open at once. A
// connection over the limit is answered 503 and closed at once, so a
// flood of idle connections cannot take every file descriptor, and a
// client over the limit learns why instead of hanging in the backlog.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func newLimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n)}
}

// overLimit is the whole answer to a connection over the limit.
func overLimit(n int) string {
	body := fmt.Sprintf(`{"error":"tether serve has %d connections open, its limit; retry later or close idle connections"}`+"\n", n)
	return fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = io.WriteString(c, overLimit(cap(l.sem)))
				_ = c.Close()
			}()
		}
	}
}

// limitConn gives its slot back when closed (once).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
