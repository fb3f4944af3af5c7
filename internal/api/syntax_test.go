package api

import (
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// TestInvalidJSONPointer pins the 400 invalid-json problems of every
// JSON reader of the API, the evaluation's (jsondoc) and the other
// routes' (decodeStrict), with the JSON pointer of the value being read
// at the syntax error: in pointer, and at the end of the detail.
func TestInvalidJSONPointer(t *testing.T) {
	b, _ := setupRegrades(t)
	long := strings.Repeat("1", jsondoc.MaxNumberLen+1)
	longKey := strings.Repeat("k", 130)
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, target, body, contentType string
		offset, line, column            int64
		pointer                         *string
		detail                          string
	}{
		{"evaluation, ends early", "/v1/evaluations", `{"contract": "flights", "trace": [`, "",
			34, 1, 35, ptr("/trace"), "line 1:35 (byte 34): unexpected end of JSON input (at /trace)"},
		{"evaluation, docs/api.md's example", "/v1/evaluations", `{"trace": [1, ]}`, "",
			14, 1, 15, ptr("/trace/1"), "line 1:15 (byte 14): invalid character ']' looking for beginning of value (at /trace/1)"},
		{"evaluation, deep", "/v1/evaluations", "{\"trace\": [{\"tool\": \"a\",\n \"args\": {\"q\": tru}}]}", "",
			43, 2, 19, ptr("/trace/0/args/q"), "line 2:19 (byte 43): invalid character '}' in literal true (expecting 'e') (at /trace/0/args/q)"},
		{"evaluation, escaped key", "/v1/evaluations", `{"labels": {"a/b~c": "\q"}}`, "",
			23, 1, 24, ptr("/labels/a~1b~0c"), `line 1:24 (byte 23): invalid character 'q' in string escape code (at /labels/a~1b~0c)`},
		{"evaluation, long pointer shortened in the detail", "/v1/evaluations", `{"labels": {"` + longKey + `": x}}`, "",
			146, 1, 147, ptr("/labels/" + longKey),
			"line 1:147 (byte 146): invalid character 'x' looking for beginning of value (at /labels/" + strings.Repeat("k", 42) + "…" + strings.Repeat("k", 50) + ")"},
		{"evaluation, data after the document", "/v1/evaluations", `{"trace": []} {}`, "",
			14, 1, 15, ptr(""), "line 1:15 (byte 14): unexpected data after the JSON document"},
		{"evaluation, empty body", "/v1/evaluations", " ", "", 0, 1, 1, ptr(""), "the body is empty"},
		{"regrade (decodeStrict)", "/v1/regrades", `{"contract": "flights", "filter": {"labels": [1, }}`, "",
			49, 1, 50, ptr("/filter/labels/1"), "line 1:50 (byte 49): invalid character '}' looking for beginning of value (at /filter/labels/1)"},
		{"batch array (decodeStrict)", "/v1/evaluations/batch", `[{"trace": [}]`, "",
			12, 1, 13, ptr("/0/trace/0"), "line 1:13 (byte 12): invalid character '}' looking for beginning of value (at /0/trace/0)"},
		{"decodeStrict, past one of jsondoc's limits: no pointer", "/v1/regrades", `{"from_versions": [` + long + `], "contract": }`, "",
			535, 1, 536, nil, "line 1:536 (byte 535): invalid character '}' looking for beginning of value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.contentType != "" {
				headers = []string{"Content-Type", tc.contentType}
			}
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body, headers...), 400, "invalid-json")
			if p.Offset == nil || *p.Offset != tc.offset || int64(p.Line) != tc.line || int64(p.Column) != tc.column {
				t.Errorf("offset, line, column = %v, %d, %d; want %d, %d, %d", p.Offset, p.Line, p.Column, tc.offset, tc.line, tc.column)
			}
			switch {
			case (p.Pointer == nil) != (tc.pointer == nil):
				t.Errorf("pointer = %v, want %v", p.Pointer, tc.pointer)
			case p.Pointer != nil && *p.Pointer != *tc.pointer:
				t.Errorf("pointer = %q, want %q", *p.Pointer, *tc.pointer)
			}
			if p.Detail != tc.detail {
				t.Errorf("detail = %q\nwant     %q", p.Detail, tc.detail)
			}
		})
	}
	// An NDJSON batch line that is not JSON is its item's problem, with the
	// pointer inside the item.
	rec := b.do(t, "POST", "/v1/evaluations/batch?store=false", `{"gold": [], "trace": [1, ]}`+"\n", "Content-Type", "application/x-ndjson")
	out := decode[struct {
		Items []struct {
			Problem Problem `json:"problem"`
		} `json:"items"`
	}](t, rec)
	if len(out.Items) != 1 || out.Items[0].Problem.Pointer == nil || *out.Items[0].Problem.Pointer != "/trace/1" {
		t.Errorf("NDJSON item problem = %+v, want pointer /trace/1", out.Items)
	}
}
