package jsondoc

import (
	"slices"
	"strings"
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

// plainHasKeyPrefix is HasKeyPrefix the plain way: over Members.
func plainHasKeyPrefix(v Value, prefix string) bool {
	for k := range v.Members() {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// TestHasKeyPrefix checks HasKeyPrefix on escaped, repeated and nested
// keys and on values that are not objects.
func TestHasKeyPrefix(t *testing.T) {
	v, err := ParseString(`{"a": {"$x": 1}, "b": [{"$y": 2}], "\u0024z": 3, "k": 1, "k": 2, "": 0}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v      Value
		prefix string
		want   bool
	}{
		{v, "$", true}, // the escaped key "\u0024z"
		{v, "$z", true},
		{v, "$x", false}, // only in a member's value
		{v, "k", true},
		{v, "kk", false},
		{v, "", true},
		{v.Get("a"), "$", true},
		{v.Get("b"), "$", false}, // an array
		{v.Get("k"), "$", false}, // a number
		{Value{}, "$", false},
	} {
		if got := c.v.HasKeyPrefix(c.prefix); got != c.want {
			t.Errorf("%s.HasKeyPrefix(%q) = %v, want %v", c.v, c.prefix, got, c.want)
		}
	}
	empty, _ := ParseString(`{}`)
	if empty.HasKeyPrefix("") {
		t.Error(`{}.HasKeyPrefix("") = true`)
	}
}

// plainCensus is Census the plain way: recursion over the raw members
// (repeated keys each time) and elements.
func plainCensus(v Value, c *Census) {
	c.Values[v.Kind()]++
	d, nd := v.d, v.node()
	switch nd.kind {
	case Array:
		c.Elements += int(nd.n)
		for _, e := range v.Elems() {
			plainCensus(e, c)
		}
	case Object:
		c.Members += int(nd.n)
		j := v.i + 1
		for range nd.n {
			plainCensus(Value{d: d, i: j + 1}, c)
			j = d.next(j + 1)
		}
	}
}

// FuzzHasKeyPrefix checks HasKeyPrefix against a walk over Members, and
// Census against a recursion, on every value of the document.
func FuzzHasKeyPrefix(f *testing.F) {
	for _, s := range []string{
		`{"$regex": "a", "b": {"$any": true}}`,
		`{"k": 1, "k": {"$k": 2}, "\u0024j": "x", "": null}`,
		`[{"a": [{"$b": 1}]}, {}]`,
		`"$text"`,
	} {
		f.Add(s, "$")
	}
	f.Add(`{"abc": 1}`, "ab")
	f.Fuzz(func(t *testing.T, s, prefix string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		var w Walker
		w.Reset(v)
		for st := w.Next(); st != StepDone; st = w.Next() {
			if st != StepValue {
				continue
			}
			x := w.Value()
			var c Census
			if plainCensus(x, &c); x.Census() != c {
				t.Fatalf("%s.Census() = %+v, want %+v", x, x.Census(), c)
			}
			if got, want := x.HasKeyPrefix(prefix), plainHasKeyPrefix(x, prefix); got != want {
				t.Fatalf("%s.HasKeyPrefix(%q) = %v, want %v", x, prefix, got, want)
			}
		}
	})
}

// FuzzPointerFrom checks PointerFrom against Pointer for every value of
// a document from the root and from each of the root's members and
// elements.
func FuzzPointerFrom(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, "x", {"b/~": null}], "c": {"d": [[[]]]}}`,
		`[{"k": 1, "k": {"k": 2}}, [3, [4]], "s"]`, `{}`, `7`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		ancs := []Value{v}
		for _, e := range v.Elems() {
			ancs = append(ancs, e)
		}
		for _, e := range v.Members() {
			ancs = append(ancs, e)
		}
		var w Walker
		w.Reset(v)
		for st := w.Next(); st != StepDone; st = w.Next() {
			if st != StepValue {
				continue
			}
			x := w.Value()
			for i, anc := range ancs {
				got, ok := x.PointerFrom(anc, anc.Pointer())
				if i == 0 && !ok || ok && got != x.Pointer() {
					t.Fatalf("%s.PointerFrom(%s) = %q %v, want %q", x, anc, got, ok, x.Pointer())
				}
			}
		}
		if _, ok := v.PointerFrom(Value{}, ""); ok {
			t.Fatal("PointerFrom the zero Value")
		}
	})
}
