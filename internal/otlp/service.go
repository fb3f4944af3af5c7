// Package otlp makes toolscore an OpenTelemetry trace receiver (issue
// 17): POST /v1/traces speaks OTLP/HTTP, spans are stored as they arrive,
// assembled per trace id, and each complete trace is graded once, by a
// durable river job, against the contract a grading rule chooses.
//
// # Receiving
//
// Export (http.go) reads an ExportTraceServiceRequest in protobuf or
// OTLP/JSON (gzip or not), splits its spans by trace id (Split) and stores
// them in one transaction (store.DB.WriteSpans) before it answers 200: an
// acknowledged span is committed. Spans with invalid ids are rejected in
// the response's partial_success; a malformed body is 400; too many
// exports at once 429 and an unreachable database 503, both with
// Retry-After, which OTLP exporters retry.
//
// # Assembly
//
// A trace is complete when its root span has ended and no span arrived
// for Config.Quiet, or at Config.MaxAge (then marked incomplete). Each
// process runs an assembler that closes due traces with FOR UPDATE SKIP
// LOCKED and queues their grading jobs in the same transaction (each
// closed trace in exactly one job, a job grading up to 64 traces closed
// together: jobsFor), so replicas share the work and a trace is closed
// once.
// Spans arriving after a trace closed are late: counted, and either
// dropped or, with Config.LateSpans "regrade", reopening the trace as its
// next revision, graded again as a regrade of the first result.
//
// # Grading
//
// The job reads its traces and their spans in one round trip, assembles
// each trace's spans into one OTLP/JSON export (AppendJSON;
// a span repeated by an exporter's retry is kept once), finds the first
// grading rule in force that matches (Rule), and grades the document with
// Config.Grade, which is the API's own evaluation path: the result equals
// POST /v1/evaluations of the same OTLP/JSON with the rule's contract and
// options. The results, the traces' final states and the job's
// completion commit together (store.DB.FinishOTLPTraces), and a trace
// moves to its final state only from closed at the job's revision: one
// result per trace revision, however often the job runs.
package otlp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
)

// Queue is the river queue of trace grading jobs.
const Queue = "otlp"

// Store is what ingest needs from persistence; cmd/server passes in
// *store.DB, whose methods of the same names document the exact
// behaviour.
type Store interface {
	// Pool is the pgx pool river's driver shares with the store.
	Pool() *pgxpool.Pool
	WriteSpans(ctx context.Context, w record.SpanWrite) (record.SpanWriteResult, error)
	CloseDueTraces(ctx context.Context, limit int, quiet time.Duration, hook func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error) ([]record.ClosedTrace, error)
	RequeueOTLPTraces(ctx context.Context, q record.TraceRequeue, hook func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error) ([]record.ClosedTrace, error)
	GetOTLPTrace(ctx context.Context, projectID int64, traceID [16]byte) (record.OTLPTrace, error)
	ReadOTLPTraces(ctx context.Context, projectID int64, traceIDs [][16]byte) ([]record.StoredTrace, error)
	FinishOTLPTraces(ctx context.Context, fs []record.TraceFinish, hook func(context.Context, pgx.Tx) error) ([]bool, error)
	PurgeOTLP(ctx context.Context, keepSpans, keepTraces time.Duration, limit int) (int64, int64, error)
	CountOpenTraces(ctx context.Context) (int64, error)
	CreateGradingRule(ctx context.Context, r record.GradingRule) (record.GradingRule, bool, error)
	GetGradingRule(ctx context.Context, projectID int64, name string, version int) (record.GradingRule, error)
	ListGradingRuleVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.GradingRule, error)
	ListGradingRules(ctx context.Context, projectID int64, after string, limit int) ([]record.GradingRule, error)
}

