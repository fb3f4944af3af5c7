package reeval

import (
	"context"
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/secrets"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	half := 0.5
	tests := []struct {
		name    string
		in      string
		want    engine.Options
		wantErr string
	}{
		{"defaults", `{"strict": false, "safety_gate": true}`, engine.Options{}, ""},
		{"no safety_gate means on", `{}`, engine.Options{}, ""},
		{"everything", `{"strict": true, "safety_gate": false, "weights": {"selection_accuracy": 2}, "min_score": 0.5,
			"forbidden": [{"tool": "rm", "reason": "no"}]}`,
			engine.Options{Strict: true, NoSafetyGate: true, Weights: map[string]float64{"selection_accuracy": 2}, MinScore: &half,
				Forbidden: []engine.ForbiddenCall{{Tool: "rm", Reason: "no"}}}, ""},
		{"null forbidden", `{"forbidden": null}`, engine.Options{}, ""},
		{"missing", ``, engine.Options{}, "options: missing"},
		{"not an object", `[1]`, engine.Options{}, "options: json: cannot unmarshal array into Go value of type reeval.storedOptions"},
		{"bad forbidden", `{"forbidden": [{"reason": "x"}]}`, engine.Options{}, "options: forbidden: invalid contract: /0/tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Options(json.RawMessage(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("Options(%s) error = %v, want prefix %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Options(%s): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Options(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestCalls(t *testing.T) {
	t.Parallel()
	calls, err := Calls(json.RawMessage(`[{"tool": "a", "args": {"n": 1.50, "big": 12345678901234567890}, "error": true}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.ToolCall{{Tool: "a", Args: jsondoc.MustFromAny(map[string]any{"n": json.Number("1.50"), "big": json.Number("12345678901234567890")}), Error: "true"}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
	for in, want := range map[string]string{
		`{"tool": "a"}`:               "trace_calls: json: cannot unmarshal object",
		`null`:                        "trace_calls: not an array",
		`[{"args": {}}]`:              "trace_calls: /0/tool: missing",
		`[{"tool": "a", "error": 3}]`: "trace_calls: error must be a boolean or a string",
		`[`:                           "trace_calls: unexpected EOF",
	} {
		if _, err := Calls(json.RawMessage(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Calls(%s) = %v, want prefix %q", in, err, want)
		}
	}
}

// TestCallsUnnamed reads a stored call without a name (tool "", as an
// OpenAI tool call with no function is stored): with Calls, with a Reader
// (the fast path) and with encoding/json's fallback (a key it folds), the
// same calls; a call with no tool key, or a null one, is still missing.
func TestCallsUnnamed(t *testing.T) {
	t.Parallel()
	want := []engine.ToolCall{
		{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{}), ID: "call_1"},
		{Tool: "", ID: "call_2", ArgsError: "the tool call has no function"},
	}
	stored := `[{"tool": "search", "args": {}, "id": "call_1"}, {"tool": "", "args": null, "id": "call_2", "args_error": "the tool call has no function"}]`
	var r Reader
	for _, in := range []string{stored, strings.Replace(stored, `{"tool": ""`, `{"Tool": ""`, 1)} {
		got, err := Calls(json.RawMessage(in))
		if err != nil {
			t.Fatalf("Calls(%s): %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Calls(%s) (-want +got):\n%s", in, diff)
		}
		got, err = r.Calls([]byte(in))
		if err != nil {
			t.Fatalf("Reader.Calls(%s): %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Reader.Calls(%s) (-want +got):\n%s", in, diff)
		}
	}
	for _, in := range []string{`[{"tool": "a"}, {"args": {}}]`, `[{"tool": "a"}, {"tool": null}]`, `[{"tool": "a"}, {"tool": "", "tool": null}]`} {
		if _, err := Calls(json.RawMessage(in)); err == nil || err.Error() != "trace_calls: /1/tool: missing" {
			t.Errorf("Calls(%s) = %v, want trace_calls: /1/tool: missing", in, err)
		}
	}
}

func TestEvaluateKeepsCredentials(t *testing.T) {
	c, err := engine.ParseContract([]byte(`{"contract_version": 2, "required": [{"tool": "search"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// The stored call, its secret already redacted.
	calls := []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"api_key": "[REDACTED:secret-named-argument]"})}}
	failed := &engine.Check{Name: "credentials", Status: engine.CheckFail, Detail: "1 secret found", Calls: []int{0},
		Findings: []engine.Finding{{Call: 0, Path: "/api_key", Rule: "secret-named-argument", Value: "****"}}}
	for _, tc := range []struct {
		name       string
		failed     *engine.Check
		noGate     bool
		wantPassed bool
		wantIssue  bool
	}{
		{"no failed check", nil, false, true, false},
		{"kept", failed, false, false, true},
		{"kept, gate off", failed, true, true, true},
		{"a passed check is ignored", &engine.Check{Name: "credentials", Status: engine.CheckPass}, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Evaluate(context.Background(), c, calls, nil, engine.Options{NoSafetyGate: tc.noGate, SecretScanner: secrets.New()}, tc.failed)
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tc.wantPassed {
				t.Errorf("passed = %v, want %v", res.Passed, tc.wantPassed)
			}
			var cred engine.Check
			pass, fail, unknown := 0, 0, 0
			for _, ch := range res.Checks.Items {
				if ch.Name == "credentials" {
					cred = ch
				}
				switch ch.Status {
				case engine.CheckPass:
					pass++
				case engine.CheckFail:
					fail++
				default:
					unknown++
				}
			}
			if res.Checks.Pass != pass || res.Checks.Fail != fail || res.Checks.Unknown != unknown {
				t.Errorf("counts %d/%d/%d, items say %d/%d/%d", res.Checks.Pass, res.Checks.Fail, res.Checks.Unknown, pass, fail, unknown)
			}
			hasIssue := len(res.Issues) > 0 && res.Issues[0].Kind == engine.IssueCredential
			if hasIssue != tc.wantIssue || (tc.wantIssue && (cred.Status != engine.CheckFail || res.Issues[0].Tool != "search")) {
				t.Errorf("credentials check %+v, issues %+v", cred, res.Issues)
			}
		})
	}
}

func TestFailedCredentials(t *testing.T) {
	for in, want := range map[string]string{
		`{"items": [{"name": "credentials", "status": "fail", "detail": "d", "calls": [0]}]}`: "d",
		`{"items": [{"name": "credentials", "status": "pass", "detail": "d", "calls": []}]}`:  "",
		`{"items": []}`: "",
	} {
		got, err := FailedCredentials(json.RawMessage(in))
		if err != nil || (got == nil) != (want == "") || (got != nil && got.Detail != want) {
			t.Errorf("FailedCredentials(%s) = %+v, %v", in, got, err)
		}
	}
	if _, err := FailedCredentials(json.RawMessage(`{"items": "credentials"}`)); err == nil {
		t.Error("FailedCredentials(bad) succeeded")
	}
}
