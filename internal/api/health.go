package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
)

func (s *Server) healthRoutes(r chi.Router) {
	// HEAD is allowed too, for probes and load balancers that use it.
	r.Get("/healthz", s.handlePublic(s.healthz))
	r.Head("/healthz", s.handlePublic(s.healthz))
	r.Get("/readyz", s.handlePublic(s.readyz))
	r.Head("/readyz", s.handlePublic(s.readyz))
	r.Get("/openapi.yaml", s.handlePublic(s.openapi))
}

// healthz answers 200 while the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, mediaJSON, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 when the database answers (within 2 s) and its
// schema is current, else 503 not-ready with Retry-After: 5 (never the
// driver's error text, which may name hosts, users and databases).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ready(ctx); err != nil {
		// The driver's message may name hosts, users and databases: only
		// the store's own schema messages are shown.
		detail := "not ready: the database is unreachable or cannot be used; see the server log"
		if !errors.Is(err, engine.ErrUnavailable) && ctx.Err() == nil {
			detail = "not ready: " + err.Error()
		}
		s.log.Warn("not ready", zap.String("request_id", RequestIDFrom(r.Context())), zap.Error(err))
		return &apiError{kind: probNotReady, detail: detail, retryAfter: 5, cause: err}
	}
	writeJSON(w, mediaJSON, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// openapi serves the OpenAPI 3.1 document, with its length (which HEAD
// answers too).
func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.cfg.OpenAPI)))
	_, _ = w.Write(s.cfg.OpenAPI)
	return nil
}
