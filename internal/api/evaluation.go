package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/resultjson"
)

func (s *Server) evaluationRoutes(r chi.Router) {
	r.Post("/evaluations", s.handle(s.createEvaluation))
	r.Get("/evaluations", s.handle(s.listEvaluations))
	r.Get("/evaluations/{id}", s.handle(s.getEvaluation))
}

// evaluationRequest is the body of POST /v1/evaluations (and one item of
// a batch). Exactly one of Contract and Gold is given. Contract is an
// inline contract (object), a gold list (array), or a registry reference
// (string "name", "name@latest" or "name@N").
type evaluationRequest struct {
	Contract    json.RawMessage    `json:"contract"`
	Gold        json.RawMessage    `json:"gold"`
	Trace       json.RawMessage    `json:"trace"`
	Format      string             `json:"format"`
	FinalAnswer *string            `json:"final_answer"`
	TaskID      string             `json:"task_id"`
	RunID       string             `json:"run_id"`
	Agent       string             `json:"agent"`
	Labels      map[string]string  `json:"labels"`
	Strict      bool               `json:"strict"`
	Forbidden   json.RawMessage    `json:"forbidden"`
	SafetyGate  *bool              `json:"safety_gate"`
	Weights     map[string]float64 `json:"weights"`
	MinScore    *float64           `json:"min_score"`

	// contract, gold, trace and forbidden are the members of the same
	// names as values of the request's jsondoc tape (readRequest): the
	// raw fields above are their text.
	contract, gold, trace, forbidden jsondoc.Value
}

// evalOptions are the evaluation options stored with a result, so that a
// regrade can apply them again.
type evalOptions struct {
	Strict     bool               `json:"strict"`
	SafetyGate bool               `json:"safety_gate"`
	Format     string             `json:"format,omitempty"`
	Forbidden  json.RawMessage    `json:"forbidden,omitempty"`
	Weights    map[string]float64 `json:"weights,omitempty"`
	MinScore   *float64           `json:"min_score,omitempty"`
}

// marshalOptions returns json.Marshal's bytes for o: written directly
// when o has no forbidden rules or weights (every evaluation but a few),
// else by json.Marshal, which compacts and escapes the raw rules.
func marshalOptions(o evalOptions) []byte {
	if o.Forbidden != nil || o.Weights != nil {
		b, _ := json.Marshal(o) // valid raw rules and finite weights always marshal
		return b
	}
	b := make([]byte, 0, 64+len(o.Format))
	b = append(b, `{"strict":`...)
	b = strconv.AppendBool(b, o.Strict)
	b = append(b, `,"safety_gate":`...)
	b = strconv.AppendBool(b, o.SafetyGate)
	if o.Format != "" {
		b = append(b, `,"format":`...)
		b = jsondoc.AppendString(b, o.Format)
	}
	if o.MinScore != nil {
		b = append(b, `,"min_score":`...)
		b = jsondoc.AppendFloat(b, *o.MinScore) // in [0, 1] (decodeParsed)
	}
	return append(b, '}')
}

// evalInput is a decoded and checked request, ready for a worker.
type evalInput struct {
	req        evaluationRequest
	inline     json.RawMessage // inline contract or gold list; nil for a registry reference
	inlinePtr  string          // "/contract" or "/gold"
	wantGold   bool            // given as "gold": must be a gold list
	refName    string          // registry reference
	refVersion int
	registry   *parsedContract         // resolved registry contract, when cached
	registryCV *record.ContractVersion // else the stored version, parsed on a worker
	project    int64                   // the project of registryCV
	body       []byte                  // the request (item) the input was decoded from
	// slashU is the request document's HoldsSlashU: whether the text
	// decodeParsed's document was read from holds `\u`.
	slashU bool
}

// Limits of the caller's identifiers.
const (
	maxIDLength    = 256
	maxLabels      = 32
	maxLabelKey    = 64
	maxLabelValue  = 256
	maxIdemKeySize = 255
)

// decodeEvaluation decodes and checks one evaluation request. Pointers in
// its errors are relative to the request object.
func decodeEvaluation(data []byte) (*evalInput, error) {
	doc, err := parseRequest(data)
	if err != nil {
		return nil, err
	}
	return decodeParsed(data, doc)
}

// decodeOwned is decodeEvaluation on a request that nothing writes to
// again (a batch item of a body readBody read), read by parseBody: its
// document shares data's memory and skips an inline contract the cache
// has.
func (s *Server) decodeOwned(data []byte) (*evalInput, error) {
	doc, err := s.contracts.parseBody(data)
	if err != nil {
		return nil, err
	}
	return decodeParsed(data, doc)
}

