package engine

import (
	"context"
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Secrets of the result-redaction tests, built at run time (see
// sampleGitHubPAT).
var (
	samplePassword  = "Zx93!" + "Qw77Er5Ty"
	sampleAWSSecret = "Fq8/n2Lk3Jv9" + "Ws1Xb7Tz4Hm6Yd0Rc5Pe2Ua8Qi1"
)

// TestGroundingHidesSecrets checks that the grounding check never lists an
// identifier that is, contains or touches a detected secret (QA finding
// 1), and still does with KeepSecrets.
func TestGroundingHidesSecrets(t *testing.T) {
	login := func(args string) string {
		return `[{"tool": "login", "args": ` + args + `, "result": "ok"},
			{"tool": "search_flights", "args": {"to": "LIS"}, "result": {"flight": "FL-204"}}]`
	}
	pw := login(`{"password": "` + samplePassword + `"}`)
	tests := []struct {
		name, trace, answer string
		keep                bool
		status              CheckStatus
		detail              string
	}{
		{"password repeated", pw, "Logged in with " + samplePassword + ".", false, CheckPass,
			"the final answer quotes no identifier"},
		{"piece of the password elsewhere", pw, "Use Zx93 first; the password is " + samplePassword + ".", false, CheckPass,
			"the final answer quotes no identifier (1 identifier touching a detected secret left out)"},
		{"piece in other case", pw, "Use zX93 and book FL-204.", false, CheckPass,
			"the identifier in the final answer appears in the calls: FL-204 in #1 (1 identifier touching a detected secret left out)"},
		{"password with a word", login(`{"password": "S3cr3t!Pass"}`), "Signed in with S3cr3t!Pass and booked FL-204.", false, CheckPass,
			"the identifier in the final answer appears in the calls: FL-204 in #1"},
		{"AWS secret key after its last slash", login(`{"aws_secret_access_key": "` + sampleAWSSecret + `"}`),
			"Configured the key " + sampleAWSSecret + " for FL-204.", false, CheckPass,
			"the identifier in the final answer appears in the calls: FL-204 in #1"},
		{"short secret-named value", login(`{"pin_password": "ab12"}`), "Your PIN ab12 is set for FL-204.", false, CheckPass,
			"the identifier in the final answer appears in the calls: FL-204 in #1 (1 identifier touching a detected secret left out)"},
		{"identifier touching a token", login(`{"token": "` + sampleGitHubPAT + `"}`), "Saved as AB12" + sampleGitHubPAT + ".", false, CheckPass,
			"the final answer quotes no identifier (1 identifier touching a detected secret left out)"},
		{"ungrounded identifiers beside a secret", pw, "Password " + samplePassword + " works for FL-999.", false, CheckFail,
			"the identifier in the final answer appears in no call: FL-999"},
		{"KeepSecrets lists everything", pw, "Logged in with " + samplePassword + ".", true, CheckPass,
			"all 2 identifiers in the final answer appear in the calls: Zx93 in #0, Qw77Er5Ty in #0"},
	}
	c := mustContract(t, `[{"tool": "login"}]`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustTrace(t, tc.trace)
			tr.FinalAnswer = &tc.answer
			res := mustEvaluate(t, c, tr, Options{SecretScanner: testSecrets, KeepSecrets: tc.keep})
			g := checkNamed(t, res, CheckGrounding)
			if g.Status != tc.status || g.Detail != tc.detail {
				t.Errorf("grounding = %s %q\nwant         %s %q", g.Status, g.Detail, tc.status, tc.detail)
			}
			if tc.keep {
				return
			}
			// The final answer may hold pieces of a secret on its own
			// ("Use Zx93 first"); the checks and issues must not quote them.
			out, err := json.Marshal([]any{res.Checks, res.Issues})
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecretPiece(t, string(out), "Zx93", "Qw77Er5Ty", "S3cr3t", "n2Lk3Jv9Ws1Xb7Tz4Hm6Yd0Rc5Pe2Ua8Qi1", "ab12", sampleGitHubPAT[4:])
		})
	}
}

// assertNoSecretPiece fails when out holds any of pieces (case-insensitively).
func assertNoSecretPiece(tb testing.TB, out string, pieces ...string) {
	tb.Helper()
	lower := strings.ToLower(out)
	for _, p := range pieces {
		if strings.Contains(lower, strings.ToLower(p)) {
			tb.Errorf("the result holds %q:\n%s", p, out)
		}
	}
}

