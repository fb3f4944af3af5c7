// Package regrade re-evaluates stored results against another contract
// version, durably (issue 6). A regrade reads only what each original
// result stored (trace_calls, final_answer and options), grades it again
// with engine.Evaluate against the target version, and writes a new result
// linked to the original by regrade_of and regrade_id; originals never
// change.
//
// # Jobs
//
// The work runs on river (riverqueue/river with its pgx/v5 driver), a
// Postgres job queue shared by every server process of one database:
//
//   - Create inserts the regrade row and a plan job in one transaction;
//   - the plan job counts the selected originals, cuts them into chunks of
//     about 1,000 in (created_at, id) order and inserts one chunk job per
//     chunk, in the transaction that completes the plan job;
//   - a chunk job reads its originals, grades them, and in one transaction
//     inserts the new results with ON CONFLICT DO NOTHING on the
//     (regrade_of, regrade_id) key, adds what it actually inserted to the
//     regrade's counters, and completes itself (river.JobCompleteTx).
//
// A chunk that runs twice (after a crash, a lost connection, or a rescue)
// therefore never writes a second result for an original, and progress
// counts only what was written. A process killed mid-chunk leaves its
// transaction uncommitted; river rescues the job after
// its Timeout (Config.RescueAfter for a first attempt) and another process
// runs it again: within about 30 s of the kill (see Config.RescueAfter).
//
// # Faults
//
// A stored row that no longer parses is counted as failed, with its id and
// reason (ListFailures), and the regrade goes on. Database errors retry
// the job with a backoff capped at 30 s; a chunk that still fails after
// its last attempt fails the regrade.
package regrade

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Store is what regrades need from persistence; cmd/server passes in
// *store.DB, whose methods of the same names document the exact
// behaviour. Hooks run inside the method's transaction, before it commits.
type Store interface {
	// Pool is the pgx pool river's driver shares with the store.
	Pool() *pgxpool.Pool
	GetContractVersion(ctx context.Context, projectID int64, name string, version int) (record.ContractVersion, error)
	CreateRegrade(ctx context.Context, rg record.Regrade, hook func(context.Context, pgx.Tx) error) error
	GetRegrade(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error)
	CountActiveRegrades(ctx context.Context) (int64, error)
	CountRegradeSelection(ctx context.Context, projectID int64, sel record.RegradeSelection, target int, snapshot time.Time) (int64, error)
	PlanRegrade(ctx context.Context, id uuid.UUID, hook func(ctx context.Context, tx pgx.Tx, rg record.Regrade, chunks []record.RegradeChunk) error) error
	ReadRegradeChunk(ctx context.Context, rg record.Regrade, c record.RegradeChunk) ([]record.RegradeOriginal, error)
	WriteRegradeChunk(ctx context.Context, cw record.ChunkWrite, hook func(context.Context, pgx.Tx) error) (record.ChunkCounts, error)
	FinishRegrade(ctx context.Context, projectID int64, id uuid.UUID, state record.RegradeState, reason string, hook func(context.Context, pgx.Tx) error) (record.Regrade, error)
	ListRegradeChanges(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeChange, error)
	ListRegradeFailures(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeFailure, error)
	ListLatestResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.LatestResult, error)
	CompareContractVersions(ctx context.Context, projectID int64, name string, a, b int, f record.ResultFilter) (record.VersionComparison, error)
}

// Config configures New. Zero values take the documented defaults.
type Config struct {
	// Store persists regrades and results. Required.
	Store Store
	// DatabaseURL, when set, gives river a small pool of its own (up to 4
	// connections) on this database, so that its listener and polling
	// neither compete with API requests for the store's connections nor
	// change how that pool recovers from an outage; "" makes river share
	// Store.Pool(). Jobs commit in store transactions either way.
	DatabaseURL string
	// Logger receives job failures (and river's warnings); nil means none.
	Logger *zap.Logger
	// Registerer receives the metrics; nil means none are registered.
	Registerer prometheus.Registerer
	// Workers is the number of chunk jobs this process works at once;
	// default 2. Each chunk grades its originals on Parallelism
	// goroutines, so 2 lets one chunk write while another grades.
	Workers int
	// Parallelism is the number of evaluations a chunk runs at once;
	// default GOMAXPROCS.
	Parallelism int
	// ChunkSize is the number of originals per chunk job; default 1000.
	ChunkSize int
	// RescueAfter is how long the first attempt of a regrade job (a plan
	// or a chunk) may run: past it the job's context ends, and a job
	// still marked running that long (its process killed) is taken over
	// by river's rescuer, which every process's leader runs every 30 s,
	// so a killed regrade resumes within about 30 s. Each retry gets twice
	// the time of the one before, up to MaxJobTimeout, so a chunk that is
	// slow on a busy machine still finishes. Default 10 s (a chunk of
	// 1,000 results takes about a second).
	RescueAfter time.Duration
	// MaxJobTimeout caps the time of a retried attempt; default 4 min.
	MaxJobTimeout time.Duration
	// MaxAttempts is the number of times a failing job runs before its
	// regrade fails; default 100 (about 45 min of retries at the 30 s
	// backoff cap).
	MaxAttempts int
	// Jobs, when set, registers more job kinds (such as internal/runs'
	// harness tasks) on this river client and returns their queues: one
	// client per process must work every kind, since river's leader
	// rescues stuck jobs only of the kinds its client knows and discards
	// the others. The client-wide settings above (MaxAttempts, the retry
	// policy, and RescueAfter unless a worker sets its own Timeout) apply
	// to them too.
	Jobs func(*river.Workers) map[string]river.QueueConfig
	// SecretScanner finds secrets when grading stored results again; nil
	// means a default one (package secrets) of the Service's own.
	SecretScanner engine.SecretScanner
}

