package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContractRepeatedKey: a key given twice in a contract is a 422
// invalid-contract at the later occurrence's pointer, inline (pointer,
// line and column in the request body), on /v1/validate and in the
// registry; in the request's own forbidden rules it is a 422
// invalid-request.
func TestContractRepeatedKey(t *testing.T) {
	b := setup(t, nil)
	const contract = `{"contract_version": 2, "required": [{"tool": "search_flights"}], "forbidden": [{"tool": "book_flight"}], "forbidden": []}`
	const msg = `repeated key "forbidden" at line 1:107 (first at line 1:67): a contract must not repeat a key`
	for _, tc := range []struct {
		name, target, body string
		slug               string
		want               []FieldProblem
	}{
		{"inline", "/v1/evaluations?store=false", `{"contract": ` + contract + `, "trace": ` + traceGood + `}`,
			"invalid-contract", []FieldProblem{{Pointer: "/contract/forbidden", Message: `repeated key "forbidden" at line 1:120 (first at line 1:80): a contract must not repeat a key`}}},
		{"validate", "/v1/validate", contract, "invalid-contract", []FieldProblem{{Pointer: "/forbidden", Message: msg}}},
		{"registry", "/v1/contracts/flights/versions", contract, "invalid-contract", []FieldProblem{{Pointer: "/forbidden", Message: msg}}},
		{"forbidden rules", "/v1/evaluations?store=false", `{"contract": ` + contractA + `, "trace": ` + traceGood + `, "forbidden": [{"tool": "x", "reason": "a", "reason": "b"}]}`,
			"invalid-request", []FieldProblem{{Pointer: "/forbidden/0/reason", Message: `repeated key "reason" at line 3:330 (first at line 3:315): forbidden rules must not repeat a key`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body), 422, tc.slug)
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.contracts) != 0 {
		t.Errorf("a contract with a repeated key was stored")
	}
}
