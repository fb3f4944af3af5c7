package regrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
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

// decodeOptions reads stored options into engine options. An absent
// safety_gate means on, as in the API.
func decodeOptions(raw json.RawMessage) (engine.Options, error) {
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

// decodeCalls reads stored trace calls, numbers kept as json.Number as the
// engine wants them.
func decodeCalls(raw json.RawMessage) ([]engine.ToolCall, error) {
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

// regradeOne re-evaluates one stored original against contract c (target
// identifies it) and returns the new result, id id, created at now, or the
// reason the stored row cannot be regraded. Only ctx ending is an error.
//
// The original's trace calls were stored with detected secrets redacted,
// so grading them again cannot find those secrets: when the original's
// credentials check failed, its failure (and its credential issues) carry
// over to the new result, which the safety gate then fails as it failed
// the original.
func regradeOne(ctx context.Context, c *engine.Contract, target record.ContractRef, o *record.RegradeOriginal, id uuid.UUID, now time.Time) (record.RegradeOutcome, error) {
	out := record.RegradeOutcome{Original: o.ResultSummary, OriginalIssue: o.FirstIssue}
	fail := func(reason string) (record.RegradeOutcome, error) {
		out.Failure = reason
		return out, nil
	}
	if o.Unreadable != "" {
		return fail(o.Unreadable)
	}
	opts, err := decodeOptions(o.Options)
	if err != nil {
		return fail(err.Error())
	}
	calls, err := decodeCalls(o.TraceCalls)
	if err != nil {
		return fail(err.Error())
	}
	res, err := engine.Evaluate(ctx, c, engine.Trace{Calls: calls, FinalAnswer: o.FinalAnswer}, opts)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return out, ctxErr
		}
		return fail("evaluate: " + err.Error())
	}
	if err := carryCredentials(res, o.Checks); err != nil {
		return fail(err.Error())
	}
	r := &record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: o.ProjectID, CreatedAt: now, Contract: target,
			TaskID: o.TaskID, RunID: o.RunID, Agent: o.Agent, Labels: o.Labels, Format: o.Format,
			Score: res.Score, Grade: string(res.Grade), Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate,
		},
		Options:     o.Options,
		FinalAnswer: res.FinalAnswer,
	}
	for _, p := range []struct {
		dst *json.RawMessage
		v   any
	}{
		{&r.ExpectedCalls, nonNil(res.ExpectedCalls)}, {&r.TraceCalls, nonNil(res.TraceCalls)},
		{&r.ScoredCalls, nonNil(res.ScoredCalls)}, {&r.ScoredIndexes, nonNil(res.ScoredIndexes)},
		{&r.Metrics, res.Metrics}, {&r.Checks, res.Checks}, {&r.Issues, nonNil(res.Issues)},
	} {
		b, err := json.Marshal(p.v)
		if err != nil {
			return fail("encode result: " + err.Error())
		}
		*p.dst = b
	}
	out.Result = r
	return out, nil
}

// nonNil returns an empty slice for a nil one, so it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// carryCredentials applies the original's failed credentials check to res
// (see regradeOne). origChecks is the original's checks JSON.
func carryCredentials(res *engine.EvaluationResult, origChecks json.RawMessage) error {
	// Cheap test first: most originals hold no failed credentials check.
	if !bytes.Contains(origChecks, []byte(`"credentials"`)) || !bytes.Contains(origChecks, []byte(`"fail"`)) {
		return nil
	}
	var orig struct {
		Items []engine.Check `json:"items"`
	}
	if err := json.Unmarshal(origChecks, &orig); err != nil {
		return fmt.Errorf("checks: %w", err)
	}
	var failed *engine.Check
	for i := range orig.Items {
		if orig.Items[i].Name == "credentials" && orig.Items[i].Status == engine.CheckFail {
			failed = &orig.Items[i]
		}
	}
	if failed == nil {
		return nil
	}
	replaced := false
	for i := range res.Checks.Items {
		if res.Checks.Items[i].Name == "credentials" {
			if res.Checks.Items[i].Status == engine.CheckFail {
				return nil // found again (a secret the redaction missed)
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
	return nil
}
