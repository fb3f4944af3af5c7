// Package resultjson writes grading results as JSON: a whole
// engine.EvaluationResult (as `toolscore eval --json` saves it) and the
// parts the service and regrades store on their own (metrics, checks,
// issues, scored indexes, trace and scored calls, expected calls).
//
// The bytes are exactly those encoding/json writes for the same values,
// in either of its two escapings (see [Mode]), built on the JSON layer's
// writers (internal/jsondoc) without reflection; a differential test and a
// fuzz target compare the two on real and random results. It is one of
// the speed paths the project keeps in one place: encoding a result with
// encoding/json costs several times grading it (BenchmarkAppendResult).
//
// Values the writers here do not know (argument values of other Go types,
// matchers other than the engine's, anything nested deeper than 200
// levels) are handed to encoding/json, whose bytes for a value nested in
// a larger one are the same. A value encoding/json refuses (a NaN or
// infinite float, an invalid json.Number, an unsupported type) gives
// encoding/json's error for the whole value being written, and the buffer
// is returned as it was.
//
// The appenders take and return the buffer (rather than keeping it in a
// struct behind a pointer) so that it stays in registers: storing a slice
// through a pointer costs a GC write barrier per append.
package resultjson

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Mode is one of encoding/json's two ways of escaping strings.
//
// It applies to the strings the result's types hold (names, texts, map
// keys and string values of expected arguments). The JSON that values
// write themselves (jsondoc.Values, the engine's matchers) is HTML-escaped
// in both modes, as encoding/json copies a json.Marshaler's output as it
// is (compacted) when HTML escaping is off.
type Mode uint8

const (
	// Marshal writes what json.Marshal writes: <, > and & in strings as
	// \u003c, \u003e and \u0026. The service and regrades store and
	// answer this.
	Marshal Mode = iota
	// NoHTML writes what an encoding/json Encoder with SetEscapeHTML(false)
	// writes, without the newline Encode adds: <, > and & as themselves.
	// The CLI's saved results are this.
	NoHTML
)

// AppendResult appends res's JSON to dst and returns the extended buffer:
// exactly the bytes encoding/json writes for res in mode e (nil lists as
// null, contract omitted when nil). The error is encoding/json's, for a
// value it refuses; dst is then returned unchanged in length.
func (e Mode) AppendResult(dst []byte, res *engine.EvaluationResult) ([]byte, error) {
	return e.AppendResultWith(dst, res, nil)
}

// AppendResultWith is AppendResult with res's expected calls taken from
// (and kept in) expected, for results graded against one contract; nil is
// no cache.
func (e Mode) AppendResultWith(dst []byte, res *engine.EvaluationResult, expected *ExpectedCache) ([]byte, error) {
	b := dst
	if cap(dst)-len(dst) < roomyResult {
		b = grow(dst, resultHint(res))
	}
	if b, ok := (enc{Mode: e}).appendResult(b, res, expected); ok {
		return b, nil
	}
	return e.marshal(dst, res)
}

// A Writer writes results one after another, keeping what they share:
// the JSON of their texts and figures (in a cache of its own, see
// jsondoc.WriteCache) and, in Expected, that of their expected calls (an
// ExpectedCache holds the results of one contract; the writers of a batch
// share one). Its bytes are those of Mode's AppendResultWith with
// Expected. A Writer is not safe for concurrent use; the zero value
// writes in mode Marshal without an ExpectedCache.
type Writer struct {
	// Mode is the escaping of the results' strings.
	Mode Mode
	// Expected, when not nil, keeps the results' expected calls.
	Expected *ExpectedCache

	texts jsondoc.WriteCache
}

