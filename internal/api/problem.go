package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// ProblemTypeBase prefixes every problem type URI. The URIs are stable
// identifiers (RFC 9457 section 3.1.1); the list with their statuses is in
// openapi.yaml (components/schemas/Problem).
const ProblemTypeBase = "https://toolscore.dev/problems/"

// Problem is an RFC 9457 problem details object, sent as
// application/problem+json for every error.
type Problem struct {
	// Type is ProblemTypeBase + a stable slug such as "invalid-json".
	Type string `json:"type"`
	// Title is a short summary that depends only on Type.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence; for 5xx it is generic.
	Detail string `json:"detail,omitempty"`
	// Instance is the request path.
	Instance string `json:"instance,omitempty"`
	// RequestID is the request's X-Request-Id, to find it in the logs.
	RequestID string `json:"request_id,omitempty"`
	// Errors lists every problem of a 4xx with its place: a JSON pointer
	// into the body or a query parameter name.
	Errors []FieldProblem `json:"errors,omitempty"`
	// Offset, Line and Column locate a JSON syntax error (400 invalid-json):
	// 0-based byte offset, 1-based line and column (in bytes). Pointer is
	// the RFC 6901 JSON pointer of the value being read there ("" for the
	// top level: an empty body, a key or data after the document), nil
	// when not known.
	Offset  *int64  `json:"offset,omitempty"`
	Line    int     `json:"line,omitempty"`
	Column  int     `json:"column,omitempty"`
	Pointer *string `json:"pointer,omitempty"`
	// MissingScope names the scope the key lacks (403 forbidden).
	MissingScope string `json:"missing_scope,omitempty"`
}

// FieldProblem is one problem at one place of a request: Pointer is an
// RFC 6901 JSON pointer into the body ("" for the whole body), Parameter a
// query parameter or header name.
type FieldProblem struct {
	Pointer   string `json:"pointer,omitempty"`
	Parameter string `json:"parameter,omitempty"`
	Message   string `json:"message"`
}

// MarshalJSON writes pointer whenever parameter is empty, so that the
// root pointer "" (the whole body) is kept.
func (p FieldProblem) MarshalJSON() ([]byte, error) {
	if p.Parameter != "" {
		type plain FieldProblem
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Pointer string `json:"pointer"`
		Message string `json:"message"`
	}{p.Pointer, p.Message})
}

// problemKind is one stable problem type.
type problemKind struct {
	slug   string
	title  string
	status int
}

// The problem types. Their slugs never change.
var (
	probInvalidJSON      = problemKind{"invalid-json", "Request body is not valid JSON", http.StatusBadRequest}
	probInvalidParameter = problemKind{"invalid-parameter", "Invalid query parameter or header", http.StatusBadRequest}
	probUnauthorized     = problemKind{"unauthorized", "Missing or invalid API key", http.StatusUnauthorized}
	probForbidden        = problemKind{"forbidden", "The API key lacks a scope", http.StatusForbidden}
	probNotFound         = problemKind{"not-found", "Resource not found", http.StatusNotFound}
	probMethod           = problemKind{"method-not-allowed", "Method not allowed", http.StatusMethodNotAllowed}
	probIdempotency      = problemKind{"idempotency-conflict", "Idempotency-Key reused with another request", http.StatusConflict}
	probConflict         = problemKind{"conflict", "Resource already exists", http.StatusConflict}
	probTooLarge         = problemKind{"body-too-large", "Request body too large", http.StatusRequestEntityTooLarge}
	probBodyTimeout      = problemKind{"body-timeout", "Request body too slow", http.StatusRequestTimeout}
	// probClientClosed is what a request the client abandoned is counted
	// as (nginx's 499): the client is gone, so nobody reads it.
	probClientClosed    = problemKind{"client-closed-request", "Client closed the request", 499}
	probMediaType       = problemKind{"unsupported-media-type", "Unsupported media type", http.StatusUnsupportedMediaType}
	probInvalidRequest  = problemKind{"invalid-request", "Request body has invalid fields", http.StatusUnprocessableEntity}
	probInvalidContract = problemKind{"invalid-contract", "Invalid contract", http.StatusUnprocessableEntity}
	probUnknownContract = problemKind{"unknown-contract", "Unknown contract reference", http.StatusUnprocessableEntity}
	probInvalidTrace    = problemKind{"invalid-trace", "Trace cannot be read", http.StatusUnprocessableEntity}
	probInvalidOptions  = problemKind{"invalid-options", "Invalid evaluation options", http.StatusUnprocessableEntity}
	probQueueFull       = problemKind{"queue-full", "Too many evaluations queued", http.StatusTooManyRequests}
	probInternal        = problemKind{"internal", "Internal server error", http.StatusInternalServerError}
	probUnavailable     = problemKind{"unavailable", "Database unavailable", http.StatusServiceUnavailable}
	probTimeout         = problemKind{"timeout", "Evaluation timed out", http.StatusServiceUnavailable}
	probBusy            = problemKind{"busy", "Server busy", http.StatusServiceUnavailable}
	probNotReady        = problemKind{"not-ready", "Not ready", http.StatusServiceUnavailable}
)

// apiError is an error that knows its problem. Handlers return it (or any
// error; see problemFor).
type apiError struct {
	kind   problemKind
	detail string
	errors []FieldProblem
	syntax *engine.SyntaxError
	// noPointer says that syntax.Pointer is not known (syntaxError).
	noPointer  bool
	retryAfter int // seconds; 0 for no Retry-After header
	cause      error
	// invalidToken adds error="invalid_token" to a 401's WWW-Authenticate
	// header (a token was sent but is no key).
	invalidToken bool
	// missingScope is the scope a 403 names.
	missingScope string
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return e.kind.slug + ": " + e.detail + ": " + e.cause.Error()
	}
	return e.kind.slug + ": " + e.detail
}

