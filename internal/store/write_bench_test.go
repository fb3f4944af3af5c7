package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/store/storetest"
	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkInsertResults stores medium-workload results as the server
// does under load: 64 goroutines each insert one result at a time, and
// the group-commit writer shares transactions between them. Besides the
// server side (ns/op, allocs/op), it reports the CPU the database's
// backends used per result (pg-cpu-µs/op, from /proc: Postgres on this
// machine) and the CPU of this process per result (cpu-µs/op: the writer
// and the inserting goroutines).
//
//	go test ./internal/store -run '^$' -bench InsertResults -benchtime 20000x
func BenchmarkInsertResults(b *testing.B) {
	db, _ := mustMigrated(b)
	tmpl := mediumResult(b, db)
	ctx := context.Background()
	pg0, cpu0 := backendCPU(b, db), processCPU(b)
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := tmpl
			r.ID = uuid.Must(uuid.NewV7())
			r.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)
			if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((backendCPU(b, db)-pg0).Microseconds())/float64(b.N), "pg-cpu-µs/op")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// mediumResult returns a result of the medium workload's contract
// (stored in db) and trace, as the service stores it, for the insert
// benchmarks to copy.
func mediumResult(b *testing.B, db *DB) record.Result {
	b.Helper()
	v1, c1 := regradetest.MustContract(b, db, "medium", string(workload.Contract(workload.Medium)))
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	r := regradetest.Result(b, v1, c1, parsed.Trace, regradetest.Options{SafetyGate: true}, t0)
	r.TaskID, r.Agent, r.Labels = "task-1", "agent-1", map[string]string{"workload": "medium"}
	return r
}

// processCPU returns the CPU time (user + system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU returns the CPU time (user + system) the Postgres backends
// of db's pool have used, read from /proc (0 when Postgres runs
// elsewhere).
func backendCPU(tb testing.TB, db *DB) time.Duration {
	tb.Helper()
	rows, err := db.pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var total time.Duration
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			tb.Fatal(err)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+st) * 10 * time.Millisecond
	}
	return total
}

// BenchmarkWriteRegradeChunk writes one regrade chunk of 1,000 medium
// results (sharing their originals' trace calls and their regrade's
// expected calls, as most regrade results do) per iteration, each into a regrade of its own, and reports the CPU
// the database's backends used per result for the write alone
// (pg-cpu-µs/result): with every verdict the same as its original's, and
// with half of them changed (a regrade_changes row each).
//
//	go test ./internal/store -run '^$' -bench WriteRegradeChunk -benchtime 10x
func BenchmarkWriteRegradeChunk(b *testing.B) {
	for _, flip := range []int{0, 2} {
		name := "same"
		if flip > 0 {
			name = "half-changed"
		}
		b.Run(name, func(b *testing.B) { benchmarkWriteRegradeChunk(b, flip) })
	}
}

