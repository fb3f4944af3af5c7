package store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/record"
)

// otlpTx begins the transactions of the OTLP ingest's statements with
// custom plans (plan_cache_mode force_custom_plan, for the transaction
// only). They look traces up by arrays of ids in otlp_traces and
// otlp_spans, which a new deployment fills from empty within seconds: a
// connection's cached generic plan, made while otlp_traces was nearly
// empty, scans the whole table for every export until autovacuum's next
// ANALYZE, which on a fresh database made the database's CPU per span
// 7 times higher (BENCHMARKS.md, OTLP ingest). Planning each statement
// costs about a microsecond per span.
var otlpTx = pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL plan_cache_mode = force_custom_plan"}

// WriteSpans stores the span batches of one OTLP export request in one
// transaction and returns once it is committed (the receiver acknowledges
// the export only then). Per trace, in trace id order (so concurrent
// writers lock rows in one order and never deadlock):
//
//   - a new trace is inserted open; an open one has its span count,
//     last_seen and due_at updated, and the batch is stored;
//   - a closed or final trace counts the batch's spans as late; with
//     w.Reopen, one whose spans are still stored is reopened as its next
//     revision (state open, revision + 1, due again after the quiet
//     period) and the batch is stored; otherwise the batch is dropped.
//
// due_at is when the trace is complete: the earlier of last_seen +
// w.Quiet (once its root span has ended) and first_seen + w.MaxAge. Times
// are the database's (now()), so replicas agree.
//
// Errors: engine.ErrUnavailable; ctx's error.
func (db *DB) WriteSpans(ctx context.Context, w record.SpanWrite) (res record.SpanWriteResult, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write spans: %w", translate(err))
		}
	}()
	batches := slices.Clone(w.Batches)
	slices.SortFunc(batches, func(a, b record.SpanBatch) int { return bytes.Compare(a.TraceID[:], b.TraceID[:]) })
	ids := make([][]byte, len(batches))
	for i := range batches {
		ids[i] = batches[i].TraceID[:]
	}
	tx, err := db.pool.BeginTx(ctx, otlpTx)
	if err != nil {
		return res, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	type existing struct {
		state  record.TraceState
		purged bool
	}
	known := make(map[[16]byte]existing, len(batches))
	rows, err := tx.Query(ctx, `SELECT trace_id, state, spans_purged FROM otlp_traces
		WHERE project_id = $1 AND trace_id = ANY($2) ORDER BY trace_id FOR UPDATE`, w.ProjectID, ids)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var id []byte
		var e existing
		if err := rows.Scan(&id, &e.state, &e.purged); err != nil {
			return res, err
		}
		known[[16]byte(id)] = e
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	var open, reopen, late spanCols
	var store spanCols
	for i := range batches {
		b := &batches[i]
		e, ok := known[b.TraceID]
		switch {
		case !ok || e.state == record.TraceOpen:
			open.add(b)
			store.add(b)
		case w.Reopen && !e.purged:
			reopen.add(b)
			store.add(b)
			res.Late += b.Spans
			res.Reopened++
		default:
			late.add(b)
			res.Late += b.Spans
		}
	}
	quiet, maxAge := w.Quiet.Microseconds(), w.MaxAge.Microseconds()
	var batch pgx.Batch
	if len(open.id) > 0 {
		batch.Queue(`INSERT INTO otlp_traces AS t (project_id, trace_id, state, spans, root_ended, first_seen, last_seen, due_at)
			SELECT $1, u.trace_id, 'open', u.spans, u.root_ended, now(), now(),
				CASE WHEN u.root_ended THEN now() + least($5::bigint, $6::bigint) * interval '1 microsecond'
				ELSE now() + $6::bigint * interval '1 microsecond' END
			FROM unnest($2::bytea[], $3::int[], $4::bool[]) AS u(trace_id, spans, root_ended)
			ORDER BY u.trace_id
			ON CONFLICT (project_id, trace_id) DO UPDATE SET
				spans = t.spans + excluded.spans,
				root_ended = t.root_ended OR excluded.root_ended,
				last_seen = excluded.last_seen,
				due_at = CASE WHEN t.root_ended OR excluded.root_ended
					THEN least(excluded.last_seen + $5::bigint * interval '1 microsecond', t.first_seen + $6::bigint * interval '1 microsecond')
					ELSE t.first_seen + $6::bigint * interval '1 microsecond' END
			WHERE t.state = 'open'`,
			w.ProjectID, open.id, open.spans, open.root, quiet, maxAge)
	}
	if len(reopen.id) > 0 {
		batch.Queue(`UPDATE otlp_traces AS t SET state = 'open', revision = t.revision + 1,
				spans = t.spans + u.spans, late_spans = t.late_spans + u.spans,
				root_ended = t.root_ended OR u.root_ended, last_seen = now(),
				due_at = now() + CASE WHEN t.root_ended OR u.root_ended THEN least($5::bigint, $6::bigint) ELSE $6::bigint END * interval '1 microsecond',
				closed_at = NULL, finished_at = NULL, incomplete = false
			FROM unnest($2::bytea[], $3::int[], $4::bool[]) AS u(trace_id, spans, root_ended)
			WHERE t.project_id = $1 AND t.trace_id = u.trace_id`,
			w.ProjectID, reopen.id, reopen.spans, reopen.root, quiet, maxAge)
	}
	if len(late.id) > 0 {
		batch.Queue(`UPDATE otlp_traces AS t SET late_spans = t.late_spans + u.spans
			FROM unnest($2::bytea[], $3::int[]) AS u(trace_id, spans)
			WHERE t.project_id = $1 AND t.trace_id = u.trace_id`, w.ProjectID, late.id, late.spans)
	}
	if len(store.id) > 0 {
		// A trace another writer closed between the lock and here (only
		// when it was new to this transaction) takes no batch.
		batch.Queue(`INSERT INTO otlp_spans (project_id, trace_id, spans, data)
			SELECT $1, u.trace_id, u.spans, u.data FROM unnest($2::bytea[], $3::int[], $4::bytea[]) AS u(trace_id, spans, data)
			WHERE EXISTS (SELECT 1 FROM otlp_traces t WHERE t.project_id = $1 AND t.trace_id = u.trace_id AND t.state = 'open')`,
			w.ProjectID, store.id, store.spans, store.data)
	}
	if batch.Len() > 0 {
		br := tx.SendBatch(ctx, &batch)
		for i := 0; i < batch.Len(); i++ {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return res, err
			}
			if i == batch.Len()-1 && len(store.id) > 0 {
				res.Stored = storedSpans(tag.RowsAffected(), &store)
			}
		}
		if err := br.Close(); err != nil {
			return res, err
		}
	}
	return res, tx.Commit(ctx)
}

