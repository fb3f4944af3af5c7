package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// member reads doc as the member "x" of a larger document, as an API
// request carries a contract or forbidden rules.
func member(t testing.TB, doc string) jsondoc.Value {
	t.Helper()
	v, err := jsondoc.ParseString(`{"a":[1,{"b":2}],"x":` + doc + `,"z":null}`)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return v.Get("x")
}

// sameContract checks that ParseContractValue on doc inside a larger
// document reads what ParseContract reads from doc alone: the same errors
// (pointers relative to doc), or a contract that grades trace to the same
// result.
func sameContract(t *testing.T, doc string, trace Trace) {
	t.Helper()
	want, werr := ParseContract([]byte(doc))
	got, gerr := ParseContractValue(member(t, doc))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: ParseContract error %v, ParseContractValue error %v", doc, werr, gerr)
	}
	if werr != nil {
		var wv, gv *ValidationError
		if asValidation(werr, &wv) != asValidation(gerr, &gv) || wv == nil {
			t.Fatalf("%s: errors %v and %v", doc, werr, gerr)
		}
		if diff := cmp.Diff(wv.Errors, gv.Errors); diff != "" {
			t.Fatalf("%s: errors (-ParseContract +ParseContractValue):\n%s", doc, diff)
		}
		return
	}
	if diff := cmp.Diff(want.IgnoredKeys, got.IgnoredKeys); diff != "" {
		t.Errorf("%s: IgnoredKeys (-ParseContract +ParseContractValue):\n%s", doc, diff)
	}
	opts := Options{SecretScanner: testSecrets}
	wr, err1 := Evaluate(context.Background(), want, trace, opts)
	gr, err2 := Evaluate(context.Background(), got, trace, opts)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: Evaluate: %v, %v", doc, err1, err2)
	}
	wj, _ := json.Marshal(wr)
	gj, _ := json.Marshal(gr)
	if string(wj) != string(gj) {
		t.Errorf("%s: results differ:\nParseContract:      %s\nParseContractValue: %s", doc, wj, gj)
	}
}

func asValidation(err error, ve **ValidationError) bool {
	v, ok := err.(*ValidationError)
	*ve = v
	return ok
}

// TestParseContractValue compares ParseContractValue with ParseContract on
// the golden corpus' contracts (graded with their traces) and on the
// contracts of TestParseContractErrors' kinds, and ParseForbiddenValue with
// ParseForbidden.
func TestParseContractValue(t *testing.T) {
	f, err := os.Open("testdata/golden/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			Contract json.RawMessage `json:"contract"`
			Trace    Trace           `json:"trace"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || len(c.Contract) == 0 {
			continue
		}
		sameContract(t, string(c.Contract), c.Trace)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("compared %d corpus contracts, want at least 100", n)
	}
	one := Trace{Calls: []ToolCall{{Tool: "a"}}}
	for _, doc := range []string{
		`{"contract_version": 3, "required": []}`,
		`{"required":[{"tool":"a","args":{"x":{"$regx":"a"}}}]}`,
		`{"optional":[],"alternatives":[{"alternatives":[[]]}]}`,
		`{"required":[],"weights":{"foo":1,"argument_f1":-1}}`,
		`{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$regex":"("}}},{"tool":"b","oops":1}],"min_score":2}`,
		`[{"args":{}}]`, `{"calls":[1]}`, `[{"tool":"a","args":[1]}]`, `{"foo":1}`, `"x"`,
		`[{"tool":"a","args":{},"side_effects":[],"metadata":{"k":1}}]`,
		`{"required":[` + strings.Repeat(`{"alternatives":[{"tool":"a"},{"tool":"b"}]},`, 8) + `{"alternatives":[{"tool":"a"},{"tool":"b"}]}]}`,
	} {
		sameContract(t, doc, one)
	}
	for _, doc := range []string{
		`[]`, `null`, `{}`, `[1]`, `[{"tool":"rm","reason":"no"}]`, `[{"tool":"rm","args":{"p":{"$regex":"^/"}},"reason":3}]`, `[{"args":{}}]`,
	} {
		want, werr := ParseForbidden([]byte(doc))
		got, gerr := ParseForbiddenValue(member(t, doc))
		if diff := cmp.Diff(errText(werr), errText(gerr)); diff != "" {
			t.Errorf("forbidden %s: errors (-ParseForbidden +ParseForbiddenValue):\n%s", doc, diff)
		}
		if len(want) != len(got) {
			t.Errorf("forbidden %s: %d rules, want %d", doc, len(got), len(want))
		}
	}
	if rules, err := ParseForbiddenValue(jsondoc.Value{}); rules != nil || err != nil {
		t.Errorf("ParseForbiddenValue(absent) = %v, %v", rules, err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	if ve, ok := err.(*ValidationError); ok {
		b, _ := json.Marshal(ve.Errors)
		return string(b)
	}
	return err.Error()
}
