package otlp

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
)

// gRPC status codes of the google.rpc.Status bodies OTLP/HTTP errors carry.
const (
	codeInvalidArgument   = 3
	codeResourceExhausted = 8
	codeInternal          = 13
	codeUnavailable       = 14
)

// Export serves one OTLP/HTTP export request (POST /v1/traces) for a
// project, as the OTLP specification's HTTP transport says:
//
//   - the body is application/x-protobuf or application/json (else 415),
//     gzip-compressed or not (another Content-Encoding is 415), at most
//     MaxBodyBytes once decompressed and of at most MaxMessages messages
//     (else 413);
//   - a malformed body is 400 with a google.rpc.Status, not retryable;
//   - success is 200 with an ExportTraceServiceResponse in the request's
//     encoding, sent only after the spans are committed; spans with invalid
//     ids are left out and counted in partial_success (rejected_spans,
//     error_message), the others stored;
//   - more than MaxExports requests at once is 429, the database
//     unreachable or the server stopping 503, both with Retry-After (1 s
//     and 5 s), which exporters retry after that delay.
func (s *Service) Export(w http.ResponseWriter, r *http.Request, projectID int64) {
	enc, err := ParseContentType(r.Header.Get("Content-Type"))
	if err != nil {
		s.fail(w, r, enc, http.StatusUnsupportedMediaType, codeInvalidArgument, err.Error(), 0)
		return
	}
	select {
	case s.exports <- struct{}{}:
		defer func() { <-s.exports }()
	default:
		s.fail(w, r, enc, http.StatusTooManyRequests, codeResourceExhausted, "too many exports in progress; retry after the delay", 1)
		return
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		s.fail(w, r, enc, http.StatusRequestEntityTooLarge, codeInvalidArgument, "the body exceeds "+strconv.FormatInt(s.cfg.MaxBodyBytes, 10)+" bytes", 0)
		return
	}
	body, err := ReadBody(r.Body, r.Header.Get("Content-Encoding"), s.cfg.MaxBodyBytes)
	var bad *BadRequestError
	switch {
	case errors.Is(err, ErrTooLarge):
		s.fail(w, r, enc, http.StatusRequestEntityTooLarge, codeInvalidArgument, err.Error(), 0)
		return
	case errors.Is(err, ErrEncoding):
		s.fail(w, r, enc, http.StatusUnsupportedMediaType, codeInvalidArgument, err.Error(), 0)
		return
	case errors.As(err, &bad):
		s.fail(w, r, enc, http.StatusBadRequest, codeInvalidArgument, bad.Msg, 0)
		return
	case err != nil:
		// The client went away or the connection broke mid-body.
		s.fail(w, r, enc, http.StatusBadRequest, codeInvalidArgument, "reading the body: "+err.Error(), 0)
		return
	}
	req, err := DecodeRequest(body, enc)
	if errors.Is(err, ErrTooLarge) {
		s.fail(w, r, enc, http.StatusRequestEntityTooLarge, codeInvalidArgument, err.Error(), 0)
		return
	}
	if err != nil {
		s.fail(w, r, enc, http.StatusBadRequest, codeInvalidArgument, err.Error(), 0)
		return
	}
	var raw []byte
	if enc == Protobuf {
		raw = body // (decompressed) protobuf, storable as it is when it is one trace
	}
	rc, err := s.Receive(r.Context(), projectID, req, raw)
	switch {
	case errors.Is(err, engine.ErrUnavailable):
		s.fail(w, r, enc, http.StatusServiceUnavailable, codeUnavailable, "the database is unavailable; retry after the delay", 5)
		return
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		s.fail(w, r, enc, http.StatusServiceUnavailable, codeUnavailable, "the request ended before its spans were stored; retry", 1)
		return
	case err != nil:
		s.log.Error("store spans", zap.Error(err))
		s.fail(w, r, enc, http.StatusInternalServerError, codeInternal, "internal error", 0)
		return
	}
	b := EncodeResponse(enc, rc.Rejected, rc.Message)
	w.Header().Set("Content-Type", enc.ContentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// fail answers an export with an error status and a google.rpc.Status
// body in the request's encoding (protobuf when it is unknown).
func (s *Service) fail(w http.ResponseWriter, _ *http.Request, enc Encoding, status int, code int32, msg string, retryAfter int) {
	b := EncodeStatus(enc, code, msg)
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.Header().Set("Content-Type", enc.ContentType())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
