package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// checkQuery refuses a malformed query string (a bad %-escape) and query
// values that cannot be stored or compared as Postgres text (a NUL
// character or bytes that are not UTF-8), naming the parameter.
//
// Errors: 400 invalid-parameter.
func checkQuery(r *http.Request) error {
	raw := r.URL.RawQuery
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return paramError(k, "the query string is malformed: the parameter name %q is not validly %%-escaped", k)
		}
		if p := textProblem(key); p != "" {
			return paramError(strings.ToValidUTF8(strings.ReplaceAll(key, "\x00", `\u0000`), "\uFFFD"), "the parameter name %s", p)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return paramError(key, "the query string is malformed: the value %q is not validly %%-escaped", v)
		}
		if p := textProblem(val); p != "" {
			return paramError(key, "%s", p)
		}
	}
	return nil
}
