package engine

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeScanner is a SecretScanner for the tests: it records what it is
// given and reports every occurrence of its secrets (by text), or the
// findings and error set.
type fakeScanner struct {
	mu      sync.Mutex
	calls   [][]string
	secrets map[string]string // secret -> rule
	// findings and err, when set, are returned whatever the texts.
	findings []SecretFinding
	err      error
	// onScan, when set, runs first (to cancel a context, say).
	onScan func()
}

func (f *fakeScanner) ScanSecrets(ctx context.Context, texts []string) ([]SecretFinding, error) {
	if f.onScan != nil {
		f.onScan()
	}
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(texts))
	f.mu.Unlock()
	if f.findings != nil || f.err != nil {
		return f.findings, f.err
	}
	var out []SecretFinding
	for i, t := range texts {
		for s, rule := range f.secrets {
			if strings.Contains(t, s) {
				out = append(out, SecretFinding{Text: i, Rule: rule, Secret: s})
			}
		}
	}
	return out, ctx.Err()
}

// TestScannerGetsTheTraceInOneCall checks what the engine hands a
// SecretScanner: every non-empty string value of the arguments (at any
// depth), every args_raw text and the final answer, in one call per
// evaluation, and nothing else of the trace (not keys, results, tool
// names); the contract's expected strings are scanned apart, once per
// contract and scanner.
func TestScannerGetsTheTraceInOneCall(t *testing.T) {
	c := mustContract(t, `[{"tool": "login", "args": {"user": "expected-user"}}]`)
	fa := "the answer"
	tr := Trace{
		Calls: []ToolCall{
			{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{"user": "ana", "empty": "", "n": json.Number("12345"),
				"deep": map[string]any{"list": []any{"a1", map[string]any{"k": "b2"}, true, nil}}}), Result: jsondoc.MustFromAny("result text")},
			{Tool: "upload", ArgsRaw: `{"x": "raw`, ArgsError: "unexpected end"},
		},
		FinalAnswer: &fa,
	}
	f := &fakeScanner{}
	opts := Options{SecretScanner: f}
	mustEvaluate(t, c, tr, opts)
	if len(f.calls) != 2 {
		t.Fatalf("%d scans, want 2 (the trace, the contract): %q", len(f.calls), f.calls)
	}
	// The judged texts (argument values, args_raw, the final answer) and
	// those scanned only for redaction (argument keys, results).
	want := []string{"a1", "ana", "b2", "deep", "empty", "k", "list", "n", "result text", "the answer", "user", `{"x": "raw`}
	got := slices.Sorted(slices.Values(f.calls[0]))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts of the trace scan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"expected-user"}, f.calls[1]); diff != "" {
		t.Errorf("texts of the contract scan (-want +got):\n%s", diff)
	}
	// Again with the same scanner: the contract's scan is kept.
	mustEvaluate(t, c, tr, opts)
	if len(f.calls) != 3 {
		t.Errorf("%d scans after a second evaluation, want 3", len(f.calls))
	}
	// A trace without text: no scan.
	g := &fakeScanner{}
	mustEvaluate(t, mustContract(t, `[]`), Trace{Calls: []ToolCall{{Tool: "ping"}}}, Options{SecretScanner: g})
	if len(g.calls) != 0 {
		t.Errorf("scans of a trace without text: %q", g.calls)
	}
}

