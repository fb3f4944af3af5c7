package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// fakeKeys is an in-memory key store: auth.KeyStore and Keys.
type fakeKeys struct {
	mu       sync.Mutex
	projects []record.Project
	keys     []record.APIKey
	touched  map[uuid.UUID]int
}

var (
	_ auth.KeyStore = (*fakeKeys)(nil)
	_ Keys          = (*fakeKeys)(nil)
)

func newFakeKeys() *fakeKeys {
	return &fakeKeys{projects: []record.Project{{ID: 1, Name: "default"}}, touched: map[uuid.UUID]int{}}
}

func (f *fakeKeys) projectName(id int64) string {
	for _, p := range f.projects {
		if p.ID == id {
			return p.Name
		}
	}
	return ""
}

func (f *fakeKeys) ActiveKeysByLookup(_ context.Context, lookup []byte) ([]record.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []record.APIKey
	for _, k := range f.keys {
		if string(k.Lookup) == string(lookup) && k.RevokedAt == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

func (f *fakeKeys) TouchKey(_ context.Context, id uuid.UUID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.touched[id]++
	return nil
}

func (f *fakeKeys) CreateKey(_ context.Context, k record.APIKey) (record.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k.ProjectName = f.projectName(k.ProjectID)
	if k.ProjectName == "" {
		return k, engine.ErrNotFound
	}
	k.CreatedAt = time.Date(2026, 12, 1, 10, 0, len(f.keys), 0, time.UTC)
	f.keys = append(f.keys, k)
	return k, nil
}

func (f *fakeKeys) ListKeys(_ context.Context, projectID int64, _ *record.Cursor, limit int) ([]record.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []record.APIKey
	for i := len(f.keys) - 1; i >= 0 && len(out) < limit; i-- {
		if f.keys[i].ProjectID == projectID {
			out = append(out, f.keys[i])
		}
	}
	return out, nil
}

func (f *fakeKeys) RevokeKey(_ context.Context, projectID int64, id uuid.UUID) (record.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.keys {
		if k := &f.keys[i]; k.ID == id && k.ProjectID == projectID {
			if k.RevokedAt == nil {
				t := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
				k.RevokedAt = &t
			}
			return *k, nil
		}
	}
	return record.APIKey{}, engine.ErrNotFound
}

func (f *fakeKeys) CreateProjectWithKey(_ context.Context, name string, k record.APIKey) (record.Project, record.APIKey, error) {
	f.mu.Lock()
	for _, p := range f.projects {
		if p.Name == name {
			f.mu.Unlock()
			return record.Project{}, k, engine.ErrConflict
		}
	}
	p := record.Project{ID: int64(len(f.projects) + 1), Name: name, CreatedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	f.projects = append(f.projects, p)
	f.mu.Unlock()
	k.ProjectID = p.ID
	k, err := f.CreateKey(context.Background(), k)
	return p, k, err
}

func (f *fakeKeys) GetProject(_ context.Context, id int64) (record.Project, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.projects {
		if p.ID == id {
			return p, nil
		}
	}
	return record.Project{}, engine.ErrNotFound
}

// addKey stores a new key of project with scopes and returns its token.
func (f *fakeKeys) addKey(t *testing.T, project int64, scopes ...auth.Scope) string {
	t.Helper()
	k, token, err := auth.NewKey(project, "test", scopes, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return token
}

// setupAuth is setup with authentication on, over a fakeKeys.
func setupAuth(t *testing.T, mod func(*Config)) (*testBundle, *fakeKeys) {
	t.Helper()
	keys := newFakeKeys()
	b := setup(t, func(c *Config) {
		c.AuthOff = false
		c.Keys = keys
		c.Auth = auth.NewAuthenticator(auth.Config{Store: keys})
		if mod != nil {
			mod(c)
		}
	})
	return b, keys
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

func TestAuthenticationRequired(t *testing.T) {
	b, keys := setupAuth(t, nil)
	read := keys.addKey(t, 1, auth.ScopeRead)

	t.Run("public routes need no key", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz", "/openapi.yaml"} {
			if rec := b.do(t, "GET", p, ""); rec.Code != 200 {
				t.Errorf("GET %s = %d, want 200", p, rec.Code)
			}
		}
	})
	t.Run("no key", func(t *testing.T) {
		rec := b.do(t, "GET", "/v1/evaluations", "")
		p := problemOf(t, rec, 401, "unauthorized")
		if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="toolscore"` {
			t.Errorf("WWW-Authenticate = %q", got)
		}
		if p.Detail != "this route needs an API key: send Authorization: Bearer KEY" || len(p.Errors) != 1 || p.Errors[0].Parameter != "Authorization" {
			t.Errorf("problem = %+v", p)
		}
	})
	t.Run("unrouted paths need a key too", func(t *testing.T) {
		problemOf(t, b.do(t, "GET", "/v1/nothing", ""), 401, "unauthorized")
	})
	for _, tc := range []struct{ name, header string }{
		{"unknown key", "Bearer tsk_" + strings.Repeat("a", 52)},
		{"basic scheme", "Basic dXNlcjpwYXNz"},
		{"empty bearer", "Bearer "},
		{"short token", "Bearer abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do(t, "GET", "/v1/evaluations", "", "Authorization", tc.header)
			problemOf(t, rec, 401, "unauthorized")
			if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="toolscore", error="invalid_token"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
		})
	}
	t.Run("two Authorization headers are refused", func(t *testing.T) {
		for _, second := range []string{"Bearer " + read, "Basic dXNlcjpwYXNz"} {
			req := httptest.NewRequest("GET", "/v1/evaluations", nil)
			req.Header.Add("Authorization", "Bearer "+read)
			req.Header.Add("Authorization", second)
			rec := httptest.NewRecorder()
			b.s.Handler().ServeHTTP(rec, req)
			p := problemOf(t, rec, 401, "unauthorized")
			if p.Detail != "the request has 2 Authorization headers: send one" {
				t.Errorf("second %q: detail %q", second, p.Detail)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="toolscore", error="invalid_token"` {
				t.Errorf("second %q: WWW-Authenticate = %q", second, got)
			}
		}
	})
	t.Run("the scheme is case-insensitive", func(t *testing.T) {
		if rec := b.do(t, "GET", "/v1/evaluations", "", "Authorization", "bearer "+read); rec.Code != 200 {
			t.Errorf("status = %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("missing scope is 403 naming it", func(t *testing.T) {
		rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+contractA+`, "trace": `+traceGood+`}`, bearer(read)...)
		p := problemOf(t, rec, 403, "forbidden")
		if p.MissingScope != "ingest" || p.Detail != "this route needs scope ingest; the key has read" {
			t.Errorf("problem = %+v", p)
		}
	})
	t.Run("validate takes any key", func(t *testing.T) {
		if rec := b.do(t, "POST", "/v1/validate", contractA, bearer(read)...); rec.Code != 200 {
			t.Errorf("status = %d %s", rec.Code, rec.Body)
		}
	})
}

func TestKeysAreScopedToTheirProject(t *testing.T) {
	b, keys := setupAuth(t, nil)
	keys.projects = append(keys.projects, record.Project{ID: 2, Name: "other"})
	ingest := keys.addKey(t, 2, auth.ScopeIngest)
	rec := b.do(t, "POST", "/v1/evaluations", `{"contract": `+contractA+`, "trace": `+traceGood+`}`, bearer(ingest)...)
	if rec.Code != 201 {
		t.Fatalf("status = %d %s", rec.Code, rec.Body)
	}
	id := uuid.MustParse(decode[evaluationView](t, rec).ID)
	if got := b.store.results[id].ProjectID; got != 2 {
		t.Errorf("stored in project %d, want 2", got)
	}
}

func TestKeyRoutes(t *testing.T) {
	b, keys := setupAuth(t, nil)
	admin := keys.addKey(t, 1, auth.ScopeAdmin)

	rec := b.do(t, "POST", "/v1/keys", `{"name": "ci", "scopes": ["read", "ingest", "read"]}`, bearer(admin)...)
	if rec.Code != 201 {
		t.Fatalf("POST /v1/keys = %d %s", rec.Code, rec.Body)
	}
	made := decode[newKeyView](t, rec)
	if !strings.HasPrefix(made.Token, "tsk_") || len(made.Token) != 56 || made.Prefix != made.Token[:12] ||
		!cmp.Equal(made.Scopes, []string{"ingest", "read"}) || made.Project != "default" || made.Name != "ci" || made.CreatedBy == "" {
		t.Fatalf("new key = %+v", made)
	}
	if got := rec.Header().Get("Location"); got != "/v1/keys/"+made.ID {
		t.Errorf("Location = %q", got)
	}
	// The new key works, with its scopes only.
	if rec := b.do(t, "GET", "/v1/evaluations", "", bearer(made.Token)...); rec.Code != 200 {
		t.Errorf("GET with the new key = %d %s", rec.Code, rec.Body)
	}
	problemOf(t, b.do(t, "GET", "/v1/keys", "", bearer(made.Token)...), 403, "forbidden")

	// The list never shows a token or a hash.
	rec = b.do(t, "GET", "/v1/keys", "", bearer(admin)...)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), made.Token) || strings.Contains(rec.Body.String(), "token") {
		t.Fatalf("GET /v1/keys = %d %s", rec.Code, rec.Body)
	}
	if got := decode[page[keyView]](t, rec); len(got.Items) != 2 || got.Items[0].ID != made.ID {
		t.Errorf("keys = %+v", got)
	}

	for _, tc := range []struct{ name, body, ptr string }{
		{"no scopes", `{"name": "x"}`, "/scopes"},
		{"bad scope", `{"scopes": ["write"]}`, "/scopes"},
		{"long name", `{"name": "` + strings.Repeat("n", 129) + `", "scopes": ["read"]}`, "/name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", "/v1/keys", tc.body, bearer(admin)...), 422, "invalid-request")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != tc.ptr {
				t.Errorf("errors = %+v, want one at %s", p.Errors, tc.ptr)
			}
		})
	}

	// Revoking stops the key at once on this server.
	rec = b.do(t, "DELETE", "/v1/keys/"+made.ID, "", bearer(admin)...)
	if rec.Code != 200 || decode[keyView](t, rec).RevokedAt == nil {
		t.Fatalf("DELETE = %d %s", rec.Code, rec.Body)
	}
	problemOf(t, b.do(t, "GET", "/v1/evaluations", "", bearer(made.Token)...), 401, "unauthorized")
	problemOf(t, b.do(t, "DELETE", "/v1/keys/"+uuid.NewString(), "", bearer(admin)...), 404, "not-found")
}

