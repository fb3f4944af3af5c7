package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// mustOpen opens a store on url and closes it when the test ends.
func mustOpen(tb testing.TB, url string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), Config{URL: url, Logger: zaptest.NewLogger(tb)})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(db.Close)
	return db
}

// mustMigrated returns a store on a fresh, migrated database.
func mustMigrated(tb testing.TB) (*DB, string) {
	tb.Helper()
	url := storetest.NewDatabase(tb)
	db := mustOpen(tb, url)
	if _, err := db.Migrate(context.Background()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return db, url
}

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newResult builds a stored result; i varies its identity and time.
func newResult(tb testing.TB, i int, mod func(*record.Result)) record.Result {
	tb.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		tb.Fatal(err)
	}
	answer := fmt.Sprintf("answer %d", i)
	r := record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: record.DefaultProject, CreatedAt: t0.Add(time.Duration(i) * time.Minute),
			Contract: record.ContractRef{SHA256: fmt.Sprintf("%064x", i), Kind: record.KindGold},
			TaskID:   fmt.Sprintf("task-%d", i%3), Agent: "agent-a", Format: "plain",
			Score: float64(i%10) / 10, Grade: string(engine.GradeFor(float64(i%10) / 10)), Passed: i%10 == 9,
			MinScore: 0.9, SafetyGate: true,
		},
		Options:       json.RawMessage(`{"safety_gate": true, "strict": false}`),
		ExpectedCalls: json.RawMessage(`[{"args": {"q": {"$regex": "^a"}}, "tool": "search"}]`),
		TraceCalls:    json.RawMessage(`[{"args": {"q": "abc"}, "tool": "search"},{"tool":"noop","args":{"s":"\u00e9 "}}]`),
		ScoredCalls:   json.RawMessage(`[{"tool":"noop","args":{"s":"\u00e9 "}}]`),
		ScoredIndexes: json.RawMessage(`[1]`),
		Metrics:       json.RawMessage(`{"selection_accuracy": 1}`),
		Checks:        json.RawMessage(`{"fail": 0, "pass": 0, "items": [], "unknown": 0}`),
		Issues:        json.RawMessage(`[]`),
		FinalAnswer:   &answer,
	}
	if mod != nil {
		mod(&r)
	}
	return r
}

func TestMigrate(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("SchemaVersion() = %d, %v, want %d", v, err, LatestVersion())
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready() = %v", err)
	}
	// A second run is a no-op.
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("second Migrate() = %d, %v", v, err)
	}
	// A newer binary migrated this database: refuse it.
	if _, err := db.pool.Exec(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Migrate() on a newer schema = %v, want ErrSchemaTooNew", err)
	}
	if err := db.Ready(ctx); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("Ready() on a newer schema = %v, want ErrSchemaTooNew", err)
	}
}

func TestMigrateDown(t *testing.T) {
	// Every down migration undoes its up migration: down to 0 leaves only
	// goose's own table, and up again works.
	db, _ := mustMigrated(t)
	ctx := context.Background()
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("DownTo(0): %v", err)
	}
	var tables []string
	rows, err := db.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if diff := cmp.Diff([]string{"goose_db_version"}, tables); diff != "" {
		t.Errorf("tables after down to 0 (-want +got):\n%s", diff)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Errorf("Migrate() after down = %d, %v", v, err)
	}
}

// TestMigration7 checks migration 00007 both ways on stored rows: down
// gives scored_calls back as the trace calls at scored_indexes (json, as
// before) and up again reads the same result.
func TestMigration7(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	r := newResult(t, 1, nil)
	empty := newResult(t, 2, func(r *record.Result) {
		r.ScoredCalls, r.ScoredIndexes = json.RawMessage(`[]`), json.RawMessage(`[]`)
	})
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r, empty}}); err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 6); err != nil {
		t.Fatalf("DownTo(6): %v", err)
	}
	for _, want := range []record.Result{r, empty} {
		var scored, typ string
		if err := db.pool.QueryRow(ctx, `SELECT scored_calls::text, pg_typeof(trace_calls)::text FROM results WHERE id = $1`, want.ID).Scan(&scored, &typ); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(json.RawMessage(scored), want.ScoredCalls) || typ != "json" {
			t.Errorf("after down: scored_calls = %s (trace_calls %s), want %s (json)", scored, typ, want.ScoredCalls)
		}
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v", v, err)
	}
	got, err := db.GetResult(ctx, 1, r.ID)
	if err != nil || string(got.ScoredCalls) != string(r.ScoredCalls) || string(got.TraceCalls) != string(r.TraceCalls) {
		t.Errorf("after up: GetResult = %s / %s, %v; want %s / %s", got.TraceCalls, got.ScoredCalls, err, r.TraceCalls, r.ScoredCalls)
	}
}

