package store

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
)

const (
	flightsV1 = `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^a"}}}]}`
	flightsV2 = `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^a"}}}, {"tool": "book"}], "min_score": 0.95}`
)

var (
	// traceBoth fails v1 (an unexpected call: score 0.65, grade D) and
	// passes v2 (1, A); traceSearch passes v1 (1, A) and fails v2 (0.9, A:
	// the verdict changes, not the grade).
	traceBoth   = engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc"})}, {Tool: "book", Args: jsondoc.MustFromAny(map[string]any{})}}}
	traceSearch = engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc"})}}}
)

// regradeFixture is a migrated store with contract flights v1 and v2 and
// originals at v1: nBoth copies of traceBoth then nSearch of traceSearch,
// one minute apart from t0.
type regradeFixture struct {
	db       *DB
	v1, v2   record.ContractRef
	c1, c2   *engine.Contract
	both     record.Result
	search   record.Result
	snapshot time.Time
}

func newRegradeFixture(t *testing.T, nBoth, nSearch int) *regradeFixture {
	t.Helper()
	db, _ := mustMigrated(t)
	f := &regradeFixture{db: db}
	f.v1, f.c1 = regradetest.MustContract(t, db, "flights", flightsV1)
	f.v2, f.c2 = regradetest.MustContract(t, db, "flights", flightsV2)
	opts := regradetest.Options{SafetyGate: true}
	f.both = regradetest.Result(t, f.v1, f.c1, traceBoth, opts, t0)
	regradetest.Seed(t, db, f.both, nBoth, time.Minute)
	f.search = regradetest.Result(t, f.v1, f.c1, traceSearch, opts, t0.Add(time.Duration(nBoth)*time.Minute))
	regradetest.Seed(t, db, f.search, nSearch, time.Minute)
	f.snapshot = t0.Add(24 * time.Hour)
	return f
}

// create stores a pending regrade of flights v1 to v2.
func (f *regradeFixture) create(t *testing.T, chunkSize int, sel record.RegradeSelection) record.Regrade {
	t.Helper()
	rg := record.Regrade{
		ID: uuid.Must(uuid.NewV7()), ProjectID: record.DefaultProject, Target: f.v2,
		Selection: sel, SnapshotAt: f.snapshot, ChunkSize: chunkSize, CreatedAt: t0.Add(25 * time.Hour),
	}
	if err := f.db.CreateRegrade(context.Background(), rg, nil); err != nil {
		t.Fatalf("CreateRegrade: %v", err)
	}
	return rg
}

// plan plans rg and returns its chunks.
func (f *regradeFixture) plan(t *testing.T, id uuid.UUID) []record.RegradeChunk {
	t.Helper()
	var got []record.RegradeChunk
	err := f.db.PlanRegrade(context.Background(), id, func(_ context.Context, _ pgx.Tx, _ record.Regrade, chunks []record.RegradeChunk) error {
		got = chunks
		return nil
	})
	if err != nil {
		t.Fatalf("PlanRegrade: %v", err)
	}
	return got
}

// grade grades a chunk's originals against v2 as internal/regrade does
// (without its credential carry-over, which these traces do not need).
func (f *regradeFixture) grade(t *testing.T, originals []record.RegradeOriginal) []record.RegradeOutcome {
	t.Helper()
	out := make([]record.RegradeOutcome, len(originals))
	for i, o := range originals {
		out[i] = record.RegradeOutcome{Original: o.ResultSummary, OriginalIssue: o.FirstIssue}
		var calls []engine.ToolCall
		if err := json.Unmarshal(o.TraceCalls, &calls); err != nil {
			out[i].Failure = "trace_calls: " + err.Error()
			continue
		}
		r := regradetest.Result(t, f.v2, f.c2, engine.Trace{Calls: calls, FinalAnswer: o.FinalAnswer}, regradetest.Options{SafetyGate: true}, t0.Add(48*time.Hour))
		r.TaskID, r.Agent, r.Labels = o.TaskID, o.Agent, o.Labels
		out[i].Result = &r
	}
	return out
}

