package jsondoc

import (
	"encoding/json"
	"strings"
	"testing"
)

// repeatedView is a RepeatedKey as the tests compare it: the pointer of
// its value instead of the value.
type repeatedView struct {
	Key, Pointer  string
	Offset, First int
}

func viewRepeated(rks []RepeatedKey) []repeatedView {
	var out []repeatedView
	for _, rk := range rks {
		out = append(out, repeatedView{rk.Key, rk.Value.Pointer(), rk.Offset, rk.First})
	}
	return out
}

func TestAppendRepeatedKeys(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []repeatedView
	}{
		{"none", `{"a":1,"b":{"c":[{"d":2}]}}`, nil},
		{"none unsorted", "{\n \"b\": 1,\n \"a\": {\"y\": 2, \"x\": 3}\n}", nil},
		{"top", `{"forbidden":[{"tool":"rm"}],"required":[],"forbidden":[]}`,
			[]repeatedView{{"forbidden", "/forbidden", 43, 1}}},
		{"three times", `{"a":1,"a":2,"a":3}`,
			[]repeatedView{{"a", "/a", 7, 1}, {"a", "/a", 13, 1}}},
		{"nested in array", `[1,{"k":{"x":1,"y":2,"x":3}}]`,
			[]repeatedView{{"x", "/1/k/x", 21, 9}}},
		{"outer and inner by offset", `{"o":{"i":1,"i":2},"o":0}`,
			[]repeatedView{{"i", "/o/i", 12, 6}, {"o", "/o", 19, 1}}},
		{"escaped key", `{"t\u006fol":"a","tool":"b"}`,
			[]repeatedView{{"tool", "/tool", 17, 1}}},
		{"sibling after", `{"a":{"x":1,"x":2},"b":{"y":[{"z":1}]}}`,
			[]repeatedView{{"x", "/a/x", 12, 6}}},
		{"many keys", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":10}`,
			[]repeatedView{{"k3", "/k3", 71, 22}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseString(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := v.HasRepeatedKey(), tc.want != nil; got != want {
				t.Errorf("HasRepeatedKey() = %v, want %v", got, want)
			}
			got := viewRepeated(v.AppendRepeatedKeys(nil))
			if !equalViews(got, tc.want) {
				t.Errorf("AppendRepeatedKeys = %+v, want %+v", got, tc.want)
			}
			for _, rk := range tc.want {
				if got := tc.doc[rk.Offset : rk.Offset+1]; got != `"` {
					t.Errorf("offset %d is %q, not a key's quote", rk.Offset, got)
				}
			}
		})
	}
}

func TestRepeatedKeysSubtrees(t *testing.T) {
	doc := `{"a":{"x":1,"x":2},"b":{"y":1},"c":[{"z":1,"z":2}],"d":[1,{"w":1}]}`
	v, err := ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string]bool{"/a": true, "/b": false, "/c": true, "/c/0": true, "/d": false, "/d/1": false, "/a/x": false} {
		if got := lookup(t, v, ptr).HasRepeatedKey(); got != want {
			t.Errorf("%s: HasRepeatedKey() = %v, want %v", ptr, got, want)
		}
	}
	got := viewRepeated(lookup(t, v, "/c").AppendRepeatedKeys(nil))
	if want := []repeatedView{{"z", "/c/0/z", 43, 37}}; !equalViews(got, want) {
		t.Errorf("/c: AppendRepeatedKeys = %+v, want %+v", got, want)
	}
	if (Value{}).HasRepeatedKey() || len((Value{}).AppendRepeatedKeys(nil)) != 0 {
		t.Error("the zero Value has a repeated key")
	}
}