// Grader grades one evaluation request, the JSON body POST
// /v1/evaluations takes, for a project, exactly as that route does, and
// returns the result to store under id (it stores nothing). cmd/server
// passes the API server's Grade.
//
// Errors: ErrRejected (wrapped, with the reason) when the request itself
// cannot be graded (an unknown contract, a trace the formats cannot read,
// invalid options): retrying cannot help. Any other error is transient.
type Grader func(ctx context.Context, projectID int64, body []byte, id uuid.UUID) (*record.Result, error)

// ErrRejected marks a Grader error that no retry can cure.
var ErrRejected = errors.New("evaluation rejected")

// Late-span policies (Config.LateSpans).
const (
	LateIgnore  = "ignore"
	LateRegrade = "regrade"
)

// Config configures New. Zero values take the documented defaults.
type Config struct {
	// Store persists spans, traces and rules. Required.
	Store Store
	// Background, when set, is the store the assembler, the retention
	// sweep and the open-traces gauge use: cmd/server gives them a small
	// pool of their own, so that their steady polling neither competes
	// with API requests for connections nor changes how the API's pool
	// recovers from an outage (a connection used every 250 ms is never
	// idle long enough to be pinged, so after an outage a request could
	// take it dead). Default Store.
	Background Store
	// Grade grades an assembled trace. Required.
	Grade Grader
	// Logger receives job failures; nil means none.
	Logger *zap.Logger
	// Registerer receives the metrics; nil means none are registered.
	Registerer prometheus.Registerer
	// Quiet is how long after its last span a trace whose root span has
	// ended is complete; default 5 s.
	Quiet time.Duration
	// MaxAge is how long after its first span a trace is graded anyway,
	// marked incomplete; default 10 min.
	MaxAge time.Duration
	// LateSpans is LateIgnore (default: spans of a closed trace are
	// counted and dropped) or LateRegrade (they reopen it, and it is
	// graded again as a regrade of its first result; spans are then kept
	// after grading, for KeepSpans or at least 1 h).
	LateSpans string
	// KeepUnmatched keeps the spans of traces no rule matched (and of
	// those that failed or had no tool call) for KeepSpans or at least
	// 1 h, for a later grading once a rule exists (RegradeTraces, POST
	// /v1/traces/regrade); default false (dropped at once).
	KeepUnmatched bool
	// KeepSpans is how long the spans of a finished trace are kept
	// (default 0: deleted in the grading transaction, unless LateSpans or
	// KeepUnmatched need them).
	KeepSpans time.Duration
	// KeepTraces is how long a finished trace's row (its state, counts
	// and result id) is kept; a span of its trace id arriving later starts
	// a new trace. Default 24 h.
	KeepTraces time.Duration
	// Workers is the number of grading jobs this process runs at once;
	// default 2 per CPU.
	Workers int
	// MaxBodyBytes caps an export body, after decompression; default 16
	// MiB.
	MaxBodyBytes int64
	// MaxExports caps the export requests being read and stored at once;
	// more get 429 with Retry-After: 1. Default 64.
	MaxExports int
	// SweepEvery is how often the assembler looks for due traces; default
	// 250 ms.
	SweepEvery time.Duration
	// SweepBatch is the most traces one assembler transaction closes;
	// default 1000.
	SweepBatch int
}

