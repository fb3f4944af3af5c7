package api

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
)

// requestID sets the request id (the client's valid X-Request-Id, or a new
// one) on the context and the response, and the default project.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = s.ids.next()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routePattern returns the chi route pattern of a request, "unmatched"
// when no route matched.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// observe logs one line per request and records the HTTP metrics, by route
// pattern (never the raw path, to keep label cardinality low). It logs
// ids, status, sizes and latency, never bodies.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		elapsed := time.Since(start)
		route, code := routePattern(r), strconv.Itoa(sw.status)
		s.metrics.httpRequests.WithLabelValues(route, r.Method, code).Inc()
		s.metrics.httpDuration.WithLabelValues(route, r.Method, code).Observe(elapsed.Seconds())
		if ce := s.log.Check(zap.InfoLevel, "request"); ce != nil {
			ce.Write(
				zap.String("request_id", RequestIDFrom(r.Context())),
				zap.String("method", r.Method),
				zap.String("route", route),
				zap.Int("status", sw.status),
				zap.Duration("latency", elapsed),
				zap.Int64("request_bytes", r.ContentLength),
				zap.Int64("response_bytes", sw.bytes),
			)
		}
	})
}

// recoverer turns a handler panic into a logged 500 problem.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panicked", zap.String("request_id", RequestIDFrom(r.Context())),
					zap.String("panic", fmt.Sprint(v)), zap.ByteString("stack", debug.Stack()))
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
