// Package ui is toolscore's web console (issue 16): server-rendered HTML
// pages under /ui/ that show stored results, their trends, contracts,
// regrades and harness runs, so that a person can look before reading
// JSON. Pages are html/template files embedded in the binary, charts are
// inline SVG, and one small script (served as a file, so that the
// Content-Security-Policy allows no inline script) updates the progress
// of running regrades and runs.
//
// The console reads only through the store interfaces the API uses (Store
// embeds api.ContractStore and api.ResultStore; Regrades and Runs are the
// API's) plus the aggregates of Store's own methods, each a bounded number
// of indexed queries, and every read is scoped by the project of the key
// the person signed in with (session.go), or project default with
// authentication off.
//
// One file per page: overview.go, evaluations.go (the list and one
// result), contracts.go, regrades.go, runs.go; plus filter.go (query
// parameters), chart.go (SVG), render.go (templates, error pages) and
// security.go (headers), session.go (signing in).
package ui

import (
	"context"
	"embed"
	"io/fs"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/record"
)

// Store is what the console reads: the API's contract and result stores
// and the console's aggregates. cmd/server passes in *store.DB, whose
// methods of the same names document the exact behaviour.
type Store interface {
	api.ContractStore
	api.ResultStore
	// Overview aggregates results per day and contract version, with the
	// most frequent first issues.
	Overview(ctx context.Context, projectID int64, f record.OverviewFilter, topIssues int) (record.Overview, error)
	// ListRegrades lists a project's regrades, newest first.
	ListRegrades(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Regrade, error)
	// ListRegradeResults lists the regrade results of one original,
	// newest first.
	ListRegradeResults(ctx context.Context, projectID int64, originalID uuid.UUID, limit int) ([]record.ResultSummary, error)
	// CreateConsoleSession, ConsoleSessionKey and DeleteConsoleSession
	// keep the sign-ins (session.go).
	CreateConsoleSession(ctx context.Context, tokenHash, keyHash [32]byte, expires time.Time) error
	ConsoleSessionKey(ctx context.Context, tokenHash [32]byte) ([32]byte, error)
	DeleteConsoleSession(ctx context.Context, tokenHash [32]byte) error
}

// Config configures New. Zero values take the documented defaults.
type Config struct {
	// Store is read for every page. Required.
	Store Store
	// Regrades serves the regrade pages and the latest-verdict listing;
	// nil shows them as not enabled.
	Regrades api.Regrades
	// Runs serves the harness run pages; nil shows them as not enabled.
	Runs api.Runs
	// Logger receives one line per request and every failure; nil means
	// none.
	Logger *zap.Logger
	// Auth checks the keys people sign in with (the API's
	// authenticator); nil lets nobody sign in, unless AuthOff.
	Auth Authenticator
	// AuthOff opens every page without signing in, as project default
	// (TOOLSCORE_AUTH=off, for local development).
	AuthOff bool
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Console is the web console. Create it with New and serve Handler under
// /ui/.
type Console struct {
	cfg    Config
	store  Store
	log    *zap.Logger
	static http.Handler
	// staticVersion is the hash of the static files, appended to their
	// URLs so that a new binary's files are never read from a cache.
	staticVersion string
	router        chi.Router
}

//go:embed templates static
var files embed.FS

// New returns a Console on cfg.Store.
func New(cfg Config) *Console {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	static, _ := fs.Sub(files, "static") // the directory is embedded
	c := &Console{cfg: cfg, store: cfg.Store, log: cfg.Logger, staticVersion: staticHash(static)}
	c.static = http.StripPrefix("/ui/static/", http.FileServerFS(static))
	c.router = c.routes()
	return c
}

// Handler returns the handler of every /ui path.
func (c *Console) Handler() http.Handler { return c.router }

// handlerFunc is a page handler that returns its error (STYLE.md section
// 3); render.go turns it into an error page.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (c *Console) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(c.observe, c.headers, c.recoverer)
	r.NotFound(c.handle(func(w http.ResponseWriter, r *http.Request) error {
		return notFound("There is no page at %s.", r.URL.Path)
	}))
	r.MethodNotAllowed(c.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &pageError{status: http.StatusMethodNotAllowed, title: "Method not allowed",
			detail: r.Method + " is not allowed on " + r.URL.Path + "."}
	}))
	r.Get("/ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
	})
	r.Get("/ui/static/*", c.serveStatic)
	r.Get("/ui/login", c.handle(c.loginPage))
	r.Post("/ui/login", c.handle(c.login))
	r.Post("/ui/logout", c.handle(c.logout))
	for path, h := range map[string]handlerFunc{
		"/ui/":                       c.overview,
		"/ui/evaluations":            c.evaluations,
		"/ui/evaluations/{id}":       c.evaluation,
		"/ui/contracts":              c.contracts,
		"/ui/contracts/{name}":       c.contract,
		"/ui/regrades":               c.regrades,
		"/ui/regrades/{id}":          c.regrade,
		"/ui/regrades/{id}/progress": c.regradeProgress,
		"/ui/runs":                   c.runs,
		"/ui/runs/{id}":              c.run,
		"/ui/runs/{id}/progress":     c.runProgress,
	} {
		r.Get(path, c.protect(c.handle(h)))
	}
	return r
}

// now returns the current time in UTC.
func (c *Console) now() time.Time { return c.cfg.Now().UTC() }
