package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// plainArgs is the plain path of reading a contract's arguments: the
// expected value the parser makes of the document's value (maps, slices,
// Matchers), its problems, and that value compiled from the map.
func plainArgs(v jsondoc.Value) (x any, errs []FieldError, cv *cval) {
	p := contractParser{}
	x = p.expected(v)
	if m, ok := x.(map[string]any); ok && len(p.errs) == 0 {
		cv = compileArgs(m)
	}
	return x, p.errs, cv
}

// sameExpected reports whether a and b are the same expected value: the
// same Go types everywhere, plain values equal, matchers of one type
// with the same JSON.
func sameExpected(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameExpected(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !sameExpected(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, bool, json.Number:
		return a == b
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// checkArgsFromDocument compares the Args ParseContract reads for args
// (the text of a gold call's "args" object) with the plain path: the same
// problems, a Map equal to the plain expected value, the same matches and
// argument counts against every value of actuals, and the same issue
// text for the shown form.
func checkArgsFromDocument(t *testing.T, args string, actuals []jsondoc.Value) {
	t.Helper()
	v, err := jsondoc.ParseString(args)
	if err != nil || v.Kind() != jsondoc.Object {
		return
	}
	doc := `[{"tool":"t","args":` + args + `}]`
	c, err := ParseContract([]byte(doc))
	x, plainErrs, plainCV := plainArgs(v)
	if _, isMatcher := x.(Matcher); isMatcher && len(plainErrs) == 0 {
		plainErrs = []FieldError{{"", "args must be an object of arguments, not a matcher"}}
	}
	if len(plainErrs) > 0 {
		var ve *ValidationError
		if !asValidation(err, &ve) {
			t.Fatalf("%s: ParseContract = %v, the plain path finds %v", args, err, plainErrs)
		}
		got := make([]string, len(ve.Errors))
		for i, fe := range ve.Errors {
			got[i] = fe.Pointer + ": " + fe.Message
		}
		want := make([]string, len(plainErrs))
		for i, fe := range plainErrs {
			want[i] = "/0/args" + fe.Pointer + ": " + fe.Message
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: problems %q, the plain path's %q", args, got, want)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: ParseContract: %v, the plain path finds no problem", args, err)
	}
	a := c.Required[0].Call.Args
	if !a.Checked() || a.Len() != len(x.(map[string]any)) {
		t.Fatalf("%s: Args checked %v, Len %d", args, a.Checked(), a.Len())
	}
	fast := a.compiled()
	for _, av := range append(actuals, v) {
		for _, strict := range []bool{false, true} {
			if got, want := fast.match(av, strict), plainCV.match(av, strict); got != want {
				t.Fatalf("%s against %s (strict %v): from the document %v, plain %v", args, av, strict, got, want)
			}
			if av.Kind() == jsondoc.Object {
				if got, want := fast.countEqual(av, strict), plainCV.countEqual(av, strict); got != want {
					t.Fatalf("%s against %s (strict %v): countEqual from the document %d, plain %d", args, av, strict, got, want)
				}
			}
		}
	}
	var ta, tb textArena
	if got, want := ta.value(a.shown()), tb.value(x); got != want {
		t.Fatalf("%s: shown as %s, the plain value as %s", args, got, want)
	}
	var enc1, enc2 bytes.Buffer
	for buf, v := range map[*bytes.Buffer]any{&enc1: a, &enc2: x} {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if enc1.String() != enc2.String() {
		t.Fatalf("%s: an Encoder without HTML escaping writes Args as %s, the plain value as %s", args, enc1.Bytes(), enc2.Bytes())
	}
	// Materialised last, so that the checks above ran on the lazy form.
	if m := a.Map(); !sameExpected(m, x) {
		t.Fatalf("%s: Map() = %#v, the plain value %#v", args, m, x)
	}
	j1, err1 := json.Marshal(a)
	j2, err2 := json.Marshal(x)
	if err1 != nil || err2 != nil || string(j1) != string(j2) {
		t.Fatalf("%s: json.Marshal(Args) = %s (%v), of the plain value %s (%v)", args, j1, err1, j2, err2)
	}
}

// argsActuals are the actual values the Args tests match against: the
// plain and matcher values of the compiled-value tests, each as the value
// of a key and in arrays.
func argsActuals(tb testing.TB) []jsondoc.Value {
	var out []jsondoc.Value
	for _, s := range append(slices.Clone(randPlain), randMatchers...) {
		for _, w := range []string{`%s`, `{"v":%s}`, `{"x":1,"v":[%s,{"w":%s}]}`, `{"k":%s,"q":[true]}`} {
			text := fmt.Sprintf(w, s, s)
			if w == `%s` || w == `{"v":%s}` || w == `{"k":%s,"q":[true]}` {
				text = fmt.Sprintf(w, s)
			}
			v, err := jsondoc.ParseString(text)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

var argsSeeds = []string{
	`{}`, `{"a":1}`, `{"s":"x","e":"","n":1.50,"b":true,"z":null,"l":[],"m":{"k":["y",2,[3,{"w":"v"}]]}}`,
	`{"a":1,"a":2}`, `{"k":" a ","q":[true]}`, `{"v":{"$regex":"^a"}}`, `{"v":[{"$regex":"^a"},2]}`,
	`{"v":{"$contains":{"$one_of":[1,2]}}}`, `{"v":{"$one_of":[{"$contains":"a"},{"$approx":{"value":1,"abs":0.5}}]}}`,
	`{"a":{"$contains":[1,{"b":2}]},"b":[{"$any":true}]}`, `{"$regex":"x"}`, `{"$nope":1}`, `{"v":{"$regex":"("}}`,
	`{"v":{"$regex":1,"x":2}}`, `{"v":{"$type":"integerish"}}`, `{"v":{"$approx":{"value":"x"}}}`, `{"v":1e999}`,
	`{"v":123456789012345678901234567890}`, `{"v":"<b>&\u2028"}`, `{"\u003c":"\ud800"}`, `{"k":{"$one_of":["a",1]}}`,
}

// TestArgsFromDocument: the arguments ParseContract compiles straight
// from the document agree with the plain path (the expected value as a
// map, compiled from the map) on a set of documents.
func TestArgsFromDocument(t *testing.T) {
	actuals := argsActuals(t)
	for _, s := range argsSeeds {
		checkArgsFromDocument(t, s, actuals)
	}
	for _, s := range append(slices.Clone(randPlain), randMatchers...) {
		checkArgsFromDocument(t, `{"v":`+s+`}`, actuals)
		checkArgsFromDocument(t, `{"x":1,"v":[`+s+`,{"w":`+s+`}]}`, actuals)
	}
}

// FuzzArgsFromDocument: for any args object, the Args compiled from the
// document agree with the plain path.
func FuzzArgsFromDocument(f *testing.F) {
	for _, s := range argsSeeds {
		f.Add(s)
	}
	actuals := argsActuals(f)
	f.Fuzz(func(t *testing.T, args string) {
		checkArgsFromDocument(t, args, actuals)
	})
}

// TestArgsConcurrentMap: Args made from a document are materialised once
// when many goroutines ask at the same time, and the compiled form of Go
// arguments likewise.
func TestArgsConcurrentMap(t *testing.T) {
	c := mustContract(t, `[{"tool":"t","args":{"a":[1,{"b":"c"}]}}]`)
	a := c.Required[0].Call.Args
	g := NewArgs(map[string]any{"a": json.Number("1")})
	var wg sync.WaitGroup
	maps := make([]map[string]any, 8)
	cvs := make([]*cval, 8)
	for i := range maps {
		wg.Go(func() {
			maps[i] = a.Map()
			cvs[i] = g.compiled()
		})
	}
	wg.Wait()
	for i := range maps {
		if reflect.ValueOf(maps[i]).UnsafePointer() != reflect.ValueOf(maps[0]).UnsafePointer() || cvs[i] != cvs[0] {
			t.Fatalf("goroutine %d got another map or compiled form", i)
		}
	}
	if !a.Equal(NewArgs(map[string]any{"a": []any{json.Number("1"), map[string]any{"b": "c"}}})) || a.Equal(g) || a.Equal(Args{}) || !(Args{}).Equal(Args{}) {
		t.Error("Equal")
	}
	if (Args{}).Map() != nil || (Args{}).Checked() || (Args{}).Len() != 0 || !(Args{}).IsZero() || !NewArgs(map[string]any{}).IsZero() || NewArgs(nil).Checked() {
		t.Error("the zero Args")
	}
}