// storedSpans is the number of spans stored when n of the batches went in
// (all of them, but for the rare race WriteSpans describes).
func storedSpans(n int64, c *spanCols) int {
	total := 0
	for _, s := range c.spans {
		total += int(s)
	}
	if int(n) == len(c.id) {
		return total
	}
	return total * int(n) / max(len(c.id), 1)
}

// spanCols holds span batches column by column.
type spanCols struct {
	id    [][]byte
	spans []int32
	root  []bool
	data  [][]byte
}

func (c *spanCols) add(b *record.SpanBatch) {
	c.id = append(c.id, b.TraceID[:])
	c.spans = append(c.spans, int32(b.Spans))
	c.root = append(c.root, b.RootEnded)
	c.data = append(c.data, b.Data)
}

// CloseDueTraces closes up to limit open traces whose due time has
// passed, oldest due first, skipping rows other transactions hold (so
// every replica's assembler can run it at once), and calls hook in the
// same transaction with the closed traces (to queue their grading jobs).
// A trace closed before its root span ended and the quiet period passed
// (at the maximum age) is marked incomplete. quiet is the quiet period
// the incompleteness is judged by.
//
// Errors: engine.ErrUnavailable; the hook's error (nothing is closed).
func (db *DB) CloseDueTraces(ctx context.Context, limit int, quiet time.Duration, hook func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error) (closed []record.ClosedTrace, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("close due traces: %w", translate(err))
		}
	}()
	tx, err := db.pool.BeginTx(ctx, otlpTx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	rows, err := tx.Query(ctx, `UPDATE otlp_traces AS t SET state = 'closed', closed_at = now(),
			incomplete = NOT (t.root_ended AND t.last_seen + $2::bigint * interval '1 microsecond' <= now())
		FROM (SELECT project_id, trace_id FROM otlp_traces WHERE state = 'open' AND due_at <= now()
			ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED) AS d
		WHERE t.project_id = d.project_id AND t.trace_id = d.trace_id
		RETURNING t.project_id, t.trace_id, t.revision, t.incomplete, t.last_seen, t.spans`, limit, quiet.Microseconds())
	if err != nil {
		return nil, err
	}
	if closed, err = scanClosed(rows); err != nil {
		return nil, err
	}
	if len(closed) == 0 {
		return nil, nil
	}
	if err := hook(ctx, tx, closed); err != nil {
		return nil, err
	}
	return closed, tx.Commit(ctx)
}

