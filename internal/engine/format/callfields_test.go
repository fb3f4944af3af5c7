package format

import (
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// callFieldsByGet is callFields.read one Get per member: the plain path it
// must equal.
func callFieldsByGet(m jsondoc.Value) callFields {
	return callFields{
		tool: m.Get("tool"), name: m.Get("name"), role: m.Get("role"), function: m.Get("function"),
		id: m.Get("id"), toolCallID: m.Get("tool_call_id"),
		args: m.Get("args"), arguments: m.Get("arguments"), input: m.Get("input"),
		toolInput: m.Get("tool_input"), argsError: m.Get("args_error"), argsRaw: m.Get("args_raw"),
		result: m.Get("result"), output: m.Get("output"), err: m.Get("error"),
	}
}

// checkCallFields compares callFields.read with callFieldsByGet, and
// named and anyArgs with isNamedCall and first, on every object of the
// JSON text data, and isPlainCall with Get("tool") on every value.
func checkCallFields(t *testing.T, data string) {
	v, err := jsondoc.ParseString(data)
	if err != nil {
		return
	}
	var walk func(v jsondoc.Value)
	walk = func(v jsondoc.Value) {
		if got, want := isPlainCall(v), v.Get("tool").Kind() == jsondoc.String; got != want {
			t.Fatalf("%s: isPlainCall %v, Get(\"tool\") says %v", v.Raw(), got, want)
		}
		switch v.Kind() {
		case jsondoc.Object:
			var got callFields
			got.read(v)
			if want := callFieldsByGet(v); got != want {
				t.Fatalf("%s: callFields.read %+v, Get %+v", v.Raw(), got, want)
			}
			if first, _ := first(v, "args", "arguments", "input"); got.named() != isNamedCall(v) || got.anyArgs() != first {
				t.Fatalf("%s: named %v, anyArgs %v; isNamedCall %v, first %v", v.Raw(), got.named(), got.anyArgs(), isNamedCall(v), first)
			}
			for _, m := range v.Members() {
				walk(m)
			}
		case jsondoc.Array:
			for _, e := range v.Elems() {
				walk(e)
			}
		}
	}
	walk(v)
}

func TestCallFields(t *testing.T) {
	for _, s := range []string{
		`{"tool":"a","args":{"x":1},"id":"1","result":2,"error":false}`,
		`{"tool":"a","tool":"b","args":1,"args":{"y":2},"input":3}`,
		`{"name":"n","arguments":"{}","role":"user"}`,
		`{"name":"n","input":{},"function":{},"tool_call_id":7,"output":"o","tool_input":"t","args_error":"e","args_raw":"r"}`,
		`{"\u0074ool":"escaped","a\u0072gs":{}}`,
		`{}`, `[{"tool":1},{"name":"x","args":null}]`,
		`{"tool":"a","x":[{"tool":1}],"tool":{"tool":"b"}}`, `{"x":{"a":1},"tool":"t"}`, `"tool"`,
	} {
		checkCallFields(t, s)
	}
}

// FuzzCallFields compares callFields.read with one Get per member
// (checkCallFields) on any JSON text.
func FuzzCallFields(f *testing.F) {
	addSeeds(f, "plain")
	f.Add([]byte(`{"tool":"a","tool":"b","args":1,"args":{"y":2},"input":3}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkCallFields(t, string(data)) })
}
