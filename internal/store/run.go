package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/record"
)

// The run methods take a hook that runs inside their transaction, just
// before it commits, as the regrade methods do: internal/runs uses it to
// insert, complete or cancel river jobs atomically with the rows they
// describe.

const runSelect = `id, project_id, state, suite_name, suite, agent_url, coalesce(agent, ''),
	concurrency, timeout_ms, retries, total, done, passed, failed, errors, score_sum,
	coalesce(error, ''), created_at, started_at, finished_at`

// runSummarySelect is runSelect without the suite document (listings).
const runSummarySelect = `id, project_id, state, suite_name, NULL::json, agent_url, coalesce(agent, ''),
	concurrency, timeout_ms, retries, total, done, passed, failed, errors, score_sum,
	coalesce(error, ''), created_at, started_at, finished_at`

func scanRun(row pgx.Row) (record.Run, error) {
	var r record.Run
	var state string
	var suite []byte
	var timeoutMS int64
	var conc, retries, total, done, passed, failed, errs int32
	err := row.Scan(&r.ID, &r.ProjectID, &state, &r.SuiteName, &suite, &r.AgentURL, &r.Agent,
		&conc, &timeoutMS, &retries, &total, &done, &passed, &failed, &errs, &r.ScoreSum,
		&r.Error, &r.CreatedAt, &r.StartedAt, &r.FinishedAt)
	if err != nil {
		return r, err
	}
	r.State = record.RunState(state)
	if suite != nil {
		r.Suite = suite
	}
	r.Timeout = time.Duration(timeoutMS) * time.Millisecond
	r.Concurrency, r.Retries, r.Total, r.Done = int(conc), int(retries), int(total), int(done)
	r.Passed, r.Failed, r.Errors = int(passed), int(failed), int(errs)
	r.CreatedAt = r.CreatedAt.UTC()
	for _, t := range []*time.Time{r.StartedAt, r.FinishedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return r, nil
}

// CreateRun inserts r in state running (r.State and the counters are
// ignored; an empty run, Total 0, is inserted completed) and runs hook in
// the same transaction, so the run and its first jobs exist together or
// not at all.
//
// Errors: engine.ErrConflict when r.ID is taken; engine.ErrUnavailable;
// the hook's error.
func (db *DB) CreateRun(ctx context.Context, r record.Run, hook func(context.Context, pgx.Tx) error) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create run: %w", translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	state, finished := record.RunRunning, (*time.Time)(nil)
	if r.Total == 0 {
		state, finished = record.RunCompleted, &r.CreatedAt
	}
	if _, err := tx.Exec(ctx, `INSERT INTO runs (id, project_id, state, suite_name, suite, agent_url, agent,
			concurrency, timeout_ms, retries, total, created_at, started_at, finished_at)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), $8, $9, $10, $11, $12, $12, $13)`,
		r.ID, r.ProjectID, string(state), r.SuiteName, string(r.Suite), r.AgentURL, r.Agent,
		int32(r.Concurrency), r.Timeout.Milliseconds(), int32(r.Retries), int32(r.Total), r.CreatedAt, finished); err != nil {
		return err
	}
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// GetRun returns a run of a project, with its suite document.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetRun(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, error) {
	r, err := scanRun(db.pool.QueryRow(ctx, `SELECT `+runSelect+` FROM runs WHERE project_id = $1 AND id = $2`, projectID, id))
	if err != nil {
		return r, fmt.Errorf("get run %s: %w", id, translate(err))
	}
	return r, nil
}

// ListRuns returns up to limit runs of a project, newest first (created_at
// DESC, id DESC), continuing strictly after the cursor when non-nil. Their
// Suite is nil.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListRuns(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Run, error) {
	q := `SELECT ` + runSummarySelect + ` FROM runs WHERE project_id = $1`
	args := []any{projectID, limit}
	if after != nil {
		q += ` AND (created_at, id) < ($3, $4)`
		args = append(args, after.CreatedAt, after.ID)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", translate(err))
	}
	defer rows.Close()
	out := []record.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", translate(err))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", translate(err))
	}
	return out, nil
}

