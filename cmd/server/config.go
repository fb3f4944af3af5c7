package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/runs"
)

// Config is the server's whole configuration, loaded once by LoadConfig:
// environment variables first, then flags, which override them (each
// flag's default is its variable's value).
type Config struct {
	// Addr is the listen address: TOOLSCORE_ADDR, -addr; default ":8080".
	Addr string
	// DatabaseURL is the Postgres connection string: DATABASE_URL,
	// -database-url; required. It holds a password, so it is never
	// printed: see Redacted.
	DatabaseURL string `json:"-"`
	// Workers is the number of evaluation workers: TOOLSCORE_WORKERS,
	// -workers; default the number of CPUs.
	Workers int
	// Queue is the evaluation queue length; beyond it requests get 429:
	// TOOLSCORE_QUEUE, -queue; default 64 per worker.
	Queue int
	// MaxBodyBytes caps a request body: TOOLSCORE_MAX_BODY_BYTES,
	// -max-body-bytes; default 1048576 (1 MiB).
	MaxBodyBytes int64
	// MaxBatchBytes caps a batch request body: TOOLSCORE_MAX_BATCH_BYTES,
	// -max-batch-bytes; default 33554432 (32 MiB).
	MaxBatchBytes int64
	// EvalTimeout bounds one evaluation: TOOLSCORE_EVAL_TIMEOUT,
	// -eval-timeout; default 10s.
	EvalTimeout time.Duration
	// ShutdownGrace is how long in-flight requests may take to finish
	// after SIGTERM: TOOLSCORE_SHUTDOWN_GRACE, -shutdown-grace; default 25s.
	ShutdownGrace time.Duration
	// DBMaxConns caps the Postgres connections: TOOLSCORE_DB_MAX_CONNS,
	// -db-max-conns; default 8.
	DBMaxConns int
	// DBWriters is the number of concurrent group-commit transactions that
	// store results (store.Config Writers): TOOLSCORE_DB_WRITERS,
	// -db-writers; default (0) 4, or DBMaxConns-1 when that is less. Fewer
	// writers make larger groups (fewer commits, less Postgres CPU per
	// result) at the price of more waiting per request; it must be less
	// than DBMaxConns, which the API's reads and regrades share.
	DBWriters int
	// DBWriteDelay spaces the commits of small groups of results under
	// load (store.Config WriteDelay: the group waited for a write in
	// flight, or the last group held more than one result): a group of
	// fewer than 16 results is not written until DBWriteDelay after the
	// last write ended, gathering what arrives meanwhile; a writer idle
	// that long, or fed by one client waiting for each answer, writes at
	// once. TOOLSCORE_DB_WRITE_DELAY, -db-write-delay; default 1ms, 0
	// for none. Longer delays make larger groups (less CPU per result,
	// most of it Postgres') and answers later by up to the delay.
	DBWriteDelay time.Duration
	// LogLevel is debug, info, warn or error: TOOLSCORE_LOG_LEVEL,
	// -log-level; default info.
	LogLevel string
	// MaxConns caps the open client connections; further connections wait
	// in the kernel's accept queue, costing the server no memory:
	// TOOLSCORE_MAX_CONNS, -max-conns; default 1024.
	MaxConns int
	// GCPercent is the Go garbage collector's target (as GOGC):
	// TOOLSCORE_GC_PERCENT, -gc-percent; default 200, which trades some
	// memory (the live heap is small and bounded by the queue and the
	// in-flight limit) for less GC work per request; 0 leaves the
	// runtime's GOGC.
	GCPercent int
	// RegradeRescueAfter is how long the first attempt of a regrade job
	// (a plan or a chunk of 1,000 results, about a second) may run, and
	// how long it may stay running before another process takes it over,
	// its own presumed dead (regrade.Config RescueAfter; retries get twice
	// as long each, up to 4 min): TOOLSCORE_REGRADE_RESCUE_AFTER,
	// -regrade-rescue-after; default 10s, so a killed regrade resumes
	// within about 30 s.
	RegradeRescueAfter time.Duration
	// RunRescueAfter is the longest a server-side harness task may take
	// (a run's timeout × (retries + 1), backoff and grading must fit in
	// it) and how long a task job may stay running before another process
	// takes it over (runs.Config MaxTaskTime): TOOLSCORE_RUN_RESCUE_AFTER,
	// -run-rescue-after; default 2m.
	RunRescueAfter time.Duration
	// RegradeWorkers is the number of regrade chunk jobs (of 1,000
	// results each) this process works at once (regrade.Config Workers):
	// TOOLSCORE_REGRADE_WORKERS, -regrade-workers; default 4. Each chunk
	// alternates between Postgres (reading originals, writing results)
	// and grading on every CPU, so several chunks keep both busy; each
	// holds its chunk in memory (about 25 MB for 1,000 medium results).
	RegradeWorkers int
	// Auth is "on" (every route but /healthz, /readyz, /openapi.yaml and
	// /metrics needs an API key) or "off" (every request acts as an admin
	// of project default with every scope; local development only, logged
	// loudly at start): TOOLSCORE_AUTH, -auth; default on.
	Auth string
	// BootstrapKey, when set and the database has never had a key, is
	// stored (hashed) at start as an admin key of project default:
	// TOOLSCORE_BOOTSTRAP_KEY (no flag, so it stays out of process
	// listings); 32 to 512 printable ASCII characters. It is a secret:
	// never printed.
	BootstrapKey string `json:"-"`
	// MetricsToken, when set, is the bearer token /metrics needs:
	// TOOLSCORE_METRICS_TOKEN (no flag). A secret: never printed.
	MetricsToken string `json:"-"`
	// MetricsOpen serves /metrics without a token: TOOLSCORE_METRICS_OPEN,
	// -metrics-open; default false (without a token /metrics is then 401).
	MetricsOpen bool
	// RunAllowedHosts are the agent hosts server-side harness runs may
	// reach (runs.ParseAllowList: host names, *.suffixes, IPs, CIDRs;
	// loopback, private, link-local and metadata addresses only when
	// listed as addresses): TOOLSCORE_RUN_ALLOWED_HOSTS, -run-allowed-hosts,
	// comma-separated; default none, which refuses every run.
	RunAllowedHosts []string
	// OTLPQuiet is how long after its last span a trace whose root span
	// ended is complete and graded (otlp.Config Quiet):
	// TOOLSCORE_OTLP_QUIET, -otlp-quiet; default 5s.
	OTLPQuiet time.Duration
	// OTLPMaxAge is how long after its first span a trace is graded
	// anyway, flagged incomplete: TOOLSCORE_OTLP_MAX_AGE, -otlp-max-age;
	// default 10m.
	OTLPMaxAge time.Duration
	// OTLPLateSpans is what a span arriving after its trace was closed
	// does: ignore (counted only) or regrade (the trace is graded again,
	// as a regrade of its first result): TOOLSCORE_OTLP_LATE_SPANS,
	// -otlp-late-spans; default ignore.
	OTLPLateSpans string
	// OTLPUnmatched is what happens to the spans of a trace no grading
	// rule matches: drop or keep (for TOOLSCORE_OTLP_KEEP_SPANS, at least
	// 1h): TOOLSCORE_OTLP_UNMATCHED, -otlp-unmatched; default drop.
	OTLPUnmatched string
	// OTLPKeepSpans is how long a graded trace's spans are kept:
	// TOOLSCORE_OTLP_KEEP_SPANS, -otlp-keep-spans; default 0 (deleted
	// when graded; at least 1h with late spans regrade or unmatched keep).
	OTLPKeepSpans time.Duration
	// OTLPKeepTraces is how long a finished trace's row is kept (late
	// spans are recognised for that long): TOOLSCORE_OTLP_KEEP_TRACES,
	// -otlp-keep-traces; default 24h.
	OTLPKeepTraces time.Duration
	// OTLPWorkers is the number of trace grading jobs this process runs
	// at once: TOOLSCORE_OTLP_WORKERS, -otlp-workers; default (0) 2 per
	// CPU.
	OTLPWorkers int
	// OTLPMaxBodyBytes caps an OTLP export body once decompressed:
	// TOOLSCORE_OTLP_MAX_BODY_BYTES, -otlp-max-body-bytes; default
	// 16777216 (16 MiB).
	OTLPMaxBodyBytes int64
	// HeaderTimeout bounds reading a request's headers (slow-header
	// clients): TOOLSCORE_HEADER_TIMEOUT, -header-timeout; default 5s.
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body once its handler starts
	// reading it (api.Config BodyTimeout; 408 beyond):
	// TOOLSCORE_BODY_TIMEOUT, -body-timeout; default 10s.
	BodyTimeout time.Duration
	// MaxBodyReaders caps the requests whose body is being received at
	// once (api.Config MaxBodyReaders; 429 beyond):
	// TOOLSCORE_MAX_BODY_READERS, -max-body-readers; default 512.
	MaxBodyReaders int
	// MaxConnsPerIP caps the connections open at once from one remote
	// address (more are closed when accepted): TOOLSCORE_MAX_CONNS_PER_IP,
	// -max-conns-per-ip; default 128, 0 for no cap (behind a proxy that
	// connects from one address, raise it or use 0).
	MaxConnsPerIP int
	// ContractCacheBytes bounds the parsed contracts kept in memory
	// (api.Config ContractCacheBytes): TOOLSCORE_CONTRACT_CACHE_BYTES,
	// -contract-cache-bytes; default 134217728 (128 MiB).
	ContractCacheBytes int64
	// PprofAddr, when set, serves net/http/pprof's profiles on this
	// loopback address (host 127.0.0.1, ::1 or localhost), apart from the
	// API, for profiling under load: TOOLSCORE_PPROF_ADDR, -pprof-addr;
	// default "" (off).
	PprofAddr string
}

