package engine

import (
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/secrets"
)

func TestURICredentials(t *testing.T) {
	tr := mustTrace(t, `{"calls":[{"tool":"run_query","args":{"dsn":"postgres://admin:Pa55w0rdXyZq@db.internal:5432/prod","sql":"select 1"}},
	  {"tool":"fetch","args":{"url":"https://example.com/a:b@c","note":"mailto:ann@example.com"}}],
	  "final_answer":"Connected with postgres://admin:Pa55w0rdXyZq@db.internal:5432/prod."}`)
	res := mustEvaluate(t, mustContract(t, `[{"tool":"run_query"},{"tool":"fetch"}]`), tr, Options{SecretScanner: testSecrets})
	var cred Check
	for _, ch := range res.Checks.Items {
		if ch.Name == "credentials" {
			cred = ch
		}
	}
	if cred.Status != CheckFail || len(cred.Findings) != 2 || cred.Findings[0].Rule != secrets.RuleURICredentials || cred.Findings[0].Path != "/dsn" || cred.Findings[1].Call != -1 {
		t.Fatalf("credentials check = %+v, want 2 uri-credentials findings (/dsn and the final answer)", cred)
	}
	if got := res.TraceCalls[0].Args.Get("dsn").Text(); got != "postgres://admin:[REDACTED:uri-credentials]@db.internal:5432/prod" {
		t.Errorf("redacted dsn = %q", got)
	}
	if res.Passed {
		t.Error("the safety gate should fail the verdict")
	}
	for _, s := range []string{*res.FinalAnswer, res.TraceCalls[1].Args.Get("url").Text()} {
		if strings.Contains(s, "Pa55w0rdXyZq") {
			t.Errorf("secret still in %q", s)
		}
	}
	// A URL path with ':' and '@' and a mailto: link hold no password.
	if res.TraceCalls[1].Args.Get("url").Text() != "https://example.com/a:b@c" || res.TraceCalls[1].Args.Get("note").Text() != "mailto:ann@example.com" {
		t.Errorf("false positive: %s", res.TraceCalls[1].Args.Raw())
	}
}
