package regrade

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/reeval"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// planArgs are the arguments of a regrade's plan job.
type planArgs struct {
	ProjectID int64     `json:"project_id"`
	RegradeID uuid.UUID `json:"regrade_id"`
}

// Kind implements river.JobArgs.
func (planArgs) Kind() string { return "regrade_plan" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (planArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: queue} }

// chunkArgs are the arguments of one chunk job: the range of originals it
// regrades.
type chunkArgs struct {
	ProjectID int64               `json:"project_id"`
	RegradeID uuid.UUID           `json:"regrade_id"`
	Chunk     record.RegradeChunk `json:"chunk"`
}

// Kind implements river.JobArgs.
func (chunkArgs) Kind() string { return "regrade_chunk" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (chunkArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: queue} }

// completeIn returns a store hook completing job in the store's
// transaction, so the job is done exactly when what it wrote is committed.
func completeIn[T river.JobArgs](job *river.Job[T]) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	}
}

// planWorker plans a regrade: counts, cuts into chunks, queues them.
type planWorker struct {
	river.WorkerDefaults[planArgs]
	s *Service
}

// Timeout implements river.Worker (see attemptTimeout).
func (w *planWorker) Timeout(job *river.Job[planArgs]) time.Duration {
	return w.s.attemptTimeout(job.Attempt)
}

// Work implements river.Worker.
func (w *planWorker) Work(ctx context.Context, job *river.Job[planArgs]) error {
	s := w.s
	err := s.store.PlanRegrade(ctx, job.Args.RegradeID, func(ctx context.Context, tx pgx.Tx, rg record.Regrade, chunks []record.RegradeChunk) error {
		if len(chunks) > 0 {
			params := make([]river.InsertManyParams, len(chunks))
			for i, c := range chunks {
				params[i] = river.InsertManyParams{Args: chunkArgs{ProjectID: rg.ProjectID, RegradeID: rg.ID, Chunk: c}}
			}
			if _, err := s.client.InsertManyFastTx(ctx, tx, params); err != nil {
				return fmt.Errorf("queue chunks: %w", err)
			}
		}
		return completeIn(job)(ctx, tx)
	})
	return w.s.jobDone(ctx, "plan", job.JobRow.Attempt, job.JobRow.MaxAttempts, job.Args.ProjectID, job.Args.RegradeID, err)
}

// chunkWorker regrades one chunk.
type chunkWorker struct {
	river.WorkerDefaults[chunkArgs]
	s *Service
}

// Timeout implements river.Worker (see attemptTimeout).
func (w *chunkWorker) Timeout(job *river.Job[chunkArgs]) time.Duration {
	return w.s.attemptTimeout(job.Attempt)
}

// attemptTimeout is how long attempt n (from 1) of a regrade job may run,
// and how long it may stay running before river's rescuer takes it
// over: Config.RescueAfter, doubled for each retry, at most
// Config.MaxJobTimeout. River calls Timeout with the job row both when it
// runs the job and when it decides on rescuing it, so a killed first
// attempt is rescued after RescueAfter.
func (s *Service) attemptTimeout(n int) time.Duration {
	d := s.cfg.RescueAfter
	for i := 1; i < n && d < s.cfg.MaxJobTimeout; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxJobTimeout)
}

// Work implements river.Worker.
func (w *chunkWorker) Work(ctx context.Context, job *river.Job[chunkArgs]) error {
	start := time.Now()
	err := w.s.workChunk(ctx, job)
	w.s.metrics.chunkDuration.Observe(time.Since(start).Seconds())
	return w.s.jobDone(ctx, "chunk", job.JobRow.Attempt, job.JobRow.MaxAttempts, job.Args.ProjectID, job.Args.RegradeID, err)
}

// errStop wraps an error that no retry can cure: the job is cancelled and
// its regrade fails.
type errStop struct{ err error }

func (e *errStop) Error() string { return e.err.Error() }
func (e *errStop) Unwrap() error { return e.err }