// TestMigration17 checks migration 00017 both ways on a stored row: down
// makes metrics json again with the same text, and up again reads the
// same bytes.
func TestMigration17(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	r := newResult(t, 1, nil)
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r}}); err != nil {
		t.Fatal(err)
	}
	typeOf := func() (string, string) {
		t.Helper()
		var typ, text string
		if err := db.pool.QueryRow(ctx, `SELECT pg_typeof(metrics)::text, metrics::text FROM results WHERE id = $1`, r.ID).Scan(&typ, &text); err != nil {
			t.Fatal(err)
		}
		return typ, text
	}
	if typ, text := typeOf(); typ != "text" || text != string(r.Metrics) {
		t.Errorf("metrics = %s %s, want text %s", typ, text, r.Metrics)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 16); err != nil {
		t.Fatalf("DownTo(16): %v", err)
	}
	if typ, text := typeOf(); typ != "json" || text != string(r.Metrics) {
		t.Errorf("after down: metrics = %s %s, want json %s", typ, text, r.Metrics)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v", v, err)
	}
	got, err := db.GetResult(ctx, 1, r.ID)
	if err != nil || string(got.Metrics) != string(r.Metrics) {
		t.Errorf("after up: GetResult metrics = %s, %v; want %s", got.Metrics, err, r.Metrics)
	}
}