func TestRegradeMigrationsDownAndUp(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM river_migration`).Scan(&n); err != nil || n != 8 {
		t.Fatalf("river_migration rows = %d, %v, want 8", n, err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	tables := func() []string {
		rows, err := db.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	all := tables()
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	if diff := cmp.Diff([]string{"contracts", "idempotency_keys", "projects", "results"}, tables()); diff != "" {
		t.Errorf("tables after down to 1 (-want +got):\n%s", diff)
	}
	var cols int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'results' AND column_name LIKE 'regrade%'`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("regrade columns after down = %d, %v", cols, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if diff := cmp.Diff(all, tables()); diff != "" {
		t.Errorf("tables after up again (-want +got):\n%s", diff)
	}
}

func TestRegradePlanReadWrite(t *testing.T) {
	f := newRegradeFixture(t, 6, 4)
	ctx := context.Background()
	db := f.db
	// A result of another contract and one created after the snapshot are
	// not selected.
	other, oc := regradetest.MustContract(t, db, "hotels", `[{"tool": "search"}]`)
	regradetest.Seed(t, db, regradetest.Result(t, other, oc, traceBoth, regradetest.Options{SafetyGate: true}, t0), 1, time.Minute)
	regradetest.Seed(t, db, regradetest.Result(t, f.v1, f.c1, traceBoth, regradetest.Options{SafetyGate: true}, f.snapshot.Add(time.Minute)), 1, time.Minute)

	sel := record.RegradeSelection{ContractName: "flights"}
	if n, err := db.CountRegradeSelection(ctx, 1, sel, 2, f.snapshot); err != nil || n != 10 {
		t.Fatalf("CountRegradeSelection = %d, %v, want 10", n, err)
	}
	rg := f.create(t, 4, sel)
	chunks := f.plan(t, rg.ID)
	if len(chunks) != 3 || chunks[0].After != nil || *chunks[1].After != chunks[0].Upto || *chunks[2].After != chunks[1].Upto {
		t.Fatalf("chunks = %+v, want 3 chained", chunks)
	}
	got, err := db.GetRegrade(ctx, 1, rg.ID)
	if err != nil || got.State != record.RegradeRunning || got.Total != 10 || got.Chunks != 3 || got.StartedAt == nil {
		t.Fatalf("after plan: %+v, %v", got, err)
	}
	// Planning again is a no-op that still runs the hook, with no chunks.
	if again := f.plan(t, rg.ID); again != nil {
		t.Errorf("second plan chunks = %v, want nil", again)
	}

	var sizes []int
	var seen []uuid.UUID
	for i, c := range chunks {
		originals, err := db.ReadRegradeChunk(ctx, got, c)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(originals))
		for _, o := range originals {
			seen = append(seen, o.ID)
		}
		outcomes := f.grade(t, originals)
		if i == 1 {
			// A stored row that no longer parses.
			outcomes[0].Result, outcomes[0].Failure = nil, "trace_calls: broken"
		}
		counts, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: c.Index, Outcomes: outcomes}, nil)
		if err != nil {
			t.Fatalf("WriteRegradeChunk(%d): %v", i, err)
		}
		if counts.Repeated || counts.Skipped != 0 || counts.Done+counts.Failed != int64(len(originals)) {
			t.Errorf("chunk %d counts = %+v", i, counts)
		}
		// Running the chunk again writes and counts nothing.
		again, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: c.Index, Outcomes: outcomes}, nil)
		if err != nil {
			t.Fatalf("WriteRegradeChunk(%d) again: %v", i, err)
		}
		if want := (record.ChunkCounts{Repeated: true, Skipped: int64(len(originals)), State: again.State}); again != want {
			t.Errorf("chunk %d again = %+v, want %+v", i, again, want)
		}
	}
	if diff := cmp.Diff([]int{4, 4, 2}, sizes); diff != "" {
		t.Errorf("chunk sizes (-want +got):\n%s", diff)
	}
	if len(seen) != 10 {
		t.Errorf("originals read = %d, want 10", len(seen))
	}

	final, err := db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	// 6 traceBoth originals (the first of chunk 1 failed) flip to pass, 4
	// traceSearch ones to fail.
	want := record.Regrade{State: record.RegradeCompleted, Total: 10, Chunks: 3, ChunksDone: 3, Done: 9, Failed: 1,
		PassToFail: 4, FailToPass: 5, Changed: 9}
	gotCounts := record.Regrade{State: final.State, Total: final.Total, Chunks: final.Chunks, ChunksDone: final.ChunksDone,
		Done: final.Done, Failed: final.Failed, PassToFail: final.PassToFail, FailToPass: final.FailToPass, Changed: final.Changed}
	if diff := cmp.Diff(want, gotCounts); diff != "" {
		t.Errorf("final counters (-want +got):\n%s", diff)
	}
	if final.FinishedAt == nil {
		t.Error("FinishedAt unset on completion")
	}
	var results int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID).Scan(&results); err != nil || results != 9 {
		t.Errorf("regrade results = %d, %v, want 9", results, err)
	}
}