// RequeueOTLPTraces closes again, as their next revision, up to q.Limit
// finished traces that q selects and whose spans are still stored (kept
// unmatched traces, or any trace while spans are kept after grading),
// skipping rows other transactions hold, and calls hook in the same
// transaction with them (to queue their grading jobs), oldest finished
// first (then by trace id). A trace keeps its
// incomplete flag; its next result is a regrade of its first one when
// it has one.
//
// Errors: engine.ErrUnavailable; the hook's error (nothing is closed).
func (db *DB) RequeueOTLPTraces(ctx context.Context, q record.TraceRequeue, hook func(ctx context.Context, tx pgx.Tx, closed []record.ClosedTrace) error) (closed []record.ClosedTrace, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("requeue traces: %w", translate(err))
		}
	}()
	states := make([]string, len(q.States))
	for i, st := range q.States {
		states[i] = string(st)
	}
	var ids [][]byte
	if len(q.TraceIDs) > 0 {
		ids = make([][]byte, len(q.TraceIDs))
		for i := range q.TraceIDs {
			ids[i] = q.TraceIDs[i][:]
		}
	}
	tx, err := db.pool.BeginTx(ctx, otlpTx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	rows, err := tx.Query(ctx, `UPDATE otlp_traces AS t SET state = 'closed', revision = t.revision + 1, closed_at = now(), finished_at = NULL
		FROM (SELECT project_id, trace_id FROM otlp_traces
			WHERE project_id = $1 AND state = ANY($2) AND finished_at IS NOT NULL AND NOT spans_purged AND finished_at < $3
				AND ($4::bytea[] IS NULL OR trace_id = ANY($4))
			ORDER BY finished_at, trace_id LIMIT $5 FOR UPDATE SKIP LOCKED) AS d
		WHERE t.project_id = d.project_id AND t.trace_id = d.trace_id
		RETURNING t.project_id, t.trace_id, t.revision, t.incomplete, t.last_seen, t.spans`, q.ProjectID, states, q.Before, ids, q.Limit)
	if err != nil {
		return nil, err
	}
	closed, err = scanClosed(rows)
	if err != nil || len(closed) == 0 {
		return nil, err
	}
	if err := hook(ctx, tx, closed); err != nil {
		return nil, err
	}
	return closed, tx.Commit(ctx)
}

func scanClosed(rows pgx.Rows) ([]record.ClosedTrace, error) {
	var closed []record.ClosedTrace
	var c record.ClosedTrace
	var id []byte
	_, err := pgx.ForEachRow(rows, []any{&c.ProjectID, &id, &c.Revision, &c.Incomplete, &c.LastSeen, &c.Spans}, func() error {
		c.TraceID = [16]byte(id)
		closed = append(closed, c)
		return nil
	})
	return closed, err
}

