package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolscore/toolscore/internal/record"
)

// The regrade methods take a hook that runs inside their transaction,
// just before it commits (when it fails, the transaction rolls back):
// internal/regrade uses it to insert, complete or cancel river jobs
// atomically with the rows they describe.

// Pool returns the store's connection pool, for river's driver
// (riverpgxv5), which must share it so jobs and rows commit together.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

const regradeSelect = `id, project_id, state, contract_name, contract_version, contract_sha256,
	selection, snapshot_at, chunk_size, total, chunks, chunks_done, done, failed,
	pass_to_fail, fail_to_pass, changed, score_delta_sum, coalesce(error, ''),
	created_at, started_at, finished_at`

func scanRegrade(row pgx.Row) (record.Regrade, error) {
	var rg record.Regrade
	var state string
	var sel []byte
	var version int32
	err := row.Scan(&rg.ID, &rg.ProjectID, &state, &rg.Target.Name, &version, &rg.Target.SHA256,
		&sel, &rg.SnapshotAt, &rg.ChunkSize, &rg.Total, &rg.Chunks, &rg.ChunksDone, &rg.Done, &rg.Failed,
		&rg.PassToFail, &rg.FailToPass, &rg.Changed, &rg.ScoreDeltaSum, &rg.Error,
		&rg.CreatedAt, &rg.StartedAt, &rg.FinishedAt)
	if err != nil {
		return rg, err
	}
	rg.State = record.RegradeState(state)
	rg.Target.Version = int(version)
	rg.Target.Kind = record.KindContract
	if err := json.Unmarshal(sel, &rg.Selection); err != nil {
		return rg, fmt.Errorf("regrade %s: selection: %w", rg.ID, err)
	}
	rg.SnapshotAt = rg.SnapshotAt.UTC()
	rg.CreatedAt = rg.CreatedAt.UTC()
	for _, t := range []*time.Time{rg.StartedAt, rg.FinishedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return rg, nil
}

// CreateRegrade inserts rg in state pending (rg.State and the counters are
// ignored) and runs hook in the same transaction, so the regrade and its
// first job exist together or not at all.
//
// Errors: engine.ErrNotFound when the target contract version does not
// exist; engine.ErrConflict when rg.ID is taken; engine.ErrUnavailable;
// the hook's error.
func (db *DB) CreateRegrade(ctx context.Context, rg record.Regrade, hook func(context.Context, pgx.Tx) error) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create regrade: %w", translate(err))
		}
	}()
	sel, err := json.Marshal(rg.Selection)
	if err != nil {
		return err
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	tag, err := tx.Exec(ctx, `INSERT INTO regrades (id, project_id, state, contract_name, contract_version, contract_sha256,
			selection, snapshot_at, chunk_size, created_at)
		SELECT $1, $2, 'pending', name, version, sha256, $5, $6, $7, $8
		FROM contracts WHERE project_id = $2 AND name = $3 AND version = $4`,
		rg.ID, rg.ProjectID, rg.Target.Name, int32(rg.Target.Version), string(sel), rg.SnapshotAt, int32(rg.ChunkSize), rg.CreatedAt)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("contract %s@%d: %w", rg.Target.Name, rg.Target.Version, pgx.ErrNoRows)
	}
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// GetRegrade returns a regrade of a project.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetRegrade(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error) {
	rg, err := scanRegrade(db.pool.QueryRow(ctx, `SELECT `+regradeSelect+` FROM regrades WHERE project_id = $1 AND id = $2`, projectID, id))
	if err != nil {
		return rg, fmt.Errorf("get regrade %s: %w", id, translate(err))
	}
	return rg, nil
}

// CountActiveRegrades returns the number of regrades of every project that
// are pending or running.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CountActiveRegrades(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM regrades WHERE state IN ('pending', 'running')`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count active regrades: %w", translate(err))
	}
	return n, nil
}

