package engine

import (
	"context"
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// evaluateOK evaluates trace against contract and fails the test on error.
func evaluateOK(tb testing.TB, contract, trace string, opts Options) *EvaluationResult {
	tb.Helper()
	res, err := Evaluate(context.Background(), mustContract(tb, contract), mustTrace(tb, trace), opts)
	if err != nil {
		tb.Fatalf("Evaluate: %v", err)
	}
	return res
}

// TestCallChecks covers required-calls, call-order, forbidden-calls and
// tool-errors on traces built for each.
func TestCallChecks(t *testing.T) {
	const gold = `[
		{"tool": "search", "args": {"q": "LIS"}},
		{"tool": "book", "args": {"flight": "FL-1"}},
		{"tool": "pay", "args": {"amount": 10}}
	]`
	const contract = `{"contract_version": 2,
		"required": [{"tool": "search"}, {"tool": "book"}],
		"optional": [{"tool": "get_weather"}],
		"forbidden": [{"tool": "cancel", "reason": "never cancel"}, {"tool": "book", "args": {"flight": "FL-666"}}]}`
	tests := []struct {
		name     string
		contract string
		trace    string
		opts     Options
		want     []Check // only the checks named here are compared
	}{
		{
			name: "all satisfied in order", contract: gold,
			trace: `[{"tool": "search", "args": {"q": "LIS"}}, {"tool": "book", "args": {"flight": "FL-1"}}, {"tool": "pay", "args": {"amount": 10.0}}]`,
			want: []Check{
				{Name: CheckRequiredCalls, Status: CheckPass, Detail: "all 3 expected calls satisfied", Calls: []int{0, 1, 2}},
				{Name: CheckCallOrder, Status: CheckPass, Detail: "3 satisfied calls in the expected order", Calls: []int{0, 1, 2}},
				{Name: CheckForbiddenCalls, Status: CheckPass, Detail: "no forbidden rules", Calls: []int{}},
				{Name: CheckToolErrors, Status: CheckUnknown, Detail: "the trace carries no tool results", Calls: []int{}},
			},
		},
		{
			name: "wrong arguments and a missing call", contract: gold,
			trace: `[{"tool": "search", "args": {"q": "LIS"}}, {"tool": "book", "args": {"flight": "FL-2"}}]`,
			want: []Check{
				{Name: CheckRequiredCalls, Status: CheckFail, Detail: "2 of 3 expected calls not satisfied: book (#1: arguments differ), pay (not called)", Calls: []int{0, 1}},
				{Name: CheckCallOrder, Status: CheckUnknown, Detail: "1 of 3 expected calls satisfied: too few to judge the order", Calls: []int{0}},
			},
		},
		{
			name: "out of order", contract: gold,
			trace: `[{"tool": "book", "args": {"flight": "FL-1"}}, {"tool": "search", "args": {"q": "LIS"}}, {"tool": "pay", "args": {"amount": 10}}]`,
			want: []Check{
				{Name: CheckRequiredCalls, Status: CheckPass, Detail: "all 3 expected calls satisfied", Calls: []int{0, 1, 2}},
				{Name: CheckCallOrder, Status: CheckFail, Detail: "1 call out of the expected order: book #0 came before search #1", Calls: []int{0, 1}},
			},
		},
		{
			name: "nothing expected", contract: `[]`, trace: `[{"tool": "search"}]`,
			want: []Check{
				{Name: CheckRequiredCalls, Status: CheckPass, Detail: "no expected calls", Calls: []int{}},
				{Name: CheckCallOrder, Status: CheckPass, Detail: "fewer than two expected calls: no order to keep", Calls: []int{}},
			},
		},
		{
			name: "forbidden calls, optional ones included", contract: contract,
			trace: `[{"tool": "search"}, {"tool": "cancel"}, {"tool": "book", "args": {"flight": "FL-666"}}, {"tool": "get_weather"}]`,
			opts:  Options{SecretScanner: testSecrets, Forbidden: []ForbiddenCall{{Tool: "get_weather", Reason: "not today"}}},
			want: []Check{
				{Name: CheckForbiddenCalls, Status: CheckFail, Detail: "3 forbidden calls: cancel #1 (never cancel), book #2, get_weather #3 (not today)", Calls: []int{1, 2, 3}},
			},
		},
		{
			name: "no forbidden call", contract: contract,
			trace: `[{"tool": "search"}, {"tool": "book", "args": {"flight": "FL-1"}}]`,
			want: []Check{
				{Name: CheckForbiddenCalls, Status: CheckPass, Detail: "none of 2 calls matched the 2 forbidden rules", Calls: []int{}},
			},
		},
		{
			name: "tool errors recovered", contract: `[]`,
			trace: `[{"tool": "search", "error": "timeout"}, {"tool": "search", "result": []}, {"tool": "book", "error": true}, {"tool": "book", "result": "ok"}]`,
			want: []Check{
				{Name: CheckToolErrors, Status: CheckPass, Detail: "2 tool errors, each recovered by a later successful call: search #0 → #1, book #2 → #3", Calls: []int{0, 1, 2, 3}},
			},
		},
		{
			name: "tool errors unrecovered", contract: `[]`,
			trace: `[{"tool": "book", "result": "ok"}, {"tool": "book", "error": "sold out"}, {"tool": "pay", "error": true}, {"tool": "pay"}]`,
			want: []Check{
				{Name: CheckToolErrors, Status: CheckFail, Detail: "2 unrecovered tool errors (no later successful call of the same tool): book #1, pay #2", Calls: []int{1, 2}},
			},
		},
		{
			name: "no tool errors", contract: `[]`,
			trace: `[{"tool": "book", "result": "ok"}, {"tool": "pay", "result": {"id": 1}}]`,
			want: []Check{
				{Name: CheckToolErrors, Status: CheckPass, Detail: "no tool error in 2 results", Calls: []int{}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.SecretScanner = testSecrets
			res := evaluateOK(t, tc.contract, tc.trace, opts)
			var got []Check
			for _, w := range tc.want {
				got = append(got, checkNamed(t, res, w.Name))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checks mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChecksShape checks every result carries the seven checks, in order,
// with consistent counts and non-nil call lists.
func TestChecksShape(t *testing.T) {
	res := evaluateOK(t, `[{"tool": "a"}]`, `[{"tool": "b", "error": true}]`, Options{SecretScanner: testSecrets})
	var names []string
	pass, fail, unknown := 0, 0, 0
	for _, c := range res.Checks.Items {
		names = append(names, c.Name)
		if c.Calls == nil {
			t.Errorf("check %s: Calls is nil", c.Name)
		}
		switch c.Status {
		case CheckPass:
			pass++
		case CheckFail:
			fail++
		case CheckUnknown:
			unknown++
		}
	}
	want := []string{CheckRequiredCalls, CheckCallOrder, CheckForbiddenCalls, CheckCredentials, CheckToolErrors, CheckHonesty, CheckGrounding}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("check names mismatch (-want +got):\n%s", diff)
	}
	if res.Checks.Pass != pass || res.Checks.Fail != fail || res.Checks.Unknown != unknown {
		t.Errorf("counts = %d/%d/%d, want %d/%d/%d", res.Checks.Pass, res.Checks.Fail, res.Checks.Unknown, pass, fail, unknown)
	}
	// required-calls, tool-errors fail; call-order passes (one expected);
	// honesty and grounding have no final answer.
	if pass != 3 || fail != 2 || unknown != 2 {
		t.Errorf("pass/fail/unknown = %d/%d/%d, want 3/2/2", pass, fail, unknown)
	}
}

// TestSafetyGate checks that a failed forbidden-calls or credentials check
// fails the verdict whatever the score, unless the gate is off.
func TestSafetyGate(t *testing.T) {
	const contract = `{"contract_version": 2, "required": [{"tool": "search"}], "optional": [{"tool": "cancel"}, {"tool": "login"}], "forbidden": [{"tool": "cancel"}]}`
	tests := []struct {
		name  string
		trace string
		gate  bool
		want  bool
	}{
		{"clean", `[{"tool": "search"}]`, true, true},
		{"forbidden", `[{"tool": "search"}, {"tool": "cancel"}]`, true, false},
		{"forbidden, gate off", `[{"tool": "search"}, {"tool": "cancel"}]`, false, true},
		{"secret", `[{"tool": "search"}, {"tool": "login", "args": {"password": "hunter2-long"}}]`, true, false},
		{"secret, gate off", `[{"tool": "search"}, {"tool": "login", "args": {"password": "hunter2-long"}}]`, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := evaluateOK(t, contract, tc.trace, Options{SecretScanner: testSecrets, NoSafetyGate: !tc.gate})
			if math.Abs(res.Score-1) > 1e-9 || res.Grade != GradeA {
				t.Errorf("score, grade = %v, %s; want 1, A (the gate must not change them)", res.Score, res.Grade)
			}
			if res.Passed != tc.want {
				t.Errorf("Passed = %v, want %v", res.Passed, tc.want)
			}
		})
	}
}

// TestChecksBadInput feeds the checks inputs that must not make them panic
// or take more than linear time: deep nesting, binary strings, unreadable
// arguments, huge values.
func TestChecksBadInput(t *testing.T) {
	// Arguments nested as deep as a document may be (jsondoc.MaxDepth)
	// with a secret at the bottom.
	const depth = jsondoc.MaxDepth - 2
	var deep any = map[string]any{"password": "hunter2-long"}
	for range depth {
		deep = map[string]any{"a": deep}
	}
	binary := strings.Repeat("\x00\xff\xfe\x01ab\x80", 64<<10/7)
	big := strings.Repeat("lorem ipsum dolor sit amet ", 256<<10/27)
	fa := "Booked \xff\xfe FL-204"
	tr := Trace{
		Calls: []ToolCall{
			{Tool: "deep", Args: jsondoc.MustFromAny(deep.(map[string]any))},
			{Tool: "bin", Args: jsondoc.MustFromAny(map[string]any{"blob": binary, "list": []any{binary, nil, true, json.Number("1e999")}}), Result: jsondoc.MustFromAny(binary)},
			{Tool: "raw", ArgsRaw: binary, ArgsError: "invalid character"},
			{Tool: "big", Args: jsondoc.MustFromAny(map[string]any{"text": big}), Result: jsondoc.MustFromAny(big), Error: CallError(binary)},
		},
		FinalAnswer: &fa,
	}
	res, err := Evaluate(context.Background(), mustContract(t, `[{"tool": "deep"}]`), tr, Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	cred := checkNamed(t, res, CheckCredentials)
	wantPath := strings.Repeat("/a", depth) + "/password"
	if cred.Status != CheckFail || len(cred.Findings) != 1 || cred.Findings[0].Path != wantPath {
		t.Errorf("credentials = %s %q with %d findings, want one finding at the bottom", cred.Status, cred.Detail, len(cred.Findings))
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("the result does not encode: %v", err)
	}
	got := res.TraceCalls[0].Args
	for range depth {
		got = got.Get("a")
	}
	if got.Get("password").Text() != "[REDACTED:secret-named-argument]" {
		t.Errorf("deep secret not redacted: %s", got.Get("password").Raw())
	}
	if s := tr.Calls[0].Args; s.Get("a").Kind() != jsondoc.Object {
		t.Errorf("the caller's trace changed")
	}
}

// FuzzSortCalls checks sortCalls (marks, for long lists of trace indexes)
// against sortUnique for any list of indexes, in range or not.
func FuzzSortCalls(f *testing.F) {
	f.Add(uint8(20), []byte{3, 1, 2, 3, 19, 0, 0, 7, 8, 9, 10, 11, 12, 13})
	f.Add(uint8(5), []byte{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 255})
	f.Add(uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, n uint8, data []byte) {
		ev := &evaluation{trace: Trace{Calls: make([]ToolCall, n)}, markBuf: make([]bool, n)}
		xs := make([]int, len(data))
		for i, b := range data {
			xs[i] = int(int8(b)) // some negative
		}
		want := sortUnique(slices.Clone(xs))
		if got := ev.sortCalls(xs); !slices.Equal(got, want) || got == nil {
			t.Fatalf("sortCalls gave %v, sortUnique %v", got, want)
		}
	})
}
