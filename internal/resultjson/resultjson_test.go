package resultjson_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/resultjson"
	"github.com/toolscore/toolscore/internal/secrets"
	"github.com/toolscore/toolscore/internal/workload"
)

// The writers must write exactly what encoding/json writes for the same
// values, in both modes: json.Marshal (Marshal) and an Encoder with
// SetEscapeHTML(false) without its newline (NoHTML). The parts the
// service stores write nil lists as [].

var secretScanner = secrets.New()

var modes = []resultjson.Mode{resultjson.Marshal, resultjson.NoHTML}

func modeName(m resultjson.Mode) string {
	if m == resultjson.NoHTML {
		return "NoHTML"
	}
	return "Marshal"
}

// encodingJSON returns what encoding/json writes for v in mode m.
func encodingJSON(m resultjson.Mode, v any) ([]byte, error) {
	if m == resultjson.Marshal {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// prefix is what the tests append to, to check that the writers keep it.
const prefix = `{"x":`

// check compares one writer's output (appended to prefix) and error with
// encoding/json's for v.
func check(t *testing.T, what string, mode resultjson.Mode, v any, got []byte, err error) {
	t.Helper()
	want, wantErr := encodingJSON(mode, v)
	what += " (" + modeName(mode) + ")"
	switch {
	case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
		t.Errorf("%s: error %v, want %v", what, err, wantErr)
	case err != nil && string(got) != prefix:
		t.Errorf("%s: on error the buffer is %q, want the prefix only", what, got)
	case err == nil && !bytes.Equal(got, append([]byte(prefix), want...)):
		t.Errorf("%s:\n got %s\nwant %s%s", what, got, prefix, want)
	}
}

// compareParts compares the writers of a result's parts with
// encoding/json, in both modes.
func compareParts(t *testing.T, what string, m *engine.Metrics, c *engine.Checks, issues []engine.Issue, ints []int) {
	t.Helper()
	for _, mode := range modes {
		got, err := mode.AppendMetrics([]byte(prefix), m)
		check(t, what+": metrics", mode, m, got, err)
		if c != nil {
			check(t, what+": checks", mode, c, mode.AppendChecks([]byte(prefix), c), nil)
		}
		check(t, what+": issues", mode, nonNil(issues), mode.AppendIssues([]byte(prefix), issues), nil)
	}
	check(t, what+": ints", resultjson.Marshal, nonNil(ints), resultjson.AppendInts([]byte(prefix), ints), nil)
}

// sharedWriters are the writers of compareResult for every result, one
// per mode (without an ExpectedCache: the results are of many contracts).
var sharedWriters = struct {
	sync.Mutex
	w map[resultjson.Mode]*resultjson.Writer
}{w: map[resultjson.Mode]*resultjson.Writer{
	resultjson.Marshal: {Mode: resultjson.Marshal},
	resultjson.NoHTML:  {Mode: resultjson.NoHTML},
}}

// compareResult compares AppendResult and the writers of the stored parts
// (calls, expected calls, and the others through compareParts) with
// encoding/json on res, in both modes.
func compareResult(t *testing.T, what string, res *engine.EvaluationResult) {
	t.Helper()
	for _, mode := range modes {
		got, err := mode.AppendResult([]byte(prefix), res)
		check(t, what+": result", mode, res, got, err)
		cache := &resultjson.ExpectedCache{}
		for k := range 2 { // writes the expected calls, then takes them from the cache
			got, err := mode.AppendResultWith([]byte(prefix), res, cache)
			check(t, what+": result with a cache, "+strconv.Itoa(k), mode, res, got, err)
		}
		w := &resultjson.Writer{Mode: mode, Expected: &resultjson.ExpectedCache{}}
		for k := range 2 { // writes the texts, then takes them from its cache
			got, err := w.AppendResult([]byte(prefix), res)
			check(t, what+": result through a Writer, "+strconv.Itoa(k), mode, res, got, err)
		}
		// One writer for every result the tests write, so that texts of
		// other results fill and replace its cache's slots.
		sharedWriters.Lock()
		got, err = sharedWriters.w[mode].AppendResult([]byte(prefix), res)
		sharedWriters.Unlock()
		check(t, what+": result through a shared Writer", mode, res, got, err)

		b, split := mode.AppendCalls([]byte(prefix), res)
		check(t, what+": trace calls", mode, nonNil(res.TraceCalls), b[:split], nil)
		check(t, what+": scored calls", mode, nonNil(res.ScoredCalls), append([]byte(prefix), b[split:]...), nil)
		check(t, what+": AppendToolCalls", mode, nonNil(res.TraceCalls), mode.AppendToolCalls([]byte(prefix), res.TraceCalls), nil)
		for i := range res.TraceCalls {
			check(t, what+": AppendToolCall", mode, &res.TraceCalls[i], mode.AppendToolCall([]byte(prefix), &res.TraceCalls[i]), nil)
		}
		got, err = mode.AppendExpectedCalls([]byte(prefix), res.ExpectedCalls)
		check(t, what+": expected calls", mode, nonNil(res.ExpectedCalls), got, err)
	}
	compareParts(t, what, &res.Metrics, &res.Checks, res.Issues, res.ScoredIndexes)
}

// TestToolCallFields fails when the engine adds a field to ToolCall or
// EvaluationResult, so that the writers are updated with it.
func TestToolCallFields(t *testing.T) {
	if n := reflect.TypeFor[engine.ToolCall]().NumField(); n != 7 {
		t.Errorf("engine.ToolCall has %d fields; the writer knows 7: update it", n)
	}
	if n := reflect.TypeFor[engine.EvaluationResult]().NumField(); n != 14 {
		t.Errorf("engine.EvaluationResult has %d fields; the writer knows 14: update it", n)
	}
}

// gen makes random values of the result types, biased towards what
// encoders get wrong: odd strings, floats at the format boundaries, nil
// against empty slices and maps, matchers and unusual argument types.
type gen struct{ r *rand.Rand }

func newGen(seed1, seed2 uint64) *gen { return &gen{rand.New(rand.NewPCG(seed1, seed2))} }

var oddPieces = []string{
	"", "a", "search_flights", "plain text", " ", "<", ">", "&", "<script>alert(1)</script>", "&amp;",
	"\u2028", "\u2029", "x\u2028y", "\x00", "\x01", "\x07", "\x1f", "\x7f", "\"", "\\", "/", "\\u0041",
	"\n", "\r", "\t", "\b", "\f", "\xff", "\xc3", "\xc3\x28", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"é", "日本語", "😀", "\ufffd", "\ufeff", "\u0085", "\u00a0", "[REDACTED:github-pat]", "`tool`", "…",
}

func (g *gen) str() string {
	switch g.r.IntN(8) {
	case 0:
		return ""
	case 1: // random bytes
		b := make([]byte, g.r.IntN(12))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return string(b)
	}
	var sb strings.Builder
	for n := g.r.IntN(5); n >= 0; n-- {
		sb.WriteString(oddPieces[g.r.IntN(len(oddPieces))])
	}
	return sb.String()
}

var oddFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 1.0 / 3, 2.0 / 3, 0.1 + 0.2, 0.9999999999999999, 1e-6, 9.99999e-7, 1e-7,
	-1e-7, 1.5e-7, 1e-5, 1e20, 1e21, -1e21, 999999999999999999999, 1e21 * (1 - 1e-16), 123456789e-15,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 1e100, 1e-100,
	float64(1 << 53), float64(1<<53) + 2, 12345678, 0.38333333333333336, 1e-300, 5e-324,
}

func (g *gen) float() float64 {
	switch g.r.IntN(6) {
	case 0:
		return oddFloats[g.r.IntN(len(oddFloats))]
	case 1: // an integer as a float
		return float64(g.r.IntN(2001) - 1000)
	case 2: // a power of ten
		return math.Pow(10, float64(g.r.IntN(61)-30)) * float64(1+g.r.IntN(9))
	case 3: // any finite bit pattern
		for {
			f := math.Float64frombits(g.r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	case 4:
		return -g.r.Float64()
	}
	return g.r.Float64()
}

var oddInts = []int{0, 1, -1, 7, 42, 1000, -1000, math.MaxInt32, math.MinInt32, math.MaxInt, math.MinInt}

func (g *gen) int() int {
	if g.r.IntN(3) == 0 {
		return oddInts[g.r.IntN(len(oddInts))]
	}
	return g.r.IntN(100)
}

func (g *gen) ints() []int {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []int{}
	}
	v := make([]int, 1+g.r.IntN(5))
	for i := range v {
		v[i] = g.int()
	}
	return v
}

func (g *gen) strs() []string {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	v := make([]string, 1+g.r.IntN(4))
	for i := range v {
		v[i] = g.str()
	}
	return v
}

var numberLiterals = []json.Number{"", "0", "-0", "1", "-1", "12.5", "1e10", "1E+2", "-12.34e-5", "0.000001", "123456789012345678901234567890", "1.0"}

var regexPatterns = []string{"^a$", `^FL-\d+$`, "<b>&</b>", "\u2028", "é+", `\\`, `"quoted"`, ".*"}

// scalar returns a JSON scalar: what matchers hold in the common case.
func (g *gen) scalar() any {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return numberLiterals[g.r.IntN(len(numberLiterals))]
	}
	return g.str()
}

// value returns an argument value: decoded JSON, a matcher, or one of the
// other types a hand-built value may hold (which json.Marshal encodes).
func (g *gen) value(depth int) any {
	n := 22
	if depth > 3 {
		n = 8 // scalars only
	}
	switch g.r.IntN(n) {
	case 0, 1, 2, 3:
		return g.scalar()
	case 4:
		return g.float()
	case 5:
		return g.int()
	case 6:
		return json.Number("")
	case 7:
		return g.str()
	case 8, 9:
		return g.object(depth + 1)
	case 10, 11:
		switch g.r.IntN(4) {
		case 0:
			return []any(nil)
		case 1:
			return []any{}
		}
		v := make([]any, 1+g.r.IntN(4))
		for i := range v {
			v[i] = g.value(depth + 1)
		}
		return v
	case 12:
		return engine.Any{}
	case 13:
		re, err := engine.NewRegex(regexPatterns[g.r.IntN(len(regexPatterns))])
		if err != nil {
			panic(err)
		}
		return re
	case 14:
		if g.r.IntN(3) == 0 {
			return &engine.Contains{Value: g.value(depth + 1)}
		}
		return &engine.Contains{Value: g.scalar()}
	case 15:
		if g.r.IntN(5) == 0 {
			return &engine.OneOf{}
		}
		v := make([]any, g.r.IntN(4))
		for i := range v {
			if g.r.IntN(4) == 0 {
				v[i] = g.value(depth + 1)
			} else {
				v[i] = g.scalar()
			}
		}
		return &engine.OneOf{Candidates: v}
	case 16:
		switch g.r.IntN(3) {
		case 0:
			return &engine.Type{}
		case 1:
			return &engine.Type{Names: []string{"string"}}
		}
		return &engine.Type{Names: []string{"integer", "null", g.str()}}
	case 17:
		return &engine.Approx{Value: g.float(), Rel: g.float(), Abs: g.float()}
	case 18: // typed nil matchers
		return []any{(*engine.Regex)(nil), (*engine.Contains)(nil), (*engine.OneOf)(nil), (*engine.Type)(nil), (*engine.Approx)(nil)}[g.r.IntN(5)]
	case 19:
		return json.RawMessage(" {\"b\" : [1, \"<&>\"],\n \"a\":null} ")
	case 20:
		return []string{g.str(), g.str()}
	}
	return []any{int64(-7), uint8(200), float32(g.r.Float32()), map[string]string{g.str(): g.str(), "k": g.str()}, &struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}{A: g.str()}}[g.r.IntN(5)]
}

