package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/workload"
)

// knownValidSeeds are contract documents for TestKnownValid and
// FuzzKnownValid: valid ones of every shape the check settles, and
// near misses of each rule it applies.
var knownValidSeeds = []string{
	`{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$regex":"^a"}}},{"id":"g","alternatives":[[{"tool":"b"}],{"tool":"c","description":"d"}]}],"optional":[{"tool":"d","args":null}],"forbidden":[{"tool":"e","reason":"no","args":{}}],"weights":{"required_call_recall":0.3,"argument_f1":0},"min_score":0.9,"name":"n","description":"d","$schema":"s","metadata":{"k":[1]}}`,
	`{"required":[{"id":-12,"alternatives":[{"tool":"a"}]}],"alternatives":[{"alternatives":[[{"tool":"b"},{"tool":"c"}]]}],"min_score":1}`,
	`{"required":[]}`, `{"optional":[]}`, `{"contract_version":2}`, `{"min_score":1e-400}`,
	`{"required":[{"tool":"","tool":"a"}],"required":[]}`, `{"required":[{"tool":"\u00e9"}]}`,
	// Near misses: each is either not known valid or invalid.
	`{"contract_version":2.0}`, `{"contract_version":3}`, `{"contract_version":"2"}`,
	`{"required":[{"tool":""}]}`, `{"required":[{"tool":1}]}`, `{"required":[{"args":{}}]}`,
	`{"required":[{"tool":"a","args":[]}]}`, `{"required":[{"tool":"a","extra":1}]}`,
	`{"required":[{"tool":"a","description":1}]}`, `{"required":["a"]}`, `{"required":{}}`,
	`{"required":[{"alternatives":null}]}`, `{"required":[{"alternatives":[]}]}`,
	`{"required":[{"alternatives":[[]]}]}`, `{"required":[{"alternatives":[{"tool":"a"}],"id":1.5}]}`,
	`{"required":[{"alternatives":[{"tool":"a"}],"id":1.0}]}`, `{"required":[{"alternatives":[{"tool":"a"}],"id":1e2}]}`,
	`{"required":[{"alternatives":[{"tool":"a"}],"id":true}]}`, `{"required":[{"alternatives":[{"tool":"a"}],"x":1}]}`,
	`{"forbidden":[{"tool":"a","description":"x"}]}`, `{"optional":[{"tool":"a","reason":"x"}]}`,
	`{"weights":{"argument_f1":-0}}`, `{"weights":{"argument_f1":-1}}`, `{"weights":{"x":1}}`, `{"weights":[]}`,
	`{"min_score":1.0}`, `{"min_score":1.0000000000000000001}`, `{"min_score":0.99999999999999999999}`,
	`{"min_score":-0}`, `{"min_score":2}`, `{"min_score":"0.5"}`,
	`{"metadata":[]}`, `{"name":1}`, `{"unknown":1}`, `{"required":[{"tool":"a","tool":""}]}`,
}

// TestKnownValid: the usual contracts (the workloads', the seed's and the
// valid seeds here) are known valid, so ParseContract skips the schema
// for them; and a document known valid has no schema error.
func TestKnownValid(t *testing.T) {
	docs := []string{knownValidSeeds[0], knownValidSeeds[1], knownValidSeeds[2]}
	for _, s := range benchSizes {
		docs = append(docs, string(workload.Contract(s)))
	}
	seed, err := os.ReadFile(filepath.Join("testdata", "seed", "contract.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(seed))
	for i, s := range docs {
		v, err := jsondoc.ParseString(s)
		if err != nil {
			t.Fatal(err)
		}
		if !knownValid(v) {
			t.Errorf("document %d is not known valid: %.200s", i, s)
		}
	}
	known := 0
	for _, s := range knownValidSeeds {
		if checkKnownValid(t, s) {
			known++
		}
	}
	if known != 8 {
		t.Errorf("%d seeds known valid, want the first 8", known)
	}
}

// checkKnownValid fails t when s is known valid but has schema errors,
// and reports whether it is known valid.
func checkKnownValid(t *testing.T, s string) bool {
	t.Helper()
	v, err := jsondoc.ParseString(s)
	if err != nil || !knownValid(v) {
		return false
	}
	errs, err := schemaErrors(v.Any())
	if err != nil || len(errs) > 0 {
		t.Fatalf("known valid, but the schema says %v %v: %s", errs, err, s)
	}
	return true
}

// FuzzKnownValid: a document knownValid accepts has no schema error (so
// skipping the schema for it changes no result).
func FuzzKnownValid(f *testing.F) {
	for _, s := range knownValidSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkKnownValid(t, s) })
}
