package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestContractSlabValues checks that the expected arguments ParseContract
// builds from its slabs are the values encoding/json decodes (UseNumber)
// from the same text, with the same types: strings, json.Number, []any
// (an empty array non-nil), nested maps; and that each expected call is
// its own.
func TestContractSlabValues(t *testing.T) {
	doc := []byte(`[
		{"tool": "a", "args": {"s": "x", "e": "", "n": 1.50, "b": true, "z": null, "l": [], "m": {"k": ["y", 2, [3, {"w": "v"}]]}}},
		{"tool": "b", "args": {"s": "x", "l": ["p", "q"], "n": -0}},
		{"tool": "c", "args": {}},
		{"tool": "d"}
	]`)
	c, err := ParseContract(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var want []struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if len(c.Required) != len(want) {
		t.Fatalf("%d required calls, want %d", len(c.Required), len(want))
	}
	for i, st := range c.Required {
		if st.Call.Tool != want[i].Tool || !reflect.DeepEqual(st.Call.Args, want[i].Args) {
			t.Errorf("call %d = %#v, want %#v", i, *st.Call, want[i])
		}
		for j := range i {
			if c.Required[j].Call == st.Call {
				t.Errorf("calls %d and %d share an ExpectedCall", j, i)
			}
		}
	}
	args := c.Required[0].Call.Args
	if l, ok := args["l"].([]any); !ok || l == nil {
		t.Errorf(`args["l"] = %#v, want a non-nil empty []any`, args["l"])
	}
	if n, ok := args["n"].(json.Number); !ok || n != "1.50" {
		t.Errorf(`args["n"] = %#v, want json.Number("1.50")`, args["n"])
	}
	out, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"b":true,"e":"","l":[],"m":{"k":["y",2,[3,{"w":"v"}]]},"n":1.50,"s":"x","z":null}`; string(out) != w {
		t.Errorf("json.Marshal(args) = %s, want %s", out, w)
	}
}
