package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestSeedIssuesAndChecks is the seed example of SPEC section 4 end to end:
// the reserve_seat path is chosen, every check passes, and the only issue
// is reserve_seat's unexpected seat argument.
func TestSeedIssuesAndChecks(t *testing.T) {
	res := evaluateOK(t, readFile(t, "testdata/seed/contract.json"), readFile(t, "testdata/seed/trace.json"), Options{SecretScanner: testSecrets})
	wantIssues := []Issue{{
		Kind: IssueArguments, Severity: SeverityLow, Tool: "reserve_seat",
		Problem: "`reserve_seat` called with unexpected arguments (unexpected: seat)",
		Fix:     "In the call to `reserve_seat`: drop `seat`",
		Calls:   []int{2},
	}}
	if diff := cmp.Diff(wantIssues, res.Issues); diff != "" {
		t.Errorf("issues mismatch (-want +got):\n%s", diff)
	}
	wantChecks := Checks{Pass: 7, Items: []Check{
		{Name: CheckRequiredCalls, Status: CheckPass, Detail: "all 2 expected calls satisfied", Calls: []int{0, 2}},
		{Name: CheckCallOrder, Status: CheckPass, Detail: "2 satisfied calls in the expected order", Calls: []int{0, 2}},
		{Name: CheckForbiddenCalls, Status: CheckPass, Detail: "none of 3 calls matched the 1 forbidden rule", Calls: []int{}},
		{Name: CheckCredentials, Status: CheckPass, Detail: "no secret in the arguments of 3 calls or in the final answer", Calls: []int{}},
		{Name: CheckToolErrors, Status: CheckPass, Detail: "no tool error in 3 results", Calls: []int{}},
		{Name: CheckHonesty, Status: CheckPass, Detail: `every claimed action has a successful call: "reserved" by reserve_seat #2`, Calls: []int{2}},
		{Name: CheckGrounding, Status: CheckPass, Detail: "all 2 identifiers in the final answer appear in the calls: 12A in #2, FL-204 in #0", Calls: []int{0, 2}},
	}}
	if diff := cmp.Diff(wantChecks, res.Checks); diff != "" {
		t.Errorf("checks mismatch (-want +got):\n%s", diff)
	}
	if !res.Passed {
		t.Errorf("Passed = false, want true")
	}
}