// decodeParsed is decodeEvaluation on the request's tape doc, read from
// data by parseRequest, parseOwnedRequest or contractCache.parseBody.
func decodeParsed(data []byte, doc jsondoc.Value) (*evalInput, error) {
	in := &evalInput{body: data, slashU: doc.Doc().HoldsSlashU()}
	if err := readRequest(doc, &in.req); err != nil {
		return nil, err
	}
	req := &in.req
	var errs []FieldProblem
	add := func(ptr, format string, args ...any) {
		errs = append(errs, FieldProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	present := func(v jsondoc.Value) bool { return v.Exists() && !v.IsNull() }
	hasContract, hasGold := present(req.contract), present(req.gold)
	switch {
	case hasContract && hasGold:
		add("/gold", "give either contract or gold, not both")
	case !hasContract && !hasGold:
		add("/contract", "required: an inline contract (object), a gold list (array) or a registry reference (\"name\" or \"name@version\")")
	case hasGold:
		in.inline, in.inlinePtr, in.wantGold = req.Gold, "/gold", true
		if k := req.gold.Kind(); k != jsondoc.Array && k != jsondoc.Object {
			add("/gold", "must be an array of expected calls or an object with calls")
		}
	default:
		switch req.contract.Kind() {
		case jsondoc.String:
			name, version, err := parseRef(req.contract.Text())
			if err != nil {
				add("/contract", "%v", err)
			}
			in.refName, in.refVersion = name, version
		case jsondoc.Object, jsondoc.Array:
			in.inline, in.inlinePtr = req.Contract, "/contract"
		default:
			add("/contract", "must be an object (inline contract), an array (gold list) or a string (registry reference)")
		}
	}
	if !present(req.trace) {
		add("/trace", "required: the agent's trace, in any supported format")
	}
	if req.Format != "" && req.Format != "auto" && !slices.Contains(format.Names(), req.Format) {
		add("/format", "unknown format %q; valid: auto, %s", req.Format, strings.Join(format.Names(), ", "))
	}
	for _, f := range []struct{ ptr, v string }{{"/task_id", req.TaskID}, {"/run_id", req.RunID}, {"/agent", req.Agent}} {
		if len(f.v) > maxIDLength {
			add(f.ptr, "must be at most %d bytes, got %d", maxIDLength, len(f.v))
		} else if p := textProblem(f.v); p != "" {
			add(f.ptr, "%s", p)
		}
	}
	if len(req.Labels) > maxLabels {
		add("/labels", "at most %d labels, got %d", maxLabels, len(req.Labels))
	}
	for k, v := range req.Labels {
		if k == "" || len(k) > maxLabelKey || strings.ContainsAny(k, "=\x00") || !utf8.ValidString(k) {
			add("/labels/"+escapePointer(k), "a label key must be 1 to %d bytes of UTF-8 without '=' or NUL", maxLabelKey)
		}
		if len(v) > maxLabelValue || textProblem(v) != "" {
			add("/labels/"+escapePointer(k), "a label value must be at most %d bytes of UTF-8 without NUL", maxLabelValue)
		}
	}
	if req.MinScore != nil && (*req.MinScore < 0 || *req.MinScore > 1) {
		add("/min_score", "must be in [0, 1], got %v", *req.MinScore)
	}
	errs = append(errs, fieldErrors("", engine.CheckWeights("/weights", req.Weights))...)
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b FieldProblem) int { return strings.Compare(a.Pointer, b.Pointer) })
		return nil, &apiError{kind: probInvalidRequest, detail: errs[0].Pointer + ": " + errs[0].Message, errors: errs}
	}
	return in, nil
}

// resolveContract looks up a registry reference (I/O; done on the request
// goroutine, not on a worker).
//
// Errors: 422 unknown-contract; engine.ErrUnavailable.
func (s *Server) resolveContract(ctx context.Context, in *evalInput) error {
	if in.refName == "" {
		return nil
	}
	pc, cv, err := s.contracts.resolve(ctx, ProjectFrom(ctx), in.refName, in.refVersion)
	if errors.Is(err, engine.ErrNotFound) {
		ref := in.refName
		if in.refVersion > 0 {
			ref = fmt.Sprintf("%s@%d", in.refName, in.refVersion)
		}
		return &apiError{kind: probUnknownContract, detail: fmt.Sprintf("no registry contract %s", ref),
			errors: []FieldProblem{{Pointer: "/contract", Message: "no registry contract " + ref}}, cause: err}
	}
	in.registry, in.registryCV, in.project = pc, cv, ProjectFrom(ctx)
	return err
}

