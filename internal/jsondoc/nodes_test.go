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
	})
}