// benchmarkWriteRegradeChunk is BenchmarkWriteRegradeChunk; with flip > 0
// every flip-th original's verdict differs from its regrade result's.
func benchmarkWriteRegradeChunk(b *testing.B, flip int) {
	db, _ := mustMigrated(b)
	ctx := context.Background()
	body := string(workload.Contract(workload.Medium))
	v1, c1 := regradetest.MustContract(b, db, "medium", body)
	v2, _ := regradetest.MustContract(b, db, "medium", strings.Replace(body, `"min_score":0.8`, `"min_score":0.95`, 1))
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	tmpl := regradetest.Result(b, v1, c1, parsed.Trace, regradetest.Options{SafetyGate: true}, t0)
	tmpl.TaskID, tmpl.Agent, tmpl.Labels = "task-1", "agent-1", map[string]string{"workload": "medium"}
	regradetest.Seed(b, db, tmpl, 1000, time.Second)
	if _, err := db.pool.Exec(ctx, `ANALYZE results`); err != nil {
		b.Fatal(err)
	}
	var pg time.Duration
	for b.Loop() {
		b.StopTimer()
		rg := record.Regrade{ID: uuid.Must(uuid.NewV7()), ProjectID: record.DefaultProject, Target: v2,
			Selection: record.RegradeSelection{ContractName: "medium"}, SnapshotAt: t0.Add(24 * time.Hour), ChunkSize: 1000, CreatedAt: t0}
		if err := db.CreateRegrade(ctx, rg, nil); err != nil {
			b.Fatal(err)
		}
		var chunks []record.RegradeChunk
		if err := db.PlanRegrade(ctx, rg.ID, func(_ context.Context, _ pgx.Tx, _ record.Regrade, cs []record.RegradeChunk) error {
			chunks = cs
			return nil
		}); err != nil || len(chunks) != 1 {
			b.Fatalf("plan: %d chunks, %v", len(chunks), err)
		}
		originals, err := db.ReadRegradeChunk(ctx, rg, chunks[0])
		if err != nil || len(originals) != 1000 {
			b.Fatalf("read: %d, %v", len(originals), err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		outcomes := make([]record.RegradeOutcome, len(originals))
		for i := range originals {
			o := &originals[i]
			r := tmpl
			r.ID, r.CreatedAt, r.Contract = uuid.Must(uuid.NewV7()), now, v2
			r.RegradeOf, r.RegradeID, r.SharesTrace, r.SharesExpected = o.ID, rg.ID, true, true
			outcomes[i] = record.RegradeOutcome{Original: o.ResultSummary, OriginalIssue: o.FirstIssue, Result: &r}
			if flip > 0 && i%flip == 0 {
				outcomes[i].Original.Passed = !r.Passed
			}
		}
		pg0 := backendCPU(b, db)
		b.StartTimer()
		counts, err := db.WriteRegradeChunk(ctx, record.ChunkWrite{RegradeID: rg.ID, ProjectID: rg.ProjectID, Chunk: 0, Outcomes: outcomes}, nil)
		if err != nil || counts.Done != 1000 || (flip > 0) != (counts.Changed > 0) {
			b.Fatalf("write: %+v, %v", counts, err)
		}
		b.StopTimer()
		pg += backendCPU(b, db) - pg0
		b.StartTimer()
	}
	b.ReportMetric(float64(pg.Microseconds())/float64(b.N)/1000, "pg-cpu-µs/result")
}

// BenchmarkInsertResultsPaced stores medium-workload results arriving at
// a steady 2,000 a second, each from a goroutine of its own (as the
// service's requests do), with the default writer (parallel=16, a write
// delay of 1 ms), without the delay (delay=none) and with every group
// written at once (parallel=1, no delay). Besides what
// BenchmarkInsertResults reports, it gives the commits per result
// (groups/op), the slowest wait for a commit (max-wait-ms) and the
// process's voluntary context switches per result (csw/op).
//
//	go test ./internal/store -run '^$' -bench InsertResultsPaced -benchtime 10000x
func BenchmarkInsertResultsPaced(b *testing.B) {
	b.Run("parallel=16", func(b *testing.B) { benchmarkInsertPaced(b, 16, 0, 2000) })
	b.Run("parallel=16/delay=none", func(b *testing.B) { benchmarkInsertPaced(b, 16, -1, 2000) })
	b.Run("parallel=1", func(b *testing.B) { benchmarkInsertPaced(b, 1, -1, 2000) })
}

func benchmarkInsertPaced(b *testing.B, parallel int, delay time.Duration, rate int) {
	url := storetest.NewDatabase(b)
	reg := prometheus.NewRegistry()
	db, err := Open(context.Background(), Config{URL: url, ParallelRows: parallel, WriteDelay: delay, Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	tmpl := mediumResult(b, db)
	ctx := context.Background()
	groups0, csw0 := writeGroups(b, reg), contextSwitches(b)
	pg0, cpu0 := backendCPU(b, db), processCPU(b)
	var wg sync.WaitGroup
	var maxWait atomic.Int64
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			r := tmpl
			r.ID = uuid.Must(uuid.NewV7())
			r.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)
			t := time.Now()
			if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r}}); err != nil {
				b.Error(err)
			}
			for w := int64(time.Since(t)); ; {
				old := maxWait.Load()
				if w <= old || maxWait.CompareAndSwap(old, w) {
					break
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((backendCPU(b, db)-pg0).Microseconds())/float64(b.N), "pg-cpu-µs/op")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(writeGroups(b, reg)-groups0)/float64(b.N), "groups/op")
	b.ReportMetric(float64(contextSwitches(b)-csw0)/float64(b.N), "csw/op")
	b.ReportMetric(float64(maxWait.Load())/1e6, "max-wait-ms")
}

// contextSwitches returns the voluntary context switches of this
// process's threads so far: each time one slept (on a futex, in
// epoll_wait) for want of work.
func contextSwitches(tb testing.TB) int64 {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Nvcsw
}

// writeGroups returns the group-commit transactions written so far, from
// the writer's histogram in reg.
func writeGroups(tb testing.TB, reg *prometheus.Registry) uint64 {
	tb.Helper()
	return groupHistogram(tb, reg).GetSampleCount()
}