func TestProjectRoutes(t *testing.T) {
	b, keys := setupAuth(t, nil)
	admin := keys.addKey(t, 1, auth.ScopeAdmin)
	rec := b.do(t, "POST", "/v1/projects", `{"name": "team-b"}`, bearer(admin)...)
	if rec.Code != 201 {
		t.Fatalf("POST /v1/projects = %d %s", rec.Code, rec.Body)
	}
	np := decode[newProjectView](t, rec)
	if np.Project.Name != "team-b" || np.Key.Project != "team-b" || !cmp.Equal(np.Key.Scopes, []string{"admin"}) {
		t.Fatalf("new project = %+v", np)
	}
	problemOf(t, b.do(t, "POST", "/v1/projects", `{"name": "team-b"}`, bearer(admin)...), 409, "conflict")
	problemOf(t, b.do(t, "POST", "/v1/projects", `{"name": "-bad"}`, bearer(admin)...), 422, "invalid-request")

	// Each admin key sees its own project only.
	for _, tc := range []struct{ token, want string }{{admin, "default"}, {np.Key.Token, "team-b"}} {
		got := decode[page[projectView]](t, b.do(t, "GET", "/v1/projects", "", bearer(tc.token)...))
		if len(got.Items) != 1 || got.Items[0].Name != tc.want {
			t.Errorf("projects = %+v, want only %s", got.Items, tc.want)
		}
	}
	// The new project's key lists only its own keys.
	got := decode[page[keyView]](t, b.do(t, "GET", "/v1/keys", "", bearer(np.Key.Token)...))
	if len(got.Items) != 1 || got.Items[0].ID != np.Key.ID {
		t.Errorf("keys of team-b = %+v", got.Items)
	}
}

