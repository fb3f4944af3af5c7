package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseContractArgsMatcher: args that are a matcher object as a whole
// are a validation error, not a panic (FuzzParseContract found
// {"args": {"$": ...}}).
func TestParseContractArgsMatcher(t *testing.T) {
	tests := []struct {
		doc  string
		want []FieldError
	}{
		{`{"contract_version":2,"required":[{"tool":"a","args":{"$regex":"x"}}]}`,
			[]FieldError{{"/required/0/args", "args must be an object of arguments, not a matcher"}}},
		{`{"contract_version":2,"required":[{"tool":"a","args":{"$":{"k":"v"}}}]}`,
			[]FieldError{{"/required/0/args/$", `unknown matcher "$" (valid: $any, $approx, $contains, $one_of, $regex, $type)`}}},
		{`{"contract_version":2,"required":[],"forbidden":[{"tool":"a","args":{"$any":true}}]}`,
			[]FieldError{{"/forbidden/0/args", "args must be an object of arguments, not a matcher"}}},
		{`[{"tool":"a","args":{"$type":"string"}}]`,
			[]FieldError{{"/0/args", "args must be an object of arguments, not a matcher"}}},
	}
	for _, tc := range tests {
		c, err := ParseContract([]byte(tc.doc))
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("ParseContract(%s) = %v, %v; want a *ValidationError", tc.doc, c, err)
			continue
		}
		if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
			t.Errorf("ParseContract(%s) errors mismatch (-want +got):\n%s", tc.doc, diff)
		}
	}
}

// TestPythonToolscoreGoldFiles loads Python Toolscore's example gold files
// unchanged: their calls read as expected calls, and every key beside tool
// and args is listed as ignored, in document order.
func TestPythonToolscoreGoldFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/pytoolscore/*.json")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("testdata/pytoolscore/datasets/*.json")
	files = append(files, more...)
	if len(files) != 6 {
		t.Fatalf("%d files, want 6", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseContract(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		if !c.Gold || len(c.Required) != len(raw) {
			t.Errorf("%s: gold %v with %d calls, want %d", f, c.Gold, len(c.Required), len(raw))
		}
		var want []string
		for i, call := range raw {
			var keys []string
			for k := range call {
				if k != "tool" && k != "args" {
					keys = append(keys, k)
				}
			}
			// The document order of these files: description before
			// metadata, side_effects before description.
			slices.SortFunc(keys, func(a, b string) int { return strings.Index(string(data), a) - strings.Index(string(data), b) })
			for _, k := range keys {
				want = append(want, fmt.Sprintf("/%d/%s", i, k))
			}
		}
		if diff := cmp.Diff(want, c.IgnoredKeys); diff != "" {
			t.Errorf("%s: IgnoredKeys (-want +got):\n%s", f, diff)
		}
	}
	c := mustContract(t, `{"calls": [{"tool": "a", "args": {"x": 1}, "result": {"ok": true}, "timestamp": 1.5, "cost": 0.1}]}`)
	if diff := cmp.Diff([]string{"/calls/0/result", "/calls/0/timestamp", "/calls/0/cost"}, c.IgnoredKeys); diff != "" {
		t.Errorf("IgnoredKeys (-want +got):\n%s", diff)
	}
	if c := mustContract(t, `[{"tool": "a"}]`); c.IgnoredKeys != nil {
		t.Errorf("IgnoredKeys = %v, want none", c.IgnoredKeys)
	}
}

// TestDeepContractPointers parses a gold file whose arguments nest 990
// levels deep with a bad matcher at the bottom: the error points there,
// and memory stays linear in the depth (pointers are built only for the
// error).
func TestDeepContractPointers(t *testing.T) {
	const depth = 990
	doc := `[{"tool":"a","args":` + strings.Repeat(`{"k":`, depth) + `{"$nope":1}` + strings.Repeat("}", depth) + `}]`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseContract([]byte(doc))
	runtime.ReadMemStats(&after)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Pointer != "/0/args"+strings.Repeat("/k", depth)+"/$nope" {
		t.Fatalf("error = %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2<<20 {
		t.Errorf("ParseContract allocated %d bytes for a %d-byte document", n, len(doc))
	}
}

// TestParseForbidden reads forbidden rules given apart from a contract:
// what a contract's forbidden list accepts, with pointers into the array.
func TestParseForbidden(t *testing.T) {
	rules, err := ParseForbidden([]byte(`[{"tool": "delete_db", "reason": "never"}, {"tool": "pay", "args": {"amount": {"$approx": 10}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Tool != "delete_db" || rules[0].Reason != "never" || rules[0].Args.Checked() {
		t.Errorf("rules = %+v", rules)
	}
	if a, ok := rules[1].Args.Map()["amount"].(*Approx); !ok || a.Value != 10 {
		t.Errorf("rule 1 args = %#v", rules[1].Args.Map())
	}
	for _, data := range []string{``, ` `, `null`} {
		if rules, err := ParseForbidden([]byte(data)); err != nil || rules != nil {
			t.Errorf("ParseForbidden(%q) = %v, %v", data, rules, err)
		}
	}
	for _, tc := range []struct {
		data string
		want []FieldError
	}{
		{`{"tool": "x"}`, []FieldError{{"", "forbidden rules must be an array, got an object"}}},
		{`[{"args": {}}]`, []FieldError{{"/0/tool", "tool must be a non-empty string"}}},
		{`[{"tool": "x", "why": 1}, "y"]`, []FieldError{{"/0/why", `unknown key "why"`}, {"/1", "a forbidden rule must be an object, got a string"}}},
		{`[{"tool": "x", "reason": 1, "args": {"k": {"$nope": 1}}}]`, []FieldError{{"/0/reason", "reason must be a string, got a number"}, {"/0/args/k/$nope", `unknown matcher "$nope" (valid: $any, $approx, $contains, $one_of, $regex, $type)`}}},
	} {
		_, err := ParseForbidden([]byte(tc.data))
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidContract) {
			t.Errorf("ParseForbidden(%s) error = %v", tc.data, err)
			continue
		}
		if diff := cmp.Diff(tc.want, ve.Errors); diff != "" {
			t.Errorf("ParseForbidden(%s) errors (-want +got):\n%s", tc.data, diff)
		}
	}
}