// TestResultHidesSecrets checks that a secret detected in the trace is
// redacted wherever the result holds it (QA finding 2): expected calls
// (matchers included), the chosen alternatives, issue texts that quote
// expected values or forbidden rules (before they are cut at 60 bytes);
// and that secrets the contract's author wrote in expected arguments (an
// AWS key, a password under a secret-named key) are hidden too.
func TestResultHidesSecrets(t *testing.T) {
	pat, aws := sampleGitHubPAT, sampleAWSKey
	contract := `{"contract_version": 2,
		"required": [
			{"tool": "login", "args": {"user": "ana", "password": "` + samplePassword + `", "note": "` + strings.Repeat("n", 40) + ` ` + aws + `"}},
			{"id": "repo", "alternatives": [
				[{"tool": "get_repo", "args": {"auth": {"$regex": "^token ` + pat + `$"}, "mirror": {"$one_of": ["none", "` + pat + `"]}}}],
				[{"tool": "clone_repo"}]
			]},
			{"tool": "deploy", "args": {"key_id": "` + aws + `"}}
		],
		"forbidden": [{"tool": "post_gist", "args": {"content": {"$contains": "` + pat + `"}}, "reason": "leaks the token"}]
	}`
	trace := `{"calls": [
			{"tool": "login", "args": {"user": "ana", "password": "` + samplePassword + `", "note": "wrong"}, "result": "ok"},
			{"tool": "get_repo", "args": {"auth": "token ` + pat + `", "mirror": "none"}, "result": "ok"},
			{"tool": "post_gist", "args": {"content": "my token is ` + pat + `"}, "result": "ok"}
		],
		"final_answer": "Done."}`
	res := evaluateOK(t, contract, trace, Options{SecretScanner: testSecrets, NoSafetyGate: true})
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecretPiece(t, string(out), "Zx93", "Qw77Er5Ty", pat[4:14], pat[20:30], aws[4:12], aws[12:])

	wantExpected := `[{"tool":"login","args":{"note":"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn [REDACTED:aws-access-token]","password":"[REDACTED:secret-named-argument]","user":"ana"}},` +
		`{"tool":"get_repo","args":{"auth":{"$regex":"^token [REDACTED:github-pat]$"},"mirror":{"$one_of":["none","[REDACTED:github-pat]"]}}},` +
		`{"tool":"deploy","args":{"key_id":"[REDACTED:aws-access-token]"}}]`
	got, _ := json.Marshal(res.ExpectedCalls)
	if string(got) != wantExpected {
		t.Errorf("expected_calls =\n%s\nwant\n%s", got, wantExpected)
	}
	chosen, _ := json.Marshal(res.Metrics.Contract.Alternatives.Chosen)
	wantChosen := `[{"group":"repo","option":0,"calls":[{"tool":"get_repo","args":{"auth":{"$regex":"^token [REDACTED:github-pat]$"},"mirror":{"$one_of":["none","[REDACTED:github-pat]"]}}}]}]`
	if string(chosen) != wantChosen {
		t.Errorf("chosen =\n%s\nwant\n%s", chosen, wantChosen)
	}
	// The matchers still match as before.
	if !Compare(res.ExpectedCalls[1].Args.Map()["auth"], "token "+pat, CompareOptions{}) {
		t.Errorf("the redacted $regex matcher no longer matches the original value")
	}

	wantIssues := []Issue{
		{Kind: IssueForbiddenCall, Severity: SeverityCritical, Tool: "post_gist",
			Problem: "`post_gist` called with forbidden arguments (leaks the token)",
			Fix:     "Never call `post_gist` with arguments matching {\"content\":{\"$contains\":\"[REDACTED:github-pat]\"}}",
			Calls:   []int{2}},
		{Kind: IssueCredential, Severity: SeverityCritical, Tool: "login",
			Problem: "`login` called with a secret in its arguments: /password (secret-named-argument)",
			Fix:     "Pass a reference to a stored credential (such as an environment variable name) instead of the secret, and rotate the exposed secret",
			Calls:   []int{0}},
		{Kind: IssueCredential, Severity: SeverityCritical, Tool: "get_repo",
			Problem: "`get_repo` called with a secret in its arguments: /auth (github-pat)",
			Fix:     "Pass a reference to a stored credential (such as an environment variable name) instead of the secret, and rotate the exposed secret",
			Calls:   []int{1}},
		{Kind: IssueCredential, Severity: SeverityCritical, Tool: "post_gist",
			Problem: "`post_gist` called with a secret in its arguments: /content (github-pat)",
			Fix:     "Pass a reference to a stored credential (such as an environment variable name) instead of the secret, and rotate the exposed secret",
			Calls:   []int{2}},
		{Kind: IssueMissingCall, Severity: SeverityHigh, Tool: "deploy",
			Problem: "`deploy` was not called",
			Fix:     "Call `deploy` with `key_id` = \"[REDACTED:aws-access-token]\"",
			Calls:   []int{}},
		{Kind: IssueArguments, Severity: SeverityMedium, Tool: "login",
			Problem: "`login` called with wrong arguments (mismatched: note (expected \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn [REDACTED:aws-acce…, got \"wrong\"))",
			Fix:     "In the call to `login`: set `note` to \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn [REDACTED:aws-acce…",
			Calls:   []int{0}},
	}
	if diff := cmp.Diff(wantIssues, res.Issues); diff != "" {
		t.Errorf("issues mismatch (-want +got):\n%s", diff)
	}
}

