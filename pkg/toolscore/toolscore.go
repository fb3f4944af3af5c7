// Package toolscore grades an LLM agent's tool calls from Go: it compares
// a trace (the calls the agent made, in any supported format) with a gold
// file or a Contract v2 and returns a [Result] with the metrics, the
// composite score, the A–F grade, the PASS/FAIL verdict, the evidence
// checks and the ranked issues to fix. It is the library form of
// `toolscore eval`: the same engine, the same default secret scanner, and
// so the same result, figure for figure, as the CLI's --json output and
// the HTTP service's EvaluationResult.
//
//	contract, err := toolscore.LoadContract(contractJSON)
//	trace, err := toolscore.ParseTrace(traceJSON, "")       // format detected
//	res, err := toolscore.EvaluateContract(ctx, contract, trace.Calls,
//		toolscore.Options{FinalAnswer: trace.FinalAnswer})
//
// or in one call, [EvaluateTrace] on the two documents' bytes.
//
// docs/grading.md specifies every figure, docs/contracts.md the contract
// format and its matchers, docs/formats.md the trace formats and how they
// are detected, docs/checks.md the evidence checks and secret redaction.
//
// # Custom matchers
//
// Contracts compare arguments with the JSON matcher operators $regex,
// $contains, $one_of, $any, $type and $approx. [WithMatcher] adds an
// operator of your own for one [LoadContract] call: the contract writes
// {"$iata": true} where a value is expected, and your [MatcherFunc] turns
// that into a [Matcher] whose Match decides. Nothing is registered
// globally: each LoadContract call sees the matchers it is given.
//
// # Concurrency and state
//
// A [Contract] is read-only once loaded and may be graded against many
// traces at once; every function here is safe for concurrent use. The
// package keeps one piece of state: the default secret scanner (gitleaks'
// rules, as the CLI uses), made on first use and shared, which builds each
// rule the first time a text needs it.
//
// # Compatibility
//
// The module follows semantic versioning. While it is at v0 (no v1 tag
// yet), any new version may still change this package's API, and Go
// programs should pin the version they use (go.mod does). What is meant
// to stay, and will be kept from v1.0.0 on:
//
//   - the functions, options and types of this package as documented here,
//     and the JSON names of [Result] and its parts, which are those of the
//     service's EvaluationResult (openapi.yaml);
//   - the figures: a score, grade or verdict changes only with a documented
//     change of the grading rules (docs/grading.md), never silently.
//
// Not covered: new fields, options, formats, checks, issue kinds and
// matchers may be added in any release (switch on them with a default
// case); the wording of error messages, details and fixes may change
// (match errors with errors.Is and errors.As, not by text). Several types
// here are aliases of the engine's (internal/engine); their exported
// methods that this package does not document (such as MarshalJSON) are
// not part of the promise, and nothing of package internal is.
package toolscore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrInvalidContract is matched by every error of a contract or gold
	// file that is valid JSON of the wrong shape (a *ValidationError).
	ErrInvalidContract = engine.ErrInvalidContract
	// ErrInvalidTrace is matched by every error of a trace that cannot be
	// read: bad JSON, no known format, a document that does not fit its
	// format (a *ShapeError), an unknown format name, a ToolCall whose
	// Args or Result is not JSON.
	ErrInvalidTrace = engine.ErrInvalidTrace
	// ErrInvalidOptions is matched by invalid Options (weights, min score)
	// and invalid WithMatcher names (a *ValidationError).
	ErrInvalidOptions = engine.ErrInvalidOptions
)

// SyntaxError is a document that is not valid JSON: Msg says what is
// wrong at byte Offset, which is at 1-based Line and Column (columns count
// bytes), inside the value at Pointer (an RFC 6901 JSON pointer, "" for
// the top level). Its text is "line L:C: msg (at /pointer)".
type SyntaxError = engine.SyntaxError

// ValidationError lists every problem of a document or of options: Kind
// is "contract" (errors.Is ErrInvalidContract) or "options" (errors.Is
// ErrInvalidOptions), and Errors holds each problem with the JSON pointer
// of its place, in document order. Its text is
// "invalid contract: /required/1/tool: ...; /min_score: ...".
type ValidationError = engine.ValidationError

// FieldError is one problem of a ValidationError: Pointer is an RFC 6901
// JSON pointer into the document ("" for the whole of it), Message says
// what is wrong there.
type FieldError = engine.FieldError

