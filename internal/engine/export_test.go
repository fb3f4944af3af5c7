package engine

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// updateGolden is -update: rewrite the golden files of the engine's
// tests (package engine and engine_test both read it).
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// UpdateGolden reports whether -update was given.
func UpdateGolden() bool { return *updateGolden }

// This file lends the golden corpus test (package engine_test, which can
// also read traces with package format) the random generators of the
// internal tests.

// CorpusCase is one case of the golden corpus: a contract or gold file
// document, a trace and the evaluation options.
type CorpusCase struct {
	Contract string
	Trace    Trace
	Options  Options
}

// ChecksCorpus draws n cases from the evidence-check generator
// (randChecks): every check status, issue kind and redaction rule comes
// up.
func ChecksCorpus(tb testing.TB, seed uint64, n int) []CorpusCase {
	g := randChecks{rand.New(rand.NewPCG(seed, seed+1))}
	out := make([]CorpusCase, n)
	for i := range out {
		doc := g.contract()
		tr := g.trace(tb)
		opts := Options{SecretScanner: testSecrets, KeepSecrets: g.r.IntN(8) == 0, Strict: g.r.IntN(4) == 0}
		if g.r.IntN(4) == 0 {
			opts.Forbidden = []ForbiddenCall{{Tool: g.tool(true)}, {Tool: g.tool(false), Args: NewArgs(map[string]any{"password": "hunter2hunter2"})}}
		}
		out[i] = CorpusCase{Contract: doc, Trace: tr, Options: opts}
	}
	return out
}

// ChecksContracts draws n contract documents from the evidence-check
// generator.
func ChecksContracts(seed uint64, n int) []string {
	g := randChecks{rand.New(rand.NewPCG(seed, seed+1))}
	out := make([]string, n)
	for i := range out {
		out[i] = g.contract()
	}
	return out
}

// ScoringCorpus draws n cases from the scoring generator (randScoring):
// values that collide often, alternatives, optional and forbidden
// entries, gold files, and every weight set that turns figures off.
func ScoringCorpus(seed uint64, n int) []CorpusCase {
	g := randScoring{rand.New(rand.NewPCG(seed, seed+1))}
	weights := []map[string]float64{nil, {"argument_f1": 0}, {"sequence_accuracy": 0, "redundant_rate": 0}, {"required_call_recall": 0.3}, {"selection_accuracy": 0, "argument_f1": 0, "sequence_accuracy": 0, "redundant_rate": 0, "required_call_recall": 1}}
	out := make([]CorpusCase, n)
	for i := range out {
		doc := g.contract()
		tr := g.trace()
		opts := Options{SecretScanner: testSecrets, Strict: g.r.IntN(3) == 0, Weights: weights[g.r.IntN(len(weights))]}
		if g.r.IntN(4) == 0 {
			opts.Forbidden = []ForbiddenCall{{Tool: g.tool(true)}, {Tool: g.tool(false), Args: NewArgs(map[string]any{"k": "a"})}}
		}
		out[i] = CorpusCase{Contract: doc, Trace: tr, Options: opts}
	}
	return out
}

// compareGolden compares got with the golden file at path, rewriting it
// first with -update.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-update rewrites it):\n got …%s…\nwant …%s…", path, aroundText(got, string(want)), aroundText(string(want), got))
	}
}

// aroundText returns a's text around where it first differs from b.
func aroundText(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[max(i-200, 0):min(i+200, len(a))]
}
