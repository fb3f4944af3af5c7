package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mustContract parses a contract or gold file from JSON text.
func mustContract(tb testing.TB, s string) *Contract {
	tb.Helper()
	c, err := ParseContract([]byte(s))
	if err != nil {
		tb.Fatalf("ParseContract: %v", err)
	}
	return c
}

// mustTrace decodes a plain trace {"calls": [...], "final_answer"?} or a
// bare list of calls, numbers as json.Number.
func mustTrace(tb testing.TB, s string) Trace {
	tb.Helper()
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		s = `{"calls":` + s + `}`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var t Trace
	if err := dec.Decode(&t); err != nil {
		tb.Fatalf("decode trace: %v", err)
	}
	return t
}

func mustEvaluate(tb testing.TB, c *Contract, t Trace, opts Options) *EvaluationResult {
	tb.Helper()
	res, err := Evaluate(context.Background(), c, t, opts)
	if err != nil {
		tb.Fatalf("Evaluate: %v", err)
	}
	return res
}

func readFile(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestSeedExample checks the figures SPEC section 4 states for the seed's
// flight example.
func TestSeedExample(t *testing.T) {
	c := mustContract(t, readFile(t, "testdata/seed/contract.json"))
	tr := mustTrace(t, readFile(t, "testdata/seed/trace.json"))

	res := mustEvaluate(t, c, tr, Options{SecretScanner: testSecrets})
	// With the contract's required_call_recall 0.3 merged in: reserve_seat
	// path (1 - 0.3/(7*1.3)) and book_flight path (0.74/1.3).
	wantReserve, wantBook := 1-0.3/(7*1.3), 0.74/1.3
	cm := res.Metrics.Contract
	if cm == nil {
		t.Fatal("contract_metrics missing")
	}
	got := []float64{cm.Alternatives.Combinations[0].Score, cm.Alternatives.Combinations[1].Score}
	if math.Abs(got[0]-wantBook) > 1e-12 || math.Abs(got[1]-wantReserve) > 1e-12 {
		t.Errorf("combination scores = %v, want [%v %v]", got, wantBook, wantReserve)
	}
	if math.Abs(res.Score-wantReserve) > 1e-12 || res.Grade != GradeA || !res.Passed {
		t.Errorf("score, grade, passed = %v, %s, %v; want %v, A, true", res.Score, res.Grade, res.Passed, wantReserve)
	}
	wantChosen := []ChosenOption{{Group: "book", Option: 1, Calls: c.Required[1].Group.Options[1]}}
	if diff := cmp.Diff(wantChosen, cm.Alternatives.Chosen, cmp.Comparer(func(a, b *Regex) bool { return a.re.String() == b.re.String() })); diff != "" {
		t.Errorf("chosen (-want +got):\n%s", diff)
	}
	if !cmp.Equal(cm.OptionalMatched, []int{1}) || !cmp.Equal(res.ScoredIndexes, []int{0, 2}) {
		t.Errorf("optional_matched, scored = %v, %v; want [1], [0 2]", cm.OptionalMatched, res.ScoredIndexes)
	}
	if cm.RequiredCount != 2 || cm.OptionalCount != 1 || cm.ForbiddenCount != 1 || cm.ContractVersion != 2 || cm.MinScore != 0.9 || !cm.Passed {
		t.Errorf("contract_metrics counts = %+v", cm)
	}
	wantArgs := ArgumentMetrics{Precision: 0.75, Recall: 1, F1: 6.0 / 7}
	if diff := cmp.Diff(wantArgs, res.Metrics.Arguments, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-15 })); diff != "" {
		t.Errorf("argument metrics (-want +got):\n%s", diff)
	}

	// With the default weights (SPEC: 0.957 and 0.590).
	c.Weights = nil
	res = mustEvaluate(t, c, tr, Options{SecretScanner: testSecrets})
	got = []float64{res.Metrics.Contract.Alternatives.Combinations[0].Score, res.Metrics.Contract.Alternatives.Combinations[1].Score}
	if math.Abs(got[0]-0.59) > 1e-12 || math.Abs(got[1]-(0.4+0.3*6/7+0.2+0.1)) > 1e-12 {
		t.Errorf("default-weight combination scores = %v, want [0.59 0.957142...]", got)
	}

	// The gold file (search_flights then book_flight) fails: 38.3%.
	gold := mustContract(t, readFile(t, "testdata/seed/gold.json"))
	res = mustEvaluate(t, gold, tr, Options{SecretScanner: testSecrets})
	// S = all three calls: selection 1/3; arguments: destination correct,
	// date unexpected, flight_id missing: P=1/2, R=1/2; sequence 1-2/3;
	// redundant 2/3.
	want := 0.4*(1.0/3) + 0.3*0.5 + 0.2*(1.0/3) + 0.1*(1.0/3)
	if math.Abs(res.Score-want) > 1e-12 || res.Grade != GradeF || res.Passed || res.Metrics.Contract != nil {
		t.Errorf("gold: score, grade, passed = %v, %s, %v; want %v (38.3%%), F, false, no contract_metrics", res.Score, res.Grade, res.Passed, want)
	}
}