// TestMigration19 checks the references of results that the constraint
// trigger results_original_refs checks in place of foreign keys
// (migration 00019): an original naming an unregistered contract version
// or an unknown project is refused with the foreign key's error; a
// regrade result fires nothing; a contract version or a project an
// original names can be neither deleted nor have its key changed, one no
// original names can. Down restores 00014's foreign keys (and their
// checks), up the trigger.
func TestMigration19(t *testing.T) {
	f := newRegradeFixture(t, 2, 0)
	db, ctx := f.db, context.Background()
	refused := func(what string, err error, constraint string) {
		t.Helper()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23503" || pgErr.ConstraintName != constraint {
			t.Errorf("%s: %v, want a foreign_key_violation of %s", what, err, constraint)
		}
	}
	insert := func(mod func(*record.Result)) error {
		r := f.both
		r.ID = uuid.Must(uuid.NewV7())
		mod(&r)
		_, err := db.pool.Exec(ctx, `INSERT INTO results (`+strings.Join(resultColumns, ", ")+`, regrade_of, regrade_id)
			VALUES (`+placeholders(len(resultColumns)+2)+`)`, append(resultRow(&r), nullUUID(r.RegradeOf), nullUUID(r.RegradeID))...)
		return err
	}
	check := func(stage string, fkey bool) {
		t.Helper()
		err := insert(func(r *record.Result) { r.Contract.Version = 9 })
		refused(stage+": an original naming flights@9", err, "results_contract_fkey")
		err = insert(func(r *record.Result) {
			r.Contract = record.ContractRef{SHA256: r.Contract.SHA256, Kind: r.Contract.Kind}
			r.ProjectID = 7
		})
		refused(stage+": an inline original of project 7", err, "results_project_fkey")
		if err := insert(func(r *record.Result) {}); err != nil {
			t.Errorf("%s: an original naming flights@1: %v", stage, err)
		}
		// A regrade result names no reference that is checked (its
		// regrade's row does): flights@9 goes in.
		if err := insert(func(r *record.Result) {
			r.Contract.Version, r.RegradeOf, r.RegradeID = 9, f.both.ID, uuid.Must(uuid.NewV7())
		}); err != nil {
			t.Errorf("%s: a regrade result: %v", stage, err)
		}
		_, err = db.pool.Exec(ctx, `DELETE FROM contracts WHERE name = 'flights' AND version = 1`)
		refused(stage+": deleting flights@1", err, "results_contract_fkey")
		_, err = db.pool.Exec(ctx, `UPDATE contracts SET version = 5 WHERE name = 'flights' AND version = 1`)
		refused(stage+": renumbering flights@1", err, "results_contract_fkey")
		if _, err := db.pool.Exec(ctx, `UPDATE contracts SET description = 'x' WHERE name = 'flights' AND version = 1`); err != nil {
			t.Errorf("%s: describing flights@1: %v", stage, err)
		}
		p, err := db.CreateProject(ctx, "p-"+stage)
		if err != nil {
			t.Fatal(err)
		}
		if err := insert(func(r *record.Result) {
			r.Contract = record.ContractRef{SHA256: r.Contract.SHA256, Kind: r.Contract.Kind}
			r.ProjectID = p.ID
		}); err != nil {
			t.Errorf("%s: an inline original of project %d: %v", stage, p.ID, err)
		}
		_, err = db.pool.Exec(ctx, `DELETE FROM projects WHERE id = $1`, p.ID)
		refused(stage+": deleting a project with an original", err, "results_project_fkey")
		_, err = db.pool.Exec(ctx, `UPDATE projects SET id = id + 1000 WHERE id = $1`, p.ID)
		refused(stage+": renumbering a project with an original", err, "results_project_fkey")
		var triggers int
		if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = 'results_original_refs'`).Scan(&triggers); err != nil || (triggers == 1) == fkey {
			t.Errorf("%s: %d results_original_refs triggers (%v)", stage, triggers, err)
		}
	}
	check("up", false)
	// flights@2 is named only by regrade results and the regrades row
	// none made yet: it can go.
	if _, err := db.pool.Exec(ctx, `DELETE FROM contracts WHERE name = 'flights' AND version = 2`); err != nil {
		t.Errorf("deleting flights@2, which no original names: %v", err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 18); err != nil {
		t.Fatalf("DownTo(18): %v", err)
	}
	check("down", true)
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v; want %d", v, err, LatestVersion())
	}
	check("again", false)
}

// TestMigration20 checks results_regrade (migration 00020): the one key
// of regrade results, (regrade_of, regrade_id), refuses a second result
// of one regrade for one original, and a lookup of an original's regrade
// results scans it (ListRegradeResults' query, on a table without
// statistics, sequential scans off); down restores 00004's two indexes, up this one.
func TestMigration20(t *testing.T) {
	f := newRegradeFixture(t, 1, 0)
	db, ctx := f.db, context.Background()
	indexes := func() []string {
		t.Helper()
		rows, err := db.pool.Query(ctx, `SELECT pg_get_indexdef(indexrelid) FROM pg_index
			WHERE indrelid = 'results'::regclass AND pg_get_indexdef(indexrelid) LIKE '%regrade_of%' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return defs
	}
	newKey := []string{"CREATE UNIQUE INDEX results_regrade ON public.results USING btree (regrade_of, regrade_id) WHERE (regrade_of IS NOT NULL)"}
	if diff := cmp.Diff(newKey, indexes()); diff != "" {
		t.Errorf("indexes (-want +got):\n%s", diff)
	}
	rg := uuid.Must(uuid.NewV7())
	insert := func() error {
		r := f.both
		r.ID, r.Contract = uuid.Must(uuid.NewV7()), f.v2
		_, err := db.pool.Exec(ctx, `INSERT INTO results (`+strings.Join(resultColumns, ", ")+`, regrade_of, regrade_id)
			VALUES (`+placeholders(len(resultColumns)+2)+`)`, append(resultRow(&r), nullUUID(f.both.ID), nullUUID(rg))...)
		return err
	}
	if err := insert(); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if err := insert(); !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "results_regrade" {
		t.Errorf("a second result of one regrade for one original: %v, want a unique violation of results_regrade", err)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) `+regradeResultsQuery, pgUUID(f.both.ID), 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback(ctx)
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "results_regrade") {
		t.Errorf("a lookup of an original's regrade results does not use results_regrade: %s", plan)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 19); err != nil {
		t.Fatalf("DownTo(19): %v", err)
	}
	old := []string{
		"CREATE INDEX results_regrade_of ON public.results USING btree (regrade_of, created_at DESC) WHERE (regrade_of IS NOT NULL)",
		"CREATE UNIQUE INDEX results_regrade ON public.results USING btree (regrade_id, regrade_of) WHERE (regrade_id IS NOT NULL)",
	}
	if diff := cmp.Diff(old, indexes()); diff != "" {
		t.Errorf("after down: indexes (-want +got):\n%s", diff)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v; want %d", v, err, LatestVersion())
	}
	if diff := cmp.Diff(newKey, indexes()); diff != "" {
		t.Errorf("after up: indexes (-want +got):\n%s", diff)
	}
}

// TestMigration21 checks migration 00021: the time-ordered indexes of
// results are ascending, valid and under their old names, and a listing
// newest first scans results_project_created backward; down restores the
// descending ones, up the ascending ones again, the stored results
// listed the same throughout.
func TestMigration21(t *testing.T) {
	f := newRegradeFixture(t, 3, 2)
	db, ctx := f.db, context.Background()
	indexes := func() []string {
		t.Helper()
		rows, err := db.pool.Query(ctx, `SELECT pg_get_indexdef(i.indexrelid) || CASE WHEN i.indisvalid THEN '' ELSE ' INVALID' END
			FROM pg_index i WHERE i.indrelid = 'results'::regclass
			AND i.indexrelid::regclass::text IN ('results_project_created', 'results_contract', 'results_task', 'results_run', 'results_agent')
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return defs
	}
	list := func() []uuid.UUID {
		t.Helper()
		got, err := db.ListResults(ctx, 1, record.ResultFilter{}, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uuid.UUID, len(got))
		for i, r := range got {
			ids[i] = r.ID
		}
		return ids
	}
	asc := []string{
		"CREATE INDEX results_agent ON public.results USING btree (project_id, agent, created_at) WHERE (agent IS NOT NULL)",
		"CREATE INDEX results_contract ON public.results USING btree (project_id, contract_name, contract_version, created_at, id)",
		"CREATE INDEX results_project_created ON public.results USING btree (project_id, created_at, id)",
		"CREATE INDEX results_run ON public.results USING btree (project_id, run_id, created_at) WHERE (run_id IS NOT NULL)",
		"CREATE INDEX results_task ON public.results USING btree (project_id, task_id, created_at) WHERE (task_id IS NOT NULL)",
	}
	desc := []string{
		"CREATE INDEX results_agent ON public.results USING btree (project_id, agent, created_at DESC) WHERE (agent IS NOT NULL)",
		"CREATE INDEX results_contract ON public.results USING btree (project_id, contract_name, contract_version, created_at DESC, id DESC)",
		"CREATE INDEX results_project_created ON public.results USING btree (project_id, created_at DESC, id DESC)",
		"CREATE INDEX results_run ON public.results USING btree (project_id, run_id, created_at DESC) WHERE (run_id IS NOT NULL)",
		"CREATE INDEX results_task ON public.results USING btree (project_id, task_id, created_at DESC) WHERE (task_id IS NOT NULL)",
	}
	if diff := cmp.Diff(asc, indexes()); diff != "" {
		t.Errorf("indexes (-want +got):\n%s", diff)
	}
	want := list()
	if len(want) != 5 {
		t.Fatalf("ListResults = %d results, want 5", len(want))
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) SELECT id FROM results WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT 10`, 1)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	_ = tx.Rollback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Scan Backward using results_project_created") || strings.Contains(plan, "Sort") {
		t.Errorf("a listing newest first is not a backward scan of results_project_created:\n%s", plan)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatalf("DownTo(20): %v", err)
	}
	if diff := cmp.Diff(desc, indexes()); diff != "" {
		t.Errorf("after down: indexes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Errorf("after down: ListResults (-want +got):\n%s", diff)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v; want %d", v, err, LatestVersion())
	}
	if diff := cmp.Diff(asc, indexes()); diff != "" {
		t.Errorf("after up: indexes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Errorf("after up: ListResults (-want +got):\n%s", diff)
	}
}

// placeholders returns "$1, ..., $n".
func placeholders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i)
	}
	return b.String()
}

// nullUUID is id as a uuid column's value, NULL for uuid.Nil.
func nullUUID(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return [16]byte(id)
}

// TestMigration18 checks results.format_warning (migration 00018): a
// result's warning is stored and read back, one without is NULL; down
// drops the column (and the warning), up adds it again empty, and results
// are written and read on it again. A listing's summaries carry it.
func TestMigration18(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	const warning = "the trace has no calls, though 1 value in it looks like tool calls or results that the openai format does not read: tool_call_id at /0/tool_call_id"
	with := newResult(t, 1, func(r *record.Result) { r.FormatWarning = warning })
	without := newResult(t, 2, nil)
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{with, without}}); err != nil {
		t.Fatal(err)
	}
	column := func(id uuid.UUID) *string {
		t.Helper()
		var w *string
		if err := db.pool.QueryRow(ctx, `SELECT format_warning FROM results WHERE id = $1`, id).Scan(&w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := column(with.ID); w == nil || *w != warning {
		t.Errorf("format_warning = %v, want %q", w, warning)
	}
	if w := column(without.ID); w != nil {
		t.Errorf("format_warning of a result without one = %q, want NULL", *w)
	}
	// The summaries of a listing carry it too.
	list, err := db.ListResults(ctx, 1, record.ResultFilter{}, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[uuid.UUID]string{}
	for _, r := range list {
		listed[r.ID] = r.FormatWarning
	}
	if want := map[uuid.UUID]string{with.ID: warning, without.ID: ""}; !maps.Equal(listed, want) {
		t.Errorf("ListResults: format warnings %v, want %v", listed, want)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 17); err != nil {
		t.Fatalf("DownTo(17): %v", err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'results' AND column_name = 'format_warning'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after down: %d format_warning columns (%v), want 0", n, err)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() after down = %d, %v; want %d", v, err, LatestVersion())
	}
	got, err := db.GetResult(ctx, 1, with.ID)
	if err != nil || got.FormatWarning != "" || string(got.Metrics) != string(with.Metrics) {
		t.Errorf("after up: GetResult = warning %q, metrics %s, %v; want no warning, %s", got.FormatWarning, got.Metrics, err, with.Metrics)
	}
	again := newResult(t, 3, func(r *record.Result) { r.FormatWarning = warning })
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{again}}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetResult(ctx, 1, again.ID); err != nil || got.FormatWarning != warning {
		t.Errorf("after up: GetResult(new) warning = %q, %v; want %q", got.FormatWarning, err, warning)
	}
}

func TestContracts(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	mk := func(name, body string) record.ContractVersion {
		canon, sum, err := jsondoc.Canonical([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return record.ContractVersion{ProjectID: record.DefaultProject, Name: name, SHA256: sum, Kind: record.KindContract,
			Description: "d", Combinations: 2, Body: canon}
	}
	v1, created, err := db.CreateContractVersion(ctx, mk("flights", `{"contract_version": 2, "required": []}`))
	if err != nil || !created || v1.Version != 1 {
		t.Fatalf("create v1 = %+v, %v, %v", v1, created, err)
	}
	again, created, err := db.CreateContractVersion(ctx, mk("flights", `{"required":[],"contract_version":2}`))
	if err != nil || created {
		t.Fatalf("create identical = created %v, %v; want the existing version", created, err)
	}
	if diff := cmp.Diff(v1, again); diff != "" {
		t.Errorf("identical body returned another version (-v1 +got):\n%s", diff)
	}
	v2, created, err := db.CreateContractVersion(ctx, mk("flights", `{"contract_version": 2, "required": [{"tool": "x"}]}`))
	if err != nil || !created || v2.Version != 2 {
		t.Fatalf("create v2 = %+v, %v, %v", v2, created, err)
	}
	if _, _, err := db.CreateContractVersion(ctx, mk("hotels", `{"contract_version": 2, "required": []}`)); err != nil {
		t.Fatal(err)
	}

	latest, err := db.GetContractVersion(ctx, record.DefaultProject, "flights", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v2, latest); diff != "" {
		t.Errorf("GetContractVersion(latest) (-want +got):\n%s", diff)
	}
	got1, err := db.GetContractVersion(ctx, record.DefaultProject, "flights", 1)
	if err != nil || string(got1.Body) != `{"contract_version":2,"required":[]}` {
		t.Errorf("GetContractVersion(1) body = %s, %v", got1.Body, err)
	}
	for _, tc := range []struct {
		name    string
		version int
	}{{"flights", 3}, {"nope", 0}} {
		if _, err := db.GetContractVersion(ctx, record.DefaultProject, tc.name, tc.version); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("GetContractVersion(%s, %d) = %v, want ErrNotFound", tc.name, tc.version, err)
		}
	}
	vs, err := db.ListContractVersions(ctx, record.DefaultProject, "flights", 1, 10)
	if err != nil || len(vs) != 1 || vs[0].Version != 2 || vs[0].Body != nil {
		t.Errorf("ListContractVersions(after 1) = %+v, %v", vs, err)
	}
	if _, err := db.ListContractVersions(ctx, record.DefaultProject, "nope", 0, 10); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ListContractVersions(nope) = %v, want ErrNotFound", err)
	}
	names, err := db.ListContracts(ctx, record.DefaultProject, "", 1)
	if err != nil || len(names) != 1 || names[0].Name != "flights" || names[0].LatestVersion != 2 {
		t.Errorf("ListContracts(first page) = %+v, %v", names, err)
	}
	names, err = db.ListContracts(ctx, record.DefaultProject, "flights", 10)
	if err != nil || len(names) != 1 || names[0].Name != "hotels" {
		t.Errorf("ListContracts(after flights) = %+v, %v", names, err)
	}
}

func TestContractVersionsConcurrent(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	versions := make([]int, n)
	for i := range n {
		wg.Go(func() {
			canon, sum, _ := jsondoc.Canonical(fmt.Appendf(nil, `{"contract_version":2,"required":[{"tool":"t%d"}]}`, i))
			cv, _, err := db.CreateContractVersion(ctx, record.ContractVersion{ProjectID: 1, Name: "c", SHA256: sum,
				Kind: record.KindContract, Combinations: 1, Body: canon})
			if err != nil {
				t.Error(err)
			}
			versions[i] = cv.Version
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, v := range versions {
		seen[v] = true
	}
	for v := 1; v <= n; v++ {
		if !seen[v] {
			t.Errorf("versions %v: missing %d (want 1..%d without gaps)", versions, v, n)
		}
	}
}

func TestResults(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	canon, sum, _ := jsondoc.Canonical([]byte(`{"contract_version":2,"required":[]}`))
	if _, _, err := db.CreateContractVersion(ctx, record.ContractVersion{ProjectID: 1, Name: "flights", SHA256: sum,
		Kind: record.KindContract, Combinations: 1, Body: canon}); err != nil {
		t.Fatal(err)
	}
	var all []record.Result
	for i := range 30 {
		all = append(all, newResult(t, i, func(r *record.Result) {
			if i%2 == 0 {
				r.Contract = record.ContractRef{Name: "flights", Version: 1, SHA256: sum, Kind: record.KindContract}
			}
			if i%5 == 0 {
				r.Labels = map[string]string{"env": "prod", "team": "x"}
				r.FinalAnswer = nil
				r.RunID = "run-1"
				r.FormatWarning = "the trace has no calls, though 1 value in it looks like tool calls or results that the openai format does not read: tool_call_id at /0/tool_call_id"
			}
		}))
	}
	// Several concurrent writers share group commits.
	var wg sync.WaitGroup
	for i := 0; i < len(all); i += 3 {
		wg.Go(func() {
			if err := db.InsertResults(ctx, record.ResultBatch{Results: all[i : i+3]}); err != nil {
				t.Errorf("InsertResults: %v", err)
			}
		})
	}
	wg.Wait()

	got, err := db.GetResult(ctx, 1, all[5].ID)
	if err != nil {
		t.Fatal(err)
	}
	// Every payload column keeps the exact bytes (text, or json for
	// metrics), and scored_calls is rebuilt from trace_calls at
	// scored_indexes byte for byte.
	if diff := cmp.Diff(all[5], got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("GetResult (-want +got):\n%s", diff)
	}
	if got, err := db.GetResult(ctx, 1, all[6].ID); err != nil || got.FormatWarning != "" {
		t.Errorf("GetResult(no warning) format warning = %q, %v; want \"\"", got.FormatWarning, err)
	}
	if _, err := db.GetResult(ctx, 1, uuid.Must(uuid.NewV7())); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetResult(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := db.GetResult(ctx, 2, all[5].ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetResult(other project) = %v, want ErrNotFound", err)
	}
	many, err := db.GetResults(ctx, 1, []uuid.UUID{all[3].ID, all[1].ID})
	if err != nil || len(many) != 2 || many[0].ID != all[3].ID || many[1].ID != all[1].ID {
		t.Errorf("GetResults = %d results, %v; want ids 3, 1 in order", len(many), err)
	}

	ids := func(rs []record.ResultSummary) []uuid.UUID {
		var out []uuid.UUID
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	want := func(idx ...int) []uuid.UUID {
		var out []uuid.UUID
		for _, i := range idx {
			out = append(out, all[i].ID)
		}
		return out
	}
	yes := true
	tests := []struct {
		name string
		f    record.ResultFilter
		want []uuid.UUID
	}{
		{"label with value", record.ResultFilter{Labels: []record.LabelFilter{{Key: "env", Value: "prod", HasValue: true}}}, want(25, 20, 15, 10, 5, 0)},
		{"label key only", record.ResultFilter{Labels: []record.LabelFilter{{Key: "team"}}}, want(25, 20, 15, 10, 5, 0)},
		{"label other value", record.ResultFilter{Labels: []record.LabelFilter{{Key: "env", Value: "dev", HasValue: true}}}, nil},
		{"contract and version", record.ResultFilter{ContractName: "flights", ContractVersion: 1, RunID: "run-1"}, want(20, 10, 0)},
		{"passed", record.ResultFilter{Passed: &yes}, want(29, 19, 9)},
		{"grades", record.ResultFilter{Grades: []string{"A", "B"}, TaskID: "task-0"}, want(18, 9)},
		{"time range", record.ResultFilter{Since: t0.Add(3 * time.Minute), Until: t0.Add(6 * time.Minute), Agent: "agent-a"}, want(5, 4, 3)},
		{"agent unknown", record.ResultFilter{Agent: "b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.ListResults(ctx, 1, tc.f, nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("ListResults(%+v) (-want +got):\n%s", tc.f, diff)
			}
		})
	}

	// Keyset pagination visits every row once, newest first.
	var pages []uuid.UUID
	var after *record.Cursor
	for {
		page, err := db.ListResults(ctx, 1, record.ResultFilter{}, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ids(page)...)
		if len(page) < 7 {
			break
		}
		last := page[len(page)-1]
		after = &record.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	var wantAll []uuid.UUID
	for i := len(all) - 1; i >= 0; i-- {
		wantAll = append(wantAll, all[i].ID)
	}
	if diff := cmp.Diff(wantAll, pages); diff != "" {
		t.Errorf("paginated ListResults (-want +got):\n%s", diff)
	}

	stats, err := db.Stats(ctx, 1, record.ResultFilter{TaskID: "task-0"}, record.GroupByContractVersion)
	if err != nil {
		t.Fatal(err)
	}
	// task-0 holds i = 0, 3, ..., 27: even i use flights@1.
	wantStats := []record.StatsGroup{
		{Key: "", Count: 5, Passed: 1, MeanScore: (0.3 + 0.9 + 0.5 + 0.1 + 0.7) / 5, Grades: map[string]int64{"A": 1, "B": 0, "C": 1, "D": 0, "F": 3}},
		{Key: "flights@1", Count: 5, Passed: 0, MeanScore: (0 + 0.6 + 0.2 + 0.8 + 0.4) / 5, Grades: map[string]int64{"A": 0, "B": 1, "C": 0, "D": 1, "F": 3}},
	}
	if diff := cmp.Diff(wantStats, stats, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); diff != "" {
		t.Errorf("Stats(contract_version) (-want +got):\n%s", diff)
	}
	days, err := db.Stats(ctx, 1, record.ResultFilter{}, record.GroupByDay)
	if err != nil || len(days) != 1 || days[0].Key != "2026-11-20" || days[0].Count != 30 {
		t.Errorf("Stats(day) = %+v, %v", days, err)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func TestIdempotency(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	r1, r2 := newResult(t, 1, nil), newResult(t, 2, nil)
	key := &record.Idempotency{ProjectID: 1, Key: "k-1", RequestSHA256: "aa", ResultIDs: []uuid.UUID{r1.ID}}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r1}, Idempotency: key}); err != nil {
		t.Fatal(err)
	}
	// The same key again: conflict, and nothing of the second batch is written.
	key2 := &record.Idempotency{ProjectID: 1, Key: "k-1", RequestSHA256: "bb", ResultIDs: []uuid.UUID{r2.ID}}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r2}, Idempotency: key2}); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("InsertResults(same key) = %v, want ErrConflict", err)
	}
	if _, err := db.GetResult(ctx, 1, r2.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("the conflicting batch's result was written: %v", err)
	}
	got, err := db.GetIdempotency(ctx, 1, "k-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*key, got); diff != "" {
		t.Errorf("GetIdempotency (-want +got):\n%s", diff)
	}
	if _, err := db.GetIdempotency(ctx, 1, "nope"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetIdempotency(nope) = %v, want ErrNotFound", err)
	}
	// A batch with a failed item (uuid.Nil) and its problems.
	batchKey := &record.Idempotency{ProjectID: 1, Key: "k-2", RequestSHA256: "cc", ResultIDs: []uuid.UUID{r2.ID, uuid.Nil},
		ItemErrors: json.RawMessage(`[null, {"status": 422}]`)}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r2}, Idempotency: batchKey}); err != nil {
		t.Fatal(err)
	}
	got, err = db.GetIdempotency(ctx, 1, "k-2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*batchKey, got, cmp.Comparer(jsonEqual)); diff != "" {
		t.Errorf("GetIdempotency(batch) (-want +got):\n%s", diff)
	}
}

func TestInsertAtomic(t *testing.T) {
	// A batch Postgres refuses (a NUL character in text) writes nothing,
	// not even its good rows or its idempotency key, and does not fail the
	// batches that shared its group commit.
	db, _ := mustMigrated(t)
	ctx := context.Background()
	good := newResult(t, 1, nil)
	bad := newResult(t, 2, func(r *record.Result) { s := "nul \x00 here"; r.FinalAnswer = &s })
	other := newResult(t, 3, nil)
	key := &record.Idempotency{ProjectID: 1, Key: "atomic", RequestSHA256: "aa", ResultIDs: []uuid.UUID{good.ID, bad.ID}}
	var wg sync.WaitGroup
	var badErr, otherErr error
	wg.Go(func() {
		badErr = db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{good, bad}, Idempotency: key})
	})
	wg.Go(func() { otherErr = db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{other}}) })
	wg.Wait()
	if badErr == nil || errors.Is(badErr, engine.ErrUnavailable) {
		t.Errorf("InsertResults(bad batch) = %v, want a data error", badErr)
	}
	if otherErr != nil {
		t.Errorf("InsertResults(other batch) = %v", otherErr)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM results WHERE id = ANY($1)) + (SELECT count(*) FROM idempotency_keys)`,
		[]uuid.UUID{good.ID, bad.ID}).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows left by the failed batch = %d, %v; want 0", n, err)
	}
	if _, err := db.GetResult(ctx, 1, other.ID); err != nil {
		t.Errorf("GetResult(other) = %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	// A port where nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db := mustOpen(t, "postgres://postgres@"+addr+"/test?sslmode=disable&connect_timeout=2")
	ctx := context.Background()
	if err := db.Ping(ctx); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Ping() = %v, want ErrUnavailable", err)
	}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{newResult(t, 1, nil)}}); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("InsertResults() = %v, want ErrUnavailable", err)
	}
	if _, err := db.Migrate(ctx); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Migrate() = %v, want ErrUnavailable", err)
	}
}