func TestContractRecordsPublisher(t *testing.T) {
	b, keys := setupAuth(t, nil)
	writer := keys.addKey(t, 1, auth.ScopeContractsWrite, auth.ScopeRead)
	rec := b.do(t, "POST", "/v1/contracts/flights/versions", contractA, bearer(writer)...)
	if rec.Code != 201 {
		t.Fatalf("status = %d %s", rec.Code, rec.Body)
	}
	want := keys.keys[0].ID.String()
	if got := decode[contractVersionView](t, rec).PublishedBy; got != want {
		t.Errorf("published_by = %q, want %q", got, want)
	}
	if got := decode[contractVersionView](t, b.do(t, "GET", "/v1/contracts/flights/versions/1", "", bearer(writer)...)).PublishedBy; got != want {
		t.Errorf("GET published_by = %q, want %q", got, want)
	}
}

func TestMetricsAuth(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(*Config)
		header []string
		want   int
	}{
		{"closed by default", nil, nil, 401},
		{"an API key does not open it", nil, nil, 401},
		{"open", func(c *Config) { c.MetricsOpen = true }, nil, 200},
		{"token", func(c *Config) { c.MetricsToken = "m3trics-t0ken" }, bearer("m3trics-t0ken"), 200},
		{"wrong token", func(c *Config) { c.MetricsToken = "m3trics-t0ken" }, bearer("m3trics-t0keN"), 401},
		{"no token sent", func(c *Config) { c.MetricsToken = "m3trics-t0ken" }, nil, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, keys := setupAuth(t, tc.mod)
			h := tc.header
			if tc.name == "an API key does not open it" {
				h = bearer(keys.addKey(t, 1, auth.AllScopes()...))
			}
			rec := b.do(t, "GET", "/metrics", "", h...)
			if rec.Code != tc.want {
				t.Errorf("status = %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}

func TestAuthOff(t *testing.T) {
	b := setup(t, nil) // AuthOff
	if rec := b.do(t, "GET", "/v1/evaluations", ""); rec.Code != 200 {
		t.Errorf("status = %d", rec.Code)
	}
	if rec := b.do(t, "GET", "/metrics", ""); rec.Code != 200 {
		t.Errorf("metrics status = %d", rec.Code)
	}
}

// TestRouteScopesMatchRouter keeps routeScopes equal to the router's
// routes, public ones aside, so that no route goes without a scope.
func TestRouteScopesMatchRouter(t *testing.T) {
	s := New(Config{Store: newFakeStore()})
	defer s.Close()
	var routes []string
	err := chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/*")
		if !publicPaths[route] && route != "/metrics" {
			routes = append(routes, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for k := range routeScopes {
		table = append(table, k)
	}
	sort.Strings(routes)
	sort.Strings(table)
	if diff := cmp.Diff(table, routes); diff != "" {
		t.Errorf("routeScopes and the router differ (-table +router):\n%s", diff)
	}
}