// ShapeError is a trace document whose shape does not fit the format it is
// read as (detected or named): Format is the format's name, Pointer the
// JSON pointer of the offending value (within the record for JSON Lines
// and Server-Sent Events), Line the 1-based line of that record (0 for a
// single JSON document), Msg what is wrong. It matches ErrInvalidTrace.
type ShapeError = format.ShapeError

// defaultScanner is the secret scanner of every evaluation: the one the
// CLI and the service use (gitleaks' default rules and URI credentials),
// made once and shared (it keeps the rules it builds).
var defaultScanner = sync.OnceValue(func() engine.SecretScanner { return secrets.New() })

// Contract is a loaded gold file or Contract v2. It is read-only and safe
// for concurrent use by many evaluations. Make one with LoadContract.
type Contract struct {
	c *engine.Contract
}

// LoadOption changes how LoadContract reads a contract; see WithMatcher.
type LoadOption struct {
	name string
	f    MatcherFunc
}

// WithMatcher makes LoadContract read the custom matcher operator name
// ("$" and a name, such as "$iata"; not a built-in operator's) with f:
// wherever the contract holds {name: arg} as an expected value, f(arg)
// gives the Matcher used there. An invalid name or a nil f makes
// LoadContract fail with an ErrInvalidOptions *ValidationError (pointer
// /matchers/NAME); a later WithMatcher of the same name replaces an
// earlier one.
func WithMatcher(name string, f MatcherFunc) LoadOption {
	return LoadOption{name: name, f: f}
}

// LoadContract reads a gold file (a JSON array of {"tool", "args"}
// calls, or an object with "calls") or a Contract v2 (an object with
// contract_version, required or optional) from one JSON document, as
// `toolscore eval` reads its EXPECTATION.
//
// Errors: a *SyntaxError (line, column and JSON pointer) for bad JSON; a
// *ValidationError (errors.Is ErrInvalidContract) listing every problem
// with its JSON pointer for a document of the wrong shape, such as
// "/required/1/alternatives: ..." or "/0/args/n/$iata: ..." for a custom
// matcher's error; an ErrInvalidOptions *ValidationError for an invalid
// WithMatcher.
func LoadContract(data []byte, opts ...LoadOption) (*Contract, error) {
	var po engine.ParseOptions
	for _, o := range opts {
		if po.Matchers == nil {
			po.Matchers = make(map[string]engine.MatcherFunc, len(opts))
		}
		po.Matchers[o.name] = o.f
	}
	c, err := engine.ParseContractWith(data, po)
	if err != nil {
		return nil, err
	}
	return &Contract{c: c}, nil
}

// IsGold reports whether the contract was read from a gold file (whose
// calls are all required, in order, with nothing optional or forbidden).
func (c *Contract) IsGold() bool { return c.c.Gold }

// Description returns the contract's description ("" for none and for
// gold files).
func (c *Contract) Description() string { return c.c.Description }

// Combinations returns the number of combinations of the contract's
// alternatives groups that an evaluation scores (1 when it has none; at
// most 256).
func (c *Contract) Combinations() int { return c.c.Combinations() }

// Options tune one evaluation. The zero value grades as `toolscore eval`
// does without flags: lenient comparison, the contract's weights and
// passing score (else 0.9), the safety gate on, secrets redacted, the
// trace's own final answer and its format detected.
type Options struct {
	// FinalAnswer is the agent's final answer. For EvaluateContract it is
	// the answer (nil: none); for EvaluateTrace it overrides the trace's
	// when non-nil (--final-answer).
	FinalAnswer *string
	// Format names the trace format EvaluateTrace reads ("" or "auto":
	// detected; Formats lists the names; --format). EvaluateContract does
	// not read it.
	Format string
	// Strict turns off string trimming and int/float leniency (--strict).
	Strict bool
	// MinScore is the passing score in [0,1], overriding the contract's
	// (--min-score); nil keeps the contract's, else 0.9.
	MinScore *float64
	// Weights are composite weights by name (selection_accuracy,
	// argument_f1, sequence_accuracy, redundant_rate,
	// required_call_recall), merged over the contract's and the defaults
	// and renormalised to sum 1 (--weights).
	Weights map[string]float64
	// Forbidden are forbidden-call rules added to the contract's
	// (--forbidden).
	Forbidden []ForbiddenCall
	// NoSafetyGate stops a failed forbidden-calls or credentials check
	// from forcing FAIL (--no-safety-gate).
	NoSafetyGate bool
	// KeepSecrets keeps detected secrets in the result instead of
	// [REDACTED:rule] markers, for local debugging only (--keep-secrets).
	KeepSecrets bool
}