func TestRecovery(t *testing.T) {
	// Postgres goes away while the store runs (a proxy in front of it is
	// stopped): writes fail with ErrUnavailable and write nothing; when it
	// comes back, the same store works again without being reopened.
	url := storetest.NewDatabase(t)
	p := storetest.NewProxy(t, url)
	db := mustOpen(t, p.URL())
	ctx := context.Background()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{newResult(t, 1, nil)}}); err != nil {
		t.Fatal(err)
	}
	p.Down()
	lost := newResult(t, 2, nil)
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{lost}}); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("InsertResults(down) = %v, want ErrUnavailable", err)
	}
	if err := db.Ready(ctx); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Ready(down) = %v, want ErrUnavailable", err)
	}
	p.Up()
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready(up again) = %v", err)
	}
	back := newResult(t, 3, nil)
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{back}}); err != nil {
		t.Errorf("InsertResults(up again) = %v", err)
	}
	direct := mustOpen(t, url)
	var n int
	if err := direct.pool.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&n); err != nil || n != 2 {
		t.Errorf("results = %d, %v; want 2 (the one written while down must not exist)", n, err)
	}
}

// TestIdempotencyKeyHashed: the store keeps an Idempotency-Key's SHA-256
// only (migration 00013), never its text; a key stored before 00013 is
// hashed in place and still finds its record, and down gives the hash
// back as hex text.
func TestIdempotencyKeyHashed(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := newResult(t, 1, nil), newResult(t, 2, nil)
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("DownTo(12): %v", err)
	}
	const old, secret = "old-key-1", "AKIAQYLPMN5HHHFPZAM2" // an AWS access key id's form
	if _, err := db.pool.Exec(ctx, `INSERT INTO idempotency_keys (project_id, key, request_sha256, result_ids) VALUES (1, $1, 'aa', $2)`,
		old, []uuid.UUID{r1.ID}); err != nil {
		t.Fatal(err)
	}
	if v, err := db.Migrate(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("Migrate() = %d, %v", v, err)
	}
	if got, err := db.GetIdempotency(ctx, 1, old); err != nil || got.RequestSHA256 != "aa" || len(got.ResultIDs) != 1 || got.ResultIDs[0] != r1.ID {
		t.Errorf("GetIdempotency(key stored before 00013) = %+v, %v", got, err)
	}
	key := &record.Idempotency{ProjectID: 1, Key: secret, RequestSHA256: "bb", ResultIDs: []uuid.UUID{r2.ID}}
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r2}, Idempotency: key}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetIdempotency(ctx, 1, secret); err != nil || got.ResultIDs[0] != r2.ID {
		t.Errorf("GetIdempotency(new key) = %+v, %v", got, err)
	}
	rows, err := db.pool.Query(ctx, `SELECT encode(key_sha256, 'hex'), k::text FROM idempotency_keys k ORDER BY request_sha256`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Hash, Text string }
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	wantHash := []string{fmt.Sprintf("%x", sha256.Sum256([]byte(old))), fmt.Sprintf("%x", sha256.Sum256([]byte(secret)))}
	if len(got) != 2 || got[0].Hash != wantHash[0] || got[1].Hash != wantHash[1] {
		t.Errorf("stored key hashes = %v, want %v", got, wantHash)
	}
	for _, g := range got {
		if strings.Contains(g.Text, old) || strings.Contains(g.Text, secret) {
			t.Errorf("an idempotency row holds its key in clear: %s", g.Text)
		}
	}
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("DownTo(12) again: %v", err)
	}
	var keys []string
	if rows, err = db.pool.Query(ctx, `SELECT key FROM idempotency_keys ORDER BY request_sha256`); err == nil {
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || !slices.Equal(keys, wantHash) {
		t.Errorf("keys after down = %v, %v; want the hashes %v", keys, err, wantHash)
	}
}
