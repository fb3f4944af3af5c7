package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseContractArgsMatcher: args that are a matcher object as a whole
// are a validation error, not a panic (FuzzParseContract found
// {"args": {"$": ...}}).
func TestParseContractArgsMatcher(t *testing.T) {
	tests := []struct {
		doc  string
		want []FieldError
	}{
		{`{"contract_version":2,"required":[{"tool":"a","args":{"$regex":"x"}}]}`,
			[]FieldError{{"/required/0/args", "args must be an object of arguments, not a matcher"}}},
		{`{"contract_version":2,"required":[{"tool":"a","args":{"$":{"k":"v"}}}]}`,
			[]FieldError{{"/required/0/args/$", `unknown matcher "$" (valid: $any, $approx, $contains, $one_of, $regex, $type)`}}},
		{`{"contract_version":2,"required":[],"forbidden":[{"tool":"a","args":{"$any":true}}]}`,
			[]FieldError{{"/forbidden/0/args", "args must be an object of arguments, not a matcher"}}},
		{`[{"tool":"a","args":{"$type":"string"}}]`,
			[]FieldError{{"/0/args", "args must be an object of arguments, not a matcher"}}},
	}
	for _, tc := range tests {
		c, err := ParseContract([]byte(tc.doc))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("ParseContract(%s) = %v, %v; want a *ValidationError", tc.doc, c, err)
			continue
		}
		if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
			t.Errorf("ParseContract(%s) errors mismatch (-want +got):\n%s", tc.doc, diff)
		}
	}
}
