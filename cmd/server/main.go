// Command server is toolscore's HTTP grading service. Configure it with
// environment variables or flags (see Config), e.g.
//
//	DATABASE_URL=postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable go run ./cmd/server
//
// It applies the database migrations, serves the API of openapi.yaml and
// shuts down gracefully on SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/net/netutil"

	"github.com/toolscore/toolscore"
	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/otlp"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade"
	"github.com/toolscore/toolscore/internal/runs"
	"github.com/toolscore/toolscore/internal/secrets"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/ui"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	cfg, err := LoadConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolscore server:", err)
		os.Exit(2)
	}
	if cfg.PprofAddr == "" {
		// Without the pprof listener nothing reads a heap profile: no
		// allocation is sampled for one (a sample walks the stack; at the
		// default rate that is about 4% of a stored evaluation's CPU).
		runtime.MemProfileRate = 0
	}
	log, flush := newLogger(cfg.LogLevel)
	defer flush()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := Run(ctx, cfg, log, reg, nil); err != nil {
		log.Error("server stopped", zap.Error(err))
		flush()
		os.Exit(1)
	}
}

// newLogger builds the JSON logger on stderr at the given level (already
// validated). Lines are buffered (up to 256 KiB, flushed every second and
// by flush) so that one line per request does not cost one write(2) each;
// nothing is sampled away.
func newLogger(level string) (log *zap.Logger, flush func()) {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	enc.EncodeDuration = zapcore.StringDurationEncoder // "25s", as the configuration is written
	lvl, _ := zap.ParseAtomicLevel(level)
	ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(os.Stderr), Size: 256 << 10, FlushInterval: time.Second}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), ws, lvl)
	return zap.New(core, zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel)), func() { _ = ws.Stop() }
}

// migrateWait is how long Run retries the migrations while the database is
// unreachable (it may still be starting, e.g. under docker compose).
const migrateWait = 30 * time.Second