// bodyErrors returns the problems of the inline contract as ve lists
// them (parseInline read the contract's text alone) with the line and
// column of a repeated key counted in the request body: the contract
// read again from its value in the request's document
// (engine.ParseContractValue), on this error path only; ve itself when
// that value is not at hand.
func (in *evalInput) bodyErrors(ve *engine.ValidationError) *engine.ValidationError {
	v := in.req.contract
	if in.inlinePtr == "/gold" {
		v = in.req.gold
	}
	if !v.Exists() || v.Raw() != string(in.inline) {
		return ve
	}
	var again *engine.ValidationError
	if _, err := engine.ParseContractValue(v); errors.As(err, &again) && len(again.Errors) == len(ve.Errors) {
		return again
	}
	return ve
}

// parseForbidden reads the request's forbidden rules, a value of the
// request's tape, with the engine's contract parser
// (engine.ParseForbiddenValue), so matchers in their args work as in
// contracts; problems point into the request's "forbidden".
func parseForbidden(v jsondoc.Value) ([]engine.ForbiddenCall, error) {
	rules, err := engine.ParseForbiddenValue(v)
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) {
			return nil, &apiError{kind: probInvalidRequest, detail: "forbidden rules are invalid", errors: fieldErrors("/forbidden", ve.Errors), cause: err}
		}
		return nil, err
	}
	return rules, nil
}

// MaxRegexWork bounds the regexp work of one evaluation: the bytes of a
// tool's argument strings in the trace times the compiled instructions
// of the $regex patterns of that tool's expected calls and forbidden
// rules (engine.RegexSizes.RegexWork), at most engine.MaxRegexWork (see
// there why).
const MaxRegexWork = engine.MaxRegexWork

// checkRegexWork refuses an evaluation whose regexp work could exceed
// MaxRegexWork (422 at the contract, or at the forbidden rules when they
// alone exceed it).
func checkRegexWork(pc *parsedContract, in *evalInput, forbidden []engine.ForbiddenCall, t *engine.Trace) error {
	w, fw := pc.regexSizes.RegexWorkWith(forbidden, t)
	if w+fw <= MaxRegexWork {
		return nil
	}
	ptr := "/contract"
	if in.registry == nil && in.registryCV == nil && in.inlinePtr != "" {
		ptr = in.inlinePtr
	}
	if w <= MaxRegexWork && fw > 0 {
		ptr = "/forbidden"
	}
	msg := fmt.Sprintf("matching its $regex patterns against this trace's arguments could take %d steps (argument bytes times pattern instructions), over the limit of %d: use shorter patterns or match shorter values", w+fw, MaxRegexWork)
	return &apiError{kind: probInvalidRequest, detail: "the $regex patterns would take too long on this trace",
		errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
}

// evaluate grades one request (CPU only; runs on a pool worker) and
// returns the result as it will be stored. id is uuid.Nil for a dry run.
func (s *Server) evaluate(ctx context.Context, in *evalInput, project int64, id uuid.UUID) (*record.Result, error) {
	start := time.Now()
	req := &in.req
	pc := in.registry
	if pc == nil && in.registryCV != nil {
		var err error
		if pc, err = s.contracts.parseVersion(in.project, in.registryCV); err != nil {
			return nil, err
		}
	}
	if pc == nil {
		var err error
		pc, err = s.contracts.parseInline(in.inline)
		if err != nil {
			var ve *engine.ValidationError
			if errors.As(err, &ve) {
				ve = in.bodyErrors(ve)
				return nil, &apiError{kind: probInvalidContract, detail: "the contract does not validate",
					errors: fieldErrors(in.inlinePtr, ve.Errors), cause: err}
			}
			return nil, err
		}
		if in.wantGold && !pc.c.Gold {
			return nil, &apiError{kind: probInvalidRequest, detail: "gold holds a contract, not a gold list; send it as contract",
				errors: []FieldProblem{{Pointer: "/gold", Message: "is a contract; send it as contract"}}}
		}
	}
	forbidden, err := parseForbidden(req.forbidden)
	if err != nil {
		return nil, err
	}
	rd := s.traceReader(req.trace)
	parsed, err := parseTrace(rd, req.trace, req.Format)
	if err != nil {
		return nil, err
	}
	trace := parsed.Trace
	if err := checkScoringCells(pc, in, &trace); err != nil {
		return nil, err
	}
	if err := checkRegexWork(pc, in, forbidden, &trace); err != nil {
		return nil, err
	}
	if req.FinalAnswer != nil {
		trace.FinalAnswer = req.FinalAnswer
	}
	safetyGate := req.SafetyGate == nil || *req.SafetyGate
	res, err := engine.Evaluate(ctx, pc.c, trace, engine.Options{
		Strict: req.Strict, Weights: req.Weights, MinScore: req.MinScore, Forbidden: forbidden, NoSafetyGate: !safetyGate,
		SecretScanner: s.cfg.SecretScanner,
	})
	if err != nil {
		return nil, err
	}
	// The forbidden rules are stored and answered as results show them:
	// with the secrets written in them hidden (a regrade grades the stored
	// trace, redacted alike, against them).
	shownForbidden := req.Forbidden
	if len(shownForbidden) > 0 {
		if shownForbidden, err = engine.RedactDocument(ctx, shownForbidden, s.cfg.SecretScanner); err != nil {
			return nil, err
		}
	}
	opts := marshalOptions(evalOptions{Strict: req.Strict, SafetyGate: safetyGate, Format: req.Format,
		Forbidden: shownForbidden, Weights: req.Weights, MinScore: req.MinScore})
	// The caller's identifiers, as stored and shown: redacted.
	taskID, runID, agent := req.TaskID, req.RunID, req.Agent
	labels, err := redactFields(ctx, s.cfg.SecretScanner, &taskID, &runID, &agent, req.Labels)
	if err != nil {
		return nil, err
	}
	// The format's warning quotes the document's member names and
	// pointers: stored and shown redacted alike.
	warning := parsed.Warning
	if err := redactTexts(ctx, s.cfg.SecretScanner, []*string{&warning}, nil); err != nil {
		return nil, err
	}
	if rd != nil {
		// Parsed's texts may be in the Reader's memory, which the next
		// evaluation reads into.
		if res.FinalAnswer != nil {
			a := strings.Clone(*res.FinalAnswer)
			res.FinalAnswer = &a
		}
		warning = strings.Clone(warning)
	}
	out := &record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: project, Contract: pc.ref,
			TaskID: taskID, RunID: runID, Agent: agent, Labels: labels, Format: parsed.Format,
			Score: res.Score, Grade: string(res.Grade), Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate,
			FormatWarning: warning,
		},
		Options:     opts,
		FinalAnswer: res.FinalAnswer,
	}
	if len(labels) > 0 {
		out.LabelsJSON, _ = json.Marshal(labels) // once, for the row and the answer; a map[string]string always marshals
	}
	if out.ExpectedCalls, err = pc.expected.ExpectedCalls(resultjson.Marshal, res); err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	out.TraceCalls, out.ScoredCalls = encodeCalls(res)
	// Byte-identical to json.Marshal (nil lists as []); only the metrics
	// can fail, with json.Marshal's error.
	out.ScoredIndexes = resultjson.AppendInts(nil, res.ScoredIndexes)
	if out.Metrics, err = resultjson.Marshal.AppendMetrics(nil, &res.Metrics); err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	out.Checks = resultjson.Marshal.AppendChecks(nil, &res.Checks)
	out.Issues = resultjson.Marshal.AppendIssues(nil, res.Issues)
	if id != uuid.Nil && in.mayHoldNUL(pc) {
		if err := storedNULProblem(out, in, pc); err != nil {
			return nil, err
		}
	}
	s.metrics.evalDuration.Observe(time.Since(start).Seconds())
	s.metrics.combinations.Observe(float64(pc.c.Combinations()))
	verdict := "fail"
	if res.Passed {
		verdict = "pass"
	}
	s.metrics.evaluations.WithLabelValues(string(res.Grade), verdict).Inc()
	if rd != nil {
		// Nothing of out is in the Reader's memory (the final answer and
		// the warning are copies; the rest is encoded), so the next
		// evaluation may read into it; released, it keeps none of this
		// request's trace alive while it waits in the pool.
		rd.Release()
		s.readers.Put(rd)
	}
	return out, nil
}

