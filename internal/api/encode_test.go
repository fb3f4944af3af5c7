package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// plainView is evaluationView without its MarshalJSON, so encoding/json
// encodes it field by field.
type plainView evaluationView

func TestAppendEvaluationMatchesEncodingJSON(t *testing.T) {
	answer := "Booked <FL-204> & \"sent\" \u2028 caf\u00e9 \x01"
	created := time.Date(2026, 11, 20, 10, 0, 0, 123456000, time.UTC)
	views := []evaluationView{
		{
			ID: "0193-id", CreatedAt: &created, Stored: true,
			Contract: contractRefView{Name: "flights", Version: 3, SHA256: "ab", Kind: "contract"},
			TaskID:   "t<1>", RunID: "r", Agent: "a", Labels: map[string]string{"b": "2", "a": "1"}, Format: "openai",
			Score: 0.9999999999999999, Grade: "A", Passed: true, MinScore: 0.9, SafetyGate: true,
			Options: json.RawMessage(`{"strict":false}`), Metrics: json.RawMessage(`{"x":1e-7}`),
			ExpectedCalls: json.RawMessage(`[{"tool":"a","args":null}]`), TraceCalls: json.RawMessage(`[]`),
			ScoredCalls: json.RawMessage(`[]`), ScoredIndexes: json.RawMessage(`[0,1]`), FinalAnswer: &answer,
			Checks: json.RawMessage(`{"pass":1}`), Issues: json.RawMessage(`[]`),
		},
		{Contract: contractRefView{SHA256: "cd", Kind: "gold"}, Format: "plain", Score: 1e-7, Grade: "F", MinScore: 0,
			Options: json.RawMessage(`{}`), Metrics: json.RawMessage(`{}`), ExpectedCalls: json.RawMessage(`[]`),
			TraceCalls: json.RawMessage(`[]`), ScoredCalls: json.RawMessage(`[]`), ScoredIndexes: json.RawMessage(`[]`),
			Checks: json.RawMessage(`{}`), Issues: json.RawMessage(`[]`)},
		{Contract: contractRefView{SHA256: "ef", Kind: "gold"}, Score: 0.5, MinScore: 1e21},
		// A regrade result: the link follows created_at.
		{
			ID: "0193-regrade", CreatedAt: &created, Stored: true,
			RegradeOf: "0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d", RegradeID: "0193c6a1-0000-7000-8000-000000000001",
			Contract: contractRefView{Name: "flights", Version: 4, SHA256: "ab", Kind: "contract"}, Agent: "hammer",
			Format: "plain", Score: 0.65, Grade: "D", MinScore: 0.9, SafetyGate: true,
			Options: json.RawMessage(`{}`), Metrics: json.RawMessage(`{}`), ExpectedCalls: json.RawMessage(`[]`),
			TraceCalls: json.RawMessage(`[]`), ScoredCalls: json.RawMessage(`[]`), ScoredIndexes: json.RawMessage(`[]`),
			Checks: json.RawMessage(`{}`), Issues: json.RawMessage(`[]`),
		},
	}
	for i, v := range views {
		want, err := json.Marshal(plainView(v))
		if err != nil {
			t.Fatal(err)
		}
		got := v.appendJSON(nil)
		if !json.Valid(got) {
			t.Fatalf("view %d: appendJSON is not valid JSON: %s", i, got)
		}
		var w, g any
		_ = json.Unmarshal(want, &w)
		_ = json.Unmarshal(got, &g)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("view %d: appendJSON differs from encoding/json (-want +got):\n%s\nwant %s\ngot  %s", i, diff, want, got)
		}
	}
}