func (g *gen) object(depth int) map[string]any {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return map[string]any{}
	}
	m := map[string]any{}
	for n := g.r.IntN(6); n >= 0; n-- {
		m[g.str()] = g.value(depth)
	}
	return m
}

func (g *gen) metrics() *engine.Metrics {
	m := &engine.Metrics{
		SelectionAccuracy:  g.float(),
		InvocationAccuracy: g.float(),
		RequiredCallRecall: g.float(),
		Arguments:          engine.ArgumentMetrics{Precision: g.float(), Recall: g.float(), F1: g.float()},
		Sequence:           engine.SequenceMetrics{EditDistance: g.float(), NormalizedDistance: g.float(), SequenceAccuracy: g.float()},
		Efficiency:         engine.EfficiencyMetrics{RedundantCount: g.int(), TotalCalls: g.int(), RedundantRate: g.float()},
		ToolCorrectness: engine.ToolCorrectnessMetrics{
			ToolCorrectness: g.float(), ExpectedTools: g.strs(), CalledTools: g.strs(), MissingTools: g.strs(), ExtraTools: g.strs(),
			CorrectCount: g.int(), TotalExpected: g.int(),
		},
		Weights: engine.Weights{SelectionAccuracy: g.float(), ArgumentF1: g.float(), SequenceAccuracy: g.float(),
			RedundantRate: g.float(), RequiredCallRecall: g.float()},
	}
	if g.r.IntN(3) == 0 {
		return m
	}
	cm := &engine.ContractMetrics{
		ContractVersion: g.int(), RequiredCount: g.int(), OptionalCount: g.int(), ForbiddenCount: g.int(),
		OptionalMatched: g.ints(), MinScore: g.float(), Passed: g.r.IntN(2) == 0,
	}
	if k := g.r.IntN(5); k > 0 {
		cm.Alternatives.Chosen = make([]engine.ChosenOption, k-1)
		for i := range cm.Alternatives.Chosen {
			ch := &cm.Alternatives.Chosen[i]
			switch g.r.IntN(5) {
			case 0, 1:
				ch.Group = g.int()
			case 2, 3:
				ch.Group = g.str()
			default:
				ch.Group = g.value(1)
			}
			ch.Option = g.int()
			if k := g.r.IntN(5); k > 0 {
				ch.Calls = make([]engine.ExpectedCall, k-1)
				for j := range ch.Calls {
					ch.Calls[j] = engine.ExpectedCall{Tool: g.str(), Args: engine.NewArgs(g.object(1))}
				}
			}
		}
	}
	if k := g.r.IntN(5); k > 0 {
		cm.Alternatives.Combinations = make([]engine.CombinationScore, k-1)
		for i := range cm.Alternatives.Combinations {
			cm.Alternatives.Combinations[i] = engine.CombinationScore{Options: g.ints(), Score: g.float()}
		}
	}
	m.Contract = cm
	return m
}