// Service receives OTLP exports, assembles traces and grades them. Create
// it with New, register its job worker with Register on the process's
// river client, Start its background loops and Stop them at shutdown. It
// is safe for concurrent use.
type Service struct {
	cfg     Config
	store   Store
	log     *zap.Logger
	inserts *river.Client[pgx.Tx] // insert-only: queues jobs in the assembler's transactions
	metrics *metrics
	exports chan struct{}
	rules   *ruleCache

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// New builds a Service with an insert-only river client on the store's
// pool.
//
// Errors: an invalid configuration.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Grade == nil {
		return nil, errors.New("otlp: Config.Store and Config.Grade are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Background == nil {
		cfg.Background = cfg.Store
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 5 * time.Second
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 10 * time.Minute
	}
	switch cfg.LateSpans {
	case "":
		cfg.LateSpans = LateIgnore
	case LateIgnore, LateRegrade:
	default:
		return nil, fmt.Errorf("otlp: LateSpans must be %s or %s, got %q", LateIgnore, LateRegrade, cfg.LateSpans)
	}
	if cfg.KeepTraces <= 0 {
		cfg.KeepTraces = 24 * time.Hour
	}
	if (cfg.LateSpans == LateRegrade || cfg.KeepUnmatched) && cfg.KeepSpans < time.Hour {
		cfg.KeepSpans = time.Hour
	}
	cfg.KeepTraces = max(cfg.KeepTraces, cfg.KeepSpans)
	if cfg.Workers <= 0 {
		cfg.Workers = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 16 << 20
	}
	if cfg.MaxExports <= 0 {
		cfg.MaxExports = 64
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = 250 * time.Millisecond
	}
	if cfg.SweepBatch <= 0 {
		cfg.SweepBatch = 1000
	}
	s := &Service{cfg: cfg, store: cfg.Store, log: cfg.Logger, exports: make(chan struct{}, cfg.MaxExports), rules: newRuleCache(cfg.Store)}
	s.metrics = newMetrics(cfg.Registerer, cfg.Background.CountOpenTraces)
	workers := river.NewWorkers()
	river.AddWorker(workers, &tracesWorker{s: s})
	river.AddWorker(workers, &traceWorker{s: s})
	client, err := river.NewClient(riverpgxv5.New(cfg.Store.Pool()), &river.Config{Workers: workers})
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	s.inserts = client
	return s, nil
}

// Config returns the configuration in force, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Register adds the trace grading worker to workers, the workers of the
// river client that works this process's jobs, and returns the queue to
// give that client.
func (s *Service) Register(workers *river.Workers) map[string]river.QueueConfig {
	river.AddWorker(workers, &tracesWorker{s: s})
	river.AddWorker(workers, &traceWorker{s: s})
	return map[string]river.QueueConfig{Queue: {MaxWorkers: s.cfg.Workers}}
}

// Start runs the assembler and the retention sweep until Stop.
func (s *Service) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.wg.Add(2)
	go s.assemble(ctx)
	go s.purge(ctx)
}

// Stop ends the background loops and waits for them.
func (s *Service) Stop() {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
}

// assemble closes due traces every SweepEvery (at once again while a
// sweep closed a full batch), queuing their grading jobs.
func (s *Service) assemble(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.SweepEvery)
	defer t.Stop()
	for {
		for {
			n, err := s.SweepOnce(ctx)
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, engine.ErrUnavailable) {
					s.log.Error("close due traces", zap.Error(err))
				}
				break
			}
			if n < s.cfg.SweepBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepOnce closes up to SweepBatch due traces and queues their grading
// jobs, in one transaction; it returns how many it closed.
//
// Errors: engine.ErrUnavailable.
func (s *Service) SweepOnce(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	closed, err := s.cfg.Background.CloseDueTraces(ctx, s.cfg.SweepBatch, s.cfg.Quiet, func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error {
		_, err := s.inserts.InsertManyTx(ctx, tx, s.jobsFor(closed, false))
		return err
	})
	for _, c := range closed {
		trigger := "complete"
		if c.Incomplete {
			trigger = "max_age"
		}
		s.metrics.assembled.WithLabelValues(trigger).Inc()
	}
	return len(closed), err
}

// RegradeTraces queues finished traces whose spans are still stored for
// grading again, as their next revision: up to q.Limit of those q
// selects, oldest finished first (the traces a rule did not match, kept
// with Config.KeepUnmatched, are graded by the rules in force now; a
// graded trace's new result is a regrade of its first). It returns the
// traces queued.
//
// Errors: engine.ErrUnavailable.
func (s *Service) RegradeTraces(ctx context.Context, q record.TraceRequeue) ([]record.ClosedTrace, error) {
	closed, err := s.store.RequeueOTLPTraces(ctx, q, func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error {
		_, err := s.inserts.InsertManyTx(ctx, tx, s.jobsFor(closed, true))
		return err
	})
	if err != nil {
		return nil, err
	}
	s.metrics.assembled.WithLabelValues("regrade").Add(float64(len(closed)))
	return closed, nil
}