// querier is what selectionWhere reads the registry with: the pool or a
// transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// selectionWhere builds the conditions selecting a regrade's originals:
// results of the project graded against sel.ContractName at one of
// sel.FromVersions (every version but target when empty, read from the
// registry with q), that are not themselves regrade results, created
// before snapshot, matching the other fields of sel.
//
// The versions are written into the SQL as integer literals, not as an
// array parameter or subquery: the planner then knows how many there
// are and makes the equality a condition of the results_contract index
// scan, so that the created_at bounds of a chunk stop it. Given an array
// of unknown length (a subquery, or a parameter in a generic plan) it
// assumes ten and filters instead: every chunk then read the index
// entries of every result of the contract, the regrade's own new results
// included (200 ms and 3,400 buffers per chunk once 100,000 were
// written, against 13 ms and 530).
func selectionWhere(ctx context.Context, q querier, projectID int64, sel record.RegradeSelection, target int, snapshot time.Time) (*where, error) {
	w := filterWhere(projectID, record.ResultFilter{
		ContractName: sel.ContractName,
		TaskID:       sel.TaskID, RunID: sel.RunID, Agent: sel.Agent,
		Labels: sel.Labels,
		Since:  sel.Since, Until: sel.Until,
	})
	versions := sel.FromVersions
	if len(versions) == 0 && sel.ContractName != "" {
		// Every version but the target, listed from the registry (the
		// same set: an original's version is registered, migration
		// 00019's trigger).
		rows, err := q.Query(ctx, `SELECT version FROM contracts WHERE project_id = $1 AND name = $2 AND version <> $3 ORDER BY version`,
			projectID, sel.ContractName, int32(target))
		if err != nil {
			return nil, err
		}
		vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return nil, err
		}
		versions = make([]int, len(vs))
		for i, v := range vs {
			versions[i] = int(v)
		}
		if len(versions) == 0 {
			w.add("false")
		}
	}
	if len(versions) > 0 {
		lit := make([]string, len(versions))
		for i, v := range versions {
			lit[i] = strconv.FormatInt(int64(int32(v)), 10)
		}
		w.add("contract_version IN (" + strings.Join(lit, ", ") + ")")
	} else if sel.ContractName == "" {
		w.add("contract_version <> ?", int32(target))
	}
	w.add("regrade_id IS NULL")
	w.add("created_at < ?", snapshot)
	return w, nil
}

