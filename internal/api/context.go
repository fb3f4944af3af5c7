package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"

	"github.com/toolscore/toolscore/internal/auth"
)

// ctxKey is the unexported type of this package's context keys.
type ctxKey int

const (
	requestIDKey ctxKey = iota
)

// RequestIDFrom returns the request id set by the server's middleware, ""
// outside a request.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// ProjectFrom returns the project of the request's principal
// (auth.FromContext), 0 (which no row has) outside an authenticated
// request.
func ProjectFrom(ctx context.Context) int64 {
	if p, ok := auth.FromContext(ctx); ok {
		return p.ProjectID
	}
	return 0
}

// requestIDs makes request ids: a random per-process prefix and a counter.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

func (g *requestIDs) next() string {
	return g.prefix + strconv.FormatUint(g.n.Add(1), 10)
}

// validRequestID reports whether a client's X-Request-Id may be reused: 1
// to 64 characters of [A-Za-z0-9._-].
func validRequestID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