// Limits of one grading job: it grades up to jobTraces traces, and more
// than one only while their spans add up to at most jobSpans.
const (
	jobTraces = 64
	jobSpans  = 4096
)

// jobsFor groups closed traces into grading jobs, each of one project:
// as many jobs as there are workers (when there are enough traces), each
// of at most jobTraces traces and jobSpans spans (or of one trace), so
// that a sweep's traces are graded in parallel while each job's
// transactions and river's per-job work are shared by its traces.
//
// regrade marks the jobs of traces closed again by RegradeTraces.
func (s *Service) jobsFor(closed []record.ClosedTrace, regrade bool) []river.InsertManyParams {
	closed = slices.Clone(closed)
	slices.SortStableFunc(closed, func(a, b record.ClosedTrace) int { return cmp.Compare(a.ProjectID, b.ProjectID) })
	per := min(max((len(closed)+s.cfg.Workers-1)/s.cfg.Workers, 1), jobTraces)
	var params []river.InsertManyParams
	cur, spans := tracesArgs{Regrade: regrade}, 0
	flush := func() {
		if len(cur.Traces) > 0 {
			params = append(params, river.InsertManyParams{Args: cur})
		}
		cur, spans = tracesArgs{Regrade: regrade}, 0
	}
	for _, c := range closed {
		if len(cur.Traces) > 0 && (cur.ProjectID != c.ProjectID || len(cur.Traces) == per || spans+c.Spans > jobSpans) {
			flush()
		}
		cur.ProjectID = c.ProjectID
		cur.Traces = append(cur.Traces, traceRef{TraceID: TraceID(c.TraceID).String(), Revision: c.Revision})
		spans += c.Spans
	}
	flush()
	return params
}

// purge applies the retention settings every minute.
func (s *Service) purge(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			spans, traces, err := s.cfg.Background.PurgeOTLP(pctx, s.cfg.KeepSpans, s.cfg.KeepTraces, 5000)
			cancel()
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, engine.ErrUnavailable) {
					s.log.Error("purge traces", zap.Error(err))
				}
				break
			}
			if spans < 5000 && traces < 5000 {
				break
			}
		}
	}
}

// Receive stores the spans of one decoded export request for a project
// and returns once they are committed: the number of spans stored, late
// and rejected, and the message for partial_success.
//
// Errors: engine.ErrUnavailable; ctx's error.
func (s *Service) Receive(ctx context.Context, projectID int64, req *coltracepb.ExportTraceServiceRequest, raw []byte) (Receipt, error) {
	batches, rejected, msg := Split(req, raw)
	rc := Receipt{Rejected: rejected, Message: msg}
	s.metrics.rejected.Add(float64(rejected))
	if len(batches) == 0 {
		return rc, nil
	}
	w := record.SpanWrite{ProjectID: projectID, Quiet: s.cfg.Quiet, MaxAge: s.cfg.MaxAge, Reopen: s.cfg.LateSpans == LateRegrade}
	w.Batches = make([]record.SpanBatch, len(batches))
	for i, b := range batches {
		w.Batches[i] = record.SpanBatch{TraceID: b.TraceID, Spans: b.Spans, RootEnded: b.RootEnded, Data: b.Data}
		rc.Spans += b.Spans
	}
	res, err := s.store.WriteSpans(ctx, w)
	if err != nil {
		return rc, err
	}
	rc.Late = res.Late
	s.metrics.received.Add(float64(rc.Spans))
	s.metrics.late.Add(float64(res.Late))
	return rc, nil
}

