package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// ignoredByPointer is a gold document's IgnoredKeys the plain way: the
// JSON pointer (Value.Pointer) of every member of every call object that
// is neither tool nor args, in document order.
func ignoredByPointer(doc jsondoc.Value) []string {
	list := doc
	if doc.Kind() == jsondoc.Object {
		list = doc.Get("calls")
	}
	var out []string
	for _, el := range list.Elems() {
		for k, v := range el.Members() {
			if k != "tool" && k != "args" {
				out = append(out, v.Pointer())
			}
		}
	}
	return out
}

// checkIgnoredKeys compares the IgnoredKeys of a gold document that
// ParseContract accepts with ignoredByPointer.
func checkIgnoredKeys(t *testing.T, s string) {
	t.Helper()
	c, err := ParseContract([]byte(s))
	if err != nil || !c.Gold {
		return
	}
	doc, err := jsondoc.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.IgnoredKeys, ignoredByPointer(doc); !slices.Equal(got, want) {
		t.Fatalf("%s: IgnoredKeys %q, want %q", s, got, want)
	}
}

var ignoredSeeds = []string{
	`[{"tool":"a","args":{},"description":"d","side_effects":{"f":1}},{"tool":"b"},{"tool":"c","x/y~z":1}]`,
	`{"calls":[{"tool":"a","result":1,"tool":"b","result":2}],"final":1}`,
	`[{"tool":"a"},{"tool":"b","\u0074ool2":[1],"":null}]`,
	`[]`, `[{"tool":"a"}]`,
}

// TestIgnoredKeysPointers: IgnoredKeys are the pointers Value.Pointer
// gives, escaped keys and repeated ones included.
func TestIgnoredKeysPointers(t *testing.T) {
	for _, s := range ignoredSeeds {
		checkIgnoredKeys(t, s)
	}
	c := mustContract(t, ignoredSeeds[0])
	if want := []string{"/0/description", "/0/side_effects", "/2/x~1y~0z"}; !slices.Equal(c.IgnoredKeys, want) {
		t.Errorf("IgnoredKeys %q, want %q", c.IgnoredKeys, want)
	}
}

// FuzzIgnoredKeys compares a gold file's IgnoredKeys with the pointers
// Value.Pointer gives.
func FuzzIgnoredKeys(f *testing.F) {
	for _, s := range ignoredSeeds {
		f.Add(s)
	}
	f.Fuzz(checkIgnoredKeys)
}

// BenchmarkGoldIgnoredKeys reads gold files of 50, 500 and 2,000 calls
// each with two ignored keys (as Python Toolscore writes side_effects and
// description): the time per call stays flat.
func BenchmarkGoldIgnoredKeys(b *testing.B) {
	for _, n := range []int{50, 500, 2000} {
		var sb strings.Builder
		sb.WriteString("[")
		for i := range n {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"tool":"t%d","args":{"a":%d},"side_effects":{"f":"x"},"description":"d"}`, i%7, i)
		}
		sb.WriteString("]")
		data := []byte(sb.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseContract(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