// maxReaderTrace is the largest trace (its JSON text, in bytes) whose
// Reader evaluate keeps for the next one: a larger trace's buffers are
// left to the garbage collector.
const maxReaderTrace = 1 << 20

// traceReader returns a format.Reader for the trace value v, one that
// read an earlier trace when there is one (its buffers reused); nil when
// v is a string (read by format.Parse).
func (s *Server) traceReader(v jsondoc.Value) *format.Reader {
	if v.Kind() == jsondoc.String || len(v.Raw()) > maxReaderTrace {
		return nil
	}
	if rd, ok := s.readers.Get().(*format.Reader); ok {
		return rd
	}
	return format.NewReader()
}

// mayHoldNUL reports whether a result graded from the request (or batch
// item) text body can hold a NUL character: only when body holds `\u`.
// Every text of a result comes from the body's strings (decoded once, or
// again where a string holds JSON: a string trace, OpenAI's arguments)
// or from a registry contract, which holds no NUL (Postgres cannot store
// one), and JSON text holds no NUL byte itself: a NUL at any level of
// decoding is written \u0000 one level up, and a `\u` at any level is
// written with a `\u` one level up (as \\u, \u005cu, \\\u0075 or
// \u005c\u0075). evaluate asks evalInput.mayHoldNUL, which knows it
// without reading body again.
func mayHoldNUL(body []byte) bool {
	// 'u' is rarer than '\\' in JSON text, so look for it first.
	for i := 0; ; i++ {
		j := bytes.IndexByte(body[i:], 'u')
		if j < 0 {
			return false
		}
		if i += j; i > 0 && body[i-1] == '\\' {
			return true
		}
	}
}