// queue is the river queue of regrade jobs.
const queue = "regrade"

// Service starts, runs and reports regrades. Create it with New, start its
// job workers with Start and stop them with Stop. It is safe for
// concurrent use.
type Service struct {
	cfg     Config
	store   Store
	log     *zap.Logger
	pool    *pgxpool.Pool // river's
	ownPool bool          // pool was made by New and is closed by Stop
	client  *river.Client[pgx.Tx]
	metrics *metrics

	mu        sync.Mutex
	contracts map[string]*engine.Contract // by sha256
}

// New builds a Service and its river client (which does not touch the
// database until Start).
//
// Errors: an invalid configuration.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("regrade: Config.Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = runtime.GOMAXPROCS(0)
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = 1000
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = 10 * time.Second
	}
	if cfg.MaxJobTimeout <= 0 {
		cfg.MaxJobTimeout = 4 * time.Minute
	}
	cfg.MaxJobTimeout = max(cfg.MaxJobTimeout, cfg.RescueAfter)
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 100
	}
	if cfg.SecretScanner == nil {
		cfg.SecretScanner = secrets.New()
	}
	s := &Service{cfg: cfg, store: cfg.Store, log: cfg.Logger, pool: cfg.Store.Pool(), contracts: map[string]*engine.Contract{}}
	if cfg.DatabaseURL != "" {
		pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
		if err != nil {
			return nil, errors.New("regrade: invalid database URL") // the error may quote the password
		}
		if pcfg.ConnConfig.ConnectTimeout == 0 {
			pcfg.ConnConfig.ConnectTimeout = 5 * time.Second
		}
		pcfg.MaxConns, pcfg.MinConns = 4, 0
		if s.pool, err = pgxpool.NewWithConfig(context.Background(), pcfg); err != nil {
			return nil, fmt.Errorf("regrade: %w", err)
		}
		s.ownPool = true
	}
	s.metrics = newMetrics(cfg.Registerer, cfg.Store.CountActiveRegrades)
	workers := river.NewWorkers()
	river.AddWorker(workers, &planWorker{s: s})
	river.AddWorker(workers, &chunkWorker{s: s})
	queues := map[string]river.QueueConfig{queue: {MaxWorkers: cfg.Workers}}
	if cfg.Jobs != nil {
		maps.Copy(queues, cfg.Jobs(workers))
	}
	client, err := river.NewClient(riverpgxv5.New(s.pool), &river.Config{
		Queues:  queues,
		Workers: workers,
		Logger:  newSlog(cfg.Logger),
		// A job is rescued once it ran longer than its own Timeout (the
		// workers' attemptTimeout; harness tasks set theirs): river's
		// rescuer looks at every job running longer than
		// RescueStuckJobsAfter and skips those whose Timeout has not
		// passed.
		JobTimeout:           cfg.RescueAfter,
		RescueStuckJobsAfter: cfg.RescueAfter,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          retryPolicy{},
	})
	if err != nil {
		s.closePool()
		return nil, fmt.Errorf("regrade: %w", err)
	}
	s.client = client
	return s, nil
}

// Start checks that river's tables are at the version of the river module
// (migrations 00002 and 00003) and starts working regrade jobs. The
// workers run until Stop, not until ctx ends (shutdown stops them after
// the HTTP server, STYLE.md section 4).
//
// Errors: the database is unreachable or river's schema is not current.
func (s *Service) Start(ctx context.Context) error {
	err := s.start(ctx)
	if err != nil {
		s.closePool()
	}
	return err
}