// Run serves the API until ctx ends, then shuts down in order (STYLE.md
// section 4): stop accepting and let in-flight requests finish (up to
// cfg.ShutdownGrace), drain the worker pool, flush the result writer and
// close the Postgres pool. started, when non-nil, receives the listening
// address once the server accepts connections.
//
// Errors: an unreachable database (after 30 s of retries), a database
// schema newer than this binary (store.ErrSchemaTooNew), a listen error.
func Run(ctx context.Context, cfg Config, log *zap.Logger, reg *prometheus.Registry, started func(net.Addr)) error {
	log.Info("starting", append(cfg.LogFields(), zap.String("version", version))...)
	if cfg.GCPercent > 0 {
		debug.SetGCPercent(cfg.GCPercent)
	}
	writeDelay := cfg.DBWriteDelay
	if writeDelay == 0 {
		writeDelay = -1 // store.Config: none
	}
	db, err := store.Open(ctx, store.Config{URL: cfg.DatabaseURL, MaxConns: int32(cfg.DBMaxConns), Writers: cfg.DBWriters,
		WriteDelay: writeDelay, Logger: log, Registerer: reg})
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(migrateWait)
	for {
		v, err := db.Migrate(ctx)
		if err == nil {
			log.Info("database migrated", zap.Int64("schema_version", v))
			break
		}
		if !errors.Is(err, engine.ErrUnavailable) || time.Now().After(deadline) {
			return err
		}
		log.Warn("database unreachable, retrying", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}

	// One secret scanner serves every evaluation, regrade and run. Build
	// its whole rule set now, so that no request pays for it; an error
	// leaves the credentials check reporting unknown, which is not a
	// reason to refuse to serve.
	scanner := secrets.New()
	if err := scanner.WarmUp(); err != nil {
		log.Error("secret-detection rules", zap.Error(err))
	}
	if err := bootstrap(ctx, db, cfg, log); err != nil {
		return err
	}
	authn := auth.NewAuthenticator(auth.Config{Store: db, OnTouchError: func(err error) {
		log.Warn("record API key use", zap.Error(err))
	}})

	harnessRuns, err := runs.New(runs.Config{Store: db, Logger: log, Registerer: reg, MaxTaskTime: cfg.RunRescueAfter,
		AllowedHosts: cfg.RunAllowedHosts, SecretScanner: scanner})
	if err != nil {
		return err
	}
	// The ingest grades with the API server's evaluation path (srv.Grade),
	// built before the river client starts working trace jobs.
	var srv *api.Server
	// The assembler's and retention sweep's polling get a pool of their
	// own (2 connections), as river has.
	background, err := store.Open(ctx, store.Config{URL: cfg.DatabaseURL, MaxConns: 2, Writers: 1, Logger: log})
	if err != nil {
		return err
	}
	defer background.Close()
	ingest, err := otlp.New(otlp.Config{Store: db, Background: background, Logger: log, Registerer: reg,
		Grade: func(ctx context.Context, project int64, body []byte, id uuid.UUID) (*record.Result, error) {
			return srv.Grade(ctx, project, body, id)
		},
		Quiet: cfg.OTLPQuiet, MaxAge: cfg.OTLPMaxAge, LateSpans: cfg.OTLPLateSpans, KeepUnmatched: cfg.OTLPUnmatched == "keep",
		KeepSpans: cfg.OTLPKeepSpans, KeepTraces: cfg.OTLPKeepTraces, Workers: cfg.OTLPWorkers, MaxBodyBytes: cfg.OTLPMaxBodyBytes,
	})
	if err != nil {
		return err
	}
	// One river client works regrades, harness runs and trace grading.
	jobs := func(w *river.Workers) map[string]river.QueueConfig {
		queues := harnessRuns.Register(w)
		maps.Copy(queues, ingest.Register(w))
		return queues
	}
	regrades, err := regrade.New(regrade.Config{Store: db, DatabaseURL: cfg.DatabaseURL, Logger: log, Registerer: reg,
		RescueAfter: cfg.RegradeRescueAfter, Workers: cfg.RegradeWorkers, Jobs: jobs, SecretScanner: scanner})
	if err != nil {
		return err
	}
	srv = api.New(api.Config{
		Store: db, Logger: log, Registerer: reg, Gatherer: reg,
		Workers: cfg.Workers, Queue: cfg.Queue, EvalTimeout: cfg.EvalTimeout,
		MaxBodyBytes: cfg.MaxBodyBytes, MaxBatchBytes: cfg.MaxBatchBytes,
		OpenAPI: toolscore.OpenAPI, Version: version, Regrades: regrades, Runs: harnessRuns, OTLP: ingest,
		Auth: authn, AuthOff: cfg.Auth == "off", Keys: db, MetricsToken: cfg.MetricsToken, MetricsOpen: cfg.MetricsOpen,
		SecretScanner: scanner,
		BodyTimeout:   cfg.BodyTimeout, MaxBodyReaders: cfg.MaxBodyReaders, ContractCacheBytes: cfg.ContractCacheBytes,
	})
	defer srv.Close() // after the job workers stop: trace jobs grade on its pool
	if err := regrades.Start(ctx); err != nil {
		return err
	}
	defer stopRegrades(regrades, log) // before srv.Close and db.Close
	ingest.Start()
	defer ingest.Stop()
	// The web console (internal/ui) under /ui/, the API everywhere else;
	// its aggregates are kept current in the background.
	console := ui.New(ui.Config{Store: db, Regrades: regrades, Runs: harnessRuns, Logger: log,
		Auth: authn, AuthOff: cfg.Auth == "off"})
	mux := http.NewServeMux()
	mux.Handle("/ui/", console.Handler())
	mux.Handle("/ui", console.Handler())
	mux.Handle("/", srv.Handler())
	rctx, stopRollup := context.WithCancel(ctx)
	defer stopRollup()
	go ui.RunRollup(rctx, db, log)

	if cfg.PprofAddr != "" {
		_, stopPprof, err := servePprof(cfg.PprofAddr, log)
		if err != nil {
			return fmt.Errorf("listen on TOOLSCORE_PPROF_ADDR: %w", err)
		}
		defer stopPprof()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Past MaxConns, connections wait in the kernel's accept queue: under
	// overload memory stays bounded by connections the server holds.
	ln = netutil.LimitListener(ln, cfg.MaxConns)
	// One address may hold only so many of those places (slow clients
	// stall only themselves).
	refusedConns := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "toolscore_connections_refused_total",
		Help: "Connections closed when accepted because their remote address had TOOLSCORE_MAX_CONNS_PER_IP open.",
	})
	reg.MustRegister(refusedConns)
	ln = limitPerIP(ln, cfg.MaxConnsPerIP, refusedConns.Inc)
	// Outermost, so that ConnContext meets its connections: an
	// evaluation's answer leaves in one write.
	ln = api.CoalesceWrites(ln)
	var open atomic.Int64
	hs := &http.Server{
		Handler:     closeWhenFull(mux, &open, cfg.MaxConns),
		ConnState:   countConns(&open),
		ConnContext: api.ConnContext,
		// Headers within HeaderTimeout; a body within BodyTimeout of when
		// its handler starts reading it (api readBody sets that
		// deadline); ReadTimeout is the outer bound of both, for bodies
		// no handler reads.
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	log.Info("listening", zap.String("addr", ln.Addr().String()))
	if started != nil {
		started(ln.Addr())
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", zap.Duration("grace", cfg.ShutdownGrace))
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown grace ended with requests still running", zap.Error(err))
	}
	// Deferred, in this order: srv.Close drains the pool, db.Close flushes
	// the writer and closes the Postgres pool.
	log.Info("stopped")
	return nil
}

// countConns returns an http.Server ConnState hook keeping open at the
// number of connections the server holds.
func countConns(open *atomic.Int64) func(net.Conn, http.ConnState) {
	return func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
}

// closeWhenFull answers with "Connection: close" while the server holds
// maxConns connections (open, see countConns), so that each response frees
// a place for a connection waiting in the accept queue. Without it, clients
// keeping their connections alive would hold every place until the idle
// timeout, and a connection past the limit would wait that long for its
// answer (a 429 under overload) instead of getting it at once.
func closeWhenFull(h http.Handler, open *atomic.Int64, maxConns int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open.Load() >= int64(maxConns) {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// stopRegrades stops the regrade job workers, letting running chunks
// finish for up to 10 s (the rest roll back and run again later).
func stopRegrades(r *regrade.Service, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		log.Warn("stop regrade workers", zap.Error(err))
	}
}
