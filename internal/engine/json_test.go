package engine

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeJSON checks DecodeJSON's values and its located errors; the
// decoder itself is compared with encoding/json in package jsondoc.
func TestDecodeJSON(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"a":[1,-2.5e3,true,null],"k":1,"k":"2"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{json.Number("1"), json.Number("-2.5e3"), true, nil}, "k": "2"}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("DecodeJSON mismatch (-want +got):\n%s", diff)
	}
	for doc, msg := range map[string]string{
		"":                      "line 1:1: empty document",
		"{\n  \"a\": é\n}":      "line 2:8: invalid character 'é' looking for beginning of value (at /a)",
		`{"a":1} x`:             "line 1:9: invalid character 'x' after top-level value",
		`[{"tool":"a"},{"x":}]`: "line 1:20: invalid character '}' looking for beginning of value (at /1/x)",
	} {
		_, err := DecodeJSON([]byte(doc))
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != msg {
			t.Errorf("DecodeJSON(%q) error = %v, want %s", doc, err, msg)
		}
	}
}