// Receipt is what Receive did with an export request.
type Receipt struct {
	// Spans is the number of valid spans received (late ones included).
	Spans int
	// Late is the number of spans that arrived for a trace already
	// closed.
	Late int
	// Rejected is the number of spans refused (invalid ids), Message why.
	Rejected int64
	Message  string
}

// GetTrace returns one trace of a project.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) GetTrace(ctx context.Context, projectID int64, id TraceID) (record.OTLPTrace, error) {
	return s.store.GetOTLPTrace(ctx, projectID, id)
}

// CreateRule stores a rule document (already checked with ParseRule) as
// the next version of name, or returns the identical existing version
// with created false; the process's rules in force are reloaded.
//
// Errors: engine.ErrUnavailable.
func (s *Service) CreateRule(ctx context.Context, r record.GradingRule) (record.GradingRule, bool, error) {
	out, created, err := s.store.CreateGradingRule(ctx, r)
	if err == nil {
		s.rules.forget(r.ProjectID)
	}
	return out, created, err
}

// GetRule returns one version of a named rule (0: the latest).
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) GetRule(ctx context.Context, projectID int64, name string, version int) (record.GradingRule, error) {
	return s.store.GetGradingRule(ctx, projectID, name, version)
}

// ListRuleVersions returns up to limit versions of a named rule after
// version after.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) ListRuleVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.GradingRule, error) {
	return s.store.ListGradingRuleVersions(ctx, projectID, name, after, limit)
}

// ListRules returns the latest version of up to limit named rules after
// the name after.
//
// Errors: engine.ErrUnavailable.
func (s *Service) ListRules(ctx context.Context, projectID int64, after string, limit int) ([]record.GradingRule, error) {
	return s.store.ListGradingRules(ctx, projectID, after, limit)
}

// activeRule is a parsed rule in force with its identity.
type activeRule struct {
	name    string
	version int
	rule    *Rule
}

// ruleCache keeps each project's rules in force, parsed and in priority
// order, for up to 2 s (a new version is seen by other processes within
// that time, by this one at once).
type ruleCache struct {
	store Store
	mu    sync.Mutex
	by    map[int64]ruleEntry
}

type ruleEntry struct {
	rules   []activeRule
	fetched time.Time
}

const rulesTTL = 2 * time.Second

func newRuleCache(st Store) *ruleCache { return &ruleCache{store: st, by: map[int64]ruleEntry{}} }

func (c *ruleCache) forget(project int64) {
	c.mu.Lock()
	delete(c.by, project)
	c.mu.Unlock()
}