// runAll plans rg and writes every chunk, graded against v2.
func (f *regradeFixture) runAll(t *testing.T, rg record.Regrade) {
	t.Helper()
	ctx := context.Background()
	chunks := f.plan(t, rg.ID)
	planned, err := f.db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		originals, err := f.db.ReadRegradeChunk(ctx, planned, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: c.Index, Outcomes: f.grade(t, originals)}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRegradeChangesAndFailures(t *testing.T) {
	f := newRegradeFixture(t, 2, 3)
	ctx := context.Background()
	db := f.db
	rg := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	planned, _ := db.GetRegrade(ctx, 1, rg.ID)
	originals, err := db.ReadRegradeChunk(ctx, planned, chunks[0])
	if err != nil || len(originals) != 5 {
		t.Fatalf("ReadRegradeChunk = %d, %v", len(originals), err)
	}
	outcomes := f.grade(t, originals)
	outcomes[0].Result, outcomes[0].Failure = nil, "trace_calls: json: cannot unmarshal object"
	if _, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: outcomes}, nil); err != nil {
		t.Fatal(err)
	}

	// 1 traceBoth original flipped to pass (the other failed), 3 traceSearch
	// ones to fail; pages of 2.
	changes, err := db.ListRegradeChanges(ctx, 1, rg.ID, uuid.Nil, 2)
	if err != nil || len(changes) != 2 {
		t.Fatalf("ListRegradeChanges(first page) = %d, %v, want 2", len(changes), err)
	}
	rest, err := db.ListRegradeChanges(ctx, 1, rg.ID, changes[1].OriginalID, 10)
	if err != nil || len(rest) != 2 || rest[0].OriginalID.String() <= changes[1].OriginalID.String() {
		t.Fatalf("ListRegradeChanges(second page) = %d, %v, want 2 after the cursor", len(rest), err)
	}
	newByOriginal := map[uuid.UUID]*record.Result{}
	for _, o := range outcomes {
		newByOriginal[o.Original.ID] = o.Result
	}
	flips := map[bool]int{}
	for _, c := range append(changes, rest...) {
		newRes := newByOriginal[c.OriginalID]
		old := f.both
		if c.OldPassed {
			old = f.search
		}
		flips[c.OldPassed]++
		want := record.RegradeChange{OriginalID: c.OriginalID, ResultID: newRes.ID, OldVersion: 1,
			OldScore: old.Score, NewScore: newRes.Score, OldGrade: old.Grade, NewGrade: newRes.Grade,
			OldPassed: old.Passed, NewPassed: newRes.Passed, OldIssue: c.OldIssue, NewIssue: c.NewIssue}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("change (-want +got):\n%s", diff)
		}
		if !c.OldPassed {
			continue
		}
		var issue engine.Issue
		if err := json.Unmarshal(c.NewIssue, &issue); err != nil || issue.Kind != engine.IssueMissingCall || issue.Tool != "book" {
			t.Errorf("new issue = %s, %v; want the missing book call", c.NewIssue, err)
		}
		if c.OldIssue != nil {
			t.Errorf("old issue = %s, want none", c.OldIssue)
		}
	}
	if flips[true] != 3 || flips[false] != 1 {
		t.Errorf("changes from pass, from fail = %d, %d, want 3, 1", flips[true], flips[false])
	}

	fails, err := db.ListRegradeFailures(ctx, 1, rg.ID, uuid.Nil, 10)
	if diff := cmp.Diff([]record.RegradeFailure{{OriginalID: originals[0].ID, Reason: "trace_calls: json: cannot unmarshal object"}}, fails); err != nil || diff != "" {
		t.Errorf("ListRegradeFailures (-want +got):\n%s %v", diff, err)
	}
	for _, list := range []func() error{
		func() error {
			_, err := db.ListRegradeChanges(ctx, 1, uuid.Must(uuid.NewV7()), uuid.Nil, 1)
			return err
		},
		func() error { _, err := db.ListRegradeFailures(ctx, 2, rg.ID, uuid.Nil, 1); return err },
		func() error { _, err := db.GetRegrade(ctx, 1, uuid.Must(uuid.NewV7())); return err },
	} {
		if err := list(); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("unknown regrade or project: %v, want ErrNotFound", err)
		}
	}
	// The score delta sums new - old over what was done.
	got, _ := db.GetRegrade(ctx, 1, rg.ID)
	var wantDelta float64
	for _, o := range outcomes[1:] {
		wantDelta += o.Result.Score - o.Original.Score
	}
	if diff := got.ScoreDeltaSum - wantDelta; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("ScoreDeltaSum = %v, want %v", got.ScoreDeltaSum, wantDelta)
	}
}

func TestRegradeEmptyAndErrors(t *testing.T) {
	f := newRegradeFixture(t, 1, 0)
	ctx := context.Background()
	// A selection matching nothing completes at once with total 0.
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights", Agent: "nobody"})
	if chunks := f.plan(t, rg.ID); len(chunks) != 0 || chunks == nil {
		t.Fatalf("chunks = %#v, want empty", chunks)
	}
	got, err := f.db.GetRegrade(ctx, 1, rg.ID)
	if err != nil || got.State != record.RegradeCompleted || got.Total != 0 || got.FinishedAt == nil {
		t.Fatalf("empty regrade = %+v, %v; want completed with total 0", got, err)
	}
	// An unknown target version.
	bad := record.Regrade{ID: uuid.Must(uuid.NewV7()), ProjectID: 1, Target: record.ContractRef{Name: "flights", Version: 9},
		Selection: record.RegradeSelection{ContractName: "flights"}, SnapshotAt: t0, ChunkSize: 1, CreatedAt: t0}
	if err := f.db.CreateRegrade(ctx, bad, nil); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("CreateRegrade(flights@9) = %v, want ErrNotFound", err)
	}
	// A failing hook rolls the regrade back.
	hookErr := errors.New("queue down")
	bad.Target.Version = 2
	if err := f.db.CreateRegrade(ctx, bad, func(context.Context, pgx.Tx) error { return hookErr }); !errors.Is(err, hookErr) {
		t.Errorf("CreateRegrade(failing hook) = %v", err)
	}
	if _, err := f.db.GetRegrade(ctx, 1, bad.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("regrade after a failed hook: %v, want ErrNotFound", err)
	}
}

