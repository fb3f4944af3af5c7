// Package runs runs harness suites server-side (issue 7, POST /v1/runs):
// a suite against an agent's HTTP endpoint, as durable background work on
// the river job queue the regrades use, with every graded task stored as
// an ordinary result (run_id and task_id set, so GET
// /v1/evaluations?run_id= finds them).
//
// # Jobs
//
// Each task is one river job (kind "harness_task" on queue
// "harness_run"), worked with internal/harness: the HTTP runner asks the
// agent (per-attempt timeout, retries with backoff on transport failures
// only) and the engine grades the answer with the task's contract.
//
// A run's concurrency is kept by lanes: Create queues the first
// Concurrency tasks, and the transaction that stores task i queues task
// i+Concurrency, so at most Concurrency tasks of a run are in flight
// whatever the number of workers.
//
// # Durability
//
// A task's job stores its outcome in run_tasks, keyed by (run_id,
// task_id), together with its result, the run's counters, the next job
// of its lane and its own completion, in one transaction
// (store.DB.WriteRunTask). A job that runs twice (after a crash, or
// rescued while a lost worker still ran it) finds its task stored and
// writes nothing: a task's result is stored at most once per run. A
// process killed mid-run leaves its running jobs uncommitted; river
// rescues them after Config.MaxTaskTime (the task job's Timeout) and
// another process asks the agent again. So a task's whole budget (every
// attempt timing out, plus the backoff) must stay below it: Create refuses
// runs whose budget exceeds Config.MaxTaskTime.
//
// Cancel marks the run cancelled and cancels its jobs in one transaction;
// tasks already stored stay.
package runs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Queue is the river queue of harness task jobs.
const Queue = "harness_run"

// Store is what runs need from persistence; cmd/server passes in
// *store.DB, whose methods of the same names document the exact
// behaviour. Hooks run inside the method's transaction, before it commits.
type Store interface {
	// Pool is the pgx pool river's driver shares with the store.
	Pool() *pgxpool.Pool
	CreateRun(ctx context.Context, r record.Run, hook func(context.Context, pgx.Tx) error) error
	GetRun(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, error)
	ListRuns(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Run, error)
	ListRunTasks(ctx context.Context, projectID int64, id uuid.UUID) ([]record.RunTask, error)
	HasRunTask(ctx context.Context, runID uuid.UUID, taskID string) (bool, error)
	WriteRunTask(ctx context.Context, w record.RunTaskWrite, hook func(ctx context.Context, tx pgx.Tx, first bool, state record.RunState) error) (bool, record.RunState, error)
	FinishRun(ctx context.Context, projectID int64, id uuid.UUID, state record.RunState, reason string, hook func(context.Context, pgx.Tx) error) (record.Run, error)
}

// Config configures New. Zero values take the documented defaults.
type Config struct {
	// Store persists runs and results. Required.
	Store Store
	// Logger receives job failures; nil means none.
	Logger *zap.Logger
	// Registerer receives the metrics; nil means none are registered.
	Registerer prometheus.Registerer
	// Workers is the number of task jobs this process works at once,
	// across runs; default 16. Tasks mostly wait for agents.
	Workers int
	// MaxTaskTime is the longest a task may take by its run's options
	// (harness.TaskBudget) plus grading; default 2 min. It is also the
	// task job's river Timeout: a task still marked running after it (its
	// process killed) is rescued and run again.
	MaxTaskTime time.Duration
	// AllowedHosts are the agent hosts runs may reach (ParseAllowList:
	// names, *.suffixes, IPs, CIDRs); empty refuses every run. Loopback,
	// private, link-local and metadata addresses must be listed as
	// addresses. See outbound.go.
	AllowedHosts []string
	// HTTPClient reaches the agents; nil means NewHTTPClient on
	// AllowedHosts, keeping up to Workers idle connections per host. A
	// client given here is used as is (tests), its dialing unchecked; the
	// URL check of Create still applies.
	HTTPClient *http.Client
	// SecretScanner finds secrets when grading tasks' traces; nil means
	// a default one (package secrets) of the Service's own.
	SecretScanner engine.SecretScanner
}

// graceTime is what a task job allows beyond the task's budget, for
// grading and storing.
const graceTime = 15 * time.Second

