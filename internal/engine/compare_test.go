package engine

import (
	"github.com/toolscore/toolscore/internal/jsondoc"

	"encoding/json"
	"testing"
)

// mustValue decodes a JSON literal with numbers as json.Number.
func mustValue(tb testing.TB, s string) any {
	tb.Helper()
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		tb.Fatalf("DecodeJSON(%q): %v", s, err)
	}
	return v
}

// mustExpected decodes a JSON literal and parses its matchers.
func mustExpected(tb testing.TB, s string) any {
	tb.Helper()
	v, errs := expectedOf(mustValue(tb, s))
	if len(errs) > 0 {
		tb.Fatalf("expected value %s: %v", s, errs)
	}
	return v
}

// expectedOf reads a decoded JSON value as a contract's expected value
// (matchers made), with the problems found.
func expectedOf(v any) (any, []FieldError) {
	data, err := jsondoc.AppendAny(nil, v)
	if err != nil {
		return nil, []FieldError{{"", err.Error()}}
	}
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return nil, []FieldError{{"", err.Error()}}
	}
	var p contractParser
	out := p.expected(doc)
	return out, p.errs
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name             string
		expected, actual string
		lenient, strict  bool
	}{
		{"equal ints", `1`, `1`, true, true},
		{"int vs float", `1`, `1.0`, true, false},
		{"float vs float", `2.50`, `2.5`, true, true},
		{"exponent is a float literal", `100`, `1e2`, true, false},
		{"different numbers", `1`, `2`, false, false},
		{"true never equals 1", `true`, `1`, false, false},
		{"1 never equals true", `1`, `true`, false, false},
		{"false never equals 0", `false`, `0`, false, false},
		{"big ints exact equal", `9007199254740993`, `9007199254740993`, true, true},
		{"big ints differ in last digit", `9007199254740993`, `9007199254740992`, false, false},
		{"big int vs nearest double", `9007199254740993`, `9007199254740992.0`, false, false},
		{"big int vs exact double", `9007199254740992`, `9007199254740992.0`, true, false},
		{"huge ints", `123456789012345678901234567890`, `123456789012345678901234567890`, true, true},
		{"negative zero", `0`, `-0.0`, true, false},
		{"trim ascii", `"paris"`, `"  paris\n"`, true, false},
		{"trim unicode white space", `"paris"`, `"\u00a0paris\u3000"`, true, false},
		{"zero width space is not white space", `"paris"`, `"\u200bparis"`, false, false},
		{"inner space kept", `"new york"`, `"new  york"`, false, false},
		{"case matters", `"Paris"`, `"paris"`, false, false},
		{"null", `null`, `null`, true, true},
		{"null vs empty string", `null`, `""`, false, false},
		{"nested trim and numbers", `{"a":[1," x "]}`, `{"a":[1.0,"x"]}`, true, false},
		{"object extra key", `{"a":1}`, `{"a":1,"b":2}`, false, false},
		{"object missing key", `{"a":1,"b":2}`, `{"a":1}`, false, false},
		{"array order", `[1,2]`, `[2,1]`, false, false},
		{"array length", `[1]`, `[1,1]`, false, false},
		{"string vs number", `"1"`, `1`, false, false},
		{"unicode", `"東京 🚀"`, `"東京 🚀"`, true, true},
		{"regex nested", `{"id":{"$regex":"^FL-\\d+$"}}`, `{"id":"FL-204"}`, true, true},
		{"regex anywhere", `{"$regex":"204"}`, `"FL-204-X"`, true, true},
		{"regex non-string", `{"$regex":"1"}`, `1`, false, false},
		{"contains substring", `{"$contains":"bon"}`, `"Lisbon"`, true, true},
		{"contains array element", `{"$contains":2}`, `[1,2.0,3]`, true, false},
		{"contains array matcher", `{"$contains":{"$regex":"^b"}}`, `["a","bc"]`, true, true},
		{"contains missing", `{"$contains":"x"}`, `["a"]`, false, false},
		{"contains non-string needle in string", `{"$contains":1}`, `"1"`, false, false},
		{"one_of", `{"$one_of":["a","b"]}`, `"b"`, true, true},
		{"one_of with matcher", `{"$one_of":[1,{"$type":"string"}]}`, `"z"`, true, true},
		{"one_of none", `{"$one_of":["a","b"]}`, `"c"`, false, false},
		{"any", `{"$any":true}`, `{"deep":[1]}`, true, true},
		{"any null", `{"$any":true}`, `null`, true, true},
		{"type string", `{"$type":"string"}`, `"x"`, true, true},
		{"type integer accepts 2.0", `{"$type":"integer"}`, `2.0`, true, true},
		{"type integer rejects 2.5", `{"$type":"integer"}`, `2.5`, false, false},
		{"type number", `{"$type":"number"}`, `2.5`, true, true},
		{"type boolean not number", `{"$type":"number"}`, `true`, false, false},
		{"type list", `{"$type":["null","array"]}`, `[]`, true, true},
		{"type object", `{"$type":"object"}`, `{}`, true, true},
		{"approx default rel", `{"$approx":3.0}`, `3.000001`, true, true},
		{"approx too far", `{"$approx":3.0}`, `3.01`, false, false},
		{"approx abs", `{"$approx":{"value":3,"abs":0.1}}`, `3.05`, true, true},
		{"approx rel", `{"$approx":{"value":100,"rel":0.01}}`, `101`, true, true},
		{"approx boolean", `{"$approx":1}`, `true`, false, false},
		{"approx string", `{"$approx":1}`, `"1"`, false, false},
		{"matcher at depth", `{"a":{"b":[{"$approx":1.5}]}}`, `{"a":{"b":[1.5000001]}}`, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustExpected(t, tc.expected)
			a := mustValue(t, tc.actual)
			if got := Compare(e, a, CompareOptions{}); got != tc.lenient {
				t.Errorf("Compare(%s, %s) = %v, want %v", tc.expected, tc.actual, got, tc.lenient)
			}
			if got := Compare(e, a, CompareOptions{Strict: true}); got != tc.strict {
				t.Errorf("Compare(%s, %s, strict) = %v, want %v", tc.expected, tc.actual, got, tc.strict)
			}
		})
	}
}