// TestFindingAppliesToEveryPlace checks that a secret found in a text is
// reported (and redacted) at every place holding that text, and that a
// secret-named value holding a found secret is reported once, by the
// scanner's rule.
func TestFindingAppliesToEveryPlace(t *testing.T) {
	const s = "s3cr3t-Value-0001"
	fa := "again " + s
	tr := Trace{
		Calls: []ToolCall{
			{Tool: "a", Args: jsondoc.MustFromAny(map[string]any{"x": s, "y": []any{s}, "password": s})},
			{Tool: "b", Args: jsondoc.MustFromAny(map[string]any{"x": s}), ArgsRaw: s},
		},
		FinalAnswer: &fa,
	}
	res := mustEvaluate(t, mustContract(t, `[]`), tr, Options{SecretScanner: &fakeScanner{secrets: map[string]string{s: "fake-rule"}}})
	want := []Finding{
		{Call: 0, Path: "/password", Rule: "fake-rule", Value: "****"},
		{Call: 0, Path: "/x", Rule: "fake-rule", Value: "****"},
		{Call: 0, Path: "/y/0", Rule: "fake-rule", Value: "****"},
		{Call: 1, Rule: "fake-rule", Value: "****"},
		{Call: 1, Path: "/x", Rule: "fake-rule", Value: "****"},
		{Call: -1, Rule: "fake-rule", Value: "****"},
	}
	ch := checkNamed(t, res, CheckCredentials)
	if diff := cmp.Diff(want, ch.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if out, _ := json.Marshal(res); strings.Contains(string(out), s) {
		t.Errorf("the result holds the secret: %s", out)
	}
}

// TestNoSecretScanner pins an evaluation without a SecretScanner: the
// credentials check reports unknown (it cannot tell), secret-named
// arguments are still found, redacted and listed as issues, and the
// safety gate does not trip on the unknown check.
func TestNoSecretScanner(t *testing.T) {
	c := mustContract(t, `[{"tool": "login"}]`)
	res := mustEvaluate(t, c, secretTrace(), Options{})
	ch := checkNamed(t, res, CheckCredentials)
	want := Check{Name: CheckCredentials, Status: CheckUnknown, Calls: []int{},
		Detail: "secret rules unavailable: no secret scanner configured (Options.SecretScanner); only secret-named arguments were checked"}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("credentials check (-want +got):\n%s", diff)
	}
	if got := res.TraceCalls[0].Args.Get("password").Text(); got != "[REDACTED:secret-named-argument]" {
		t.Errorf("password = %v, want it redacted", got)
	}
	// Authorization is secret-named too: its whole value is replaced
	// wherever it occurs.
	if got := res.TraceCalls[1].Args.Get("headers").Get("Authorization").Text(); got != "[REDACTED:secret-named-argument]" {
		t.Errorf("Authorization = %v", got)
	}
	if want := "Logged in with password [REDACTED:secret-named-argument] and [REDACTED:secret-named-argument]."; *res.FinalAnswer != want {
		t.Errorf("final answer = %q, want %q", *res.FinalAnswer, want)
	}
	if len(res.Issues) < 2 || res.Issues[0].Kind != IssueCredential || res.Issues[1].Kind != IssueCredential {
		t.Errorf("issues = %+v, want the two secret-named arguments first", res.Issues)
	}
	if res.Passed != PassesMinScore(res.Score, res.MinScore) {
		t.Errorf("Passed = %v with score %v: the unknown credentials check changed the verdict", res.Passed, res.Score)
	}
	// RedactTrace says so.
	_, findings, err := RedactTrace(context.Background(), secretTrace(), nil)
	if !errors.Is(err, errNoSecretScanner) || len(findings) != 2 || findings[0].Rule != RuleSecretNamedArgument {
		t.Errorf("RedactTrace(nil scanner) = %v, %v", findings, err)
	}
}

