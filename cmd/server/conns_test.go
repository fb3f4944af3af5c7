package main

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/netutil"
)

// startLimited serves "ok" on a listener limited to maxConns connections,
// as Run does, with an idle timeout far longer than the test.
func startLimited(t *testing.T, maxConns int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var open atomic.Int64
	hs := &http.Server{
		Handler: closeWhenFull(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}), &open, maxConns),
		ConnState:   countConns(&open),
		IdleTimeout: time.Hour,
	}
	go func() { _ = hs.Serve(netutil.LimitListener(ln, maxConns)) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String()
}

// get does one GET on its own keep-alive transport and reports whether
// the server closes the connection after it (Connection: close).
func get(t *testing.T, url string) bool {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	t.Cleanup(c.CloseIdleConnections)
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("body = %q", b)
	}
	return resp.Close
}

func TestCloseWhenFull(t *testing.T) {
	t.Run("below the limit connections stay open", func(t *testing.T) {
		url := startLimited(t, 2)
		if get(t, url) {
			t.Fatal("connection closed below the limit, want keep-alive")
		}
	})
	t.Run("at the limit each answer frees its place", func(t *testing.T) {
		url := startLimited(t, 1)
		if !get(t, url) {
			t.Fatal("connection kept alive at the limit, want Connection: close")
		}
		// Had the first client's connection stayed open (idle for up to an
		// hour), this one would wait in the accept queue until the
		// client's minute-long timeout.
		if !get(t, url) {
			t.Fatal("second client: connection kept alive at the limit, want Connection: close")
		}
	})
}