// LoadConfig reads the configuration from getenv and the command-line
// arguments (without the program name) and validates it.
//
// Errors: a malformed variable or flag value (naming it), a missing
// DATABASE_URL, or a value out of range; flag.ErrHelp for -h.
func LoadConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	cfg := Config{
		Addr: ":8080", Workers: runtime.NumCPU(), MaxBodyBytes: 1 << 20, MaxBatchBytes: 32 << 20,
		EvalTimeout: 10 * time.Second, ShutdownGrace: 25 * time.Second, DBMaxConns: 8, DBWriteDelay: time.Millisecond, LogLevel: "info",
		RegradeRescueAfter: 10 * time.Second, RunRescueAfter: 2 * time.Minute, RegradeWorkers: 4, GCPercent: 200, MaxConns: 1024, Auth: "on",
		OTLPQuiet: 5 * time.Second, OTLPMaxAge: 10 * time.Minute, OTLPLateSpans: "ignore", OTLPUnmatched: "drop",
		OTLPKeepTraces: 24 * time.Hour, OTLPMaxBodyBytes: 16 << 20,
		HeaderTimeout: 5 * time.Second, BodyTimeout: 10 * time.Second, MaxBodyReaders: 512, MaxConnsPerIP: 128, ContractCacheBytes: 128 << 20,
	}
	var errs []error
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	num := func(name string, dst *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a whole number", name, v))
			}
			*dst = n
		}
	}
	num64 := func(name string, dst *int64) {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a whole number", name, v))
			}
			*dst = n
		}
	}
	boolean := func(name string, dst *bool) {
		if v := getenv(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not true or false", name, v))
			}
			*dst = b
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 10s", name, v))
			}
			*dst = d
		}
	}
	str("TOOLSCORE_ADDR", &cfg.Addr)
	str("DATABASE_URL", &cfg.DatabaseURL)
	num("TOOLSCORE_WORKERS", &cfg.Workers)
	num("TOOLSCORE_QUEUE", &cfg.Queue)
	num64("TOOLSCORE_MAX_BODY_BYTES", &cfg.MaxBodyBytes)
	num64("TOOLSCORE_MAX_BATCH_BYTES", &cfg.MaxBatchBytes)
	dur("TOOLSCORE_EVAL_TIMEOUT", &cfg.EvalTimeout)
	dur("TOOLSCORE_SHUTDOWN_GRACE", &cfg.ShutdownGrace)
	num("TOOLSCORE_DB_MAX_CONNS", &cfg.DBMaxConns)
	num("TOOLSCORE_DB_WRITERS", &cfg.DBWriters)
	dur("TOOLSCORE_DB_WRITE_DELAY", &cfg.DBWriteDelay)
	str("TOOLSCORE_LOG_LEVEL", &cfg.LogLevel)
	num("TOOLSCORE_GC_PERCENT", &cfg.GCPercent)
	num("TOOLSCORE_MAX_CONNS", &cfg.MaxConns)
	dur("TOOLSCORE_REGRADE_RESCUE_AFTER", &cfg.RegradeRescueAfter)
	dur("TOOLSCORE_RUN_RESCUE_AFTER", &cfg.RunRescueAfter)
	num("TOOLSCORE_REGRADE_WORKERS", &cfg.RegradeWorkers)
	str("TOOLSCORE_AUTH", &cfg.Auth)
	str("TOOLSCORE_BOOTSTRAP_KEY", &cfg.BootstrapKey)
	str("TOOLSCORE_METRICS_TOKEN", &cfg.MetricsToken)
	boolean("TOOLSCORE_METRICS_OPEN", &cfg.MetricsOpen)
	dur("TOOLSCORE_HEADER_TIMEOUT", &cfg.HeaderTimeout)
	dur("TOOLSCORE_BODY_TIMEOUT", &cfg.BodyTimeout)
	num("TOOLSCORE_MAX_BODY_READERS", &cfg.MaxBodyReaders)
	num("TOOLSCORE_MAX_CONNS_PER_IP", &cfg.MaxConnsPerIP)
	num64("TOOLSCORE_CONTRACT_CACHE_BYTES", &cfg.ContractCacheBytes)
	str("TOOLSCORE_PPROF_ADDR", &cfg.PprofAddr)
	var allowed string
	str("TOOLSCORE_RUN_ALLOWED_HOSTS", &allowed)
	dur("TOOLSCORE_OTLP_QUIET", &cfg.OTLPQuiet)
	dur("TOOLSCORE_OTLP_MAX_AGE", &cfg.OTLPMaxAge)
	str("TOOLSCORE_OTLP_LATE_SPANS", &cfg.OTLPLateSpans)
	str("TOOLSCORE_OTLP_UNMATCHED", &cfg.OTLPUnmatched)
	dur("TOOLSCORE_OTLP_KEEP_SPANS", &cfg.OTLPKeepSpans)
	dur("TOOLSCORE_OTLP_KEEP_TRACES", &cfg.OTLPKeepTraces)
	num("TOOLSCORE_OTLP_WORKERS", &cfg.OTLPWorkers)
	num64("TOOLSCORE_OTLP_MAX_BODY_BYTES", &cfg.OTLPMaxBodyBytes)
	if len(errs) > 0 {
		return cfg, errs[0]
	}

	fs := flag.NewFlagSet("toolscore-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (TOOLSCORE_ADDR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "Postgres connection string (DATABASE_URL)")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "evaluation workers (TOOLSCORE_WORKERS)")
	fs.IntVar(&cfg.Queue, "queue", cfg.Queue, "evaluation queue length, 0 for 64 per worker (TOOLSCORE_QUEUE)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "request body limit (TOOLSCORE_MAX_BODY_BYTES)")
	fs.Int64Var(&cfg.MaxBatchBytes, "max-batch-bytes", cfg.MaxBatchBytes, "batch request body limit (TOOLSCORE_MAX_BATCH_BYTES)")
	fs.DurationVar(&cfg.EvalTimeout, "eval-timeout", cfg.EvalTimeout, "per-evaluation timeout (TOOLSCORE_EVAL_TIMEOUT)")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "time for in-flight requests at shutdown (TOOLSCORE_SHUTDOWN_GRACE)")
	fs.IntVar(&cfg.DBMaxConns, "db-max-conns", cfg.DBMaxConns, "Postgres connections (TOOLSCORE_DB_MAX_CONNS)")
	fs.IntVar(&cfg.DBWriters, "db-writers", cfg.DBWriters, "concurrent group-commit transactions storing results, 0 for min(4, db-max-conns - 1) (TOOLSCORE_DB_WRITERS)")
	fs.DurationVar(&cfg.DBWriteDelay, "db-write-delay", cfg.DBWriteDelay, "least time between the commits of small result groups under load, 0 for none (TOOLSCORE_DB_WRITE_DELAY)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error (TOOLSCORE_LOG_LEVEL)")
	fs.IntVar(&cfg.MaxConns, "max-conns", cfg.MaxConns, "open client connections (TOOLSCORE_MAX_CONNS)")
	fs.IntVar(&cfg.GCPercent, "gc-percent", cfg.GCPercent, "Go GC target percent, 0 to leave GOGC (TOOLSCORE_GC_PERCENT)")
	fs.DurationVar(&cfg.RegradeRescueAfter, "regrade-rescue-after", cfg.RegradeRescueAfter, "first attempt time of a regrade job, after which a killed one is taken over (TOOLSCORE_REGRADE_RESCUE_AFTER)")
	fs.DurationVar(&cfg.RunRescueAfter, "run-rescue-after", cfg.RunRescueAfter, "longest harness task budget, after which a killed task is taken over (TOOLSCORE_RUN_RESCUE_AFTER)")
	fs.IntVar(&cfg.RegradeWorkers, "regrade-workers", cfg.RegradeWorkers, "regrade chunks worked at once (TOOLSCORE_REGRADE_WORKERS)")
	fs.StringVar(&cfg.Auth, "auth", cfg.Auth, "on, or off for local development only: no API keys (TOOLSCORE_AUTH)")
	fs.BoolVar(&cfg.MetricsOpen, "metrics-open", cfg.MetricsOpen, "serve /metrics without a token (TOOLSCORE_METRICS_OPEN)")
	fs.DurationVar(&cfg.HeaderTimeout, "header-timeout", cfg.HeaderTimeout, "time to read a request's headers (TOOLSCORE_HEADER_TIMEOUT)")
	fs.DurationVar(&cfg.BodyTimeout, "body-timeout", cfg.BodyTimeout, "time to read a request's body (TOOLSCORE_BODY_TIMEOUT)")
	fs.IntVar(&cfg.MaxBodyReaders, "max-body-readers", cfg.MaxBodyReaders, "request bodies received at once (TOOLSCORE_MAX_BODY_READERS)")
	fs.IntVar(&cfg.MaxConnsPerIP, "max-conns-per-ip", cfg.MaxConnsPerIP, "open connections per remote address, 0 for no cap (TOOLSCORE_MAX_CONNS_PER_IP)")
	fs.Int64Var(&cfg.ContractCacheBytes, "contract-cache-bytes", cfg.ContractCacheBytes, "bytes of parsed contracts kept (TOOLSCORE_CONTRACT_CACHE_BYTES)")
	fs.StringVar(&cfg.PprofAddr, "pprof-addr", cfg.PprofAddr, "loopback address serving net/http/pprof, for debugging; empty for none (TOOLSCORE_PPROF_ADDR)")
	fs.StringVar(&allowed, "run-allowed-hosts", allowed, "agent hosts server-side runs may reach, comma-separated: names, *.suffixes, IPs, CIDRs; none refuses runs (TOOLSCORE_RUN_ALLOWED_HOSTS)")
	fs.DurationVar(&cfg.OTLPQuiet, "otlp-quiet", cfg.OTLPQuiet, "quiet period after which a trace whose root span ended is graded (TOOLSCORE_OTLP_QUIET)")
	fs.DurationVar(&cfg.OTLPMaxAge, "otlp-max-age", cfg.OTLPMaxAge, "age at which a trace is graded anyway, flagged incomplete (TOOLSCORE_OTLP_MAX_AGE)")
	fs.StringVar(&cfg.OTLPLateSpans, "otlp-late-spans", cfg.OTLPLateSpans, "late spans: ignore or regrade (TOOLSCORE_OTLP_LATE_SPANS)")
	fs.StringVar(&cfg.OTLPUnmatched, "otlp-unmatched", cfg.OTLPUnmatched, "spans of traces no rule matches: drop or keep (TOOLSCORE_OTLP_UNMATCHED)")
	fs.DurationVar(&cfg.OTLPKeepSpans, "otlp-keep-spans", cfg.OTLPKeepSpans, "how long a graded trace's spans are kept (TOOLSCORE_OTLP_KEEP_SPANS)")
	fs.DurationVar(&cfg.OTLPKeepTraces, "otlp-keep-traces", cfg.OTLPKeepTraces, "how long a finished trace's row is kept (TOOLSCORE_OTLP_KEEP_TRACES)")
	fs.IntVar(&cfg.OTLPWorkers, "otlp-workers", cfg.OTLPWorkers, "trace grading jobs at once, 0 for 2 per CPU (TOOLSCORE_OTLP_WORKERS)")
	fs.Int64Var(&cfg.OTLPMaxBodyBytes, "otlp-max-body-bytes", cfg.OTLPMaxBodyBytes, "OTLP export body limit, decompressed (TOOLSCORE_OTLP_MAX_BODY_BYTES)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for _, h := range strings.Split(allowed, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.RunAllowedHosts = append(cfg.RunAllowedHosts, h)
		}
	}
	if cfg.Queue == 0 {
		cfg.Queue = 64 * max(cfg.Workers, 1)
	}
	if cfg.DBWriters == 0 {
		cfg.DBWriters = max(min(4, cfg.DBMaxConns-1), 1)
	}
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	switch {
	case c.DatabaseURL == "":
		return fmt.Errorf("DATABASE_URL (or -database-url) is required, e.g. postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable")
	case c.Workers < 1:
		return fmt.Errorf("TOOLSCORE_WORKERS must be at least 1, got %d", c.Workers)
	case c.Queue < 1:
		return fmt.Errorf("TOOLSCORE_QUEUE must be at least 1, got %d", c.Queue)
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("TOOLSCORE_MAX_BODY_BYTES must be at least 1024, got %d", c.MaxBodyBytes)
	case c.MaxBatchBytes < c.MaxBodyBytes:
		return fmt.Errorf("TOOLSCORE_MAX_BATCH_BYTES (%d) must be at least TOOLSCORE_MAX_BODY_BYTES (%d)", c.MaxBatchBytes, c.MaxBodyBytes)
	case c.EvalTimeout <= 0:
		return fmt.Errorf("TOOLSCORE_EVAL_TIMEOUT must be positive, got %s", c.EvalTimeout)
	case c.RegradeRescueAfter <= 0:
		return fmt.Errorf("TOOLSCORE_REGRADE_RESCUE_AFTER must be positive, got %s", c.RegradeRescueAfter)
	case c.RunRescueAfter < 20*time.Second:
		// runs.Budget adds 15 s for grading to every task.
		return fmt.Errorf("TOOLSCORE_RUN_RESCUE_AFTER must be at least 20s, got %s", c.RunRescueAfter)
	case c.RegradeWorkers < 1 || c.RegradeWorkers > 10000:
		// river's limit of workers per queue is 10,000.
		return fmt.Errorf("TOOLSCORE_REGRADE_WORKERS must be from 1 to 10000, got %d", c.RegradeWorkers)
	case c.ShutdownGrace <= 0:
		return fmt.Errorf("TOOLSCORE_SHUTDOWN_GRACE must be positive, got %s", c.ShutdownGrace)
	case c.MaxConns < 1:
		return fmt.Errorf("TOOLSCORE_MAX_CONNS must be at least 1, got %d", c.MaxConns)
	case c.HeaderTimeout <= 0:
		return fmt.Errorf("TOOLSCORE_HEADER_TIMEOUT must be positive, got %s", c.HeaderTimeout)
	case c.BodyTimeout <= 0:
		return fmt.Errorf("TOOLSCORE_BODY_TIMEOUT must be positive, got %s", c.BodyTimeout)
	case c.MaxBodyReaders < 1:
		return fmt.Errorf("TOOLSCORE_MAX_BODY_READERS must be at least 1, got %d", c.MaxBodyReaders)
	case c.MaxConnsPerIP < 0:
		return fmt.Errorf("TOOLSCORE_MAX_CONNS_PER_IP must be 0 (no cap) or more, got %d", c.MaxConnsPerIP)
	case c.ContractCacheBytes < 1<<20:
		return fmt.Errorf("TOOLSCORE_CONTRACT_CACHE_BYTES must be at least 1048576, got %d", c.ContractCacheBytes)
	case c.DBWriteDelay < 0 || c.DBWriteDelay > time.Second:
		return fmt.Errorf("TOOLSCORE_DB_WRITE_DELAY must be from 0 to 1s, got %s", c.DBWriteDelay)
	case c.GCPercent < 0:
		return fmt.Errorf("TOOLSCORE_GC_PERCENT must be 0 or more, got %d", c.GCPercent)
	case c.DBMaxConns < 2:
		return fmt.Errorf("TOOLSCORE_DB_MAX_CONNS must be at least 2, got %d", c.DBMaxConns)
	case c.OTLPQuiet <= 0:
		return fmt.Errorf("TOOLSCORE_OTLP_QUIET must be positive, got %s", c.OTLPQuiet)
	case c.OTLPMaxAge < c.OTLPQuiet:
		return fmt.Errorf("TOOLSCORE_OTLP_MAX_AGE (%s) must be at least TOOLSCORE_OTLP_QUIET (%s)", c.OTLPMaxAge, c.OTLPQuiet)
	case c.OTLPLateSpans != "ignore" && c.OTLPLateSpans != "regrade":
		return fmt.Errorf("TOOLSCORE_OTLP_LATE_SPANS must be ignore or regrade, got %q", c.OTLPLateSpans)
	case c.OTLPUnmatched != "drop" && c.OTLPUnmatched != "keep":
		return fmt.Errorf("TOOLSCORE_OTLP_UNMATCHED must be drop or keep, got %q", c.OTLPUnmatched)
	case c.OTLPKeepSpans < 0 || c.OTLPKeepTraces <= 0:
		return fmt.Errorf("TOOLSCORE_OTLP_KEEP_SPANS must be 0 or more and TOOLSCORE_OTLP_KEEP_TRACES positive, got %s and %s", c.OTLPKeepSpans, c.OTLPKeepTraces)
	case c.OTLPWorkers < 0 || c.OTLPWorkers > 10000:
		return fmt.Errorf("TOOLSCORE_OTLP_WORKERS must be from 0 to 10000, got %d", c.OTLPWorkers)
	case c.OTLPMaxBodyBytes < 1024:
		return fmt.Errorf("TOOLSCORE_OTLP_MAX_BODY_BYTES must be at least 1024, got %d", c.OTLPMaxBodyBytes)
	case c.DBWriters < 1 || c.DBWriters >= c.DBMaxConns:
		return fmt.Errorf("TOOLSCORE_DB_WRITERS must be from 1 to TOOLSCORE_DB_MAX_CONNS-1 (%d), got %d", c.DBMaxConns-1, c.DBWriters)
	}
	if c.Auth != "on" && c.Auth != "off" {
		return fmt.Errorf("TOOLSCORE_AUTH must be on or off, got %q", c.Auth)
	}
	if c.BootstrapKey != "" {
		if err := auth.CheckToken(c.BootstrapKey); err != nil {
			return fmt.Errorf("TOOLSCORE_BOOTSTRAP_KEY: %v", err) // the error never quotes the key
		}
	}
	if _, err := runs.ParseAllowList(c.RunAllowedHosts); err != nil {
		return fmt.Errorf("TOOLSCORE_RUN_ALLOWED_HOSTS: %v", err)
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		return fmt.Errorf("TOOLSCORE_METRICS_TOKEN must be at least 16 characters, got %d", len(c.MetricsToken))
	}
	if c.PprofAddr != "" {
		host, _, err := net.SplitHostPort(c.PprofAddr)
		if err != nil || (host != "localhost" && !isLoopback(host)) {
			return fmt.Errorf("TOOLSCORE_PPROF_ADDR must be a loopback host:port such as 127.0.0.1:6060, got %q", c.PprofAddr)
		}
	}
	if _, err := zap.ParseAtomicLevel(c.LogLevel); err != nil {
		return fmt.Errorf("TOOLSCORE_LOG_LEVEL must be debug, info, warn or error, got %q", c.LogLevel)
	}
	return nil
}

