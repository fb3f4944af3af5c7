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
// and waits; one of its goroutines at a time takes the first waiting
// batch, adds every other batch already waiting (up to maxRows results),
// and writes them all in one transaction (write), while the next one
// gathers the next group. Under load, many concurrent
// requests share each commit (and its fsync), which is how one server
// stores thousands of results per second; when idle, a batch is written
// at once with no added delay.
//
// A group of fewer than parallelRows results is not written while
// another group is being written: it goes on gathering batches until that
// write ends (or it reaches parallelRows), so that at a moderate rate the
// results arriving during one commit share the next instead of each
// taking a commit of its own, with a writer of its own, at the same
// moment (a commit costs Postgres and the server far more than a row).
// Groups that large are written at once, up to the writers' number at a
// time.
//
// A smaller group found with no write in flight is written at once when
// the last write ended delay ago or more (an idle writer adds no delay),
// and when nothing says that requests come concurrently: neither did it
// wait for a write in flight nor did the last group hold more than one
// result (a client sending one request after another's answer is not
// slowed). Otherwise (the writer is under load) the group goes on
// gathering until delay after the last write ended. Under load a small
// group's commits are so spaced at least delay apart, each taking what
// arrived meanwhile: at 2,000 medium results a second, about 6 results a commit
// instead of 1.5 with a delay of 1 ms (BENCHMARKS.md), which halves
// Postgres' CPU per result and cuts the server's, for a millisecond or
// two more on each answer.
type writer struct {
	db           *DB
	reqs         chan *writeReq
	maxRows      int
	parallelRows int
	delay        time.Duration
	quit         chan struct{}
	wg           sync.WaitGroup

	mu     sync.RWMutex // guards closed against sends
	closed bool

	// gather is held by the one writer goroutine gathering the next
	// group (next).
	gather sync.Mutex
	// fmu guards writing, ended, lastEnd and lastRows: the groups being
	// written, a channel closed (and replaced) each time one of them
	// ends, when the last one ended and the results it held.
	fmu      sync.Mutex
	writing  int
	ended    chan struct{}
	lastEnd  time.Time
	lastRows int

	groupRows prometheus.Histogram
	groupTime prometheus.Histogram
}

type writeReq struct {
	ctx   context.Context
	batch record.ResultBatch
	done  chan error // buffered, receives exactly one value
}

// defaultParallelRows is the size from which a group is written while
// another one is (writer): about what a 2 ms commit gathers at 8,000
// results a second.
const defaultParallelRows = 16

// defaultWriteDelay is the writer's delay (writer) unless Config
// WriteDelay sets another.
const defaultWriteDelay = time.Millisecond

func newWriter(db *DB, n, maxRows, parallelRows int, delay time.Duration, reg prometheus.Registerer) *writer {
	if n <= 0 {
		n = 4
	}
	if maxRows <= 0 {
		maxRows = 1000
	}
	if parallelRows <= 0 {
		parallelRows = defaultParallelRows
	}
	parallelRows = min(parallelRows, maxRows)
	switch {
	case delay == 0:
		delay = defaultWriteDelay
	case delay < 0:
		delay = 0
	}
	w := &writer{
		db:           db,
		reqs:         make(chan *writeReq, 4096),
		maxRows:      maxRows,
		parallelRows: parallelRows,
		delay:        delay,
		quit:         make(chan struct{}),
		ended:        make(chan struct{}),
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
		w.gather.Lock()
		group := w.next()
		w.gather.Unlock()
		if group == nil {
			return
		}
		// The write's end is counted before its callers hear of it: a
		// client sending its next request on the answer finds no write
		// in flight.
		w.flush(group, func() {
			rows := 0
			for _, r := range group {
				rows += len(r.batch.Results)
			}
			w.fmu.Lock()
			w.writing--
			w.lastEnd, w.lastRows = time.Now(), rows
			close(w.ended)
			w.ended = make(chan struct{})
			w.fmu.Unlock()
		})
	}
}