func (s *Service) start(ctx context.Context) error {
	m, err := rivermigrate.New(riverpgxv5.New(s.pool), nil)
	if err != nil {
		return fmt.Errorf("regrade: %w", err)
	}
	v, err := m.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("regrade: check river schema: %w", err)
	}
	if !v.OK {
		return fmt.Errorf("regrade: river schema is not current (add a migration, see internal/regrade/migration_test.go): %v", v.Messages)
	}
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("regrade: start: %w", err)
	}
	return nil
}

// Stop stops taking jobs and waits for the running ones to finish until
// ctx ends; then it cancels them (their chunks roll back and run again
// later, on this or another process). It closes river's own pool, if
// any: call it once, after Start.
func (s *Service) Stop(ctx context.Context) error {
	defer s.closePool()
	err := s.client.Stop(ctx)
	if err == nil {
		return nil
	}
	hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.client.StopAndCancel(hctx); err != nil {
		return fmt.Errorf("regrade: stop: %w", err)
	}
	return nil
}

func (s *Service) closePool() {
	if s.ownPool {
		s.pool.Close()
	}
}

// target resolves and parses a target contract version (0: latest).
func (s *Service) target(ctx context.Context, projectID int64, name string, version int) (record.ContractVersion, *engine.Contract, error) {
	cv, err := s.store.GetContractVersion(ctx, projectID, name, version)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			if version == 0 {
				return cv, nil, notFound(fmt.Sprintf("contract %q does not exist", name))
			}
			return cv, nil, notFound(fmt.Sprintf("contract %s@%d does not exist", name, version))
		}
		return cv, nil, err
	}
	c, err := s.parse(cv)
	return cv, c, err
}

// notFound is an error that says only its message and matches
// engine.ErrNotFound: its text is shown to API clients as is.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == engine.ErrNotFound }

// parse returns the parsed contract of cv, cached by sha256.
func (s *Service) parse(cv record.ContractVersion) (*engine.Contract, error) {
	s.mu.Lock()
	c, ok := s.contracts[cv.SHA256]
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := engine.ParseContract(cv.Body)
	if err != nil {
		return nil, fmt.Errorf("contract %s@%d: %w", cv.Name, cv.Version, err)
	}
	s.mu.Lock()
	if len(s.contracts) >= 64 {
		clear(s.contracts) // a few versions are in use at any time
	}
	s.contracts[cv.SHA256] = c
	s.mu.Unlock()
	return c, nil
}

// selection fills the defaults of a selection for a target.
func selection(name string, sel record.RegradeSelection) record.RegradeSelection {
	if sel.ContractName == "" {
		sel.ContractName = name
	}
	return sel
}