// mayHoldNUL is mayHoldNUL(in.body) for the input graded against pc,
// without reading the body again (true when there is no body): the
// parser noted whether the request's text holds `\u` (slashU), and
// when that text had a cached inline contract's inside blanked out
// (contractCache.parseBody), the cache noted it of the contract's own
// text (parsedContract.slashU; a `\u` cannot straddle the contract's
// brackets). FuzzParseBody compares the two.
func (in *evalInput) mayHoldNUL(pc *parsedContract) bool {
	return in.body == nil || in.slashU || in.inline != nil && pc.slashU
}

// storedNULProblem returns the 422 for a result that cannot be stored because
// Postgres text cannot hold a NUL character, naming where the NUL came
// from: the final answer, the inline contract or gold list of pc (its
// expected calls, or, when its text holds a NUL, the checks and issues
// that quote its forbidden rules' reasons, groups or optional calls), or
// the trace (whose calls are in every other part of the result); nil when
// there is none.
func storedNULProblem(out *record.Result, in *evalInput, pc *parsedContract) error {
	trace := hasNUL(out.TraceCalls)
	answer := out.FinalAnswer != nil && strings.ContainsRune(*out.FinalAnswer, 0)
	rest := hasNUL(out.Metrics) || hasNUL(out.Checks) || hasNUL(out.Issues)
	contract := hasNUL(out.ExpectedCalls) || rest && pc.nul
	var ptr, what string
	kind := probInvalidTrace
	switch {
	case answer && !trace:
		ptr, what, kind = "/final_answer", "the final answer", probInvalidRequest
	case contract && !trace:
		ptr, what, kind = in.inlinePtr, "the contract", probInvalidContract
		if ptr == "" {
			ptr = "/contract"
		}
	case trace || rest:
		ptr, what = "/trace", "the trace"
	default:
		return nil
	}
	return &apiError{kind: kind, detail: what + " holds a NUL character (\\u0000), which cannot be stored; use ?store=false or remove it",
		errors: []FieldProblem{{Pointer: ptr, Message: "holds a NUL character (\\u0000)"}}}
}

// parseTrace reads the request's trace, a value of the request's tape: a
// JSON string is the raw trace text (JSON Lines, Server-Sent Events or
// JSON, as a file would hold it), read by format.Parse; anything else is
// the trace itself, read as it is by rd's ParseValue (format.ParseValue
// when rd is nil).
//
// Errors: 422 invalid-trace at /trace (for a JSON layer's limit inside
// the text of a string trace too).
func parseTrace(rd *format.Reader, v jsondoc.Value, name string) (*format.Parsed, error) {
	var parsed *format.Parsed
	var err error
	if text, ok := v.Str(); ok {
		parsed, err = format.Parse([]byte(text), name)
	} else if rd != nil {
		parsed, err = rd.ParseValue(v, name)
	} else {
		parsed, err = format.ParseValue(v, name)
	}
	if err != nil {
		return nil, &apiError{kind: probInvalidTrace, detail: err.Error(), errors: []FieldProblem{{Pointer: "/trace", Message: err.Error()}}, cause: err}
	}
	return parsed, nil
}

// contractRefView identifies the contract of a result.
type contractRefView struct {
	Name    string `json:"name,omitempty"`
	Version int    `json:"version,omitempty"`
	SHA256  string `json:"sha256"`
	Kind    string `json:"kind"`
}

// evaluationView is the JSON form of an evaluation, the same for POST and
// GET: the EvaluationResult's fields (SPEC section 6) plus the id, time,
// the regrade link of a regrade result and the caller's identifiers.
type evaluationView struct {
	ID        string     `json:"id,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	// RegradeOf and RegradeID are set only for a regrade result: the
	// original it re-evaluates and the regrade that wrote it.
	RegradeOf  string            `json:"regrade_of,omitempty"`
	RegradeID  string            `json:"regrade_id,omitempty"`
	Stored     bool              `json:"stored"`
	Contract   contractRefView   `json:"contract"`
	TaskID     string            `json:"task_id,omitempty"`
	RunID      string            `json:"run_id,omitempty"`
	Agent      string            `json:"agent,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Format     string            `json:"format"`
	Score      float64           `json:"score"`
	Grade      string            `json:"grade"`
	Passed     bool              `json:"passed"`
	MinScore   float64           `json:"min_score"`
	SafetyGate bool              `json:"safety_gate"`

	// FormatWarning is the trace format's warning (record.Result's),
	// written after format and left out when "".
	FormatWarning string `json:"format_warning,omitempty"`
	// labelsJSON is Labels as JSON when the result carries it
	// (record.Result.LabelsJSON).
	labelsJSON    json.RawMessage
	Options       json.RawMessage `json:"options"`
	Metrics       json.RawMessage `json:"metrics"`
	ExpectedCalls json.RawMessage `json:"expected_calls"`
	TraceCalls    json.RawMessage `json:"trace_calls"`
	ScoredCalls   json.RawMessage `json:"scored_calls"`
	ScoredIndexes json.RawMessage `json:"scored_indexes"`
	FinalAnswer   *string         `json:"final_answer"`
	Checks        json.RawMessage `json:"checks"`
	Issues        json.RawMessage `json:"issues"`
}

