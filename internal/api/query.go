package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Page sizes of list endpoints.
const (
	defaultLimit = 50
	maxLimit     = 500
)

func paramError(name, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &apiError{kind: probInvalidParameter, detail: name + ": " + msg, errors: []FieldProblem{{Parameter: name, Message: msg}}}
}

// parseLimit reads ?limit= (1..500, default 50).
func parseLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, paramError("limit", "must be a whole number from 1 to %d, got %q", maxLimit, v)
	}
	return n, nil
}

// encodeCursor makes an opaque cursor: base64url of the JSON of v. Clients
// must pass it back unchanged.
func encodeCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads ?cursor= into v; an absent cursor leaves v unchanged.
func decodeCursor(r *http.Request, v any) error {
	c := r.URL.Query().Get("cursor")
	if c == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || json.Unmarshal(b, v) != nil {
		return paramError("cursor", "is not a cursor returned by this endpoint")
	}
	return nil
}
