package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/toolscore/toolscore/internal/engine/internal/secretrules"
)

// Sample secrets, built at run time so the source holds no literal secret
// (and secret scanners of this repository stay quiet).
var (
	sampleGitHubPAT = "ghp_" + "R2d9xK7mQ4vL8pN3sT6wY1zB5cF0hJ" + "aE4uIo"
	sampleAWSKey    = "AKIA" + "Z7VRSQ5TJN4QPL2K"
	sampleSlackBot  = "xoxb-" + "123456789012-1234567890123-" + "abcdefghijABCDEFGHIJklmn"
	sampleStripe    = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
)

func mustSecretRules(tb testing.TB) *secretRules {
	tb.Helper()
	sr, err := loadSecretRules()
	if err != nil {
		tb.Fatalf("loadSecretRules: %v", err)
	}
	return sr
}

func TestScanFindsSecrets(t *testing.T) {
	sc := newScanner(mustSecretRules(t))
	tests := []struct {
		text string
		want []secretHit
	}{
		{sampleGitHubPAT, []secretHit{{"github-pat", sampleGitHubPAT}}},
		{"token: " + sampleGitHubPAT, []secretHit{{"github-pat", sampleGitHubPAT}}},
		{sampleAWSKey, []secretHit{{"aws-access-token", sampleAWSKey}}},
		{sampleSlackBot, []secretHit{{"slack-bot-token", sampleSlackBot}}},
		{sampleStripe, []secretHit{{"stripe-access-token", sampleStripe}}},
		{"password=hunter2xyzA9", []secretHit{{"generic-api-key", "hunter2xyzA9"}}},
		// Not secrets.
		{"", nil},
		{"LIS", nil},
		{"2026-12-18", nil},
		{"FL-204", nil},
		{"trip 3 to Lisbon", nil},
		{"The api key and token are in the vault; they asked for access.", nil},
		{"ghp_" + strings.Repeat("x", 36), nil}, // gitleaks' own false positive example
		{"AKIAIOSFODNN7EXAMPLE", nil},           // AWS's documented example key
		{"\x00\xff\xfe binary \x01\x02", nil},
	}
	for _, tc := range tests {
		got := slices.Clone(sc.scan(tc.text))
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
			t.Errorf("scan(%q) mismatch (-want +got):\n%s", tc.text, diff)
		}
	}
}

// TestScanMatchesGitleaks checks that splitting the rule set into one
// Detector per rule, with the keyword and length prefilters, finds exactly
// what gitleaks' own Detector finds with the whole default config, on
// samples generated from every rule's regular expression.
func TestScanMatchesGitleaks(t *testing.T) {
	sr := mustSecretRules(t)
	full := detect.NewDetector(fullConfig(t))
	sc := newScanner(sr)
	rng := rand.New(rand.NewPCG(1, 2))
	detected := map[string]bool{}
	n := 0
	for _, r := range sr.rules {
		re, err := syntax.Parse(r.spec.Regex, syntax.Perl)
		if err != nil {
			t.Fatalf("rule %s: %v", r.id, err)
		}
		sample := sampleRegex(re, rng)
		for _, text := range []string{sample, "value: " + sample + " end", strings.ToUpper(sample), sample[:len(sample)/2]} {
			n++
			var want []secretHit
			for _, f := range full.DetectString(text) {
				if f.Secret != "" {
					want = append(want, secretHit{f.RuleID, f.Secret})
				}
			}
			slices.SortFunc(want, func(a, b secretHit) int {
				return strings.Compare(a.rule+"\x00"+a.secret, b.rule+"\x00"+b.secret)
			})
			want = slices.Compact(want)
			// The uri-credentials rule is toolscore's own, beside
			// gitleaks' rules: leave it out of the comparison.
			got := slices.DeleteFunc(slices.Clone(sc.scan(text)), func(h secretHit) bool { return h.rule == RuleURICredentials })
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
				t.Errorf("rule %s, text %q: scan differs from gitleaks (-gitleaks +scan):\n%s", r.id, text, diff)
			}
			for _, h := range got {
				detected[h.rule] = true
			}
		}
	}
	// The samples must exercise most rules, or the comparison proves little.
	if len(detected) < len(sr.rules)*2/3 {
		t.Errorf("samples triggered %d of %d rules; want at least two thirds", len(detected), len(sr.rules))
	}
	t.Logf("%d texts, %d of %d rules fired", n, len(detected), len(sr.rules))
}

