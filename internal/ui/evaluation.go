package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/report"
)

// maxLinkedResults bounds the regrade results listed on an original's
// page.
const maxLinkedResults = 20

// evaluationView is what evaluation.tmpl shows: one stored result.
type evaluationView struct {
	R        record.Result
	Contract string
	// ContractLink is the registry contract's page ("" for inline).
	ContractLink string
	Labels       []labelPair
	FinalAnswer  *string
	Metrics      []report.MetricRow
	Alts         *report.AlternativesView
	// AltsPlain lists the combinations when the contract body is not at
	// hand to name the options (an inline contract).
	AltsPlain []engine.CombinationScore
	Chosen    []engine.ChosenOption
	Expected  []expectedCall
	Calls     []callView
	Issues    []engine.Issue
	Checks    engine.Checks
	Gate      string
	// RegradeResults are an original's regrade results, newest first.
	RegradeResults []summaryRow
	// Original is a regrade result's original (nil for an original or
	// when it is gone).
	Original *summaryRow
	Options  string
}

type labelPair struct{ Key, Value, Link string }

type expectedCall struct {
	Tool string
	Args string
}

// callView is one call of the trace timeline.
type callView struct {
	Index int
	Tool  string
	ID    string
	// Marks are scored or optional or not scored, then forbidden and
	// error when they apply.
	Marks  []string
	Args   string
	Result string
	Error  string
}

// storedCall is a trace call as stored, its arguments and result kept as
// the JSON text they were stored as.
type storedCall struct {
	Tool      string           `json:"tool"`
	Args      json.RawMessage  `json:"args"`
	ID        string           `json:"id"`
	Result    json.RawMessage  `json:"result"`
	Error     engine.CallError `json:"error"`
	ArgsRaw   string           `json:"args_raw"`
	ArgsError string           `json:"args_error"`
}

func (c *Console) evaluation(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, nil, nil); err != nil {
		return err
	}
	id, err := pathUUID("evaluation", chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	ctx, p := r.Context(), project(r)
	res, err := c.store.GetResult(ctx, p, id)
	if errors.Is(err, engine.ErrNotFound) {
		return notFound("There is no evaluation %s in this project.", id)
	}
	if err != nil {
		return err
	}
	v, err := newEvaluationView(&res)
	if err != nil {
		return fmt.Errorf("evaluation %s: %w", id, err)
	}
	if res.Contract.Name != "" {
		v.ContractLink = "/ui/contracts/" + url.PathEscape(res.Contract.Name) + "?version=" + strconv.Itoa(res.Contract.Version)
		cv, err := c.store.GetContractVersion(ctx, p, res.Contract.Name, res.Contract.Version)
		switch {
		case err == nil:
			if parsed, perr := engine.ParseContract(cv.Body); perr == nil {
				v.Alts = report.Alternatives(parsed, &engine.EvaluationResult{Metrics: decodedMetrics(&res)})
			}
		case !errors.Is(err, engine.ErrNotFound):
			return err
		}
	}
	if res.IsRegrade() {
		orig, err := c.store.GetResult(ctx, p, res.RegradeOf)
		switch {
		case err == nil:
			row := newSummaryRow(orig.ResultSummary)
			v.Original = &row
		case !errors.Is(err, engine.ErrNotFound):
			return err
		}
	} else {
		rs, err := c.store.ListRegradeResults(ctx, p, res.ID, maxLinkedResults)
		if err != nil {
			return err
		}
		for _, s := range rs {
			v.RegradeResults = append(v.RegradeResults, newSummaryRow(s))
		}
	}
	title := fmt.Sprintf("%s %s %s", verdict(res.Passed), res.Grade, res.ID)
	return c.render(w, r, "evaluation.tmpl", "evaluations", title, v)
}

// decodedMetrics is the result's metrics, zero when they do not decode.
func decodedMetrics(res *record.Result) engine.Metrics {
	var m engine.Metrics
	_ = json.Unmarshal(res.Metrics, &m)
	return m
}

