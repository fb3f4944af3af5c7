package api

import "testing"

// TestBodyByteOrderMark: a JSON body may start with a UTF-8 byte order
// mark, which is skipped as the CLI skips one in files (docs/api.md); a
// syntax error is then located in the text after the mark.
func TestBodyByteOrderMark(t *testing.T) {
	b := setup(t, nil)
	const bom = "\xef\xbb\xbf"
	if rec := b.do(t, "POST", "/v1/evaluations?store=false", bom+`{"contract": `+contractA+`, "trace": `+traceGood+`}`); rec.Code != 200 {
		t.Errorf("evaluation with a BOM = %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, "POST", "/v1/validate", bom+contractA); rec.Code != 200 {
		t.Errorf("validate with a BOM = %d %s", rec.Code, rec.Body)
	}
	p := problemOf(t, b.do(t, "POST", "/v1/evaluations?store=false", bom+`{"trace": [1, ]}`), 400, "invalid-json")
	const detail = "line 1:15 (byte 14): invalid character ']' looking for beginning of value (at /trace/1)"
	if p.Detail != detail || p.Offset == nil || *p.Offset != 14 || p.Line != 1 || p.Column != 15 {
		t.Errorf("BOM then bad JSON: %q at %v %d:%d, want %q at 14 1:15", p.Detail, p.Offset, p.Line, p.Column, detail)
	}
	problemOf(t, b.do(t, "POST", "/v1/evaluations?store=false", bom+" "), 400, "invalid-json")
}