// AppendResult appends res's JSON to dst as w.Mode's AppendResultWith
// does with w.Expected, and returns the extended buffer; the error is
// encoding/json's, for a value it refuses, and dst is then returned
// unchanged in length.
func (w *Writer) AppendResult(dst []byte, res *engine.EvaluationResult) ([]byte, error) {
	b := dst
	if cap(dst)-len(dst) < roomyResult {
		b = grow(dst, resultHint(res))
	}
	if b, ok := (enc{w.Mode, &w.texts}).appendResult(b, res, w.Expected); ok {
		return b, nil
	}
	return w.Mode.marshal(dst, res)
}

// AppendMetrics appends m's JSON to dst and returns the extended buffer:
// exactly the bytes encoding/json writes for m in mode e, contract_metrics
// included when m.Contract is non-nil. The error is encoding/json's, for a
// value it refuses (a NaN or infinite float, a chosen option's group or
// call arguments it cannot encode); dst is then returned unchanged in
// length.
func (e Mode) AppendMetrics(dst []byte, m *engine.Metrics) ([]byte, error) {
	if b, ok := (enc{Mode: e}).appendMetrics(grow(dst, metricsHint(m)), m); ok {
		return b, nil
	}
	return e.marshal(dst, m)
}

// AppendChecks appends c's JSON to dst and returns the extended buffer:
// exactly the bytes encoding/json writes for c in mode e (a nil Items or
// Calls is null, an empty Findings and empty finding fields are left
// out). It cannot fail: every field is a string or an integer.
func (e Mode) AppendChecks(dst []byte, c *engine.Checks) []byte {
	return enc{Mode: e}.appendChecks(grow(dst, checksHint(c)), c)
}

// AppendIssues appends the JSON of issues to dst and returns the extended
// buffer: exactly the bytes encoding/json writes for issues in mode e,
// except that a nil list is [] (as for an empty one), which is how results
// store it. It cannot fail: every field is a string or an integer.
func (e Mode) AppendIssues(dst []byte, issues []engine.Issue) []byte {
	return enc{Mode: e}.appendIssues(grow(dst, issuesHint(issues)), issues, false)
}

// AppendInts appends the JSON array of ints (such as
// EvaluationResult.ScoredIndexes) to dst and returns the extended buffer:
// exactly the bytes encoding/json writes for ints, except that a nil
// slice is [] (as for an empty one), which is how results store it.
func AppendInts(dst []byte, ints []int) []byte {
	return appendInts(grow(dst, 2+4*len(ints)), ints, false)
}

// AppendToolCall appends c's JSON to dst and returns the extended buffer:
// exactly the bytes encoding/json writes for c in mode e. It cannot fail:
// arguments and results are jsondoc.Values.
func (e Mode) AppendToolCall(dst []byte, c *engine.ToolCall) []byte {
	return enc{Mode: e}.appendToolCall(grow(dst, callHint(c)), c)
}

// AppendToolCalls appends the JSON array of calls to dst and returns the
// extended buffer: exactly the bytes encoding/json writes for calls in
// mode e, except that a nil list is [] (as results store it).
func (e Mode) AppendToolCalls(dst []byte, calls []engine.ToolCall) []byte {
	n := 2
	for i := range calls {
		n += callHint(&calls[i])
	}
	return enc{Mode: e}.appendToolCalls(grow(dst, n), calls, false)
}

// AppendCalls appends res's trace calls and then its scored calls, each
// as AppendToolCalls writes it, and returns the extended buffer and the
// length of dst after the trace calls: b[len(dst):split] are the trace
// calls, b[split:] the scored calls. A scored call that is its trace call
// (ScoredIndexes says which; same strings and the same argument and
// result values) is copied from the trace calls' bytes rather than
// encoded again.
func (e Mode) AppendCalls(dst []byte, res *engine.EvaluationResult) (b []byte, split int) {
	return enc{Mode: e}.appendCalls(grow(dst, callsHint(res)), res, "", false)
}