func (e *apiError) Unwrap() error { return e.cause }

func newError(k problemKind, format string, args ...any) *apiError {
	return &apiError{kind: k, detail: fmt.Sprintf(format, args...)}
}

// fieldErrors converts engine field errors, prefixing their pointers with
// prefix (the place of the document inside the request body).
func fieldErrors(prefix string, errs []engine.FieldError) []FieldProblem {
	out := make([]FieldProblem, len(errs))
	for i, e := range errs {
		out[i] = FieldProblem{Pointer: prefix + e.Pointer, Message: e.Message}
	}
	return out
}

// errQueueFull is returned by Pool.Do when the queue is full.
var errQueueFull = errors.New("evaluation queue is full")

// errEvalTimeout is returned by the pool when an evaluation exceeded the
// per-evaluation timeout.
var errEvalTimeout = errors.New("evaluation exceeded the per-evaluation timeout")

// errPoolClosed is returned by the pool after Close.
var errPoolClosed = errors.New("server is shutting down")

// problemFor is the one table mapping errors to problems (STYLE.md
// section 3). prefix is where a contract lies in the request body, for
// engine validation errors.
func problemFor(err error) *apiError {
	var ae *apiError
	var ve *engine.ValidationError
	var se *engine.SyntaxError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &se):
		return &apiError{kind: probInvalidJSON, detail: se.Error(), syntax: se, cause: err}
	case errors.As(err, &ve) && errors.Is(err, engine.ErrInvalidContract):
		return &apiError{kind: probInvalidContract, detail: "the contract does not validate", errors: fieldErrors("", ve.Errors), cause: err}
	case errors.As(err, &ve) && errors.Is(err, engine.ErrInvalidOptions):
		return &apiError{kind: probInvalidOptions, detail: "the evaluation options are invalid", errors: fieldErrors("", ve.Errors), cause: err}
	case errors.Is(err, engine.ErrInvalidTrace):
		return &apiError{kind: probInvalidTrace, detail: err.Error(), errors: []FieldProblem{{Pointer: "/trace", Message: err.Error()}}, cause: err}
	case errors.Is(err, record.ErrInvalidText):
		return &apiError{kind: probInvalidRequest, detail: "a text value holds a NUL character (\\u0000) or invalid UTF-8, which cannot be stored",
			errors: []FieldProblem{{Pointer: "", Message: "a text value holds a NUL character (\\u0000) or invalid UTF-8"}}, cause: err}
	case errors.Is(err, engine.ErrNotFound):
		return &apiError{kind: probNotFound, detail: "no such resource", cause: err}
	case errors.Is(err, engine.ErrConflict):
		return &apiError{kind: probIdempotency, detail: err.Error(), cause: err}
	case errors.Is(err, engine.ErrUnavailable):
		return &apiError{kind: probUnavailable, detail: "the database is unavailable; retry later", retryAfter: 5, cause: err}
	case errors.Is(err, errQueueFull):
		return &apiError{kind: probQueueFull, detail: "the evaluation queue is full; retry later", retryAfter: 1, cause: err}
	case errors.Is(err, errEvalTimeout):
		return &apiError{kind: probTimeout, detail: "the evaluation took longer than the per-evaluation timeout", cause: err}
	case errors.Is(err, errPoolClosed):
		return &apiError{kind: probBusy, detail: "the server is shutting down", retryAfter: 1, cause: err}
	case errors.Is(err, context.Canceled):
		// The request's context ends when its client goes away.
		return &apiError{kind: probClientClosed, detail: "the client closed the connection before the answer", cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{kind: probBusy, detail: "the request ended before its work could run; retry later", retryAfter: 1, cause: err}
	}
	return &apiError{kind: probInternal, detail: "internal error; see the server log for the request id", cause: err}
}

// problem builds the Problem body of an error for request r.
func (e *apiError) problem(r *http.Request) Problem {
	p := Problem{
		Type:         ProblemTypeBase + e.kind.slug,
		Title:        e.kind.title,
		Status:       e.kind.status,
		Detail:       e.detail,
		Instance:     r.URL.Path,
		RequestID:    RequestIDFrom(r.Context()),
		Errors:       e.errors,
		MissingScope: e.missingScope,
	}
	if e.syntax != nil {
		off := int64(e.syntax.Offset)
		p.Offset, p.Line, p.Column = &off, e.syntax.Line, e.syntax.Column
		if !e.noPointer {
			ptr := e.syntax.Pointer
			p.Pointer = &ptr
		}
	}
	return p
}

// writeError sends err as problem+json. 5xx errors other than
// unavailability are logged once, here, with the request id.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := problemFor(err)
	if ae.kind.status >= 500 && ae.kind != probUnavailable && ae.kind != probBusy && ae.kind != probNotReady {
		s.log.Error("request failed", zap.String("request_id", RequestIDFrom(r.Context())),
			zap.String("route", routePattern(r)), zap.Error(err))
	}
	if ae.kind == probUnauthorized {
		// RFC 6750 section 3.
		h := `Bearer realm="toolscore"`
		if ae.invalidToken {
			h += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", h)
	}
	if ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	writeJSON(w, "application/problem+json", ae.kind.status, ae.problem(r))
}

// writeJSON sends v as JSON with the given content type and status.
func writeJSON(w http.ResponseWriter, contentType string, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"type":"` + ProblemTypeBase + `internal","title":"Internal server error","status":500}`)
		contentType, status = "application/problem+json", http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