func TestCombinationChoiceAndTies(t *testing.T) {
	// Two options that score the same: the tie goes to the first declared.
	c := mustContract(t, `{"contract_version":2,"required":[{"alternatives":[{"tool":"a"},{"tool":"b"}]}],"alternatives":[{"id":"second","alternatives":[[{"tool":"x"}],[{"tool":"y"},{"tool":"z"}]]}]}`)
	if c.Combinations() != 4 {
		t.Fatalf("Combinations() = %d, want 4", c.Combinations())
	}
	res := mustEvaluate(t, c, mustTrace(t, `[{"tool":"c","args":{}}]`), Options{SecretScanner: testSecrets})
	cm := res.Metrics.Contract
	var opts [][]int
	for _, cs := range cm.Alternatives.Combinations {
		opts = append(opts, cs.Options)
	}
	if diff := cmp.Diff([][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}}, opts); diff != "" {
		t.Errorf("enumeration order (-want +got):\n%s", diff)
	}
	if cm.Alternatives.Chosen[0].Group != 0 || cm.Alternatives.Chosen[0].Option != 0 || cm.Alternatives.Chosen[1].Group != "second" || cm.Alternatives.Chosen[1].Option != 0 {
		t.Errorf("chosen = %+v, want group 0 option 0, group second option 0", cm.Alternatives.Chosen)
	}
	// A trace that follows the later options picks them.
	res = mustEvaluate(t, c, mustTrace(t, `[{"tool":"b"},{"tool":"y"},{"tool":"z"}]`), Options{SecretScanner: testSecrets})
	if ch := res.Metrics.Contract.Alternatives.Chosen; ch[0].Option != 1 || ch[1].Option != 1 || res.Score < 1-1e-12 {
		t.Errorf("chosen = %+v score %v, want options 1,1 and score 1", ch, res.Score)
	}
}