var statuses = []engine.CheckStatus{engine.CheckPass, engine.CheckFail, engine.CheckUnknown}

func (g *gen) checks() *engine.Checks {
	c := &engine.Checks{Pass: g.int(), Fail: g.int(), Unknown: g.int()}
	if k := g.r.IntN(6); k > 0 {
		c.Items = make([]engine.Check, k-1)
		for i := range c.Items {
			ch := &c.Items[i]
			ch.Name, ch.Detail, ch.Calls = g.str(), g.str(), g.ints()
			ch.Status = statuses[g.r.IntN(3)]
			if g.r.IntN(4) == 0 {
				ch.Status = engine.CheckStatus(g.str())
			}
			if k := g.r.IntN(5); k > 0 {
				ch.Findings = make([]engine.Finding, k-1)
				for j := range ch.Findings {
					f := &ch.Findings[j]
					f.Call = g.int()
					if g.r.IntN(2) == 0 {
						f.Path = g.str()
					}
					if g.r.IntN(2) == 0 {
						f.Rule = g.str()
					}
					if g.r.IntN(2) == 0 {
						f.Value = g.str()
					}
				}
			}
		}
	}
	return c
}

var severities = []engine.Severity{engine.SeverityCritical, engine.SeverityHigh, engine.SeverityMedium, engine.SeverityLow}

func (g *gen) issues() []engine.Issue {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []engine.Issue{}
	}
	v := make([]engine.Issue, 1+g.r.IntN(5))
	for i := range v {
		v[i] = engine.Issue{Kind: g.str(), Severity: severities[g.r.IntN(4)], Tool: g.str(), Problem: g.str(), Fix: g.str(), Calls: g.ints()}
		if g.r.IntN(5) == 0 {
			v[i].Severity = engine.Severity(g.str())
		}
	}
	return v
}

// plain returns a decoded JSON value (what a document holds).
func (g *gen) plain(depth int) any {
	n := 8
	if depth > 3 {
		n = 5
	}
	switch g.r.IntN(n) {
	case 0:
		return g.scalar()
	case 1:
		return g.float()
	case 2:
		return json.Number(numberLiterals[1+g.r.IntN(len(numberLiterals)-1)])
	case 3, 4:
		return g.str()
	case 5:
		v := make([]any, g.r.IntN(4))
		for i := range v {
			v[i] = g.plain(depth + 1)
		}
		return v
	}
	m := map[string]any{}
	for k := g.r.IntN(5); k > 0; k-- {
		m[g.str()] = g.plain(depth + 1)
	}
	return m
}

// oddDocs are documents whose values encoding/json and a naive writer
// would disagree on: unsorted and repeated keys, number literals kept as
// written, escapes in keys and strings.
var oddDocs = []string{
	`{"b":1,"a":"<&>","b":[1.0,-0,1e400,0.1e-9]}`,
	`{"z":{"y":{},"x":[]},"\u003ck":"\u2028\ud800","é":"\/"}`,
	`[true,false,null,"\u0000\u001f",12345678901234567890123]`,
	`"<script>"`, `-0.0`, `null`, `{}`,
}

// jsonValue returns a document's value: absent, null, an odd document or
// a random one (an object most of the time).
func (g *gen) jsonValue() jsondoc.Value {
	switch g.r.IntN(8) {
	case 0:
		return jsondoc.Value{}
	case 1:
		return jsondoc.MustFromAny(nil)
	case 2:
		v, err := jsondoc.ParseString(oddDocs[g.r.IntN(len(oddDocs))])
		if err != nil {
			panic(err)
		}
		return v
	case 3:
		return jsondoc.MustFromAny(g.plain(1))
	}
	m := map[string]any{}
	for k := g.r.IntN(5); k > 0; k-- {
		m[g.str()] = g.plain(1)
	}
	return jsondoc.MustFromAny(m)
}

func (g *gen) toolCall() engine.ToolCall {
	c := engine.ToolCall{Tool: g.str(), Args: g.jsonValue()}
	if g.r.IntN(2) == 0 {
		c.ID = g.str()
	}
	if g.r.IntN(2) == 0 {
		c.Result = g.jsonValue()
	}
	if g.r.IntN(3) == 0 {
		c.Error = engine.CallError(g.str())
	}
	if g.r.IntN(4) == 0 {
		c.ArgsRaw, c.ArgsError = g.str(), g.str()
	}
	return c
}

