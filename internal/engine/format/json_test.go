package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// stdDecode decodes with encoding/json: json.Valid says whether the
// document is accepted, a Decoder with UseNumber gives its value.
func stdDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func TestDecoderErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // line:col: msg
	}{
		{`{"a": 1,}`, "line 1:9: invalid character '}' looking for beginning of object key string"},
		{"[1,\n 2,\n 3 4]", "line 3:4: invalid character '4' after array element"},
		{`{"a" 1}`, "line 1:6: invalid character '1' after object key"},
		{`{"a": 1 "b"}`, "line 1:9: invalid character '\"' after object key:value pair"},
		{`[01]`, "line 1:3: invalid character '1' after array element"},
		{`-`, "line 1:2: unexpected end of JSON input"},
		{`1.`, "line 1:3: unexpected end of JSON input"},
		{`1.x`, "line 1:3: invalid character 'x' after decimal point in numeric literal"},
		{`1e+`, "line 1:4: unexpected end of JSON input"},
		{`tru`, "line 1:4: unexpected end of JSON input"},
		{`nul1`, "line 1:4: invalid character '1' in literal null (expecting 'l')"},
		{"\"a\tb\"", "line 1:3: invalid character '\\t' in string literal"},
		{`"\x"`, "line 1:3: invalid character 'x' in string escape code"},
		{`"\u12G4"`, "line 1:6: invalid character 'G' in \\u hexadecimal character escape"},
		{`"abc`, "line 1:5: unexpected end of JSON input"},
		{`{"a": 1}}`, "line 1:9: invalid character '}' looking for beginning of value (at /1)"},
		{`x`, "line 1:1: invalid character 'x' looking for beginning of value"},
		{"   \n  ", "line 1:1: empty document"},
		{"\uFEFF{\"a\":}", "line 1:9: invalid character '}' looking for beginning of value (at /a)"},
		{"[1,\n{\"a\": [é]}]", "line 2:8: invalid character 'é' looking for beginning of value (at /1/a/0)"},
		{strings.Repeat("[", jsondoc.MaxDepth+1), "line 1:1001: exceeded max depth of 1000 nested arrays and objects (at " + strings.Repeat("/0", 25) + "…" + strings.Repeat("/0", 25) + ")"},
	}
	for _, tc := range tests {
		_, err := readInput([]byte(tc.in))
		var se *engine.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("readInput(%q) error = %v, want a *engine.SyntaxError", tc.in, err)
			continue
		}
		if got := se.Error(); got != tc.want {
			t.Errorf("readInput(%q) error = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReadInputForms(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantForm  Form
		wantValue any
	}{
		{"one value", `{"a":1}`, FormJSON, map[string]any{"a": json.Number("1")}},
		{"json lines", "{\"a\":1}\n{\"a\":2}\n\n", FormJSONLines, []any{map[string]any{"a": json.Number("1")}, map[string]any{"a": json.Number("2")}}},
		{"pretty records", "{\n \"a\": 1\n}\n[\n 2\n]", FormJSONLines, []any{map[string]any{"a": json.Number("1")}, []any{json.Number("2")}}},
		{"sse", ": keep-alive\nevent: x\ndata: {\"a\":1}\n\ndata: {\"a\":\ndata: 2}\n\ndata: [DONE]\n\n", FormSSE, []any{map[string]any{"a": json.Number("1")}, map[string]any{"a": json.Number("2")}}},
		{"sse crlf no final blank", "data:{\"a\":1}\r\n\r\ndata: 3", FormSSE, []any{map[string]any{"a": json.Number("1")}, json.Number("3")}},
		{"sse only done", "data: [DONE]\n\n", FormSSE, []any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := readInput([]byte(tc.in))
			if err != nil {
				t.Fatalf("readInput(%q) error: %v", tc.in, err)
			}
			if in.Form != tc.wantForm {
				t.Errorf("readInput(%q).Form = %q, want %q", tc.in, in.Form, tc.wantForm)
			}
			if diff := cmp.Diff(tc.wantValue, in.Value().Any()); diff != "" {
				t.Errorf("readInput(%q).Value mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestSSEErrorLocation(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"data: {\"a\":1}\n\ndata: {\"a\":}\n\n", "line 3:12: invalid character '}' looking for beginning of value (at /1/a)"},
		{"data: {\"a\":\ndata:  tru}\n\n", "line 2:11: invalid character '}' in literal true (expecting 'e') (at /0/a)"},
		{"data: {\"a\":1} {\"b\":\n\ndata: 2}\n\n", "line 1:20: unexpected end of JSON input (at /1)"},
		{"data: {\"a\":1}\r\rdata: {\"a\":}\r\r", "line 3:12: invalid character '}' looking for beginning of value (at /1/a)"},
		{"data: {\"a\":1}\r\n\r\ndata: {\"a\":}\r\n\r\n", "line 3:12: invalid character '}' looking for beginning of value (at /1/a)"},
	}
	for _, tc := range tests {
		_, err := readInput([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("readInput(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}
