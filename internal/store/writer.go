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
// them all in one transaction with one COPY. Under load, many concurrent
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
			r.done <- fmt.Errorf("%w: idempotency key %q is already used", engine.ErrConflict, r.batch.Idempotency.Key)
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
		r.done <- fmt.Errorf("%w: idempotency key %q is already used", engine.ErrConflict, r.batch.Idempotency.Key)
	default:
		r.done <- nil
	}
}

// write inserts the group's idempotency records (skipping keys already
// used, which it reports in conflicts) and then COPYs the results of the
// batches whose key was free, all in one transaction. The writer's own
// context is used, not the callers': once a group is being written it is
// written for all of them.
func (w *writer) write(group []*writeReq) (conflicts []bool, err error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conflicts = make([]bool, len(group))
	err = func() error {
		tx, err := w.db.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit

		var b pgx.Batch
		var keyed []int
		for i, r := range group {
			if k := r.batch.Idempotency; k != nil {
				keyed = append(keyed, i)
				b.Queue(`INSERT INTO idempotency_keys (project_id, key, request_sha256, result_ids, item_errors)
					VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, key) DO NOTHING`,
					k.ProjectID, k.Key, k.RequestSHA256, k.ResultIDs, nullJSON(k.ItemErrors))
			}
		}
		if len(keyed) > 0 {
			br := tx.SendBatch(ctx, &b)
			for _, i := range keyed {
				tag, err := br.Exec()
				if err != nil {
					br.Close()
					return err
				}
				conflicts[i] = tag.RowsAffected() == 0
			}
			if err := br.Close(); err != nil {
				return err
			}
		}

		var rows [][]any
		for i, r := range group {
			if conflicts[i] {
				continue
			}
			for j := range r.batch.Results {
				rows = append(rows, resultRow(&r.batch.Results[j]))
			}
		}
		if len(rows) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"results"}, resultColumns, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
		}
		w.groupRows.Observe(float64(len(rows)))
		return tx.Commit(ctx)
	}()
	w.groupTime.Observe(time.Since(start).Seconds())
	if err != nil {
		err = translate(err)
		if !errors.Is(err, engine.ErrUnavailable) {
			w.db.log.Error("write results", zap.Int("batches", len(group)), zap.Error(err))
		}
		return nil, fmt.Errorf("write results: %w", err)
	}
	return conflicts, nil
}

// nullJSON turns an empty JSON text into SQL NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