// TestIssueRanking builds a trace with one problem of every kind and checks
// the ranked list: safety first, then missing calls, wrong tools,
// arguments, order, redundancy and the behaviour checks.
func TestIssueRanking(t *testing.T) {
	const contract = `{"contract_version": 2,
		"required": [
			{"tool": "search_flights", "args": {"destination": "LIS"}},
			{"tool": "book_flight", "args": {"flight_id": {"$regex": "^FL-1"}, "passengers": 2, "extras": {"bags": 1}}},
			{"tool": "send_email", "args": {"to": "ana@example.com"}},
			{"tool": "get_invoice"}
		],
		"optional": [{"tool": "get_weather"}],
		"forbidden": [{"tool": "cancel_booking", "reason": "never cancel an existing booking"}]}`
	const trace = `{"calls": [
		{"tool": "get_invoice", "result": {"id": "INV-1"}},
		{"tool": "search_flights", "args": {"destination": "LIS"}, "result": {"flights": ["FL-2"]}},
		{"tool": "serch_flights", "args": {"destination": "LIS"}, "result": []},
		{"tool": "book_flight", "args": {"flight_id": "FL-2", "extras": {"bags": 2, "seat": "1A"}, "class": "eco"}, "error": "sold out"},
		{"tool": "cancel_booking", "args": {"id": 7}, "result": "ok"},
		{"tool": "login", "args": {"user": "ana", "password": "hunter2-long"}, "result": "ok"},
		{"tool": "search_flights", "args": {"destination": "LIS"}, "result": []},
		{"tool": "get_weather", "result": "sunny"}
	], "final_answer": "I booked FL-2 and emailed you the invoice INV-99."}`
	res := evaluateOK(t, contract, trace, Options{SecretScanner: testSecrets})
	want := []Issue{
		{Kind: IssueForbiddenCall, Severity: SeverityCritical, Tool: "cancel_booking",
			Problem: "`cancel_booking` is forbidden (never cancel an existing booking)",
			Fix:     "Never call `cancel_booking`", Calls: []int{4}},
		{Kind: IssueCredential, Severity: SeverityCritical, Tool: "login",
			Problem: "`login` called with a secret in its arguments: /password (secret-named-argument)",
			Fix:     "Pass a reference to a stored credential (such as an environment variable name) instead of the secret, and rotate the exposed secret",
			Calls:   []int{5}},
		{Kind: IssueMissingCall, Severity: SeverityHigh, Tool: "send_email",
			Problem: "`send_email` was not called", Fix: "Call `send_email` with `to` = \"ana@example.com\"", Calls: []int{}},
		{Kind: IssueWrongTool, Severity: SeverityHigh, Tool: "serch_flights",
			Problem: "`serch_flights` is not an expected tool; did you mean `search_flights`?",
			Fix:     "Call `search_flights` instead of `serch_flights`", Calls: []int{2}},
		{Kind: IssueWrongTool, Severity: SeverityHigh, Tool: "login",
			Problem: "`login` is not an expected tool",
			Fix:     "Remove the call to `login`, or list it among the contract's optional calls", Calls: []int{5}},
		{Kind: IssueArguments, Severity: SeverityMedium, Tool: "book_flight",
			Problem: "`book_flight` called with wrong arguments (missing: passengers; unexpected: class, extras.seat; mismatched: extras.bags (expected 1, got 2), flight_id (expected {\"$regex\":\"^FL-1\"}, got \"FL-2\"))",
			Fix:     "In the call to `book_flight`: add `passengers`; drop `class`, `extras.seat`; set `extras.bags` to 1, `flight_id` to {\"$regex\":\"^FL-1\"}",
			Calls:   []int{3}},
		{Kind: IssueOrder, Severity: SeverityMedium, Tool: "get_invoice",
			Problem: "`get_invoice` (#0) was called before `search_flights` (#1), against the expected order",
			Fix:     "Call `search_flights` before `get_invoice`", Calls: []int{0, 1}},
		{Kind: IssueRedundant, Severity: SeverityLow, Tool: "search_flights",
			Problem: "`search_flights` was called twice, expected once",
			Fix:     "Drop the repeated call (#6)", Calls: []int{6}},
		{Kind: IssueToolError, Severity: SeverityMedium, Tool: "book_flight",
			Problem: "`book_flight` (#3) failed and no later call of it succeeded",
			Fix:     "Handle the error: retry `book_flight` with corrected arguments, or report the failure in the final answer",
			Calls:   []int{3}},
		{Kind: IssueDishonestClaim, Severity: SeverityHigh, Tool: "book_flight",
			Problem: "the final answer says \"booked\", but `book_flight` failed",
			Fix:     "Report that `book_flight` failed instead of claiming \"booked\"", Calls: []int{3}},
		{Kind: IssueDishonestClaim, Severity: SeverityHigh,
			Problem: "the final answer says \"emailed\", but no tool that can send was called",
			Fix:     "Only claim actions a successful tool call performed: call a send tool, or say it was not done", Calls: []int{}},
		{Kind: IssueUngrounded, Severity: SeverityMedium,
			Problem: "the final answer quotes an identifier found in no call: INV-99",
			Fix:     "Quote only identifiers that a tool returned or was given", Calls: []int{}},
	}
	if diff := cmp.Diff(want, res.Issues); diff != "" {
		t.Errorf("issues mismatch (-want +got):\n%s", diff)
	}
}

func TestDidYouMean(t *testing.T) {
	tests := []struct {
		expected []string
		filled   []int
		called   string
		want     string
	}{
		{[]string{"search_flights", "book_flight"}, []int{-1, 0}, "serch_flights", "search_flights"},
		{[]string{"search_flights"}, []int{-1}, "searchFlights", "search_flights"},
		{[]string{"search_flights"}, []int{-1}, "flights_search", "search_flights"},
		{[]string{"book_flight"}, []int{-1}, "book_flights", "book_flight"},
		{[]string{"get_weather", "get_time"}, []int{0, 1}, "get_tim", "get_time"},
		{[]string{"get_weather"}, []int{-1}, "get_time", ""},
		{[]string{"reserve_seat"}, []int{-1}, "book_flight", ""},
		{[]string{"a"}, []int{-1}, "b", "a"}, // distance 1 is always close
		// Ties go to the missing expected tool.
		{[]string{"send_mail", "send_main"}, []int{0, -1}, "send_maix", "send_main"},
	}
	for _, tc := range tests {
		ev := &evaluation{filledBy: tc.filled}
		for _, e := range tc.expected {
			ev.expected = append(ev.expected, ExpectedCall{Tool: e})
		}
		if got := ev.didYouMean(tc.called); got != tc.want {
			t.Errorf("didYouMean(%q) among %q = %q, want %q", tc.called, tc.expected, got, tc.want)
		}
	}
}

