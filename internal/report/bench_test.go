package report

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/workload"
)

// benchBaselineLines is the number of saved results in the baseline the
// reading benchmarks read.
const benchBaselineLines = 1000

// benchBaseline grades benchBaselineLines medium traces (internal/workload,
// a mix of grades) against the medium gold file and returns the gold
// file's contract and identity and the results as eval --json writes
// them, one per line, each with its own source.
func benchBaseline(b *testing.B) (c *engine.Contract, sha string, data []byte) {
	b.Helper()
	gold, _, err := workload.Perf("medium")
	if err != nil {
		b.Fatal(err)
	}
	if c, err = engine.ParseContract(gold); err != nil {
		b.Fatal(err)
	}
	if sha, err = ExpectationSHA256(gold); err != nil {
		b.Fatal(err)
	}
	var traces bytes.Buffer
	if err := workload.WritePerfLines(&traces, "medium", benchBaselineLines); err != nil {
		b.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(traces.Bytes(), []byte("\n")), []byte("\n")) {
		p, err := format.Parse(line, "auto")
		if err != nil {
			b.Fatal(err)
		}
		res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if data, err = AppendSaved(data, Header{ExpectationSHA256: sha, Source: fmt.Sprintf("runs/%04d.json", i)}, res); err != nil {
			b.Fatal(err)
		}
		data = append(data, '\n')
	}
	return c, sha, data
}

// BenchmarkReadBatchBaseline reads a baseline of benchBaselineLines
// medium results (eval --baseline over many traces), and, as the floor,
// only ReadSavedValues's reading and checking of its values.
func BenchmarkReadBatchBaseline(b *testing.B) {
	c, sha, data := benchBaseline(b)
	b.Run("ReadBatchBaseline", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			bb, err := ReadBatchBaseline(bytes.NewReader(data), "base.jsonl", sha, c, "medium_gold.json")
			if err != nil {
				b.Fatal(err)
			}
			if bb.Traces != benchBaselineLines {
				b.Fatalf("%d traces, want %d", bb.Traces, benchBaselineLines)
			}
		}
	})
	b.Run("ReadSavedValues", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			err := ReadSavedValues(bytes.NewReader(data), "base.jsonl", func(v *SavedValue) error { return v.Err })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