// engineOptions are o's engine options, with the default secret scanner.
func (o *Options) engineOptions() engine.Options {
	return engine.Options{
		Strict:        o.Strict,
		Weights:       o.Weights,
		MinScore:      o.MinScore,
		Forbidden:     o.Forbidden,
		NoSafetyGate:  o.NoSafetyGate,
		KeepSecrets:   o.KeepSecrets,
		SecretScanner: defaultScanner(),
	}
}

// ToolCall is one tool call of a trace, as every format normalises to
// (docs/formats.md), and as results list them.
type ToolCall struct {
	// Tool is the tool's name as the agent called it.
	Tool string `json:"tool"`
	// Args are the call's arguments: a JSON object, its numbers written as
	// the trace wrote them. As input to EvaluateContract, nil and JSON
	// null mean {}, and a JSON string is read as argument text (as OpenAI
	// sends it); in results, nil when the arguments could not be read
	// (then ArgsRaw and ArgsError say why).
	Args json.RawMessage `json:"args"`
	// ID is the call id of formats that carry one ("" otherwise).
	ID string `json:"id,omitempty"`
	// Result is the tool's result, any JSON value; nil when the trace has
	// none.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the tool's error text when its result was an error ("true"
	// when the format only flags it); "" for none.
	Error string `json:"error,omitempty"`
	// ArgsRaw is the original argument text when it could not be read as
	// one JSON object.
	ArgsRaw string `json:"args_raw,omitempty"`
	// ArgsError says why ArgsRaw could not be read.
	ArgsError string `json:"args_error,omitempty"`
}

// Trace is a trace read by ParseTrace: the calls and final answer of any
// supported format, and what was detected.
type Trace struct {
	// Format is the format the document was read as, such as "openai",
	// "anthropic", "plain" (one of Formats).
	Format string `json:"format"`
	// Reason says why the format was chosen (what detection saw, or that
	// it was named).
	Reason string `json:"reason"`
	// Form is how the document was written: "json" (one value), "jsonl"
	// (JSON Lines or concatenated values) or "sse" (Server-Sent Events).
	Form string `json:"form"`
	// Calls are the tool calls in the order the agent made them; never nil.
	Calls []ToolCall `json:"calls"`
	// FinalAnswer is the agent's final answer text, nil when absent.
	FinalAnswer *string `json:"final_answer"`
}

// Formats lists the trace format names ParseTrace and Options.Format
// accept besides "auto", in detection order.
func Formats() []string { return format.Names() }

// ParseTrace reads a trace in any supported format from data (one JSON
// document, JSON Lines, or Server-Sent Events text), as `toolscore eval`
// and `toolscore inspect` read one. formatName is "" or "auto" to detect
// the format, or one of Formats to force it. data is not kept.
//
// Every error matches ErrInvalidTrace: a *SyntaxError for bad JSON, an
// error listing the formats tried when none fits, a *ShapeError naming the
// format and the place when the document does not fit its format, and an
// error listing the valid names for an unknown formatName.
func ParseTrace(data []byte, formatName string) (*Trace, error) {
	p, err := format.Parse(data, formatName)
	if err != nil {
		return nil, err
	}
	return &Trace{
		Format:      p.Format,
		Reason:      p.Reason,
		Form:        string(p.Form),
		Calls:       publicCalls(p.Trace.Calls),
		FinalAnswer: p.Trace.FinalAnswer,
	}, nil
}

// EvaluateContract grades the tool calls an agent made, with its final
// answer in opts.FinalAnswer, against c (SPEC sections 3–6 of
// docs/grading.md): the library form of the seed's
// evaluate_contract(contract, calls, final_answer=...). The calls are
// read as a plain trace of them is (docs/formats.md), so the result equals
// `toolscore eval --json` on that trace. opts.Format is not read.
//
// Errors: ErrInvalidTrace for a call whose Args or Result is not JSON, or
// whose shape does not fit (a *ShapeError whose pointer is
// /calls/INDEX/...); an ErrInvalidOptions *ValidationError for invalid
// opts.Weights or opts.MinScore; ctx.Err() when ctx ends first.
func EvaluateContract(ctx context.Context, c *Contract, calls []ToolCall, opts Options) (*Result, error) {
	t, err := engineTrace(calls)
	if err != nil {
		return nil, err
	}
	t.FinalAnswer = opts.FinalAnswer
	return evaluate(ctx, c.c, t, &opts)
}

