package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of the test Postgres server that a test can
// stop (Down: close the listener and cut every connection) and start again
// on the same port (Up), to simulate Postgres going away and coming back.
type Proxy struct {
	tb     testing.TB
	target string // host:port of Postgres
	addr   string // host:port the proxy listens on
	dbURL  *url.URL

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the server of dbURL and stops it when the test
// ends.
func NewProxy(tb testing.TB, dbURL string) *Proxy {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{tb: tb, target: u.Host, dbURL: u, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	tb.Cleanup(p.Down)
	return p
}

// URL returns dbURL with the proxy's address as host.
func (p *Proxy) URL() string {
	u := *p.dbURL
	u.Host = p.addr
	return u.String()
}

// Down closes the listener and every proxied connection.
func (p *Proxy) Down() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens again on the same address.
func (p *Proxy) Up() {
	p.tb.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.tb.Fatalf("proxy up: %v", err)
	}
	p.serve(ln)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
				p.mu.Lock()
				delete(p.conns, dst)
				delete(p.conns, src)
				p.mu.Unlock()
			}
			p.wg.Go(func() { pipe(up, c) })
			p.wg.Go(func() { pipe(c, up) })
		}
	})
}
