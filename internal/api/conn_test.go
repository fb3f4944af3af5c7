package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/workload"
)

// countingListener counts the writes to its connections.
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// TestCoalesceWrites checks that a medium evaluation's answer (larger
// than net/http's 4 KB connection buffer) leaves a CoalesceWrites
// connection in one write, with the bytes net/http would send, request
// after request on one kept-alive connection, and that a small answer
// still leaves in one.
func TestCoalesceWrites(t *testing.T) {
	s := New(Config{Store: newFakeStore(), Registerer: prometheus.NewRegistry(), Workers: 1, AuthOff: true})
	defer s.Close()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: inner}
	hs := &http.Server{Handler: s.Handler(), ConnContext: ConnContext}
	go func() { _ = hs.Serve(CoalesceWrites(counted)) }()
	defer hs.Close()

	req, err := json.Marshal(map[string]any{
		"contract": json.RawMessage(workload.Contract(workload.Medium)),
		"trace":    json.RawMessage(workload.OpenAITrace(workload.Medium)),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/evaluations?store=false", bytes.NewReader(req))
	r.Header.Set("Content-Type", "application/json")
	s.Handler().ServeHTTP(rec, r)
	want := rec.Body.Bytes()
	if rec.Code != 200 || len(want) <= 4<<10 {
		t.Fatalf("recorder: %d, %d bytes; want 200 and an answer over 4 KB", rec.Code, len(want))
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	url := "http://" + inner.Addr().String()
	for i := range 3 {
		before := counted.count()
		resp, err := client.Post(url+"/v1/evaluations?store=false", "application/json", bytes.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Fatalf("request %d: %d, %d bytes; want 200 and the recorder's %d bytes", i, resp.StatusCode, len(got), len(want))
		}
		if n := counted.count() - before; n != 1 {
			t.Errorf("request %d: the answer took %d writes, want 1", i, n)
		}
	}
	before := counted.count()
	resp, err := client.Get(url + "/v1/evaluations/not-a-uuid")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("GET a bad id: %d, want 400", resp.StatusCode)
	}
	if n := counted.count() - before; n != 1 {
		t.Errorf("a small answer took %d writes, want 1", n)
	}
}