const otlpTraceSelect = `project_id, trace_id, state, revision, spans, late_spans, root_ended, first_seen, last_seen, due_at,
	closed_at, finished_at, incomplete, coalesce(rule_name, ''), coalesce(rule_version, 0), result_id, first_result_id, regrade_id, coalesce(reason, '')`

func scanOTLPTrace(row pgx.Row) (record.OTLPTrace, error) {
	var t record.OTLPTrace
	var id []byte
	var result, first, regrade *uuid.UUID
	err := row.Scan(&t.ProjectID, &id, &t.State, &t.Revision, &t.Spans, &t.LateSpans, &t.RootEnded, &t.FirstSeen, &t.LastSeen, &t.DueAt,
		&t.ClosedAt, &t.FinishedAt, &t.Incomplete, &t.RuleName, &t.RuleVersion, &result, &first, &regrade, &t.Reason)
	if err != nil {
		return t, err
	}
	if len(id) == 16 {
		t.TraceID = [16]byte(id)
	}
	for _, p := range []struct {
		dst *uuid.UUID
		src *uuid.UUID
	}{{&t.ResultID, result}, {&t.FirstResultID, first}, {&t.RegradeID, regrade}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	t.FirstSeen, t.LastSeen, t.DueAt = t.FirstSeen.UTC(), t.LastSeen.UTC(), t.DueAt.UTC()
	return t, nil
}

// GetOTLPTrace returns one trace of a project.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetOTLPTrace(ctx context.Context, projectID int64, traceID [16]byte) (record.OTLPTrace, error) {
	t, err := scanOTLPTrace(db.pool.QueryRow(ctx, `SELECT `+otlpTraceSelect+` FROM otlp_traces
		WHERE project_id = $1 AND trace_id = $2`, projectID, traceID[:]))
	if err != nil {
		return t, fmt.Errorf("get trace %x: %w", traceID, translate(err))
	}
	return t, nil
}

// ReadOTLPTraces returns the traces of a project with the given ids and
// their stored span batches' data in arrival order, in one round trip:
// the traces in trace id order, those not found left out.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ReadOTLPTraces(ctx context.Context, projectID int64, traceIDs [][16]byte) ([]record.StoredTrace, error) {
	ids := make([][]byte, len(traceIDs))
	for i := range traceIDs {
		ids[i] = traceIDs[i][:]
	}
	var batch pgx.Batch
	batch.Queue(`SELECT `+otlpTraceSelect+` FROM otlp_traces WHERE project_id = $1 AND trace_id = ANY($2) ORDER BY trace_id`, projectID, ids)
	batch.Queue(`SELECT trace_id, data FROM otlp_spans WHERE project_id = $1 AND trace_id = ANY($2) ORDER BY trace_id, seq`, projectID, ids)
	tx, err := db.pool.BeginTx(ctx, otlpTx)
	if err != nil {
		return nil, fmt.Errorf("read traces: %w", translate(err))
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	br := tx.SendBatch(ctx, &batch)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("read traces: %w", translate(err))
	}
	traces, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.StoredTrace, error) {
		t, err := scanOTLPTrace(r)
		return record.StoredTrace{OTLPTrace: t}, err
	})
	if err != nil {
		return nil, fmt.Errorf("read traces: %w", translate(err))
	}
	if rows, err = br.Query(); err != nil {
		return nil, fmt.Errorf("read spans: %w", translate(err))
	}
	// Both lists are in trace id order: merge them.
	i := 0
	var id, data []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &data}, func() error {
		for i < len(traces) && bytes.Compare(traces[i].TraceID[:], id) < 0 {
			i++
		}
		if i < len(traces) && bytes.Equal(traces[i].TraceID[:], id) {
			traces[i].Data = append(traces[i].Data, slices.Clone(data))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read spans: %w", translate(err))
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("read spans: %w", translate(err))
	}
	return traces, tx.Commit(ctx)
}

