package api

import (
	"strings"
	"testing"
)

// TestExpectedCallsCacheNeverLeaksSecrets: the expected calls' JSON is
// cached per combination, but a secret found in a trace is redacted in the
// expected calls too, so a result with a finding must not be served the
// cached, unredacted JSON of an earlier result.
func TestExpectedCallsCacheNeverLeaksSecrets(t *testing.T) {
	b := setup(t, nil)
	const secret = "Zx93Qw77Er5TyAbq"
	contract := `{"contract_version":2,"required":[{"tool":"login","args":{"user":"ann","note":"` + secret + `"}}]}`
	clean := `[{"tool":"login","args":{"user":"ann","note":"hello"}}]`
	leaky := `[{"tool":"login","args":{"user":"ann","note":"x","password":"` + secret + `"}}]`
	for i, trace := range []string{clean, leaky} {
		rec := b.do(t, "POST", "/v1/evaluations?store=false", body(`"contract":`+contract, `"trace":`+trace))
		if rec.Code != 200 {
			t.Fatalf("evaluation %d = %d: %s", i, rec.Code, rec.Body)
		}
		got := rec.Body.String()
		if i == 0 && !strings.Contains(got, secret) {
			t.Fatalf("clean trace: the contract's own value should be shown, got %s", got)
		}
		if i == 1 && strings.Contains(got, secret) {
			t.Errorf("trace with the secret: response still holds it: %s", got)
		}
	}
}
