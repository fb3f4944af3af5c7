package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
)

// The user-path benchmarks time what a user's call costs on the three
// workloads of testdata/perf (the gold files and traces the Python
// reference, Toolscore 1.8.1, is timed on; see BENCHMARKS.md): decoded
// (Evaluate with every check on a parsed contract and trace) and from
// bytes (the gold and trace bytes to a result, as `toolscore eval` does).

var perfWorkloads = []string{"small", "medium", "large"}

// readPerf returns a workload's gold file and trace.
func readPerf(tb testing.TB, name string) (gold, trace []byte) {
	tb.Helper()
	var err error
	if gold, err = os.ReadFile(filepath.Join("testdata", "perf", name+"_gold.json")); err != nil {
		tb.Fatal(err)
	}
	if trace, err = os.ReadFile(filepath.Join("testdata", "perf", name+"_trace.json")); err != nil {
		tb.Fatal(err)
	}
	return gold, trace
}

// BenchmarkUserDecoded is Python's evaluate(): Evaluate with every check
// on an already parsed gold file and trace.
func BenchmarkUserDecoded(b *testing.B) {
	for _, name := range perfWorkloads {
		b.Run(name, func(b *testing.B) {
			gold, trace := readPerf(b, name)
			c, err := engine.ParseContract(gold)
			if err != nil {
				b.Fatal(err)
			}
			p, err := format.Parse(trace, "auto")
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engine.Evaluate(ctx, c, p.Trace, engine.Options{SecretScanner: secretScanner}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUserFromBytes is Python's evaluate_trace() without its file
// reads: the gold and trace bytes to an encoded result.
func BenchmarkUserFromBytes(b *testing.B) {
	for _, name := range perfWorkloads {
		b.Run(name, func(b *testing.B) {
			gold, trace := readPerf(b, name)
			ctx := context.Background()
			b.SetBytes(int64(len(gold) + len(trace)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := engine.ParseContract(gold)
				if err != nil {
					b.Fatal(err)
				}
				p, err := format.Parse(trace, "auto")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := engine.Evaluate(ctx, c, p.Trace, engine.Options{SecretScanner: secretScanner}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUserJSONValid is the floor of the from-bytes target: one
// encoding/json.Valid pass over the gold and trace bytes.
func BenchmarkUserJSONValid(b *testing.B) {
	for _, name := range perfWorkloads {
		b.Run(name, func(b *testing.B) {
			gold, trace := readPerf(b, name)
			b.SetBytes(int64(len(gold) + len(trace)))
			for b.Loop() {
				if !json.Valid(gold) || !json.Valid(trace) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