// CountRegradeSelection returns the number of originals a regrade with
// this selection, target version and snapshot would re-evaluate (a dry
// run).
//
// Errors: engine.ErrUnavailable.
func (db *DB) CountRegradeSelection(ctx context.Context, projectID int64, sel record.RegradeSelection, target int, snapshot time.Time) (int64, error) {
	w, err := selectionWhere(ctx, db.pool, projectID, sel, target, snapshot)
	if err != nil {
		return 0, fmt.Errorf("count regrade selection: %w", translate(err))
	}
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE `+w.sql(), w.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count regrade selection: %w", translate(err))
	}
	return n, nil
}

// PlanRegrade plans a pending regrade in one transaction: it counts the
// selected originals, cuts them into chunks of rg.ChunkSize in
// (created_at, id) order, and moves the regrade to running (or straight
// to completed, with total 0, when nothing matches). hook receives the
// planned regrade and its chunks (nil when the regrade was no longer
// pending: cancelled meanwhile, or planned by an earlier attempt) and runs
// before the commit, so the chunk jobs it inserts exist exactly when the
// plan does.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable; the hook's error.
func (db *DB) PlanRegrade(ctx context.Context, id uuid.UUID, hook func(ctx context.Context, tx pgx.Tx, rg record.Regrade, chunks []record.RegradeChunk) error) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("plan regrade %s: %w", id, translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	rg, err := scanRegrade(tx.QueryRow(ctx, `SELECT `+regradeSelect+` FROM regrades WHERE id = $1 FOR UPDATE`, id))
	if err != nil {
		return err
	}
	if rg.State != record.RegradePending {
		if err := hook(ctx, tx, rg, nil); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	// Every ChunkSize-th key, and the last one, bound the chunks. Only the
	// boundaries leave the database.
	w, err := selectionWhere(ctx, tx, rg.ProjectID, rg.Selection, rg.Target.Version, rg.SnapshotAt)
	if err != nil {
		return err
	}
	w.args = append(w.args, int64(rg.ChunkSize))
	rows, err := tx.Query(ctx, `SELECT created_at, id, n FROM (
			SELECT created_at, id, row_number() OVER (ORDER BY created_at, id) AS n, count(*) OVER () AS total
			FROM results WHERE `+w.sql()+`) s
		WHERE n % $`+strconv.Itoa(len(w.args))+` = 0 OR n = total ORDER BY n`, w.args...)
	if err != nil {
		return err
	}
	var chunks []record.RegradeChunk
	var after *record.RegradeKey
	var total int64
	for rows.Next() {
		var k record.RegradeKey
		if err := rows.Scan(&k.CreatedAt, &k.ID, &total); err != nil {
			rows.Close()
			return err
		}
		k.CreatedAt = k.CreatedAt.UTC()
		chunks = append(chunks, record.RegradeChunk{Index: len(chunks), After: after, Upto: k})
		after = &k
	}
	if err := rows.Err(); err != nil {
		return err
	}
	now := time.Now().UTC()
	rg.Total, rg.Chunks, rg.StartedAt = total, len(chunks), &now
	rg.State = record.RegradeRunning
	if len(chunks) == 0 {
		rg.State, rg.FinishedAt = record.RegradeCompleted, &now
	}
	if _, err := tx.Exec(ctx, `UPDATE regrades SET state = $2, total = $3, chunks = $4, started_at = $5, finished_at = $6 WHERE id = $1`,
		rg.ID, string(rg.State), rg.Total, int32(rg.Chunks), rg.StartedAt, rg.FinishedAt); err != nil {
		return err
	}
	if chunks == nil {
		chunks = []record.RegradeChunk{}
	}
	if err := hook(ctx, tx, rg, chunks); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// regradeOriginalSelect is what ReadRegradeChunk reads of an original.
//
// Only the original's credentials check is read, and only when it failed:
// a test on the text picks the few rows worth the cost of parsing checks.
// Go's compact encoding writes the check as {"name":"credentials",
// "status":"fail",...}, found by strpos; rows stored as jsonb before
// migration 00005 have jsonb's spaced text, with other members between
// name and status, which a regular expression matches (a tenth of
// Postgres' time per regraded result when it ran on every row).
var regradeOriginalSelect = summarySelect + `, options, trace_calls, final_answer,
	CASE WHEN strpos(checks, '"name":"credentials","status":"fail"') > 0
			OR (strpos(checks, '"name": "credentials"') > 0 AND checks ~ '"name": "credentials"[^{}]*"status": "fail"')
		THEN jsonb_path_query_first(checks::jsonb, '$.items[*] ? (@.name == "credentials" && @.status == "fail")') END,
	issues`

// regradeChunkQuery returns ReadRegradeChunk's query of chunk c of rg
// and its arguments, reading the selected versions with q.
func regradeChunkQuery(ctx context.Context, q querier, rg record.Regrade, c record.RegradeChunk) (string, []any, error) {
	w, err := selectionWhere(ctx, q, rg.ProjectID, rg.Selection, rg.Target.Version, rg.SnapshotAt)
	if err != nil {
		return "", nil, err
	}
	// The plain bounds on created_at, implied by the row comparisons,
	// are what an index scan can start and stop at: without them Postgres
	// read every selected original's index entry (or the whole table) for
	// each chunk, a regrade's time growing with the square of its size.
	if c.After != nil {
		w.add("created_at >= ?", c.After.CreatedAt)
		w.add("(created_at, id) > (?, ?)", c.After.CreatedAt, c.After.ID)
	}
	w.add("created_at <= ?", c.Upto.CreatedAt)
	w.add("(created_at, id) <= (?, ?)", c.Upto.CreatedAt, c.Upto.ID)
	return `SELECT ` + regradeOriginalSelect + ` FROM results WHERE ` + w.sql() + ` ORDER BY created_at, id`, w.args, nil
}

// ReadRegradeChunk returns the originals of one chunk of rg, in
// (created_at, id) order: at most about rg.ChunkSize rows (more only when
// results created before the snapshot were committed after the plan).
//
// Errors: engine.ErrUnavailable.
func (db *DB) ReadRegradeChunk(ctx context.Context, rg record.Regrade, c record.RegradeChunk) ([]record.RegradeOriginal, error) {
	q, args, err := regradeChunkQuery(ctx, db.pool, rg, c)
	if err != nil {
		return nil, fmt.Errorf("read regrade chunk %d: %w", c.Index, translate(err))
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read regrade chunk %d: %w", c.Index, translate(err))
	}
	defer rows.Close()
	out := make([]record.RegradeOriginal, 0, rg.ChunkSize)
	for rows.Next() {
		var o record.RegradeOriginal
		var s summaryScan
		var issues []byte
		dest := append(s.dest(&o.ResultSummary), &o.Options, &o.TraceCalls, &o.FinalAnswer, &o.FailedCredentials, &issues)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read regrade chunk %d: %w", c.Index, translate(err))
		}
		err := s.fill(&o.ResultSummary)
		if err == nil {
			// Only the first issue is decoded (issues is text since
			// migration 00007).
			if o.FirstIssue, err = record.FirstElement(issues); err != nil {
				err = fmt.Errorf("result %s: issues: %w", o.ID, err)
			}
		}
		if err != nil {
			// A stored row that no longer parses: the regrade reports it
			// as failed and goes on.
			o.Unreadable = err.Error()
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read regrade chunk %d: %w", c.Index, translate(err))
	}
	return out, nil
}

// regradeColumns are the columns WriteRegradeChunk writes: a result's,
// then its regrade link and the key of its regrade's copy of its
// expected calls (migration 00016).
var regradeColumns = append(append([]string(nil), resultColumns...), "regrade_of", "regrade_id", "expected_combination")

// chunkCopyBuffers holds WriteRegradeChunk's COPY buffers (*[]byte)
// between chunks: about 6 MB for 1,000 medium results.
var chunkCopyBuffers sync.Pool

// maxChunkCopy is the largest COPY buffer chunkCopyBuffers keeps.
const maxChunkCopy = 32 << 20

// chunkCopySize returns at least the size of the COPY stream of the
// outcomes' results: their variable parts and a bound on the fixed ones.
func chunkCopySize(outcomes []record.RegradeOutcome) int {
	n := len(copyHeader) + 2
	for i := range outcomes {
		r := outcomes[i].Result
		if r == nil {
			continue
		}
		n += 512 + len(r.Contract.Name) + len(r.Contract.SHA256) + len(r.TaskID) + len(r.RunID) + len(r.Agent) +
			len(r.LabelsJSON) + len(r.Format) + len(r.Options) + len(r.ExpectedCalls) + len(r.ExpectedKey) +
			len(r.ScoredIndexes) + len(r.Metrics) + len(r.Checks) + len(r.Issues)
		if !r.SharesTrace {
			n += len(r.TraceCalls)
		}
		if r.FinalAnswer != nil {
			n += len(*r.FinalAnswer)
		}
		if len(r.LabelsJSON) == 0 {
			n += 64 * len(r.Labels) // labelsJSON encodes them
			for k, v := range r.Labels {
				n += len(k) + len(v)
			}
		}
	}
	return n
}

// appendRegradeTuple appends the binary COPY tuple of a regrade result in
// regradeColumns' order (appendResultFields, then the link): trace_calls
// is NULL when the result shares its original's (record.Result.SharesTrace;
// migration 00011); with sharedExpected, expected_calls is NULL and
// expected_combination the key of the regrade's copy (migration 00016),
// else expected_combination is NULL.
func appendRegradeTuple(b []byte, o *record.RegradeOutcome, regradeID uuid.UUID, sharedExpected bool) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(regradeColumns)))
	b = appendResultFields(b, o.Result, sharedExpected)
	b = appendField(b, o.Original.ID[:])
	b = appendField(b, regradeID[:])
	if sharedExpected {
		return appendText(b, o.Result.ExpectedKey)
	}
	return appendNull(b)
}

// storeSharedExpected stores the copies of a regrade's expected calls
// that the results of a chunk share (by key: record.Result.ExpectedKey)
// in regrade_expected_calls, in a statement of its own that commits
// before the chunk's transaction begins (a chunk waits at most for
// another's insert of the same key, never for its whole transaction), and
// returns the keys whose stored copy is byte for byte the given one:
// those the statement inserted, and those an earlier one stored with the
// same bytes. A key stored with other bytes (by a server whose encoder
// differs), or by a statement that committed while this one ran, is left
// out: its results keep their own copy. A regrade that does not exist is
// engine.ErrNotFound (after translate).
func (db *DB) storeSharedExpected(ctx context.Context, regradeID uuid.UUID, shared map[string][]byte) (map[string]bool, error) {
	keys := make([]string, 0, len(shared))
	values := make([]string, 0, len(shared))
	for k, v := range shared {
		keys = append(keys, k)
		values = append(values, string(v))
	}
	rows, err := db.pool.Query(ctx, `WITH given AS (SELECT * FROM unnest($2::text[], $3::text[]) AS g(combination, expected_calls)),
		ins AS (INSERT INTO regrade_expected_calls (regrade_id, combination, expected_calls)
			SELECT $1, combination, expected_calls FROM given ON CONFLICT DO NOTHING RETURNING combination)
		SELECT combination FROM ins
		UNION ALL
		SELECT e.combination FROM regrade_expected_calls e JOIN given g USING (combination)
		WHERE e.regrade_id = $1 AND e.expected_calls = g.expected_calls`, pgUUID(regradeID), keys, values)
	var stored []string
	if err == nil {
		stored, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation
		return nil, fmt.Errorf("regrade %s: %w", regradeID, pgx.ErrNoRows)
	}
	if err != nil {
		return nil, err
	}
	same := make(map[string]bool, len(stored))
	for _, k := range stored {
		same[k] = true
	}
	return same, nil
}

// WriteRegradeChunk writes the outcomes of one chunk and counts them, in
// one transaction that runs hook before it commits:
//   - the new results, with INSERT ... ON CONFLICT DO NOTHING on the
//     (regrade_of, regrade_id) key when a run of the chunk committed
//     before (its regrade_chunks row exists), so a chunk that ran before
//     adds nothing (a first run uses a plain COPY,
//     which the same key makes fail, and so retry, if another run of the
//     chunk commits first); only the rows actually inserted are counted
//     (Done, flips) and listed in regrade_changes when their verdict or
//     grade changed;
//   - the failures, likewise keyed by (regrade_id, original id);
//   - the chunk in regrade_chunks, keyed by (regrade_id, chunk), and the
//     regrade's counters, with chunks_done + 1 the first time the chunk
//     commits (ChunkCounts.Repeated otherwise); the chunk that makes
//     chunks_done reach chunks completes the regrade (total then becomes
//     done + failed), unless it was cancelled meanwhile.
//
// Every result must name cw.ProjectID and the regrade's target contract
// version, which the transaction checks against the regrades row: the
// references of results are checked for originals only (migrations 00014
// and 00019), and this is what guarantees a regrade result's project and contract.
//
// Errors: engine.ErrNotFound when the regrade does not exist; a result
// naming another project or contract version (nothing is written);
// engine.ErrUnavailable; the hook's error (nothing is written).
func (db *DB) WriteRegradeChunk(ctx context.Context, cw record.ChunkWrite, hook func(context.Context, pgx.Tx) error) (counts record.ChunkCounts, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write regrade chunk: %w", translate(err))
		}
	}()
	byOriginal := make(map[uuid.UUID]*record.RegradeOutcome, len(cw.Outcomes))
	// tuples is the binary COPY stream of the new results (copyResults'
	// encoding), nRows of them, in a buffer sized for the chunk at once.
	bp, _ := chunkCopyBuffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	if size := chunkCopySize(cw.Outcomes); cap(*bp) < size {
		*bp = make([]byte, 0, size)
	}
	tuples := append((*bp)[:0], copyHeader...)
	defer func() {
		// After a failed COPY, pgx's reader goroutine may still read
		// tuples (CopyFrom returns on a broken connection without
		// waiting for it), so only a successful chunk's buffer is reused.
		if err == nil && cap(tuples) <= maxChunkCopy {
			*bp = tuples
			chunkCopyBuffers.Put(bp)
		}
	}()
	// The expected calls the results share are stored first; a result
	// whose copy could not be stored keeps its own.
	shared := map[string][]byte{}
	for i := range cw.Outcomes {
		if r := cw.Outcomes[i].Result; r != nil && r.SharesExpected {
			if _, ok := shared[r.ExpectedKey]; !ok {
				shared[r.ExpectedKey] = r.ExpectedCalls
			}
		}
	}
	var sameExpected map[string]bool
	if len(shared) > 0 {
		if sameExpected, err = db.storeSharedExpected(ctx, cw.RegradeID, shared); err != nil {
			return counts, err
		}
	}
	nRows := 0
	var failedIDs []uuid.UUID
	var reasons []string
	// target is the contract version every result of the chunk names:
	// the regrade's, checked below against its row (the references of
	// results are checked for originals only, migration 00019).
	var target *record.ContractRef
	for i := range cw.Outcomes {
		o := &cw.Outcomes[i]
		byOriginal[o.Original.ID] = o
		if o.Result == nil {
			failedIDs = append(failedIDs, o.Original.ID)
			reasons = append(reasons, o.Failure)
			continue
		}
		r := o.Result
		if target == nil {
			target = &r.Contract
		}
		if r.ProjectID != cw.ProjectID || r.Contract.Name != target.Name || r.Contract.Version != target.Version || target.Version <= 0 {
			return counts, fmt.Errorf("result %s: project %d, contract %q version %d: a chunk's results must all name its regrade's project %d and one target version",
				r.ID, r.ProjectID, r.Contract.Name, r.Contract.Version, cw.ProjectID)
		}
		share := r.SharesExpected && sameExpected[r.ExpectedKey] &&
			bytes.Equal(r.ExpectedCalls, shared[r.ExpectedKey])
		tuples = appendRegradeTuple(tuples, o, cw.RegradeID, share)
		nRows++
	}
	tuples = binary.BigEndian.AppendUint16(tuples, 0xffff) // the trailer

	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return counts, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	copyInto := func(table string) error {
		_, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(tuples),
			"COPY "+table+" ("+strings.Join(regradeColumns, ", ")+") FROM STDIN (FORMAT binary)")
		return err
	}

	var delta float64
	var changes [][]any
	if nRows > 0 {
		origIDs := make([]uuid.UUID, 0, nRows)
		for _, o := range cw.Outcomes {
			if o.Result != nil {
				origIDs = append(origIDs, o.Original.ID)
			}
		}
		// A run of this chunk wrote results exactly when it committed
		// its regrade_chunks row (in the same transaction), and no other
		// chunk holds these originals: one key lookup instead of one per
		// original.
		var again bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM regrade_chunks WHERE regrade_id = $1 AND chunk = $2)`,
			pgUUID(cw.RegradeID), int32(cw.Chunk)).Scan(&again); err != nil {
			return counts, err
		}
		var ins pgx.Rows
		if !again {
			// The chunk's first run: COPY straight into results. A run
			// of the same chunk committing meanwhile makes this fail on
			// the unique key; the job then retries through the path
			// below.
			if err := copyInto("results"); err != nil {
				return counts, err
			}
			ins, err = tx.Query(ctx, `SELECT unnest($1::uuid[])`, pgUUIDs(origIDs))
		} else {
			// A chunk that ran before: a session's temporary table,
			// emptied at each commit, takes the rows by COPY, and INSERT
			// ... ON CONFLICT DO NOTHING skips what the earlier run wrote.
			if _, err := tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS regrade_stage (LIKE results INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`); err != nil {
				return counts, err
			}
			if err := copyInto("regrade_stage"); err != nil {
				return counts, err
			}
			cols := strings.Join(regradeColumns, ", ")
			ins, err = tx.Query(ctx, `INSERT INTO results (`+cols+`) SELECT `+cols+` FROM regrade_stage
				ON CONFLICT (regrade_of, regrade_id) WHERE regrade_of IS NOT NULL DO NOTHING RETURNING regrade_of`)
		}
		if err != nil {
			return counts, err
		}
		for ins.Next() {
			var orig uuid.UUID
			if err := ins.Scan((*[16]byte)(&orig)); err != nil {
				ins.Close()
				return counts, err
			}
			o := byOriginal[orig]
			old, res := &o.Original, o.Result
			counts.Done++
			delta += res.Score - old.Score
			switch {
			case old.Passed && !res.Passed:
				counts.PassToFail++
			case !old.Passed && res.Passed:
				counts.FailToPass++
			}
			if old.Passed != res.Passed || old.Grade != res.Grade {
				counts.Changed++
				changes = append(changes, changeRow(cw.RegradeID, o))
			}
		}
		if err := ins.Err(); err != nil {
			return counts, err
		}
		counts.Skipped = int64(nRows) - counts.Done
	}
	if len(changes) > 0 {
		// Only rows this transaction inserted are listed, so none can
		// be there already: a plain COPY.
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"regrade_changes"}, changeColumns, pgx.CopyFromRows(changes)); err != nil {
			return counts, err
		}
	}
	if len(failedIDs) > 0 {
		tag, err := tx.Exec(ctx, `INSERT INTO regrade_failures (regrade_id, original_id, reason)
			SELECT $1, o, r FROM unnest($2::uuid[], $3::text[]) AS u(o, r) ON CONFLICT DO NOTHING`,
			pgUUID(cw.RegradeID), pgUUIDs(failedIDs), reasons)
		if err != nil {
			return counts, err
		}
		counts.Failed = tag.RowsAffected()
		counts.Skipped += int64(len(failedIDs)) - counts.Failed
	}
	tag, err := tx.Exec(ctx, `INSERT INTO regrade_chunks (regrade_id, chunk, done, failed) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, cw.RegradeID, int32(cw.Chunk), counts.Done, counts.Failed)
	if err != nil {
		return counts, err
	}
	counts.Repeated = tag.RowsAffected() == 0
	chunk := 1
	if counts.Repeated {
		chunk = 0
	}
	var state, name string
	var project int64
	var version int32
	err = tx.QueryRow(ctx, `UPDATE regrades SET
			done = done + $2, failed = failed + $3, pass_to_fail = pass_to_fail + $4, fail_to_pass = fail_to_pass + $5,
			changed = changed + $6, score_delta_sum = score_delta_sum + $7, chunks_done = chunks_done + $8,
			state = CASE WHEN state = 'running' AND chunks_done + $8 >= chunks THEN 'completed' ELSE state END,
			total = CASE WHEN state = 'running' AND chunks_done + $8 >= chunks THEN done + $2 + failed + $3 ELSE total END,
			finished_at = CASE WHEN state = 'running' AND chunks_done + $8 >= chunks THEN now() ELSE finished_at END
		WHERE id = $1 RETURNING state, project_id, contract_name, contract_version`,
		cw.RegradeID, counts.Done, counts.Failed, counts.PassToFail, counts.FailToPass, counts.Changed, delta, int32(chunk)).Scan(&state, &project, &name, &version)
	if err != nil {
		return counts, err
	}
	if project != cw.ProjectID || (target != nil && (name != target.Name || int(version) != target.Version)) {
		return counts, fmt.Errorf("regrade %s is project %d's regrade to %s@%d: the chunk's results name another", cw.RegradeID, project, name, version)
	}
	counts.State = record.RegradeState(state)
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return counts, err
		}
	}
	return counts, tx.Commit(ctx)
}