// jobDone counts a job's outcome and decides its fate: a permanent error
// or a last failed attempt fails the regrade and cancels the job; any
// other error retries it.
func (s *Service) jobDone(ctx context.Context, kind string, attempt, maxAttempts int, projectID int64, id uuid.UUID, err error) error {
	var stop *errStop
	switch {
	case err == nil:
		s.metrics.jobs.WithLabelValues(kind, "completed").Inc()
		return nil
	case errors.As(err, &stop):
		s.metrics.jobs.WithLabelValues(kind, "cancelled").Inc()
		s.fail(ctx, projectID, id, stop.Error())
		return river.JobCancel(stop.err)
	case ctx.Err() != nil:
		// Shutdown, a timeout or a JobCancel: river decides; no regrade
		// state changes here.
		s.metrics.jobs.WithLabelValues(kind, "retried").Inc()
		return err
	case attempt >= maxAttempts:
		s.metrics.jobs.WithLabelValues(kind, "cancelled").Inc()
		s.fail(ctx, projectID, id, fmt.Sprintf("%s job failed %d times, last: %v", kind, attempt, err))
		return err
	}
	s.metrics.jobs.WithLabelValues(kind, "retried").Inc()
	s.log.Warn("regrade job failed, retrying", zap.String("kind", kind), zap.String("regrade_id", id.String()),
		zap.Int("attempt", attempt), zap.Error(err))
	return err
}

// workChunk reads, grades and writes one chunk.
func (s *Service) workChunk(ctx context.Context, job *river.Job[chunkArgs]) error {
	a := job.Args
	rg, err := s.store.GetRegrade(ctx, a.ProjectID, a.RegradeID)
	if errors.Is(err, engine.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if rg.State.Final() {
		return nil // cancelled (or failed) meanwhile: nothing to do
	}
	c := s.cached(rg.Target.SHA256)
	if c == nil {
		cv, err := s.store.GetContractVersion(ctx, rg.ProjectID, rg.Target.Name, rg.Target.Version)
		if err != nil {
			return err
		}
		if c, err = s.parse(cv); err != nil {
			return &errStop{fmt.Errorf("target %w", err)}
		}
	}
	t0 := time.Now()
	originals, err := s.store.ReadRegradeChunk(ctx, rg, a.Chunk)
	if err != nil {
		return err
	}
	t1 := time.Now()
	outcomes := make([]record.RegradeOutcome, len(originals))
	now := time.Now().UTC().Truncate(time.Microsecond)
	enc := &resultjson.ExpectedCache{}
	sizes := c.RegexSizes()
	// A fixed set of workers takes the originals in turn: a goroutine per
	// original would grow a fresh stack for each evaluation.
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(s.cfg.Parallelism, len(originals)) {
		g.Go(func() error {
			var rd reeval.Reader
			for {
				i := int(next.Add(1) - 1)
				if i >= len(originals) {
					return nil
				}
				id, err := uuid.NewV7()
				if err != nil {
					return err
				}
				if outcomes[i], err = regradeOne(gctx, s.cfg.SecretScanner, &rd, c, sizes, rg.Target, &originals[i], rg.ID, id, now, enc); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	t2 := time.Now()
	counts, err := s.store.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: rg.ProjectID, Chunk: a.Chunk.Index, Outcomes: outcomes}, completeIn(job))
	if err != nil {
		return err
	}
	s.log.Debug("regrade chunk", zap.String("regrade_id", rg.ID.String()), zap.Int("chunk", a.Chunk.Index),
		zap.Int("originals", len(originals)), zap.Duration("read", t1.Sub(t0)), zap.Duration("grade", t2.Sub(t1)),
		zap.Duration("write", time.Since(t2)))
	s.metrics.results.WithLabelValues("regraded").Add(float64(counts.Done))
	s.metrics.results.WithLabelValues("failed").Add(float64(counts.Failed))
	s.metrics.results.WithLabelValues("skipped").Add(float64(counts.Skipped))
	s.metrics.flips.WithLabelValues("pass_to_fail").Add(float64(counts.PassToFail))
	s.metrics.flips.WithLabelValues("fail_to_pass").Add(float64(counts.FailToPass))
	if counts.State == record.RegradeCompleted {
		s.log.Info("regrade completed", zap.String("regrade_id", rg.ID.String()))
	}
	return nil
}

// cached returns the cached parsed contract of a sha256, nil when none.
func (s *Service) cached(sha string) *engine.Contract {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contracts[sha]
}
