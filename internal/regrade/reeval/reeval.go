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
	"slices"
	"unsafe"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
	// The API reads forbidden rules with engine.ParseForbidden; so does
	// this.
	f, err := engine.ParseForbidden(so.Forbidden)
	if err != nil {
		return opts, fmt.Errorf("options: forbidden: %w", err)
	}
	opts.Forbidden = f
	return opts, nil
}

// Calls reads stored trace calls (an EvaluationResult's trace_calls).
// Every call must have a "tool" string, which is "" for a call the trace
// held without a name (checkNamed). The result is what encoding/json
// decodes into []engine.ToolCall.
//
// Stored calls are what json.Marshal wrote for engine.ToolCall, so they
// are read in one pass over a jsondoc document, their arguments and
// results kept as its values; anything else (an unknown or differently
// cased key, a value of another type, a syntax error) is read again with
// encoding/json, which then gives the result or the error.
//
// Errors: "trace_calls: ..." naming what is wrong.
func Calls(raw json.RawMessage) ([]engine.ToolCall, error) {
	if calls, ok := fastCalls(raw); ok {
		return calls, nil
	}
	return stdCallsChecked(raw)
}

// A Reader reads stored trace calls as Calls does, into memory it reuses
// from one read to the next: a grading goroutine that reads one stored
// trace after another allocates only while its buffers grow to the
// largest. The zero Reader is ready; it is not safe for concurrent use.
type Reader struct {
	p     jsondoc.Parser
	calls []engine.ToolCall
}

// Calls returns what Calls(raw) returns. The calls share raw's bytes and
// the Reader's memory: they are valid until the next call of r.Calls, and
// raw must not change until then.
//
// Errors: those of Calls.
func (r *Reader) Calls(raw []byte) ([]engine.ToolCall, error) {
	r.p.Reset()
	if len(raw) > 0 {
		if v, err := r.p.Parse(unsafe.String(&raw[0], len(raw))); err == nil {
			if calls, ok := callsOf(v, r.calls); ok {
				r.calls = calls
				return calls, nil
			}
		}
	}
	return stdCallsChecked(raw)
}

// stdCallsChecked reads stored calls with encoding/json, as Calls does
// for what the fast path leaves.
func stdCallsChecked(raw json.RawMessage) ([]engine.ToolCall, error) {
	var calls []engine.ToolCall
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&calls); err != nil {
		return nil, fmt.Errorf("trace_calls: %w", err)
	}
	if calls == nil {
		return nil, errors.New("trace_calls: not an array")
	}
	if err := checkNamed(raw, calls); err != nil {
		return nil, err
	}
	return calls, nil
}

// checkNamed reports the first of calls (decoded from raw by
// encoding/json) with no tool: neither a non-empty name nor a "tool"
// string. A call named "" is one the trace holds without a name (an
// OpenAI tool call with no function, docs/formats.md): results keep it,
// so it is read as it was stored.
func checkNamed(raw json.RawMessage, calls []engine.ToolCall) error {
	var names []struct {
		Tool *string `json:"tool"`
	}
	for i, c := range calls {
		if c.Tool != "" {
			continue
		}
		if names == nil {
			if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&names); err != nil {
				return fmt.Errorf("trace_calls: %w", err)
			}
		}
		if i >= len(names) || names[i].Tool == nil {
			return fmt.Errorf("trace_calls: /%d/tool: missing", i)
		}
	}
	return nil
}

// fastCalls is Calls for stored calls in the exact shape json.Marshal
// writes for engine.ToolCall: a JSON array of objects whose keys are
// ToolCall's JSON names, each holding a value of its field's type, every
// call naming its tool. It reports false for anything else, which Calls
// then reads with encoding/json. A repeated key keeps its last value, as
// encoding/json does for these fields.
func fastCalls(raw []byte) ([]engine.ToolCall, bool) {
	v, err := jsondoc.Parse(raw)
	if err != nil {
		return nil, false
	}
	return callsOf(v, nil)
}

// callsOf is fastCalls on a parsed document v, reusing dst's memory for
// the calls.
func callsOf(v jsondoc.Value, dst []engine.ToolCall) ([]engine.ToolCall, bool) {
	if v.Kind() != jsondoc.Array {
		return nil, false
	}
	calls := slices.Grow(dst[:0], v.Len())[:v.Len()]
	if calls == nil {
		calls = []engine.ToolCall{} // [] reads as an empty list, not nil
	}
	clear(calls)
	for i, m := range v.Elems() {
		if m.Kind() != jsondoc.Object {
			return nil, false
		}
		c := &calls[i]
		var ok, named bool
		for k, x := range m.Members() {
			switch k {
			case "tool":
				if c.Tool, ok = x.Str(); !ok {
					return nil, false
				}
				named = true
			case "args":
				switch x.Kind() {
				case jsondoc.Null:
					c.Args = jsondoc.Value{}
				case jsondoc.Object:
					c.Args = x
				default:
					return nil, false
				}
			case "id":
				if c.ID, ok = optString(x); !ok {
					return nil, false
				}
			case "result":
				if !x.IsNull() {
					c.Result = x
				}
			case "error":
				switch x.Kind() {
				case jsondoc.Null:
				case jsondoc.Bool:
					if b, _ := x.Bool(); b {
						c.Error = "true"
					}
				case jsondoc.String:
					c.Error = engine.CallError(x.Text())
				default:
					return nil, false
				}
			case "args_raw":
				if c.ArgsRaw, ok = optString(x); !ok {
					return nil, false
				}
			case "args_error":
				if c.ArgsError, ok = optString(x); !ok {
					return nil, false
				}
			default:
				return nil, false
			}
		}
		if !named {
			return nil, false
		}
	}
	return calls, true
}

// optString reads a JSON string or null into a Go string field.
func optString(v jsondoc.Value) (string, bool) {
	if v.IsNull() {
		return "", true
	}
	return v.Str()
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
