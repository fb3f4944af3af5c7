package engine

import (
	"context"
	"testing"

	"github.com/toolscore/toolscore/internal/workload"
)

var benchSizes = []workload.Size{workload.Small, workload.Medium, workload.Large, workload.WorstCase}

// BenchmarkEvaluate measures Evaluate on already decoded input.
func BenchmarkEvaluate(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(s.Name, func(b *testing.B) {
			c := mustContract(b, string(workload.Contract(s)))
			tr := mustTrace(b, string(workload.PlainTrace(s)))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Evaluate(ctx, c, tr, Options{SecretScanner: testSecrets}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
