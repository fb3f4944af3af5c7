package main

import (
	"net"
	"net/netip"
	"sync"
)

// perIPListener caps the connections open at once from one remote address
// (slow-header and slow-body clients, "slowloris", then stall only
// themselves: the other clients keep their places under the server's
// overall limit). A connection over the cap is closed as soon as it is
// accepted, and counted by refused.
type perIPListener struct {
	net.Listener
	max     int
	refused func()

	mu    sync.Mutex
	conns map[netip.Addr]int
}

// limitPerIP wraps ln so that at most max connections per remote IP
// address are open; max <= 0 returns ln unchanged. refused, when non-nil,
// is called for each connection closed at the cap.
func limitPerIP(ln net.Listener, max int, refused func()) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perIPListener{Listener: ln, max: max, refused: refused, conns: map[netip.Addr]int{}}
}

// Accept implements net.Listener, closing connections over the cap.
func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		l.mu.Lock()
		if l.conns[ip] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			if l.refused != nil {
				l.refused()
			}
			continue
		}
		l.conns[ip]++
		l.mu.Unlock()
		return &perIPConn{Conn: c, l: l, ip: ip}, nil
	}
}

// remoteIP returns a connection's remote address (the zero Addr for one
// that is not TCP or UDP: all such connections share one count).
func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// perIPConn releases its place when closed (once).
type perIPConn struct {
	net.Conn
	l    *perIPListener
	ip   netip.Addr
	once sync.Once
}

// Close implements net.Conn.
func (c *perIPConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.l.conns[c.ip]--; c.l.conns[c.ip] <= 0 {
			delete(c.l.conns, c.ip)
		}
		c.l.mu.Unlock()
	})
	return err
}