// Create starts a regrade of a project: the originals sel selects (of
// contract sel.ContractName, default name) re-evaluated against version
// of contract name (0: the latest). It returns the regrade, pending; its
// jobs run in the background.
//
// Errors: engine.ErrNotFound (wrapped, naming it) when the target does
// not exist; a *engine.ValidationError (errors.Is
// engine.ErrInvalidContract) when its body no longer validates;
// engine.ErrUnavailable.
func (s *Service) Create(ctx context.Context, projectID int64, name string, version int, sel record.RegradeSelection) (record.Regrade, error) {
	cv, _, err := s.target(ctx, projectID, name, version)
	if err != nil {
		return record.Regrade{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return record.Regrade{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	rg := record.Regrade{
		ID: id, ProjectID: projectID, State: record.RegradePending,
		Target:    record.ContractRef{Name: cv.Name, Version: cv.Version, SHA256: cv.SHA256, Kind: cv.Kind},
		Selection: selection(name, sel), SnapshotAt: now, ChunkSize: s.cfg.ChunkSize, CreatedAt: now,
	}
	err = s.store.CreateRegrade(ctx, rg, func(ctx context.Context, tx pgx.Tx) error {
		_, err := s.client.InsertTx(ctx, tx, planArgs{ProjectID: projectID, RegradeID: id}, nil)
		return err
	})
	if err != nil {
		return record.Regrade{}, err
	}
	return rg, nil
}

// DryRun resolves the target like Create and returns it with the number
// of originals a regrade would re-evaluate now, without starting one.
//
// Errors: as Create.
func (s *Service) DryRun(ctx context.Context, projectID int64, name string, version int, sel record.RegradeSelection) (record.ContractRef, int64, error) {
	cv, _, err := s.target(ctx, projectID, name, version)
	if err != nil {
		return record.ContractRef{}, 0, err
	}
	ref := record.ContractRef{Name: cv.Name, Version: cv.Version, SHA256: cv.SHA256, Kind: cv.Kind}
	n, err := s.store.CountRegradeSelection(ctx, projectID, selection(name, sel), cv.Version, time.Now().UTC())
	return ref, n, err
}

// Get returns a regrade of a project.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) Get(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error) {
	return s.store.GetRegrade(ctx, projectID, id)
}

// Changes returns up to limit originals of a regrade whose verdict or
// grade changed, in original id order after after (uuid.Nil: from the
// start).
//
// Errors: engine.ErrNotFound when the regrade does not exist;
// engine.ErrUnavailable.
func (s *Service) Changes(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeChange, error) {
	return s.store.ListRegradeChanges(ctx, projectID, id, after, limit)
}

// Failures returns up to limit originals a regrade could not re-evaluate,
// with the reason, in original id order after after.
//
// Errors: engine.ErrNotFound when the regrade does not exist;
// engine.ErrUnavailable.
func (s *Service) Failures(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeFailure, error) {
	return s.store.ListRegradeFailures(ctx, projectID, id, after, limit)
}

// LatestResults lists original results of a project, newest first, each
// with its latest verdict (its newest regrade result, or itself); see
// store.DB.ListLatestResults.
//
// Errors: engine.ErrUnavailable.
func (s *Service) LatestResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.LatestResult, error) {
	return s.store.ListLatestResults(ctx, projectID, f, after, limit)
}

// CompareVersions compares versions a and b of contract name on the same
// originals; see store.DB.CompareContractVersions.
//
// Errors: engine.ErrUnavailable.
func (s *Service) CompareVersions(ctx context.Context, projectID int64, name string, a, b int, f record.ResultFilter) (record.VersionComparison, error) {
	return s.store.CompareContractVersions(ctx, projectID, name, a, b, f)
}

// Cancel cancels a regrade that is pending or running: in one
// transaction it becomes cancelled and its queued and running jobs are
// cancelled with river's JobCancel (a running chunk's context ends and its
// transaction rolls back; results already written stay). A regrade
// already final is returned unchanged.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) Cancel(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error) {
	return s.store.FinishRegrade(ctx, projectID, id, record.RegradeCancelled, "", func(ctx context.Context, tx pgx.Tx) error {
		return s.cancelJobs(ctx, tx, id)
	})
}

// cancelJobs cancels every unfinished job of a regrade within tx.
func (s *Service) cancelJobs(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	return CancelJobsTx(ctx, s.client, tx, "regrade_id", id, planArgs{}.Kind(), chunkArgs{}.Kind())
}

// CancelJobsTx cancels, within tx, every unfinished job (available,
// pending, retryable, scheduled or running) of the given kinds whose args
// field argKey holds id, 1,000 at a time. A job that finished meanwhile is
// skipped. Regrades and harness runs share it.
func CancelJobsTx(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, argKey string, id uuid.UUID, kinds ...string) error {
	params := river.NewJobListParams().
		Kinds(kinds...).
		States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateScheduled, rivertype.JobStateRunning).
		Where("args->>'"+argKey+"' = @id", river.NamedArgs{"id": id.String()}).
		First(1000)
	for {
		res, err := client.JobListTx(ctx, tx, params)
		if err != nil {
			return fmt.Errorf("list jobs: %w", err)
		}
		for _, j := range res.Jobs {
			if _, err := client.JobCancelTx(ctx, tx, j.ID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return fmt.Errorf("cancel job %d: %w", j.ID, err)
			}
		}
		if len(res.Jobs) < 1000 {
			return nil
		}
		params = params.After(res.LastCursor)
	}
}

// fail fails a regrade that cannot go on, best effort (the caller's job
// ends anyway).
func (s *Service) fail(ctx context.Context, projectID int64, id uuid.UUID, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.store.FinishRegrade(ctx, projectID, id, record.RegradeFailed, reason, nil); err != nil {
		s.log.Error("fail regrade", zap.String("regrade_id", id.String()), zap.Error(err))
		return
	}
	s.log.Error("regrade failed", zap.String("regrade_id", id.String()), zap.String("reason", reason))
}

// retryPolicy retries a failed job after 1 s, 2 s, 4 s ... capped at 30 s,
// so a chunk that failed while Postgres restarted runs again soon after it
// is back (river's default grows as attempt^4 seconds).
type retryPolicy struct{}

// NextRetry implements river.ClientRetryPolicy.
func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := 30 * time.Second
	if n := job.Attempt; n >= 1 && n <= 5 {
		d = time.Duration(1<<(n-1)) * time.Second
	}
	return time.Now().Add(d)
}