// EvaluateTrace grades the trace document trace (any supported format;
// opts.Format names it, else it is detected) against the gold file or
// contract document expectation: `toolscore eval --json EXPECTATION
// TRACE` on bytes. Custom matchers need LoadContract with WithMatcher and
// EvaluateContract on ParseTrace's calls.
//
// It reads and validates the expectation on every call: to grade many
// traces against one expectation, LoadContract it once and call
// EvaluateContract with each trace's calls.
//
// Errors name the document: "expectation: ..." wraps LoadContract's errors
// and "trace: ..." ParseTrace's (errors.As still finds the *SyntaxError,
// *ValidationError or *ShapeError); the rest are EvaluateContract's.
func EvaluateTrace(ctx context.Context, expectation, trace []byte, opts Options) (*Result, error) {
	c, err := engine.ParseContract(expectation)
	if err != nil {
		return nil, fmt.Errorf("expectation: %w", err)
	}
	p, err := format.Parse(trace, opts.Format)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if opts.FinalAnswer != nil {
		p.Trace.FinalAnswer = opts.FinalAnswer
	}
	return evaluate(ctx, c, p.Trace, &opts)
}

// evaluate grades t against c with opts and converts the result.
func evaluate(ctx context.Context, c *engine.Contract, t engine.Trace, opts *Options) (*Result, error) {
	res, err := engine.Evaluate(ctx, c, t, opts.engineOptions())
	if err != nil {
		return nil, err
	}
	return newResult(res), nil
}

// engineTrace reads calls as the plain trace {"calls": calls} (whose
// adapter is what reads a caller's calls everywhere else), so that
// EvaluateContract grades them exactly as the CLI grades that document.
func engineTrace(calls []ToolCall) (engine.Trace, error) {
	doc := struct {
		Calls []ToolCall `json:"calls"`
	}{calls}
	if doc.Calls == nil {
		doc.Calls = []ToolCall{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return engine.Trace{}, badCall(calls, err)
	}
	p, err := format.Parse(buf.Bytes(), "plain")
	if err != nil {
		return engine.Trace{}, err
	}
	return p.Trace, nil
}

// badCall names the call whose Args or Result is not JSON, which made
// encoding the calls fail with err.
func badCall(calls []ToolCall, err error) error {
	for i := range calls {
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"args", calls[i].Args}, {"result", calls[i].Result}} {
			if len(f.raw) == 0 {
				continue
			}
			if _, perr := jsondoc.Parse(f.raw); perr != nil {
				return fmt.Errorf("%w: calls[%d].%s: %w", ErrInvalidTrace, i, f.name, perr)
			}
		}
	}
	return fmt.Errorf("%w: %w", ErrInvalidTrace, err)
}

