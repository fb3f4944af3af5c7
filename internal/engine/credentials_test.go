package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Sample secrets, built at run time so the source holds no literal secret
// (and secret scanners of this repository stay quiet).
var (
	sampleGitHubPAT = "ghp_" + "R2d9xK7mQ4vL8pN3sT6wY1zB5cF0hJ" + "aE4uIo"
	sampleAWSKey    = "AKIA" + "Z7VRSQ5TJN4QPL2K"
	sampleSlackBot  = "xoxb-" + "123456789012-1234567890123-" + "abcdefghijABCDEFGHIJklmn"
	sampleStripe    = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
)

func TestIsSecretKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"password", true}, {"Password", true}, {"db_password", true}, {"passwd", true},
		{"pwd", true}, {"passphrase", true}, {"secret", true}, {"client_secret", true},
		{"clientSecret", true}, {"api_key", true}, {"apiKey", true}, {"X-API-Key", true},
		{"api_keys", true}, {"token", true}, {"access_token", true}, {"refreshToken", true},
		{"auth_token", true}, {"private_key", true}, {"aws_secret_access_key", true},
		{"Authorization", true}, {"credentials", true}, {"webhook_secret", true},
		// Not secrets.
		{"", false}, {"query", false}, {"key", false}, {"sort_key", false},
		{"next_page_token", false}, {"pageToken", false}, {"continuation_token", false},
		{"max_tokens", false}, {"tokens", false}, {"token_count", false},
		{"secret_name", false}, {"auth", false}, {"pass", false}, {"idempotency_token", false},
		{strings.Repeat("x", 100) + "password", false},
	}
	for _, tc := range tests {
		if got := isSecretKey(tc.key); got != tc.want {
			t.Errorf("isSecretKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestLiteralSecret(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{"hunter2!", true}, {"correct horse battery staple", true}, {json.Number("123456"), true},
		{"abc", false}, {"   ", false}, {"****", false}, {"xxxxxxxx", false},
		{"${API_KEY}", false}, {"$API_KEY", false}, {"{{ secrets.TOKEN }}", false},
		{"<your api key>", false}, {"%API_KEY%", false}, {"OPENAI_API_KEY", false},
		{"env:API_KEY", false}, {"vault:secret/data/app#token", false}, {"op://Private/db/password", false},
		{"[REDACTED:generic-api-key]", false}, {"none", false}, {"NULL", false},
		{json.Number("12"), false}, {true, false}, {nil, false},
		{map[string]any{"a": "b"}, false}, {[]any{"x"}, false},
	}
	for _, tc := range tests {
		if _, got := literalSecret(tc.v); got != tc.want {
			t.Errorf("literalSecret(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestMaskSecret pins the masked values of findings; the prefixes are
// those the default scanner reports for each rule and secret (package
// secrets, TestSecretPrefix).
func TestMaskSecret(t *testing.T) {
	tests := []struct {
		in, rule string
		prefix   int
		want     string
	}{
		{"hunter2", "generic-api-key", 0, "****"},
		{sampleGitHubPAT, "github-pat", 4, "ghp_****"},
		// Only a literal the rule's pattern fixes is shown, never random
		// characters of the secret.
		{"ééééééééééééééééééééé", "some-token", 0, "****"},
		{sampleAWSKey, "aws-access-token", 4, "AKIA****"},
		{sampleStripe, "stripe-access-token", 8, "sk_l****"},
		{sampleSlackBot, "slack-bot-token", 5, "xoxb****"},
		{"0123456789abcdef0123456789abcdef", "facebook-secret", 0, "****"},
		{"ghp" + sampleGitHubPAT[4:] + "x", "github-pat", 0, "****"},
		{"correcthorsebatterystaple", "generic-api-key", 0, "****"},
		{"correcthorsebatterystaple", RuleSecretNamedArgument, 0, "****"},
		// At most the prefix, at most four characters, whole runes; never
		// for a generic rule, a short secret or an impossible prefix.
		{sampleGitHubPAT, "github-pat", 2, "gh****"},
		{"éééé" + sampleGitHubPAT, "some-token", 8, "éééé****"},
		{"éééé" + sampleGitHubPAT, "some-token", 3, "é****"},
		{sampleGitHubPAT, "generic-github", 4, "****"},
		{sampleGitHubPAT[:19], "github-pat", 4, "****"},
		{sampleGitHubPAT, "github-pat", -1, "****"},
		{sampleGitHubPAT, "github-pat", 1000, "ghp_****"},
	}
	for _, tc := range tests {
		if got := maskSecret(tc.in, tc.rule, tc.prefix); got != tc.want {
			t.Errorf("maskSecret(%q, %q, %d) = %q, want %q", tc.in, tc.rule, tc.prefix, got, tc.want)
		}
	}
}

func TestScanCredentials(t *testing.T) {
	fa := "Done. Your token is " + sampleGitHubPAT
	tr := Trace{
		Calls: []ToolCall{
			{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "flights to Lisbon", "limit": json.Number("10")})},
			{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{
				"user":     "ana",
				"password": "hunter2!",
				"auth":     map[string]any{"api_key": "${API_KEY}", "headers": []any{"x", "Bearer " + sampleGitHubPAT}},
				"a/b~c":    map[string]any{"pin_token": json.Number("987654")},
			})},
			{Tool: "upload", ArgsRaw: `{"aws": "` + sampleAWSKey + `"`, ArgsError: "unexpected end of JSON input"},
		},
		FinalAnswer: &fa,
	}
	cs := scanCredentials(context.Background(), &tr, testSecrets)
	if cs.err != nil {
		t.Fatal(cs.err)
	}
	var got []Finding
	for _, f := range cs.findings {
		got = append(got, f.Finding)
	}
	want := []Finding{
		{Call: 1, Path: "/auth/headers/1", Rule: "github-pat", Value: "ghp_****"},
		{Call: 1, Path: "/a~1b~0c/pin_token", Rule: RuleSecretNamedArgument, Value: "****"},
		{Call: 1, Path: "/password", Rule: RuleSecretNamedArgument, Value: "****"},
		{Call: 2, Rule: "aws-access-token", Value: "AKIA****"},
		{Call: -1, Rule: "github-pat", Value: "ghp_****"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scanCredentials findings mismatch (-want +got):\n%s", diff)
	}
}

// secretTrace is a trace that leaks secrets in arguments, a result and the
// final answer.
func secretTrace() Trace {
	fa := "Logged in with password hunter2-long and token " + sampleGitHubPAT + "."
	return Trace{
		Calls: []ToolCall{
			{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{"user": "ana", "password": "hunter2-long", "pin": json.Number("42")}),
				Result: jsondoc.MustFromAny(map[string]any{"echo": "password hunter2-long accepted"})},
			{Tool: "get_repo", Args: jsondoc.MustFromAny(map[string]any{"repo": "toolscore", "headers": map[string]any{"Authorization": "token " + sampleGitHubPAT}}),
				Result: jsondoc.MustFromAny([]any{"ok"})},
			{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "Lisbon"}), Result: jsondoc.MustFromAny("nothing")},
		},
		FinalAnswer: &fa,
	}
}