func TestOptionalAndForbidden(t *testing.T) {
	c := mustContract(t, `{"contract_version":2,
	  "required":[{"tool":"search","args":{"q":"x"}},{"tool":"search","args":{"q":"y"}}],
	  "optional":[{"tool":"search","args":{"q":{"$regex":"^z"}}},{"tool":"weather"}],
	  "forbidden":[{"tool":"delete","args":{"force":true}}]}`)
	tr := mustTrace(t, `[
	  {"tool":"weather","args":{"city":"Lisbon"}},
	  {"tool":"search","args":{"q":"x"}},
	  {"tool":"search","args":{"q":"zz"}},
	  {"tool":"search","args":{"q":"y"}},
	  {"tool":"search","args":{"q":"zzz"}},
	  {"tool":"delete","args":{"force":false}},
	  {"tool":"delete","args":{"force":true,"id":1}}]`)
	sc := newScorer(c, &tr, CompareOptions{}, DefaultWeights)
	defer sc.release()
	sc.use(nil)
	ev := sc.evaluation(Options{SecretScanner: testSecrets, Forbidden: []ForbiddenCall{{Tool: "weather", Reason: "no weather today"}}})
	// search #2 ("zz") fills the second expected search although it also
	// matches an optional entry: calls are taken in order.
	if !cmp.Equal(ev.filledBy, []int{1, 2}) || !cmp.Equal(ev.optional, []int{0, 4}) || !cmp.Equal(ev.scored, []int{1, 2, 3, 5, 6}) {
		t.Errorf("filledBy, optional, scored = %v, %v, %v; want [1 2], [0 4], [1 2 3 5 6]", ev.filledBy, ev.optional, ev.scored)
	}
	// Satisfaction is by arguments, in order: "y" is satisfied by call 3.
	if !cmp.Equal(ev.satisfiedBy, []int{1, 3}) {
		t.Errorf("satisfiedBy = %v, want [1 3]", ev.satisfiedBy)
	}
	// Forbidden rules see every call, optional ones included; option
	// rules are added to the contract's.
	if diff := cmp.Diff([]violation{{call: 0, rule: 1}, {call: 6, rule: 0}}, ev.violations, cmp.AllowUnexported(violation{})); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestArgumentEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		gold      string
		trace     string
		p, r, f1  float64
		recall    float64 // required_call_recall
		selection float64
	}{
		{"unchecked args paired is vacuous", `[{"tool":"a"}]`, `[{"tool":"a","args":{"x":1}}]`, 1, 1, 1, 1, 1},
		{"empty vs empty is vacuous", `[{"tool":"a","args":{}}]`, `[{"tool":"a","args":null}]`, 1, 1, 1, 1, 1},
		{"empty expected but args given", `[{"tool":"a","args":{}}]`, `[{"tool":"a","args":{"x":1}}]`, 0, 0, 0, 1, 1},
		{"unreadable args never satisfy", `[{"tool":"a","args":{}}]`, `[{"tool":"a","args":null,"args_raw":"{oops","args_error":"invalid JSON"}]`, 0, 0, 0, 0, 1},
		{"both empty deviation", `[]`, `[]`, 1, 1, 1, 1, 1},
		{"nothing called", `[{"tool":"a","args":{"x":1}}]`, `[]`, 0, 0, 0, 0, 0},
		{"pair with later call", `[{"tool":"a","args":{"x":1}},{"tool":"b","args":{"y":2}}]`, `[{"tool":"b","args":{"y":2}},{"tool":"a","args":{"x":1}},{"tool":"b","args":{"y":2}}]`, 1, 1, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustEvaluate(t, mustContract(t, tc.gold), mustTrace(t, tc.trace), Options{SecretScanner: testSecrets})
			m := res.Metrics
			got := []float64{m.Arguments.Precision, m.Arguments.Recall, m.Arguments.F1, m.RequiredCallRecall, m.SelectionAccuracy}
			want := []float64{tc.p, tc.r, tc.f1, tc.recall, tc.selection}
			if !cmp.Equal(got, want, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })) {
				t.Errorf("P, R, F1, recall, selection = %v, want %v", got, want)
			}
		})
	}
}