func contractRef(c record.ContractRef) contractRefView {
	return contractRefView{Name: c.Name, Version: c.Version, SHA256: c.SHA256, Kind: string(c.Kind)}
}

func viewEvaluation(r *record.Result) evaluationView {
	v := evaluationView{
		Contract: contractRef(r.Contract), TaskID: r.TaskID, RunID: r.RunID, Agent: r.Agent, Labels: r.Labels,
		Format: r.Format, FormatWarning: r.FormatWarning,
		Score: r.Score, Grade: r.Grade, Passed: r.Passed, MinScore: r.MinScore, SafetyGate: r.SafetyGate,
		Options: r.Options, Metrics: r.Metrics, ExpectedCalls: r.ExpectedCalls, TraceCalls: r.TraceCalls,
		ScoredCalls: r.ScoredCalls, ScoredIndexes: r.ScoredIndexes, FinalAnswer: r.FinalAnswer, Checks: r.Checks, Issues: r.Issues,
		labelsJSON: r.LabelsJSON,
	}
	if r.ID != uuid.Nil {
		t := r.CreatedAt
		v.ID, v.CreatedAt, v.Stored = r.ID.String(), &t, true
	}
	v.RegradeOf, v.RegradeID = regradeLink(&r.ResultSummary)
	return v
}

// regradeLink returns the regrade_of and regrade_id of a regrade result,
// "" and "" for an original.
func regradeLink(r *record.ResultSummary) (of, id string) {
	if !r.IsRegrade() {
		return "", ""
	}
	return r.RegradeOf.String(), r.RegradeID.String()
}

// storeParam reads ?store= (default true).
func storeParam(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("store"); v {
	case "", "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, paramError("store", "must be true or false, got %q", v)
	}
}

// idempotencyKey reads the Idempotency-Key header: "" when absent, else 1
// to 255 printable ASCII characters (an empty header is an error).
func idempotencyKey(r *http.Request) (string, error) {
	vs, present := r.Header["Idempotency-Key"]
	if !present {
		return "", nil
	}
	k := vs[0]
	if k == "" {
		return "", &apiError{kind: probInvalidParameter, detail: "Idempotency-Key is empty",
			errors: []FieldProblem{{Parameter: "Idempotency-Key", Message: fmt.Sprintf("must be 1 to %d printable ASCII characters; omit the header for none", maxIdemKeySize)}}}
	}
	if len(k) > maxIdemKeySize {
		return "", &apiError{kind: probInvalidParameter, detail: "Idempotency-Key is too long",
			errors: []FieldProblem{{Parameter: "Idempotency-Key", Message: fmt.Sprintf("must be at most %d characters", maxIdemKeySize)}}}
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", &apiError{kind: probInvalidParameter, detail: "Idempotency-Key must be printable ASCII",
				errors: []FieldProblem{{Parameter: "Idempotency-Key", Message: "must be printable ASCII"}}}
		}
	}
	return k, nil
}

// requestHash identifies a request for Idempotency-Key: the method, the
// path and the canonical form of the body (jsondoc.Canonical; for NDJSON,
// of each line), so that the same JSON with other key order or white
// space is the same request. A body that is not JSON is hashed as sent.
func requestHash(r *http.Request, body []byte, media string) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	if media == mediaNDJSON {
		for line := range bytes.SplitSeq(body, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			writeCanonical(h, line)
			h.Write([]byte("\n"))
		}
	} else {
		writeCanonical(h, body)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// requestHashDoc is requestHash of a JSON body already read into doc: the
// same hash, from the tape instead of a second read.
func requestHashDoc(r *http.Request, doc jsondoc.Value) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	h.Write(doc.AppendCanonical(make([]byte, 0, len(doc.Raw()))))
	return hex.EncodeToString(h.Sum(nil))
}

// writeCanonical writes the canonical form of a JSON document to w, or
// the document as is when it is not JSON.
func writeCanonical(w io.Writer, doc []byte) {
	if c, _, err := jsondoc.Canonical(doc); err == nil {
		doc = c
	}
	_, _ = w.Write(doc)
}