// result returns a random EvaluationResult: its scored calls are, as the
// engine makes them, mostly its trace calls at ScoredIndexes, and
// sometimes not (other calls, other lengths).
func (g *gen) result() *engine.EvaluationResult {
	res := &engine.EvaluationResult{
		Score: g.float(), Grade: engine.Grade(g.str()), Passed: g.r.IntN(2) == 0, MinScore: g.float(), SafetyGate: g.r.IntN(2) == 0,
		Metrics: *g.metrics(), Checks: *g.checks(), Issues: g.issues(),
	}
	if g.r.IntN(40) == 0 {
		res.Score = math.NaN()
	}
	if k := g.r.IntN(5); k > 0 {
		res.ExpectedCalls = make([]engine.ExpectedCall, k-1)
		for i := range res.ExpectedCalls {
			res.ExpectedCalls[i] = engine.ExpectedCall{Tool: g.str(), Args: engine.NewArgs(g.object(1))}
		}
	}
	if k := g.r.IntN(7); k > 0 {
		res.TraceCalls = make([]engine.ToolCall, k-1)
		for i := range res.TraceCalls {
			res.TraceCalls[i] = g.toolCall()
		}
	}
	if k := g.r.IntN(7); k > 0 {
		res.ScoredIndexes = make([]int, k-1)
		res.ScoredCalls = make([]engine.ToolCall, k-1)
		for j := range res.ScoredIndexes {
			idx := g.r.IntN(len(res.TraceCalls)+2) - 1
			res.ScoredIndexes[j] = idx
			switch {
			case idx >= 0 && idx < len(res.TraceCalls) && g.r.IntN(5) > 0:
				res.ScoredCalls[j] = res.TraceCalls[idx]
				if g.r.IntN(6) == 0 {
					res.ScoredCalls[j].Tool += "x"
				}
			default:
				res.ScoredCalls[j] = g.toolCall()
			}
		}
		switch g.r.IntN(8) {
		case 0:
			res.ScoredIndexes = append(res.ScoredIndexes, 0)
		case 1:
			res.ScoredCalls = nil
		}
	}
	if g.r.IntN(3) > 0 {
		s := g.str()
		res.FinalAnswer = &s
	}
	if g.r.IntN(3) == 0 {
		res.Contract = &engine.ContractRef{Name: g.str(), Version: g.int(), SHA256: g.str()}
	}
	return res
}

// TestAppendMatchesEncodingJSON compares the writers with encoding/json
// over thousands of random values.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	} else if raceEnabled {
		n = 1000
	}
	for i := range n {
		g := newGen(uint64(i), 0x5eed)
		compareParts(t, "random value "+strconv.Itoa(i), g.metrics(), g.checks(), g.issues(), g.ints())
		compareResult(t, "random result "+strconv.Itoa(i), g.result())
		if t.Failed() {
			t.Fatalf("stopped at seed %d", i)
		}
	}
}

// TestAppendResultExact pins one whole result in both modes.
func TestAppendResultExact(t *testing.T) {
	answer := "<ok> & \u2028"
	args := jsondoc.MustFromAny(map[string]any{"q": "<b>", "a": json.Number("1.50")})
	call := engine.ToolCall{Tool: "a&b", Args: args, ID: "<1>", Result: jsondoc.MustFromAny("x&y"), Error: "e<"}
	res := &engine.EvaluationResult{Score: 0.5, Grade: engine.GradeF, MinScore: 0.7, SafetyGate: true,
		ExpectedCalls: []engine.ExpectedCall{{Tool: "<t>", Args: engine.NewArgs(map[string]any{"k&": "<v>", "m": &engine.Contains{Value: "<c>"}})}},
		TraceCalls:    []engine.ToolCall{call}, ScoredCalls: []engine.ToolCall{call}, ScoredIndexes: []int{0},
		FinalAnswer: &answer, Issues: []engine.Issue{{Kind: "order", Severity: engine.SeverityLow, Problem: "<p>"}},
		Contract: &engine.ContractRef{Name: "c&", Version: 2, SHA256: "ab"}}
	metrics := `"metrics":{"selection_accuracy":0,"invocation_accuracy":0,"required_call_recall":0,` +
		`"argument_metrics":{"precision":0,"recall":0,"f1":0},"sequence_metrics":{"edit_distance":0,"normalized_distance":0,"sequence_accuracy":0},` +
		`"efficiency_metrics":{"redundant_count":0,"total_calls":0,"redundant_rate":0},` +
		`"tool_correctness_metrics":{"tool_correctness":0,"expected_tools":null,"called_tools":null,"missing_tools":null,"extra_tools":null,"correct_count":0,"total_expected":0},` +
		`"weights":{"selection_accuracy":0,"argument_f1":0,"sequence_accuracy":0,"redundant_rate":0,"required_call_recall":0}}`
	// The values' own JSON (arguments, results, matchers) is HTML-escaped
	// in both modes.
	calls := `{"tool":"%s","args":{"a":1.50,"q":"\u003cb\u003e"},"id":"%s","result":"x\u0026y","error":"%s"}`
	want := map[resultjson.Mode]string{
		resultjson.Marshal: `{"score":0.5,"grade":"F","passed":false,"min_score":0.7,"safety_gate":true,` + metrics +
			`,"expected_calls":[{"tool":"\u003ct\u003e","args":{"k\u0026":"\u003cv\u003e","m":{"$contains":"\u003cc\u003e"}}}]` +
			`,"trace_calls":[` + fmt.Sprintf(calls, `a\u0026b`, `\u003c1\u003e`, `e\u003c`) + `],"scored_calls":[` + fmt.Sprintf(calls, `a\u0026b`, `\u003c1\u003e`, `e\u003c`) + `]` +
			`,"scored_indexes":[0],"final_answer":"\u003cok\u003e \u0026 \u2028","checks":{"pass":0,"fail":0,"unknown":0,"items":null}` +
			`,"issues":[{"kind":"order","severity":"low","tool":"","problem":"\u003cp\u003e","fix":"","calls":null}],"contract":{"name":"c\u0026","version":2,"sha256":"ab"}}`,
		resultjson.NoHTML: `{"score":0.5,"grade":"F","passed":false,"min_score":0.7,"safety_gate":true,` + metrics +
			`,"expected_calls":[{"tool":"<t>","args":{"k&":"<v>","m":{"$contains":"\u003cc\u003e"}}}]` +
			`,"trace_calls":[` + fmt.Sprintf(calls, `a&b`, `<1>`, `e<`) + `],"scored_calls":[` + fmt.Sprintf(calls, `a&b`, `<1>`, `e<`) + `]` +
			`,"scored_indexes":[0],"final_answer":"<ok> & \u2028","checks":{"pass":0,"fail":0,"unknown":0,"items":null}` +
			`,"issues":[{"kind":"order","severity":"low","tool":"","problem":"<p>","fix":"","calls":null}],"contract":{"name":"c&","version":2,"sha256":"ab"}}`,
	}
	for _, mode := range modes {
		got, err := mode.AppendResult(nil, res)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[mode] {
			t.Errorf("%s:\n got %s\nwant %s", modeName(mode), got, want[mode])
		}
		compareResult(t, "exact", res)
	}
	res.MinScore = math.Inf(1)
	for _, mode := range modes {
		got, err := mode.AppendResult([]byte(prefix), res)
		if err == nil || err.Error() != "json: unsupported value: +Inf" || string(got) != prefix {
			t.Errorf("%s: infinite min_score: %q, %v", modeName(mode), got, err)
		}
	}
}