func TestParseContractErrors(t *testing.T) {
	nine := `{"required":[` + strings.Repeat(`{"alternatives":[{"tool":"a"},{"tool":"b"}]},`, 8) + `{"alternatives":[{"tool":"a"},{"tool":"b"}]}]}`
	tests := []struct {
		name, doc string
		want      []FieldError
	}{
		{"version", `{"contract_version": 3, "required": []}`, []FieldError{{"/contract_version", "contract_version must be 2"}}},
		{"unknown matcher", `{"required":[{"tool":"a","args":{"x":{"$regx":"a"}}}]}`, []FieldError{{"/required/0/args/x/$regx", `unknown matcher "$regx" (valid: $any, $approx, $contains, $one_of, $regex, $type)`}}},
		{"empty group", `{"required":[{"alternatives":[]}]}`, []FieldError{{"/required/0/alternatives", "an alternatives group needs at least one option"}}},
		{"empty option", `{"optional":[],"alternatives":[{"alternatives":[[]]}]}`, []FieldError{{"/alternatives/0/alternatives/0", "an option needs at least one call"}}},
		{"bad regex", `{"required":[{"tool":"a","args":{"x":{"$regex":"("}}}]}`, []FieldError{{"/required/0/args/x/$regex", "regex does not compile: error parsing regexp: missing closing ): `(`"}}},
		{"weights", `{"required":[],"weights":{"foo":1,"argument_f1":-1}}`, []FieldError{{"/weights", "unknown key 'foo'"}, {"/weights/argument_f1", "must be >= 0 but found -1"}}},
		{"zero weights", `{"required":[{"tool":"a"}],"weights":{"selection_accuracy":0,"argument_f1":0,"sequence_accuracy":0,"redundant_rate":0}}`, []FieldError{{"/weights", "weights must not all be zero"}}},
		{"approx rel out of float64", `{"required":[{"tool":"a","args":{"x":{"$approx":{"value":5,"rel":1e999}}}}]}`, []FieldError{{"/required/0/args/x/$approx/rel", "rel must be a finite number, got 1e999 (out of float64's range)"}}},
		{"approx abs out of float64", `{"required":[{"tool":"a","args":{"x":{"$approx":{"value":5,"abs":-1e999}}}}]}`, []FieldError{{"/required/0/args/x/$approx/abs", "abs must be a finite number, got -1e999 (out of float64's range)"}}},
		{"approx rel negative", `{"required":[{"tool":"a","args":{"x":{"$approx":{"value":5,"rel":-0.1}}}}]}`, []FieldError{{"/required/0/args/x/$approx/rel", "rel must be a non-negative number"}}},
		{"min score", `{"required":[],"min_score":1.5}`, []FieldError{{"/min_score", "must be <= 1 but found 1.5"}}},
		{"too many combinations", nine, []FieldError{{"/required", "9 alternatives groups (group 0: 2 options, group 1: 2, group 2: 2, group 3: 2, group 4: 2, group 5: 2, group 6: 2, group 7: 2, group 8: 2) make 512 combinations, over the limit of 256"}}},
		// The place is the list holding the group that passes the limit;
		// ids are named as written (a number's literal, a control
		// character quoted so the message stays one line).
		{"too many combinations across lists", `{"required":[{"tool":"x"},{"id":"a","alternatives":[{"tool":"a"},{"tool":"b"}]},{"alternatives":[{"tool":"a"},{"tool":"b"},{"tool":"c"}]}],` +
			`"alternatives":[{"id":7,"alternatives":[{"tool":"a"},{"tool":"b"},{"tool":"c"},{"tool":"d"}]},{"id":"d\n","alternatives":[{"tool":"a"},{"tool":"b"},{"tool":"c"},{"tool":"d"},{"tool":"e"},{"tool":"f"}]},{"alternatives":[{"tool":"a"},{"tool":"b"}]}]}`,
			[]FieldError{{"/alternatives", `5 alternatives groups (a: 2 options, group 1: 3, 7: 4, "d\n": 6, group 4: 2) make 288 combinations, over the limit of 256`}}},
		{"combinations past int64", `{"contract_version":2,"alternatives":[` + strings.Repeat(`{"alternatives":[{"tool":"a"},{"tool":"b"}]},`, 63) + `{"alternatives":[{"tool":"a"},{"tool":"b"}]}]}`,
			[]FieldError{{"/alternatives", "64 alternatives groups (group 0: 2 options, " + func() string {
				var b strings.Builder
				for i := 1; i < 64; i++ {
					fmt.Fprintf(&b, "group %d: 2, ", i)
				}
				return strings.TrimSuffix(b.String(), ", ")
			}() + ") make 18446744073709551616 combinations, over the limit of 256"}}},
		{"matcher beside keys", `{"required":[{"tool":"a","args":{"x":{"$regex":"a","b":1}}}]}`, []FieldError{{"/required/0/args/x", "a matcher object must have exactly one key, got $regex, b"}}},
		{"schema and matcher errors together", `{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$regex":"("}}},{"tool":"b","oops":1}],"min_score":2}`, []FieldError{{"/min_score", "must be <= 1 but found 2"}, {"/required/0/args/x/$regex", "regex does not compile: error parsing regexp: missing closing ): `(`"}, {"/required/1", "unknown key 'oops'"}}},
		{"gold missing tool", `[{"args":{}}]`, []FieldError{{"/0/tool", "tool must be a non-empty string"}}},
		{"gold not an object", `{"calls":[1]}`, []FieldError{{"/calls/0", "an expected call must be an object, got a number"}}},
		{"gold bad args", `[{"tool":"a","args":[1]}]`, []FieldError{{"/0/args", "args must be an object or null, got an array"}}},
		{"neither", `{"foo":1}`, []FieldError{{"", "neither a contract (an object with contract_version, required or optional) nor a gold file (an array of calls or an object with calls)"}}},
		{"scalar", `"x"`, []FieldError{{"", "expected a JSON array (gold file) or object (contract), got a string"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseContract([]byte(tc.doc))
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidContract) {
				t.Fatalf("ParseContract(%s) error = %v, want a contract ValidationError", tc.doc, err)
			}
			if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseContractUnknownKeysSorted checks that a list of unknown keys
// reads the same every time: the schema library lists them in a Go map's
// order, which changes from run to run.
func TestParseContractUnknownKeysSorted(t *testing.T) {
	doc := `{"contract_version":2,"zeta":1,"alpha":2,"mid":3,"it's":4,"required":[{"tool":"a","why":1,"args":{},"alternatives":5}]}`
	want := []FieldError{
		{"", `unknown key 'alpha', 'it\'s', 'mid', 'zeta'`},
		{"/required/0", "unknown key 'args', 'tool', 'why'"},
		{"/required/0/alternatives", "expected array, but got number"},
	}
	for i := range 50 {
		_, err := ParseContract([]byte(doc))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("ParseContract error = %v, want a ValidationError", err)
		}
		if diff := cmp.Diff(want, ve.Errors); diff != "" {
			t.Fatalf("parse %d: errors (-want +got):\n%s", i, diff)
		}
	}
}

func TestSortedNames(t *testing.T) {
	for in, want := range map[string]string{
		"'b'":                 "'b'",
		"'b', 'a'":            "'a', 'b'",
		`'x\'y', 'a, b', 'c'`: `'a, b', 'c', 'x\'y'`,
		"'b', 'a":             "'b', 'a",
		"b, a":                "b, a",
		"'b'; 'a'":            "'b'; 'a'",
		"":                    "",
	} {
		if got := sortedNames(in); got != want {
			t.Errorf("sortedNames(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseContractSyntaxError(t *testing.T) {
	_, err := ParseContract([]byte("{\n  \"required\": [}\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Column != 16 {
		t.Fatalf("error = %#v, want a SyntaxError at line 2:16", err)
	}
	for _, doc := range []string{"", "   ", `{"a":1} x`} {
		if _, err := ParseContract([]byte(doc)); !errors.As(err, &se) {
			t.Errorf("ParseContract(%q) error = %v, want a SyntaxError", doc, err)
		}
	}
}

func TestEvaluateOptionsErrors(t *testing.T) {
	c := mustContract(t, `[{"tool":"a"}]`)
	bad := -0.1
	for _, opts := range []Options{
		{Weights: map[string]float64{"speed": 1}},
		{Weights: map[string]float64{"argument_f1": -1}},
		{Weights: map[string]float64{"argument_f1": math.Inf(1)}},
		{Weights: map[string]float64{"selection_accuracy": 0, "argument_f1": 0, "sequence_accuracy": 0, "redundant_rate": 0}},
		{MinScore: &bad},
	} {
		if _, err := Evaluate(context.Background(), c, Trace{}, opts); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Evaluate(%+v) error = %v, want ErrInvalidOptions", opts, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Evaluate(ctx, c, Trace{}, Options{SecretScanner: testSecrets}); !errors.Is(err, context.Canceled) {
		t.Errorf("Evaluate(cancelled) error = %v, want context.Canceled", err)
	}
}

func TestGradeFor(t *testing.T) {
	for _, tc := range []struct {
		score float64
		want  Grade
	}{{1, GradeA}, {0.8999999999999999, GradeA}, {0.8999, GradeB}, {0.8, GradeB}, {0.7999999999999999, GradeB}, {0.7, GradeC}, {0.6, GradeD}, {0.5999, GradeF}, {0, GradeF}} {
		if got := GradeFor(tc.score); got != tc.want {
			t.Errorf("GradeFor(%v) = %s, want %s", tc.score, got, tc.want)
		}
	}
}

func TestSyntaxErrorNamesTheCharacter(t *testing.T) {
	_, err := ParseContract([]byte("[{\"tool\":\"é\"},\n{\"tool\":€}]"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Error() != "line 2:9: invalid character '€' looking for beginning of value (at /1/tool)" {
		t.Errorf("error = %v, want line 2:9 naming '€'", err)
	}
}

func TestWeightsOverflow(t *testing.T) {
	_, err := Evaluate(context.Background(), mustContract(t, `[{"tool":"a"}]`), Trace{}, Options{SecretScanner: testSecrets, Weights: map[string]float64{"selection_accuracy": 1e308, "argument_f1": 1e308}})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Errors[0].Message != "weights are too large: their sum overflows" {
		t.Errorf("error = %v, want the overflow error", err)
	}
}