// resultLinkColumns are resultColumns plus the regrade link, for a
// result that is a regrade of an earlier one.
var resultLinkColumns = slices.Concat(resultColumns, []string{"regrade_of", "regrade_id"})

// FinishOTLPTraces writes a grading job's outcomes for revisions of
// traces, in one transaction: each trace moves from closed to its
// f.State (with the rule, the reason and the result id), the results are
// inserted, the span batches of those not f.KeepSpans are deleted, and
// hook runs (to complete the job). A trace moves only while it is closed
// at f.Revision, so a job that runs twice, or a trace reopened meanwhile,
// writes nothing for it: written[i] reports whether fs[i] was written. A
// result of revision 2 and later is written as a regrade of revision 1's
// (its RegradeOf and RegradeID set by the caller). Rows are locked in
// (project, trace id) order, the order WriteSpans locks them in.
//
// Errors: engine.ErrUnavailable; record.ErrInvalidText; the hook's error
// (nothing is written).
func (db *DB) FinishOTLPTraces(ctx context.Context, fs []record.TraceFinish, hook func(context.Context, pgx.Tx) error) (written []bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("finish traces: %w", translate(err))
		}
	}()
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if fs[a].ProjectID != fs[b].ProjectID {
			return cmp.Compare(fs[a].ProjectID, fs[b].ProjectID)
		}
		return bytes.Compare(fs[a].TraceID[:], fs[b].TraceID[:])
	})
	n := len(fs)
	projects, ids := make([]int64, n), make([][]byte, n)
	revisions, ruleVersions := make([]int32, n), make([]int32, n)
	states, ruleNames, reasons := make([]string, n), make([]string, n), make([]string, n)
	resultIDs, regradeIDs := make([]*uuid.UUID, n), make([]*uuid.UUID, n)
	keep := make([]bool, n)
	for k, i := range order {
		f := &fs[i]
		projects[k], ids[k], revisions[k], states[k] = f.ProjectID, f.TraceID[:], int32(f.Revision), string(f.State)
		ruleNames[k], ruleVersions[k], reasons[k], keep[k] = f.RuleName, int32(f.RuleVersion), f.Reason, f.KeepSpans
		if r := f.Result; r != nil {
			resultIDs[k] = &r.ID
			if r.RegradeID != uuid.Nil {
				regradeIDs[k] = &r.RegradeID
			}
		}
	}
	tx, err := db.pool.BeginTx(ctx, otlpTx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	written = make([]bool, n)
	if n > 0 {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM otlp_traces t
				JOIN unnest($1::bigint[], $2::bytea[]) AS u(project_id, trace_id) ON t.project_id = u.project_id AND t.trace_id = u.trace_id
				ORDER BY t.project_id, t.trace_id FOR UPDATE OF t`, projects, ids); err != nil {
			return nil, err
		}
		rows, err := tx.Query(ctx, `UPDATE otlp_traces AS t SET state = u.state, finished_at = now(),
				rule_name = nullif(u.rule_name, ''), rule_version = nullif(u.rule_version, 0), reason = nullif(u.reason, ''),
				result_id = u.result_id, first_result_id = coalesce(t.first_result_id, u.result_id), regrade_id = u.regrade_id,
				spans_purged = t.spans_purged OR NOT u.keep
			FROM unnest($1::bigint[], $2::bytea[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[], $8::uuid[], $9::uuid[], $10::bool[])
				AS u(project_id, trace_id, revision, state, rule_name, rule_version, reason, result_id, regrade_id, keep)
			WHERE t.project_id = u.project_id AND t.trace_id = u.trace_id AND t.revision = u.revision AND t.state = 'closed'
			RETURNING t.project_id, t.trace_id`,
			projects, ids, revisions, states, ruleNames, ruleVersions, reasons, resultIDs, regradeIDs, keep)
		if err != nil {
			return nil, err
		}
		done := map[traceKey]bool{}
		var p int64
		var id []byte
		if _, err := pgx.ForEachRow(rows, []any{&p, &id}, func() error {
			done[traceKey{p, [16]byte(id)}] = true
			return nil
		}); err != nil {
			return nil, err
		}
		var plain, linked [][]any
		var delProjects []int64
		var delIDs [][]byte
		for k, i := range order {
			f := &fs[i]
			if !done[traceKey{f.ProjectID, f.TraceID}] {
				continue
			}
			written[i] = true
			if r := f.Result; r != nil {
				if r.RegradeID != uuid.Nil {
					linked = append(linked, append(resultRow(r), [16]byte(r.RegradeOf), [16]byte(r.RegradeID)))
				} else {
					plain = append(plain, resultRow(r))
				}
			}
			if !keep[k] {
				delProjects, delIDs = append(delProjects, f.ProjectID), append(delIDs, ids[k])
			}
		}
		for _, c := range []struct {
			cols []string
			rows [][]any
		}{{resultColumns, plain}, {resultLinkColumns, linked}} {
			if len(c.rows) > 0 {
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"results"}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
					return nil, err
				}
			}
		}
		if len(delIDs) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM otlp_spans AS s USING unnest($1::bigint[], $2::bytea[]) AS u(project_id, trace_id)
				WHERE s.project_id = u.project_id AND s.trace_id = u.trace_id`, delProjects, delIDs); err != nil {
				return nil, err
			}
		}
	}
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return nil, err
		}
	}
	return written, tx.Commit(ctx)
}

