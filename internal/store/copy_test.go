package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/workload"
)

// TestResultCopyTypes checks that appendResultTuple's column types are the
// migrated schema's: a binary COPY of another type fails (or, for types of
// the same width, stores something else).
func TestResultCopyTypes(t *testing.T) {
	db, _ := mustMigrated(t)
	if len(resultColumnTypes) != len(resultColumns) {
		t.Fatalf("%d column types for %d columns", len(resultColumnTypes), len(resultColumns))
	}
	for i, c := range resultColumns {
		var typ string
		err := db.pool.QueryRow(context.Background(),
			`SELECT data_type FROM information_schema.columns WHERE table_name = 'results' AND column_name = $1`, c).Scan(&typ)
		if err != nil {
			t.Fatalf("column %s: %v", c, err)
		}
		if typ != resultColumnTypes[i] {
			t.Errorf("column %s is %s in the schema, encoded as %s", c, typ, resultColumnTypes[i])
		}
	}
}

// TestCopyMatchesPgx stores the same results with copyResults and with
// pgx's CopyFrom of resultRow and compares every stored column: NULLs,
// labels, registry and inline contracts, times with microseconds, a
// missing final answer, non-ASCII text, a format warning (NULL when
// none), and a group with a conflicted batch left out.
func TestCopyMatchesPgx(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	ref, _ := regradetest.MustContract(t, db, "medium", string(workload.Contract(workload.Medium)))
	mods := []func(*record.Result){
		nil,
		func(r *record.Result) { r.TaskID, r.RunID, r.Agent, r.FinalAnswer = "", "", "", nil },
		func(r *record.Result) {
			r.Contract = ref
			r.Labels = map[string]string{"env": "prod", "é": "ü \"q\""}
			r.LabelsJSON, _ = json.Marshal(r.Labels)
			r.RunID, r.Passed, r.SafetyGate, r.Score, r.MinScore = "run-ß", true, false, 0.123456789012345, 0
			r.CreatedAt = time.Date(2026, 12, 1, 17, 3, 4, 123456000, time.UTC)
		},
		func(r *record.Result) { r.Labels = map[string]string{"k": "v"} }, // LabelsJSON left to the store
		func(r *record.Result) { r.Options, r.Checks = nil, json.RawMessage(`{}`) },
		func(r *record.Result) { r.FormatWarning = "the trace has no calls, though ... é at /0/type" },
	}
	var ours, theirs []*writeReq
	for i, mod := range mods {
		a, b := newResult(t, i, mod), newResult(t, i, mod)
		b.ID = uuid.Must(uuid.NewV7())
		ours = append(ours, &writeReq{batch: record.ResultBatch{Results: []record.Result{a}}})
		theirs = append(theirs, &writeReq{batch: record.ResultBatch{Results: []record.Result{b}}})
	}
	// A conflicted batch is not written by either.
	skipped := newResult(t, 99, nil)
	ours = append(ours, &writeReq{batch: record.ResultBatch{Results: []record.Result{skipped}}})
	theirs = append(theirs, &writeReq{batch: record.ResultBatch{Results: []record.Result{skipped}}})
	conflicts := make([]bool, len(ours))
	conflicts[len(conflicts)-1] = true

	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, w := range []struct {
		name string
		copy func(context.Context, *pgxpool.Conn, []*writeReq, []bool) (int64, error)
		reqs []*writeReq
	}{{"copyResults", copyResults, ours}, {"pgx", pgxCopyResults, theirs}} {
		n, err := w.copy(ctx, conn, w.reqs, conflicts)
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if n != int64(len(mods)) {
			t.Errorf("%s wrote %d rows, want %d", w.name, n, len(mods))
		}
	}
	row := func(id uuid.UUID) string {
		var s string
		err := db.pool.QueryRow(ctx, `SELECT (to_jsonb(r) - 'id')::text FROM results r WHERE id = $1`, id).Scan(&s)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		return s
	}
	for i := range mods {
		a, b := row(ours[i].batch.Results[0].ID), row(theirs[i].batch.Results[0].ID)
		if a != b {
			t.Errorf("result %d:\ncopyResults %s\npgx         %s", i, a, b)
		}
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM results WHERE id = $1`, skipped.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("the conflicted batch's result: %d rows (%v), want none", n, err)
	}
}

// pgxCopyResults is copyResults through pgx's CopyFrom of resultRow, as
// the writer wrote before copyResults.
func pgxCopyResults(ctx context.Context, conn *pgxpool.Conn, group []*writeReq, conflicts []bool) (int64, error) {
	return conn.CopyFrom(ctx, pgx.Identifier{"results"}, resultColumns, &groupRows{group: group, conflicts: conflicts})
}

// groupRows is the pgx.CopyFromSource of a group's results, in resultRow's
// columns: every result of every batch but those whose idempotency key
// another request holds (conflicts).
type groupRows struct {
	group     []*writeReq
	conflicts []bool
	batch     int // the current batch
	next      int // its next result
	row       *record.Result
}

// Next implements pgx.CopyFromSource.
func (g *groupRows) Next() bool {
	for g.batch < len(g.group) {
		rs := g.group[g.batch].batch.Results
		if !g.conflicts[g.batch] && g.next < len(rs) {
			g.row = &rs[g.next]
			g.next++
			return true
		}
		g.batch, g.next = g.batch+1, 0
	}
	return false
}

// Values implements pgx.CopyFromSource.
func (g *groupRows) Values() ([]any, error) { return resultRow(g.row), nil }

// Err implements pgx.CopyFromSource.
func (g *groupRows) Err() error { return nil }
