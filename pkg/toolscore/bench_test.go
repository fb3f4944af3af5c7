package toolscore_test

import (
	"context"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/pkg/toolscore"
)

// BenchmarkSeed grades the seed example through the library and through
// the engine directly (what the CLI does), to show what the library's
// conversions cost: EvaluateContract reads the calls as a plain trace and
// both convert the result's calls.
func BenchmarkSeed(b *testing.B) {
	ctx := context.Background()
	contract, trace := read(b, example("contract.json")), read(b, example("trace.json"))
	c, err := toolscore.LoadContract(contract)
	if err != nil {
		b.Fatal(err)
	}
	p, err := toolscore.ParseTrace(trace, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("EvaluateTrace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := toolscore.EvaluateTrace(ctx, contract, trace, toolscore.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EvaluateContract", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := toolscore.EvaluateContract(ctx, c, p.Calls, toolscore.Options{FinalAnswer: p.FinalAnswer}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		ec, err := engine.ParseContract(contract)
		if err != nil {
			b.Fatal(err)
		}
		ep, err := format.Parse(trace, "auto")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := engine.Evaluate(ctx, ec, ep.Trace, engine.Options{SecretScanner: cliScanner}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