// newEvaluationView reads the stored JSON of a result into its view.
//
// Errors: a stored column that does not decode (the row is damaged).
func newEvaluationView(res *record.Result) (*evaluationView, error) {
	v := &evaluationView{R: *res, Contract: cvName(res.Contract.Name, res.Contract.Version), FinalAnswer: res.FinalAnswer}
	if res.Contract.Name == "" {
		v.Contract = "inline " + string(res.Contract.Kind)
	}
	keys := make([]string, 0, len(res.Labels))
	for k := range res.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v.Labels = append(v.Labels, labelPair{Key: k, Value: res.Labels[k],
			Link: withQuery("/ui/evaluations", url.Values{"label": {k + "=" + res.Labels[k]}})})
	}
	er := engine.EvaluationResult{Score: res.Score, Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate}
	if err := json.Unmarshal(res.Metrics, &er.Metrics); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := json.Unmarshal(res.Checks, &v.Checks); err != nil {
		return nil, fmt.Errorf("checks: %w", err)
	}
	if err := json.Unmarshal(res.Issues, &v.Issues); err != nil {
		return nil, fmt.Errorf("issues: %w", err)
	}
	var scored []int
	if err := json.Unmarshal(res.ScoredIndexes, &scored); err != nil {
		return nil, fmt.Errorf("scored_indexes: %w", err)
	}
	var calls []storedCall
	if err := json.Unmarshal(res.TraceCalls, &calls); err != nil {
		return nil, fmt.Errorf("trace_calls: %w", err)
	}
	var expected []struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(res.ExpectedCalls, &expected); err != nil {
		return nil, fmt.Errorf("expected_calls: %w", err)
	}
	for _, e := range expected {
		v.Expected = append(v.Expected, expectedCall{Tool: e.Tool, Args: indent(e.Args)})
	}
	er.Checks = v.Checks
	v.Metrics = report.MetricRows(&er)
	v.Options = indent(res.Options)
	var optional []int
	if cm := er.Metrics.Contract; cm != nil {
		optional = cm.OptionalMatched
		v.Chosen = cm.Alternatives.Chosen
		if len(cm.Alternatives.Combinations) > 1 {
			v.AltsPlain = cm.Alternatives.Combinations
		}
	}
	var forbidden []int
	for _, ch := range v.Checks.Items {
		if ch.Name == "forbidden-calls" && ch.Status == engine.CheckFail {
			forbidden = ch.Calls
		}
	}
	var gate []string
	for _, ch := range v.Checks.Items {
		if (ch.Name == "forbidden-calls" || ch.Name == "credentials") && ch.Status == engine.CheckFail {
			gate = append(gate, ch.Name)
		}
	}
	if res.SafetyGate && !res.Passed && engine.PassesMinScore(res.Score, res.MinScore) && len(gate) > 0 {
		v.Gate = gate[0]
		if len(gate) > 1 {
			v.Gate += " and " + gate[1]
		}
	}
	for i, call := range calls {
		cv := callView{Index: i, Tool: call.Tool, ID: call.ID, Args: indent(call.Args), Error: string(call.Error)}
		if call.ArgsError != "" {
			cv.Args = call.ArgsRaw + "\n(unreadable arguments: " + call.ArgsError + ")"
		}
		cv.Result = resultText(call.Result)
		switch {
		case slices.Contains(scored, i):
			cv.Marks = append(cv.Marks, "scored")
		case slices.Contains(optional, i):
			cv.Marks = append(cv.Marks, "optional")
		default:
			cv.Marks = append(cv.Marks, "not-scored")
		}
		if slices.Contains(forbidden, i) {
			cv.Marks = append(cv.Marks, "forbidden")
		}
		if call.Error != "" {
			cv.Marks = append(cv.Marks, "error")
		}
		v.Calls = append(v.Calls, cv)
	}
	return v, nil
}

// indent is JSON text indented, with <, > and & as themselves rather
// than the \u003c escapes the engine writes (the template escapes them
// for HTML), or the text as stored when it is not JSON; "" for none.
func indent(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep their text
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// resultText is a tool result for display: a JSON string's text (often
// JSON itself, then indented), other JSON indented.
func resultText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t := indent(json.RawMessage(s)); t != s && json.Valid([]byte(s)) {
			return t
		}
		return s
	}
	return indent(raw)
}
