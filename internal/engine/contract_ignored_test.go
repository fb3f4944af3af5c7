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
	// Each call's tool and arguments are its members' (Get: the last of
	// a repeated key).
	list := doc
	if doc.Kind() == jsondoc.Object {
		list = doc.Get("calls")
	}
	for i, el := range list.Elems() {
		ec := c.Required[i].Call
		args := el.Get("args")
		if ec.Tool != el.Get("tool").Text() || ec.Args.Checked() != (args.Kind() == jsondoc.Object) || ec.Args.Checked() && ec.Args.Len() != args.Len() {
			t.Fatalf("%s: call %d is %q with %d arguments (checked %v), its members %s and %s", s, i, ec.Tool, ec.Args.Len(), ec.Args.Checked(), el.Get("tool").Raw(), args.Raw())
		}
	}
}

var ignoredSeeds = []string{
	`[{"tool":"a","args":{},"description":"d","side_effects":{"f":1}},{"tool":"b"},{"tool":"c","x/y~z":1}]`,
	`{"calls":[{"tool":"a","result":1,"tool":"b","result":2}],"final":1}`,
	`[{"tool":"a"},{"tool":"b","\u0074ool2":[1],"":null}]`,
	`[]`, `[{"tool":"a"}]`,
	`[{"args":{"x":1},"tool":"a","args":{"y":2,"z":3}},{"args":null,"tool":"b","tool":"c"},{"tool":"d","args":{"w":[1,{"v":"u"}]},"e":{"args":1}}]`,
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

// TestGoldErrorPointers: the problems of a gold list's calls are located
// from each call's pointer, escaped keys and nested matchers included.
func TestGoldErrorPointers(t *testing.T) {
	for s, want := range map[string]string{
		`[1, {"tool": ""}, {"tool":"a","args":{"x":{"$bad":1}}}, {"tool":"b","args":[1]}, {"tool":"c","args":{"y":[{"$regex":"("}], "z~/":{"$any":false}}}]`: "invalid contract: /0: an expected call must be an object, got a number; /1/tool: tool must be a non-empty string; /2/args/x/$bad: unknown matcher \"$bad\" (valid: $any, $approx, $contains, $one_of, $regex, $type); /3/args: args must be an object or null, got an array; /4/args/y/0/$regex: regex does not compile: error parsing regexp: missing closing ): `(`; /4/args/z~0~1/$any: $any takes true",
		`{"calls":[{"tool":"a"},{"tool":7,"args":{"k":{"$one_of":3}}},"x"]}`:                                                                                 "invalid contract: /calls/1/tool: tool must be a non-empty string; /calls/1/args/k/$one_of: $one_of takes an array of candidates; /calls/2: an expected call must be an object, got a string",
	} {
		if _, err := ParseContract([]byte(s)); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", s, err, want)
		}
	}
	v, err := jsondoc.ParseString(`{"x":1,"contract":[{"tool":""}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseContractValue(v.Get("contract")); err == nil || err.Error() != "invalid contract: /0/tool: tool must be a non-empty string" {
		t.Errorf("ParseContractValue: %v", err)
	}
}

// BenchmarkGoldErrors reads gold lists of 500 and 5,000 calls that each
// have a problem: locating each costs the same however many calls come
// before it.
func BenchmarkGoldErrors(b *testing.B) {
	for _, n := range []int{500, 5000} {
		data := []byte("[" + strings.Repeat(`{"tool":"a","args":{"x":{"$regex":1}}},`, n-1) + `{"tool":""}]`)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseContract(data); err == nil {
					b.Fatal("no error")
				}
			}
		})
	}
}
