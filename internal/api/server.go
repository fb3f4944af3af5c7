// Package api is toolscore's HTTP service: the chi router and handlers,
// request and response types, RFC 9457 problem+json errors, the bounded
// worker pool that runs the engine, and the HTTP and evaluation metrics.
// It never imports internal/store: it declares the Store interface it
// needs, and cmd/server passes in *store.DB.
//
// One file per noun: contract.go (registry), evaluation.go (evaluate,
// fetch, list), batch.go, stats.go, health.go, otlp.go (OpenTelemetry
// ingest and grading rules); plus pool.go, problem.go,
// middleware.go, metrics.go and decode.go.
package api

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Config configures New. Zero values take the documented defaults.
type Config struct {
	// Store persists contracts and results. Required.
	Store Store
	// Logger receives one line per request and every 5xx; nil means none.
	Logger *zap.Logger
	// Registerer receives the metrics; nil means a fresh registry.
	Registerer prometheus.Registerer
	// Gatherer is served at /metrics; nil means the Registerer when it is a
	// *prometheus.Registry, else an empty registry.
	Gatherer prometheus.Gatherer
	// Workers is the number of evaluation workers; default 1.
	Workers int
	// Queue is the evaluation queue length; default 64 per worker.
	Queue int
	// EvalTimeout bounds one evaluation; default 10 s.
	EvalTimeout time.Duration
	// MaxBodyBytes caps a request body (batches excepted); default 1 MiB.
	MaxBodyBytes int64
	// MaxBatchBytes caps a batch request body; default 32 MiB.
	MaxBatchBytes int64
	// MaxBatchItems caps the evaluations of one batch; default 1000.
	MaxBatchItems int
	// MaxBatches caps the batch requests served at once (more get 429);
	// default 2.
	MaxBatches int
	// HeavyBytes is the body size above which a single evaluation, a
	// contract validation or registration runs on the heavy pool, apart
	// from the others, so that a flood of large contracts or traces takes
	// at most its workers and small requests are still answered at once;
	// default 128 KiB.
	HeavyBytes int64
	// HeavyWorkers is the heavy pool's workers; default Workers / 2, at
	// least 1. Its queue holds 4 per worker.
	HeavyWorkers int
	// BodyTimeout bounds the reading of a request body, from when the
	// handler starts reading it (independent of the server's write
	// timeout); a slower body is 408. Default 10 s.
	BodyTimeout time.Duration
	// MaxBodyReaders caps the requests whose body is being received at
	// once (more get 429); bodies larger than MaxBodyBytes (batches, runs)
	// are also capped at 2 × MaxBatches. Default 512.
	MaxBodyReaders int
	// MaxInFlight caps the single evaluations being decoded, evaluated or
	// stored at once (more get 429), so that memory stays bounded when
	// Postgres is slow, not only when the workers are; default Queue +
	// Workers + 256.
	MaxInFlight int
	// ContractCacheBytes bounds the parsed contracts kept (inline and
	// registry ones together), by what parsing them allocated; default
	// 128 MiB.
	ContractCacheBytes int64
	// OpenAPI is the spec served at /openapi.yaml.
	OpenAPI []byte
	// Version is reported by toolscore_build_info; default "dev".
	Version string
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Regrades serves /v1/regrades, /v1/stats/compare and
	// /v1/evaluations?latest=true (regrade.go); nil answers them 503.
	Regrades Regrades
	// Runs serves /v1/runs, server-side harness runs (run.go); nil answers
	// them 503.
	Runs Runs
	// Auth checks the bearer token of every request but the public routes
	// (/healthz, /readyz, /openapi.yaml) and /metrics; nil refuses every
	// such request with 401, unless AuthOff.
	Auth *auth.Authenticator
	// AuthOff serves every request as project default with every scope,
	// without a key: for local development only.
	AuthOff bool
	// Keys serves /v1/keys and /v1/projects (key.go); nil answers them
	// 503.
	Keys Keys
	// MetricsToken, when set, is the bearer token /metrics needs.
	MetricsToken string
	// MetricsOpen serves /metrics without any token. With neither
	// MetricsOpen nor MetricsToken, /metrics answers 401.
	MetricsOpen bool
	// SecretScanner finds the credentials check's secrets in every
	// evaluation; nil means a default one (package secrets) of the
	// Server's own.
	SecretScanner engine.SecretScanner
	// OTLP serves POST /v1/traces, GET /v1/traces/{trace_id} and the
	// grading rules under /v1/rules (otlp.go); nil answers them 503.
	OTLP OTLP
}