// changeColumns are regrade_changes' columns in the order of changeRow.
var changeColumns = []string{"regrade_id", "original_id", "result_id", "old_version",
	"old_score", "new_score", "old_grade", "new_grade", "old_passed", "new_passed", "old_issue", "new_issue"}

// changeRow is the regrade_changes row of an outcome whose verdict or
// grade changed: both results' verdicts and first issues (NULL when
// none; the issue's JSON as the results' issues text holds it).
func changeRow(regradeID uuid.UUID, o *record.RegradeOutcome) []any {
	old, res := &o.Original, o.Result
	var version any
	if old.Contract.Version > 0 {
		version = int32(old.Contract.Version)
	}
	var newIssue json.RawMessage
	if first, err := record.FirstElement(res.Issues); err == nil {
		newIssue = first
	}
	return []any{pgUUID(regradeID), pgUUID(old.ID), pgUUID(res.ID), version,
		old.Score, res.Score, old.Grade, res.Grade, old.Passed, res.Passed, issueText(o.OriginalIssue), issueText(newIssue)}
}

// issueText returns an issue's JSON for a nullable text column: nil (NULL)
// for an empty or null value.
func issueText(b json.RawMessage) any {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return []byte(b)
}

// FinishRegrade moves a regrade that is not yet final to state (cancelled
// or failed), with reason as its error for failed, and runs hook in the
// same transaction. It returns the regrade as it is afterwards: a regrade
// already final is returned unchanged (and hook still runs).
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable; the hook's error.
func (db *DB) FinishRegrade(ctx context.Context, projectID int64, id uuid.UUID, state record.RegradeState, reason string, hook func(context.Context, pgx.Tx) error) (rg record.Regrade, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("finish regrade %s: %w", id, translate(err))
		}
	}()
	if state != record.RegradeCancelled && state != record.RegradeFailed {
		return rg, fmt.Errorf("cannot finish a regrade as %q", state)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return rg, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	rg, err = scanRegrade(tx.QueryRow(ctx, `UPDATE regrades SET state = $3, error = nullif($4, ''), finished_at = now()
		WHERE project_id = $1 AND id = $2 AND state IN ('pending', 'running') RETURNING `+regradeSelect,
		projectID, id, string(state), reason))
	if errors.Is(err, pgx.ErrNoRows) {
		rg, err = scanRegrade(tx.QueryRow(ctx, `SELECT `+regradeSelect+` FROM regrades WHERE project_id = $1 AND id = $2`, projectID, id))
	}
	if err != nil {
		return rg, err
	}
	if hook != nil {
		if err := hook(ctx, tx); err != nil {
			return rg, err
		}
	}
	return rg, tx.Commit(ctx)
}

