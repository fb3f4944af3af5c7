package api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/record"
)

// Authentication and authorization (issue 14). Every request except the
// public routes carries "Authorization: Bearer KEY"; the authenticate
// middleware turns it into an auth.Principal on the context (see package
// auth for the accessor), and handle checks the route's scope from
// routeScopes before the handler runs. A route missing from routeScopes
// is refused (500): TestRouteScopesMatchRouter keeps the table equal to
// the router, and cmd/server's two-project isolation test covers every
// route in it.

// publicPaths are served without a key.
var publicPaths = map[string]bool{"/healthz": true, "/readyz": true, "/openapi.yaml": true}

// scopeAny marks a route any valid key may call, whatever its scopes:
// it reads and stores nothing of the project.
const scopeAny auth.Scope = ""

// routeScopes is the scope each route needs, by method and route pattern.
var routeScopes = map[string]auth.Scope{
	"POST /v1/validate":                           scopeAny,
	"GET /v1/contracts":                           auth.ScopeRead,
	"GET /v1/contracts/{name}/versions":           auth.ScopeRead,
	"POST /v1/contracts/{name}/versions":          auth.ScopeContractsWrite,
	"GET /v1/contracts/{name}/versions/{version}": auth.ScopeRead,
	"POST /v1/evaluations":                        auth.ScopeIngest,
	"POST /v1/evaluations/batch":                  auth.ScopeIngest,
	"GET /v1/evaluations":                         auth.ScopeRead,
	"GET /v1/evaluations/{id}":                    auth.ScopeRead,
	"GET /v1/stats":                               auth.ScopeRead,
	"GET /v1/stats/compare":                       auth.ScopeRead,
	"POST /v1/regrades":                           auth.ScopeRegrades,
	"GET /v1/regrades/{id}":                       auth.ScopeRead,
	"DELETE /v1/regrades/{id}":                    auth.ScopeRegrades,
	"POST /v1/regrades/{id}/cancel":               auth.ScopeRegrades,
	"GET /v1/regrades/{id}/changes":               auth.ScopeRead,
	"GET /v1/regrades/{id}/failures":              auth.ScopeRead,
	"POST /v1/runs":                               auth.ScopeRuns,
	"GET /v1/runs":                                auth.ScopeRead,
	"GET /v1/runs/{id}":                           auth.ScopeRead,
	"DELETE /v1/runs/{id}":                        auth.ScopeRuns,
	"POST /v1/keys":                               auth.ScopeAdmin,
	"GET /v1/keys":                                auth.ScopeAdmin,
	"DELETE /v1/keys/{id}":                        auth.ScopeAdmin,
	"POST /v1/projects":                           auth.ScopeAdmin,
	"GET /v1/projects":                            auth.ScopeAdmin,
	"POST /v1/traces":                             auth.ScopeIngest,
	"GET /v1/traces/{trace_id}":                   auth.ScopeRead,
	"POST /v1/traces/regrade":                     auth.ScopeRegrades,
	"GET /v1/rules":                               auth.ScopeRead,
	"POST /v1/rules/{name}/versions":              auth.ScopeContractsWrite,
	"GET /v1/rules/{name}/versions":               auth.ScopeRead,
	"GET /v1/rules/{name}/versions/{version}":     auth.ScopeRead,
}

// RouteScopes returns a copy of the scope each route needs, by "METHOD
// pattern" ("" for a route any valid key may call). Tests that walk the
// router use it.
func RouteScopes() map[string]auth.Scope {
	out := make(map[string]auth.Scope, len(routeScopes))
	for k, v := range routeScopes {
		out[k] = v
	}
	return out
}

// offPrincipal is who every request acts for with authentication off.
var offPrincipal = auth.Principal{ProjectID: record.DefaultProject, ProjectName: "default", Scopes: auth.AllScopes()}

