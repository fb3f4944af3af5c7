package jsondoc

import (
	"encoding/json"
	"os"
	"testing"
)

// perfDocs are the gold files and traces the engine's user-path
// benchmarks grade (internal/engine/testdata/perf).
var perfDocs = []string{"small_gold", "small_trace", "medium_gold", "medium_trace", "large_gold", "large_trace"}

func readPerfDoc(b *testing.B, name string) []byte {
	data, err := os.ReadFile("../engine/testdata/perf/" + name + ".json")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParse measures Parse (including its copy of the input) on the
// perf documents; BenchmarkJSONValid is encoding/json.Valid on the same
// bytes, the reading floor of the engine's from-bytes target.
func BenchmarkParse(b *testing.B) {
	for _, name := range perfDocs {
		b.Run(name, func(b *testing.B) {
			data := readPerfDoc(b, name)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkJSONValid(b *testing.B) {
	for _, name := range perfDocs {
		b.Run(name, func(b *testing.B) {
			data := readPerfDoc(b, name)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !json.Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkValid measures the skipper (Valid) on the same documents.
func BenchmarkValid(b *testing.B) {
	for _, name := range perfDocs {
		b.Run(name, func(b *testing.B) {
			s := string(readPerfDoc(b, name))
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if !Valid(s) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkGet looks up the members a trace reader asks a call object for
// (most of them missing) in every call of the medium perf trace.
func BenchmarkGet(b *testing.B) {
	v, err := Parse(readPerfDoc(b, "medium_trace"))
	if err != nil {
		b.Fatal(err)
	}
	keys := []string{"tool", "id", "tool_call_id", "args", "tool_input", "args_error", "result", "output", "error"}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range v.Elems() {
			for _, k := range keys {
				_ = c.Get(k)
			}
		}
	}
}