// ListRunTasks returns the finished tasks of a run of a project in suite
// order.
//
// Errors: engine.ErrNotFound when the run does not exist;
// engine.ErrUnavailable.
func (db *DB) ListRunTasks(ctx context.Context, projectID int64, id uuid.UUID) ([]record.RunTask, error) {
	var one int
	if err := db.pool.QueryRow(ctx, `SELECT 1 FROM runs WHERE project_id = $1 AND id = $2`, projectID, id).Scan(&one); err != nil {
		return nil, fmt.Errorf("list run tasks: run %s: %w", id, translate(err))
	}
	rows, err := db.pool.Query(ctx, `SELECT task_id, task_index, outcome, coalesce(reason, ''), result_id,
			coalesce(score, 0), coalesce(grade, ''), coalesce(top_issue, ''), attempts, duration_us, coalesce(trace_format, '')
		FROM run_tasks WHERE run_id = $1 ORDER BY task_index`, id)
	if err != nil {
		return nil, fmt.Errorf("list run tasks: %w", translate(err))
	}
	defer rows.Close()
	out := []record.RunTask{}
	for rows.Next() {
		var t record.RunTask
		var index, attempts int32
		var resultID *uuid.UUID
		var us int64
		if err := rows.Scan(&t.TaskID, &index, &t.Outcome, &t.Reason, &resultID, &t.Score, &t.Grade, &t.TopIssue,
			&attempts, &us, &t.Format); err != nil {
			return nil, fmt.Errorf("list run tasks: %w", translate(err))
		}
		t.Index, t.Attempts, t.Duration = int(index), int(attempts), time.Duration(us)*time.Microsecond
		if resultID != nil {
			t.ResultID = *resultID
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list run tasks: %w", translate(err))
	}
	return out, nil
}

// HasRunTask reports whether a task of a run has finished (its outcome is
// stored).
//
// Errors: engine.ErrUnavailable.
func (db *DB) HasRunTask(ctx context.Context, runID uuid.UUID, taskID string) (bool, error) {
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM run_tasks WHERE run_id = $1 AND task_id = $2)`,
		runID, taskID).Scan(&ok); err != nil {
		return false, fmt.Errorf("has run task: %w", translate(err))
	}
	return ok, nil
}

// WriteRunTask stores a finished task in one transaction that runs hook
// before it commits. The run's row is locked first; when the run is
// already final (cancelled meanwhile) nothing is written. Otherwise the
// task goes into run_tasks with ON CONFLICT DO NOTHING on (run_id,
// task_id), and only when it went in (first is true) is its result
// inserted into results and counted in the run (done, passed, failed,
// errors, score_sum); the task that makes done reach total completes the
// run. So a task's result is stored at most once per run, however often
// its job runs. hook receives first and the run's state after the write.
//
// Errors: engine.ErrNotFound when the run does not exist;
// engine.ErrUnavailable; the hook's error (nothing is written).
func (db *DB) WriteRunTask(ctx context.Context, w record.RunTaskWrite, hook func(ctx context.Context, tx pgx.Tx, first bool, state record.RunState) error) (first bool, state record.RunState, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write run task %s: %w", w.Task.TaskID, translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return false, "", err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	var st string
	if err := tx.QueryRow(ctx, `SELECT state FROM runs WHERE project_id = $1 AND id = $2 FOR UPDATE`, w.ProjectID, w.RunID).Scan(&st); err != nil {
		return false, "", err
	}
	state = record.RunState(st)
	if !state.Final() {
		t := &w.Task
		var resultID *uuid.UUID
		if w.Result != nil {
			resultID = &w.Result.ID
		}
		tag, err := tx.Exec(ctx, `INSERT INTO run_tasks (run_id, task_id, task_index, outcome, reason, result_id,
				score, grade, top_issue, attempts, duration_us, trace_format)
			VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, nullif($8, ''), nullif($9, ''), $10, $11, nullif($12, ''))
			ON CONFLICT DO NOTHING`,
			w.RunID, t.TaskID, int32(t.Index), t.Outcome, t.Reason, resultID,
			scoreOrNil(w.Result), t.Grade, t.TopIssue, int32(t.Attempts), t.Duration.Microseconds(), t.Format)
		if err != nil {
			return false, "", err
		}
		first = tag.RowsAffected() == 1
	}
	if first {
		if w.Result != nil {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"results"}, resultColumns, pgx.CopyFromRows([][]any{resultRow(w.Result)})); err != nil {
				return false, "", err
			}
		}
		var pass, fail, errs int32
		var score float64
		switch w.Task.Outcome {
		case "pass":
			pass = 1
		case "fail":
			fail = 1
		default:
			errs = 1
		}
		if w.Result != nil {
			score = w.Result.Score
		}
		if err := tx.QueryRow(ctx, `UPDATE runs SET
				done = done + 1, passed = passed + $2, failed = failed + $3, errors = errors + $4, score_sum = score_sum + $5,
				state = CASE WHEN done + 1 >= total THEN 'completed' ELSE state END,
				finished_at = CASE WHEN done + 1 >= total THEN now() ELSE finished_at END
			WHERE id = $1 RETURNING state`, w.RunID, pass, fail, errs, score).Scan(&st); err != nil {
			return false, "", err
		}
		state = record.RunState(st)
	}
	if hook != nil {
		if err := hook(ctx, tx, first, state); err != nil {
			return false, "", err
		}
	}
	return first, state, tx.Commit(ctx)
}

func scoreOrNil(r *record.Result) any {
	if r == nil {
		return nil
	}
	return r.Score
}

// FinishRun moves a run that is still running to state (cancelled or
// failed), with reason as its error for failed, and runs hook in the same
// transaction. It returns the run as it is afterwards (without its suite
// document): a run already final is returned unchanged (and hook still
// runs).
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable; the hook's error.
func (db *DB) FinishRun(ctx context.Context, projectID int64, id uuid.UUID, state record.RunState, reason string, hook func(context.Context, pgx.Tx) error) (r record.Run, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("finish run %s: %w", id, translate(err))
		}
	}()
	if state != record.RunCancelled && state != record.RunFailed {
		return r, fmt.Errorf("cannot finish a run as %q", state)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return r, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	r, err = scanRun(tx.QueryRow(ctx, `UPDATE runs SET state = $3, error = nullif($4, ''), finished_at = now()
		WHERE project_id = $1 AND id = $2 AND state = 'running' RETURNING `+runSummarySelect,
		projectID, id, string(state), reason))
	if errors.Is(err, pgx.ErrNoRows) {
		r, err = scanRun(tx.QueryRow(ctx, `SELECT `+runSummarySelect+` FROM runs WHERE project_id = $1 AND id = $2`, projectID, id))
	}
	if err != nil {
		return r, err
	}
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return r, err
		}
	}
	return r, tx.Commit(ctx)
}

// CountActiveRuns returns the number of runs of every project that are
// still running.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CountActiveRuns(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE state = 'running'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count active runs: %w", translate(err))
	}
	return n, nil
}