func TestCompareGoValues(t *testing.T) {
	// Callers building expectations in Go may use plain Go numbers.
	if !Compare(map[string]any{"n": 3, "f": 2.5}, mustValue(t, `{"n":3,"f":2.5}`), CompareOptions{Strict: true}) {
		t.Error("Go int and float64 should equal JSON 3 and 2.5")
	}
	if Compare(3, json.Number("3.0"), CompareOptions{Strict: true}) {
		t.Error("strict: Go int 3 should differ from 3.0")
	}
}

// prefixMatcher is a caller-defined Matcher.
type prefixMatcher string

func (p prefixMatcher) Match(actual any, _ CompareOptions) bool {
	s, ok := actual.(string)
	return ok && len(s) >= len(p) && s[:len(p)] == string(p)
}

func TestCustomMatcher(t *testing.T) {
	exp := map[string]any{"city": prefixMatcher("Lis")}
	if !Compare(exp, mustValue(t, `{"city":"Lisbon"}`), CompareOptions{}) {
		t.Error("custom matcher should match Lisbon")
	}
	if Compare(exp, mustValue(t, `{"city":"Porto"}`), CompareOptions{}) {
		t.Error("custom matcher should not match Porto")
	}
}

func TestMatcherJSON(t *testing.T) {
	for _, s := range []string{
		`{"$regex":"^FL-"}`,
		`{"$contains":"x"}`,
		`{"$one_of":["a",{"$any":true}]}`,
		`{"$any":true}`,
		`{"$type":"string"}`,
		`{"$type":["string","null"]}`,
		`{"$approx":{"abs":0.1,"rel":0.01,"value":3}}`,
	} {
		b, err := json.Marshal(mustExpected(t, s))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != s {
			t.Errorf("json.Marshal(%s) = %s", s, b)
		}
	}
}

func TestIsIntegralLiteral(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "1.0": true, "1.5": false, "15e-1": false, "150e-2": false, "100e-2": true, "1e2": true,
		"1.25e2": true, "1.255e2": false, "0.0": true, "-0.0e-5": true, "1e999999999": true, "1e-999999999": false,
		"1e99999999999999999999": true, "1e-99999999999999999999": false, "0e-99999999999999999999": true, "1.0000000000000000001": false,
	} {
		if got := isIntegralLiteral(s); got != want {
			t.Errorf("isIntegralLiteral(%q) = %v, want %v", s, got, want)
		}
	}
}