func TestFinishRegrade(t *testing.T) {
	f := newRegradeFixture(t, 3, 0)
	ctx := context.Background()
	rg := f.create(t, 1, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	hooked := 0
	hook := func(context.Context, pgx.Tx) error { hooked++; return nil }
	got, err := f.db.FinishRegrade(ctx, 1, rg.ID, record.RegradeCancelled, "", hook)
	if err != nil || got.State != record.RegradeCancelled || got.FinishedAt == nil || hooked != 1 {
		t.Fatalf("FinishRegrade(cancel) = %+v, %v, hooked %d", got, err, hooked)
	}
	// Final states stay.
	again, err := f.db.FinishRegrade(ctx, 1, rg.ID, record.RegradeFailed, "boom", hook)
	if err != nil || again.State != record.RegradeCancelled || again.Error != "" || hooked != 2 {
		t.Errorf("FinishRegrade(fail) after cancel = %+v, %v", again, err)
	}
	// A chunk written after the cancel keeps its results but does not
	// complete the regrade.
	planned, _ := f.db.GetRegrade(ctx, 1, rg.ID)
	originals, _ := f.db.ReadRegradeChunk(ctx, planned, chunks[0])
	counts, err := f.db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: f.grade(t, originals)}, nil)
	if err != nil || counts.State != record.RegradeCancelled {
		t.Errorf("chunk after cancel = %+v, %v", counts, err)
	}
	if _, err := f.db.FinishRegrade(ctx, 1, uuid.Must(uuid.NewV7()), record.RegradeCancelled, "", nil); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("FinishRegrade(unknown) = %v, want ErrNotFound", err)
	}
	if n, err := f.db.CountActiveRegrades(ctx); err != nil || n != 0 {
		t.Errorf("CountActiveRegrades = %d, %v, want 0", n, err)
	}
}

func TestLatestResultsAndCompare(t *testing.T) {
	f := newRegradeFixture(t, 2, 2)
	ctx := context.Background()
	db := f.db
	rg := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
	f.runAll(t, rg)

	latest, err := db.ListLatestResults(ctx, 1, record.ResultFilter{ContractName: "flights"}, nil, 10)
	if err != nil || len(latest) != 4 {
		t.Fatalf("ListLatestResults = %d, %v, want 4 originals", len(latest), err)
	}
	for _, lr := range latest {
		if lr.Result.Contract.Version != 2 || lr.Result.ID == lr.Original.ID {
			t.Errorf("latest of %s = %s at v%d, want its regrade result at v2", lr.Original.ID, lr.Result.ID, lr.Result.Contract.Version)
		}
	}
	// Newest original first; the page continues after the cursor.
	page, err := db.ListLatestResults(ctx, 1, record.ResultFilter{ContractName: "flights"}, &latest[1].Original, 10)
	if err != nil || len(page) != 2 || page[0].Original != latest[2].Original {
		t.Errorf("second page = %+v, %v", page, err)
	}
	// Passed applies to the latest verdict: the two traceSearch originals
	// now fail.
	no := false
	failing, err := db.ListLatestResults(ctx, 1, record.ResultFilter{ContractName: "flights", Passed: &no}, nil, 10)
	if err != nil || len(failing) != 2 || failing[0].Result.Passed {
		t.Errorf("latest failing = %+v, %v; want the 2 search originals", failing, err)
	}

	vc, err := db.CompareContractVersions(ctx, 1, "flights", 1, 2, record.ResultFilter{})
	if err != nil {
		t.Fatal(err)
	}
	search2 := regradetest.Result(t, f.v2, f.c2, traceSearch, regradetest.Options{SafetyGate: true}, t0)
	both2 := regradetest.Result(t, f.v2, f.c2, traceBoth, regradetest.Options{SafetyGate: true}, t0)
	grades := func(gs ...string) map[string]int64 {
		m := map[string]int64{"A": 0, "B": 0, "C": 0, "D": 0, "F": 0}
		for _, g := range gs {
			m[g]++
		}
		return m
	}
	want := record.VersionComparison{ContractName: "flights", VersionA: 1, VersionB: 2, Originals: 4,
		PassedA: 2, PassedB: 2, MeanScoreA: (2*f.both.Score + 2*f.search.Score) / 4, MeanScoreB: (2*both2.Score + 2*search2.Score) / 4,
		PassToFail: 2, FailToPass: 2, GradesA: grades(f.both.Grade, f.both.Grade, f.search.Grade, f.search.Grade),
		GradesB: grades(both2.Grade, both2.Grade, search2.Grade, search2.Grade)}
	if diff := cmp.Diff(want, vc, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("CompareContractVersions (-want +got):\n%s", diff)
	}
	none, err := db.CompareContractVersions(ctx, 1, "flights", 1, 7, record.ResultFilter{Agent: "agent-a"})
	if err != nil || none.Originals != 0 || none.MeanScoreA != 0 {
		t.Errorf("compare with an unused version = %+v, %v", none, err)
	}
}

func TestReadRegradeChunkCredentials(t *testing.T) {
	f := newRegradeFixture(t, 1, 0)
	ctx := context.Background()
	leaky := engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc", "api_key": "k7Hq93LmPz2Xw8Rt"})}}}
	r := regradetest.Result(t, f.v1, f.c1, leaky, regradetest.Options{SafetyGate: true}, t0.Add(time.Hour))
	regradetest.Seed(t, f.db, r, 1, time.Minute)
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	planned, _ := f.db.GetRegrade(ctx, 1, rg.ID)
	originals, err := f.db.ReadRegradeChunk(ctx, planned, chunks[0])
	if err != nil || len(originals) != 2 {
		t.Fatalf("ReadRegradeChunk = %d, %v", len(originals), err)
	}
	if originals[0].FailedCredentials != nil {
		t.Errorf("clean original: FailedCredentials = %s, want nil", originals[0].FailedCredentials)
	}
	var c engine.Check
	if err := json.Unmarshal(originals[1].FailedCredentials, &c); err != nil || c.Name != "credentials" || c.Status != engine.CheckFail || len(c.Findings) != 1 {
		t.Errorf("leaky original: FailedCredentials = %s, %v", originals[1].FailedCredentials, err)
	}
	if strings.Contains(string(originals[1].TraceCalls), "k7Hq93LmPz2Xw8Rt") {
		t.Error("the stored calls hold the secret")
	}
	// Rows stored as jsonb before migration 00005 have jsonb's key order
	// and spacing.
	if _, err := f.db.pool.Exec(ctx, `UPDATE results SET checks = checks::jsonb::json`); err != nil {
		t.Fatal(err)
	}
	again, err := f.db.ReadRegradeChunk(ctx, planned, chunks[0])
	if err != nil || again[0].FailedCredentials != nil || again[1].FailedCredentials == nil {
		t.Errorf("jsonb-formatted checks: FailedCredentials = %s, %s, %v", again[0].FailedCredentials, again[1].FailedCredentials, err)
	}
}

