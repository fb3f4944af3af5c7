package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// TestContractRepeatedForbidden is QA's case: a second "forbidden": []
// used to hide the first (the last one won), turning a FAIL into a PASS.
func TestContractRepeatedForbidden(t *testing.T) {
	const base = `{
  "contract_version": 2,
  "required": [{"tool": "read"}],
  "forbidden": [{"tool": "rm", "reason": "destructive"}]`
	trace := Trace{Calls: []ToolCall{{Tool: "read"}, {Tool: "rm"}}}
	c, err := ParseContract([]byte(base + "\n}"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), c, trace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Fatal("the contract with its forbidden rule passed a trace calling rm")
	}
	_, err = ParseContract([]byte(base + `,
  "forbidden": []
}`))
	want := []FieldError{{"/forbidden", `repeated key "forbidden" at line 5:3 (first at line 4:3): a contract must not repeat a key`}}
	checkFieldErrors(t, err, want)
}

func TestContractRepeatedKeys(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []FieldError
	}{
		{"expected call", `{"contract_version":2,"required":[{"tool":"a","tool":"b"}]}`,
			[]FieldError{{"/required/0/tool", `repeated key "tool" at line 1:47 (first at line 1:36): a contract must not repeat a key`}}},
		{"args", `{"contract_version":2,"required":[{"tool":"a","args":{"p":1,"p":2}}]}`,
			[]FieldError{{"/required/0/args/p", `repeated key "p" at line 1:61 (first at line 1:55): a contract must not repeat a key`}}},
		{"matcher", `{"contract_version":2,"required":[{"tool":"a","args":{"p":{"$regex":"^a","$regex":".*"}}}]}`,
			[]FieldError{{"/required/0/args/p/$regex", `repeated key "$regex" at line 1:74 (first at line 1:60): a contract must not repeat a key`}}},
		{"forbidden rule", `{"contract_version":2,"required":[{"tool":"a"}],"forbidden":[{"tool":"rm","args":{"f":true},"args":null}]}`,
			[]FieldError{{"/forbidden/0/args", `repeated key "args" at line 1:93 (first at line 1:75): a contract must not repeat a key`}}},
		{"alternatives", `{"contract_version":2,"required":[{"alternatives":[[{"tool":"a"}]],"alternatives":[]}]}`,
			[]FieldError{{"/required/0/alternatives", `repeated key "alternatives" at line 1:68 (first at line 1:36): a contract must not repeat a key`}}},
		{"weights", `{"contract_version":2,"required":[{"tool":"a"}],"weights":{"safety":1,"safety":0}}`,
			[]FieldError{{"/weights/safety", `repeated key "safety" at line 1:71 (first at line 1:60): a contract must not repeat a key`}}},
		{"two, in order", "{\"contract_version\": 2,\n \"required\": [{\"tool\": \"a\", \"tool\": \"b\"}],\n \"contract_version\": 2}",
			[]FieldError{
				{"/required/0/tool", `repeated key "tool" at line 2:29 (first at line 2:16): a contract must not repeat a key`},
				{"/contract_version", `repeated key "contract_version" at line 3:2 (first at line 1:2): a contract must not repeat a key`},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseContract([]byte(tc.doc))
			checkFieldErrors(t, err, tc.want)
		})
	}
}