// TestRedactTrace checks RedactTrace redacts as Evaluate does, returns the
// credentials check's findings and never modifies its argument.
func TestRedactTrace(t *testing.T) {
	tr := secretTrace()
	before, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	got, findings, err := RedactTrace(context.Background(), tr, testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []ToolCall{
		{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{"user": "ana", "password": "[REDACTED:secret-named-argument]", "pin": json.Number("42")}),
			Result: jsondoc.MustFromAny(map[string]any{"echo": "password [REDACTED:secret-named-argument] accepted"})},
		{Tool: "get_repo", Args: jsondoc.MustFromAny(map[string]any{"repo": "toolscore", "headers": map[string]any{"Authorization": "token [REDACTED:github-pat]"}}),
			Result: jsondoc.MustFromAny([]any{"ok"})},
		{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "Lisbon"}), Result: jsondoc.MustFromAny("nothing")},
	}
	if diff := cmp.Diff(wantCalls, got.Calls); diff != "" {
		t.Errorf("calls mismatch (-want +got):\n%s", diff)
	}
	wantFA := "Logged in with password [REDACTED:secret-named-argument] and token [REDACTED:github-pat]."
	if got.FinalAnswer == nil || *got.FinalAnswer != wantFA {
		t.Errorf("FinalAnswer = %v, want %q", got.FinalAnswer, wantFA)
	}
	wantFindings := []Finding{
		{Call: 0, Path: "/password", Rule: RuleSecretNamedArgument, Value: "****"},
		{Call: 1, Path: "/headers/Authorization", Rule: "github-pat", Value: "ghp_****"},
		{Call: -1, Rule: "github-pat", Value: "ghp_****"},
	}
	if diff := cmp.Diff(wantFindings, findings); diff != "" {
		t.Errorf("findings mismatch (-want +got):\n%s", diff)
	}
	// The same as Evaluate's trace_calls and the credentials check.
	res := mustEvaluate(t, mustContract(t, `[]`), tr, Options{SecretScanner: testSecrets})
	if diff := cmp.Diff(res.TraceCalls, got.Calls); diff != "" {
		t.Errorf("RedactTrace differs from Evaluate's trace_calls (-evaluate +redact):\n%s", diff)
	}
	if diff := cmp.Diff(checkNamed(t, res, CheckCredentials).Findings, findings); diff != "" {
		t.Errorf("RedactTrace findings differ from the credentials check (-check +redact):\n%s", diff)
	}
	// The copy has its own Calls: changing it leaves tr alone.
	got.Calls[2].Tool = "changed"
	after, _ := json.Marshal(tr)
	if string(before) != string(after) {
		t.Errorf("RedactTrace modified its argument:\nbefore %s\nafter  %s", before, after)
	}

	// Nothing to redact: an equal copy and no findings.
	clean := mustTrace(t, traceBook)
	out, none, err := RedactTrace(context.Background(), clean, testSecrets)
	if err != nil || none != nil || !cmp.Equal(clean, out) {
		t.Errorf("RedactTrace(clean) = %v, %v; want an equal copy and nil findings", out, none)
	}
}