func TestRedaction(t *testing.T) {
	c := mustContract(t, `[{"tool": "login"}, {"tool": "get_repo"}, {"tool": "search", "args": {"q": "Porto"}}]`)
	tr := secretTrace()
	before, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), c, tr, Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(tr)
	if string(before) != string(after) {
		t.Errorf("Evaluate modified the caller's trace:\nbefore %s\nafter  %s", before, after)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2-long", sampleGitHubPAT} {
		if strings.Contains(string(out), secret) {
			t.Errorf("result JSON holds the secret %q:\n%s", secret, out)
		}
	}
	wantCalls := []ToolCall{
		{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{"user": "ana", "password": "[REDACTED:secret-named-argument]", "pin": json.Number("42")}),
			Result: jsondoc.MustFromAny(map[string]any{"echo": "password [REDACTED:secret-named-argument] accepted"})},
		{Tool: "get_repo", Args: jsondoc.MustFromAny(map[string]any{"repo": "toolscore", "headers": map[string]any{"Authorization": "token [REDACTED:github-pat]"}}),
			Result: jsondoc.MustFromAny([]any{"ok"})},
		{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "Lisbon"}), Result: jsondoc.MustFromAny("nothing")},
	}
	if diff := cmp.Diff(wantCalls, res.TraceCalls); diff != "" {
		t.Errorf("TraceCalls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCalls, res.ScoredCalls); diff != "" {
		t.Errorf("ScoredCalls mismatch (-want +got):\n%s", diff)
	}
	wantFA := "Logged in with password [REDACTED:secret-named-argument] and token [REDACTED:github-pat]."
	if res.FinalAnswer == nil || *res.FinalAnswer != wantFA {
		t.Errorf("FinalAnswer = %v, want %q", res.FinalAnswer, wantFA)
	}
	ch := checkNamed(t, res, CheckCredentials)
	wantCheck := Check{
		Name: CheckCredentials, Status: CheckFail,
		Detail: "3 secrets found: secret-named-argument in login #0 /password, github-pat in get_repo #1 /headers/Authorization, github-pat in the final answer",
		Calls:  []int{0, 1},
		Findings: []Finding{
			{Call: 0, Path: "/password", Rule: RuleSecretNamedArgument, Value: "****"},
			{Call: 1, Path: "/headers/Authorization", Rule: "github-pat", Value: "ghp_****"},
			{Call: -1, Rule: "github-pat", Value: "ghp_****"},
		},
	}
	if diff := cmp.Diff(wantCheck, ch); diff != "" {
		t.Errorf("credentials check mismatch (-want +got):\n%s", diff)
	}
	if res.Passed {
		t.Errorf("Passed = true with leaked secrets and the safety gate on")
	}

	// KeepSecrets keeps the values (the findings stay masked).
	kept, err := Evaluate(context.Background(), c, tr, Options{SecretScanner: testSecrets, KeepSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tr.Calls, kept.TraceCalls); diff != "" {
		t.Errorf("KeepSecrets: TraceCalls mismatch (-want +got):\n%s", diff)
	}
	if *kept.FinalAnswer != *tr.FinalAnswer {
		t.Errorf("KeepSecrets: FinalAnswer = %q, want %q", *kept.FinalAnswer, *tr.FinalAnswer)
	}
	if diff := cmp.Diff(wantCheck.Findings, checkNamed(t, kept, CheckCredentials).Findings); diff != "" {
		t.Errorf("KeepSecrets: findings mismatch (-want +got):\n%s", diff)
	}
}

// TestRedactedTraceRegrades checks that a stored, redacted trace graded
// again does not count its redaction markers as secrets.
func TestRedactedTraceRegrades(t *testing.T) {
	c := mustContract(t, `[{"tool": "login"}]`)
	res, err := Evaluate(context.Background(), c, secretTrace(), Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Evaluate(context.Background(), c, Trace{Calls: res.TraceCalls, FinalAnswer: res.FinalAnswer}, Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	if ch := checkNamed(t, again, CheckCredentials); ch.Status != CheckPass {
		t.Errorf("credentials on the redacted trace = %s (%s), want pass", ch.Status, ch.Detail)
	}
}

// TestCredentialsConcurrent runs evaluations in parallel (go test -race):
// the rule set loads once and the scan shares nothing mutable.
func TestCredentialsConcurrent(t *testing.T) {
	c := mustContract(t, `[{"tool": "login"}]`)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			res, err := Evaluate(context.Background(), c, secretTrace(), Options{SecretScanner: testSecrets})
			if err == nil && res.Checks.Items[3].Status != CheckFail {
				err = fmt.Errorf("credentials check = %+v, want fail", res.Checks.Items[3])
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
}

// checkNamed returns the check called name of res.
func checkNamed(tb testing.TB, res *EvaluationResult, name string) Check {
	tb.Helper()
	for _, c := range res.Checks.Items {
		if c.Name == name {
			return c
		}
	}
	tb.Fatalf("no check %q", name)
	return Check{}
}
