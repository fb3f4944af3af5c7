package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParseContract feeds arbitrary documents to the contract loader: it
// must never panic, must return either a contract or a located error, and
// a contract it accepts must evaluate against an empty trace.
func FuzzParseContract(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"tool":"a"}]`, `{"calls":[{"tool":"a","args":{}}]}`,
		`{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$regex":"^a"}}},{"id":"g","alternatives":[[{"tool":"b"}],{"tool":"c"}]}],"optional":[{"tool":"d"}],"forbidden":[{"tool":"e","reason":"no"}],"weights":{"required_call_recall":0.3},"min_score":0.9}`,
		`{"required":[{"tool":"a","args":{"n":{"$approx":{"value":1,"rel":0.1}},"t":{"$type":["string","null"]},"o":{"$one_of":[1,{"$contains":"x"}]},"y":{"$any":true}}}]}`,
		`{"required":[{"alternatives":[]}]}`, `{"contract_version":3}`, `{"required":[{"tool":"a","args":{"x":{"$nope":1}}}]}`,
		`{`, `"x"`, `null`, `{"required":[{"tool":"a","args":{"x":{"$regex":"("}}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseContract(data)
		if err != nil {
			var se *SyntaxError
			var ve *ValidationError
			if !errors.As(err, &se) && !errors.As(err, &ve) {
				t.Fatalf("ParseContract error %T %v is neither a SyntaxError nor a ValidationError", err, err)
			}
			return
		}
		if c.Combinations() < 1 || c.Combinations() > MaxCombinations {
			t.Fatalf("Combinations() = %d", c.Combinations())
		}
		if _, err := Evaluate(context.Background(), c, Trace{Calls: []ToolCall{{Tool: "a"}}}, Options{SecretScanner: testSecrets}); err != nil {
			t.Fatalf("Evaluate on an accepted contract: %v", err)
		}
	})
}

// FuzzCompare compares arbitrary JSON values (and matchers built from
// them): never a panic, and every plain value equals itself in both modes.
func FuzzCompare(f *testing.F) {
	for _, p := range [][2]string{
		{`1`, `1.0`}, {`" a "`, `"a"`}, {`true`, `1`}, {`{"a":[1,{"b":null}]}`, `{"a":[1,{"b":null}]}`},
		{`{"$regex":"^x"}`, `"xy"`}, {`{"$approx":{"value":1e308,"rel":10}}`, `-1e308`}, {`123456789012345678901234567890`, `1.2345678901234568e29`},
		{`{"$type":"integer"}`, `1e400`}, {`{"$contains":{"$one_of":[1,2]}}`, `[3,2]`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, e, a []byte) {
		ev, err1 := DecodeJSON(e)
		av, err2 := DecodeJSON(a)
		if err1 != nil || err2 != nil {
			return
		}
		exp, _ := expectedOf(ev)
		for _, strict := range []bool{false, true} {
			opts := CompareOptions{Strict: strict}
			Compare(exp, av, opts)
			if !Compare(av, av, opts) && !hasMatcherKey(av) {
				b, _ := json.Marshal(av)
				t.Fatalf("Compare(x, x, strict=%v) = false for %s", strict, b)
			}
		}
	})
}

// hasMatcherKey reports whether v holds an object with a "$" key, which
// Compare would not treat as a matcher when given raw (unparsed).
func hasMatcherKey(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if len(k) > 0 && k[0] == '$' || hasMatcherKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasMatcherKey(e) {
				return true
			}
		}
	}
	return false
}
