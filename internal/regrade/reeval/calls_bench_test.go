package reeval

import (
	"encoding/json"
	"testing"

	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkCalls measures reading back the stored trace_calls of a medium
// result (12 calls with nested arguments and results).
func BenchmarkCalls(b *testing.B) {
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(parsed.Trace.Calls)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Calls(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallsStd is BenchmarkCalls with encoding/json alone (the
// reference stdCalls), for comparison.
func BenchmarkCallsStd(b *testing.B) {
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(parsed.Trace.Calls)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdCalls(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallsReader is BenchmarkCalls with one Reader reading the
// stored calls again and again, as a grading goroutine does.
func BenchmarkCallsReader(b *testing.B) {
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(parsed.Trace.Calls)
	if err != nil {
		b.Fatal(err)
	}
	var r Reader
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Calls(raw); err != nil {
			b.Fatal(err)
		}
	}
}