// fullConfig loads the whole default config as gitleaks does (from its
// TOML, not from the generated table the scanner uses).
func fullConfig(tb testing.TB) config.Config {
	tb.Helper()
	cfg, err := secretrules.LoadDefaultConfig()
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// mustDetector returns rule r's Detector, building it if need be.
func mustDetector(tb testing.TB, r *secretRule) *detect.Detector {
	tb.Helper()
	d, err := r.detector()
	if err != nil {
		tb.Fatalf("rule %s: %v", r.id, err)
	}
	return d
}

// sampleRegex generates a string matching re (empty-width assertions
// aside), with random characters from each class, so entropy checks can
// pass.
func sampleRegex(re *syntax.Regexp, rng *rand.Rand) string {
	var b strings.Builder
	var gen func(re *syntax.Regexp)
	repeat := func(sub *syntax.Regexp, lo, hi int) {
		if hi < 0 || hi > lo+24 {
			hi = lo + 24
		}
		n := lo + rng.IntN(hi-lo+1)
		for range n {
			gen(sub)
		}
	}
	gen = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			// Pick a random rune of the class, preferring ASCII.
			var ascii []rune
			for i := 0; i+1 < len(re.Rune); i += 2 {
				for r := re.Rune[i]; r <= re.Rune[i+1] && r < 0x7f; r++ {
					if unicode.IsPrint(r) {
						ascii = append(ascii, r)
					}
				}
			}
			if len(ascii) > 0 {
				b.WriteRune(ascii[rng.IntN(len(ascii))])
			} else if len(re.Rune) > 0 {
				b.WriteRune(re.Rune[0])
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)])
		case syntax.OpCapture:
			gen(re.Sub[0])
		case syntax.OpStar:
			repeat(re.Sub[0], 0, 3)
		case syntax.OpPlus:
			repeat(re.Sub[0], 1, 4)
		case syntax.OpQuest:
			repeat(re.Sub[0], 0, 1)
		case syntax.OpRepeat:
			repeat(re.Sub[0], re.Min, re.Max)
		case syntax.OpConcat:
			for _, s := range re.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(re.Sub[rng.IntN(len(re.Sub))])
		}
	}
	gen(re)
	return b.String()
}

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

func TestMaskSecret(t *testing.T) {
	tests := []struct{ in, rule, want string }{
		{"hunter2", "generic-api-key", "****"},
		{sampleGitHubPAT, "github-pat", "ghp_****"},
		// Only a literal the rule's pattern fixes is shown, never random
		// characters of the secret.
		{"ééééééééééééééééééééé", "some-token", "****"},
		{sampleAWSKey, "aws-access-token", "AKIA****"},
		{sampleStripe, "stripe-access-token", "sk_l****"},
		{sampleSlackBot, "slack-bot-token", "xoxb****"},
		{"0123456789abcdef0123456789abcdef", "facebook-secret", "****"},
		{"ghp" + sampleGitHubPAT[4:] + "x", "github-pat", "****"},
		{"correcthorsebatterystaple", "generic-api-key", "****"},
		{"correcthorsebatterystaple", RuleSecretNamedArgument, "****"},
	}
	for _, tc := range tests {
		if got := maskSecret(tc.in, tc.rule); got != tc.want {
			t.Errorf("maskSecret(%q, %q) = %q, want %q", tc.in, tc.rule, got, tc.want)
		}
	}
}

