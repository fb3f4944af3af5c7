package jsonvalue

import (
	"testing"

	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkDocument measures Document on the medium workload's contract
// and plain trace.
func BenchmarkDocument(b *testing.B) {
	for _, tc := range []struct {
		name string
		doc  []byte
	}{
		{"contract-medium", workload.Contract(workload.Medium)},
		{"plain-medium", workload.PlainTrace(workload.Medium)},
		{"openai-medium", workload.OpenAITrace(workload.Medium)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.doc)))
			b.ReportAllocs()
			for b.Loop() {
				var d Decoder
				d.Reset(string(tc.doc), 0)
				if _, err := d.Document(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