// AppendExpectedCalls appends the JSON array of calls to dst and returns
// the extended buffer: exactly the bytes encoding/json writes for calls in
// mode e, except that a nil list is [] (as results store it). The error is
// encoding/json's, for arguments it refuses; dst is then returned
// unchanged in length.
func (e Mode) AppendExpectedCalls(dst []byte, calls []engine.ExpectedCall) ([]byte, error) {
	if b, ok := (enc{Mode: e}).appendExpectedCalls(grow(dst, 2+64*len(calls)), calls, false); ok {
		return b, nil
	}
	if calls == nil {
		calls = []engine.ExpectedCall{}
	}
	return e.marshal(dst, calls)
}

// marshal appends what encoding/json writes for v in mode e, or returns
// its error with dst as it was.
func (e Mode) marshal(dst []byte, v any) ([]byte, error) {
	if e == Marshal {
		out, err := json.Marshal(v)
		if err != nil {
			return dst, err
		}
		return append(dst, out...), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// enc writes in one mode, its strings and floats through a cache when
// texts is not nil.
type enc struct {
	Mode
	texts *jsondoc.WriteCache
}

// str appends s as a JSON string in mode e.
func (e enc) str(b []byte, s string) []byte {
	if e.Mode == NoHTML {
		return e.texts.AppendStringNoHTML(b, s)
	}
	return e.texts.AppendString(b, s)
}

// roomyResult is the room in a buffer beyond which AppendResultWith does
// not estimate the result's length first (a batch writes each result into
// a buffer with 32 KB of room; a larger result grows it as append does).
const roomyResult = 16 << 10

// grow returns dst with room for n more bytes (the writers' estimate of
// their output, so that it is allocated once in the common case).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	b := make([]byte, len(dst), len(dst)+n)
	copy(b, dst)
	return b
}

func resultHint(res *engine.EvaluationResult) int {
	n := 300 + metricsHint(&res.Metrics) + checksHint(&res.Checks) + issuesHint(res.Issues) + callsHint(res) + 64*len(res.ExpectedCalls)
	if res.FinalAnswer != nil {
		n += len(*res.FinalAnswer) + 8
	}
	return n
}

// metricsHint estimates the length of m's JSON: the fixed keys, the
// numbers at their usual lengths, the names, and a guess for argument
// values.
func metricsHint(m *engine.Metrics) int {
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
				n += 24 + len(c.Tool) + 48*c.Args.Len()
			}
		}
	}
	return n
}