// TestWriteRegradeChunkConcurrentRuns runs one chunk twice at once: the run
// that commits second fails on the unique key (nothing of it is written),
// and its retry writes and counts nothing.
func TestWriteRegradeChunkConcurrentRuns(t *testing.T) {
	f := newRegradeFixture(t, 3, 2)
	ctx := context.Background()
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	planned, _ := f.db.GetRegrade(ctx, 1, rg.ID)
	originals, err := f.db.ReadRegradeChunk(ctx, planned, chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	cw := func() record.ChunkWrite {
		return record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: f.grade(t, originals)}
	}
	inFirst, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := f.db.WriteRegradeChunk(ctx, cw(), func(context.Context, pgx.Tx) error {
			close(inFirst) // rows inserted, not committed
			<-release
			return nil
		})
		first <- err
	}()
	<-inFirst
	second := make(chan error, 1)
	go func() {
		_, err := f.db.WriteRegradeChunk(ctx, cw(), nil)
		second <- err
	}()
	// Wait until the second run waits on the first's rows (the unique
	// key), as Postgres reports it.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for waiting := 0; waiting == 0; {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the second run never waited on the first")
		}
		if err := f.db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := <-second; !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("second, concurrent run = %v, want ErrConflict (a retry)", err)
	}
	retry, err := f.db.WriteRegradeChunk(ctx, cw(), nil)
	if want := (record.ChunkCounts{Repeated: true, Skipped: 5, State: record.RegradeCompleted}); err != nil || retry != want {
		t.Errorf("retry = %+v, %v; want %+v", retry, err, want)
	}
	got, _ := f.db.GetRegrade(ctx, 1, rg.ID)
	if got.Done != 5 || got.ChunksDone != 1 || got.State != record.RegradeCompleted {
		t.Errorf("regrade = %+v", got)
	}
	var n int
	if err := f.db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID).Scan(&n); err != nil || n != 5 {
		t.Errorf("results = %d, %v, want 5", n, err)
	}
}

// TestLatestResultsPicksNewest checks the latest verdict of originals
// regraded twice (the newer regrade's result), and of an original never
// regraded (itself), on a table Postgres has no statistics for.
func TestLatestResultsPicksNewest(t *testing.T) {
	f := newRegradeFixture(t, 1, 1)
	ctx := context.Background()
	first := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
	f.runAll(t, first)
	second := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
	f.runAll(t, second)
	fresh := regradetest.Result(t, f.v1, f.c1, traceBoth, regradetest.Options{SafetyGate: true}, t0.Add(10*time.Hour))
	regradetest.Seed(t, f.db, fresh, 1, time.Minute)

	newest := map[uuid.UUID]uuid.UUID{} // original -> its result of the second regrade
	rows, err := f.db.Pool().Query(ctx, `SELECT regrade_of, id FROM results WHERE regrade_id = $1`, pgUUID(second.ID))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var orig, id uuid.UUID
		if err := rows.Scan(&orig, &id); err != nil {
			t.Fatal(err)
		}
		newest[orig] = id
	}
	if rows.Close(); rows.Err() != nil || len(newest) != 2 {
		t.Fatalf("second regrade wrote %d results (%v), want 2", len(newest), rows.Err())
	}

	latest, err := f.db.ListLatestResults(ctx, 1, record.ResultFilter{ContractName: "flights"}, nil, 10)
	if err != nil || len(latest) != 3 {
		t.Fatalf("ListLatestResults = %d, %v, want 3 originals", len(latest), err)
	}
	if lr := latest[0]; lr.Original.ID != fresh.ID || lr.Result.ID != fresh.ID || lr.Result.Contract.Version != 1 {
		t.Errorf("latest[0] = original %s, result %s at v%d; want the unregraded %s as itself at v1",
			lr.Original.ID, lr.Result.ID, lr.Result.Contract.Version, fresh.ID)
	}
	for _, lr := range latest[1:] {
		if want, ok := newest[lr.Original.ID]; !ok || lr.Result.ID != want || lr.Result.Contract.Version != 2 {
			t.Errorf("latest of %s = %s at v%d, want the second regrade's %s at v2", lr.Original.ID, lr.Result.ID, lr.Result.Contract.Version, want)
		}
	}
	// A shorter page is the same list cut, with or without a filter on
	// the latest verdicts.
	yes := true
	for _, filter := range []record.ResultFilter{{ContractName: "flights"}, {ContractName: "flights", Passed: &yes}} {
		want := latest[:2]
		if filter.Passed != nil {
			want = nil
			for _, lr := range latest {
				if lr.Result.Passed {
					want = append(want, lr)
				}
			}
			want = want[:min(2, len(want))]
		}
		page, err := f.db.ListLatestResults(ctx, 1, filter, nil, 2)
		if err != nil || len(page) != len(want) {
			t.Fatalf("page of 2 (%+v) = %d, %v; want %d", filter, len(page), err, len(want))
		}
		for i := range page {
			if page[i].Original.ID != want[i].Original.ID || page[i].Result.ID != want[i].Result.ID {
				t.Errorf("page of 2 (%+v)[%d] = %s/%s, want %s/%s", filter, i, page[i].Original.ID, page[i].Result.ID, want[i].Original.ID, want[i].Result.ID)
			}
		}
	}
}