// TestScannerErrors checks that a failing scanner, or one returning
// findings that break SecretFinding's rules, makes the credentials check
// unknown, while its valid findings are still redacted.
func TestScannerErrors(t *testing.T) {
	c := mustContract(t, `[{"tool": "a"}]`)
	tr := Trace{Calls: []ToolCall{{Tool: "a", Args: jsondoc.MustFromAny(map[string]any{"x": "my key ab12cd34ef56"})}}}
	valid := SecretFinding{Text: 0, Rule: "fake", Secret: "ab12cd34ef56"}
	tests := []struct {
		name     string
		scanner  *fakeScanner
		detail   string
		redacted bool
	}{
		{"error", &fakeScanner{findings: []SecretFinding{valid}, err: errors.New("rule x did not build")},
			"secret rules unavailable: rule x did not build", true},
		{"text out of range", &fakeScanner{findings: []SecretFinding{{Text: 2, Rule: "fake", Secret: "ab"}, valid}},
			"secret rules unavailable: secret scanner: finding 0: text 2 out of range [0, 2)", true},
		{"no rule", &fakeScanner{findings: []SecretFinding{valid, {Secret: "ab"}}},
			"secret rules unavailable: secret scanner: finding 1: no rule", true},
		{"empty secret", &fakeScanner{findings: []SecretFinding{{Rule: "fake"}}},
			"secret rules unavailable: secret scanner: finding 0: empty secret", false},
		{"not in the text", &fakeScanner{findings: []SecretFinding{{Rule: "fake", Secret: "zz"}}},
			"secret rules unavailable: secret scanner: finding 0: secret of rule fake not in text 0", false},
		{"prefix", &fakeScanner{findings: []SecretFinding{{Rule: "fake", Secret: "ab", Prefix: 3}}},
			"secret rules unavailable: secret scanner: finding 0: prefix 3 out of range [0, 2]", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustEvaluate(t, c, tr, Options{SecretScanner: tc.scanner})
			ch := checkNamed(t, res, CheckCredentials)
			if ch.Status != CheckUnknown || ch.Detail != tc.detail {
				t.Errorf("credentials = %s %q, want unknown %q", ch.Status, ch.Detail, tc.detail)
			}
			got := res.TraceCalls[0].Args.Get("x").Text()
			if redacted := got == "my key [REDACTED:fake]"; redacted != tc.redacted {
				t.Errorf("x = %q (redacted %v, want %v)", got, redacted, tc.redacted)
			}
		})
	}
}

// TestScanCancelled checks that Evaluate returns ctx.Err() when ctx ends
// during the credential scan.
func TestScanCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeScanner{onScan: cancel}
	_, err := Evaluate(ctx, mustContract(t, `[{"tool": "a"}]`), Trace{Calls: []ToolCall{{Tool: "a", Args: jsondoc.MustFromAny(map[string]any{"x": "text"})}}}, Options{SecretScanner: f})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Evaluate error = %v, want context.Canceled", err)
	}
}

// TestContractSecretsPerScanner checks that the contract's expected
// arguments are hidden with the evaluation's own scanner: the contract
// keeps what it showed with one scanner, and another scanner's view is
// computed for it, not taken from the first.
func TestContractSecretsPerScanner(t *testing.T) {
	c := mustContract(t, `[{"tool": "deploy", "args": {"key_id": "kid-Zq8vR2kL9xT4"}}]`)
	tr := Trace{Calls: []ToolCall{{Tool: "deploy", Args: jsondoc.MustFromAny(map[string]any{"key_id": "other"})}}}
	show := func(s SecretScanner) string {
		res := mustEvaluate(t, c, tr, Options{SecretScanner: s})
		out, _ := json.Marshal(res.ExpectedCalls[0].Args)
		return string(out)
	}
	plain := `{"key_id":"kid-Zq8vR2kL9xT4"}`
	fake := &fakeScanner{secrets: map[string]string{"Zq8vR2kL9xT4": "fake"}}
	for i, tc := range []struct {
		s    SecretScanner
		want string
	}{
		{testSecrets, plain},
		{fake, `{"key_id":"kid-[REDACTED:fake]"}`},
		{testSecrets, plain},
		{nil, plain},
		{fake, `{"key_id":"kid-[REDACTED:fake]"}`},
	} {
		if got := show(tc.s); got != tc.want {
			t.Errorf("evaluation %d: expected args %s, want %s", i, got, tc.want)
		}
	}
}
