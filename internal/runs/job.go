package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
)

// taskWorker runs one task of a run.
type taskWorker struct {
	river.WorkerDefaults[taskArgs]
	s *Service
}

// Timeout implements river.Worker: Config.MaxTaskTime, the longest any
// task's budget may be (Work ends a task at its own run's budget). River
// also rescues a task still marked running that long, its process
// presumed dead, so a killed run resumes after MaxTaskTime.
func (w *taskWorker) Timeout(*river.Job[taskArgs]) time.Duration { return w.s.cfg.MaxTaskTime }

// Work implements river.Worker.
func (w *taskWorker) Work(ctx context.Context, job *river.Job[taskArgs]) error {
	err := w.s.workTask(ctx, job)
	return w.s.jobDone(ctx, job, err)
}

// errStop wraps an error that no retry can cure: the job is cancelled and
// its run fails.
type errStop struct{ err error }

func (e *errStop) Error() string { return e.err.Error() }
func (e *errStop) Unwrap() error { return e.err }

// jobDone decides a job's fate: a permanent error or a last failed
// attempt fails the run; any other error retries the job.
func (s *Service) jobDone(ctx context.Context, job *river.Job[taskArgs], err error) error {
	a := job.Args
	var stop *errStop
	switch {
	case err == nil:
		return nil
	case errors.As(err, &stop):
		s.fail(ctx, a.ProjectID, a.RunID, stop.Error())
		return river.JobCancel(stop.err)
	case ctx.Err() != nil:
		// Shutdown or a JobCancel: river decides; no run state changes.
		return err
	case job.Attempt >= job.MaxAttempts:
		s.fail(ctx, a.ProjectID, a.RunID, fmt.Sprintf("task job failed %d times, last: %v", job.Attempt, err))
		return err
	}
	s.log.Warn("run task job failed, retrying", zap.String("run_id", a.RunID.String()), zap.Int("index", a.Index),
		zap.Int("attempt", job.Attempt), zap.Error(err))
	return err
}

