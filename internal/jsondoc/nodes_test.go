package jsondoc

import (
	"slices"
	"testing"
)

// FuzzNodes checks the Nodes view against AppendTexts and Members: for a
// document without repeated keys, its strings in node order are the
// texts AppendTexts finds (keys marked alike), and an object's members
// step from key to key with Skip.
func FuzzNodes(f *testing.F) {
	for _, s := range []string{
		`{"a": "bb", "c" : {"d": ["ee", {"f": "gggg"}]}, "h": 1}`,
		`["a", "b\u00e9c", {"": ""}, [{"q" :"r"}], null, true, 1.5]`,
		`{"k": 1, "k": 2}`,
		`"text"`,
		`{ "s" : "t" , "u":"v"}`,
		`{"pass\u0077ord": "x", "key": {"a\u00ff": "yy", "": 1}}`,
		`{"tab": "a", "ke": {"zz": 1, "b_k": "ab", "a": {"aa": "\u00ff_"}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		nodes := v.Nodes()
		var got []Text
		dup := false
		for i := range nodes.Len() {
			dup = dup || nodes.RepeatsKey(i)
			if x, key, ok := nodes.Str(i); ok {
				if key != nodes.IsKey(i) {
					t.Fatalf("node %d: Str says key %v, IsKey %v", i, key, nodes.IsKey(i))
				}
				got = append(got, Text{x, key})
			}
			if nodes.Kind(i) == Object && !nodes.RepeatsKey(i) {
				j := i + 1
				for k, m := range nodes.Value(i).Members() {
					if x, key, _ := nodes.Str(j); !key || x != k || nodes.Value(j+1) != m {
						t.Fatalf("object node %d: member %q at node %d does not follow", i, k, j)
					}
					j = nodes.Skip(j + 1)
				}
				if j != nodes.Skip(i) || nodes.Count(i) != nodes.Value(i).Len() {
					t.Fatalf("object node %d: members end at %d, Skip says %d", i, j, nodes.Skip(i))
				}
			}
		}
		if want := v.AppendTexts(nil, 0); !dup && !slices.Equal(got, want) {
			t.Fatalf("Nodes' strings %+v, AppendTexts %+v", got, want)
		}
		// AppendStrings: the keys and the long enough other texts
		// AppendTexts finds, unless a key repeats.
		for _, minLen := range []int{0, 1, 3} {
			var keys, wantKeys, wantTexts []string
			texts, ok := v.AppendStrings([]string{"x"}, minLen, func(k string) bool {
				keys = append(keys, k)
				return true
			})
			if ok == dup {
				t.Fatalf("minLen %d: AppendStrings reports %v for a document with a repeated key: %v", minLen, ok, dup)
			}
			if !ok {
				continue
			}
			for _, x := range v.AppendTexts(nil, minLen) {
				if x.Key {
					wantKeys = append(wantKeys, x.Text)
				} else {
					wantTexts = append(wantTexts, x.Text)
				}
			}
			if !slices.Equal(keys, wantKeys) || !slices.Equal(texts[1:], wantTexts) || texts[0] != "x" {
				t.Fatalf("minLen %d: AppendStrings gave %q, %q; AppendTexts %q, %q", minLen, keys, texts, wantKeys, wantTexts)
			}
		}
		// AppendStringsKeys: AppendStrings' texts, and the keys it hands
		// over that are long enough or end with a marked pair of bytes.
		var ends KeyEnds
		for _, p := range []string{"ab", "ey", "_k", "\x00\xff", "\xff_", "aa"} {
			ends.Add(p[0], p[1])
		}
		for _, minLen := range []int{0, 1, 3} {
			var wantKeys []string
			wantTexts, wantOK := v.AppendStrings([]string{"x"}, minLen, func(k string) bool {
				if len(k) >= minLen || len(k) >= 2 && ends.Has(k[len(k)-2], k[len(k)-1]) {
					wantKeys = append(wantKeys, k)
				}
				return true
			})
			texts, keys, ok := v.AppendStringsKeys([]string{"x"}, []string{"y"}, minLen, &ends)
			if ok != wantOK || ok && (!slices.Equal(texts, wantTexts) || keys[0] != "y" || !slices.Equal(keys[1:], wantKeys)) {
				t.Fatalf("minLen %d: AppendStringsKeys gave %q, %q, %v; AppendStrings %q, %q, %v", minLen, texts, keys, ok, wantTexts, wantKeys, wantOK)
			}
		}
		if _, ok := v.AppendStrings(nil, 0, func(string) bool { return false }); ok && len(got) > 0 && got[0].Key {
			t.Fatal("AppendStrings went on after key reported false")
		}
	})
}

// FuzzCursor checks a Cursor, and Nodes.Text, against the Nodes view it
// steps through: at every node, the kind, text, boolean, count, repeated key and source
// text Nodes and Value give for it, and exactly Len()-1 steps.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{
		`{"a": "bb", "c" : {"d": ["ee", {"f": "gggg"}]}, "h": 1}`,
		`["a", "b\u00e9c", {"": ""}, [{"q" :"r"}], null, true, false, 1.5, -0e+3]`,
		`{"k": 1, "k": 2}`, `"text"`, `"\ud800x\u00e9"`, `12`, `true`, `null`, `[]`, `{}`,
		`{"pass\u0077ord": "x\n", "key": {"a\u00ff": "yy", "": 1}}`,
		"{\"\xff\": [\"\xfe\"]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		// A view inside the document as well as the whole of it.
		views := []Nodes{v.Nodes()}
		for _, e := range v.Elems() {
			views = append(views, e.Nodes())
		}
		for _, e := range v.Members() {
			views = append(views, e.Nodes())
		}
		for _, ns := range views {
			c := ns.Cursor()
			for i := range ns.Len() {
				if i > 0 && !c.Next() {
					t.Fatalf("%s: Next reports no node %d of %d", s, i, ns.Len())
				}
				val := ns.Value(i)
				want := ""
				switch ns.Kind(i) {
				case String:
					want, _, _ = ns.Str(i)
				case Number:
					want, _ = val.Num()
				}
				b, _ := val.Bool()
				raw := ""
				if ns.Kind(i) >= Array {
					raw = val.Raw()
				}
				if ns.Text(i) != want {
					t.Fatalf("%s: node %d: Text %q, Str or Num %q", s, i, ns.Text(i), want)
				}
				if c.Kind() != ns.Kind(i) || c.Text() != want || c.True() != b || c.Count() != ns.Count(i) ||
					c.RepeatsKey() != ns.RepeatsKey(i) || c.Raw() != raw {
					t.Fatalf("%s: node %d: Cursor gives %v %q %v %d %v %q, Nodes %v %q %v %d %v %q", s, i,
						c.Kind(), c.Text(), c.True(), c.Count(), c.RepeatsKey(), c.Raw(),
						ns.Kind(i), want, b, ns.Count(i), ns.RepeatsKey(i), raw)
				}
			}
			if c.Next() {
				t.Fatalf("%s: Next reports a node after the last of %d", s, ns.Len())
			}
		}
		empty := Value{}.Nodes().Cursor()
		if empty.Kind() != Invalid || empty.Text() != "" || empty.Count() != 0 || empty.Raw() != "" || empty.Next() {
			t.Fatal("the Cursor of an empty view is not at one Invalid node")
		}
	})
}

// FuzzCensus compares Census with the counts of a walk over the Nodes
// view (each node's kind, keys apart, and each container's count), for a
// document and each of its members and elements.
func FuzzCensus(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, "x", true, null, {"b": "y", "b": 2}], "c": {}, "d": [[]]}`, `1`, `"s"`, `[]`, `{}`,
		`[{"k": {"l": [1, 2, {"m": null}]}}, false]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		values := []Value{v}
		for _, e := range v.Elems() {
			values = append(values, e)
		}
		for _, m := range v.Members() {
			values = append(values, m)
		}
		for _, x := range values {
			var want Census
			ns := x.Nodes()
			for i := range ns.Len() {
				switch k := ns.Kind(i); {
				case k == String && ns.IsKey(i):
				case k == Array:
					want.Values[k]++
					want.Elements += ns.Count(i)
				case k == Object:
					want.Values[k]++
					want.Members += ns.Count(i)
				default:
					want.Values[k]++
				}
			}
			if got := x.Census(); got != want {
				t.Fatalf("%s: Census of %s %+v, the walk %+v", s, x.Raw(), got, want)
			}
		}
	})
}

// TestKeyEndsHas checks has, the one-word read of an ending, against Has
// for every pair of bytes, on a set holding every third pair.
func TestKeyEndsHas(t *testing.T) {
	var e KeyEnds
	for prev := range 256 {
		for last := range 256 {
			if (prev*256+last)%3 == 0 {
				e.Add(byte(prev), byte(last))
			}
		}
	}
	for prev := range 256 {
		for last := range 256 {
			got, want := e.has([2]byte{byte(prev), byte(last)}), e.Has(byte(prev), byte(last))
			if got != want {
				t.Fatalf("ending %d, %d: has %v, Has %v", prev, last, got, want)
			}
			if want != ((prev*256+last)%3 == 0) {
				t.Fatalf("ending %d, %d: Has %v after Add of every third pair", prev, last, want)
			}
		}
	}
}