// newResultID returns a UUIDv7 (time-ordered) result id.
func newResultID() (uuid.UUID, error) { return uuid.NewV7() }

// now returns the current time as stored by Postgres (UTC, microseconds).
func (s *Server) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// createEvaluation grades one trace: 201 with the stored evaluation after
// it is committed, or 200 with a dry run (?store=false).
func (s *Server) createEvaluation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	store, err := storeParam(r)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	// The evaluation's slot is taken once its body is here: a client
	// sending slowly holds only a body reader (readBody), for at most
	// BodyTimeout.
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		s.countError(errQueueFull)
		return &apiError{kind: probQueueFull, detail: fmt.Sprintf("%d evaluations are in flight; retry later", cap(s.inflight)), retryAfter: 1, cause: errQueueFull}
	}
	project := ProjectFrom(ctx)
	idem := store && key != ""
	var doc jsondoc.Value
	var perr error
	if idem {
		// The request's hash is the canonical form of all of it.
		doc, perr = parseOwnedRequest(body) // the one read of the body
	} else {
		doc, perr = s.contracts.parseBody(body) // the one read of the body, less a cached contract
	}
	var hash string
	if idem {
		if perr == nil {
			hash = requestHashDoc(r, doc)
		} else {
			hash = requestHash(r, body, mediaJSON)
		}
		if done, err := s.replaySingle(w, r, project, key, hash); done || err != nil {
			return err
		}
	}
	if perr != nil {
		return perr
	}
	in, err := decodeParsed(body, doc)
	if err != nil {
		return err
	}
	if err := s.resolveContract(ctx, in); err != nil {
		return err
	}
	var id uuid.UUID
	if store {
		if id, err = newResultID(); err != nil {
			return err
		}
	}
	var res *record.Result
	err = s.poolFor(len(body)).Do(ctx, func(ctx context.Context) error {
		var err error
		res, err = s.evaluate(ctx, in, project, id)
		return err
	})
	if err != nil {
		s.countError(err)
		return err
	}
	if !store {
		writeEvaluation(w, r, http.StatusOK, viewEvaluation(res))
		return nil
	}
	res.CreatedAt = s.now()
	batch := record.ResultBatch{Results: []record.Result{*res}}
	if key != "" {
		batch.Idempotency = &record.Idempotency{ProjectID: project, Key: key, RequestSHA256: hash, ResultIDs: []uuid.UUID{id}}
	}
	if err := s.store.InsertResults(ctx, batch); err != nil {
		if key != "" && errors.Is(err, engine.ErrConflict) {
			// Another request with this key committed first.
			if done, err := s.replaySingle(w, r, project, key, hash); done || err != nil {
				return err
			}
		}
		return err
	}
	w.Header().Set("Location", "/v1/evaluations/"+id.String())
	writeEvaluation(w, r, http.StatusCreated, viewEvaluation(res))
	return nil
}

// countError counts an evaluation that produced no result.
func (s *Server) countError(err error) {
	if errors.Is(err, errQueueFull) {
		s.metrics.poolRejected.Inc()
	}
	s.metrics.evalErrors.WithLabelValues(problemFor(err).kind.slug).Inc()
}

// replaySingle answers a request whose Idempotency-Key was already used:
// with the stored evaluation when the request is the same, else 409. done
// is false when the key is unused.
func (s *Server) replaySingle(w http.ResponseWriter, r *http.Request, project int64, key, hash string) (done bool, err error) {
	k, err := s.store.GetIdempotency(r.Context(), project, key)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if k.RequestSHA256 != hash || len(k.ResultIDs) != 1 {
		return true, newError(probIdempotency, "the Idempotency-Key was used with another request")
	}
	rs, err := s.store.GetResults(r.Context(), project, k.ResultIDs)
	if err != nil {
		return true, err
	}
	if len(rs) != 1 {
		return true, fmt.Errorf("idempotency record: stored result %s is missing", k.ResultIDs[0])
	}
	s.metrics.idempotentReplay.Inc()
	w.Header().Set("Idempotent-Replayed", "true")
	w.Header().Set("Location", "/v1/evaluations/"+rs[0].ID.String())
	writeEvaluation(w, r, http.StatusCreated, viewEvaluation(&rs[0]))
	return true, nil
}

func (s *Server) getEvaluation(w http.ResponseWriter, r *http.Request) error {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		return paramError("id", "must be a UUID, got %q", chi.URLParam(r, "id"))
	}
	res, err := s.store.GetResult(r.Context(), ProjectFrom(r.Context()), id)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "no evaluation %s", id)
	}
	if err != nil {
		return err
	}
	writeEvaluation(w, r, http.StatusOK, viewEvaluation(&res))
	return nil
}

