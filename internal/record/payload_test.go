package record

import (
	"encoding/json"
	"testing"
)

func TestScoredCalls(t *testing.T) {
	trace := json.RawMessage(`[{"tool":"a","args":{"x": 1}},{"tool":"b","args":{}},{"tool":"c","args":{"s":"\u00e9"}}]`)
	for _, tc := range []struct {
		idx, want string
	}{
		{`[0,2]`, `[{"tool":"a","args":{"x": 1}},{"tool":"c","args":{"s":"\u00e9"}}]`},
		{`[2,0]`, `[{"tool":"c","args":{"s":"\u00e9"}},{"tool":"a","args":{"x": 1}}]`},
		{`[1]`, `[{"tool":"b","args":{}}]`},
		{`[]`, `[]`},
	} {
		got, err := ScoredCalls(trace, json.RawMessage(tc.idx))
		if err != nil || string(got) != tc.want {
			t.Errorf("ScoredCalls(%s) = %s, %v; want %s", tc.idx, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ trace, idx, want string }{
		{`[{"tool":"a"}]`, `[1]`, "scored_indexes: index 1 outside trace_calls (1 calls)"},
		{`[{"tool":"a"}]`, `[-1]`, "scored_indexes: index -1 outside trace_calls (1 calls)"},
		{`{"tool":"a"}`, `[0]`, "trace_calls: not a JSON array"},
		{`[{"tool":"a"},]`, `[0]`, "trace_calls: not a JSON array"},
		{`[]`, `{}`, "scored_indexes: not a JSON array of indexes"},
		{`[]`, `[1.5]`, "scored_indexes: 1.5 is not an index"},
	} {
		_, err := ScoredCalls(json.RawMessage(tc.trace), json.RawMessage(tc.idx))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ScoredCalls(%s, %s) error = %v, want %q", tc.trace, tc.idx, err, tc.want)
		}
	}
}

func TestFirstElement(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[{"rank":1,"text":"a"},{"rank":2}]`, `{"rank":1,"text":"a"}`},
		{` [ "x" , 2 ] `, `"x"`},
		{`[]`, ``},
		{`null`, ``},
		{``, ``},
	} {
		got, err := FirstElement(json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("FirstElement(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{`{}`, `[{"a":]`, `"s"`, `nul`} {
		if got, err := FirstElement(json.RawMessage(in)); err == nil {
			t.Errorf("FirstElement(%q) = %q, want an error", in, got)
		}
	}
}
