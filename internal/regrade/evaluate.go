package regrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
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
func regradeOne(ctx context.Context, c *engine.Contract, target record.ContractRef, o *record.RegradeOriginal, id uuid.UUID, now time.Time, enc *encodeCache) (record.RegradeOutcome, error) {
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
	if err := carryCredentials(res, o.FailedCredentials); err != nil {
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
	// Encoding is most of a regrade's CPU: reuse what is known to be the
	// same JSON. Without a credential finding the engine returns the
	// stored calls unchanged (redaction is the only change it makes), and
	// the expected calls depend only on the contract and the chosen
	// combination.
	unchanged := !credentialFound(res)
	if unchanged {
		r.TraceCalls = o.TraceCalls
		if isIdentity(res.ScoredIndexes, len(calls)) {
			r.ScoredCalls = o.TraceCalls
		}
	}
	r.ExpectedCalls = enc.expected(c, res)
	for _, p := range []struct {
		dst *json.RawMessage
		v   any
	}{
		{&r.ExpectedCalls, nonNil(res.ExpectedCalls)}, {&r.TraceCalls, nonNil(res.TraceCalls)},
		{&r.ScoredCalls, nonNil(res.ScoredCalls)}, {&r.ScoredIndexes, nonNil(res.ScoredIndexes)},
		{&r.Metrics, res.Metrics}, {&r.Checks, res.Checks}, {&r.Issues, nonNil(res.Issues)},
	} {
		if *p.dst != nil {
			continue
		}
		b, err := json.Marshal(p.v)
		if err != nil {
			return fail("encode result: " + err.Error())
		}
		*p.dst = b
	}
	enc.storeExpected(c, res, r.ExpectedCalls)
	out.Result = r
	return out, nil
}

// credentialFound reports whether res's credentials check found a secret
// (and so the engine redacted its calls).
func credentialFound(res *engine.EvaluationResult) bool {
	for _, ch := range res.Checks.Items {
		if ch.Name == "credentials" && (ch.Status == engine.CheckFail || len(ch.Findings) > 0) {
			return true
		}
	}
	return false
}

// isIdentity reports whether idx is 0, 1, ..., n-1.
func isIdentity(idx []int, n int) bool {
	if len(idx) != n {
		return false
	}
	for i, j := range idx {
		if i != j {
			return false
		}
	}
	return true
}

// encodeCache keeps the JSON of expected calls per contract and chosen
// combination, shared by the evaluations of one chunk. Safe for concurrent
// use; the zero value is ready.
type encodeCache struct {
	m sync.Map // encodeKey -> json.RawMessage
}

type encodeKey struct {
	c      *engine.Contract
	choice string
}

func choiceKey(res *engine.EvaluationResult) string {
	cm := res.Metrics.Contract
	if cm == nil {
		return ""
	}
	b := make([]byte, 0, 4*len(cm.Alternatives.Chosen))
	for _, ch := range cm.Alternatives.Chosen {
		b = strconv.AppendInt(b, int64(ch.Option), 10)
		b = append(b, ',')
	}
	return string(b)
}

// expected returns the cached JSON of res's expected calls, nil when not
// cached yet.
func (e *encodeCache) expected(c *engine.Contract, res *engine.EvaluationResult) json.RawMessage {
	if e == nil {
		return nil
	}
	if v, ok := e.m.Load(encodeKey{c, choiceKey(res)}); ok {
		return v.(json.RawMessage)
	}
	return nil
}

func (e *encodeCache) storeExpected(c *engine.Contract, res *engine.EvaluationResult, b json.RawMessage) {
	if e != nil {
		e.m.LoadOrStore(encodeKey{c, choiceKey(res)}, b)
	}
}

// nonNil returns an empty slice for a nil one, so it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// carryCredentials applies the original's failed credentials check
// (origCheck, the check's JSON; nil when it passed) to res (see
// regradeOne).
func carryCredentials(res *engine.EvaluationResult, origCheck json.RawMessage) error {
	if len(origCheck) == 0 || string(origCheck) == "null" {
		return nil
	}
	failed := &engine.Check{}
	if err := json.Unmarshal(origCheck, failed); err != nil {
		return fmt.Errorf("checks: credentials: %w", err)
	}
	if failed.Name != "credentials" || failed.Status != engine.CheckFail {
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