// get returns the project's rules in force, lowest priority first, ties
// by name. A stored rule that no longer parses is left out and logged by
// the caller through its error list.
func (c *ruleCache) get(ctx context.Context, project int64) ([]activeRule, error) {
	c.mu.Lock()
	e, ok := c.by[project]
	c.mu.Unlock()
	if ok && time.Since(e.fetched) < rulesTTL {
		return e.rules, nil
	}
	stored, err := c.store.ListGradingRules(ctx, project, "", 0)
	if err != nil {
		return nil, err
	}
	var rules []activeRule
	for _, sr := range stored {
		r, err := ParseRule(sr.Body)
		if err != nil {
			continue // checked when stored; a rule this version cannot read matches nothing
		}
		rules = append(rules, activeRule{name: sr.Name, version: sr.Version, rule: r})
	}
	slices.SortStableFunc(rules, func(a, b activeRule) int {
		if a.rule.Priority != b.rule.Priority {
			return a.rule.Priority - b.rule.Priority
		}
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	c.mu.Lock()
	c.by[project] = ruleEntry{rules: rules, fetched: time.Now()}
	c.mu.Unlock()
	return rules, nil
}

// EvaluationBody returns the body of POST /v1/evaluations that grades the
// OTLP/JSON document doc with rule r: the contract reference, the trace,
// the rule's options, and task_id, run_id, agent and labels from the
// attributes the rule names (values longer than the API accepts are
// left out), plus the labels otel.trace_id (the trace id) and, for a
// trace graded at the maximum age, otel.incomplete "true".
func EvaluationBody(r *Rule, ref string, a *Attrs, doc []byte, traceID TraceID, incomplete bool) []byte {
	b := make([]byte, 0, len(doc)+512)
	b = append(b, `{"contract":`...)
	b = jsondoc.AppendString(b, ref)
	b = append(b, `,"trace":`...)
	b = append(b, doc...)
	for _, f := range []struct{ key, attr string }{{"task_id", r.TaskID}, {"run_id", r.RunID}, {"agent", r.Agent}} {
		if f.attr == "" {
			continue
		}
		if v, ok := a.Lookup(f.attr); ok && v != "" && len(v) <= 256 {
			b = append(b, ',', '"')
			b = append(b, f.key...)
			b = append(b, '"', ':')
			b = jsondoc.AppendString(b, v)
		}
	}
	b = append(b, `,"labels":{"otel.trace_id":`...)
	b = jsondoc.AppendString(b, traceID.String())
	if incomplete {
		b = append(b, `,"otel.incomplete":"true"`...)
	}
	for _, k := range sortedKeys(r.Labels) {
		if v, ok := a.Lookup(r.Labels[k]); ok && len(v) <= 256 {
			b = append(b, ',')
			b = jsondoc.AppendString(b, k)
			b = append(b, ':')
			b = jsondoc.AppendString(b, v)
		}
	}
	b = append(b, '}')
	if len(r.Options) > 0 {
		var opts map[string]json.RawMessage
		_ = json.Unmarshal(r.Options, &opts) // checked by ParseRule
		for _, k := range sortedKeys(opts) {
			b = append(b, ',')
			b = jsondoc.AppendString(b, k)
			b = append(b, ':')
			b = append(b, opts[k]...)
		}
	}
	return append(b, '}')
}

// metrics are the ingest metrics.
type metrics struct {
	received, rejected, late prometheus.Counter
	assembled, finished      *prometheus.CounterVec
	lag                      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, countOpen func(context.Context) (int64, error)) *metrics {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolscore_otlp_spans_received_total",
			Help: "Spans received by POST /v1/traces and committed (late ones included).",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolscore_otlp_spans_rejected_total",
			Help: "Spans refused by POST /v1/traces (invalid trace or span id), reported in partial_success.",
		}),
		late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolscore_otlp_late_spans_total",
			Help: "Spans that arrived after their trace was closed for grading.",
		}),
		assembled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_otlp_traces_assembled_total",
			Help: "Traces closed for grading, by trigger: complete (root span ended and quiet period passed), max_age, or regrade (closed again by POST /v1/traces/regrade).",
		}, []string{"trigger"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_otlp_traces_finished_total",
			Help: "Trace grading jobs committed, by state: graded, unmatched, no_tool_calls, failed.",
		}, []string{"state"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_otlp_assembly_lag_seconds",
			Help:    "Time from a trace's last span to its grading commit, in seconds (the quiet period included).",
			Buckets: []float64{.5, 1, 2, 3, 4, 5, 6, 7, 8, 10, 15, 20, 30, 60, 120, 300, 600, 1200},
		}),
	}
	if reg == nil {
		return m
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_otlp_traces_open",
		Help: "Traces being assembled or waiting for their grading job, in the database (the same on every replica: aggregate with max; -1 when unreadable).",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := countOpen(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	reg.MustRegister(m.received, m.rejected, m.late, m.assembled, m.finished, m.lag, open)
	return m
}

// tracesArgs are the arguments of one grading job: traces of one
// project, each at the revision the assembler closed.
type tracesArgs struct {
	ProjectID int64      `json:"project_id"`
	Traces    []traceRef `json:"traces"`
	// Regrade is set for traces closed again by RegradeTraces (their
	// assembly lag is not observed: their spans are old).
	Regrade bool `json:"regrade,omitempty"`
}

// traceRef is one trace revision to grade.
type traceRef struct {
	TraceID  string `json:"trace_id"`
	Revision int    `json:"revision"`
}

// Kind implements river.JobArgs.
func (tracesArgs) Kind() string { return "otlp_traces" }

// InsertOpts implements river.JobArgsWithInsertOpts. A trace revision is
// closed, and so put in a job, once (the assembler's transaction);
// FinishOTLPTraces writes it once however often a job runs.
func (tracesArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue} }