// TestAppendExactCases pins exact encodings of values at the edges.
func TestAppendExactCases(t *testing.T) {
	m := &engine.Metrics{SelectionAccuracy: 1e-7, InvocationAccuracy: 1e21, RequiredCallRecall: math.Copysign(0, -1),
		Arguments: engine.ArgumentMetrics{Precision: 1e20, Recall: 0.000001, F1: 3},
		Sequence:  engine.SequenceMetrics{EditDistance: 2, NormalizedDistance: 1.5e-300, SequenceAccuracy: 123456789e-15}}
	got, err := resultjson.Marshal.AppendMetrics(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"selection_accuracy":1e-7,"invocation_accuracy":1e+21,"required_call_recall":-0,` +
		`"argument_metrics":{"precision":100000000000000000000,"recall":0.000001,"f1":3},` +
		`"sequence_metrics":{"edit_distance":2,"normalized_distance":1.5e-300,"sequence_accuracy":1.23456789e-7},` +
		`"efficiency_metrics":{"redundant_count":0,"total_calls":0,"redundant_rate":0},` +
		`"tool_correctness_metrics":{"tool_correctness":0,"expected_tools":null,"called_tools":null,"missing_tools":null,"extra_tools":null,"correct_count":0,"total_expected":0},` +
		`"weights":{"selection_accuracy":0,"argument_f1":0,"sequence_accuracy":0,"redundant_rate":0,"required_call_recall":0}}`
	if string(got) != want {
		t.Errorf("metrics:\n got %s\nwant %s", got, want)
	}

	c := &engine.Checks{Pass: 1, Items: []engine.Check{
		{Name: "credentials", Status: engine.CheckFail, Detail: "<a&b>\u2028\xff\x01", Calls: []int{},
			Findings: []engine.Finding{{Call: -1, Rule: "github-pat"}, {Call: 2, Path: "/a", Value: "v"}}},
		{Name: "honesty", Status: engine.CheckUnknown},
	}}
	want = `{"pass":1,"fail":0,"unknown":0,"items":[{"name":"credentials","status":"fail","detail":"\u003ca\u0026b\u003e\u2028\ufffd\u0001","calls":[],` +
		`"findings":[{"call":-1,"rule":"github-pat"},{"call":2,"path":"/a","value":"v"}]},{"name":"honesty","status":"unknown","detail":"","calls":null}]}`
	if got := resultjson.Marshal.AppendChecks(nil, c); string(got) != want {
		t.Errorf("checks:\n got %s\nwant %s", got, want)
	}
	if got := string(resultjson.Marshal.AppendChecks(nil, &engine.Checks{})); got != `{"pass":0,"fail":0,"unknown":0,"items":null}` {
		t.Errorf("zero checks: %s", got)
	}
	for _, issues := range [][]engine.Issue{nil, {}} {
		if got := string(resultjson.Marshal.AppendIssues(nil, issues)); got != "[]" {
			t.Errorf("AppendIssues(%#v) = %s, want []", issues, got)
		}
	}
	want = `[{"kind":"order","severity":"low","tool":"a","problem":"p","fix":"f","calls":null}]`
	if got := string(resultjson.Marshal.AppendIssues(nil, []engine.Issue{{Kind: "order", Severity: engine.SeverityLow, Tool: "a", Problem: "p", Fix: "f"}})); got != want {
		t.Errorf("issues:\n got %s\nwant %s", got, want)
	}
	for _, ints := range [][]int{nil, {}} {
		if got := string(resultjson.AppendInts(nil, ints)); got != "[]" {
			t.Errorf("AppendInts(%#v) = %s, want []", ints, got)
		}
	}
	if got := string(resultjson.AppendInts(nil, []int{0, -3, 12})); got != "[0,-3,12]" {
		t.Errorf("AppendInts = %s", got)
	}
}

// TestAppendMetricsErrors checks that a Metrics value json.Marshal refuses
// gives json.Marshal's error and leaves the buffer as it was.
func TestAppendMetricsErrors(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	contract := func(f func(cm *engine.ContractMetrics)) *engine.Metrics {
		cm := &engine.ContractMetrics{Alternatives: engine.AlternativesMetrics{
			Chosen:       []engine.ChosenOption{{Group: "g", Calls: []engine.ExpectedCall{{Tool: "t", Args: engine.NewArgs(map[string]any{"a": 1})}}}},
			Combinations: []engine.CombinationScore{{Options: []int{0}, Score: 1}},
		}}
		f(cm)
		return &engine.Metrics{Contract: cm}
	}
	cases := map[string]*engine.Metrics{
		"NaN":             &engine.Metrics{SelectionAccuracy: math.NaN()},
		"+Inf weight":     &engine.Metrics{Weights: engine.Weights{RequiredCallRecall: math.Inf(1)}},
		"-Inf rate":       &engine.Metrics{Efficiency: engine.EfficiencyMetrics{RedundantRate: math.Inf(-1)}},
		"NaN min_score":   contract(func(cm *engine.ContractMetrics) { cm.MinScore = math.NaN() }),
		"NaN combination": contract(func(cm *engine.ContractMetrics) { cm.Alternatives.Combinations[0].Score = math.NaN() }),
		"channel group":   contract(func(cm *engine.ContractMetrics) { cm.Alternatives.Chosen[0].Group = make(chan int) }),
		"NaN group":       contract(func(cm *engine.ContractMetrics) { cm.Alternatives.Chosen[0].Group = math.NaN() }),
		"bad number": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = json.Number("1x")
		}),
		"spaced number": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = json.Number(" 1")
		}),
		"Inf argument": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = []any{math.Inf(1)}
		}),
		"NaN approx": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = &engine.Approx{Value: math.NaN()}
		}),
		"NaN in contains": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = &engine.Contains{Value: math.NaN()}
		}),
		"cyclic argument": contract(func(cm *engine.ContractMetrics) { cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = cyclic }),
		"bad raw message": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = json.RawMessage("{")
		}),
		"function in object": contract(func(cm *engine.ContractMetrics) {
			cm.Alternatives.Chosen[0].Calls[0].Args.Map()["a"] = map[string]any{"f": func() {}}
		}),
	}
	for name, m := range cases {
		_, wantErr := json.Marshal(*m)
		if wantErr == nil {
			t.Fatalf("%s: json.Marshal accepted the value", name)
		}
		got, err := resultjson.Marshal.AppendMetrics([]byte(prefix), m)
		if err == nil || err.Error() != wantErr.Error() {
			t.Errorf("%s: error %v, want %v", name, err, wantErr)
		}
		if string(got) != prefix {
			t.Errorf("%s: buffer %q, want the prefix %q", name, got, prefix)
		}
	}
}

// TestAppendDeepArguments checks arguments nested beyond the depth at
// which the encoder hands them to encoding/json.
func TestAppendDeepArguments(t *testing.T) {
	for _, depth := range []int{150, 199, 200, 201, 202, 450, 1200} {
		var v any = json.Number("1")
		for i := range depth {
			if i%2 == 0 {
				v = map[string]any{"k<": v, "a": "x"}
			} else {
				v = []any{v, engine.Any{}}
			}
		}
		m := &engine.Metrics{Contract: &engine.ContractMetrics{Alternatives: engine.AlternativesMetrics{
			Chosen: []engine.ChosenOption{{Group: 0, Calls: []engine.ExpectedCall{{Tool: "t", Args: engine.NewArgs(map[string]any{"deep": v})}}}},
		}}}
		compareParts(t, "depth "+strconv.Itoa(depth), m, nil, nil, nil)
	}
}

// evaluated is one real result and where it came from.
type evaluated struct {
	what string
	res  *engine.EvaluationResult
}

// realResults evaluates the workloads, the examples, the seed files, every
// trace of the format tests and the parity corpus.
func realResults(t *testing.T) []evaluated {
	t.Helper()
	ctx := context.Background()
	var out []evaluated
	eval := func(what string, c *engine.Contract, tr engine.Trace) {
		for _, opts := range []engine.Options{{SecretScanner: secretScanner}, {SecretScanner: secretScanner, Strict: true, NoSafetyGate: true}} {
			res, err := engine.Evaluate(ctx, c, tr, opts)
			if err != nil {
				t.Fatalf("%s: Evaluate: %v", what, err)
			}
			out = append(out, evaluated{what, res})
		}
	}
	contract := func(what string, data []byte) *engine.Contract {
		c, err := engine.ParseContract(data)
		if err != nil {
			t.Fatalf("%s: ParseContract: %v", what, err)
		}
		return c
	}
	trace := func(what string, data []byte) (engine.Trace, bool) {
		p, err := format.Parse(data, "")
		if err != nil {
			return engine.Trace{}, false
		}
		return p.Trace, true
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	for _, s := range []workload.Size{workload.Small, workload.Medium, workload.Large, workload.WorstCase} {
		c := contract(s.Name, workload.Contract(s))
		for _, doc := range [][]byte{workload.PlainTrace(s), workload.OpenAITrace(s)} {
			tr, ok := trace(s.Name, doc)
			if !ok {
				t.Fatalf("%s: the workload trace does not parse", s.Name)
			}
			eval("workload "+s.Name, c, tr)
		}
	}

	var expectations []*engine.Contract
	for _, dir := range []string{"../../examples/contracts", "../engine/testdata/seed"} {
		tr, ok := trace(dir, read(filepath.Join(dir, "trace.json")))
		if !ok {
			t.Fatalf("%s/trace.json does not parse", dir)
		}
		for _, f := range []string{"contract.json", "gold.json"} {
			c := contract(dir+"/"+f, read(filepath.Join(dir, f)))
			expectations = append(expectations, c)
			eval(dir+"/"+f, c, tr)
		}
	}

	// Every trace of the format tests, against the examples and against
	// its own calls as a gold file.
	files, err := filepath.Glob("../engine/format/testdata/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	traces := 0
	for _, f := range files {
		tr, ok := trace(f, read(f))
		if !ok {
			continue
		}
		traces++
		for _, c := range expectations {
			eval(f, c, tr)
		}
		gold := make([]any, len(tr.Calls))
		for i, call := range tr.Calls {
			gold[i] = map[string]any{"tool": call.Tool, "args": call.Args}
		}
		if c, err := engine.ContractFromValue(gold); err == nil {
			eval(f+" (own gold)", c, tr)
		}
	}
	if traces < 20 {
		t.Errorf("only %d format test traces parsed", traces)
	}

	// The parity corpus.
	for i, line := range bytes.Split(bytes.TrimSpace(read("../engine/testdata/parity/toolscore-1.8.1-parity.jsonl")), []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var pc struct {
			Expected []any              `json:"expected"`
			Actual   []map[string]any   `json:"actual"`
			Strict   bool               `json:"strict"`
			Weights  map[string]float64 `json:"weights"`
		}
		if err := dec.Decode(&pc); err != nil {
			t.Fatalf("parity line %d: %v", i+1, err)
		}
		c, err := engine.ContractFromValue(pc.Expected)
		if err != nil {
			continue
		}
		tr := engine.Trace{Calls: make([]engine.ToolCall, len(pc.Actual))}
		for j, a := range pc.Actual {
			tr.Calls[j].Tool, _ = a["tool"].(string)
			if args, ok := a["args"].(map[string]any); ok {
				tr.Calls[j].Args = jsondoc.MustFromAny(args)
			}
		}
		res, err := engine.Evaluate(ctx, c, tr, engine.Options{SecretScanner: secretScanner, Strict: pc.Strict, Weights: pc.Weights})
		if err != nil {
			t.Fatalf("parity line %d: %v", i+1, err)
		}
		out = append(out, evaluated{"parity line " + strconv.Itoa(i+1), res})
	}

	// Secrets in the trace: redacted expected calls and matchers in the
	// chosen alternatives, credential findings, issues quoting them.
	pat := "ghp_" + "R2d9xK7mQ4vL8pN3sT6wY1zB5cF0hJ" + "aE4uIo"
	secret := contract("secrets", []byte(`{"contract_version": 2,
		"required": [
			{"tool": "login", "args": {"user": "ana", "password": "Zx93!Qw77Er5Ty"}},
			{"id": "repo", "alternatives": [
				[{"tool": "get_repo", "args": {"auth": {"$regex": "^token `+pat+`$"}, "mirror": {"$one_of": ["none", "`+pat+`"]}, "n": {"$approx": 3}}}],
				[{"tool": "clone_repo"}]
			]}
		],
		"forbidden": [{"tool": "post_gist", "args": {"content": {"$contains": "`+pat+`"}}, "reason": "leaks <the> token"}]}`))
	tr, ok := trace("secrets", []byte(`{"calls": [
			{"tool": "login", "args": {"user": "ana", "password": "Zx93!Qw77Er5Ty"}, "result": "ok"},
			{"tool": "get_repo", "args": {"auth": "token `+pat+`", "mirror": "none", "n": 3}, "result": "ok"},
			{"tool": "post_gist", "args": {"content": "my token is `+pat+`"}, "result": "ok"}
		],
		"final_answer": "Done \u2028 <ok> & `+pat+`"}`))
	if !ok {
		t.Fatal("the secrets trace does not parse")
	}
	eval("secrets", secret, tr)
	return out
}

// TestExpectedCache grades traces that choose each option of a contract's
// alternatives, with and without a secret, and writes every result
// through one cache: each is what encoding/json writes, the expected
// calls of a combination are written once, and those of a result with a
// secret never come from the cache.
func TestExpectedCache(t *testing.T) {
	pat := "ghp_" + "R2d9xK7mQ4vL8pN3sT6wY1zB5cF0hJ" + "aE4uIo"
	c, err := engine.ParseContract([]byte(`{"contract_version": 2, "required": [
		{"tool": "login", "args": {"user": "<ana>"}},
		{"id": "g", "alternatives": [[{"tool": "get", "args": {"auth": {"$regex": "^token"}, "q": "a&b"}}], [{"tool": "clone", "args": {"token": "` + pat + `"}}]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	traces := []string{
		`{"calls": [{"tool": "login", "args": {"user": "<ana>"}}, {"tool": "get", "args": {"auth": "token x", "q": "a&b"}}]}`,
		`{"calls": [{"tool": "login", "args": {"user": "<ana>"}}, {"tool": "clone", "args": {}}]}`,
		`{"calls": [{"tool": "login", "args": {"user": "<ana>"}}, {"tool": "clone", "args": {"token": "` + pat + `"}}]}`,
		`{"calls": [{"tool": "login", "args": {"user": "<bob>"}}, {"tool": "get", "args": {"auth": "token x"}}]}`,
	}
	for _, mode := range modes {
		cache := &resultjson.ExpectedCache{}
		first := map[string][]byte{}
		for round := range 2 {
			for i, tr := range traces {
				p, err := format.Parse([]byte(tr), "")
				if err != nil {
					t.Fatal(err)
				}
				res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{SecretScanner: secretScanner})
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("trace %d, round %d", i, round)
				got, err := mode.AppendResultWith([]byte(prefix), res, cache)
				check(t, what, mode, res, got, err)
				exp, err := cache.ExpectedCalls(mode, res)
				check(t, what+": expected calls", mode, res.ExpectedCalls, append([]byte(prefix), exp...), err)
				secret := resultjson.SecretFound(res)
				if secret != (i == 2) {
					t.Errorf("%s: SecretFound = %v", what, secret)
				}
				key := fmt.Sprint(res.Metrics.Contract.Alternatives.Chosen[0].Option)
				switch {
				case secret:
					if prev := first[key]; prev != nil && &prev[0] == &exp[0] {
						t.Errorf("%s: a result with a secret took its expected calls from the cache", what)
					}
				case first[key] == nil:
					first[key] = exp
				case &first[key][0] != &exp[0]:
					t.Errorf("%s: combination %s written again", what, key)
				}
			}
		}
		if len(first) != 2 {
			t.Errorf("%s: %d combinations cached, want 2", modeName(mode), len(first))
		}
	}
}

// corpusLine is one line of the engine's golden corpus inputs
// (internal/engine/testdata/golden/corpus.jsonl).
type corpusLine struct {
	Name     string          `json:"name"`
	Contract json.RawMessage `json:"contract"`
	Trace    json.RawMessage `json:"trace"`
	Options  struct {
		Strict       bool                   `json:"strict,omitempty"`
		Weights      map[string]float64     `json:"weights,omitempty"`
		MinScore     *float64               `json:"min_score,omitempty"`
		Forbidden    []engine.ForbiddenCall `json:"forbidden,omitempty"`
		NoSafetyGate bool                   `json:"no_safety_gate,omitempty"`
		KeepSecrets  bool                   `json:"keep_secrets,omitempty"`
	} `json:"options"`
}

// goldenResults evaluates every case of the engine's golden corpus.
func goldenResults(t *testing.T) []evaluated {
	data, err := os.ReadFile("../engine/testdata/golden/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []evaluated
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var cs corpusLine
		if err := json.Unmarshal(line, &cs); err != nil {
			t.Fatalf("corpus line %d: %v", i+1, err)
		}
		c, err := engine.ParseContract(cs.Contract)
		if err != nil {
			t.Fatalf("%s: contract: %v", cs.Name, err)
		}
		p, err := format.Parse(cs.Trace, "plain")
		if err != nil {
			t.Fatalf("%s: trace: %v", cs.Name, err)
		}
		o := cs.Options
		res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{SecretScanner: secretScanner, Strict: o.Strict,
			Weights: o.Weights, MinScore: o.MinScore, Forbidden: o.Forbidden, NoSafetyGate: o.NoSafetyGate, KeepSecrets: o.KeepSecrets})
		if err != nil {
			continue // the golden error cases
		}
		out = append(out, evaluated{"corpus " + cs.Name, res})
	}
	return out
}

// TestAppendRealResults compares the writers with encoding/json on real
// results: the workloads, the examples, the format tests' traces, the
// parity corpus and the engine's golden corpus.
func TestAppendRealResults(t *testing.T) {
	results := append(realResults(t), goldenResults(t)...)
	contracts, findings, issues, html := 0, 0, 0, 0
	for _, r := range results {
		compareResult(t, r.what, r.res)
		if t.Failed() {
			t.Fatalf("stopped at %s", r.what)
		}
		if r.res.Metrics.Contract != nil {
			contracts++
		}
		for _, ch := range r.res.Checks.Items {
			findings += len(ch.Findings)
		}
		issues += len(r.res.Issues)
		if a, _ := resultjson.Marshal.AppendResult(nil, r.res); bytes.Contains(a, []byte(`\u00`)) {
			html++
		}
	}
	if len(results) < 1200 || contracts < 400 || findings == 0 || issues < 1000 || html == 0 {
		t.Errorf("%d results (%d with contract metrics, %d findings, %d issues, %d escaped): the corpus lost its breadth", len(results), contracts, findings, issues, html)
	}
	t.Logf("%d results, %d with contract metrics, %d findings, %d issues, %d escaped", len(results), contracts, findings, issues, html)
}

// FuzzAppendResult builds results from fuzzed strings, floats, integers
// and documents (as trace call arguments and results, and as a contract's
// expected arguments) and compares the writers with encoding/json.
func FuzzAppendResult(f *testing.F) {
	f.Add("", []byte(`{}`), 0.0, 0, uint64(0))
	f.Add("<a href=\"x\">&</a>\u2028\xff\x00", []byte(`{"a":[1,"<",{"$regex":"^x$"}],"b":null}`), 1e-7, -1, uint64(7))
	f.Add("plain", []byte(`{"n":1e400,"m":{"$one_of":["a",1.5,true,null]}}`), 1e21, 42, uint64(99))
	f.Add("é\\\"", []byte(`{"q":{"$approx":{"value":1,"rel":0.1}},"t":{"$type":["string","null"]}}`), math.Copysign(0, -1), 3, uint64(12345))
	f.Add("x", []byte(`[1,2]`), math.NaN(), 1<<40, uint64(1))
	f.Add("k", []byte(`{"b":1,"a":2,"b":"\u003c"}`), 0.5, 2, uint64(3))
	f.Fuzz(func(t *testing.T, s string, doc []byte, x float64, n int, seed uint64) {
		g := newGen(seed, uint64(n))
		res := g.result()
		m := &res.Metrics
		m.Arguments.F1 = x
		m.ToolCorrectness.ExtraTools = append(m.ToolCorrectness.ExtraTools, s)
		m.Efficiency.TotalCalls = n
		if res.Checks.Items != nil {
			res.Checks.Items = append(res.Checks.Items, engine.Check{Name: s, Status: engine.CheckStatus(s), Detail: s, Calls: []int{n},
				Findings: []engine.Finding{{Call: n, Path: s, Value: s}}})
		}
		res.Issues = append(res.Issues, engine.Issue{Kind: s, Tool: s, Problem: s, Fix: s, Calls: []int{n}})
		res.FinalAnswer = &s
		call := engine.ToolCall{Tool: s, ID: s, ArgsRaw: s}
		if v, err := jsondoc.Parse(doc); err == nil {
			call.Args, call.Result = v, v
			// As a contract would hold it: matchers built from the document.
			var call0 engine.ExpectedCall
			if gc, err := engine.ContractFromValue([]any{map[string]any{"tool": "t", "args": v.Any()}}); err == nil && len(gc.Required) == 1 && gc.Required[0].Call != nil {
				call0 = *gc.Required[0].Call
			} else if obj, ok := v.Any().(map[string]any); ok {
				call0 = engine.ExpectedCall{Tool: s, Args: engine.NewArgs(obj)}
			}
			res.ExpectedCalls = append(res.ExpectedCalls, call0)
			if m.Contract == nil {
				m.Contract = &engine.ContractMetrics{}
			}
			m.Contract.Alternatives.Chosen = append(m.Contract.Alternatives.Chosen, engine.ChosenOption{Group: v.Any(), Option: n, Calls: []engine.ExpectedCall{call0}})
		}
		res.TraceCalls = append(res.TraceCalls, call)
		res.ScoredCalls = append(res.ScoredCalls, call)
		res.ScoredIndexes = append(res.ScoredIndexes, len(res.TraceCalls)-1)
		compareResult(t, "fuzz", res)
	})
}

// BenchmarkAppendResult measures writing a result: its stored parts as
// the service and regrades store them (scored indexes, metrics, checks,
// issues, trace and scored calls, expected calls) and the whole result as
// `toolscore eval --json` saves it; impl=json with encoding/json,
// impl=append with the writers.
func BenchmarkAppendResult(b *testing.B) {
	for _, s := range []workload.Size{workload.Medium, workload.Large} {
		c, err := engine.ParseContract(workload.Contract(s))
		if err != nil {
			b.Fatal(err)
		}
		p, err := format.Parse(workload.PlainTrace(s), "")
		if err != nil {
			b.Fatal(err)
		}
		res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{SecretScanner: secretScanner})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s.Name+"/parts/impl=json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range []any{nonNil(res.ScoredIndexes), res.Metrics, res.Checks, nonNil(res.Issues), nonNil(res.TraceCalls), nonNil(res.ScoredCalls), nonNil(res.ExpectedCalls)} {
					if _, err := json.Marshal(v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(s.Name+"/parts/impl=append", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = resultjson.AppendInts(nil, res.ScoredIndexes)
				if _, err := resultjson.Marshal.AppendMetrics(nil, &res.Metrics); err != nil {
					b.Fatal(err)
				}
				_ = resultjson.Marshal.AppendChecks(nil, &res.Checks)
				_ = resultjson.Marshal.AppendIssues(nil, res.Issues)
				_, _ = resultjson.Marshal.AppendCalls(nil, res)
				if _, err := resultjson.Marshal.AppendExpectedCalls(nil, res.ExpectedCalls); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.Name+"/result/impl=json", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(res); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.Name+"/result/impl=append", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				if buf, err = resultjson.NoHTML.AppendResult(buf[:0], res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