// TestGoldRepeatedKeys: a gold file is read as Python Toolscore reads it
// (the last of a repeated key wins) inside args, but its own keys (a
// call's tool and args, the top-level calls) may not repeat.
func TestGoldRepeatedKeys(t *testing.T) {
	c, err := ParseContract([]byte(`[{"tool":"a","args":{"p":1,"p":2},"metadata":1,"metadata":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Required[0].Call.Args.Map(), map[string]any{"p": json.Number("2")}; !reflect.DeepEqual(got, want) {
		t.Errorf("args = %v, want %v (the last p)", got, want)
	}
	if want := []string{"/0/metadata"}; !reflect.DeepEqual(c.IgnoredKeys, want) {
		t.Errorf("IgnoredKeys = %q, want %q", c.IgnoredKeys, want)
	}
	// The gold file's own keys read as Python's json reads them, the last
	// one counting: the same calls as the document that gives only it.
	p1, err := jsondoc.ParseString(`{"p":1}`)
	if err != nil {
		t.Fatal(err)
	}
	trace := Trace{Calls: []ToolCall{{Tool: "a", Args: p1}, {Tool: "c"}}}
	for _, tc := range []struct {
		name, doc, last string
		tools           []string
	}{
		{"tool", `[{"tool":"a"},{"tool":"b","args":{},"tool":"c"}]`, `[{"tool":"a"},{"args":{},"tool":"c"}]`, []string{"a", "c"}},
		{"args", "[\n {\"tool\": \"a\", \"args\": {\"p\": 2}, \"args\": {\"p\": 1}}\n]", `[{"tool":"a","args":{"p":1}}]`, []string{"a"}},
		{"args null", `[{"tool":"a","args":{"p":2},"args":null}]`, `[{"tool":"a","args":null}]`, []string{"a"}},
		{"calls", `{"calls":[{"tool":"x"}],"calls":[{"tool":"c"}]}`, `{"calls":[{"tool":"c"}]}`, []string{"c"}},
		{"args in calls", `{"calls":[{"tool":"a","args":null,"args":{"p":2}}]}`, `{"calls":[{"tool":"a","args":{"p":2}}]}`, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseContract([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var tools []string
			for _, st := range c.Required {
				tools = append(tools, st.Call.Tool)
			}
			if !reflect.DeepEqual(tools, tc.tools) {
				t.Errorf("tools = %q, want %q", tools, tc.tools)
			}
			want, err := ParseContract([]byte(tc.last))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Evaluate(context.Background(), c, trace, Options{})
			if err != nil {
				t.Fatal(err)
			}
			exp, err := Evaluate(context.Background(), want, trace, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != exp.Score || !reflect.DeepEqual(got.Metrics, exp.Metrics) || !reflect.DeepEqual(got.Issues, exp.Issues) {
				t.Errorf("graded as score %v, metrics %+v; the last keys alone grade as %v, %+v", got.Score, got.Metrics, exp.Score, exp.Metrics)
			}
		})
	}
}

// TestContractValueRepeatedKey: inside a larger document (an API
// request), the pointer is relative to the contract and the line and
// column are the document's.
func TestContractValueRepeatedKey(t *testing.T) {
	doc, err := jsondoc.ParseString("{\"trace\": [],\n \"contract\": {\"required\": [{\"tool\": \"a\"}],\n  \"required\": []}}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseContractValue(doc.Get("contract"))
	checkFieldErrors(t, err, []FieldError{{"/required", `repeated key "required" at line 3:3 (first at line 2:15): a contract must not repeat a key`}})
}

func TestForbiddenRepeatedKey(t *testing.T) {
	const doc = `[{"tool":"rm","tool":"ls"}]`
	v, err := jsondoc.ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseForbiddenValue(v)
	checkFieldErrors(t, err, []FieldError{{"/0/tool", `repeated key "tool" at line 1:15 (first at line 1:3): forbidden rules must not repeat a key`}})
	// Stored options were accepted with the last key winning: they
	// still read so.
	rules, err := ParseForbidden([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Tool != "ls" {
		t.Errorf("ParseForbidden = %+v, want the one rule for ls", rules)
	}
}

// checkFieldErrors checks that err is an invalid-contract
// *ValidationError with exactly the problems want.
func checkFieldErrors(t *testing.T, err error, want []FieldError) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidContract) {
		t.Fatalf("error = %v, want an invalid contract", err)
	}
	if !reflect.DeepEqual(ve.Errors, want) {
		t.Errorf("errors:\n got %q\nwant %q", ve.Errors, want)
	}
}
