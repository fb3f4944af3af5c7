package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProblemPointers checks that type errors point at the map key or
// array index, that a whole-body problem keeps the root pointer "", and
// that a bad regrade time is a 422 at its pointer.
func TestProblemPointers(t *testing.T) {
	b, _ := setupRegrades(t)
	tests := []struct {
		name, target, body string
		want               []FieldProblem
	}{
		{"label value type", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`, `"labels":{"env":"dev","a":1}`),
			[]FieldProblem{{Pointer: "/labels/a", Message: "must be a string, got number"}}},
		{"weight type", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`, `"weights":{"argument_f1":"x"}`),
			[]FieldProblem{{Pointer: "/weights/argument_f1", Message: "must be a number, got string"}}},
		{"from_versions item", "/v1/regrades", `{"contract": "flights", "from_versions": [1, "2"]}`,
			[]FieldProblem{{Pointer: "/from_versions/1", Message: "must be an integer, got string"}}},
		{"from_versions fraction", "/v1/regrades", `{"contract": "flights", "from_versions": [1, 1.5]}`,
			[]FieldProblem{{Pointer: "/from_versions/1", Message: "must be an integer, got number 1.5"}}},
		{"from_versions exponent", "/v1/regrades", `{"contract": "flights", "from_versions": [1e2]}`,
			[]FieldProblem{{Pointer: "/from_versions/0", Message: "must be an integer, got number 1e2"}}},
		{"from_versions beyond int", "/v1/regrades", `{"contract": "flights", "from_versions": [99999999999999999999]}`,
			[]FieldProblem{{Pointer: "/from_versions/0", Message: "must be an integer from -9223372036854775808 to 9223372036854775807, got number 99999999999999999999"}}},
		{"since", "/v1/regrades", `{"contract": "flights", "since": "x"}`,
			[]FieldProblem{{Pointer: "/since", Message: `must be an RFC 3339 time such as 2026-11-20T10:00:00Z, got "x"`}}},
		{"regrade label type", "/v1/regrades", `{"contract": "flights", "labels": {"a": 1}}`,
			[]FieldProblem{{Pointer: "/labels/a", Message: "must be a string, got number"}}},
		{"batch not an array", "/v1/evaluations/batch", `{"trace": []}`,
			[]FieldProblem{{Pointer: "", Message: "must be an array"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do(t, "POST", tc.target, tc.body)
			p := problemOf(t, rec, 422, "invalid-request")
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			var raw struct {
				Errors []map[string]string `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw.Errors[0]["pointer"]; !ok {
				t.Errorf("errors[0] has no pointer member: %s", rec.Body)
			}
		})
	}
}

// TestFieldProblemJSON checks the wire form of FieldProblem: the root
// pointer is kept, a parameter problem has no pointer.
func TestFieldProblemJSON(t *testing.T) {
	for _, tc := range []struct {
		in   FieldProblem
		want string
	}{
		{FieldProblem{Message: "m"}, `{"pointer":"","message":"m"}`},
		{FieldProblem{Pointer: "/a", Message: "m"}, `{"pointer":"/a","message":"m"}`},
		{FieldProblem{Parameter: "limit", Message: "m"}, `{"parameter":"limit","message":"m"}`},
	} {
		got, err := json.Marshal(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