// TestRegradeResultSharesTrace writes regrade results that share their
// original's trace calls (stored as NULL, migration 00011) beside one
// that keeps its own copy, and checks that every read returns the same
// bytes as a copy would, that migrating down copies the traces back, and
// that a result whose original is gone reads as an error.
func TestRegradeResultSharesTrace(t *testing.T) {
	f := newRegradeFixture(t, 2, 2)
	ctx := context.Background()
	db := f.db
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	rg, err := db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	originals, err := db.ReadRegradeChunk(ctx, rg, chunks[0])
	if err != nil || len(originals) != 4 {
		t.Fatalf("ReadRegradeChunk = %d originals, %v", len(originals), err)
	}
	outcomes := f.grade(t, originals)
	for i := range outcomes {
		if i == 3 {
			// A result the engine redacted keeps its own trace calls.
			outcomes[i].Result.TraceCalls = json.RawMessage(`[{"tool":"search","args":{"q":"[REDACTED]"}}]`)
			outcomes[i].Result.ScoredIndexes = json.RawMessage(`[0]`)
			continue
		}
		outcomes[i].Result.TraceCalls, outcomes[i].Result.SharesTrace = originals[i].TraceCalls, true
	}
	if _, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: outcomes}, nil); err != nil {
		t.Fatalf("WriteRegradeChunk: %v", err)
	}
	var ids []uuid.UUID
	var nulls []bool
	rows, err := db.pool.Query(ctx, `SELECT id, trace_calls IS NULL FROM results WHERE regrade_id = $1 ORDER BY regrade_of`, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var null bool
		if err := rows.Scan(&id, &null); err != nil {
			t.Fatal(err)
		}
		ids, nulls = append(ids, id), append(nulls, null)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	byID := map[uuid.UUID]*record.Result{}
	for _, o := range outcomes {
		o.Result.RegradeOf, o.Result.RegradeID = o.Original.ID, rg.ID // as the store writes them
		byID[o.Result.ID] = o.Result
	}
	var wantNulls []bool
	for _, id := range ids {
		wantNulls = append(wantNulls, byID[id].SharesTrace)
	}
	if diff := cmp.Diff(wantNulls, nulls); diff != "" || len(ids) != 4 {
		t.Fatalf("trace_calls IS NULL per result (-want +got):\n%s", diff)
	}

	// Every read gives what a stored copy gives.
	want := func(id uuid.UUID) record.Result {
		r := *byID[id]
		r.SharesTrace = false
		sc, err := record.ScoredCalls(r.TraceCalls, r.ScoredIndexes)
		if err != nil {
			t.Fatal(err)
		}
		r.ScoredCalls = sc
		return r
	}
	check := func(when string) {
		t.Helper()
		for _, id := range ids {
			got, err := db.GetResult(ctx, 1, id)
			if err != nil {
				t.Fatalf("%s: GetResult(%s): %v", when, id, err)
			}
			if diff := cmp.Diff(want(id), got); diff != "" {
				t.Errorf("%s: GetResult(%s) (-want +got):\n%s", when, id, diff)
			}
		}
		all, err := db.GetResults(ctx, 1, ids)
		if err != nil || len(all) != len(ids) {
			t.Fatalf("%s: GetResults = %d, %v", when, len(all), err)
		}
		for i, got := range all {
			if diff := cmp.Diff(want(ids[i]), got); diff != "" {
				t.Errorf("%s: GetResults[%d] (-want +got):\n%s", when, i, diff)
			}
		}
		if _, err := db.GetResult(ctx, 2, ids[0]); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: GetResult of another project = %v, want ErrNotFound", when, err)
		}
	}
	check("shared")

	// Down to 00010 copies the originals' trace calls into the rows.
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 10); err != nil {
		t.Fatalf("down to 10: %v", err)
	}
	var null int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE trace_calls IS NULL`).Scan(&null); err != nil || null != 0 {
		t.Fatalf("after down: %d NULL trace_calls, %v", null, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	check("copied")
	if _, err := db.pool.Exec(ctx, `UPDATE results SET trace_calls = NULL WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	check("shared again")

	// An original may not lose its trace calls (the check constraint), and
	// a regrade result whose original is gone reads as an error.
	if _, err := db.pool.Exec(ctx, `UPDATE results SET trace_calls = NULL WHERE id = $1`, originals[0].ID); err == nil {
		t.Error("an original's trace_calls set to NULL")
	}
	orig := byID[ids[0]].RegradeOf
	if _, err := db.pool.Exec(ctx, `DELETE FROM results WHERE id = $1`, orig); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetResult(ctx, 1, ids[0]); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Errorf("GetResult of a result whose original is gone = %v", err)
	}
}