func TestScanCredentials(t *testing.T) {
	fa := "Done. Your token is " + sampleGitHubPAT
	tr := Trace{
		Calls: []ToolCall{
			{Tool: "search", Args: map[string]any{"q": "flights to Lisbon", "limit": json.Number("10")}},
			{Tool: "login", Args: map[string]any{
				"user":     "ana",
				"password": "hunter2!",
				"auth":     map[string]any{"api_key": "${API_KEY}", "headers": []any{"x", "Bearer " + sampleGitHubPAT}},
				"a/b~c":    map[string]any{"pin_token": json.Number("987654")},
			}},
			{Tool: "upload", ArgsRaw: `{"aws": "` + sampleAWSKey + `"`, ArgsError: "unexpected end of JSON input"},
		},
		FinalAnswer: &fa,
	}
	cs := scanCredentials(&tr)
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
			{Tool: "login", Args: map[string]any{"user": "ana", "password": "hunter2-long", "pin": json.Number("42")},
				Result: map[string]any{"echo": "password hunter2-long accepted"}},
			{Tool: "get_repo", Args: map[string]any{"repo": "toolscore", "headers": map[string]any{"Authorization": "token " + sampleGitHubPAT}},
				Result: []any{"ok"}},
			{Tool: "search", Args: map[string]any{"q": "Lisbon"}, Result: "nothing"},
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
	res, err := Evaluate(context.Background(), c, tr, Options{})
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
		{Tool: "login", Args: map[string]any{"user": "ana", "password": "[REDACTED:secret-named-argument]", "pin": json.Number("42")},
			Result: map[string]any{"echo": "password [REDACTED:secret-named-argument] accepted"}},
		{Tool: "get_repo", Args: map[string]any{"repo": "toolscore", "headers": map[string]any{"Authorization": "token [REDACTED:github-pat]"}},
			Result: []any{"ok"}},
		{Tool: "search", Args: map[string]any{"q": "Lisbon"}, Result: "nothing"},
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
	kept, err := Evaluate(context.Background(), c, tr, Options{KeepSecrets: true})
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
	res, err := Evaluate(context.Background(), c, secretTrace(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Evaluate(context.Background(), c, Trace{Calls: res.TraceCalls, FinalAnswer: res.FinalAnswer}, Options{})
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
			res, err := Evaluate(context.Background(), c, secretTrace(), Options{})
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

// TestRulePrefilters checks every prefilter is in use (its rule's pattern
// is the one it was derived from) and agrees with the rule on texts built
// around the rule's operators.
func TestRulePrefilters(t *testing.T) {
	sr := mustSecretRules(t)
	for id := range rulePrefilters {
		i := slices.IndexFunc(sr.rules, func(r secretRule) bool { return r.id == id })
		if i < 0 || sr.rules[i].mayMatch == nil {
			t.Errorf("prefilter of %s is not in use: the rule changed; derive it again", id)
		}
	}
	i := slices.IndexFunc(sr.rules, func(r secretRule) bool { return r.id == "generic-api-key" })
	r := &sr.rules[i]
	det := mustDetector(t, r)
	const sec = "Zq8vR2kL9xT4wQ"
	texts := []string{
		"password=" + sec, "api_key: '" + sec + "'", "token =>  \"" + sec + "\"",
		"secret,\t" + sec[:6] + "+/" + sec[6:], "key |= " + sec, "access: short", "auth: " + sec[:9] + "!",
		"the key and token, they asked for access.", "key:\n\n\n\n\n\n" + sec, "key:     =" + sec,
		"key: `\"' =" + sec, "key: \u212a" + sec, "creds ||" + sec + ".x", "AUTH_TOKEN=" + sec + ";",
	}
	matched := 0
	for _, text := range texts {
		found := len(det.DetectString(text)) > 0
		if found {
			matched++
		}
		if found && !r.mayMatch(text) {
			t.Errorf("generic-api-key prefilter rejects %q, which the rule matches", text)
		}
	}
	if matched < 6 {
		t.Errorf("the rule matched %d of the texts; the test needs at least 6 to mean something", matched)
	}
	if genericAPIKeyMayMatch("The api key and token are in the vault; they asked for access.") {
		t.Errorf("the prefilter lets plain prose through")
	}
}
