package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolscore/toolscore/internal/record"
)

// BenchmarkWriteGroup writes one group of medium-workload results per
// iteration on one connection, one group after another, by copyResults'
// COPY (what the writer does) and by insertResultsPipelined (one
// prepared multi-row INSERT of the same binary fields, its Bind, Execute
// and Sync in one write), groups of 1, 4 and 16 results, each its own
// transaction. It reports the CPU of this process (cpu-µs/op) and of the
// connection's Postgres backend (pg-cpu-µs/op) per group: the INSERT
// saves CopyFrom's two extra writes and its goroutine, and Postgres some
// CPU on a one-row group, but costs this process more per row
// (BENCHMARKS.md).
//
//	go test ./internal/store -run '^$' -bench WriteGroup -benchtime 1000x
func BenchmarkWriteGroup(b *testing.B) {
	for _, rows := range []int{1, 4, 16} {
		for _, w := range []struct {
			name  string
			write func(context.Context, *pgxpool.Conn, []*writeReq, []bool) (int64, error)
		}{{"copy", copyResults}, {"insert", insertResultsPipelined}} {
			b.Run(fmt.Sprintf("%s/rows=%d", w.name, rows), func(b *testing.B) { benchmarkWriteGroup(b, rows, w.write) })
		}
	}
}

func benchmarkWriteGroup(b *testing.B, rows int, write func(context.Context, *pgxpool.Conn, []*writeReq, []bool) (int64, error)) {
	db, _ := mustMigrated(b)
	tmpl := mediumResult(b, db)
	ctx := context.Background()
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		b.Fatal(err)
	}
	group, conflicts := make([]*writeReq, rows), make([]bool, rows)
	next := func() {
		now := time.Now().UTC().Truncate(time.Microsecond)
		for i := range group {
			r := tmpl
			r.ID, r.CreatedAt = uuid.Must(uuid.NewV7()), now
			group[i] = &writeReq{batch: record.ResultBatch{Results: []record.Result{r}}}
		}
	}
	next()
	if _, err := write(ctx, conn, group, conflicts); err != nil { // prepares what it needs
		b.Fatal(err)
	}
	pg0, cpu0 := pidCPU(b, pid), processCPU(b)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		next()
		b.StartTimer()
		if n, err := write(ctx, conn, group, conflicts); err != nil || n != int64(rows) {
			b.Fatalf("wrote %d rows, %v", n, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((pidCPU(b, pid)-pg0).Microseconds())/float64(b.N), "pg-cpu-µs/op")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// insertResultsPipelined is BenchmarkWriteGroup's alternative to
// copyResults: the results of group's batches but those marked in
// conflicts as one INSERT of as many rows, prepared on the connection for
// that number, its parameters the binary fields appendResultFields
// encodes.
func insertResultsPipelined(ctx context.Context, conn *pgxpool.Conn, group []*writeReq, conflicts []bool) (int64, error) {
	var b []byte
	rows := 0
	for i, r := range group {
		if conflicts[i] {
			continue
		}
		for j := range r.batch.Results {
			b = appendResultFields(b, &r.batch.Results[j], false)
			rows++
		}
	}
	var q strings.Builder
	q.WriteString("INSERT INTO results (" + strings.Join(resultColumns, ", ") + ") VALUES ")
	for r := range rows {
		if r > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(")
		for i := range resultColumns {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "$%d", r*len(resultColumns)+i+1)
		}
		q.WriteString(")")
	}
	sd, err := conn.Conn().Prepare(ctx, fmt.Sprintf("bench_insert_results_%d", rows), q.String())
	if err != nil {
		return 0, err
	}
	// Each field is its length (-1 for NULL) and its bytes.
	params := make([][]byte, rows*len(resultColumns))
	for i, p := 0, 0; i < len(params); i++ {
		n := int32(binary.BigEndian.Uint32(b[p:]))
		p += 4
		if n >= 0 {
			params[i] = b[p : p+int(n) : p+int(n)]
			p += int(n)
		}
	}
	var batch pgconn.Batch
	batch.ExecStatement(sd, params, []int16{1}, nil)
	results, err := conn.Conn().PgConn().ExecBatch(ctx, &batch).ReadAll()
	if err != nil {
		return 0, err
	}
	var written int64
	for _, r := range results {
		if r.Err != nil {
			return 0, r.Err
		}
		written += r.CommandTag.RowsAffected()
	}
	return written, nil
}

// pidCPU returns the CPU time (user + system) process pid has used, read
// from /proc (0 when it is not on this machine).
func pidCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}
