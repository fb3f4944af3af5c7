package engine_test

import (
	"context"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/workload"
)

// These benchmarks live in the external test package because they decode
// traces with format.Parse, which imports engine.

var decodeSizes = []workload.Size{workload.Small, workload.Medium, workload.Large, workload.WorstCase}

// BenchmarkDecodeAndEvaluate measures what `toolscore eval` and the server
// do for one request: ParseContract on the contract document, format.Parse
// with format detection on the plain trace document, then Evaluate.
// SetBytes counts both documents.
func BenchmarkDecodeAndEvaluate(b *testing.B) {
	for _, s := range decodeSizes {
		b.Run(s.Name, func(b *testing.B) {
			cdoc, tdoc := workload.Contract(s), workload.PlainTrace(s)
			ctx := context.Background()
			b.SetBytes(int64(len(cdoc) + len(tdoc)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := engine.ParseContract(cdoc)
				if err != nil {
					b.Fatal(err)
				}
				p, err := format.Parse(tdoc, "auto")
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

// BenchmarkParseContract measures ParseContract alone (JSON decoding,
// schema validation, matcher compilation) on each workload's contract.
func BenchmarkParseContract(b *testing.B) {
	for _, s := range decodeSizes {
		b.Run(s.Name, func(b *testing.B) {
			doc := workload.Contract(s)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engine.ParseContract(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseTrace measures format.Parse with detection on each
// workload's trace, written in the plain format and as an OpenAI Chat
// message list.
func BenchmarkParseTrace(b *testing.B) {
	for _, s := range decodeSizes {
		for _, tc := range []struct {
			form string
			doc  []byte
		}{{"plain", workload.PlainTrace(s)}, {"openai", workload.OpenAITrace(s)}} {
			b.Run(s.Name+"/"+tc.form, func(b *testing.B) {
				p, err := format.Parse(tc.doc, "auto")
				if err != nil {
					b.Fatal(err)
				}
				if p.Format != tc.form || len(p.Trace.Calls) != s.Calls {
					b.Fatalf("Parse read %q with %d calls, want %q with %d", p.Format, len(p.Trace.Calls), tc.form, s.Calls)
				}
				b.SetBytes(int64(len(tc.doc)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := format.Parse(tc.doc, "auto"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