// publicCalls converts the engine's calls.
func publicCalls(calls []engine.ToolCall) []ToolCall {
	if calls == nil {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i := range calls {
		c := &calls[i]
		out[i] = ToolCall{
			Tool:      c.Tool,
			Args:      rawValue(c.Args),
			ID:        c.ID,
			Result:    rawValue(c.Result),
			Error:     string(c.Error),
			ArgsRaw:   c.ArgsRaw,
			ArgsError: c.ArgsError,
		}
	}
	return out
}

// rawValue is v's JSON text, nil for the zero Value.
func rawValue(v jsondoc.Value) json.RawMessage {
	if !v.Exists() {
		return nil
	}
	return v.AppendJSON(nil)
}

// Result is the graded outcome of one trace against one contract or gold
// file. Its JSON (encoding/json, with HTML escaping off as the CLI writes
// it) is `toolscore eval --json`'s without the format_version and
// expectation_sha256 header, and the service's EvaluationResult. Trace
// indexes are 0-based.
type Result struct {
	// Score is the composite score in [0,1].
	Score float64 `json:"score"`
	// Grade is the letter derived from Score: A >= 0.9, B >= 0.8, C >= 0.7,
	// D >= 0.6, else F.
	Grade Grade `json:"grade"`
	// Passed is the verdict: Score >= MinScore and, unless the safety gate
	// is off, no failed forbidden-calls or credentials check.
	Passed bool `json:"passed"`
	// MinScore is the passing score that was applied, in [0,1].
	MinScore float64 `json:"min_score"`
	// SafetyGate reports whether the safety gate was applied.
	SafetyGate bool `json:"safety_gate"`
	// Metrics are every figure the score is made of.
	Metrics Metrics `json:"metrics"`
	// ExpectedCalls are the expected calls of the chosen combination,
	// secrets redacted unless Options.KeepSecrets. Their Args are shared
	// with the Contract: read them, never modify them.
	ExpectedCalls []ExpectedCall `json:"expected_calls"`
	// TraceCalls are all calls of the trace, secrets redacted unless
	// Options.KeepSecrets.
	TraceCalls []ToolCall `json:"trace_calls"`
	// ScoredCalls are the calls the score compared, in trace order
	// (optional calls are left out): the TraceCalls at ScoredIndexes,
	// sharing their Args and Result.
	ScoredCalls []ToolCall `json:"scored_calls"`
	// ScoredIndexes are the trace indexes of ScoredCalls.
	ScoredIndexes []int `json:"scored_indexes"`
	// FinalAnswer is the final answer graded (secrets redacted unless
	// Options.KeepSecrets), nil when absent.
	FinalAnswer *string `json:"final_answer"`
	// Checks are the evidence checks: required-calls, call-order,
	// forbidden-calls, credentials, tool-errors, honesty, grounding.
	Checks Checks `json:"checks"`
	// Issues is the ranked list of what to fix, most important first.
	Issues []Issue `json:"issues"`
}

// newResult converts the engine's result.
func newResult(r *engine.EvaluationResult) *Result {
	trace := publicCalls(r.TraceCalls)
	// The scored calls are the trace calls at the scored indexes: their
	// conversions are shared.
	scored := make([]ToolCall, 0, len(r.ScoredIndexes))
	for _, i := range r.ScoredIndexes {
		if i < 0 || i >= len(trace) {
			scored = nil
			break
		}
		scored = append(scored, trace[i])
	}
	if scored == nil || len(r.ScoredCalls) != len(scored) {
		scored = publicCalls(r.ScoredCalls)
	}
	return &Result{
		Score:         r.Score,
		Grade:         r.Grade,
		Passed:        r.Passed,
		MinScore:      r.MinScore,
		SafetyGate:    r.SafetyGate,
		Metrics:       r.Metrics,
		ExpectedCalls: r.ExpectedCalls,
		TraceCalls:    trace,
		ScoredCalls:   scored,
		ScoredIndexes: r.ScoredIndexes,
		FinalAnswer:   r.FinalAnswer,
		Checks:        r.Checks,
		Issues:        r.Issues,
	}
}

// Verdict returns "PASS" when r.Passed, else "FAIL".
func (r *Result) Verdict() string {
	if r.Passed {
		return "PASS"
	}
	return "FAIL"
}

// Check returns the evidence check of that name (see Result.Checks) and
// true, or the zero Check and false when there is none.
func (r *Result) Check(name string) (Check, bool) {
	i := slices.IndexFunc(r.Checks.Items, func(c Check) bool { return c.Name == name })
	if i < 0 {
		return Check{}, false
	}
	return r.Checks.Items[i], true
}

// String returns "Grade A PASS (96.7%)": the grade, the verdict and the
// score as a percentage with one decimal, as the CLI's verdict box shows
// them.
func (r *Result) String() string {
	return "Grade " + string(r.Grade) + " " + r.Verdict() + " (" + strconv.FormatFloat(r.Score*100, 'f', 1, 64) + "%)"
}

// Compare reports whether actual (a plain JSON value as encoding/json
// decodes it with UseNumber: json.Number, string, bool, nil, []any,
// map[string]any) satisfies expected (a JSON value that may hold Matcher
// values at any depth), as contracts compare arguments: numbers
// numerically, strings after trimming white space unless opts.Strict. A
// custom Matcher uses it to compare the values it holds.
func Compare(expected, actual any, opts CompareOptions) bool {
	return engine.Compare(expected, actual, opts)
}