// Server is the HTTP API. Create it with New, serve Handler, and call
// Close after the HTTP server has shut down.
type Server struct {
	cfg       Config
	store     Store
	log       *zap.Logger
	pool      *Pool
	heavy     *Pool // requests with bodies over HeavyBytes
	metrics   *metrics
	contracts *contractCache
	batches   chan struct{}
	inflight  chan struct{}
	// bodyReaders and largeReaders hold a place per body being received
	// (readBody).
	bodyReaders  chan struct{}
	largeReaders chan struct{}
	ids          *requestIDs
	router       chi.Router
	// readers holds format.Readers for the traces evaluate reads
	// (traceReader).
	readers sync.Pool
	// static maps each route pattern without a parameter to the methods
	// routed on it (refuseStatic).
	static map[string][]string
}

// New builds a Server and starts its worker pool.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	if cfg.Gatherer == nil {
		if g, ok := cfg.Registerer.(prometheus.Gatherer); ok {
			cfg.Gatherer = g
		} else {
			cfg.Gatherer = prometheus.NewRegistry()
		}
	}
	cfg.Workers = max(cfg.Workers, 1)
	if cfg.Queue <= 0 {
		cfg.Queue = 64 * cfg.Workers
	}
	if cfg.EvalTimeout <= 0 {
		cfg.EvalTimeout = 10 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = 32 << 20
	}
	if cfg.MaxBatchItems <= 0 {
		cfg.MaxBatchItems = 1000
	}
	if cfg.MaxBatches <= 0 {
		cfg.MaxBatches = 2
	}
	if cfg.HeavyBytes <= 0 {
		cfg.HeavyBytes = 128 << 10
	}
	if cfg.HeavyWorkers <= 0 {
		cfg.HeavyWorkers = max(1, cfg.Workers/2)
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 10 * time.Second
	}
	if cfg.MaxBodyReaders <= 0 {
		cfg.MaxBodyReaders = 512
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = cfg.Queue + cfg.Workers + 256
	}
	if cfg.ContractCacheBytes <= 0 {
		cfg.ContractCacheBytes = 128 << 20
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SecretScanner == nil {
		cfg.SecretScanner = secrets.New()
	}
	s := &Server{
		cfg:          cfg,
		store:        cfg.Store,
		log:          cfg.Logger,
		pool:         NewPool(cfg.Workers, cfg.Queue, cfg.EvalTimeout),
		heavy:        NewPool(cfg.HeavyWorkers, 4*cfg.HeavyWorkers, cfg.EvalTimeout),
		contracts:    newContractCache(cfg.Store, cfg.ContractCacheBytes),
		batches:      make(chan struct{}, cfg.MaxBatches),
		inflight:     make(chan struct{}, cfg.MaxInFlight),
		bodyReaders:  make(chan struct{}, cfg.MaxBodyReaders),
		largeReaders: make(chan struct{}, 2*cfg.MaxBatches),
		ids:          newRequestIDs(),
	}
	s.metrics = newMetrics(cfg.Registerer, cfg.Version, s.pool, s.inflight, s.contracts.entries)
	s.router = s.routes()
	return s
}

// Handler returns the HTTP handler of every route.
func (s *Server) Handler() http.Handler { return s.router }

// Close drains the worker pools. Call it after http.Server.Shutdown.
func (s *Server) Close() {
	s.pool.Close()
	s.heavy.Close()
}

// poolFor returns the pool a request with a body of n bytes runs on: the
// heavy pool above HeavyBytes, else the pool.
func (s *Server) poolFor(n int) *Pool {
	if int64(n) > s.cfg.HeavyBytes {
		return s.heavy
	}
	return s.pool
}

// handlerFunc is a handler that returns its error (STYLE.md section 3).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts the handlerFunc of a /v1 route, writing its error as
// problem+json. Before the handler runs, it checks the route's scope
// (authorize) and refuses a malformed query string or query values that
// are not UTF-8 text without NUL (checkQuery).
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.authorize(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.handlePublic(h)(w, r)
	}
}