// isLoopback reports whether host is a loopback IP address.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redacted returns the database URL with its password replaced by xxxxx,
// in URL and key=value forms alike.
func Redacted(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	return kvPassword.ReplaceAllString(dsn, "${1}xxxxx")
}

// LogFields returns the configuration as log fields, the database URL
// redacted.
func (c Config) LogFields() []zap.Field {
	return []zap.Field{
		zap.String("addr", c.Addr), zap.String("database_url", Redacted(c.DatabaseURL)),
		zap.Int("workers", c.Workers), zap.Int("queue", c.Queue),
		zap.Int64("max_body_bytes", c.MaxBodyBytes), zap.Int64("max_batch_bytes", c.MaxBatchBytes),
		zap.Stringer("eval_timeout", c.EvalTimeout), zap.Stringer("shutdown_grace", c.ShutdownGrace),
		zap.Int("db_max_conns", c.DBMaxConns), zap.Int("db_writers", c.DBWriters), zap.Stringer("db_write_delay", c.DBWriteDelay), zap.String("log_level", c.LogLevel), zap.Int("gc_percent", c.GCPercent), zap.Int("max_conns", c.MaxConns),
		zap.Stringer("regrade_rescue_after", c.RegradeRescueAfter), zap.Stringer("run_rescue_after", c.RunRescueAfter), zap.Int("regrade_workers", c.RegradeWorkers),
		zap.String("auth", c.Auth), zap.Bool("bootstrap_key_set", c.BootstrapKey != ""),
		zap.Bool("metrics_token_set", c.MetricsToken != ""), zap.Bool("metrics_open", c.MetricsOpen),
		zap.Strings("run_allowed_hosts", c.RunAllowedHosts),
		zap.Stringer("otlp_quiet", c.OTLPQuiet), zap.Stringer("otlp_max_age", c.OTLPMaxAge), zap.String("otlp_late_spans", c.OTLPLateSpans),
		zap.String("otlp_unmatched", c.OTLPUnmatched), zap.Stringer("otlp_keep_spans", c.OTLPKeepSpans),
		zap.Stringer("otlp_keep_traces", c.OTLPKeepTraces), zap.Int("otlp_workers", c.OTLPWorkers), zap.Int64("otlp_max_body_bytes", c.OTLPMaxBodyBytes),
		zap.Stringer("header_timeout", c.HeaderTimeout), zap.Stringer("body_timeout", c.BodyTimeout),
		zap.Int("max_body_readers", c.MaxBodyReaders), zap.Int("max_conns_per_ip", c.MaxConnsPerIP),
		zap.Int64("contract_cache_bytes", c.ContractCacheBytes), zap.String("pprof_addr", c.PprofAddr),
	}
}