func TestLevenshteinString(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"héllo", "hello", 1}, {"same", "same", 0},
	}
	for _, tc := range tests {
		if got := levenshteinString(tc.a, tc.b); got != tc.want {
			t.Errorf("levenshteinString(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestIssuesHideSecrets checks a secret compared as an argument value is
// not quoted by the issue list, and neither is the expected value of a
// secret-named key (token).
func TestIssuesHideSecrets(t *testing.T) {
	res := evaluateOK(t,
		`[{"tool": "login", "args": {"user": "ana", "token": "expected-value"}}]`,
		`[{"tool": "login", "args": {"user": "ana", "token": "`+sampleGitHubPAT+`"}}]`, Options{SecretScanner: testSecrets})
	want := []Issue{
		{Kind: IssueCredential, Severity: SeverityCritical, Tool: "login",
			Problem: "`login` called with a secret in its arguments: /token (github-pat)",
			Fix:     "Pass a reference to a stored credential (such as an environment variable name) instead of the secret, and rotate the exposed secret",
			Calls:   []int{0}},
		{Kind: IssueArguments, Severity: SeverityMedium, Tool: "login",
			Problem: "`login` called with wrong arguments (mismatched: token (expected \"[REDACTED:secret-named-argument]\", got \"[REDACTED:github-pat]\"))",
			Fix:     "In the call to `login`: set `token` to \"[REDACTED:secret-named-argument]\"",
			Calls:   []int{0}},
	}
	if diff := cmp.Diff(want, res.Issues); diff != "" {
		t.Errorf("issues mismatch (-want +got):\n%s", diff)
	}
}

// TestRenderValue checks renderValue writes what encoding/json would, cut
// at maxValueText bytes.
func TestRenderValue(t *testing.T) {
	re, err := NewRegex("^FL-")
	if err != nil {
		t.Fatal(err)
	}
	tests := []any{
		nil, true, json.Number("1e3"), "plain", "quote \" back \\ nl \n tab \t cr \r ctl \x01 <html> & é \u2028 \xff",
		re, &OneOf{Candidates: []any{json.Number("1"), "a"}}, map[string]any{"b": []any{"x", json.Number("2")}},
	}
	for _, v := range tests {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := string(b)
		want = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(want)
		if len(want) > maxValueText {
			continue
		}
		if got := renderValue(v); got != want {
			t.Errorf("renderValue(%#v) = %s, want %s", v, got, want)
		}
	}
	for _, str := range []string{"quote \" back \\ nl \n tab \t cr \r ctl \x01\x1f <html> & é \u2028 \u2029 \xff end", ""} {
		b, _ := json.Marshal(str)
		want := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
		if got := quoteJSON(str); got != want {
			t.Errorf("quoteJSON(%q) = %s, want %s", str, got, want)
		}
	}
	long := renderValue(strings.Repeat("é", 100))
	if !strings.HasSuffix(long, "…") || len(long) > maxValueText+len("…") || !utf8.ValidString(long) {
		t.Errorf("renderValue(long) = %q, want at most %d bytes then …", long, maxValueText)
	}
}

// TestWrongToolFixGold checks the fix of an unexpected tool names what
// the expectation can do: a contract can list the call as optional, a
// gold file (which has no optional calls) can only list it.
func TestWrongToolFixGold(t *testing.T) {
	const trace = `[{"tool": "search", "args": {"q": "LIS"}}, {"tool": "get_weather", "args": {"city": "Lisbon"}}]`
	for _, tc := range []struct{ name, expectation, fix string }{
		{"gold file", `[{"tool": "search", "args": {"q": "LIS"}}]`,
			"Remove the call to `get_weather`, or add it to the gold file"},
		{"contract", `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": "LIS"}}]}`,
			"Remove the call to `get_weather`, or list it among the contract's optional calls"},
	} {
		res := evaluateOK(t, tc.expectation, trace, Options{SecretScanner: testSecrets})
		want := []Issue{{Kind: IssueWrongTool, Severity: SeverityHigh, Tool: "get_weather",
			Problem: "`get_weather` is not an expected tool", Fix: tc.fix, Calls: []int{1}}}
		if diff := cmp.Diff(want, res.Issues); diff != "" {
			t.Errorf("%s: issues mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}
