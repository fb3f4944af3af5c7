package api

import (
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

func TestAppendToolCall(t *testing.T) {
	// appendToolCall writes engine.ToolCall's fields by hand: fail when the
	// engine adds one, so the encoder is updated with it.
	if n := reflect.TypeFor[engine.ToolCall]().NumField(); n != 7 {
		t.Fatalf("engine.ToolCall has %d fields; appendToolCall knows 7: update it", n)
	}
	calls := []engine.ToolCall{
		{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "a <b> & c", "n": json.Number("12345678901234567890"), "f": 1.5e-7,
			"nested": map[string]any{"z": []any{true, nil, "\u2028\x01\t\"\\"}, "a": map[string]any{}}, "bad": "\xff"})},
		{Tool: "x", Args: jsondoc.Value{}, ID: "c1", Result: jsondoc.MustFromAny(map[string]any{"ok": true}), Error: "boom", ArgsRaw: "{oops", ArgsError: "not json"},
		{Tool: "y", Args: jsondoc.MustFromAny(map[string]any{}), Result: jsondoc.MustFromAny(""), Error: ""},
		{Tool: "z", Args: jsondoc.MustFromAny(map[string]any{"e": json.Number("")}), Result: jsondoc.MustFromAny([]any{json.Number("1.0"), 2.0, int64(3)})},
		{Tool: "caf\u00e9 \U0001F600", Args: jsondoc.MustFromAny(map[string]any{"k": float64(1e21), "j": 100.0})},
	}
	for i, c := range calls {
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendToolCall(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("call %d:\n got  %s\n want %s", i, got, want)
		}
	}
}

func TestDecodeFast(t *testing.T) {
	tests := []struct {
		name string
		body string
		ok   bool
	}{
		{"all fields", `{"contract": {"required": []}, "gold": null, "trace": [{"tool": "a"}], "format": "plain", "final_answer": "done \u00e9",
			"task_id": "t", "run_id": "r", "agent": "a", "labels": {"k": "v"}, "strict": true, "forbidden": [{"tool": "rm"}],
			"safety_gate": false, "weights": {"argument_f1": 0.5}, "min_score": 0.7}`, true},
		{"escaped string", `{"trace": [], "agent": "a\"b\\nc", "final_answer": null}`, true},
		{"empty object", ` { } `, true},
		{"unknown key", `{"trace": [], "trcae": 1}`, false},
		{"other case", `{"Trace": []}`, false},
		{"escaped key", `{"tr\u0061ce": []}`, true},
		{"trailing data", `{"trace": []} x`, false},
		{"wrong type", `{"trace": [], "strict": "yes"}`, false},
		{"not an object", `[{"trace": []}]`, false},
		{"unterminated", `{"trace": [1, 2}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fast evaluationRequest
			ok := decodeFast([]byte(tc.body), &fast)
			if ok != tc.ok {
				t.Fatalf("decodeFast(%s) = %v, want %v", tc.body, ok, tc.ok)
			}
			if !ok {
				return
			}
			var strict evaluationRequest
			if err := decodeStrict([]byte(tc.body), &strict, ""); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strict, fast, cmp.Comparer(rawEqual)); diff != "" {
				t.Errorf("decodeFast differs from decodeStrict (-strict +fast):\n%s", diff)
			}
		})
	}
}

// rawEqual compares raw JSON by value (decodeStrict keeps "null" where
// decodeFast does too, but spacing may differ).
func rawEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// FuzzDecodeFast checks that the one-pass decoder never panics and, for
// valid JSON it accepts, agrees with encoding/json.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{`{"trace": [], "agent": "x"}`, `{"contract": "a@1", "trace": {"a": [1, "]"]}}`, `{"labels": {"a": "b"}, "strict": true}`, `{}`, `{"a\"": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast evaluationRequest
		if !decodeFast(data, &fast) || !json.Valid(data) {
			return
		}
		var strict evaluationRequest
		if err := decodeStrict(data, &strict, ""); err != nil {
			t.Fatalf("decodeFast accepted %q, decodeStrict refused it: %v", data, err)
		}
		if diff := cmp.Diff(strict, fast, cmp.Comparer(rawEqual)); diff != "" {
			t.Errorf("decodeFast(%q) differs (-strict +fast):\n%s", data, diff)
		}
	})
}