// tracesWorker grades the traces of one job.
type tracesWorker struct {
	river.WorkerDefaults[tracesArgs]
	s *Service
}

// Work implements river.Worker.
func (w *tracesWorker) Work(ctx context.Context, job *river.Job[tracesArgs]) error {
	complete := func(ctx context.Context, tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	}
	err := w.s.grade(ctx, job.Args.ProjectID, job.Args.Traces, !job.Args.Regrade, complete)
	if err != nil && ctx.Err() == nil {
		w.s.log.Warn("trace grading job failed, retrying", zap.Int("traces", len(job.Args.Traces)),
			zap.String("first_trace_id", job.Args.Traces[0].TraceID), zap.Int("attempt", job.Attempt), zap.Error(err))
	}
	return err
}

// traceArgs are the arguments of a job grading one trace (kind
// otlp_trace): the assembler queues tracesArgs, but a database may still
// hold such jobs, which traceWorker grades the same way.
type traceArgs struct {
	ProjectID int64  `json:"project_id"`
	TraceID   string `json:"trace_id"`
	Revision  int    `json:"revision"`
}

// Kind implements river.JobArgs.
func (traceArgs) Kind() string { return "otlp_trace" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (traceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// traceWorker grades one trace revision.
type traceWorker struct {
	river.WorkerDefaults[traceArgs]
	s *Service
}

// Work implements river.Worker.
func (w *traceWorker) Work(ctx context.Context, job *river.Job[traceArgs]) error {
	complete := func(ctx context.Context, tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	}
	return w.s.grade(ctx, job.Args.ProjectID, []traceRef{{TraceID: job.Args.TraceID, Revision: job.Args.Revision}}, true, complete)
}

// grade assembles, matches and grades trace revisions of a project and
// commits their outcomes with the job's completion (complete) in one
// transaction. A trace no longer closed at its revision (done by an
// earlier run of the job, reopened, purged) is skipped. When grading a
// trace fails with a transient error, the others' outcomes are committed
// without completing the job, and the error is returned: the job's next
// attempt grades only what is left. observeLag records the traces'
// assembly lag.
func (s *Service) grade(ctx context.Context, projectID int64, refs []traceRef, observeLag bool, complete func(context.Context, pgx.Tx) error) error {
	ids := make([][16]byte, 0, len(refs))
	revision := make(map[[16]byte]int, len(refs))
	for _, r := range refs {
		id, err := ParseTraceID(r.TraceID)
		if err != nil {
			s.log.Error("trace grading job with an invalid trace id", zap.String("trace_id", r.TraceID))
			continue
		}
		ids = append(ids, id)
		revision[id] = r.Revision
	}
	stored, err := s.store.ReadOTLPTraces(ctx, projectID, ids)
	if err != nil {
		return err
	}
	var rules []activeRule
	if len(stored) > 0 {
		if rules, err = s.rules.get(ctx, projectID); err != nil {
			return err
		}
	}
	fs := make([]record.TraceFinish, 0, len(stored))
	lastSeen := make([]time.Time, 0, len(stored))
	var failed error
	for i := range stored {
		t := &stored[i]
		if t.State != record.TraceClosed || t.Revision != revision[t.TraceID] {
			continue
		}
		f, err := s.outcome(ctx, t, rules)
		if err != nil {
			failed = err
			continue
		}
		fs = append(fs, f)
		lastSeen = append(lastSeen, t.LastSeen)
	}
	hook := complete
	if failed != nil {
		if len(fs) == 0 {
			return failed
		}
		hook = nil
	}
	written, err := s.store.FinishOTLPTraces(ctx, fs, hook)
	if err != nil {
		return err
	}
	for i, w := range written {
		if w {
			s.metrics.finished.WithLabelValues(string(fs[i].State)).Inc()
			if observeLag {
				s.metrics.lag.Observe(time.Since(lastSeen[i]).Seconds())
			}
		}
	}
	return failed
}

// outcome assembles, matches and grades one closed trace revision and
// returns what to write for it.
//
// Errors: transient ones only (the rules or the grading unavailable);
// what no retry can cure is the failed state.
func (s *Service) outcome(ctx context.Context, t *record.StoredTrace, rules []activeRule) (record.TraceFinish, error) {
	f := record.TraceFinish{ProjectID: t.ProjectID, TraceID: t.TraceID, Revision: t.Revision}
	keep := s.cfg.KeepUnmatched || s.cfg.KeepSpans > 0
	rs, _, err := Assemble(t.Data)
	switch {
	case err != nil:
		f.State, f.Reason, f.KeepSpans = record.TraceFailed, err.Error(), keep
		return f, nil
	case len(rs) == 0:
		f.State, f.Reason, f.KeepSpans = record.TraceFailed, "no span is stored (purged before grading)", keep
		return f, nil
	}
	attrs := TraceAttrs(rs)
	var rule *activeRule
	var ref string
	var work int64
	for i := range rules {
		if work += rules[i].rule.RegexWork(attrs); work > engine.MaxRegexWork {
			f.State, f.KeepSpans = record.TraceFailed, keep
			f.Reason = fmt.Sprintf("matching the regex conditions of the grading rules up to %q against this trace's attributes could take %d steps (attribute bytes times pattern instructions), over the limit of %d: use shorter patterns or test shorter attributes", rules[i].name, work, engine.MaxRegexWork)
			return f, nil
		}
		if rules[i].rule.Matches(attrs) {
			if ref = rules[i].rule.ContractFor(attrs); ref != "" {
				rule = &rules[i]
				break
			}
		}
	}
	if rule == nil {
		f.State, f.Reason, f.KeepSpans = record.TraceUnmatched, "no grading rule matches", keep
		return f, nil
	}
	id := TraceID(t.TraceID)
	f.RuleName, f.RuleVersion = rule.name, rule.version
	body := EvaluationBody(rule.rule, ref, attrs, AppendJSON(nil, rs), id, t.Incomplete)
	rid, err := uuid.NewV7()
	if err != nil {
		return f, err
	}
	res, err := s.cfg.Grade(ctx, t.ProjectID, body, rid)
	switch {
	case errors.Is(err, ErrRejected):
		f.State, f.Reason, f.KeepSpans = record.TraceFailed, err.Error(), keep
		return f, nil
	case err != nil:
		return f, err
	case isEmptyList(res.TraceCalls) && !rule.rule.GradeWithoutToolCalls:
		f.State, f.Reason, f.KeepSpans = record.TraceNoToolCalls, "the trace has no tool call and the rule does not grade such traces", keep
		return f, nil
	}
	res.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)
	if t.Revision > 1 && t.FirstResultID != uuid.Nil {
		res.RegradeOf = t.FirstResultID
		if res.RegradeID, err = uuid.NewV7(); err != nil {
			return f, err
		}
	}
	f.State, f.Result = record.TraceGraded, res
	f.KeepSpans = s.cfg.LateSpans == LateRegrade || s.cfg.KeepSpans > 0
	return f, nil
}

// isEmptyList reports whether JSON text is an empty array.
func isEmptyList(b []byte) bool {
	n := 0
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '[', ']':
			n++
		default:
			return false
		}
	}
	return n == 2
}