// evaluationSummaryView is one entry of GET /v1/evaluations.
type evaluationSummaryView struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// RegradeOf and RegradeID are set only for a regrade result, as in
	// evaluationView.
	RegradeOf string            `json:"regrade_of,omitempty"`
	RegradeID string            `json:"regrade_id,omitempty"`
	Contract  contractRefView   `json:"contract"`
	TaskID    string            `json:"task_id,omitempty"`
	RunID     string            `json:"run_id,omitempty"`
	Agent     string            `json:"agent,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Format    string            `json:"format"`
	// FormatWarning is the stored result's format_warning, as in
	// evaluationView.
	FormatWarning string  `json:"format_warning,omitempty"`
	Score         float64 `json:"score"`
	Grade         string  `json:"grade"`
	Passed        bool    `json:"passed"`
	MinScore      float64 `json:"min_score"`
	SafetyGate    bool    `json:"safety_gate"`
}

// viewSummary is the list entry of a stored result.
func viewSummary(res *record.ResultSummary) evaluationSummaryView {
	v := evaluationSummaryView{ID: res.ID.String(), CreatedAt: res.CreatedAt,
		Contract: contractRef(res.Contract), TaskID: res.TaskID, RunID: res.RunID, Agent: res.Agent, Labels: res.Labels,
		Format: res.Format, FormatWarning: res.FormatWarning, Score: res.Score, Grade: res.Grade, Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate}
	v.RegradeOf, v.RegradeID = regradeLink(res)
	return v
}

// resultCursor is the JSON inside an evaluations cursor.
type resultCursor struct {
	T  time.Time `json:"t"`
	ID uuid.UUID `json:"id"`
}

// parseFilter reads the result filters shared by the list and the stats.
func parseFilter(r *http.Request) (record.ResultFilter, error) {
	q := r.URL.Query()
	var f record.ResultFilter
	if c := q.Get("contract"); c != "" {
		name, version, err := parseRef(c)
		if err != nil {
			return f, paramError("contract", "%v", err)
		}
		if strings.HasSuffix(c, "@latest") {
			// parseRef reads name@latest as version 0, which a filter
			// reads as every version.
			return f, paramError("contract", "%q: filter by name (every version) or name@N (one version); latest is not a filter", c)
		}
		f.ContractName, f.ContractVersion = name, version
	}
	f.TaskID, f.RunID, f.Agent = q.Get("task_id"), q.Get("run_id"), q.Get("agent")
	for _, l := range q["label"] {
		k, v, hasValue := strings.Cut(l, "=")
		if k == "" {
			return f, paramError("label", "must be key or key=value, got %q", l)
		}
		f.Labels = append(f.Labels, record.LabelFilter{Key: k, Value: v, HasValue: hasValue})
	}
	switch v := q.Get("passed"); v {
	case "":
	case "true", "false":
		b := v == "true"
		f.Passed = &b
	default:
		return f, paramError("passed", "must be true or false, got %q", v)
	}
	for _, g := range q["grade"] {
		for _, one := range strings.Split(g, ",") {
			if len(one) != 1 || !strings.Contains("ABCDF", one) {
				return f, paramError("grade", "must be one of A, B, C, D, F (repeat or comma-separate), got %q", one)
			}
			f.Grades = append(f.Grades, one)
		}
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(t.name); v != "" {
			tm, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, paramError(t.name, "must be an RFC 3339 time such as 2026-11-20T10:00:00Z, got %q", v)
			}
			*t.dst = tm
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return f, paramError("until", "must not be before since")
	}
	switch v := record.RegradesFilter(q.Get("regrades")); v {
	case "":
	case record.RegradesInclude, record.RegradesExclude, record.RegradesOnly:
		f.Regrades = v
	default:
		return f, paramError("regrades", "must be include, exclude or only, got %q", v)
	}
	return f, nil
}

func (s *Server) listEvaluations(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Has("latest") {
		return s.listLatestEvaluations(w, r) // regrade.go
	}
	f, err := s.filter(r)
	if err != nil {
		return err
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after *record.Cursor
	if r.URL.Query().Get("cursor") != "" {
		var c resultCursor
		if err := decodeCursor(r, &c); err != nil {
			return err
		}
		after = &record.Cursor{CreatedAt: c.T, ID: c.ID}
	}
	rs, err := s.store.ListResults(r.Context(), ProjectFrom(r.Context()), f, after, limit+1)
	if err != nil {
		return err
	}
	out := page[evaluationSummaryView]{Items: []evaluationSummaryView{}}
	for i, res := range rs {
		if i == limit {
			last := rs[i-1]
			out.NextCursor = encodeCursor(resultCursor{T: last.CreatedAt, ID: last.ID})
			break
		}
		out.Items = append(out.Items, viewSummary(&res))
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}
