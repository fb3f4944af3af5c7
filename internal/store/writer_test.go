package store

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// TestWriterGathersWhileWriting holds the first group's COPY behind a
// table lock and hands the writer five more batches meanwhile. With the
// default ParallelRows (16) they wait for that write and go in one group
// of their own: two commits for six results, of one and five. With
// ParallelRows 1 a second group's COPY starts while the first one waits.
func TestWriterGathersWhileWriting(t *testing.T) {
	for _, parallel := range []int{0, 1} {
		url := storetest.NewDatabase(t)
		reg := prometheus.NewRegistry()
		db, err := Open(context.Background(), Config{URL: url, ParallelRows: parallel, Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		lock, err := db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lock.Exec(ctx, `LOCK TABLE results IN EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		waiting := func() int {
			var n int
			if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'COPY results%'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{newResult(t, 0, nil)}}); err != nil {
				t.Errorf("first InsertResults: %v", err)
			}
		})
		waitFor(t, func() bool { return waiting() == 1 })
		// Handed over directly, so that all five are queued before the
		// lock goes.
		reqs := make([]*writeReq, 5)
		for i := range reqs {
			reqs[i] = &writeReq{ctx: ctx, batch: record.ResultBatch{Results: []record.Result{newResult(t, i+1, nil)}}, done: make(chan error, 1)}
			db.w.reqs <- reqs[i]
		}
		if parallel == 0 {
			waitFor(t, func() bool { return len(db.w.reqs) == 0 })
			if n := waiting(); n != 1 {
				t.Errorf("default: %d COPYs waiting with the group of five gathered, want 1", n)
			}
		} else {
			waitFor(t, func() bool { return waiting() >= 2 })
		}
		if err := lock.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for i, r := range reqs {
			if err := <-r.done; err != nil {
				t.Errorf("batch %d: %v", i+1, err)
			}
		}
		var stored int
		if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&stored); err != nil || stored != 6 {
			t.Errorf("parallel %d: %d results stored (%v), want 6", parallel, stored, err)
		}
		h := groupHistogram(t, reg)
		if parallel == 0 {
			var got []uint64
			for _, b := range h.GetBucket()[:4] { // at most 1, 2, 4, 8 results
				got = append(got, b.GetCumulativeCount())
			}
			if h.GetSampleCount() != 2 || h.GetSampleSum() != 6 || !slices.Equal(got, []uint64{1, 1, 1, 2}) {
				t.Errorf("default: %d groups of %v results, cumulative by size %v; want 2 of 6, [1 1 1 2]", h.GetSampleCount(), h.GetSampleSum(), got)
			}
		} else if h.GetSampleCount() < 2 || h.GetSampleSum() != 6 {
			t.Errorf("parallel 1: %d groups of %v results, want 2 or more of 6", h.GetSampleCount(), h.GetSampleSum())
		}
		db.Close()
	}
}

// TestWriterDelaysSmallGroups gives a writer whose WriteDelay is an hour
// one result, then another once the first is committed, as a client
// sending one request after another's answer does: each is written at
// once (the test fails if either waits 10 s). Then a batch of two results,
// written at once too (nothing said the requests were concurrent), and
// four batches one after another, each once the one before is waiting:
// the last write ended less than the delay ago and held two results, so
// the first three wait, gathering, until the fourth makes the group
// ParallelRows (4) results large. Four commits: of 1, 1, 2 and 4 results.
func TestWriterDelaysSmallGroups(t *testing.T) {
	url := storetest.NewDatabase(t)
	reg := prometheus.NewRegistry()
	db, err := Open(context.Background(), Config{URL: url, ParallelRows: 4, WriteDelay: time.Hour, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, results := range [][]record.Result{
		{newResult(t, 0, nil)}, {newResult(t, 1, nil)}, {newResult(t, 2, nil), newResult(t, 3, nil)},
	} {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := db.InsertResults(sctx, record.ResultBatch{Results: results})
		cancel()
		if err != nil {
			t.Fatalf("%d results: %v", len(results), err)
		}
	}
	reqs := make([]*writeReq, 4)
	for i := range reqs {
		reqs[i] = &writeReq{ctx: ctx, batch: record.ResultBatch{Results: []record.Result{newResult(t, i+4, nil)}}, done: make(chan error, 1)}
		db.w.reqs <- reqs[i]
		waitFor(t, func() bool { return len(db.w.reqs) == 0 })
	}
	for i, r := range reqs {
		if err := <-r.done; err != nil {
			t.Errorf("batch %d: %v", i+1, err)
		}
	}
	if h := groupHistogram(t, reg); h.GetSampleCount() != 4 || h.GetSampleSum() != 8 {
		t.Errorf("%d groups of %v results, want 4 of 8", h.GetSampleCount(), h.GetSampleSum())
	}
}

// groupHistogram returns the writer's histogram of results per group.
func groupHistogram(tb testing.TB, reg *prometheus.Registry) *dto.Histogram {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "toolscore_store_write_group_results" {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	tb.Fatal("no toolscore_store_write_group_results")
	return nil
}

// waitFor polls cond every millisecond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
	}
}