// handlePublic is handle without the scope check, for the public routes
// and the answers to unrouted requests.
func (s *Server) handlePublic(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// routes builds the router. Each noun's file adds its own routes, so a
// new resource (regrades, harness runs) adds one call here.
func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	// GetHead serves HEAD with the GET handler of a route that has no HEAD
	// handler of its own (net/http sends its status and headers, never its
	// body); routeMethod names that route's method.
	r.Use(s.requestID, s.observe, s.recoverer, s.authenticate, middleware.GetHead, s.refuseStatic)
	r.NotFound(s.handlePublic(func(w http.ResponseWriter, r *http.Request) error {
		return newError(probNotFound, "no route %s %s", r.Method, r.URL.Path)
	}))
	r.MethodNotAllowed(s.handlePublic(s.methodNotAllowed))
	s.healthRoutes(r)
	r.Method(http.MethodGet, "/metrics", s.metricsAuth(promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{})))
	r.Route("/v1", func(r chi.Router) {
		s.contractRoutes(r)
		s.evaluationRoutes(r)
		s.batchRoutes(r)
		s.statsRoutes(r)
		s.regradeRoutes(r)
		s.runRoutes(r)
		s.keyRoutes(r)
		s.otlpRoutes(r)
	})
	s.static = staticRoutes(r)
	return r
}

// staticRoutes maps each route pattern of r without a parameter to the
// methods routed on it.
func staticRoutes(r chi.Router) map[string][]string {
	out := map[string][]string{}
	// chi.Walk fails only when its function does.
	_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/*")
		if !strings.ContainsAny(route, "{*") {
			out[route] = append(out[route], method)
		}
		return nil
	})
	return out
}

// refuseStatic answers 405 to a request whose path is a route without a
// parameter (Server.static) that has no route for its method, before
// chi's router, which would give it to a parameter route beside it that
// matches the path: GET /v1/evaluations/batch is not GET
// /v1/evaluations/{id} with the id "batch". HEAD goes wherever GET does.
func (s *Server) refuseStatic(next http.Handler) http.Handler {
	refuse := s.handlePublic(s.methodNotAllowed)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if methods, ok := s.static[r.URL.Path]; ok && !slices.Contains(methods, r.Method) &&
			(r.Method != http.MethodHead || !slices.Contains(methods, http.MethodGet)) {
			refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// methodNotAllowed is the 405 answer to a request for a routed path with
// a method not routed on it: its Allow header names the path's methods.
// The request is counted and logged under the path's route pattern (as
// one of those methods would be), not "unmatched".
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		rc.RoutePatterns = append(rc.RoutePatterns[:0], s.routeOf(r.URL.Path))
	}
	allow := strings.Join(s.allowed(r.URL.Path), ", ")
	w.Header().Set("Allow", allow) // RFC 9110 section 15.5.6
	return newError(probMethod, "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)
}

// routeOf returns the route pattern of a routed path: the path itself for
// a route without a parameter, else the pattern of the first method routed
// on it ("" when none is).
func (s *Server) routeOf(path string) string {
	if _, ok := s.static[path]; ok {
		return path
	}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if rc := chi.NewRouteContext(); s.router.Match(rc, m, path) {
			return rc.RoutePattern()
		}
	}
	return ""
}

// allowed returns the methods routed for path, for the Allow header of a
// 405: HEAD wherever GET is (middleware.GetHead). A route without a
// parameter has only its own methods (refuseStatic).
func (s *Server) allowed(path string) []string {
	var out []string
	get := false
	static, isStatic := s.static[path]
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		routed := slices.Contains(static, m)
		if !isStatic {
			routed = s.router.Match(chi.NewRouteContext(), m, path)
		}
		if routed || m == http.MethodHead && get {
			out = append(out, m)
			get = get || m == http.MethodGet
		}
	}
	return out
}

// routeMethod returns the method of the route serving r: GET for a HEAD
// request that middleware.GetHead gave to a GET route, else r.Method.
// The per-route tables (routeScopes, queryParams) are keyed by it.
func routeMethod(r *http.Request) string {
	if r.Method == http.MethodHead {
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RouteMethod == http.MethodGet {
			return http.MethodGet
		}
	}
	return r.Method
}