// next returns the next group to write, counted in writing, or nil once
// the writer is closed (after writing, one by one, the batches handed over
// before close). The caller holds gather: one writer gathers at a time.
func (w *writer) next() []*writeReq {
	var first *writeReq
	select {
	case first = <-w.reqs:
	case <-w.quit:
		for {
			select {
			case r := <-w.reqs:
				w.flush([]*writeReq{r}, nil)
			default:
				return nil
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
	// While another group is being written, a small one waits for that
	// write to end, then, under load, until delay after the last write
	// ended, gathering what arrives meanwhile.
	var timer *time.Timer
	var due <-chan time.Time // while waiting out the delay
	var quit <-chan struct{} // likewise: close ends the delay
	delayed := w.delay <= 0
	waited := false // for a write in flight
	for {
		w.fmu.Lock()
		if w.writing > 0 {
			waited = true
		}
		if !delayed && w.writing == 0 && rows < w.parallelRows {
			delayed = true
			if d := w.delay - time.Since(w.lastEnd); d > 0 && (waited || w.lastRows > 1) {
				timer = time.NewTimer(d)
				due, quit = timer.C, w.quit
			}
		}
		if rows >= w.parallelRows || (w.writing == 0 && due == nil) {
			w.writing++
			w.fmu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return group
		}
		ended := w.ended
		w.fmu.Unlock()
		select {
		case r := <-w.reqs:
			group = append(group, r)
			rows += len(r.batch.Results)
		case <-ended:
		case <-due:
			due, quit = nil, nil
		case <-quit:
			due, quit = nil, nil
		}
	}
}

// flush writes a group in one transaction, calls ended (when not nil),
// then tells each batch's caller how its write went. When the transaction
// fails for a reason other than the database being unreachable (such as a
// value Postgres refuses), it writes each batch in its own transaction so
// that one bad batch cannot fail the others. A batch whose caller is gone
// is not written.
func (w *writer) flush(group []*writeReq, ended func()) {
	errs := make([]error, len(group))
	live := make([]*writeReq, 0, len(group))
	at := make([]int, 0, len(group)) // live's indexes in group
	for i, r := range group {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err // the caller is gone: never acknowledged, not written
			continue
		}
		live = append(live, r)
		at = append(at, i)
	}
	if len(live) > 0 {
		conflicts, err := w.write(live)
		if err != nil && !isUnavailable(err) && len(live) > 1 {
			for j, r := range live {
				c, err := w.write([]*writeReq{r})
				errs[at[j]] = outcome(c, 0, err)
			}
		} else {
			for j := range live {
				errs[at[j]] = outcome(conflicts, j, err)
			}
		}
	}
	if ended != nil {
		ended()
	}
	for i, r := range group {
		r.done <- errs[i]
	}
}

// outcome is what a batch's caller hears of its write, the i-th of a
// group whose write returned conflicts and err.
func outcome(conflicts []bool, i int, err error) error {
	switch {
	case err != nil:
		return err
	case conflicts[i]:
		return fmt.Errorf("%w: the idempotency key is already used", engine.ErrConflict)
	}
	return nil
}

// write inserts the group's idempotency records (skipping keys already
// used, which it reports in conflicts) and the results of the batches
// whose key was free, all in one transaction: one WAL flush per group.
// The results go in by one binary COPY (copyResults), which costs
// Postgres and the server less per row than an INSERT of arrays. A group without idempotency keys
// is that one COPY, a statement that is its own transaction; with keys,
// BEGIN and one INSERT per key go to Postgres as one pipelined batch, then
// the COPY of the results whose key was inserted, then COMMIT. The
// writer's own context is used, not the callers': once a group is being
// written it is written for all of them.
func (w *writer) write(group []*writeReq) (conflicts []bool, err error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conflicts = make([]bool, len(group))
	var keyed []int
	for i, r := range group {
		if r.batch.Idempotency != nil {
			keyed = append(keyed, i)
		}
	}
	var rows int64
	err = func() error {
		conn, err := w.db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		if len(keyed) == 0 {
			rows, err = copyResults(ctx, conn, group, conflicts)
			return err
		}
		err = func() error {
			var b pgx.Batch
			b.Queue("BEGIN")
			for _, i := range keyed {
				k := group[i].batch.Idempotency
				b.Queue(`INSERT INTO idempotency_keys (project_id, key_sha256, request_sha256, result_ids, item_errors)
					VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, key_sha256) DO NOTHING`,
					k.ProjectID, idempotencyHash(k.Key), k.RequestSHA256, k.ResultIDs, nullJSON(k.ItemErrors))
			}
			br := conn.SendBatch(ctx, &b)
			err := func() error {
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
				return nil
			}()
			if cerr := br.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if rows, err = copyResults(ctx, conn, group, conflicts); err != nil {
				return err
			}
			tag, err := conn.Exec(ctx, "COMMIT")
			if err != nil {
				return err
			}
			if tag.String() != "COMMIT" {
				return fmt.Errorf("transaction was not committed (%s)", tag)
			}
			return nil
		}()
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

// nullJSON turns an empty JSON text into SQL NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
