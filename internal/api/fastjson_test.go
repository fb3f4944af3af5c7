package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