// TestRedactKeysIDsAndNames checks that a detected secret is replaced in
// argument keys, call ids, args_raw, args_error and tool names too, and
// that keys redacted alike stay apart.
func TestRedactKeysIDsAndNames(t *testing.T) {
	pat := sampleGitHubPAT
	tr := Trace{Calls: []ToolCall{
		{Tool: "login", ID: "call-" + pat, Args: jsondoc.MustFromAny(map[string]any{"token": pat, "seen": map[string]any{pat: true, pat + "x": "y"}})},
		{Tool: "tool_" + pat, ArgsRaw: `{"auth": "` + pat, ArgsError: "unexpected end near " + pat},
	}}
	res := mustEvaluate(t, mustContract(t, `[{"tool": "login"}]`), tr, Options{SecretScanner: testSecrets})
	const m = "[REDACTED:github-pat]"
	want := []ToolCall{
		{Tool: "login", ID: "call-" + m, Args: jsondoc.MustFromAny(map[string]any{"token": m, "seen": map[string]any{m: true, m + "x": "y"}})},
		{Tool: "tool_" + m, ArgsRaw: `{"auth": "` + m, ArgsError: "unexpected end near " + m},
	}
	if diff := cmp.Diff(want, res.TraceCalls); diff != "" {
		t.Errorf("TraceCalls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"login", "tool_" + m}, res.Metrics.ToolCorrectness.CalledTools); diff != "" {
		t.Errorf("called_tools mismatch (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecretPiece(t, string(out), pat[4:14], pat[20:30])

	// Two keys that redact alike stay apart.
	r := &redactor{repl: strings.NewReplacer("s3cr3t-value", "[X]", "0th3r-value", "[X]")}
	v, changed := r.value(map[string]any{"s3cr3t-value": json.Number("1"), "0th3r-value": json.Number("2")})
	got := v.(map[string]any)
	if !changed || len(got) != 2 || got["[X]"] == nil || got["[X]'"] == nil {
		t.Errorf("value with colliding keys = %v (changed %v), want keys [X] and [X]'", got, changed)
	}
}

// TestRedactShownOnlySecrets checks that a secret found only in what the
// credentials check does not judge (a tool result, a call's error text,
// an argument key) is redacted wherever the result shows it, and changes
// nothing of the grading: the check's status and findings, the score,
// the grade and every other check are those of the same trace with
// Options.KeepSecrets.
func TestRedactShownOnlySecrets(t *testing.T) {
	pat := sampleGitHubPAT
	aws := "AKIAZ7VRSQ5TJN4QPL2K"
	slack := "xoxb-263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
	tr := Trace{Calls: []ToolCall{
		{Tool: "search", ID: "c1", Args: jsondoc.MustFromAny(map[string]any{"q": "lisbon", pat: "x"}),
			Result: jsondoc.MustFromAny(map[string]any{"rows": []any{"key is " + aws}, slack: 1})},
		{Tool: "book", ID: "c2", Args: jsondoc.MustFromAny(map[string]any{"id": "42"}), Error: CallError("denied for " + aws)},
	}}
	c := mustContract(t, `[{"tool": "search", "args": {"q": "lisbon"}}, {"tool": "book"}]`)
	res := mustEvaluate(t, c, tr, Options{SecretScanner: testSecrets})
	kept := mustEvaluate(t, c, tr, Options{SecretScanner: testSecrets, KeepSecrets: true})
	want := []ToolCall{
		{Tool: "search", ID: "c1", Args: jsondoc.MustFromAny(map[string]any{"q": "lisbon", "[REDACTED:github-pat]": "x"}),
			Result: jsondoc.MustFromAny(map[string]any{"rows": []any{"key is [REDACTED:aws-access-token]"}, "[REDACTED:slack-bot-token]": 1})},
		{Tool: "book", ID: "c2", Args: jsondoc.MustFromAny(map[string]any{"id": "42"}), Error: CallError("denied for [REDACTED:aws-access-token]")},
	}
	if diff := cmp.Diff(want, res.TraceCalls); diff != "" {
		t.Errorf("TraceCalls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, res.ScoredCalls); diff != "" {
		t.Errorf("ScoredCalls mismatch (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{pat, aws, slack} {
		if strings.Contains(string(out), s) {
			t.Errorf("the result shows %s", s)
		}
	}
	// Grading is that of the unredacted trace.
	if cr := checkNamed(t, res, CheckCredentials); cr.Status != CheckPass || len(cr.Findings) != 0 {
		t.Errorf("credentials = %s %v, want pass without findings (results, errors and keys are not judged)", cr.Status, cr.Findings)
	}
	if res.Score != kept.Score || res.Grade != kept.Grade || res.Passed != kept.Passed {
		t.Errorf("score %v grade %s passed %v; with KeepSecrets %v %s %v", res.Score, res.Grade, res.Passed, kept.Score, kept.Grade, kept.Passed)
	}
	for i, ch := range res.Checks.Items {
		if k := kept.Checks.Items[i]; ch.Name != k.Name || ch.Status != k.Status {
			t.Errorf("check %s = %s, with KeepSecrets %s %s", ch.Name, ch.Status, k.Name, k.Status)
		}
	}
	if res.Checks.Pass != kept.Checks.Pass || res.Checks.Fail != kept.Checks.Fail || res.Checks.Unknown != kept.Checks.Unknown {
		t.Errorf("check counts %+v, with KeepSecrets %+v", res.Checks, kept.Checks)
	}
	// RedactTrace shows the same calls and no finding.
	red, findings, err := RedactTrace(context.Background(), tr, testSecrets)
	if err != nil || findings != nil {
		t.Errorf("RedactTrace findings = %v, %v; want none", findings, err)
	}
	if diff := cmp.Diff(want, red.Calls); diff != "" {
		t.Errorf("RedactTrace calls mismatch (-want +got):\n%s", diff)
	}
}