// TestWriteRegradeChunkChecksTarget checks what guards a regrade result's
// project and contract now that the references of results are checked
// for originals only (migrations 00014, 00019): a chunk whose results name another
// version than the regrade's target, or another project, writes nothing;
// an original naming an unregistered contract version is still refused
// (results_original_refs).
func TestWriteRegradeChunkChecksTarget(t *testing.T) {
	f := newRegradeFixture(t, 2, 1)
	ctx := context.Background()
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	originals, err := f.db.ReadRegradeChunk(ctx, rg, chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	written := func() int64 {
		var n int64
		if err := f.db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for name, mod := range map[string]func([]record.RegradeOutcome){
		"one result at another version": func(o []record.RegradeOutcome) { o[1].Result.Contract = f.v1 },
		"every result at another version": func(o []record.RegradeOutcome) {
			for i := range o {
				o[i].Result.Contract = f.v1
			}
		},
		"another project": func(o []record.RegradeOutcome) { o[0].Result.ProjectID = 2 },
	} {
		outcomes := f.grade(t, originals)
		mod(outcomes)
		if _, err := f.db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: outcomes}, nil); err == nil {
			t.Errorf("%s: WriteRegradeChunk succeeded", name)
		}
		if n := written(); n != 0 {
			t.Fatalf("%s: %d results written", name, n)
		}
	}
	counts, err := f.db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: f.grade(t, originals)}, nil)
	if err != nil || counts.Done != 3 || written() != 3 {
		t.Fatalf("WriteRegradeChunk = %+v, %v; %d written", counts, err, written())
	}
	orphan := f.both
	orphan.ID, orphan.Contract.Version = uuid.Must(uuid.NewV7()), 9
	if err := f.db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{orphan}}); err == nil {
		t.Error("an original naming flights@9 (not registered) was stored")
	}
}