// traceKey identifies a trace across projects.
type traceKey struct {
	project int64
	id      [16]byte
}

// PurgeOTLP applies the retention settings, up to limit traces per call:
// it deletes the span batches of traces finished more than keepSpans ago
// (when spans are kept after grading) and the rows of traces finished
// more than keepTraces ago (with any spans left). It returns the number
// of traces whose spans, and of traces, it deleted.
//
// Errors: engine.ErrUnavailable.
func (db *DB) PurgeOTLP(ctx context.Context, keepSpans, keepTraces time.Duration, limit int) (spans, traces int64, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("purge traces: %w", translate(err))
		}
	}()
	tag, err := db.pool.Exec(ctx, `WITH p AS (
			UPDATE otlp_traces AS t SET spans_purged = true
			FROM (SELECT project_id, trace_id FROM otlp_traces
				WHERE finished_at IS NOT NULL AND NOT spans_purged AND finished_at < now() - $1::bigint * interval '1 microsecond'
				ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED) AS d
			WHERE t.project_id = d.project_id AND t.trace_id = d.trace_id
			RETURNING t.project_id, t.trace_id)
		DELETE FROM otlp_spans AS s USING p WHERE s.project_id = p.project_id AND s.trace_id = p.trace_id`,
		keepSpans.Microseconds(), limit)
	if err != nil {
		return 0, 0, err
	}
	spans = tag.RowsAffected()
	tag, err = db.pool.Exec(ctx, `WITH d AS (
			DELETE FROM otlp_traces WHERE (project_id, trace_id) IN (
				SELECT project_id, trace_id FROM otlp_traces
				WHERE finished_at IS NOT NULL AND finished_at < now() - $1::bigint * interval '1 microsecond'
				ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)
			RETURNING project_id, trace_id)
		DELETE FROM otlp_spans AS s USING d WHERE s.project_id = d.project_id AND s.trace_id = d.trace_id`,
		keepTraces.Microseconds(), limit)
	if err != nil {
		return spans, 0, err
	}
	return spans, tag.RowsAffected(), nil
}

// CountOpenTraces returns the number of traces open or closed and not yet
// graded, in every project.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CountOpenTraces(ctx context.Context) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM otlp_traces WHERE state IN ('open', 'closed')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count open traces: %w", translate(err))
	}
	return n, nil
}

