package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestDecoderValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`{"a": [1, -2.5e3, true, false, null], "b": {}}`, map[string]any{"a": []any{json.Number("1"), json.Number("-2.5e3"), true, false, nil}, "b": map[string]any{}}},
		{`"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t"`, "é😀\n\"\\/\b\f\r\t"},
		{`"\ud83d"`, "\ufffd"},
		{`"\ud83dx"`, "\ufffdx"},
		{`"\ude00\ud83d\u0041"`, "\ufffd\ufffdA"},
		{"\"a\xffb\"", "a\ufffdb"},
		{`12345678901234567890123`, json.Number("12345678901234567890123")},
		{`{"k": 1, "k": 2}`, map[string]any{"k": json.Number("2")}},
		{` [ ] `, []any{}},
		{`[10, "10", 10, "10", "", ""]`, []any{json.Number("10"), "10", json.Number("10"), "10", "", ""}},
		{`{"a": "x\u0079", "b": "xy", "c": "xy"}`, map[string]any{"a": "xy", "b": "xy", "c": "xy"}},
	}
	for _, tc := range tests {
		var d Decoder
		d.Reset(tc.in, 0)
		got, err := d.Document()
		if err != nil {
			t.Errorf("decode(%q) error: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("decode(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzDecodeDiff checks the decoder against encoding/json with UseNumber:
// both accept or both reject, with equal values.
func FuzzDecodeDiff(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5,-0,1e9,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true}}`,
		`"\ud800\udc00\ud800"`, "\"\xed\xa0\x80\"", `[{"k":1,"k":2}]`, `01`, `1.e5`, `-`, `"\u00"`, ` [ ] `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decoder
		d.Reset(string(data), 0)
		got, err := d.Document()
		want, stdErr := stdDecode(data)
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("decode(%q): error %v, encoding/json error %v", data, err, stdErr)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decode(%q) differs from encoding/json (-std +ours):\n%s", data, diff)
		}
	})
}

func TestDecoderDepth(t *testing.T) {
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{MaxDepth, true}, {MaxDepth + 1, false}} {
		doc := strings.Repeat("[", tc.depth) + strings.Repeat("]", tc.depth)
		var d Decoder
		d.Reset(doc, 0)
		_, err := d.Document()
		if (err == nil) != tc.ok {
			t.Errorf("depth %d: error %v, want ok=%v", tc.depth, err, tc.ok)
		}
		if err != nil {
			se, _ := err.(*SyntaxError)
			if se == nil || se.Offset != MaxDepth || se.Msg != "exceeded max depth" {
				t.Errorf("depth %d: error %#v, want exceeded max depth at offset %d", tc.depth, err, MaxDepth)
			}
		}
	}
}

func TestDecoderRecords(t *testing.T) {
	// Value reads one value at a time, as format reads JSON Lines; a reset
	// decoder reads another input with values equal to earlier ones.
	var d Decoder
	d.Reset(" 1 \n\"ok\" {\"k\":1} ", 0)
	var got []any
	var starts []int
	for !d.AtEnd() {
		starts = append(starts, d.Pos())
		v, err := d.Value()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	want := []any{json.Number("1"), "ok", map[string]any{"k": json.Number("1")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 4, 9}, starts); diff != "" {
		t.Errorf("starts mismatch (-want +got):\n%s", diff)
	}
	d.Reset(`["ok",1]`, 0)
	v, err := d.Document()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"ok", json.Number("1")}, v); diff != "" {
		t.Errorf("after Reset, mismatch (-want +got):\n%s", diff)
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12.5e-3": true, "1E9": true, "123456789012345678901234567890": true,
		"": false, "01": false, "1.": false, ".5": false, "+1": false, "1e": false, "1 ": false, " 1": false, "NaN": false, "0x10": false,
	} {
		if got := IsNumber(s); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestLineCol(t *testing.T) {
	s := "ab\ncd\n\nx"
	for _, tc := range []struct{ off, line, col int }{
		{-1, 1, 1}, {0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {7, 4, 1}, {8, 4, 2}, {99, 4, 2},
	} {
		if line, col := LineCol(s, tc.off); line != tc.line || col != tc.col {
			t.Errorf("LineCol(%q, %d) = %d:%d, want %d:%d", s, tc.off, line, col, tc.line, tc.col)
		}
	}
}