// Service starts, runs and reports harness runs. Create it with New,
// register its worker on the process's river client with Register, and
// create runs with Create. It is safe for concurrent use.
type Service struct {
	cfg     Config
	allow   AllowList
	store   Store
	log     *zap.Logger
	http    *http.Client
	inserts *river.Client[pgx.Tx] // insert-only: inserts and cancels jobs
	tasks   prometheus.CounterVec

	mu     sync.Mutex
	suites map[uuid.UUID]*harness.Suite // parsed suites by run id
}

// New builds a Service with an insert-only river client on the store's
// pool (it works no jobs: see Register).
//
// Errors: an invalid configuration.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("runs: Config.Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.MaxTaskTime <= 0 {
		cfg.MaxTaskTime = 2 * time.Minute
	}
	if cfg.SecretScanner == nil {
		cfg.SecretScanner = secrets.New()
	}
	allow, err := ParseAllowList(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient(allow, cfg.Workers)
	}
	s := &Service{cfg: cfg, allow: allow, store: cfg.Store, log: cfg.Logger, http: cfg.HTTPClient, suites: map[uuid.UUID]*harness.Suite{}}
	s.tasks = *prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolscore_run_tasks_total",
		Help: "Harness run tasks finished server-side, by outcome (pass, fail, error).",
	}, []string{"outcome"})
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(&s.tasks); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{s: s})
	client, err := river.NewClient(riverpgxv5.New(cfg.Store.Pool()), &river.Config{Workers: workers})
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	s.inserts = client
	return s, nil
}

// Register adds the task worker to workers, the workers of the river
// client that works this process's jobs, and returns the queue to give
// that client. One client per process must work every job kind: river's
// leader rescues stuck jobs only of the kinds its client knows, and
// discards the others.
func (s *Service) Register(workers *river.Workers) map[string]river.QueueConfig {
	river.AddWorker(workers, &taskWorker{s: s})
	return map[string]river.QueueConfig{Queue: {MaxWorkers: s.cfg.Workers}}
}

// CheckAgentURL says why an agent URL cannot be run against (see
// AllowList.CheckURL), nil when it can.
//
// Errors: a *RefusedError.
func (s *Service) CheckAgentURL(raw string) error { return s.allow.CheckURL(raw) }

// MaxTaskTime is Config.MaxTaskTime: the longest task budget a run may
// have (harness.TaskBudget of its options, plus 15 s for grading).
func (s *Service) MaxTaskTime() time.Duration { return s.cfg.MaxTaskTime }

// options are the harness options of a run, grading with scanner within
// the service's bounds on scoring cells and $regex work
// (engine.MaxScoringCells, engine.MaxRegexWork).
func options(r *record.Run, scanner engine.SecretScanner) harness.Options {
	return harness.Options{Concurrency: 1, Timeout: r.Timeout, Attempts: r.Retries + 1, RunID: r.ID.String(), Agent: r.Agent,
		SecretScanner: scanner, MaxScoringCells: engine.MaxScoringCells, MaxRegexWork: engine.MaxRegexWork}
}

// Budget returns the longest a task of a run with these options may take:
// harness.TaskBudget plus the grace for grading and storing.
func Budget(timeout time.Duration, retries int) time.Duration {
	return harness.TaskBudget(harness.Options{Timeout: timeout, Attempts: retries + 1}) + graceTime
}