// ListRegradeChanges returns up to limit changes of a regrade of a
// project, in original id order, after the original id after (uuid.Nil
// for the first page).
//
// Errors: engine.ErrNotFound when the regrade does not exist;
// engine.ErrUnavailable.
func (db *DB) ListRegradeChanges(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeChange, error) {
	if err := db.regradeExists(ctx, projectID, id); err != nil {
		return nil, fmt.Errorf("list regrade changes: %w", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT original_id, result_id, coalesce(old_version, 0), old_score, new_score,
			old_grade, new_grade, old_passed, new_passed, old_issue, new_issue
		FROM regrade_changes WHERE regrade_id = $1 AND original_id > $2 ORDER BY original_id LIMIT $3`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list regrade changes: %w", translate(err))
	}
	defer rows.Close()
	out := []record.RegradeChange{}
	for rows.Next() {
		var c record.RegradeChange
		var oi, ni []byte
		if err := rows.Scan(&c.OriginalID, &c.ResultID, &c.OldVersion, &c.OldScore, &c.NewScore,
			&c.OldGrade, &c.NewGrade, &c.OldPassed, &c.NewPassed, &oi, &ni); err != nil {
			return nil, fmt.Errorf("list regrade changes: %w", translate(err))
		}
		c.OldIssue, c.NewIssue = oi, ni
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list regrade changes: %w", translate(err))
	}
	return out, nil
}

// ListRegradeFailures returns up to limit failures of a regrade of a
// project, in original id order, after the original id after (uuid.Nil
// for the first page).
//
// Errors: engine.ErrNotFound when the regrade does not exist;
// engine.ErrUnavailable.
func (db *DB) ListRegradeFailures(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeFailure, error) {
	if err := db.regradeExists(ctx, projectID, id); err != nil {
		return nil, fmt.Errorf("list regrade failures: %w", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT original_id, reason FROM regrade_failures
		WHERE regrade_id = $1 AND original_id > $2 ORDER BY original_id LIMIT $3`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list regrade failures: %w", translate(err))
	}
	defer rows.Close()
	out := []record.RegradeFailure{}
	for rows.Next() {
		var f record.RegradeFailure
		if err := rows.Scan(&f.OriginalID, &f.Reason); err != nil {
			return nil, fmt.Errorf("list regrade failures: %w", translate(err))
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list regrade failures: %w", translate(err))
	}
	return out, nil
}

func (db *DB) regradeExists(ctx context.Context, projectID int64, id uuid.UUID) error {
	var one int
	err := db.pool.QueryRow(ctx, `SELECT 1 FROM regrades WHERE project_id = $1 AND id = $2`, projectID, id).Scan(&one)
	if err != nil {
		return fmt.Errorf("regrade %s: %w", id, translate(err))
	}
	return nil
}

// ListLatestResults lists original results (never regrade results) of a
// project, newest first (created_at DESC, id DESC, continuing strictly
// after the cursor when non-nil), each with its latest verdict: its newest
// regrade result, or itself when it has none. f's Passed and Grades apply
// to the latest verdict, its other fields to the original.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListLatestResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.LatestResult, error) {
	passed, grades := f.Passed, f.Grades
	f.Passed, f.Grades = nil, nil
	w := filterWhere(projectID, f)
	w.add("regrade_id IS NULL")
	if after != nil {
		w.add("(created_at, id) < (?, ?)", after.CreatedAt, after.ID)
	}
	// filterWhere writes bare column names; qualify them for the outer
	// query by selecting the originals in a subquery.
	latest := &where{args: w.args}
	if passed != nil {
		latest.add("l.passed = ?", *passed)
	}
	if len(grades) > 0 {
		latest.add("l.grade = ANY(?)", grades)
	}
	latest.args = append(latest.args, limit)
	cond := "true"
	if len(latest.conds) > 0 {
		cond = latest.sql()
	}
	lcols := make([]string, len(summaryColumns))
	for i, c := range summaryColumns {
		lcols[i] = "l." + c
	}
	// The latest verdict is the newest regrade result, else the original:
	// two lookups, one on each index, so that the plan does not depend on
	// table statistics (an OR of the two, filtered by project, made
	// Postgres scan every row of the project per original on a table not
	// yet analyzed). Regrade results are in their original's project; the
	// outer project test only guards that.
	limitArg := "$" + strconv.Itoa(len(latest.args))
	originals := `SELECT id, created_at, project_id FROM results WHERE ` + w.sql()
	if len(latest.conds) == 0 {
		// Nothing filters the latest verdicts, so the page is the first
		// limit originals: take them before looking their verdicts up.
		originals += ` ORDER BY created_at DESC, id DESC LIMIT ` + limitArg
	}
	q := `SELECT o.created_at, o.id, ` + strings.Join(lcols, ", ") + `
		FROM (` + originals + `) o
		CROSS JOIN LATERAL (
			SELECT ` + summarySelect + ` FROM (
				(SELECT 0 AS latest_rank, ` + summarySelect + ` FROM results r WHERE r.regrade_of = o.id
					ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
				UNION ALL
				(SELECT 1, ` + summarySelect + ` FROM results r WHERE r.id = o.id AND r.created_at = o.created_at)
			) c ORDER BY latest_rank LIMIT 1) l
		WHERE l.project_id = o.project_id AND ` + cond + `
		ORDER BY o.created_at DESC, o.id DESC LIMIT ` + limitArg
	rows, err := db.pool.Query(ctx, q, latest.args...)
	if err != nil {
		return nil, fmt.Errorf("list latest results: %w", translate(err))
	}
	defer rows.Close()
	out := []record.LatestResult{}
	for rows.Next() {
		var lr record.LatestResult
		var s summaryScan
		dest := append([]any{&lr.Original.CreatedAt, &lr.Original.ID}, s.dest(&lr.Result)...)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("list latest results: %w", translate(err))
		}
		if err := s.fill(&lr.Result); err != nil {
			return nil, err
		}
		lr.Original.CreatedAt = lr.Original.CreatedAt.UTC()
		out = append(out, lr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list latest results: %w", translate(err))
	}
	return out, nil
}

// CompareContractVersions compares versions a and b of a contract on the
// same originals: for each original result (graded at a or b, or
// regraded to them) the latest result at each version counts, and only
// originals with a result at both versions are compared. f's TaskID,
// RunID, Agent and Labels narrow the results (regrade results carry their
// original's); its other fields are ignored.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CompareContractVersions(ctx context.Context, projectID int64, name string, a, b int, f record.ResultFilter) (record.VersionComparison, error) {
	vc := record.VersionComparison{ContractName: name, VersionA: a, VersionB: b}
	w := filterWhere(projectID, record.ResultFilter{TaskID: f.TaskID, RunID: f.RunID, Agent: f.Agent, Labels: f.Labels})
	w.add("contract_name = ?", name)
	w.add("contract_version = ANY(?)", []int32{int32(a), int32(b)})
	n := len(w.args)
	q := `WITH per AS (
			SELECT DISTINCT ON (coalesce(regrade_of, id), contract_version)
				coalesce(regrade_of, id) AS original, contract_version AS v, passed, score, grade
			FROM results WHERE ` + w.sql() + `
			ORDER BY coalesce(regrade_of, id), contract_version, created_at DESC, id DESC)
		SELECT count(*), count(*) FILTER (WHERE a.passed), count(*) FILTER (WHERE b.passed),
			coalesce(avg(a.score), 0), coalesce(avg(b.score), 0),
			count(*) FILTER (WHERE a.passed AND NOT b.passed), count(*) FILTER (WHERE NOT a.passed AND b.passed),
			count(*) FILTER (WHERE a.grade = 'A'), count(*) FILTER (WHERE a.grade = 'B'), count(*) FILTER (WHERE a.grade = 'C'),
			count(*) FILTER (WHERE a.grade = 'D'), count(*) FILTER (WHERE a.grade = 'F'),
			count(*) FILTER (WHERE b.grade = 'A'), count(*) FILTER (WHERE b.grade = 'B'), count(*) FILTER (WHERE b.grade = 'C'),
			count(*) FILTER (WHERE b.grade = 'D'), count(*) FILTER (WHERE b.grade = 'F')
		FROM per a JOIN per b ON a.original = b.original AND a.v = $` + strconv.Itoa(n+1) + ` AND b.v = $` + strconv.Itoa(n+2)
	var ga, gb [5]int64
	err := db.pool.QueryRow(ctx, q, append(w.args, int32(a), int32(b))...).Scan(
		&vc.Originals, &vc.PassedA, &vc.PassedB, &vc.MeanScoreA, &vc.MeanScoreB, &vc.PassToFail, &vc.FailToPass,
		&ga[0], &ga[1], &ga[2], &ga[3], &ga[4], &gb[0], &gb[1], &gb[2], &gb[3], &gb[4])
	if err != nil {
		return vc, fmt.Errorf("compare contract versions: %w", translate(err))
	}
	vc.GradesA, vc.GradesB = map[string]int64{}, map[string]int64{}
	for i, g := range []string{"A", "B", "C", "D", "F"} {
		vc.GradesA[g], vc.GradesB[g] = ga[i], gb[i]
	}
	return vc, nil
}
