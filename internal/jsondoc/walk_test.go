package jsondoc

import (
	"slices"
	"testing"
)

// walkStep is one step of a walk, as the tests compare them.
type walkStep struct {
	step Step
	kind Kind
	text string
}

// walkSteps returns the steps of a Walker over v.
func walkSteps(w *Walker, v Value) []walkStep {
	var out []walkStep
	w.Reset(v)
	for {
		st := w.Next()
		if st == StepDone {
			return out
		}
		s := walkStep{step: st}
		if st != StepEnd {
			s.kind, s.text = w.Kind(), w.Text()
		}
		out = append(out, s)
	}
}

// plainSteps are the steps of a walk over v, the plain way: recursion
// over Members and Elems.
func plainSteps(v Value, out []walkStep) []walkStep {
	s := walkStep{step: StepValue, kind: v.Kind()}
	if k := v.Kind(); k == String || k == Number {
		s.text = v.d.text(v.i)
	}
	out = append(out, s)
	switch v.Kind() {
	case Object:
		for k, e := range v.Members() {
			out = append(out, walkStep{step: StepKey, kind: String, text: k})
			out = plainSteps(e, out)
		}
		out = append(out, walkStep{step: StepEnd})
	case Array:
		for _, e := range v.Elems() {
			out = plainSteps(e, out)
		}
		out = append(out, walkStep{step: StepEnd})
	}
	return out
}

func TestWalker(t *testing.T) {
	var w Walker
	if got := walkSteps(&w, Value{}); got != nil {
		t.Errorf("zero Value: %v", got)
	}
	v, err := ParseString(`{"a": [1, "x", {"b": null, "a": true}], "c": {}, "a": [], "d": "e"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []walkStep{
		{StepValue, Object, ""},
		{StepKey, String, "c"}, {StepValue, Object, ""}, {StepEnd, 0, ""},
		{StepKey, String, "a"}, {StepValue, Array, ""}, {StepEnd, 0, ""},
		{StepKey, String, "d"}, {StepValue, String, "e"},
		{StepEnd, 0, ""},
	}
	if got := walkSteps(&w, v); !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// A walk over a member stops at its end.
	inner := v.Get("c")
	if got := walkSteps(&w, inner); !slices.Equal(got, want[2:4]) {
		t.Errorf("member: got %v", got)
	}
}

// FuzzWalker checks Walker against recursion over Members and Elems, on
// the whole document and on each of its top-level members.
func FuzzWalker(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, "x", {"b": null}], "c": {"d": [[[]]]}}`,
		`{"k": 1, "k": {"k": 2, "k": [3]}, "j": "\u00e9"}`,
		`[[], {}, [{}], "s", -1.5e3, true, false, null]`,
		`"text"`, `12`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		var w Walker
		if got, want := walkSteps(&w, v), plainSteps(v, nil); !slices.Equal(got, want) {
			t.Fatalf("walk differs:\ngot  %v\nwant %v", got, want)
		}
		for _, e := range v.Members() {
			if got, want := walkSteps(&w, e), plainSteps(e, nil); !slices.Equal(got, want) {
				t.Fatalf("member walk differs:\ngot  %v\nwant %v", got, want)
			}
		}
	})
}

// plainStrings appends the strings of v and inside it to out, as
// AppendTexts does, the plain way: recursion over Members and Elems.
func plainStrings(v Value, minLen int, out []Text) []Text {
	switch v.Kind() {
	case String:
		if x := v.Text(); len(x) >= minLen {
			out = append(out, Text{x, false})
		}
	case Array:
		for _, e := range v.Elems() {
			out = plainStrings(e, minLen, out)
		}
	case Object:
		for k, e := range v.Members() {
			out = append(out, Text{k, true})
			out = plainStrings(e, minLen, out)
		}
	}
	return out
}

// FuzzAppendTexts checks AppendTexts against recursion over Members and
// Elems.
func FuzzAppendTexts(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, "x", {"b": null}], "c": {"d": [[["e"]]]}}`,
		`{"k": "1", "k": {"k": 2, "k": ["3"]}, "j": "\u00e9", "x" : "y"}`,
		"{\"a\"\t\n:\"b\"}",
		`"text"`, `12`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		check := func(v Value) {
			for _, minLen := range []int{0, 2, 10} {
				got := v.AppendTexts(nil, minLen)
				if want := plainStrings(v, minLen, nil); !slices.Equal(got, want) {
					t.Fatalf("minLen %d: AppendTexts differs:\ngot  %+v\nwant %+v", minLen, got, want)
				}
			}
		}
		check(v)
		for _, e := range v.Elems() {
			check(e)
		}
		for _, e := range v.Members() {
			check(e)
		}
	})
}