// Create starts a run: r's Suite (a suite document, JSON), AgentURL,
// Agent, Concurrency (>= 1), Timeout (> 0) and Retries (>= 0) are read,
// the rest is filled in. The suite is validated again (the API validates
// it first, with pointers); contract_ref tasks are refused (a
// server-side run grades with inline contracts only). The run, in state
// running (completed when it has no task), and the jobs of its first
// Concurrency tasks are inserted in one transaction; it returns the run.
//
// Errors: an invalid suite (wrapping harness.ErrInvalidSuite) or options;
// a refused agent URL (*RefusedError); engine.ErrUnavailable.
func (s *Service) Create(ctx context.Context, projectID int64, r record.Run) (record.Run, error) {
	suite, err := harness.ParseSuite(r.Suite, ".json")
	if err != nil {
		return record.Run{}, err
	}
	for _, t := range suite.Tasks {
		if t.ContractRef != "" {
			return record.Run{}, fmt.Errorf("%w: %s/contract_ref: registry contracts are not supported in server-side runs", harness.ErrInvalidSuite, t.Pointer())
		}
	}
	if err := s.allow.CheckURL(r.AgentURL); err != nil {
		return record.Run{}, err
	}
	if r.Concurrency < 1 || r.Timeout <= 0 || r.Retries < 0 {
		return record.Run{}, fmt.Errorf("runs: invalid options: concurrency %d, timeout %s, retries %d", r.Concurrency, r.Timeout, r.Retries)
	}
	if b := Budget(r.Timeout, r.Retries); b > s.cfg.MaxTaskTime {
		return record.Run{}, fmt.Errorf("runs: a task may take %s, more than %s", b, s.cfg.MaxTaskTime)
	}
	if r.ID, err = uuid.NewV7(); err != nil {
		return record.Run{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	r.ProjectID, r.SuiteName, r.Total, r.CreatedAt, r.StartedAt = projectID, suite.Name, len(suite.Tasks), now, &now
	r.State, r.Done, r.Passed, r.Failed, r.Errors, r.ScoreSum, r.Error, r.FinishedAt = record.RunRunning, 0, 0, 0, 0, 0, "", nil
	if r.Total == 0 {
		r.State, r.FinishedAt = record.RunCompleted, &now
	}
	err = s.store.CreateRun(ctx, r, func(ctx context.Context, tx pgx.Tx) error {
		n := min(r.Concurrency, r.Total)
		if n == 0 {
			return nil
		}
		params := make([]river.InsertManyParams, n)
		for i := range n {
			params[i] = river.InsertManyParams{Args: taskArgs{ProjectID: projectID, RunID: r.ID, Index: i}}
		}
		_, err := s.inserts.InsertManyTx(ctx, tx, params)
		return err
	})
	if err != nil {
		return record.Run{}, err
	}
	s.cache(r.ID, suite)
	return r, nil
}

// Get returns a run of a project, without its suite document, and its
// finished tasks in suite order.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) Get(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, []record.RunTask, error) {
	r, err := s.store.GetRun(ctx, projectID, id)
	if err != nil {
		return r, nil, err
	}
	r.Suite = nil
	tasks, err := s.store.ListRunTasks(ctx, projectID, id)
	return r, tasks, err
}

// List returns up to limit runs of a project, newest first, after the
// cursor when non-nil; see store.DB.ListRuns.
//
// Errors: engine.ErrUnavailable.
func (s *Service) List(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Run, error) {
	return s.store.ListRuns(ctx, projectID, after, limit)
}

// Cancel cancels a running run: in one transaction it becomes cancelled
// and its queued and running jobs are cancelled with river's JobCancel
// (a running task's context ends and nothing of it is stored; tasks
// already stored stay). A run already final is returned unchanged.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (s *Service) Cancel(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, error) {
	return s.store.FinishRun(ctx, projectID, id, record.RunCancelled, "", func(ctx context.Context, tx pgx.Tx) error {
		return s.cancelJobs(ctx, tx, id)
	})
}

// cancelJobs cancels every unfinished job of a run within tx.
func (s *Service) cancelJobs(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	return regrade.CancelJobsTx(ctx, s.inserts, tx, "run_id", id, taskArgs{}.Kind())
}

// fail fails a run that cannot go on, best effort.
func (s *Service) fail(ctx context.Context, projectID int64, id uuid.UUID, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.store.FinishRun(ctx, projectID, id, record.RunFailed, reason, nil); err != nil {
		s.log.Error("fail run", zap.String("run_id", id.String()), zap.Error(err))
		return
	}
	s.log.Error("run failed", zap.String("run_id", id.String()), zap.String("reason", reason))
}

// cache remembers a run's parsed suite (a few runs are active at once).
func (s *Service) cache(id uuid.UUID, suite *harness.Suite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.suites) >= 64 {
		clear(s.suites)
	}
	s.suites[id] = suite
}

// suite returns the parsed suite of r, from the cache or by parsing its
// stored document.
func (s *Service) suite(r *record.Run) (*harness.Suite, error) {
	s.mu.Lock()
	suite, ok := s.suites[r.ID]
	s.mu.Unlock()
	if ok {
		return suite, nil
	}
	suite, err := harness.ParseSuite(r.Suite, ".json")
	if err != nil {
		return nil, err
	}
	s.cache(r.ID, suite)
	return suite, nil
}

// taskArgs are the arguments of one task job.
type taskArgs struct {
	ProjectID int64     `json:"project_id"`
	RunID     uuid.UUID `json:"run_id"`
	// Index is the task's 0-based position in the suite.
	Index int `json:"index"`
}

// Kind implements river.JobArgs.
func (taskArgs) Kind() string { return "harness_task" }

// InsertOpts implements river.JobArgsWithInsertOpts. A task's job is
// unique while it is not finished, so a lane's next job is never queued
// twice.
func (taskArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