// TestRegradeResultSharesExpected writes regrade results that share their
// regrade's copy of their expected calls (stored as NULL with the key,
// migration 00016): one whose key the chunk stores, one whose key an
// earlier chunk stored with the same bytes, one whose key was stored with
// other bytes (it keeps its own copy), and one that does not share. Every
// read returns the same bytes as a copy would, migrating down copies the
// expected calls back, and a result whose copy is gone reads as an error.
func TestRegradeResultSharesExpected(t *testing.T) {
	f := newRegradeFixture(t, 2, 2)
	ctx := context.Background()
	db := f.db
	rg := f.create(t, 10, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	rg, err := db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	originals, err := db.ReadRegradeChunk(ctx, rg, chunks[0])
	if err != nil || len(originals) != 4 {
		t.Fatalf("ReadRegradeChunk = %d originals, %v", len(originals), err)
	}
	outcomes := f.grade(t, originals)
	expected := outcomes[0].Result.ExpectedCalls
	other := json.RawMessage(`[{"tool":"other"}]`)
	for _, pre := range []struct {
		key   string
		value json.RawMessage
	}{{"1,", expected}, {"2,", other}} {
		if _, err := db.pool.Exec(ctx, `INSERT INTO regrade_expected_calls (regrade_id, combination, expected_calls) VALUES ($1, $2, $3)`,
			pgUUID(rg.ID), pre.key, string(pre.value)); err != nil {
			t.Fatal(err)
		}
	}
	for i, key := range []string{"", "1,", "2,"} {
		r := outcomes[i].Result
		r.ExpectedCalls, r.SharesExpected, r.ExpectedKey = expected, true, key
	}
	if _, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: 1, Chunk: 0, Outcomes: outcomes}, nil); err != nil {
		t.Fatalf("WriteRegradeChunk: %v", err)
	}
	type stored struct {
		Original uuid.UUID
		ID       uuid.UUID
		Null     bool
		Key      *string
	}
	rows, err := db.pool.Query(ctx, `SELECT regrade_of, id, expected_calls IS NULL, expected_combination FROM results
		WHERE regrade_id = $1 ORDER BY regrade_of`, pgUUID(rg.ID))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stored])
	if err != nil {
		t.Fatal(err)
	}
	byOriginal := map[uuid.UUID]int{}
	for i, o := range outcomes {
		byOriginal[o.Original.ID] = i
	}
	wantKeys := []*string{new(""), new("1,"), nil, nil}
	var ids []uuid.UUID
	for _, s := range got {
		i := byOriginal[s.Original]
		if s.ID != outcomes[i].Result.ID || s.Null != (wantKeys[i] != nil) || !cmp.Equal(s.Key, wantKeys[i]) {
			t.Errorf("result of original %d: id %s, expected_calls NULL %v, key %v; want %s, %v, %v",
				i, s.ID, s.Null, s.Key, outcomes[i].Result.ID, wantKeys[i] != nil, wantKeys[i])
		}
		ids = append(ids, s.ID)
	}
	if len(got) != 4 {
		t.Fatalf("%d results written, want 4", len(got))
	}
	copies, err := db.pool.Query(ctx, `SELECT combination, expected_calls FROM regrade_expected_calls WHERE regrade_id = $1 ORDER BY 1`, pgUUID(rg.ID))
	if err != nil {
		t.Fatal(err)
	}
	type copyRow struct{ Key, Value string }
	gotCopies, err := pgx.CollectRows(copies, pgx.RowToStructByPos[copyRow])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]copyRow{{"", string(expected)}, {"1,", string(expected)}, {"2,", string(other)}}, gotCopies); diff != "" {
		t.Errorf("regrade_expected_calls (-want +got):\n%s", diff)
	}

	byID := map[uuid.UUID]*record.Result{}
	for _, o := range outcomes {
		o.Result.RegradeOf, o.Result.RegradeID = o.Original.ID, rg.ID // as the store writes them
		byID[o.Result.ID] = o.Result
	}
	want := func(id uuid.UUID) record.Result {
		r := *byID[id]
		r.SharesExpected, r.ExpectedKey = false, ""
		sc, err := record.ScoredCalls(r.TraceCalls, r.ScoredIndexes)
		if err != nil {
			t.Fatal(err)
		}
		r.ScoredCalls = sc
		return r
	}
	check := func(when string) {
		t.Helper()
		for _, id := range ids {
			got, err := db.GetResult(ctx, 1, id)
			if err != nil {
				t.Fatalf("%s: GetResult(%s): %v", when, id, err)
			}
			if diff := cmp.Diff(want(id), got); diff != "" {
				t.Errorf("%s: GetResult(%s) (-want +got):\n%s", when, id, diff)
			}
		}
		all, err := db.GetResults(ctx, 1, ids)
		if err != nil || len(all) != len(ids) {
			t.Fatalf("%s: GetResults = %d, %v", when, len(all), err)
		}
		for i, got := range all {
			if diff := cmp.Diff(want(ids[i]), got); diff != "" {
				t.Errorf("%s: GetResults[%d] (-want +got):\n%s", when, i, diff)
			}
		}
	}
	check("shared")

	// Down to 00015 copies the expected calls into the rows.
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 15); err != nil {
		t.Fatalf("down to 15: %v", err)
	}
	for _, id := range ids {
		var e *string
		if err := db.pool.QueryRow(ctx, `SELECT expected_calls FROM results WHERE id = $1`, id).Scan(&e); err != nil {
			t.Fatal(err)
		}
		if e == nil || *e != string(byID[id].ExpectedCalls) {
			t.Errorf("after down: expected_calls of %s = %v, want %s", id, e, byID[id].ExpectedCalls)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	check("copied")

	// A chunk of a regrade that does not exist writes nothing.
	gone := f.grade(t, originals)
	gone[0].Result.ExpectedCalls, gone[0].Result.SharesExpected = expected, true
	if _, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: uuid.Must(uuid.NewV7()), ProjectID: 1, Chunk: 0, Outcomes: gone}, nil); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("WriteRegradeChunk of an unknown regrade = %v, want ErrNotFound", err)
	}

	// An original may not lose its expected calls (the check constraint),
	// and a result whose copy is gone reads as an error.
	if _, err := db.pool.Exec(ctx, `UPDATE results SET expected_calls = NULL, expected_combination = '' WHERE id = $1`, originals[0].ID); err == nil {
		t.Error("an original's expected_calls set to NULL")
	}
	if _, err := db.pool.Exec(ctx, `UPDATE results SET expected_calls = NULL, expected_combination = 'gone' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetResult(ctx, 1, ids[0]); err == nil || !strings.Contains(err.Error(), "no longer holds them") {
		t.Errorf("GetResult of a result whose copy is gone = %v", err)
	}
}

// TestReadRegradeChunkPlan checks that a chunk's read is an index scan
// bounded by the selected versions and the chunk's created_at range, for
// a selection listing its versions and for one taking every version but
// the target from the registry, so that it does not read the index
// entries of every result of the contract (the target version's regrade
// results among them).
func TestReadRegradeChunkPlan(t *testing.T) {
	f := newRegradeFixture(t, 30, 30)
	ctx := context.Background()
	// Results at the target version, as a regrade writes them.
	f.runAll(t, f.create(t, 20, record.RegradeSelection{ContractName: "flights"}))
	for _, sel := range []record.RegradeSelection{
		{ContractName: "flights"},
		{ContractName: "flights", FromVersions: []int{1}},
	} {
		rg := f.create(t, 20, sel)
		chunks := f.plan(t, rg.ID)
		planned, err := f.db.GetRegrade(ctx, 1, rg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(chunks) != 3 {
			t.Fatalf("%+v: %d chunks, want 3", sel, len(chunks))
		}
		tx, err := f.db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
		q, args, err := regradeChunkQuery(ctx, tx, planned, chunks[1])
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		_ = tx.Rollback(ctx)
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		var cond string
		for _, l := range lines {
			if c, ok := strings.CutPrefix(strings.TrimSpace(l), "Index Cond: "); ok {
				cond = c
			}
		}
		if !strings.Contains(plan, "using results_contract on results") || !strings.Contains(cond, "(contract_version = 1)") ||
			!strings.Contains(cond, "(created_at >= ") || !strings.Contains(cond, "(created_at <= ") {
			t.Errorf("%+v: the chunk's read is not bounded by version and created_at in results_contract:\n%s", sel, plan)
		}
		originals, err := f.db.ReadRegradeChunk(ctx, planned, chunks[1])
		if err != nil || len(originals) != 20 {
			t.Errorf("%+v: ReadRegradeChunk = %d originals, %v; want 20", sel, len(originals), err)
		}
	}
}
