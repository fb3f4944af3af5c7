package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// evenMatcher matches an even integer; it has no JSON form of its own.
type evenMatcher struct{}

func (evenMatcher) Match(actual any, _ CompareOptions) bool {
	n, ok := actual.(json.Number)
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i%2 == 0
}

// startsWith matches a string starting with p and writes its own JSON.
type startsWith struct{ p string }

func (m startsWith) Match(actual any, _ CompareOptions) bool {
	s, ok := actual.(string)
	return ok && strings.HasPrefix(s, m.p)
}

func (m startsWith) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"prefix": m.p})
}

func evenFunc(arg any) (Matcher, error) {
	if arg != true {
		return nil, fmt.Errorf("takes true, got %v", arg)
	}
	return evenMatcher{}, nil
}

func TestCustomMatcherGrades(t *testing.T) {
	contract := `{"contract_version":2,"required":[{"tool":"pay","args":{"amount":{"$even":true},"to":"bob"}}]}`
	c, err := ParseContractWith([]byte(contract), ParseOptions{Matchers: map[string]MatcherFunc{"$even": evenFunc}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amount string
		f1     float64
		grade  Grade
	}{{"4", 1, GradeA}, {"3", 0.5, GradeB}} {
		res := mustEvaluate(t, c, mustTrace(t, `[{"tool":"pay","args":{"amount":`+tc.amount+`,"to":"bob"}}]`), Options{})
		if res.Metrics.Arguments.F1 != tc.f1 || res.Grade != tc.grade {
			t.Errorf("amount %s: F1 %v grade %s, want %v %s", tc.amount, res.Metrics.Arguments.F1, res.Grade, tc.f1, tc.grade)
		}
		got, err := json.Marshal(res.ExpectedCalls)
		if err != nil {
			t.Fatal(err)
		}
		if want := `[{"tool":"pay","args":{"amount":{"$even":true},"to":"bob"}}]`; string(got) != want {
			t.Errorf("expected_calls = %s, want %s", got, want)
		}
	}
	// Compare (the uncompiled path) agrees with the compiled one.
	args := c.Required[0].Call.Args.Map()
	if !Compare(args["amount"], json.Number("10"), CompareOptions{}) || Compare(args["amount"], json.Number("7"), CompareOptions{}) {
		t.Error("Compare does not apply the custom matcher")
	}
}

// A custom operator built on a built-in matcher grades exactly as the
// built-in operator does: the same metrics, checks and issues.
func TestCustomMatcherEqualsBuiltin(t *testing.T) {
	mine := map[string]MatcherFunc{
		"$re": func(arg any) (Matcher, error) {
			s, ok := arg.(string)
			if !ok {
				return nil, errors.New("takes a pattern")
			}
			return NewRegex(s)
		},
		"$pick": func(arg any) (Matcher, error) {
			list, ok := arg.([]any)
			if !ok {
				return nil, errors.New("takes an array")
			}
			return &OneOf{Candidates: list}, nil
		},
	}
	const body = `{"contract_version":2,"required":[
		{"tool":"search","args":{"city":{"%s":"^(NYC|JFK)$"},"when":{"%s":["today",{"%s":"^tom"}]}}},
		{"tool":"book","args":{"id":{"$any":true}}}],
		"forbidden":[{"tool":"delete","args":{"id":{"%s":"x"}}}]}`
	builtin := mustContract(t, fmt.Sprintf(body, "$regex", "$one_of", "$regex", "$regex"))
	custom, err := ParseContractWith([]byte(fmt.Sprintf(body, "$re", "$pick", "$re", "$re")), ParseOptions{Matchers: mine})
	if err != nil {
		t.Fatal(err)
	}
	for _, trace := range []string{
		`[{"tool":"search","args":{"city":"NYC","when":"tomorrow"}},{"tool":"book","args":{"id":7}}]`,
		`[{"tool":"search","args":{"city":"LAX","when":"today"}},{"tool":"delete","args":{"id":"x1"}},{"tool":"book","args":{}}]`,
		`[{"tool":"search","args":{"city":"JFK","when":"monday"}},{"tool":"search","args":{"city":"NYC","when":"today"}}]`,
	} {
		want := mustEvaluate(t, builtin, mustTrace(t, trace), Options{})
		got := mustEvaluate(t, custom, mustTrace(t, trace), Options{})
		if want.Score != got.Score || want.Passed != got.Passed {
			t.Errorf("%s: score %v passed %v, want %v %v", trace, got.Score, got.Passed, want.Score, want.Passed)
		}
		if diff := cmp.Diff(want.Metrics, got.Metrics); diff != "" {
			t.Errorf("%s: metrics (-builtin +custom):\n%s", trace, diff)
		}
		if diff := cmp.Diff(want.Checks, got.Checks); diff != "" {
			t.Errorf("%s: checks (-builtin +custom):\n%s", trace, diff)
		}
		if diff := cmp.Diff(want.Issues, got.Issues); diff != "" {
			t.Errorf("%s: issues (-builtin +custom):\n%s", trace, diff)
		}
	}
}

func TestCustomMatcherOwnJSON(t *testing.T) {
	c, err := ParseContractWith([]byte(`[{"tool":"open","args":{"path":{"$prefix":"/tmp/"}}}]`), ParseOptions{Matchers: map[string]MatcherFunc{
		"$prefix": func(arg any) (Matcher, error) { return startsWith{arg.(string)}, nil },
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := mustEvaluate(t, c, mustTrace(t, `[{"tool":"open","args":{"path":"/tmp/a"}}]`), Options{})
	got, _ := json.Marshal(res.ExpectedCalls)
	if want := `[{"tool":"open","args":{"path":{"prefix":"/tmp/"}}}]`; string(got) != want || res.Metrics.Arguments.F1 != 1 {
		t.Errorf("expected_calls = %s, F1 %v; want %s, 1", got, res.Metrics.Arguments.F1, want)
	}
}

func TestCustomMatcherErrors(t *testing.T) {
	even := map[string]MatcherFunc{"$even": evenFunc}
	tests := []struct {
		name, doc string
		opts      ParseOptions
		kind      error
		want      []FieldError
	}{
		{"function error", `[{"tool":"a","args":{"n":{"$even":1}}}]`, ParseOptions{Matchers: even}, ErrInvalidContract,
			[]FieldError{{"/0/args/n/$even", "$even: takes true, got 1"}}},
		{"nil matcher", `[{"tool":"a","args":{"n":{"$none":1}}}]`, ParseOptions{Matchers: map[string]MatcherFunc{"$none": func(any) (Matcher, error) { return nil, nil }}}, ErrInvalidContract,
			[]FieldError{{"/0/args/n/$none", "$none: the matcher function returned no matcher"}}},
		{"bad matcher inside", `[{"tool":"a","args":{"n":{"$even":{"$regex":"("}}}}]`, ParseOptions{Matchers: even}, ErrInvalidContract,
			[]FieldError{{"/0/args/n/$even/$regex", "regex does not compile: error parsing regexp: missing closing ): `(`"}}},
		{"unknown lists custom", `[{"tool":"a","args":{"n":{"$odd":true}}}]`, ParseOptions{Matchers: even}, ErrInvalidContract,
			[]FieldError{{"/0/args/n/$odd", `unknown matcher "$odd" (valid: $any, $approx, $contains, $even, $one_of, $regex, $type)`}}},
		{"not without options", `[{"tool":"a","args":{"n":{"$even":true}}}]`, ParseOptions{}, ErrInvalidContract,
			[]FieldError{{"/0/args/n/$even", `unknown matcher "$even" (valid: $any, $approx, $contains, $one_of, $regex, $type)`}}},
		{"bad names", `[]`, ParseOptions{Matchers: map[string]MatcherFunc{"$regex": evenFunc, "even": evenFunc, "$": evenFunc, "$nil": nil, "$ok": evenFunc}}, ErrInvalidOptions,
			[]FieldError{
				{"/matchers/$", `custom matcher name "$" must be "$" followed by a name`},
				{"/matchers/$nil", `custom matcher "$nil" has no function`},
				{"/matchers/$regex", `custom matcher "$regex" is a built-in matcher`},
				{"/matchers/even", `custom matcher name "even" must be "$" followed by a name`},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseContractWith([]byte(tc.doc), tc.opts)
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, tc.kind) {
				t.Fatalf("error = %v, want a ValidationError matching %v", err, tc.kind)
			}
			if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A custom matcher's JSON form is searched for secrets and redacted like
// a built-in one's, and it keeps matching.
func TestCustomMatcherRedacted(t *testing.T) {
	c, err := ParseContractWith([]byte(`[{"tool":"login","args":{"n":{"$even":"kid-Zq8vR2kL9xT4"}}}]`), ParseOptions{Matchers: map[string]MatcherFunc{
		"$even": func(any) (Matcher, error) { return evenMatcher{}, nil },
	}})
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeScanner{secrets: map[string]string{"Zq8vR2kL9xT4": "fake"}}
	res, err := Evaluate(context.Background(), c, mustTrace(t, `[{"tool":"login","args":{"n":2}}]`), Options{SecretScanner: fake})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.ExpectedCalls)
	if want := `[{"tool":"login","args":{"n":{"$even":"kid-[REDACTED:fake]"}}}]`; string(got) != want || res.Metrics.Arguments.F1 != 1 {
		t.Errorf("expected_calls = %s, F1 %v; want %s, 1", got, res.Metrics.Arguments.F1, want)
	}
}