func checksHint(c *engine.Checks) int {
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

func issuesHint(issues []engine.Issue) int {
	n := 2
	for i := range issues {
		is := &issues[i]
		n += 80 + len(is.Kind) + len(is.Severity) + len(is.Tool) + len(is.Problem) + len(is.Fix) + 4*len(is.Calls)
	}
	return n
}

func callHint(c *engine.ToolCall) int {
	return 48 + len(c.Tool) + len(c.ID) + len(c.Args.Raw()) + len(c.Result.Raw()) + len(c.Error) + len(c.ArgsRaw) + len(c.ArgsError)
}

// callsHint estimates the trace and scored calls.
func callsHint(res *engine.EvaluationResult) int {
	n := 4
	for i := range res.TraceCalls {
		n += callHint(&res.TraceCalls[i])
	}
	return n + n*len(res.ScoredCalls)/max(1, len(res.TraceCalls))
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func (e enc) appendResult(b []byte, res *engine.EvaluationResult, expected *ExpectedCache) ([]byte, bool) {
	if !isFinite(res.Score) || !isFinite(res.MinScore) {
		return b, false
	}
	var ok bool
	b = append(b, `{"score":`...)
	b = e.texts.AppendFloat(b, res.Score)
	b = append(b, `,"grade":`...)
	b = e.str(b, string(res.Grade))
	b = append(b, `,"passed":`...)
	b = strconv.AppendBool(b, res.Passed)
	b = append(b, `,"min_score":`...)
	b = e.texts.AppendFloat(b, res.MinScore)
	b = append(b, `,"safety_gate":`...)
	b = strconv.AppendBool(b, res.SafetyGate)
	b = append(b, `,"metrics":`...)
	if b, ok = e.appendMetrics(b, &res.Metrics); !ok {
		return b, false
	}
	b = append(b, `,"expected_calls":`...)
	if expected != nil && res.ExpectedCalls != nil { // (the cache writes nil as [])
		exp, err := expected.ExpectedCalls(e.Mode, res)
		if err != nil {
			return b, false
		}
		b = append(b, exp...)
	} else if b, ok = e.appendExpectedCalls(b, res.ExpectedCalls, true); !ok {
		return b, false
	}
	b = append(b, `,"trace_calls":`...)
	b, _ = e.appendCalls(b, res, `,"scored_calls":`, true)
	b = append(b, `,"scored_indexes":`...)
	b = appendInts(b, res.ScoredIndexes, true)
	b = append(b, `,"final_answer":`...)
	if res.FinalAnswer == nil {
		b = append(b, "null"...)
	} else {
		b = e.str(b, *res.FinalAnswer)
	}
	b = append(b, `,"checks":`...)
	b = e.appendChecks(b, &res.Checks)
	b = append(b, `,"issues":`...)
	b = e.appendIssues(b, res.Issues, true)
	if ref := res.Contract; ref != nil {
		b = append(b, `,"contract":{"name":`...)
		b = e.str(b, ref.Name)
		b = append(b, `,"version":`...)
		b = appendInt(b, ref.Version)
		b = append(b, `,"sha256":`...)
		b = e.str(b, ref.SHA256)
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendInt appends n as strconv.AppendInt writes it, the common small
// ones (indexes, counts) without the call.
func appendInt(b []byte, n int) []byte {
	switch {
	case uint(n) < 10:
		return append(b, byte('0'+n))
	case uint(n) < 100:
		return append(b, byte('0'+n/10), byte('0'+n%10))
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// appendInts appends a []int; a nil one is null when nullNil, else [].
func appendInts(b []byte, v []int, nullNil bool) []byte {
	if v == nil && nullNil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, n)
	}
	return append(b, ']')
}

// strings appends a []string, null when nil.
func (e enc) strings(b []byte, v []string) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.str(b, s)
	}
	return append(b, ']')
}

// appendToolCall appends c as encoding/json writes an engine.ToolCall
// (TestToolCallFields keeps the two in step, field by field).
func (e enc) appendToolCall(b []byte, c *engine.ToolCall) []byte {
	b = append(b, `{"tool":`...)
	b = e.str(b, c.Tool)
	b = append(b, `,"args":`...)
	b = c.Args.AppendJSON(b)
	if c.ID != "" {
		b = append(b, `,"id":`...)
		b = e.str(b, c.ID)
	}
	if !c.Result.IsZero() {
		b = append(b, `,"result":`...)
		b = c.Result.AppendJSON(b)
	}
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = e.str(b, string(c.Error))
	}
	if c.ArgsRaw != "" {
		b = append(b, `,"args_raw":`...)
		b = e.str(b, c.ArgsRaw)
	}
	if c.ArgsError != "" {
		b = append(b, `,"args_error":`...)
		b = e.str(b, c.ArgsError)
	}
	return append(b, '}')
}

// appendToolCalls appends calls; a nil list is null when nullNil, else
// [].
func (e enc) appendToolCalls(b []byte, calls []engine.ToolCall, nullNil bool) []byte {
	if calls == nil && nullNil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendToolCall(b, &calls[i])
	}
	return append(b, ']')
}

