package regrade

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

// TestRegradeResultsReadBackLinked runs a regrade through the service's
// jobs and reads its results back through the store: each carries the
// original it re-evaluates and the regrade, and the regrades filter
// separates them from the originals.
func TestRegradeResultsReadBackLinked(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{ChunkSize: 3})
	ctx := context.Background()
	both := b.seed(t, traceBoth, 4, t0)
	search := b.seed(t, traceSearch, 3, t0.Add(time.Hour))
	b.start(t)
	rg, err := b.svc.Create(ctx, record.DefaultProject, "flights", 2, record.RegradeSelection{})
	if err != nil {
		t.Fatal(err)
	}
	if final := b.wait(t, rg.ID); final.State != record.RegradeCompleted || final.Done != 7 || final.Failed != 0 {
		t.Fatalf("regrade = %+v, want completed with 7 done", counters(final))
	}

	originals, err := b.db.ListResults(ctx, record.DefaultProject, record.ResultFilter{Regrades: record.RegradesExclude}, nil, 100)
	if err != nil || len(originals) != 7 {
		t.Fatalf("originals = %d, %v; want 7", len(originals), err)
	}
	isOriginal := map[uuid.UUID]record.ResultSummary{}
	for _, o := range originals {
		if o.IsRegrade() || o.RegradeOf != uuid.Nil || o.Contract.Version != 1 {
			t.Errorf("original %s: link %s/%s at v%d", o.ID, o.RegradeOf, o.RegradeID, o.Contract.Version)
		}
		isOriginal[o.ID] = o
	}
	regraded, err := b.db.ListResults(ctx, record.DefaultProject, record.ResultFilter{Regrades: record.RegradesOnly}, nil, 100)
	if err != nil || len(regraded) != 7 {
		t.Fatalf("regrade results = %d, %v; want 7", len(regraded), err)
	}
	seen := map[uuid.UUID]bool{}
	for _, s := range regraded {
		full, err := b.db.GetResult(ctx, record.DefaultProject, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := isOriginal[full.RegradeOf]
		switch {
		case full.RegradeID != rg.ID || s.RegradeID != rg.ID:
			t.Errorf("result %s: regrade_id %s (listed %s), want %s", s.ID, full.RegradeID, s.RegradeID, rg.ID)
		case !ok || seen[full.RegradeOf] || s.RegradeOf != full.RegradeOf:
			t.Errorf("result %s: regrade_of %s (listed %s) is not a distinct original", s.ID, full.RegradeOf, s.RegradeOf)
		case full.Contract != b.v2 || full.Agent != o.Agent:
			t.Errorf("result %s: contract %+v, agent %q; want %+v, %q", s.ID, full.Contract, full.Agent, b.v2, o.Agent)
		}
		seen[full.RegradeOf] = true
		// traceBoth now passes, traceSearch fails.
		if want := o.Score != search.Score; full.Passed != want {
			t.Errorf("result %s of %s (score %v; both %v): passed %v, want %v", s.ID, o.ID, o.Score, both.Score, full.Passed, want)
		}
	}
	stats, err := b.db.Stats(ctx, record.DefaultProject, record.ResultFilter{Regrades: record.RegradesExclude}, record.GroupByAgent)
	if err != nil || len(stats) != 1 || stats[0].Count != 7 || stats[0].Passed != 3 {
		t.Errorf("stats of originals = %+v, %v; want agent-a 7, 3 passed", stats, err)
	}
}
