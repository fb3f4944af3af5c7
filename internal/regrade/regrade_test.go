package regrade

import (
	"context"
	"errors"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

const (
	flightsV1 = `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^a"}}}]}`
	flightsV2 = `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^a"}}}, {"tool": "book"}], "min_score": 0.95}`
)

var (
	t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	// traceBoth fails v1 (an unexpected call: 0.65, D) and passes v2 (1,
	// A); traceSearch passes v1 (1, A) and fails v2 (0.9, A).
	traceBoth   = engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc"})}, {Tool: "book", Args: jsondoc.MustFromAny(map[string]any{})}}}
	traceSearch = engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc"})}}}
)

// *store.DB is the Store cmd/server passes in.
var _ Store = (*store.DB)(nil)

// testBundle is a migrated database with contract flights v1 and v2, and
// a Service on it (not started).
type testBundle struct {
	db     *store.DB
	svc    *Service
	reg    *prometheus.Registry
	v1, v2 record.ContractRef
	c1, c2 *engine.Contract
	events <-chan *river.Event
	// seen counts the job events consumed, by job kind.
	seen map[string]int
}

func setup(t *testing.T, cfg Config) *testBundle {
	t.Helper()
	return setupURL(t, cfg, storetest.NewDatabase(t), nil)
}

// setupURL is setup on the database at url; wrap, when not nil, wraps the
// store the service uses.
func setupURL(t *testing.T, cfg Config, url string, wrap func(*store.DB) Store) *testBundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: url, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	b := &testBundle{db: db, reg: prometheus.NewRegistry(), seen: map[string]int{}}
	b.v1, b.c1 = regradetest.MustContract(t, db, "flights", flightsV1)
	b.v2, b.c2 = regradetest.MustContract(t, db, "flights", flightsV2)
	cfg.Store, cfg.Registerer, cfg.Logger = db, b.reg, zaptest.NewLogger(t)
	if wrap != nil {
		cfg.Store = wrap(db)
	}
	if b.svc, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	events, cancel := b.svc.client.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	t.Cleanup(cancel)
	b.events = events
	return b
}

// start starts the service's workers and stops them when the test ends.
func (b *testBundle) start(t *testing.T) {
	t.Helper()
	if err := b.svc.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.svc.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
}

// seed stores n originals of trace at v1, one minute apart from at.
func (b *testBundle) seed(t *testing.T, trace engine.Trace, n int, at time.Time) record.Result {
	t.Helper()
	r := regradetest.Result(t, b.v1, b.c1, trace, regradetest.Options{SafetyGate: true}, at)
	regradetest.Seed(t, b.db, r, n, time.Minute)
	return r
}

// wait waits, on river's job events, until regrade id is final.
func (b *testBundle) wait(t *testing.T, id uuid.UUID) record.Regrade {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		rg, err := b.svc.Get(context.Background(), record.DefaultProject, id)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if rg.State.Final() {
			return rg
		}
		select {
		case ev := <-b.events:
			b.saw(t, ev)
		case <-timeout:
			t.Fatalf("regrade %s still %s after 60 s: %+v", id, rg.State, rg)
		}
	}
}

func (b *testBundle) saw(t *testing.T, ev *river.Event) {
	t.Helper()
	b.seen[ev.Job.Kind]++
	if ev.Kind == river.EventKindJobFailed {
		t.Logf("job %s failed: %v", ev.Job.Kind, ev.Job.Errors)
	}
}

// waitJobs waits until n jobs of kind have ended (completed, failed or
// cancelled) since the test began: their workers have returned, so their
// metrics are counted.
func (b *testBundle) waitJobs(t *testing.T, kind string, n int) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for b.seen[kind] < n {
		select {
		case ev := <-b.events:
			b.saw(t, ev)
		case <-timeout:
			t.Fatalf("%d %s jobs ended after 60 s, want %d", b.seen[kind], kind, n)
		}
	}
}

// counters keeps the fields of a regrade that tests compare.
func counters(rg record.Regrade) record.Regrade {
	return record.Regrade{State: rg.State, Total: rg.Total, Chunks: rg.Chunks, ChunksDone: rg.ChunksDone,
		Done: rg.Done, Failed: rg.Failed, PassToFail: rg.PassToFail, FailToPass: rg.FailToPass, Changed: rg.Changed, Error: rg.Error}
}

