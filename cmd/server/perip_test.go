package main

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// echoOnce accepts connections on ln and writes "ok" to each, keeping it
// open until the peer closes it.
func echoOnce(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			_, _ = c.Write([]byte("ok"))
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}()
	}
}

// dialFrom connects to addr from the local address src and reads what
// the server sends first: "ok", or "" when it closed the connection.
func dialFrom(t *testing.T, src, addr string) (net.Conn, string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 2)
	n, _ := io.ReadFull(c, b)
	return c, string(b[:n])
}

func TestLimitPerIP(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	ln := limitPerIP(raw, 2, func() { refused.Add(1) })
	defer ln.Close()
	go echoOnce(ln)
	addr := raw.Addr().String()

	a, got := dialFrom(t, "127.0.0.1", addr)
	if got != "ok" {
		t.Fatalf("first connection: %q", got)
	}
	if _, got := dialFrom(t, "127.0.0.1", addr); got != "ok" {
		t.Fatalf("second connection: %q", got)
	}
	if _, got := dialFrom(t, "127.0.0.1", addr); got != "" {
		t.Errorf("third connection from one address: %q, want closed", got)
	}
	for wait := time.Now().Add(5 * time.Second); refused.Load() != 1 && time.Now().Before(wait); {
		time.Sleep(time.Millisecond) // counted just after the close the client saw
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("refused = %d, want 1", n)
	}
	// Another address has its own places.
	if _, got := dialFrom(t, "127.0.0.2", addr); got != "ok" {
		t.Errorf("another address: %q", got)
	}
	// A closed connection frees its place.
	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, got := dialFrom(t, "127.0.0.1", addr); got == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the place of a closed connection was not freed")
		}
		time.Sleep(10 * time.Millisecond) // the server sees the close asynchronously
	}
}