// appendCalls appends res's trace calls, sep, and its scored calls (nil
// lists as null when nullNil), and returns the buffer and its length
// before sep. A scored call equal to the trace call ScoredIndexes names
// is copied from that call's bytes.
func (e enc) appendCalls(b []byte, res *engine.EvaluationResult, sep string, nullNil bool) ([]byte, int) {
	share := len(res.ScoredIndexes) == len(res.ScoredCalls) && len(res.ScoredCalls) > 0
	if !share {
		b = e.appendToolCalls(b, res.TraceCalls, nullNil)
		split := len(b)
		b = append(b, sep...)
		return e.appendToolCalls(b, res.ScoredCalls, nullNil), split
	}
	// bounds[2i] and bounds[2i+1] delimit trace call i's bytes in b.
	var buf [64]int
	bounds := buf[:0]
	if n := 2 * len(res.TraceCalls); n > len(buf) {
		bounds = make([]int, 0, n)
	}
	if res.TraceCalls == nil && nullNil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range res.TraceCalls {
			if i > 0 {
				b = append(b, ',')
			}
			start := len(b)
			b = e.appendToolCall(b, &res.TraceCalls[i])
			bounds = append(bounds, start, len(b))
		}
		b = append(b, ']')
	}
	split := len(b)
	b = append(b, sep...)
	b = append(b, '[')
	for j, idx := range res.ScoredIndexes {
		if j > 0 {
			b = append(b, ',')
		}
		sc := &res.ScoredCalls[j]
		if idx >= 0 && idx < len(res.TraceCalls) && *sc == res.TraceCalls[idx] {
			b = append(b, b[bounds[2*idx]:bounds[2*idx+1]]...)
		} else {
			b = e.appendToolCall(b, sc)
		}
	}
	return append(b, ']'), split
}

