package engine

import (
	"testing"

	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkContractSchema measures the JSON Schema validation of
// ParseContract alone (jsonschema/v5 on the decoded document), the part of
// BenchmarkParseContract that is neither decoding nor building the
// contract.
func BenchmarkContractSchema(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(s.Name, func(b *testing.B) {
			doc, err := DecodeJSON(workload.Contract(s))
			if err != nil {
				b.Fatal(err)
			}
			if errs, err := schemaErrors(doc); err != nil || len(errs) > 0 {
				b.Fatalf("schemaErrors = %v, %v; want a valid contract", errs, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := schemaErrors(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