// bearerToken returns the token of an "Authorization: Bearer" header
// (RFC 6750 section 2.1; the scheme is case-insensitive), and whether the
// header was present at all. A request with more than one Authorization
// header has no token (the field is a singleton, RFC 9110 section 5.3:
// which one counts would be a guess).
func bearerToken(r *http.Request) (token string, present bool) {
	vals := r.Header.Values("Authorization")
	switch {
	case len(vals) == 0 || len(vals) == 1 && vals[0] == "":
		return "", false
	case len(vals) > 1:
		return "", true
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(tok), true
}

// unauthorized is the 401 of a request without a valid key.
func unauthorized(detail string, invalid bool) *apiError {
	return &apiError{kind: probUnauthorized, detail: detail, invalidToken: invalid,
		errors: []FieldProblem{{Parameter: "Authorization", Message: "must be Bearer and an active API key"}}}
}

// authenticate sets the request's principal from its bearer token, or
// answers 401 (before the body is read). The public paths pass without a
// key, /metrics has its own check (metricsAuth); with authentication off
// every request acts for offPrincipal.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if publicPaths[r.URL.Path] || r.URL.Path == "/metrics" {
			next.ServeHTTP(w, r)
			return
		}
		if s.cfg.AuthOff {
			next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), offPrincipal)))
			return
		}
		token, present := bearerToken(r)
		if !present {
			s.writeError(w, r, unauthorized("this route needs an API key: send Authorization: Bearer KEY", false))
			return
		}
		if n := len(r.Header.Values("Authorization")); n > 1 {
			s.writeError(w, r, unauthorized(fmt.Sprintf("the request has %d Authorization headers: send one", n), true))
			return
		}
		if token == "" || s.cfg.Auth == nil {
			s.writeError(w, r, unauthorized("the Authorization header is not Bearer and an API key", true))
			return
		}
		p, err := s.cfg.Auth.Authenticate(r.Context(), token)
		switch {
		case errors.Is(err, auth.ErrInvalidKey):
			s.writeError(w, r, unauthorized("the API key is unknown or revoked", true))
			return
		case err != nil:
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), p)))
	})
}

// authorize checks that the request's principal holds the scope of its
// route (routeScopes).
//
// Errors: 403 forbidden naming the missing scope; 401 without a
// principal; 500 for a route missing from routeScopes (fail closed).
func (s *Server) authorize(r *http.Request) error {
	key := routeMethod(r) + " " + routePattern(r)
	need, ok := routeScopes[key]
	if !ok {
		return fmt.Errorf("route %s has no scope in routeScopes", key)
	}
	p, ok := auth.FromContext(r.Context())
	if !ok {
		return unauthorized("this route needs an API key: send Authorization: Bearer KEY", false)
	}
	if need == scopeAny || p.Has(need) {
		return nil
	}
	return &apiError{kind: probForbidden, missingScope: string(need),
		detail: fmt.Sprintf("this route needs scope %s; the key has %s", need, strings.Join(auth.ScopeNames(p.Scopes), ", "))}
}

// metricsAuth guards /metrics: open with Config.MetricsOpen, else the
// bearer token must be Config.MetricsToken (compared in constant time).
// API keys do not open it: metrics count every project's requests.
func (s *Server) metricsAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.MetricsOpen || s.cfg.AuthOff {
			next.ServeHTTP(w, r)
			return
		}
		token, present := bearerToken(r)
		if s.cfg.MetricsToken == "" {
			s.writeError(w, r, &apiError{kind: probUnauthorized, invalidToken: present,
				detail: "metrics are closed: the server sets TOOLSCORE_METRICS_TOKEN (then send it as Bearer) or TOOLSCORE_METRICS_OPEN=true",
				errors: []FieldProblem{{Parameter: "Authorization", Message: "must be Bearer and the metrics token"}}})
			return
		}
		if subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.MetricsToken)) != 1 {
			s.writeError(w, r, &apiError{kind: probUnauthorized, invalidToken: present,
				detail: "metrics need the metrics token (TOOLSCORE_METRICS_TOKEN) as Authorization: Bearer",
				errors: []FieldProblem{{Parameter: "Authorization", Message: "must be Bearer and the metrics token"}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
