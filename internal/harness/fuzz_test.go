package harness

import (
	"errors"
	"os"
	"testing"
)

// FuzzParseSuite checks that any document gives a suite or an error that
// wraps ErrInvalidSuite, never a panic, and that a suite it accepts is
// complete.
//
//	go test ./internal/harness -run '^$' -fuzz FuzzParseSuite -fuzztime 30s
func FuzzParseSuite(f *testing.F) {
	example, err := os.ReadFile("../../examples/harness/suite.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example, ".json")
	f.Add([]byte(`{"name":"x","tasks":[{"id":"a","input":"hi","gold":[{"tool":"t","args":{"n":1}}]}]}`), "")
	f.Add([]byte("name: x\ntasks:\n  - id: a\n    input: [{role: user, content: hi}]\n    contract_ref: c@2\n"), ".yaml")
	f.Add([]byte(`{"name":"x","tasks":[{"id":"a","input":"hi","contract":{"contract_version":2,"required":[{"alternatives":[]}]}},{"id":"a"}]}`), ".json")
	f.Fuzz(func(t *testing.T, data []byte, ext string) {
		s, err := ParseSuite(data, ext)
		if err != nil {
			if !errors.Is(err, ErrInvalidSuite) {
				t.Fatalf("ParseSuite error %v does not wrap ErrInvalidSuite", err)
			}
			return
		}
		seen := map[string]bool{}
		for i, tk := range s.Tasks {
			if tk.Index != i || seen[tk.ID] {
				t.Fatalf("task %d: index %d, id %q seen before: %v", i, tk.Index, tk.ID, seen[tk.ID])
			}
			seen[tk.ID] = true
			if (tk.Contract == nil) == (tk.ContractRef == "") {
				t.Fatalf("task %s: contract %v, contract_ref %q: want exactly one", tk.ID, tk.Contract != nil, tk.ContractRef)
			}
		}
	})
}

// FuzzParseAnswer checks that any agent answer gives a trace or an error,
// never a panic.
//
//	go test ./internal/harness -run '^$' -fuzz FuzzParseAnswer -fuzztime 30s
func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(benchAnswer))
	f.Add([]byte(`[{"tool":"a","args":{}}]`))
	f.Add([]byte(`{"trace":[{"tool":"a"}],"final_answer":"x","format":"plain"}`))
	f.Add([]byte(`{"trace":"x","final_answer":7}`))
	f.Add([]byte("data: {}\n\n"))
	f.Fuzz(func(t *testing.T, answer []byte) {
		p, err := ParseAnswer(answer)
		if err == nil && p == nil {
			t.Fatal("ParseAnswer returned neither a trace nor an error")
		}
	})
}
