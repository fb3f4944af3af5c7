package store

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
)

// readBenchFixture stores 20,000 originals at flights v1 and a planned
// regrade of them to v2 in chunks of 1,000, and returns the middle chunk
// (what reading one chunk costs must not grow with the regrade's size)
// and the first original's id.
func readBenchFixture(b *testing.B) (*DB, record.Regrade, record.RegradeChunk, uuid.UUID) {
	b.Helper()
	db, _ := mustMigrated(b)
	v1, c1 := regradetest.MustContract(b, db, "flights", flightsV1)
	v2, _ := regradetest.MustContract(b, db, "flights", flightsV2)
	first := regradetest.Seed(b, db, regradetest.Result(b, v1, c1, traceBoth, regradetest.Options{SafetyGate: true}, t0), 20000, time.Second)
	if _, err := db.pool.Exec(context.Background(), `ANALYZE results`); err != nil {
		b.Fatal(err)
	}
	rg := record.Regrade{ID: uuid.Must(uuid.NewV7()), ProjectID: record.DefaultProject, Target: v2,
		Selection: record.RegradeSelection{ContractName: "flights"}, SnapshotAt: t0.Add(24 * time.Hour), ChunkSize: 1000, CreatedAt: t0}
	ctx := context.Background()
	if err := db.CreateRegrade(ctx, rg, nil); err != nil {
		b.Fatal(err)
	}
	var chunks []record.RegradeChunk
	if err := db.PlanRegrade(ctx, rg.ID, func(_ context.Context, _ pgx.Tx, _ record.Regrade, cs []record.RegradeChunk) error {
		chunks = cs
		return nil
	}); err != nil || len(chunks) != 20 {
		b.Fatalf("plan: %d chunks, %v", len(chunks), err)
	}
	planned, err := db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		b.Fatal(err)
	}
	return db, planned, chunks[len(chunks)/2], first
}

// BenchmarkResultReads times the store's result reads on 20,000 stored
// originals: one regrade chunk of 1,000 (ReadRegradeChunk, with the
// Postgres CPU per result read), a page of 500 summaries (ListResults) and
// one full result (GetResult).
func BenchmarkResultReads(b *testing.B) {
	db, rg, chunk, id := readBenchFixture(b)
	ctx := context.Background()
	b.Run("ReadRegradeChunk", func(b *testing.B) {
		pg0 := backendCPU(b, db)
		for b.Loop() {
			if os, err := db.ReadRegradeChunk(ctx, rg, chunk); err != nil || len(os) != 1000 {
				b.Fatalf("%d, %v", len(os), err)
			}
		}
		b.ReportMetric(float64((backendCPU(b, db)-pg0).Microseconds())/float64(b.N)/1000, "pg-cpu-µs/result")
	})
	b.Run("ListResults", func(b *testing.B) {
		for b.Loop() {
			if rs, err := db.ListResults(ctx, 1, record.ResultFilter{ContractName: "flights"}, nil, 500); err != nil || len(rs) != 500 {
				b.Fatalf("%d, %v", len(rs), err)
			}
		}
	})
	b.Run("GetResult", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.GetResult(ctx, 1, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
