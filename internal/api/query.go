package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
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
	if err != nil || json.Unmarshal(b, v) != nil || !validCursor(v) {
		return paramError("cursor", "is not a cursor returned by this endpoint")
	}
	return nil
}

// validCursor reports whether a decoded cursor is one this server could
// have made (a cursor such as {} decodes without error into zero values).
func validCursor(v any) bool {
	switch v := v.(type) {
	case *int:
		return *v > 0
	case *string:
		return *v != ""
	case *resultCursor:
		return !v.T.IsZero() && v.ID != uuid.Nil
	case *regradeCursor:
		return v.After != uuid.Nil
	}
	return true
}

// checkQuery refuses a malformed query string (a bad %-escape), query
// values that cannot be stored or compared as Postgres text (a NUL
// character or bytes that are not UTF-8) and query parameters the route
// does not read, naming the parameter.
//
// Errors: 400 invalid-parameter.
func checkQuery(r *http.Request) error {
	if err := checkQueryText(r); err != nil {
		return err
	}
	return checkParams(r)
}

// checkQueryText refuses a malformed query string or a query value that is
// not UTF-8 text without NUL.
func checkQueryText(r *http.Request) error {
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

// The query parameters of the result filters (parseFilter).
var filterParams = []string{"contract", "task_id", "run_id", "agent", "label", "passed", "grade", "since", "until", "regrades"}

// queryParams lists the query parameters each route reads, by method and
// route pattern; checkParams refuses any other on these routes. Routes not
// listed (health, metrics) are not checked. A test keeps it equal to the
// parameters openapi.yaml documents.
var queryParams = map[string][]string{
	"GET /v1/contracts":                           {"limit", "cursor"},
	"GET /v1/contracts/{name}/versions":           {"limit", "cursor"},
	"POST /v1/contracts/{name}/versions":          nil,
	"GET /v1/contracts/{name}/versions/{version}": nil,
	"POST /v1/validate":                           nil,
	"POST /v1/evaluations":                        {"store"},
	"POST /v1/evaluations/batch":                  {"store"},
	"GET /v1/evaluations":                         append([]string{"limit", "cursor", "latest"}, filterParams...),
	"GET /v1/evaluations/{id}":                    nil,
	"GET /v1/stats":                               append([]string{"group_by"}, filterParams...),
	"GET /v1/stats/compare":                       {"contract", "a", "b", "task_id", "run_id", "agent", "label"},
	"POST /v1/regrades":                           nil,
	"GET /v1/regrades/{id}":                       nil,
	"DELETE /v1/regrades/{id}":                    nil,
	"POST /v1/regrades/{id}/cancel":               nil,
	"GET /v1/regrades/{id}/changes":               {"limit", "cursor"},
	"GET /v1/regrades/{id}/failures":              {"limit", "cursor"},
	"POST /v1/runs":                               nil,
	"GET /v1/runs":                                {"limit", "cursor"},
	"GET /v1/runs/{id}":                           nil,
	"DELETE /v1/runs/{id}":                        nil,
	"POST /v1/keys":                               nil,
	"GET /v1/keys":                                {"limit", "cursor"},
	"DELETE /v1/keys/{id}":                        nil,
	"POST /v1/projects":                           nil,
	"GET /v1/projects":                            nil,
	"POST /v1/traces":                             nil,
	"GET /v1/traces/{trace_id}":                   nil,
	"POST /v1/traces/regrade":                     nil,
	"GET /v1/rules":                               {"limit", "cursor"},
	"POST /v1/rules/{name}/versions":              nil,
	"GET /v1/rules/{name}/versions":               {"limit", "cursor"},
	"GET /v1/rules/{name}/versions/{version}":     nil,
}

// checkParams refuses a query parameter the route does not read, so that
// a typo (grades=A) is not silently ignored, and a repeated parameter that
// takes one value.
//
// Errors: 400 invalid-parameter naming the parameter.
func checkParams(r *http.Request) error {
	allowed, ok := queryParams[routeMethod(r)+" "+routePattern(r)]
	if !ok || r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return paramError(k, "unknown query parameter; this route takes none")
			}
			return paramError(k, "unknown query parameter; this route takes %s", strings.Join(allowed, ", "))
		}
		if n := len(q[k]); n > 1 && !slices.Contains(repeatableParams, k) {
			return paramError(k, "given %d times; it takes one value", n)
		}
	}
	return nil
}

// repeatableParams are the query parameters that may be given more than
// once (their values add up); a handler reads only the first value of any
// other, so checkParams refuses a repeat rather than ignore the rest.
var repeatableParams = []string{"label", "grade"}
