package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// writer is the group-commit write path: InsertResults hands it a batch
// and waits; each of its goroutines takes the first waiting batch, adds
// every other batch already waiting (up to maxRows results), and writes
// them all in one transaction sent as one pipelined round trip. Under load, many concurrent
// requests share each commit (and its fsync), which is how one server
// stores thousands of results per second; when idle, a batch is written
// at once with no added delay.
type writer struct {
	db      *DB
	reqs    chan *writeReq
	maxRows int
	quit    chan struct{}
	wg      sync.WaitGroup

	mu     sync.RWMutex // guards closed against sends
	closed bool

	groupRows prometheus.Histogram
	groupTime prometheus.Histogram
}

type writeReq struct {
	ctx   context.Context
	batch record.ResultBatch
	done  chan error // buffered, receives exactly one value
}

func newWriter(db *DB, n, maxRows int, reg prometheus.Registerer) *writer {
	if n <= 0 {
		n = 4
	}
	if maxRows <= 0 {
		maxRows = 1000
	}
	w := &writer{
		db:      db,
		reqs:    make(chan *writeReq, 4096),
		maxRows: maxRows,
		quit:    make(chan struct{}),
		groupRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_store_write_group_results",
			Help:    "Results written per group-commit transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		groupTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_store_write_duration_seconds",
			Help:    "Duration of one group-commit transaction, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
	}
	if reg != nil {
		reg.MustRegister(w.groupRows, w.groupTime)
	}
	w.wg.Add(n)
	for range n {
		go w.loop()
	}
	return w
}

// InsertResults writes batch.Results and batch.Idempotency atomically and
// returns once they are committed: all of them or none. Concurrent calls
// are grouped into shared transactions (see writer).
//
// Errors: engine.ErrConflict when batch.Idempotency's key is already used
// (nothing is written); engine.ErrUnavailable when the database cannot be
// reached or the store is closed; ctx.Err() when ctx ends first, in which
// case the batch may still be committed if it was already being written.
func (db *DB) InsertResults(ctx context.Context, batch record.ResultBatch) error {
	req := &writeReq{ctx: ctx, batch: batch, done: make(chan error, 1)}
	w := db.w
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return fmt.Errorf("%w: store is closed", engine.ErrUnavailable)
	}
	select {
	case w.reqs <- req:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops accepting batches, writes those already handed over and
// waits for the writer goroutines to end.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.quit)
	w.wg.Wait()
}

func (w *writer) loop() {
	defer w.wg.Done()
	for {
		var first *writeReq
		select {
		case first = <-w.reqs:
		case <-w.quit:
			// Drain what was handed over before close.
			for {
				select {
				case r := <-w.reqs:
					w.flush([]*writeReq{r})
				default:
					return
				}
			}
		}
		group := []*writeReq{first}
		rows := len(first.batch.Results)
	fill:
		for rows < w.maxRows {
			select {
			case r := <-w.reqs:
				group = append(group, r)
				rows += len(r.batch.Results)
			default:
				break fill
			}
		}
		w.flush(group)
	}
}

// flush writes a group in one transaction. When that fails for a reason
// other than the database being unreachable (such as a value Postgres
// refuses), it writes each batch in its own transaction so that one bad
// batch cannot fail the others.
func (w *writer) flush(group []*writeReq) {
	live := group[:0]
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.done <- err // the caller is gone: never acknowledged, not written
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	conflicts, err := w.write(live)
	if err != nil && !isUnavailable(err) && len(live) > 1 {
		for _, r := range live {
			w.flush1(r)
		}
		return
	}
	for i, r := range live {
		switch {
		case err != nil:
			r.done <- err
		case conflicts[i]:
			r.done <- fmt.Errorf("%w: the idempotency key is already used", engine.ErrConflict)
		default:
			r.done <- nil
		}
	}
}

func (w *writer) flush1(r *writeReq) {
	conflicts, err := w.write([]*writeReq{r})
	switch {
	case err != nil:
		r.done <- err
	case conflicts[0]:
		r.done <- fmt.Errorf("%w: the idempotency key is already used", engine.ErrConflict)
	default:
		r.done <- nil
	}
}

