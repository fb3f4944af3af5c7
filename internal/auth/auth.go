// Package auth is the service's authentication and authorization model:
// projects, API keys and their scopes (issue 14). It turns a bearer token
// into a Principal (the caller's project, key and scopes), caching
// verified keys for a few seconds, and carries that Principal on a
// request's context.
//
// # The API other handlers use
//
// Every handler of the HTTP service runs behind the api package's
// authentication middleware, which sets the Principal, and behind its
// per-route scope check. A handler reads who is calling with FromContext:
//
//	p, ok := auth.FromContext(r.Context())
//	// p.ProjectID scopes every query; p.KeyID is the key (uuid.Nil when
//	// authentication is off); p.Has(auth.ScopeRead) tells a scope.
//
// A new route declares its scope in the api package's route table
// (routeScopes), which a test keeps equal to the router, and the
// two-project isolation test in cmd/server then covers it.
//
// # Keys
//
// A key is a random token (NewToken: "tsk_" and 52 base32 characters, 260
// bits) shown once when it is made. Only its SHA-256 is stored (Hash); the
// first 8 bytes of that hash (Lookup) find the candidate rows, and the
// whole hash is compared in constant time (crypto/subtle).
package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Scope is one permission of a key. A key holds one or more; none implies
// another (admin does not imply ingest).
type Scope string

// The scopes, with what they allow. Every key acts only on its own
// project.
const (
	// ScopeIngest allows POST /v1/evaluations and /v1/evaluations/batch.
	ScopeIngest Scope = "ingest"
	// ScopeRead allows reading results, stats, contracts, regrades and
	// runs.
	ScopeRead Scope = "read"
	// ScopeContractsWrite allows publishing contract versions.
	ScopeContractsWrite Scope = "contracts:write"
	// ScopeRegrades allows starting (and dry-running) and cancelling
	// regrades.
	ScopeRegrades Scope = "regrades"
	// ScopeRuns allows starting and cancelling server-side harness runs.
	ScopeRuns Scope = "runs"
	// ScopeAdmin allows managing the project's keys and creating projects.
	ScopeAdmin Scope = "admin"
)

// AllScopes returns every scope, in the order above.
func AllScopes() []Scope {
	return []Scope{ScopeIngest, ScopeRead, ScopeContractsWrite, ScopeRegrades, ScopeRuns, ScopeAdmin}
}

// ParseScopes reads scope names, each also given comma-separated
// ("ingest,read"), and returns them deduplicated in AllScopes order.
//
// Errors: an unknown scope (naming it and the valid ones), or none at all.
func ParseScopes(names []string) ([]Scope, error) {
	seen := map[Scope]bool{}
	for _, n := range names {
		for _, one := range strings.Split(n, ",") {
			one = strings.TrimSpace(one)
			if one == "" {
				continue
			}
			s := Scope(one)
			if !slices.Contains(AllScopes(), s) {
				return nil, fmt.Errorf("unknown scope %q; valid: %s", one, strings.Join(ScopeNames(AllScopes()), ", "))
			}
			seen[s] = true
		}
	}
	var out []Scope
	for _, s := range AllScopes() {
		if seen[s] {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("at least one scope is required; valid: %s", strings.Join(ScopeNames(AllScopes()), ", "))
	}
	return out, nil
}

// ScopeNames returns the scopes as strings, in their order.
func ScopeNames(scopes []Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// Principal is who a request acts for: a key of one project and its
// scopes.
type Principal struct {
	// ProjectID is the project every query of the request is scoped by.
	ProjectID int64
	// ProjectName is that project's name.
	ProjectName string
	// KeyID is the key's id; uuid.Nil when authentication is off.
	KeyID uuid.UUID
	// KeyPrefix is the key's displayed prefix ("tsk_" and 8 characters),
	// safe to log; "" when authentication is off.
	KeyPrefix string
	// Scopes are the key's scopes, in AllScopes order.
	Scopes []Scope
}

// Has reports whether the principal holds scope s.
func (p Principal) Has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// ctxKey is the unexported type of this package's context key.
type ctxKey struct{}

// NewContext returns a context whose requests act for p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal of a request, and false outside an
// authenticated request (a public route such as /healthz).
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
