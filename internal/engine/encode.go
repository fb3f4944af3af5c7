package engine

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// This file encodes the parts of an EvaluationResult that the service and
// regrades store on their own (metrics, checks, issues, scored indexes)
// without encoding/json's reflection. The output is byte-identical to
// json.Marshal of the same value; encode_test.go compares the two over
// random values and real results.
//
// The only values json.Marshal refuses here are non-finite floats (the
// engine never produces one) and, inside metrics.contract_metrics, a
// chosen option's group or call argument that encoding/json cannot encode
// (parsed contracts never hold one). Metrics.AppendJSON then hands the
// whole value to json.Marshal, so its error is exactly json.Marshal's.
//
// The appenders take and return the buffer (rather than keeping it in a
// struct behind a pointer) so that it stays in registers: storing a slice
// through a pointer costs a GC write barrier per append.

// AppendJSON appends m's JSON to dst and returns the extended buffer:
// exactly the bytes json.Marshal(m) returns, contract_metrics included
// when m.Contract is non-nil. The error is json.Marshal's error, for a
// value it cannot encode (a NaN or infinite float, or a chosen option's
// group or call arguments that encoding/json rejects); dst is then
// returned unchanged in length.
func (m *Metrics) AppendJSON(dst []byte) ([]byte, error) {
	if m.finite() {
		if b, ok := appendMetrics(growJSON(dst, m.sizeHint()), m); ok {
			return b, nil
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil // only if the two disagree on what is encodable
}

// AppendJSON appends c's JSON to dst and returns the extended buffer:
// exactly the bytes json.Marshal(c) returns (a nil Items or Calls is null,
// an empty Findings and empty finding fields are left out). It cannot
// fail: every field is a string or an integer.
func (c *Checks) AppendJSON(dst []byte) []byte {
	return appendChecks(growJSON(dst, c.sizeHint()), c)
}

// AppendIssuesJSON appends the JSON of issues to dst and returns the
// extended buffer: exactly the bytes json.Marshal returns for issues,
// except that a nil list is [] (as for an empty one), which is how results
// store it. It cannot fail: every field is a string or an integer.
func AppendIssuesJSON(dst []byte, issues []Issue) []byte {
	n := 2
	for i := range issues {
		is := &issues[i]
		n += 80 + len(is.Kind) + len(is.Severity) + len(is.Tool) + len(is.Problem) + len(is.Fix) + 4*len(is.Calls)
	}
	b := append(growJSON(dst, n), '[')
	for i := range issues {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendIssue(b, &issues[i])
	}
	return append(b, ']')
}

// AppendIntsJSON appends the JSON array of ints (such as
// EvaluationResult.ScoredIndexes) to dst and returns the extended buffer:
// exactly the bytes json.Marshal returns for ints, except that a nil
// slice is [] (as for an empty one), which is how results store it.
func AppendIntsJSON(dst []byte, ints []int) []byte {
	b := append(growJSON(dst, 2+4*len(ints)), '[')
	for i, n := range ints {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

// growJSON returns dst with room for n more bytes (the encoders' estimate
// of their output, so that it is allocated once in the common case).
func growJSON(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	b := make([]byte, len(dst), len(dst)+n)
	copy(b, dst)
	return b
}

// sizeHint estimates the length of m's JSON: the fixed keys, the numbers
// at their usual lengths, the names, and a guess for argument values.
func (m *Metrics) sizeHint() int {
	n := 900
	tc := &m.ToolCorrectness
	for _, l := range [...][]string{tc.ExpectedTools, tc.CalledTools, tc.MissingTools, tc.ExtraTools} {
		for _, s := range l {
			n += len(s) + 3
		}
	}
	if cm := m.Contract; cm != nil {
		n += 250 + 4*len(cm.OptionalMatched)
		for i := range cm.Alternatives.Combinations {
			n += 40 + 3*len(cm.Alternatives.Combinations[i].Options)
		}
		for i := range cm.Alternatives.Chosen {
			n += 50
			for _, c := range cm.Alternatives.Chosen[i].Calls {
				n += 24 + len(c.Tool) + 48*len(c.Args)
			}
		}
	}
	return n
}

// sizeHint estimates the length of c's JSON.
func (c *Checks) sizeHint() int {
	n := 60
	for i := range c.Items {
		ch := &c.Items[i]
		n += 60 + len(ch.Name) + len(ch.Status) + len(ch.Detail) + 4*len(ch.Calls)
		for j := range ch.Findings {
			f := &ch.Findings[j]
			n += 50 + len(f.Path) + len(f.Rule) + len(f.Value)
		}
	}
	return n
}

// finite reports whether every float of m is finite (json.Marshal fails
// on the others). Argument values are checked as they are written.
func (m *Metrics) finite() bool {
	w := &m.Weights
	sum := m.SelectionAccuracy + m.InvocationAccuracy + m.RequiredCallRecall +
		m.Arguments.Precision + m.Arguments.Recall + m.Arguments.F1 +
		m.Sequence.EditDistance + m.Sequence.NormalizedDistance + m.Sequence.SequenceAccuracy +
		m.Efficiency.RedundantRate + m.ToolCorrectness.ToolCorrectness +
		w.SelectionAccuracy + w.ArgumentF1 + w.SequenceAccuracy + w.RedundantRate + w.RequiredCallRecall
	// A sum of finite floats can overflow to ±Inf, so a non-finite sum is
	// checked term by term.
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		for _, f := range [...]float64{m.SelectionAccuracy, m.InvocationAccuracy, m.RequiredCallRecall,
			m.Arguments.Precision, m.Arguments.Recall, m.Arguments.F1,
			m.Sequence.EditDistance, m.Sequence.NormalizedDistance, m.Sequence.SequenceAccuracy,
			m.Efficiency.RedundantRate, m.ToolCorrectness.ToolCorrectness,
			w.SelectionAccuracy, w.ArgumentF1, w.SequenceAccuracy, w.RedundantRate, w.RequiredCallRecall} {
			if !isFinite(f) {
				return false
			}
		}
	}
	if cm := m.Contract; cm != nil {
		if !isFinite(cm.MinScore) {
			return false
		}
		for i := range cm.Alternatives.Combinations {
			if !isFinite(cm.Alternatives.Combinations[i].Score) {
				return false
			}
		}
	}
	return true
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendInts appends a []int, null when nil.
func appendInts(b []byte, v []int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return AppendIntsJSON(b, v)
}

// appendStrings appends a []string, null when nil.
func appendStrings(b []byte, v []string) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsondoc.AppendString(b, s)
	}
	return append(b, ']')
}

// appendMetrics appends m, whose floats are finite; false when a chosen
// option's group or arguments cannot be encoded.
func appendMetrics(b []byte, m *Metrics) ([]byte, bool) {
	b = append(b, `{"selection_accuracy":`...)
	b = jsondoc.AppendFloat(b, m.SelectionAccuracy)
	b = append(b, `,"invocation_accuracy":`...)
	b = jsondoc.AppendFloat(b, m.InvocationAccuracy)
	b = append(b, `,"required_call_recall":`...)
	b = jsondoc.AppendFloat(b, m.RequiredCallRecall)

	b = append(b, `,"argument_metrics":{"precision":`...)
	b = jsondoc.AppendFloat(b, m.Arguments.Precision)
	b = append(b, `,"recall":`...)
	b = jsondoc.AppendFloat(b, m.Arguments.Recall)
	b = append(b, `,"f1":`...)
	b = jsondoc.AppendFloat(b, m.Arguments.F1)

	b = append(b, `},"sequence_metrics":{"edit_distance":`...)
	b = jsondoc.AppendFloat(b, m.Sequence.EditDistance)
	b = append(b, `,"normalized_distance":`...)
	b = jsondoc.AppendFloat(b, m.Sequence.NormalizedDistance)
	b = append(b, `,"sequence_accuracy":`...)
	b = jsondoc.AppendFloat(b, m.Sequence.SequenceAccuracy)

	b = append(b, `},"efficiency_metrics":{"redundant_count":`...)
	b = strconv.AppendInt(b, int64(m.Efficiency.RedundantCount), 10)
	b = append(b, `,"total_calls":`...)
	b = strconv.AppendInt(b, int64(m.Efficiency.TotalCalls), 10)
	b = append(b, `,"redundant_rate":`...)
	b = jsondoc.AppendFloat(b, m.Efficiency.RedundantRate)

	tc := &m.ToolCorrectness
	b = append(b, `},"tool_correctness_metrics":{"tool_correctness":`...)
	b = jsondoc.AppendFloat(b, tc.ToolCorrectness)
	b = append(b, `,"expected_tools":`...)
	b = appendStrings(b, tc.ExpectedTools)
	b = append(b, `,"called_tools":`...)
	b = appendStrings(b, tc.CalledTools)
	b = append(b, `,"missing_tools":`...)
	b = appendStrings(b, tc.MissingTools)
	b = append(b, `,"extra_tools":`...)
	b = appendStrings(b, tc.ExtraTools)
	b = append(b, `,"correct_count":`...)
	b = strconv.AppendInt(b, int64(tc.CorrectCount), 10)
	b = append(b, `,"total_expected":`...)
	b = strconv.AppendInt(b, int64(tc.TotalExpected), 10)

	w := &m.Weights
	b = append(b, `},"weights":{"selection_accuracy":`...)
	b = jsondoc.AppendFloat(b, w.SelectionAccuracy)
	b = append(b, `,"argument_f1":`...)
	b = jsondoc.AppendFloat(b, w.ArgumentF1)
	b = append(b, `,"sequence_accuracy":`...)
	b = jsondoc.AppendFloat(b, w.SequenceAccuracy)
	b = append(b, `,"redundant_rate":`...)
	b = jsondoc.AppendFloat(b, w.RedundantRate)
	b = append(b, `,"required_call_recall":`...)
	b = jsondoc.AppendFloat(b, w.RequiredCallRecall)
	b = append(b, '}')

	if cm := m.Contract; cm != nil {
		b = append(b, `,"contract_metrics":`...)
		var ok bool
		if b, ok = appendContractMetrics(b, cm); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendContractMetrics(b []byte, cm *ContractMetrics) ([]byte, bool) {
	b = append(b, `{"contract_version":`...)
	b = strconv.AppendInt(b, int64(cm.ContractVersion), 10)
	b = append(b, `,"required_count":`...)
	b = strconv.AppendInt(b, int64(cm.RequiredCount), 10)
	b = append(b, `,"optional_count":`...)
	b = strconv.AppendInt(b, int64(cm.OptionalCount), 10)
	b = append(b, `,"forbidden_count":`...)
	b = strconv.AppendInt(b, int64(cm.ForbiddenCount), 10)

	b = append(b, `,"alternatives":{"chosen":`...)
	if cm.Alternatives.Chosen == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range cm.Alternatives.Chosen {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendChosen(b, &cm.Alternatives.Chosen[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"combinations":`...)
	if cm.Alternatives.Combinations == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range cm.Alternatives.Combinations {
			cs := &cm.Alternatives.Combinations[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"options":`...)
			b = appendInts(b, cs.Options)
			b = append(b, `,"score":`...)
			b = jsondoc.AppendFloat(b, cs.Score)
			b = append(b, '}')
		}
		b = append(b, ']')
	}

	b = append(b, `},"optional_matched":`...)
	b = appendInts(b, cm.OptionalMatched)
	b = append(b, `,"min_score":`...)
	b = jsondoc.AppendFloat(b, cm.MinScore)
	b = append(b, `,"passed":`...)
	b = strconv.AppendBool(b, cm.Passed)
	return append(b, '}'), true
}

func appendChosen(b []byte, ch *ChosenOption) ([]byte, bool) {
	var ok bool
	b = append(b, `{"group":`...)
	if b, ok = appendValue(b, ch.Group, 0); !ok {
		return b, false
	}
	b = append(b, `,"option":`...)
	b = strconv.AppendInt(b, int64(ch.Option), 10)
	b = append(b, `,"calls":`...)
	if ch.Calls == nil {
		return append(b, "null}"...), true
	}
	b = append(b, '[')
	for i := range ch.Calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tool":`...)
		b = jsondoc.AppendString(b, ch.Calls[i].Tool)
		b = append(b, `,"args":`...)
		if b, ok = appendObject(b, ch.Calls[i].Args, 1); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), true
}

// AppendJSONValue appends v exactly as json.Marshal writes it, for the
// values DecodeJSON and the trace adapters produce (nil, bool, string,
// json.Number, float64, []any, and map[string]any, whose keys are sorted)
// and the matchers of a contract's arguments; anything else, and values
// nested deeper than 200 levels, go through json.Marshal. It reports
// false, returning dst as it was, when json.Marshal would refuse v (a NaN
// or infinite float, an invalid json.Number); json.Marshal then gives the
// error.
func AppendJSONValue(dst []byte, v any) ([]byte, bool) {
	if out, ok := appendValue(dst, v, 0); ok {
		return out, true
	}
	return dst, false
}

// maxValueDepth is the nesting depth of argument values beyond which they
// are handed to encoding/json, which detects cycles.
const maxValueDepth = 200

// appendValue appends v, a decoded JSON value or a built-in matcher, as
// json.Marshal writes it; any other type (and anything nested deeper than
// maxValueDepth) is written by json.Marshal itself, whose output for a
// value nested in a larger one is the same. It reports false, for a value
// json.Marshal refuses.
func appendValue(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxValueDepth {
		return appendMarshal(b, v)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return jsondoc.AppendString(b, x), true
	case json.Number:
		switch {
		case x == "":
			return append(b, '0'), true // as encoding/json writes the zero Number
		case isJSONNumber(string(x)):
			return append(b, x...), true
		}
		return b, false // json.Marshal: invalid number literal
	case bool:
		return strconv.AppendBool(b, x), true
	case map[string]any:
		return appendObject(b, x, depth+1)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValue(b, el, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case float64:
		if !isFinite(x) {
			return b, false
		}
		return jsondoc.AppendFloat(b, x), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case Any, *Regex, *Contains, *OneOf, *Type:
		// The scalar forms appendMatcherJSON writes are already compact
		// and HTML-escaped, so they are what json.Marshal makes of the
		// MarshalJSON output; nil pointers and the rest go to json.Marshal.
		if !isNilMatcher(x) {
			if out, ok := appendMatcherJSON(b, x.(json.Marshaler)); ok {
				return out, true
			}
		}
	}
	return appendMarshal(b, v)
}

// isNilMatcher reports whether v is a nil matcher pointer (or a Regex
// without a compiled pattern), which appendMatcherJSON cannot write.
func isNilMatcher(v any) bool {
	switch x := v.(type) {
	case *Regex:
		return x == nil || x.re == nil
	case *Contains:
		return x == nil
	case *OneOf:
		return x == nil
	case *Type:
		return x == nil
	}
	return false
}

// appendObject appends m with its keys sorted, null when nil.
func appendObject(b []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if depth > maxValueDepth {
		return appendMarshal(b, m)
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsondoc.AppendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendValue(b, m[k], depth); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendMarshal appends json.Marshal(v), or reports false when it fails.
func appendMarshal(b []byte, v any) ([]byte, bool) {
	out, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, out...), true
}

func appendChecks(b []byte, c *Checks) []byte {
	b = append(b, `{"pass":`...)
	b = strconv.AppendInt(b, int64(c.Pass), 10)
	b = append(b, `,"fail":`...)
	b = strconv.AppendInt(b, int64(c.Fail), 10)
	b = append(b, `,"unknown":`...)
	b = strconv.AppendInt(b, int64(c.Unknown), 10)
	b = append(b, `,"items":`...)
	if c.Items == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i := range c.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCheck(b, &c.Items[i])
	}
	return append(b, "]}"...)
}

func appendCheck(b []byte, ch *Check) []byte {
	b = append(b, `{"name":`...)
	b = jsondoc.AppendString(b, ch.Name)
	b = append(b, `,"status":`...)
	b = jsondoc.AppendString(b, string(ch.Status))
	b = append(b, `,"detail":`...)
	b = jsondoc.AppendString(b, ch.Detail)
	b = append(b, `,"calls":`...)
	b = appendInts(b, ch.Calls)
	if len(ch.Findings) > 0 {
		b = append(b, `,"findings":[`...)
		for i := range ch.Findings {
			f := &ch.Findings[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"call":`...)
			b = strconv.AppendInt(b, int64(f.Call), 10)
			if f.Path != "" {
				b = append(b, `,"path":`...)
				b = jsondoc.AppendString(b, f.Path)
			}
			if f.Rule != "" {
				b = append(b, `,"rule":`...)
				b = jsondoc.AppendString(b, f.Rule)
			}
			if f.Value != "" {
				b = append(b, `,"value":`...)
				b = jsondoc.AppendString(b, f.Value)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendIssue(b []byte, is *Issue) []byte {
	b = append(b, `{"kind":`...)
	b = jsondoc.AppendString(b, is.Kind)
	b = append(b, `,"severity":`...)
	b = jsondoc.AppendString(b, string(is.Severity))
	b = append(b, `,"tool":`...)
	b = jsondoc.AppendString(b, is.Tool)
	b = append(b, `,"problem":`...)
	b = jsondoc.AppendString(b, is.Problem)
	b = append(b, `,"fix":`...)
	b = jsondoc.AppendString(b, is.Fix)
	b = append(b, `,"calls":`...)
	b = appendInts(b, is.Calls)
	return append(b, '}')
}