// write inserts the group's idempotency records (skipping keys already
// used, which it reports in conflicts) and the results of the batches
// whose key was free, all in one transaction. The statements (BEGIN, one
// INSERT per idempotency key, one INSERT ... SELECT FROM unnest(...) for
// every result, COMMIT) go to Postgres as one pipelined batch: one round
// trip and one WAL flush per group. A result whose batch lost its key to
// another request is filtered out in SQL: its key row must list its id.
// The writer's own context is used, not the callers': once a group is
// being written it is written for all of them.
func (w *writer) write(group []*writeReq) (conflicts []bool, err error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conflicts = make([]bool, len(group))
	var rows int
	err = func() error {
		var b pgx.Batch
		b.Queue("BEGIN")
		var keyed []int
		var cols resultArrays
		for i, r := range group {
			var key []byte
			if k := r.batch.Idempotency; k != nil {
				keyed = append(keyed, i)
				key = idempotencyHash(k.Key)
				b.Queue(`INSERT INTO idempotency_keys (project_id, key_sha256, request_sha256, result_ids, item_errors)
					VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, key_sha256) DO NOTHING`,
					k.ProjectID, key, k.RequestSHA256, k.ResultIDs, nullJSON(k.ItemErrors))
			}
			for j := range r.batch.Results {
				cols.add(&r.batch.Results[j], key)
			}
		}
		rows = len(cols.id)
		if rows > 0 {
			b.Queue(insertResultsSQL, cols.args()...)
		}
		b.Queue("COMMIT")
		conn, err := w.db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		br := conn.SendBatch(ctx, &b)
		err = func() error {
			if _, err := br.Exec(); err != nil { // BEGIN
				return err
			}
			for _, i := range keyed {
				tag, err := br.Exec()
				if err != nil {
					return err
				}
				conflicts[i] = tag.RowsAffected() == 0
			}
			if rows > 0 {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.String() != "COMMIT" {
				return fmt.Errorf("transaction was not committed (%s)", tag)
			}
			return nil
		}()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil && !conn.Conn().PgConn().IsClosed() && conn.Conn().PgConn().TxStatus() != 'I' {
			// Leave no transaction open on a pooled connection.
			_, _ = conn.Exec(ctx, "ROLLBACK")
		}
		return err
	}()
	w.groupTime.Observe(time.Since(start).Seconds())
	if err != nil {
		err = translate(err)
		if !errors.Is(err, engine.ErrUnavailable) {
			w.db.log.Error("write results", zap.Int("batches", len(group)), zap.Error(err))
		}
		return nil, fmt.Errorf("write results: %w", err)
	}
	w.groupRows.Observe(float64(rows))
	return conflicts, nil
}

// insertResultsSQL inserts results passed as one array per column
// (resultArrays). A row with an idempotency key is inserted only when the
// key's row, written earlier in the same transaction, lists the row's id.
const insertResultsSQL = `INSERT INTO results (id, project_id, created_at,
	contract_name, contract_version, contract_sha256, contract_kind,
	task_id, run_id, agent, labels, trace_format,
	score, grade, passed, min_score, safety_gate,
	options, expected_calls, trace_calls, scored_indexes,
	final_answer, metrics, checks, issues)
SELECT r.id, r.project_id, r.created_at,
	r.contract_name, r.contract_version, r.contract_sha256, r.contract_kind,
	r.task_id, r.run_id, r.agent, r.labels::jsonb, r.trace_format,
	r.score, r.grade, r.passed, r.min_score, r.safety_gate,
	r.options, r.expected_calls, r.trace_calls, r.scored_indexes,
	r.final_answer, r.metrics::json, r.checks, r.issues
FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[],
	$4::text[], $5::int[], $6::text[], $7::text[],
	$8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
	$13::float8[], $14::text[], $15::bool[], $16::float8[], $17::bool[],
	$18::text[], $19::text[], $20::text[], $21::text[],
	$22::text[], $23::text[], $24::text[], $25::text[], $26::bytea[])
	AS r(id, project_id, created_at,
	contract_name, contract_version, contract_sha256, contract_kind,
	task_id, run_id, agent, labels, trace_format,
	score, grade, passed, min_score, safety_gate,
	options, expected_calls, trace_calls, scored_indexes,
	final_answer, metrics, checks, issues, idem_key)
WHERE r.idem_key IS NULL OR EXISTS (SELECT 1 FROM idempotency_keys k
	WHERE k.project_id = r.project_id AND k.key_sha256 = r.idem_key AND r.id = ANY (k.result_ids))`

// resultArrays holds results column by column for insertResultsSQL.
type resultArrays struct {
	id                                  [][16]byte
	project                             []int64
	created                             []time.Time
	cname                               []*string
	cversion                            []*int32
	csha, ckind                         []string
	task, run, agent                    []*string
	labels                              [][]byte
	format                              []string
	score                               []float64
	grade                               []string
	passed                              []bool
	minScore                            []float64
	safety                              []bool
	options, expected, trace, scoredIdx [][]byte // text(): never nil
	answer                              []*string
	metrics, checks, issues             [][]byte
	idemKey                             [][]byte // idempotencyHash, nil for none
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (a *resultArrays) add(r *record.Result, key []byte) {
	labels := labelsJSON(r)
	var version *int32
	if r.Contract.Version > 0 {
		v := int32(r.Contract.Version)
		version = &v
	}
	a.id = append(a.id, pgUUID(r.ID))
	a.project = append(a.project, r.ProjectID)
	a.created = append(a.created, r.CreatedAt)
	a.cname = append(a.cname, optString(r.Contract.Name))
	a.cversion = append(a.cversion, version)
	a.csha = append(a.csha, r.Contract.SHA256)
	a.ckind = append(a.ckind, string(r.Contract.Kind))
	a.task = append(a.task, optString(r.TaskID))
	a.run = append(a.run, optString(r.RunID))
	a.agent = append(a.agent, optString(r.Agent))
	a.labels = append(a.labels, labels)
	a.format = append(a.format, r.Format)
	a.score = append(a.score, r.Score)
	a.grade = append(a.grade, r.Grade)
	a.passed = append(a.passed, r.Passed)
	a.minScore = append(a.minScore, r.MinScore)
	a.safety = append(a.safety, r.SafetyGate)
	a.options = append(a.options, text(r.Options))
	a.expected = append(a.expected, text(r.ExpectedCalls))
	a.trace = append(a.trace, text(r.TraceCalls))
	a.scoredIdx = append(a.scoredIdx, text(r.ScoredIndexes))
	a.answer = append(a.answer, r.FinalAnswer)
	a.metrics = append(a.metrics, text(r.Metrics))
	a.checks = append(a.checks, text(r.Checks))
	a.issues = append(a.issues, text(r.Issues))
	a.idemKey = append(a.idemKey, key)
}

func (a *resultArrays) args() []any {
	return []any{a.id, a.project, a.created, a.cname, a.cversion, a.csha, a.ckind,
		a.task, a.run, a.agent, a.labels, a.format, a.score, a.grade, a.passed, a.minScore, a.safety,
		a.options, a.expected, a.trace, a.scoredIdx, a.answer, a.metrics, a.checks, a.issues, a.idemKey}
}

// nullJSON turns an empty JSON text into SQL NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
