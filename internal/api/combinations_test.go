package api

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContractTooManyCombinations: a contract whose alternatives make
// more than 256 combinations is a 422 invalid-contract at the list
// holding its groups, naming every group and its options, the same text
// inline (under /contract), on /v1/validate and in the registry.
func TestContractTooManyCombinations(t *testing.T) {
	b := setup(t, nil)
	contract := `{"contract_version": 2, "required": [{"tool": "search_flights"}, ` +
		strings.Repeat(`{"alternatives": [{"tool": "a"}, {"tool": "b"}]}, `, 8) + `{"id": "book", "alternatives": [{"tool": "a"}, {"tool": "b"}]}]}`
	const msg = "9 alternatives groups (group 0: 2 options, group 1: 2, group 2: 2, group 3: 2, group 4: 2, group 5: 2, group 6: 2, group 7: 2, book: 2) make 512 combinations, over the limit of 256"
	for _, tc := range []struct {
		name, target, body string
		want               []FieldProblem
	}{
		{"inline", "/v1/evaluations?store=false", `{"contract": ` + contract + `, "trace": ` + traceGood + `}`,
			[]FieldProblem{{Pointer: "/contract/required", Message: msg}}},
		{"validate", "/v1/validate", contract, []FieldProblem{{Pointer: "/required", Message: msg}}},
		{"registry", "/v1/contracts/flights/versions", contract, []FieldProblem{{Pointer: "/required", Message: msg}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body), 422, "invalid-contract")
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.contracts) != 0 {
		t.Errorf("a contract with too many combinations was stored")
	}
}