// TestRepeatedKeysParser reads documents one after another with one
// Parser: a document's record of repeated keys is its own.
func TestRepeatedKeysParser(t *testing.T) {
	var p Parser
	for i, tc := range []struct {
		doc  string
		want bool
	}{
		{`{"a":{"b":1,"b":2}}`, true},
		{`{"a":{"b":1},"c":[2]}`, false},
		{"[{\"x\": 1}, {\"y\": 2}]", false},
		{`[{"q":1,"q":1}]`, true},
		{`{"z":{"b":1,"a":2}}`, false},
	} {
		v, err := p.Parse(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.HasRepeatedKey(); got != tc.want {
			t.Errorf("document %d %s: HasRepeatedKey() = %v, want %v", i, tc.doc, got, tc.want)
		}
	}
}

func lookup(t *testing.T, v Value, ptr string) Value {
	t.Helper()
	for _, tok := range strings.Split(ptr, "/")[1:] {
		if v.Kind() == Array {
			var i int
			if err := json.Unmarshal([]byte(tok), &i); err != nil {
				t.Fatal(err)
			}
			v = v.Index(i)
		} else {
			v = v.Get(tok)
		}
	}
	if !v.Exists() {
		t.Fatalf("no value at %s", ptr)
	}
	return v
}

func equalViews(a, b []repeatedView) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// plainRepeats reports what HasRepeatedKey does the plain way: whether
// some object in v's subtree has fewer distinct keys than members.
func plainRepeats(v Value) bool {
	ns := v.Nodes()
	for i := range ns.Len() {
		if ns.Kind(i) == Object && ns.Value(i).Len() != ns.Count(i) {
			return true
		}
	}
	return false
}

// FuzzRepeatedKeys compares HasRepeatedKey, the parser's record, with
// plainRepeats for every array and object of the document, and
// AppendRepeatedKeys with the members the plain count leaves out.
func FuzzRepeatedKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"x":{"y":1,"y":2}},{"z":3}]`, "{\n \"b\": {\"c\": 1, \"c\": 2},\n \"a\": [1]\n}",
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":10}`, `{"\u0061":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		ns := v.Nodes()
		for i := range ns.Len() {
			if k := ns.Kind(i); k != Object && k != Array {
				continue
			}
			sub := ns.Value(i)
			if got, want := sub.HasRepeatedKey(), plainRepeats(sub); got != want {
				t.Fatalf("node %d (%s): HasRepeatedKey() = %v, plain %v", i, sub.Pointer(), got, want)
			}
		}
		extra := 0
		for i := range ns.Len() {
			if ns.Kind(i) == Object {
				extra += ns.Count(i) - ns.Value(i).Len()
			}
		}
		rks := v.AppendRepeatedKeys(nil)
		if len(rks) != extra {
			t.Fatalf("AppendRepeatedKeys found %d, the plain count %d", len(rks), extra)
		}
		for i, rk := range rks {
			if i > 0 && rk.Offset <= rks[i-1].Offset || rk.First >= rk.Offset || s[rk.Offset] != '"' || s[rk.First] != '"' {
				t.Fatalf("repeated key %d %+v out of order or not at a quote", i, rk)
			}
		}
	})
}

// TestRepeatedMembers: RepeatsKey and AppendRepeatedMembers tell of the
// keys an object itself repeats, not of those of the objects inside it.
func TestRepeatedMembers(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		repeats   bool
		want      []repeatedView
	}{
		{"none", `{"a":1,"b":{"c":[{"d":2}]}}`, false, nil},
		{"inner only", `{"trace":{"x":1,"x":2},"contract":"c"}`, false, nil},
		{"top", `{"trace":[],"contract":"a","trace":{"x":1,"x":2}}`, true, []repeatedView{{"trace", "/trace", 27, 1}}},
		{"three times", `{"a":1,"a":2,"a":3}`, true, []repeatedView{{"a", "/a", 7, 1}, {"a", "/a", 13, 1}}},
		{"escaped key", `{"t\u0072ace":1,"trace":2}`, true, []repeatedView{{"trace", "/trace", 16, 1}}},
		{"array", `[{"a":1,"a":2}]`, false, nil},
		{"string", `"a"`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseString(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.RepeatsKey(); got != tc.repeats {
				t.Errorf("RepeatsKey = %v, want %v", got, tc.repeats)
			}
			got := viewRepeated(v.AppendRepeatedMembers(nil))
			if !equalViews(got, tc.want) {
				t.Errorf("AppendRepeatedMembers = %+v, want %+v", got, tc.want)
			}
		})
	}
	if (Value{}).RepeatsKey() {
		t.Error("the zero Value repeats a key")
	}
}
