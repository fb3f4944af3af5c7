package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolscore/toolscore/internal/record"
)

// The service's writer sends a group's results to Postgres as one binary
// COPY whose tuples it encodes itself (appendResultTuple), in
// resultColumns' order and with the columns' types (resultColumnTypes):
// the same bytes pgx's CopyFrom would send for resultRow, without pgx's
// per-value type lookups and encoders, the []any of each row, or the pipe
// and goroutine CopyFrom feeds its encoder through. TestResultCopyTypes
// checks the types against the migrated schema, TestCopyMatchesPgx the
// stored rows against pgx's CopyFrom of resultRow.

// resultColumnTypes are the Postgres types of resultColumns, in order, as
// appendResultTuple encodes them.
var resultColumnTypes = []string{
	"uuid", "bigint", "timestamp with time zone",
	"text", "integer", "text", "text",
	"text", "text", "text", "jsonb", "text",
	"double precision", "text", "boolean", "double precision", "boolean",
	"text", "text", "text", "text",
	"text", "text", "text", "text", "text",
}

// copyResultsSQL is the COPY statement of appendResultTuple's tuples.
var copyResultsSQL = "COPY results (" + strings.Join(resultColumns, ", ") + ") FROM STDIN (FORMAT binary)"

// copyHeader starts a binary COPY stream: the signature, no flags, no
// header extension.
const copyHeader = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// y2kMicros is 2000-01-01T00:00:00Z in microseconds since the Unix epoch:
// Postgres' timestamps count microseconds from it.
const y2kMicros = 946_684_800_000_000

// copyBuffers holds the writer's COPY buffers (*[]byte) between groups.
var copyBuffers sync.Pool

// maxPooledCopy is the largest COPY buffer copyBuffers keeps.
const maxPooledCopy = 4 << 20

// copyResults writes the results of group's batches but those marked in
// conflicts on conn with one binary COPY and returns the rows written.
// Like CopyFrom, it runs in the connection's transaction when one is open.
func copyResults(ctx context.Context, conn *pgxpool.Conn, group []*writeReq, conflicts []bool) (int64, error) {
	bp, _ := copyBuffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := append((*bp)[:0], copyHeader...)
	for i, r := range group {
		if conflicts[i] {
			continue
		}
		for j := range r.batch.Results {
			b = appendResultTuple(b, &r.batch.Results[j])
		}
	}
	b = binary.BigEndian.AppendUint16(b, 0xffff) // the trailer: a tuple of -1 fields
	tag, err := conn.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(b), copyResultsSQL)
	if err != nil {
		// CopyFrom can return on a broken connection while its reader
		// goroutine still reads b, so b is not reused.
		return 0, err
	}
	if cap(b) <= maxPooledCopy {
		*bp = b
		copyBuffers.Put(bp)
	}
	return tag.RowsAffected(), nil
}

// appendResultTuple appends r as one binary COPY tuple of resultColumns,
// with resultRow's values: NULL for an empty contract name, task, run,
// agent or format warning, a version of 0 and a nil final answer; {} for
// no labels; empty text for nil JSON parts.
func appendResultTuple(b []byte, r *record.Result) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(resultColumns)))
	return appendResultFields(b, r, false)
}

// appendResultFields appends the fields of appendResultTuple's tuple,
// with trace_calls NULL for a result that shares its original's
// (record.Result.SharesTrace, set only by regrades) and expected_calls
// NULL when sharedExpected (its regrade's copy, migration 00016).
func appendResultFields(b []byte, r *record.Result, sharedExpected bool) []byte {
	b = appendField(b, r.ID[:])
	b = appendInt64(b, r.ProjectID)
	t := r.CreatedAt
	b = appendInt64(b, t.Unix()*1_000_000+int64(t.Nanosecond())/1000-y2kMicros)
	b = appendNullText(b, r.Contract.Name)
	if r.Contract.Version > 0 {
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(int32(r.Contract.Version)))
	} else {
		b = appendNull(b)
	}
	b = appendText(b, r.Contract.SHA256)
	b = appendText(b, string(r.Contract.Kind))
	b = appendNullText(b, r.TaskID)
	b = appendNullText(b, r.RunID)
	b = appendNullText(b, r.Agent)
	labels := labelsJSON(r)
	b = binary.BigEndian.AppendUint32(b, uint32(1+len(labels)))
	b = append(b, 1) // jsonb's binary format version
	b = append(b, labels...)
	b = appendText(b, r.Format)
	b = appendFloat64(b, r.Score)
	b = appendText(b, r.Grade)
	b = appendBool(b, r.Passed)
	b = appendFloat64(b, r.MinScore)
	b = appendBool(b, r.SafetyGate)
	b = appendField(b, r.Options)
	if sharedExpected {
		b = appendNull(b)
	} else {
		b = appendField(b, r.ExpectedCalls)
	}
	if r.SharesTrace {
		b = appendNull(b)
	} else {
		b = appendField(b, r.TraceCalls)
	}
	b = appendField(b, r.ScoredIndexes)
	if r.FinalAnswer != nil {
		b = appendText(b, *r.FinalAnswer)
	} else {
		b = appendNull(b)
	}
	b = appendField(b, r.Metrics)
	b = appendField(b, r.Checks)
	b = appendField(b, r.Issues)
	return appendNullText(b, r.FormatWarning)
}

// appendField appends a field of the bytes v (empty, never NULL, for nil).
func appendField(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

func appendText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendNullText appends s, or NULL for "".
func appendNullText(b []byte, s string) []byte {
	if s == "" {
		return appendNull(b)
	}
	return appendText(b, s)
}

func appendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, math.MaxUint32) }

func appendInt64(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendFloat64(b []byte, f float64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendBool(b []byte, v bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}