// originalsDigest hashes every original row, to show they never change.
func (b *testBundle) originalsDigest(t *testing.T) string {
	t.Helper()
	var d string
	err := b.db.Pool().QueryRow(context.Background(),
		`SELECT md5(string_agg(r::text, '|' ORDER BY id)) FROM results r WHERE regrade_id IS NULL`).Scan(&d)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (b *testBundle) count(t *testing.T, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := b.db.Pool().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRegrade(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{ChunkSize: 7})
	ctx := context.Background()
	b.seed(t, traceBoth, 30, t0)
	b.seed(t, traceSearch, 20, t0.Add(time.Hour))
	// A stored row that no longer parses, and a result of another contract.
	broken := b.seed(t, traceSearch, 1, t0.Add(2*time.Hour))
	if _, err := b.db.Pool().Exec(ctx, `UPDATE results SET trace_calls = '{"tool": "x"}' WHERE id = $1`, broken.ID); err != nil {
		t.Fatal(err)
	}
	hotels, hc := regradetest.MustContract(t, b.db, "hotels", `[{"tool": "search"}]`)
	regradetest.Seed(t, b.db, regradetest.Result(t, hotels, hc, traceBoth, regradetest.Options{SafetyGate: true}, t0), 3, time.Minute)
	before := b.originalsDigest(t)

	ref, n, err := b.svc.DryRun(ctx, record.DefaultProject, "flights", 0, record.RegradeSelection{})
	if err != nil || n != 51 || ref.Version != 2 {
		t.Fatalf("DryRun = %+v, %d, %v; want flights@2, 51", ref, n, err)
	}
	b.start(t)
	rg, err := b.svc.Create(ctx, record.DefaultProject, "flights", 0, record.RegradeSelection{})
	if err != nil {
		t.Fatal(err)
	}
	if rg.State != record.RegradePending || rg.Target != b.v2 || rg.Selection.ContractName != "flights" {
		t.Errorf("Create = %+v", rg)
	}
	final := b.wait(t, rg.ID)
	want := record.Regrade{State: record.RegradeCompleted, Total: 51, Chunks: 8, ChunksDone: 8, Done: 50, Failed: 1,
		PassToFail: 20, FailToPass: 30, Changed: 50}
	if diff := cmp.Diff(want, counters(final)); diff != "" {
		t.Errorf("final regrade (-want +got):\n%s", diff)
	}
	b.waitJobs(t, chunkArgs{}.Kind(), 8)
	if final.StartedAt == nil || final.FinishedAt == nil || final.FinishedAt.Before(*final.StartedAt) {
		t.Errorf("times: started %v, finished %v", final.StartedAt, final.FinishedAt)
	}
	// Mean score delta: +0.35 for traceBoth, -0.1 for traceSearch.
	if mean := final.ScoreDeltaSum / float64(final.Done); mean < 0.169999 || mean > 0.170001 {
		t.Errorf("mean score delta = %v, want 0.17", mean)
	}
	if got := b.originalsDigest(t); got != before {
		t.Error("originals changed")
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE regrade_id = $1 AND contract_version = 2
		AND regrade_of IN (SELECT id FROM results WHERE regrade_id IS NULL AND contract_name = 'flights')`, rg.ID); n != 50 {
		t.Errorf("new results = %d, want 50", n)
	}
	fails, err := b.svc.Failures(ctx, record.DefaultProject, rg.ID, uuid.Nil, 10)
	if err != nil || len(fails) != 1 || fails[0].OriginalID != broken.ID || fails[0].Reason != "trace_calls: json: cannot unmarshal object into Go value of type []engine.ToolCall" {
		t.Errorf("Failures = %+v, %v", fails, err)
	}
	changes, err := b.svc.Changes(ctx, record.DefaultProject, rg.ID, uuid.Nil, 100)
	if err != nil || len(changes) != 50 {
		t.Errorf("Changes = %d, %v, want 50", len(changes), err)
	}
	for name, want := range map[string]float64{
		`toolscore_regrade_results_total{outcome="regraded"}`:            50,
		`toolscore_regrade_results_total{outcome="failed"}`:              1,
		`toolscore_regrade_flips_total{direction="pass_to_fail"}`:        20,
		`toolscore_regrade_flips_total{direction="fail_to_pass"}`:        30,
		`toolscore_regrade_jobs_total{kind="chunk",outcome="completed"}`: 8,
		`toolscore_regrades_active`:                                      0,
	} {
		if got := metricValue(t, b.reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metricValue(t, b.reg, "toolscore_regrade_chunk_duration_seconds"); got != 8 {
		t.Errorf("chunk durations observed = %v, want 8", got)
	}

	// A chunk job run a second time writes and counts nothing. The
	// regrade is final, so such a job would return at once: reopen it to
	// make the chunk really run again.
	if _, err := b.db.Pool().Exec(ctx, `UPDATE regrades SET state = 'running' WHERE id = $1`, rg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.client.Insert(ctx, chunkArgs{ProjectID: 1, RegradeID: rg.ID, Chunk: record.RegradeChunk{Index: 0,
		Upto: record.RegradeKey{CreatedAt: t0.Add(6 * time.Minute), ID: uuid.Max}}}, nil); err != nil {
		t.Fatal(err)
	}
	b.waitJobs(t, chunkArgs{}.Kind(), 9)
	// Its counters are unchanged (the reopened regrade, all of whose chunks
	// are done, completes again).
	again, _ := b.svc.Get(ctx, record.DefaultProject, rg.ID)
	if diff := cmp.Diff(want, counters(again)); diff != "" {
		t.Errorf("after a repeated chunk (-want +got):\n%s", diff)
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID); n != 50 {
		t.Errorf("results after a repeated chunk = %d, want 50", n)
	}
	if got := metricValue(t, b.reg, `toolscore_regrade_results_total{outcome="skipped"}`); got != 7 {
		t.Errorf("skipped = %v, want 7", got)
	}
}

// metricValue returns the value of one series, named as in the
// exposition format.
func metricValue(t *testing.T, g prometheus.Gatherer, series string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			if len(m.GetLabel()) > 0 {
				name += "{"
				for i, l := range m.GetLabel() {
					if i > 0 {
						name += ","
					}
					name += l.GetName() + `="` + l.GetValue() + `"`
				}
				name += "}"
			}
			if name != series {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s", series)
	return 0
}

func TestRegradeEmptySelection(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.seed(t, traceBoth, 3, t0)
	b.start(t)
	rg, err := b.svc.Create(context.Background(), record.DefaultProject, "flights", 2, record.RegradeSelection{Agent: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	final := b.wait(t, rg.ID)
	if diff := cmp.Diff(record.Regrade{State: record.RegradeCompleted}, counters(final)); diff != "" {
		t.Errorf("empty regrade (-want +got):\n%s", diff)
	}
}

func TestRegradeCreateErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	// A registry body that no longer validates (stored before a stricter
	// engine, say).
	if _, err := b.db.Pool().Exec(ctx, `INSERT INTO contracts (project_id, name, version, sha256, kind, combinations, body)
		VALUES (1, 'broken', 1, repeat('a', 64), 'contract', 1, '{"contract_version": 2, "required": 5}')`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		version int
		want    error
	}{
		{"nope", 0, engine.ErrNotFound},
		{"flights", 3, engine.ErrNotFound},
		{"broken", 0, engine.ErrInvalidContract},
	} {
		_, err := b.svc.Create(ctx, record.DefaultProject, tc.name, tc.version, record.RegradeSelection{})
		if !errors.Is(err, tc.want) {
			t.Errorf("Create(%s@%d) = %v, want %v", tc.name, tc.version, err, tc.want)
		}
		if _, _, err := b.svc.DryRun(ctx, record.DefaultProject, tc.name, tc.version, record.RegradeSelection{}); !errors.Is(err, tc.want) {
			t.Errorf("DryRun(%s@%d) = %v, want %v", tc.name, tc.version, err, tc.want)
		}
	}
	var ve *engine.ValidationError
	if _, err := b.svc.Create(ctx, record.DefaultProject, "broken", 1, record.RegradeSelection{}); !errors.As(err, &ve) || ve.Errors[0].Pointer != "/required" {
		t.Errorf("Create(broken) = %v, want a validation error at /required", err)
	}
	if _, err := b.svc.Cancel(ctx, record.DefaultProject, uuid.Must(uuid.NewV7())); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Cancel(unknown) = %v, want ErrNotFound", err)
	}
}

func TestRegradeCancel(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.seed(t, traceBoth, 5, t0)
	// Not started: the plan job waits in the queue.
	rg, err := b.svc.Create(ctx, record.DefaultProject, "flights", 2, record.RegradeSelection{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.Cancel(ctx, record.DefaultProject, rg.ID)
	if err != nil || got.State != record.RegradeCancelled || got.FinishedAt == nil {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	jobs, err := b.svc.client.JobList(ctx, river.NewJobListParams().Kinds(planArgs{}.Kind()).
		States(rivertype.JobStateCancelled, rivertype.JobStateAvailable))
	if err != nil || len(jobs.Jobs) != 1 || jobs.Jobs[0].State != rivertype.JobStateCancelled {
		t.Fatalf("plan jobs after cancel = %+v, %v; want one cancelled", jobs, err)
	}
	// Cancelling again returns the regrade unchanged.
	if again, err := b.svc.Cancel(ctx, record.DefaultProject, rg.ID); err != nil || again.State != record.RegradeCancelled {
		t.Errorf("second Cancel = %+v, %v", again, err)
	}
	// Workers now run a second regrade but never the cancelled one.
	b.start(t)
	rg2, err := b.svc.Create(ctx, record.DefaultProject, "flights", 2, record.RegradeSelection{})
	if err != nil {
		t.Fatal(err)
	}
	if final := b.wait(t, rg2.ID); final.State != record.RegradeCompleted || final.Done != 5 {
		t.Errorf("second regrade = %+v", counters(final))
	}
	if n := b.count(t, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID); n != 0 {
		t.Errorf("results of the cancelled regrade = %d, want 0", n)
	}
}

// cuttingStore cuts Postgres off (proxy.Down) inside the transaction of
// chunk 5's first write, just before it commits, and brings it back a
// second later.
type cuttingStore struct {
	*store.DB
	proxy *storetest.Proxy
	once  sync.Once
	up    chan struct{}
}

func (c *cuttingStore) WriteRegradeChunk(ctx context.Context, cw record.ChunkWrite, hook func(context.Context, pgx.Tx) error) (record.ChunkCounts, error) {
	if cw.Chunk != 5 {
		return c.DB.WriteRegradeChunk(ctx, cw, hook)
	}
	return c.DB.WriteRegradeChunk(ctx, cw, func(ctx context.Context, tx pgx.Tx) error {
		if err := hook(ctx, tx); err != nil {
			return err
		}
		c.once.Do(func() {
			c.proxy.Down()
			go func() {
				outage := time.NewTimer(time.Second) // the outage's length, not a synchronisation
				<-outage.C
				c.proxy.Up()
				close(c.up)
			}()
		})
		return nil
	})
}

// TestRegradeSurvivesPostgresRestart cuts every connection to Postgres for
// a second while a chunk commits: the chunk fails and retries, and in the
// end every original has exactly one new result.
func TestRegradeSurvivesPostgresRestart(t *testing.T) {
	t.Parallel()
	proxy := storetest.NewProxy(t, storetest.NewDatabase(t))
	cut := &cuttingStore{proxy: proxy, up: make(chan struct{})}
	b := setupURL(t, Config{ChunkSize: 100, Workers: 1, DatabaseURL: proxy.URL()}, proxy.URL(),
		func(db *store.DB) Store { cut.DB = db; return cut })
	ctx := context.Background()
	const n = 1000
	b.seed(t, traceSearch, n, t0)
	b.start(t)
	rg, err := b.svc.Create(ctx, record.DefaultProject, "flights", 2, record.RegradeSelection{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cut.up:
	case <-time.After(60 * time.Second):
		t.Fatal("chunk 5 never ran")
	}
	final := b.wait(t, rg.ID)
	want := record.Regrade{State: record.RegradeCompleted, Total: n, Chunks: n / 100, ChunksDone: n / 100, Done: n, PassToFail: n, Changed: n}
	if diff := cmp.Diff(want, counters(final)); diff != "" {
		t.Errorf("after the outage (-want +got):\n%s", diff)
	}
	if got := b.count(t, `SELECT count(*) FROM results WHERE regrade_id = $1`, rg.ID); got != n {
		t.Errorf("new results = %d, want exactly %d", got, n)
	}
	b.waitJobs(t, chunkArgs{}.Kind(), n/100+1) // 10 completions and the failed attempt
	if got := metricValue(t, b.reg, `toolscore_regrade_jobs_total{kind="chunk",outcome="retried"}`); got < 1 {
		t.Errorf("chunk retries = %v, want at least 1", got)
	}
}