// CreateGradingRule stores r as the next version of r.Name, or returns the
// version with the same sha256 with created false. Versions of one name
// are serialised with an advisory lock, so they have no gaps.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CreateGradingRule(ctx context.Context, r record.GradingRule) (_ record.GradingRule, created bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create grading rule %s: %w", r.Name, translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return r, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('toolscore.grading_rules/' || $1::bigint::text || '/' || $2::text, 0))`, r.ProjectID, r.Name); err != nil {
		return r, false, err
	}
	existing, err := scanRule(tx.QueryRow(ctx, `SELECT `+ruleSelect+` FROM grading_rules
		WHERE project_id = $1 AND name = $2 AND sha256 = $3`, r.ProjectID, r.Name, r.SHA256))
	if err == nil {
		return existing, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return r, false, err
	}
	err = tx.QueryRow(ctx, `INSERT INTO grading_rules (project_id, name, version, sha256, body)
		SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4 FROM grading_rules WHERE project_id = $1 AND name = $2
		RETURNING version, created_at`, r.ProjectID, r.Name, r.SHA256, string(r.Body)).Scan(&r.Version, &r.CreatedAt)
	if err != nil {
		return r, false, err
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, true, tx.Commit(ctx)
}

const ruleSelect = `project_id, name, version, sha256, body, created_at`

func scanRule(row pgx.Row) (record.GradingRule, error) {
	var r record.GradingRule
	var body string
	if err := row.Scan(&r.ProjectID, &r.Name, &r.Version, &r.SHA256, &body, &r.CreatedAt); err != nil {
		return r, err
	}
	r.Body, r.CreatedAt = []byte(body), r.CreatedAt.UTC()
	return r, nil
}

func collectRules(rows pgx.Rows, err error) ([]record.GradingRule, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.GradingRule, error) { return scanRule(r) })
}

// GetGradingRule returns one version of a named rule; version 0 means the
// latest.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetGradingRule(ctx context.Context, projectID int64, name string, version int) (record.GradingRule, error) {
	var row pgx.Row
	if version == 0 {
		row = db.pool.QueryRow(ctx, `SELECT `+ruleSelect+` FROM grading_rules WHERE project_id = $1 AND name = $2
			ORDER BY version DESC LIMIT 1`, projectID, name)
	} else {
		row = db.pool.QueryRow(ctx, `SELECT `+ruleSelect+` FROM grading_rules WHERE project_id = $1 AND name = $2 AND version = $3`,
			projectID, name, int32(version))
	}
	r, err := scanRule(row)
	if err != nil {
		return r, fmt.Errorf("get grading rule %s: %w", name, translate(err))
	}
	return r, nil
}

// ListGradingRuleVersions returns up to limit versions of a named rule
// after version after, oldest first.
//
// Errors: engine.ErrNotFound when the name has no version; engine.ErrUnavailable.
func (db *DB) ListGradingRuleVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.GradingRule, error) {
	rs, err := collectRules(db.pool.Query(ctx, `SELECT `+ruleSelect+` FROM grading_rules
		WHERE project_id = $1 AND name = $2 AND version > $3 ORDER BY version LIMIT $4`, projectID, name, int32(after), limit))
	if err != nil {
		return nil, fmt.Errorf("list grading rule %s: %w", name, translate(err))
	}
	if len(rs) == 0 && after == 0 {
		return nil, fmt.Errorf("list grading rule %s: %w", name, translate(pgx.ErrNoRows))
	}
	return rs, nil
}

// ListGradingRules returns the latest version of up to limit named rules
// whose name sorts after after, by name; after "" and limit 0 list every
// rule (the rules in force).
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListGradingRules(ctx context.Context, projectID int64, after string, limit int) ([]record.GradingRule, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rs, err := collectRules(db.pool.Query(ctx, `SELECT DISTINCT ON (name) `+ruleSelect+` FROM grading_rules
		WHERE project_id = $1 AND name > $2 ORDER BY name, version DESC LIMIT $3`, projectID, after, limit))
	if err != nil {
		return nil, fmt.Errorf("list grading rules: %w", translate(err))
	}
	return rs, nil
}
