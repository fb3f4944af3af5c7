package api

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// net/http writes an answer through a 4 KB buffer per connection, so an
// answer larger than that (a medium evaluation is about 7.5 KB) leaves in
// two write calls or more, each a trip through the kernel's network stack
// and a wake-up of the client. A connection of CoalesceWrites' listener
// can instead hold what net/http writes while a handler sends one answer
// whose bytes it has (sendWhole), and pass it on in one write.

// CoalesceWrites returns ln, whose connections can send a whole answer in
// one write (ConnContext must be the http.Server's ConnContext for the
// handlers to find them). Reads, deadlines and Close are the connection's
// own.
func CoalesceWrites(ln net.Listener) net.Listener { return coalescingListener{ln} }

// ConnContext is an http.Server ConnContext hook: it lets the handlers of
// a connection that CoalesceWrites' listener accepted reach it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*coalescingConn); ok {
		return context.WithValue(ctx, coalescingKey{}, cc)
	}
	return ctx
}

// coalescingKey is the context key of a handler's coalescingConn.
type coalescingKey struct{}

// coalescingListener is the listener CoalesceWrites returns.
type coalescingListener struct{ net.Listener }

// Accept returns the next connection as a coalescingConn.
func (l coalescingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalescingConn{Conn: c}, nil
}

// coalescingConn is a connection that holds what is written to it between
// hold and release.
type coalescingConn struct {
	net.Conn
	mu   sync.Mutex
	held *[]byte // while holding: the bytes written since hold
}

// heldBuffers keeps the buffers of held bytes between answers (*[]byte).
var heldBuffers sync.Pool

// maxHeld is the largest buffer heldBuffers keeps.
const maxHeld = 256 << 10

// Write keeps p while the connection holds (see hold), else writes it.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.held != nil {
		*c.held = append(*c.held, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// hold makes the connection keep what is written to it until release.
func (c *coalescingConn) hold() {
	bp, _ := heldBuffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = (*bp)[:0]
	c.mu.Lock()
	c.held = bp
	c.mu.Unlock()
}

// release writes what was held in one write and stops holding.
func (c *coalescingConn) release() error {
	c.mu.Lock()
	bp := c.held
	c.held = nil
	c.mu.Unlock()
	if bp == nil {
		return nil
	}
	var err error
	if len(*bp) > 0 {
		_, err = c.Conn.Write(*bp)
	}
	if cap(*bp) <= maxHeld {
		heldBuffers.Put(bp)
	}
	return err
}

// sendWhole answers r with status and the JSON body b (Content-Type
// application/json and Content-Length set): in one write of headers and
// body when r's connection can (CoalesceWrites) and b is larger than what
// net/http's buffer sends with the headers in one write anyway.
func sendWhole(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{mediaJSON}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	var c *coalescingConn
	if len(b) > 2<<10 && r != nil {
		c, _ = r.Context().Value(coalescingKey{}).(*coalescingConn)
	}
	if c == nil {
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	c.hold()
	defer func() { _ = c.release() }() // an error shows in the connection's next read
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_ = http.NewResponseController(w).Flush()
}