// workTask asks the agent for one task, grades the answer and stores the
// outcome with the lane's next job and this job's completion.
func (s *Service) workTask(ctx context.Context, job *river.Job[taskArgs]) error {
	a := job.Args
	run, err := s.store.GetRun(ctx, a.ProjectID, a.RunID)
	if errors.Is(err, engine.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if run.State.Final() {
		return nil // cancelled (or failed) meanwhile
	}
	suite, err := s.suite(&run)
	if err != nil {
		return &errStop{fmt.Errorf("stored suite: %w", err)}
	}
	if a.Index < 0 || a.Index >= len(suite.Tasks) {
		return &errStop{fmt.Errorf("task %d: the suite has %d tasks", a.Index, len(suite.Tasks))}
	}
	task := suite.Tasks[a.Index]
	done, err := s.store.HasRunTask(ctx, run.ID, task.ID)
	if err != nil {
		return err
	}
	if done {
		// An earlier run of this job committed; its transaction queued
		// the lane's next job.
		return nil
	}
	opts := options(&run, s.cfg.SecretScanner)
	tctx, cancel := context.WithTimeout(ctx, Budget(run.Timeout, run.Retries))
	tr := harness.RunTask(tctx, task, &guardedRunner{harness.HTTPRunner{URL: run.AgentURL, Client: s.http, ErrorExcerpt: redactExcerpt}}, opts)
	cancel()
	if err := ctx.Err(); err != nil {
		return err // cancelled or shut down: nothing is stored
	}
	w := record.RunTaskWrite{ProjectID: run.ProjectID, RunID: run.ID, Task: record.RunTask{
		TaskID: task.ID, Index: task.Index, Outcome: string(tr.Outcome), Reason: tr.Reason,
		TopIssue: tr.TopIssue(), Attempts: tr.Attempts, Duration: tr.Duration, Format: tr.Format,
	}}
	if tr.Result != nil {
		// The format's warning quotes the answer's member names and
		// pointers: stored redacted, as POST /v1/evaluations stores it.
		if tr.FormatWarning != "" {
			red, err := secretscan.Redact(ctx, s.cfg.SecretScanner, []string{tr.FormatWarning})
			if err != nil {
				return err
			}
			tr.FormatWarning = red[0]
		}
		res, err := resultRecord(&run, task, &tr)
		if err != nil {
			w.Task.Outcome, w.Task.Reason, w.Task.TopIssue, w.Task.Format = string(harness.OutcomeError), err.Error(), err.Error(), ""
		} else {
			w.Result = res
			w.Task.ResultID, w.Task.Score, w.Task.Grade = res.ID, res.Score, res.Grade
		}
	}
	first, state, err := s.store.WriteRunTask(ctx, w, func(ctx context.Context, tx pgx.Tx, first bool, state record.RunState) error {
		if next := a.Index + run.Concurrency; first && !state.Final() && next < run.Total {
			if _, err := s.inserts.InsertTx(ctx, tx, taskArgs{ProjectID: a.ProjectID, RunID: a.RunID, Index: next}, nil); err != nil {
				return fmt.Errorf("queue task %d: %w", next, err)
			}
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	if err != nil {
		return err
	}
	if first {
		s.tasks.WithLabelValues(w.Task.Outcome).Inc()
	}
	if state == record.RunCompleted && first {
		s.log.Info("run completed", zap.String("run_id", run.ID.String()))
	}
	return nil
}

// guardedRunner is the HTTP runner of server-side runs: a refused
// address (the allow-list, at connect time) is a final error, not a
// transport failure to retry.
type guardedRunner struct{ harness.HTTPRunner }

// Run implements harness.Runner.
func (g *guardedRunner) Run(ctx context.Context, req *harness.Request) ([]byte, error) {
	b, err := g.HTTPRunner.Run(ctx, req)
	var re *RefusedError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("agent unreachable: %w", re)
	}
	return b, err
}

// resultRecord is the stored result of a graded task, as POST
// /v1/evaluations would store it: the inline contract's identity (its
// canonical sha256), the run's id and agent, the task's id and labels, and
// the options a regrade needs (min_score for gold tasks with a suite
// min_score), and the format's warning (tr's, redacted by the caller).
//
// Errors: the result cannot be stored (a NUL character in the trace).
func resultRecord(run *record.Run, task *harness.Task, tr *harness.TaskResult) (*record.Result, error) {
	res := tr.Result
	_, sum, err := jsondoc.Canonical(task.ContractJSON)
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	kind := record.KindContract
	if task.Contract.Gold {
		kind = record.KindGold
	}
	opts, err := json.Marshal(struct {
		Strict     bool     `json:"strict"`
		SafetyGate bool     `json:"safety_gate"`
		MinScore   *float64 `json:"min_score,omitempty"`
	}{false, true, task.MinScore})
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	r := &record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: run.ProjectID, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
			Contract: record.ContractRef{SHA256: sum, Kind: kind},
			TaskID:   task.ID, RunID: run.ID.String(), Agent: run.Agent, Labels: task.Labels, Format: tr.Format,
			Score: res.Score, Grade: string(res.Grade), Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate,
			FormatWarning: tr.FormatWarning,
		},
		Options:     opts,
		FinalAnswer: res.FinalAnswer,
	}
	for _, p := range []struct {
		dst *json.RawMessage
		v   any
	}{
		{&r.ExpectedCalls, nonNil(res.ExpectedCalls)}, {&r.TraceCalls, nonNil(res.TraceCalls)},
		{&r.ScoredIndexes, nonNil(res.ScoredIndexes)},
		{&r.Metrics, res.Metrics}, {&r.Checks, res.Checks}, {&r.Issues, nonNil(res.Issues)},
	} {
		b, err := json.Marshal(p.v)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		if bytes.Contains(b, []byte(`\u0000`)) {
			return nil, errors.New("the trace holds a NUL character (\\u0000), which cannot be stored")
		}
		*p.dst = b
	}
	if r.FinalAnswer != nil && strings.ContainsRune(*r.FinalAnswer, 0) {
		return nil, errors.New("the final answer holds a NUL character, which cannot be stored")
	}
	return r, nil
}

// nonNil returns an empty slice for a nil one, so it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