// appendExpectedCalls appends calls (a nil list as null when nullNil,
// else []); false when some arguments cannot be encoded.
func (e enc) appendExpectedCalls(b []byte, calls []engine.ExpectedCall, nullNil bool) ([]byte, bool) {
	if calls == nil && nullNil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = e.appendExpectedCall(b, &calls[i]); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

func (e enc) appendExpectedCall(b []byte, c *engine.ExpectedCall) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = e.str(b, c.Tool)
	b = append(b, `,"args":`...)
	if d := c.Args.Document(); d.Exists() {
		// Read from a document, with no matcher: its JSON is the map's.
		if e.Mode == NoHTML {
			b = d.AppendJSONNoHTML(b)
		} else {
			b = d.AppendJSON(b)
		}
		return append(b, '}'), true
	}
	var ok bool
	if b, ok = e.appendObject(b, c.Args.Map(), 1); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// metricsFinite reports whether every float of m is finite (encoding/json
// refuses the others). Argument values are checked as they are written.
func metricsFinite(m *engine.Metrics) bool {
	w := &m.Weights
	sum := m.SelectionAccuracy + m.InvocationAccuracy + m.RequiredCallRecall +
		m.Arguments.Precision + m.Arguments.Recall + m.Arguments.F1 +
		m.Sequence.EditDistance + m.Sequence.NormalizedDistance + m.Sequence.SequenceAccuracy +
		m.Efficiency.RedundantRate + m.ToolCorrectness.ToolCorrectness +
		w.SelectionAccuracy + w.ArgumentF1 + w.SequenceAccuracy + w.RedundantRate + w.RequiredCallRecall
	// A sum of finite floats can overflow to ±Inf, so a non-finite sum is
	// checked term by term.
	if !isFinite(sum) {
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

// appendMetrics appends m; false when a float is not finite or a chosen
// option's group or arguments cannot be encoded.
func (e enc) appendMetrics(b []byte, m *engine.Metrics) ([]byte, bool) {
	if !metricsFinite(m) {
		return b, false
	}
	b = append(b, `{"selection_accuracy":`...)
	b = e.texts.AppendFloat(b, m.SelectionAccuracy)
	b = append(b, `,"invocation_accuracy":`...)
	b = e.texts.AppendFloat(b, m.InvocationAccuracy)
	b = append(b, `,"required_call_recall":`...)
	b = e.texts.AppendFloat(b, m.RequiredCallRecall)

	b = append(b, `,"argument_metrics":{"precision":`...)
	b = e.texts.AppendFloat(b, m.Arguments.Precision)
	b = append(b, `,"recall":`...)
	b = e.texts.AppendFloat(b, m.Arguments.Recall)
	b = append(b, `,"f1":`...)
	b = e.texts.AppendFloat(b, m.Arguments.F1)

	b = append(b, `},"sequence_metrics":{"edit_distance":`...)
	b = e.texts.AppendFloat(b, m.Sequence.EditDistance)
	b = append(b, `,"normalized_distance":`...)
	b = e.texts.AppendFloat(b, m.Sequence.NormalizedDistance)
	b = append(b, `,"sequence_accuracy":`...)
	b = e.texts.AppendFloat(b, m.Sequence.SequenceAccuracy)

	b = append(b, `},"efficiency_metrics":{"redundant_count":`...)
	b = appendInt(b, m.Efficiency.RedundantCount)
	b = append(b, `,"total_calls":`...)
	b = appendInt(b, m.Efficiency.TotalCalls)
	b = append(b, `,"redundant_rate":`...)
	b = e.texts.AppendFloat(b, m.Efficiency.RedundantRate)

	tc := &m.ToolCorrectness
	b = append(b, `},"tool_correctness_metrics":{"tool_correctness":`...)
	b = e.texts.AppendFloat(b, tc.ToolCorrectness)
	b = append(b, `,"expected_tools":`...)
	b = e.strings(b, tc.ExpectedTools)
	b = append(b, `,"called_tools":`...)
	b = e.strings(b, tc.CalledTools)
	b = append(b, `,"missing_tools":`...)
	b = e.strings(b, tc.MissingTools)
	b = append(b, `,"extra_tools":`...)
	b = e.strings(b, tc.ExtraTools)
	b = append(b, `,"correct_count":`...)
	b = appendInt(b, tc.CorrectCount)
	b = append(b, `,"total_expected":`...)
	b = appendInt(b, tc.TotalExpected)

	w := &m.Weights
	b = append(b, `},"weights":{"selection_accuracy":`...)
	b = e.texts.AppendFloat(b, w.SelectionAccuracy)
	b = append(b, `,"argument_f1":`...)
	b = e.texts.AppendFloat(b, w.ArgumentF1)
	b = append(b, `,"sequence_accuracy":`...)
	b = e.texts.AppendFloat(b, w.SequenceAccuracy)
	b = append(b, `,"redundant_rate":`...)
	b = e.texts.AppendFloat(b, w.RedundantRate)
	b = append(b, `,"required_call_recall":`...)
	b = e.texts.AppendFloat(b, w.RequiredCallRecall)
	b = append(b, '}')

	if cm := m.Contract; cm != nil {
		b = append(b, `,"contract_metrics":`...)
		var ok bool
		if b, ok = e.appendContractMetrics(b, cm); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func (e enc) appendContractMetrics(b []byte, cm *engine.ContractMetrics) ([]byte, bool) {
	b = append(b, `{"contract_version":`...)
	b = appendInt(b, cm.ContractVersion)
	b = append(b, `,"required_count":`...)
	b = appendInt(b, cm.RequiredCount)
	b = append(b, `,"optional_count":`...)
	b = appendInt(b, cm.OptionalCount)
	b = append(b, `,"forbidden_count":`...)
	b = appendInt(b, cm.ForbiddenCount)

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
			if b, ok = e.appendChosen(b, &cm.Alternatives.Chosen[i]); !ok {
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
			b = appendInts(b, cs.Options, true)
			b = append(b, `,"score":`...)
			b = e.texts.AppendFloat(b, cs.Score)
			b = append(b, '}')
		}
		b = append(b, ']')
	}

	b = append(b, `},"optional_matched":`...)
	b = appendInts(b, cm.OptionalMatched, true)
	b = append(b, `,"min_score":`...)
	b = e.texts.AppendFloat(b, cm.MinScore)
	b = append(b, `,"passed":`...)
	b = strconv.AppendBool(b, cm.Passed)
	return append(b, '}'), true
}

func (e enc) appendChosen(b []byte, ch *engine.ChosenOption) ([]byte, bool) {
	var ok bool
	b = append(b, `{"group":`...)
	if b, ok = e.appendValue(b, ch.Group, 0); !ok {
		return b, false
	}
	b = append(b, `,"option":`...)
	b = appendInt(b, ch.Option)
	b = append(b, `,"calls":`...)
	if b, ok = e.appendExpectedCalls(b, ch.Calls, true); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// maxValueDepth is the nesting depth of argument values beyond which they
// are handed to encoding/json, which detects cycles.
const maxValueDepth = 200

// appendValue appends v, a decoded JSON value, a jsondoc.Value or one of
// the engine's matchers, as encoding/json writes it in mode e; any other
// type (and anything nested deeper than maxValueDepth) is written by
// encoding/json itself. It reports false, for a value encoding/json
// refuses.
func (e enc) appendValue(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxValueDepth {
		return e.appendMarshal(b, v)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return e.str(b, x), true
	case json.Number:
		switch {
		case x == "":
			return append(b, '0'), true // as encoding/json writes the zero Number
		case jsondoc.IsNumber(string(x)):
			return append(b, x...), true
		}
		return b, false // encoding/json: invalid number literal
	case bool:
		return strconv.AppendBool(b, x), true
	case map[string]any:
		return e.appendObject(b, x, depth+1)
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
			if b, ok = e.appendValue(b, el, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case float64:
		if !isFinite(x) {
			return b, false
		}
		return e.texts.AppendFloat(b, x), true
	case int:
		return appendInt(b, x), true
	case jsondoc.Value:
		return x.AppendJSON(b), true
	case engine.Any, *engine.Regex, *engine.Contains, *engine.OneOf, *engine.Type, *engine.Approx:
		if out, ok := appendMatcher(b, x); ok {
			return out, true
		}
	}
	return e.appendMarshal(b, v)
}

// appendObject appends m with its keys sorted, null when nil.
func (e enc) appendObject(b []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	if depth > maxValueDepth {
		return e.appendMarshal(b, m)
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
		b = e.str(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = e.appendValue(b, m[k], depth); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendMarshal appends what encoding/json writes for v in mode e, or
// reports false when it refuses v.
func (e enc) appendMarshal(b []byte, v any) ([]byte, bool) {
	out, err := e.marshal(b, v)
	return out, err == nil
}

// appendMatcher appends what encoding/json writes for one of the engine's
// matchers (its MarshalJSON output, which is compact and HTML-escaped, so
// the same in both modes) when its values are JSON scalars (Any; Regex;
// Contains and OneOf of strings, valid numbers, booleans and null; Type
// with names; Approx of finite floats), and reports false, appending
// nothing, for a nil matcher or any other value, which encoding/json then
// writes.
func appendMatcher(b []byte, m any) ([]byte, bool) {
	switch x := m.(type) {
	case engine.Any:
		return append(b, `{"$any":true}`...), true
	case *engine.Regex:
		if x == nil {
			return b, false
		}
		b = append(b, `{"$regex":`...)
		b = jsondoc.AppendString(b, x.String())
		return append(b, '}'), true
	case *engine.Contains:
		if x == nil || !isScalar(x.Value) {
			return b, false
		}
		b = append(b, `{"$contains":`...)
		b = appendScalar(b, x.Value)
		return append(b, '}'), true
	case *engine.OneOf:
		if x == nil || x.Candidates == nil {
			return b, false
		}
		for _, c := range x.Candidates {
			if !isScalar(c) {
				return b, false
			}
		}
		b = append(b, `{"$one_of":[`...)
		for i, c := range x.Candidates {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendScalar(b, c)
		}
		return append(b, "]}"...), true
	case *engine.Type:
		switch {
		case x == nil || len(x.Names) == 0:
			return b, false
		case len(x.Names) == 1:
			b = append(b, `{"$type":`...)
			b = jsondoc.AppendString(b, x.Names[0])
			return append(b, '}'), true
		}
		b = append(b, `{"$type":[`...)
		for i, n := range x.Names {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsondoc.AppendString(b, n)
		}
		return append(b, "]}"...), true
	case *engine.Approx:
		if x == nil || !isFinite(x.Value) || !isFinite(x.Rel) || !isFinite(x.Abs) {
			return b, false
		}
		// A map[string]float64, keys sorted.
		b = append(b, `{"$approx":{"abs":`...)
		b = jsondoc.AppendFloat(b, x.Abs)
		b = append(b, `,"rel":`...)
		b = jsondoc.AppendFloat(b, x.Rel)
		b = append(b, `,"value":`...)
		b = jsondoc.AppendFloat(b, x.Value)
		return append(b, "}}"...), true
	}
	return b, false
}

// isScalar reports whether appendScalar writes v: a string, a bool, nil,
// or a json.Number that encoding/json accepts.
func isScalar(v any) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case json.Number:
		return x == "" || jsondoc.IsNumber(string(x))
	}
	return false
}

// appendScalar appends v (see isScalar) as json.Marshal writes it.
func appendScalar(b []byte, v any) []byte {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return jsondoc.AppendString(b, x)
	case json.Number:
		if x == "" {
			return append(b, '0') // as encoding/json writes the zero Number
		}
		return append(b, x...)
	}
	return append(b, "null"...)
}

func (e enc) appendChecks(b []byte, c *engine.Checks) []byte {
	b = append(b, `{"pass":`...)
	b = appendInt(b, c.Pass)
	b = append(b, `,"fail":`...)
	b = appendInt(b, c.Fail)
	b = append(b, `,"unknown":`...)
	b = appendInt(b, c.Unknown)
	b = append(b, `,"items":`...)
	if c.Items == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i := range c.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendCheck(b, &c.Items[i])
	}
	return append(b, "]}"...)
}

func (e enc) appendCheck(b []byte, ch *engine.Check) []byte {
	b = append(b, `{"name":`...)
	b = e.str(b, ch.Name)
	b = append(b, `,"status":`...)
	b = e.str(b, string(ch.Status))
	b = append(b, `,"detail":`...)
	b = e.str(b, ch.Detail)
	b = append(b, `,"calls":`...)
	b = appendInts(b, ch.Calls, true)
	if len(ch.Findings) > 0 {
		b = append(b, `,"findings":[`...)
		for i := range ch.Findings {
			f := &ch.Findings[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"call":`...)
			b = appendInt(b, f.Call)
			if f.Path != "" {
				b = append(b, `,"path":`...)
				b = e.str(b, f.Path)
			}
			if f.Rule != "" {
				b = append(b, `,"rule":`...)
				b = e.str(b, f.Rule)
			}
			if f.Value != "" {
				b = append(b, `,"value":`...)
				b = e.str(b, f.Value)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendIssues appends issues; a nil list is null when nullNil, else [].
func (e enc) appendIssues(b []byte, issues []engine.Issue, nullNil bool) []byte {
	if issues == nil && nullNil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range issues {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendIssue(b, &issues[i])
	}
	return append(b, ']')
}

func (e enc) appendIssue(b []byte, is *engine.Issue) []byte {
	b = append(b, `{"kind":`...)
	b = e.str(b, is.Kind)
	b = append(b, `,"severity":`...)
	b = e.str(b, string(is.Severity))
	b = append(b, `,"tool":`...)
	b = e.str(b, is.Tool)
	b = append(b, `,"problem":`...)
	b = e.str(b, is.Problem)
	b = append(b, `,"fix":`...)
	b = e.str(b, is.Fix)
	b = append(b, `,"calls":`...)
	b = appendInts(b, is.Calls, true)
	return append(b, '}')
}
