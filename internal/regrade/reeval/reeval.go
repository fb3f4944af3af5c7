// Package reeval grades stored results again: it reads what a stored
// EvaluationResult kept (its trace calls, final answer and options) and
// re-evaluates it against another contract with the engine. It is pure
// (no I/O), shared by the service's regrade jobs (internal/regrade) and
// the CLI's offline `toolscore regrade`.
package reeval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolscore/toolscore/internal/engine"
)

// storedOptions are the evaluation options the service stores with each
// result (internal/api's evalOptions).
type storedOptions struct {
	Strict     bool               `json:"strict"`
	SafetyGate *bool              `json:"safety_gate"`
	Forbidden  json.RawMessage    `json:"forbidden"`
	Weights    map[string]float64 `json:"weights"`
	MinScore   *float64           `json:"min_score"`
}

// Options reads the evaluation options the service stores with a result
// ({"strict", "safety_gate", "forbidden"?, "weights"?, "min_score"?})
// into engine options. An absent safety_gate means on, as in the API;
// forbidden rules are validated as a contract's.
//
// Errors: "options: ..." naming what is wrong.
func Options(raw json.RawMessage) (engine.Options, error) {
	var so storedOptions
	if len(bytes.TrimSpace(raw)) == 0 {
		return engine.Options{}, errors.New("options: missing")
	}
	if err := json.Unmarshal(raw, &so); err != nil {
		return engine.Options{}, fmt.Errorf("options: %w", err)
	}
	opts := engine.Options{
		Strict:       so.Strict,
		Weights:      so.Weights,
		MinScore:     so.MinScore,
		NoSafetyGate: so.SafetyGate != nil && !*so.SafetyGate,
	}
	if f := bytes.TrimSpace(so.Forbidden); len(f) > 0 && !bytes.Equal(f, []byte("null")) {
		// The API validates forbidden rules as a contract's; so does this.
		doc := make([]byte, 0, len(f)+48)
		doc = append(doc, `{"contract_version":2,"required":[],"forbidden":`...)
		doc = append(doc, f...)
		doc = append(doc, '}')
		c, err := engine.ParseContract(doc)
		if err != nil {
			return opts, fmt.Errorf("options: forbidden: %w", err)
		}
		opts.Forbidden = c.Forbidden
	}
	return opts, nil
}

// Calls reads stored trace calls (an EvaluationResult's trace_calls),
// numbers kept as json.Number as the engine wants them. Every call must
// name its tool.
//
// Errors: "trace_calls: ..." naming what is wrong.
func Calls(raw json.RawMessage) ([]engine.ToolCall, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var calls []engine.ToolCall
	if err := dec.Decode(&calls); err != nil {
		return nil, fmt.Errorf("trace_calls: %w", err)
	}
	if calls == nil {
		return nil, errors.New("trace_calls: not an array")
	}
	for i, c := range calls {
		if c.Tool == "" {
			return nil, fmt.Errorf("trace_calls: /%d/tool: missing", i)
		}
	}
	return calls, nil
}

// Evaluate grades stored calls and final answer against c with opts, as
// engine.Evaluate does, and keeps the original's failed credentials
// check (failedCredentials; nil when it passed).
//
// Stored calls had their detected secrets redacted, so grading them again
// cannot find those secrets: without this, every result that failed for a
// leaked credential would pass on a regrade. The original's failed check
// replaces the new one (the counts follow), a credential issue is added
// after any forbidden-call issues, as the engine ranks them, and with the
// safety gate on the verdict is FAIL, as it was.
//
// Errors: those of engine.Evaluate.
func Evaluate(ctx context.Context, c *engine.Contract, calls []engine.ToolCall, finalAnswer *string, opts engine.Options, failedCredentials *engine.Check) (*engine.EvaluationResult, error) {
	res, err := engine.Evaluate(ctx, c, engine.Trace{Calls: calls, FinalAnswer: finalAnswer}, opts)
	if err != nil {
		return nil, err
	}
	keepCredentials(res, failedCredentials)
	return res, nil
}

// FailedCredentials returns the failed credentials check of checks (an
// EvaluationResult's checks JSON), nil when it passed or is absent.
//
// Errors: checks is not a checks object.
func FailedCredentials(checks json.RawMessage) (*engine.Check, error) {
	if !bytes.Contains(checks, []byte(`"credentials"`)) {
		return nil, nil
	}
	var cs struct {
		Items []engine.Check `json:"items"`
	}
	if err := json.Unmarshal(checks, &cs); err != nil {
		return nil, fmt.Errorf("checks: %w", err)
	}
	for i := range cs.Items {
		if cs.Items[i].Name == "credentials" && cs.Items[i].Status == engine.CheckFail {
			return &cs.Items[i], nil
		}
	}
	return nil, nil
}

// keepCredentials applies a failed credentials check to res.
func keepCredentials(res *engine.EvaluationResult, failed *engine.Check) {
	if failed == nil || failed.Name != "credentials" || failed.Status != engine.CheckFail {
		return
	}
	replaced := false
	for i := range res.Checks.Items {
		if res.Checks.Items[i].Name == "credentials" {
			if res.Checks.Items[i].Status == engine.CheckFail {
				return // found again (a secret the redaction missed)
			}
			res.Checks.Items[i] = *failed
			replaced = true
		}
	}
	if !replaced {
		res.Checks.Items = append(res.Checks.Items, *failed)
	}
	res.Checks.Pass, res.Checks.Fail, res.Checks.Unknown = 0, 0, 0
	for _, ch := range res.Checks.Items {
		switch ch.Status {
		case engine.CheckPass:
			res.Checks.Pass++
		case engine.CheckFail:
			res.Checks.Fail++
		default:
			res.Checks.Unknown++
		}
	}
	if res.SafetyGate {
		res.Passed = false
	}
	// The issue of a leaked secret ranks right after forbidden calls, as
	// the engine ranks it.
	at := 0
	for at < len(res.Issues) && res.Issues[at].Kind == engine.IssueForbiddenCall {
		at++
	}
	tool := ""
	if len(failed.Calls) > 0 && failed.Calls[0] >= 0 && failed.Calls[0] < len(res.TraceCalls) {
		tool = res.TraceCalls[failed.Calls[0]].Tool
	}
	issues := make([]engine.Issue, 0, len(res.Issues)+1)
	issues = append(issues, res.Issues[:at]...)
	issues = append(issues, engine.Issue{
		Kind: engine.IssueCredential, Severity: engine.SeverityCritical, Tool: tool,
		Problem: "the original result leaked credentials (" + failed.Detail + "); the stored trace is redacted, so this regrade keeps that finding",
		Fix:     "Never pass secrets in tool arguments; rotate the exposed secret",
		Calls:   nonNil(failed.Calls),
	})
	issues = append(issues, res.Issues[at:]...)
	res.Issues = issues
}

// nonNil returns an empty slice for a nil one, so it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
