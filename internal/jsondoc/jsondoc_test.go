package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stdDecode decodes with encoding/json with UseNumber, refusing what
// encoding/json refuses and what exceeds MaxDepth or MaxNumberLen.
func stdDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if depthOf(v) > MaxDepth {
		return nil, errors.New("too deep")
	}
	if longNumber(v) {
		return nil, errors.New("numeric literal too long")
	}
	return v, nil
}

func depthOf(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		d := 0
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

func longNumber(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if longNumber(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if longNumber(e) {
				return true
			}
		}
	case json.Number:
		return len(x) > MaxNumberLen
	}
	return false
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`{"a": [1, -2.5e3, true, false, null], "b": {}}`, map[string]any{"a": []any{json.Number("1"), json.Number("-2.5e3"), true, false, nil}, "b": map[string]any{}}},
		{`"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t"`, "é😀\n\"\\/\b\f\r\t"},
		{`"\ud83d"`, "\ufffd"},
		{`"\ud83dx"`, "\ufffdx"},
		{`"\ude00\ud83d\u0041"`, "\ufffd\ufffdA"},
		{"\"a\xffb\"", "a\ufffdb"},
		{"\"\xa8\\b0000\"", "\ufffd\b0000"},
		{"\"\xc3\xa9\xa8x\\n\"", "é\ufffdx\n"},
		{`12345678901234567890123`, json.Number("12345678901234567890123")},
		{`{"k": 1, "k": 2}`, map[string]any{"k": json.Number("2")}},
		{` [ ] `, []any{}},
		{`{"a": "x\u0079", "b": "xy", "c": "xy"}`, map[string]any{"a": "xy", "b": "xy", "c": "xy"}},
	}
	for _, tc := range tests {
		v, err := ParseString(tc.in)
		if err != nil {
			t.Errorf("ParseString(%q) error: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, v.Any()); diff != "" {
			t.Errorf("ParseString(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestNavigation(t *testing.T) {
	v, err := ParseString(`{"a": [1, {"b": "x"}, [true]], "k": 1, "e\u0073c": "\u00e9", "k": 2, "n": null}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Get("a").Index(1).Get("b").Text(); got != "x" {
		t.Errorf(`Get("a").Index(1).Get("b") = %q, want "x"`, got)
	}
	if n, _ := v.Get("k").Num(); n != "2" {
		t.Errorf(`Get("k") = %q, want the last value 2`, n)
	}
	if got := v.Get("esc").Text(); got != "é" {
		t.Errorf(`Get("esc") = %q`, got)
	}
	if !v.Get("n").IsNull() || v.Get("missing").Exists() || v.Get("a").Get("x").Exists() || v.Index(0).Exists() {
		t.Error("null, missing members and wrong kinds")
	}
	if v.Len() != 4 {
		t.Errorf("Len = %d, want 4 distinct keys", v.Len())
	}
	var keys []string
	for k := range v.Members() {
		keys = append(keys, k)
	}
	if diff := cmp.Diff([]string{"a", "esc", "k", "n"}, keys); diff != "" {
		t.Errorf("Members keys (-want +got):\n%s", diff)
	}
	if got := v.Get("a").Raw(); got != `[1, {"b": "x"}, [true]]` {
		t.Errorf("Raw = %q", got)
	}
	if got := v.Get("esc").Raw(); got != `"\u00e9"` {
		t.Errorf("Raw of an escaped string = %q", got)
	}
	if got := v.Get("a").Index(2).Index(0).Pointer(); got != "/a/2/0" {
		t.Errorf("Pointer = %q", got)
	}
}

// TestPointers checks that every value's Pointer leads back to it.
func TestPointers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		doc := randJSON(r, 0)
		v, err := ParseString(doc)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		dup := false
		for _, nd := range v.d.nodes {
			dup = dup || nd.flag&flagDup != 0
		}
		if dup {
			continue // a shadowed member has no pointer of its own
		}
		for j := range v.d.nodes {
			w := Value{d: v.d, i: uint32(j)}
			if k := v.d.nodes[j].kind; k == String && isKeyNode(v.d, uint32(j)) {
				continue
			}
			if got := follow(v, w.Pointer()); got != w {
				t.Fatalf("%s: node %d has pointer %q, which leads to node %d", doc, j, w.Pointer(), got.i)
			}
		}
	}
}

// isKeyNode reports whether node j is an object key.
func isKeyNode(d *Doc, j uint32) bool {
	for i := range d.nodes {
		nd := &d.nodes[i]
		if nd.kind != Object {
			continue
		}
		k := uint32(i) + 1
		for range nd.n {
			if k == j {
				return true
			}
			k = d.next(k + 1)
		}
	}
	return false
}

// checkGet checks that Get finds every member of every object of v with
// the value encoding/json decoded (want; the last of a repeated key), and
// no member by a key of another length or text.
func checkGet(t *testing.T, data []byte, v Value, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		for k, wv := range w {
			got := v.Get(k)
			if diff := cmp.Diff(wv, got.Any()); diff != "" {
				t.Fatalf("%q: Get(%q) differs from encoding/json (-std +ours):\n%s", data, k, diff)
			}
			checkGet(t, data, got, wv)
			for _, other := range []string{k + "x", "x" + k, k[:len(k)/2]} {
				if _, ok := w[other]; !ok && v.Get(other).Exists() {
					t.Fatalf("%q: Get(%q) found a member", data, other)
				}
			}
		}
	case []any:
		for i, e := range v.Elems() {
			checkGet(t, data, e, w[i])
		}
	}
}

// follow resolves an RFC 6901 pointer from v (without repeated keys).
func follow(v Value, p string) Value {
	if p == "" {
		return v
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if v.Kind() == Array {
			var i int
			fmt.Sscan(tok, &i)
			v = v.Index(i)
		} else {
			v = v.Get(tok)
		}
	}
	return v
}

// randJSON returns a random JSON text with white space, escapes, repeated
// keys and numbers of every form.
func randJSON(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[r.IntN(5)] }
	scalars := []string{`null`, `false`, `true`, `""`, `"x"`, `0`, `-0`, `1.5e-3`, `12345678901234567890123`, `"a\"b\\c\/d\b\f\n\r\t\u00e9\ud800"`, "\"\xff\xfe\"", `"é"`, `"<&>\u2028"`, `"~/"`}
	if depth > 3 || r.IntN(3) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	if r.IntN(2) == 0 {
		var elems []string
		for range r.IntN(5) {
			elems = append(elems, ws()+randJSON(r, depth+1)+ws())
		}
		return "[" + strings.Join(elems, ",") + "]"
	}
	keys := []string{`"a"`, `"b"`, `"a"`, `"\u0061"`, `"~1/"`, `"é"`, `""`, `"z"`, `"<"`}
	var members []string
	for range r.IntN(6) {
		members = append(members, ws()+keys[r.IntN(len(keys))]+ws()+":"+ws()+randJSON(r, depth+1)+ws())
	}
	return "{" + strings.Join(members, ",") + "}"
}

// mutate damages s at random.
func mutate(r *rand.Rand, s string) string {
	const pool = "{}[]\",:\\ \t\n0123456789-+.eEtrufalsn\x00\x1f\x7f\xff/ub"
	if s == "" {
		return s
	}
	i := r.IntN(len(s))
	c := string(pool[r.IntN(len(pool))])
	switch r.IntN(4) {
	case 0:
		return s[:i] + s[i+1:]
	case 1:
		return s[:i] + c + s[i:]
	case 2:
		return s[:i] + c + s[i+1:]
	}
	return s[:i]
}

// checkAgainstStd requires Parse and encoding/json to agree on data: both
// accept it with equal values, or both refuse it; and the encoders, the
// skipper and the splitters to agree with encoding/json on it.
func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	v, err := Parse(data)
	want, stdErr := stdDecode(data)
	if (err == nil) != (stdErr == nil) {
		t.Fatalf("Parse(%q): error %v, encoding/json error %v", data, err, stdErr)
	}
	if valid := Valid(string(data)); valid != (err == nil) {
		t.Fatalf("Valid(%q) = %v, Parse error %v", data, valid, err)
	}
	checkPadded(t, data, v, err)
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
			t.Fatalf("Parse(%q): error %#v", data, err)
		}
		checkErrorAgainstStd(t, data, se)
		return
	}
	if got, want := v.Doc().HoldsSlashU(), bytes.Contains(data, []byte(`\u`)); got != want {
		t.Fatalf("Parse(%q): HoldsSlashU() = %v, want %v", data, got, want)
	}
	if diff := cmp.Diff(want, v.Any()); diff != "" {
		t.Fatalf("Parse(%q) differs from encoding/json (-std +ours):\n%s", data, diff)
	}
	checkGet(t, data, v, want)
	stdOut, _ := json.Marshal(want)
	if got := v.AppendJSON(nil); !bytes.Equal(got, stdOut) {
		t.Fatalf("AppendJSON(%q) = %s, json.Marshal %s", data, got, stdOut)
	}
	var noHTML bytes.Buffer
	enc := json.NewEncoder(&noHTML)
	enc.SetEscapeHTML(false)
	enc.Encode(want)
	if got := v.AppendJSONNoHTML(nil); !bytes.Equal(got, bytes.TrimSuffix(noHTML.Bytes(), []byte("\n"))) {
		t.Fatalf("AppendJSONNoHTML(%q) = %s, an Encoder without HTML escaping %s", data, got, noHTML.Bytes())
	}
	if got, err := AppendAny(nil, want); err != nil || !bytes.Equal(got, stdOut) {
		t.Fatalf("AppendAny(%q) = %s, %v; json.Marshal %s", data, got, err, stdOut)
	}
	if got := v.AppendCanonical(nil); !bytes.Equal(got, plainCanonical(want)) {
		t.Fatalf("AppendCanonical(%q) = %s, want %s", data, got, plainCanonical(want))
	}
	if m, ok := want.(map[string]any); ok {
		var raw map[string]json.RawMessage
		json.Unmarshal(data, &raw)
		for k := range m {
			got, found, ok := Lookup(string(data), k)
			if !ok || !found || !bytes.Equal(bytes.TrimSpace(raw[k]), []byte(got)) {
				t.Fatalf("Lookup(%q, %q) = %q, %v, %v; want %s", data, k, got, found, ok, raw[k])
			}
		}
	} else if _, _, ok := Lookup(string(data), "a"); ok {
		t.Fatalf("Lookup(%q) accepts a document that is not an object", data)
	}
	if a, ok := want.([]any); ok {
		elems, ok := Elements(string(data))
		if !ok || len(elems) != len(a) {
			t.Fatalf("Elements(%q) = %q, %v", data, elems, ok)
		}
		var raw []json.RawMessage
		json.Unmarshal(data, &raw)
		for i := range elems {
			if !bytes.Equal(bytes.TrimSpace(raw[i]), []byte(elems[i])) {
				t.Fatalf("Elements(%q)[%d] = %q, want %s", data, i, elems[i], raw[i])
			}
		}
	}
}

// checkPadded requires data followed by white space to read as data
// does (v, err): the same nodes and decoded text, or the same error
// before the end of data. read takes its fast paths (a key or white
// space from one word) only with bytes to spare after them, so the text
// near the end of data takes the plain paths, and in the padded text the
// fast ones.
func checkPadded(t *testing.T, data []byte, v Value, err error) {
	t.Helper()
	padded := append(bytes.Clone(data), "                "...)
	pv, perr := Parse(padded)
	if err == nil {
		if perr != nil {
			t.Fatalf("Parse(%q) error %v, without the white space after it none", padded, perr)
		}
		if !reflect.DeepEqual(v.d.nodes, pv.d.nodes) || v.d.esc != pv.d.esc {
			t.Fatalf("Parse(%q) and Parse(%q) differ:\n%v %q\n%v %q", data, padded, v.d.nodes, v.d.esc, pv.d.nodes, pv.d.esc)
		}
		return
	}
	se, _ := err.(*SyntaxError)
	pse, _ := perr.(*SyntaxError)
	if se == nil || pse == nil {
		t.Fatalf("Parse(%q) error %v, Parse(%q) error %v", data, err, padded, perr)
	}
	if se.Offset < len(data) && *se != *pse {
		t.Fatalf("Parse(%q) error %+v, Parse(%q) error %+v", data, se, padded, pse)
	}
}

// checkErrorAgainstStd requires Parse's error se on data to be where
// encoding/json's is, with its message, and at the line and column of
// its offset. encoding/json counts the bytes read up to and including a
// wrong one, so its offset is one more than se's except at the end of
// the input, where it reads a space that may be wrong in its stead
// ("invalid character ' ' in literal true"). It has no limit on numeric literals and a deeper one on
// nesting, and names a byte >= 0x80 by itself where Parse names its
// whole character: those messages are not compared.
func checkErrorAgainstStd(t *testing.T, data []byte, se *SyntaxError) {
	t.Helper()
	if line, col := LineCol(string(data), se.Offset); se.Line != line || se.Column != col {
		t.Fatalf("Parse(%q): error %+v is not at the line and column of its offset (%d:%d)", data, se, line, col)
	}
	if strings.HasPrefix(se.Msg, "exceeded max depth") || strings.HasPrefix(se.Msg, "numeric literal longer") {
		return
	}
	var v any
	var std *json.SyntaxError
	if !errors.As(json.Unmarshal(data, &v), &std) {
		t.Fatalf("Parse(%q): error %v, encoding/json no syntax error", data, se)
	}
	want := int(std.Offset)
	if se.Offset < len(data) {
		want--
	}
	if se.Offset != want {
		t.Fatalf("Parse(%q): error %+v at %d, encoding/json %q at %d", data, se, se.Offset, std, std.Offset)
	}
	if se.Msg == "empty document" {
		if std.Error() != "unexpected end of JSON input" {
			t.Fatalf("Parse(%q): empty document, encoding/json %q", data, std)
		}
		return
	}
	if se.Offset == len(data) {
		if se.Msg != "unexpected end of JSON input" || std.Error() != se.Msg && !strings.HasPrefix(std.Error(), "invalid character ' ' ") {
			t.Fatalf("Parse(%q): error %q at the end, encoding/json %q", data, se.Msg, std)
		}
		return
	}
	if data[se.Offset] >= 0x80 {
		return
	}
	if se.Msg != std.Error() {
		t.Fatalf("Parse(%q): error %q, encoding/json %q", data, se.Msg, std)
	}
}

// plainCanonical is the canonical form written from encoding/json's
// decoded value, as record.Canonical wrote it.
func plainCanonical(v any) []byte {
	var b []byte
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case bool:
			b = fmt.Appendf(b, "%v", x)
		case json.Number:
			b = append(b, x...)
		case string:
			b = appendCanonicalString(b, x)
		case []any:
			b = append(b, '[')
			for i, e := range x {
				if i > 0 {
					b = append(b, ',')
				}
				write(e)
			}
			b = append(b, ']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sortUTF16(keys)
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCanonicalString(b, k)
				b = append(b, ':')
				write(x[k])
			}
			b = append(b, '}')
		}
	}
	write(v)
	return b
}

func sortUTF16(keys []string) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && compareUTF16(keys[j-1], keys[j]) > 0; j-- {
			keys[j-1], keys[j] = keys[j], keys[j-1]
		}
	}
}

// TestAgainstEncodingJSON compares Parse, the encoders and the splitters
// with encoding/json on random documents, intact and damaged.
func TestAgainstEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		s := randJSON(r, 0)
		if r.IntN(2) == 0 {
			s = indent(r, s)
		}
		for range r.IntN(3) {
			if r.IntN(2) == 0 {
				s = mutate(r, s)
			}
		}
		checkAgainstStd(t, []byte(s))
	}
}

// indent returns the JSON text s pretty-printed (with "\n" and up to
// three spaces, or "\r\n" and a tab, a line's indentation often longer
// than one word), or s when encoding/json does not read it.
func indent(r *rand.Rand, s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	ind := strings.Repeat(" ", 1+r.IntN(3))
	if r.IntN(5) == 0 {
		ind = "\t"
	}
	b, _ := json.MarshalIndent(v, "", ind)
	if r.IntN(5) == 0 {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	return string(b)
}

// FuzzParse compares Parse, the encoders and the splitters with
// encoding/json.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5,-0,1e9,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true}}`,
		`"\ud800\udc00\ud800"`, "\"\xed\xa0\x80\"", `[{"k":1,"k":2}]`, `01`, `1.e5`, `-`, `"\u00"`, ` [ ] `,
		`{"b":1,"a":2,"b":3}`, `{"<":"&","\u2028":1}`,
		"[\n {\n  \"tool\": \"x\",\n  \"args\": {\n   \"q\": [\n    2.5,\n    \"\\u0041\"\n   ],\n   \"q\": {}\n  }\n }\n]",
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"small_trace", "medium_gold"} {
		data, err := os.ReadFile("../engine/testdata/perf/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkAgainstStd(t, data) })
}

// TestRepeatedKeys checks that a key is found repeated (the last member
// with it wins) whether it is read from one word or not (near the end of
// the text, eight bytes or longer, escaped).
func TestRepeatedKeys(t *testing.T) {
	for _, tc := range []struct {
		doc string
		dup bool
	}{
		{`{"a": 1, "b": 2, "a": 3}`, true},
		{`{"a": 1, "\u0061": 3}`, true},
		{`{"\u0061": 1, "a": 3}`, true},
		{`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "a": 10}`, true},
		{`{"abcdefgh": 1, "abcdefgi": 3}`, false},
		{`{"abcdefgh": 1, "abcdefgh": 3}`, true},
		{`{"abcdefghij": 1, "abcdefgh\u0069j": 3}`, true},
		{`{"": 1, "": 3}`, true},
		{`{"": 1, "\u0000": 3}`, false},
		{`{"a": 1, "a\u0000": 3}`, false},
		{`{"é": 1, "\u00e9": 3}`, true},
		{`{"key": 1, "kez": 2, "keys": 3}`, false},
	} {
		for _, doc := range []string{tc.doc, tc.doc + "               "} {
			v, err := ParseString(doc)
			if err != nil {
				t.Fatalf("ParseString(%q): %v", doc, err)
			}
			if got := v.Nodes().RepeatsKey(0); got != tc.dup {
				t.Errorf("ParseString(%q): RepeatsKey %v, want %v", doc, got, tc.dup)
			}
			var want map[string]any
			d := json.NewDecoder(strings.NewReader(doc))
			d.UseNumber()
			if err := d.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(any(want), v.Any()); diff != "" {
				t.Errorf("ParseString(%q) mismatch (-want +got):\n%s", doc, diff)
			}
			for k, wv := range want {
				if got := v.Get(k).Any(); !reflect.DeepEqual(got, wv) {
					t.Errorf("ParseString(%q).Get(%q) = %v, want %v", doc, k, got, wv)
				}
			}
		}
	}
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		ok   bool
		msg  string
		off  int
		ptr  string
		line int
	}{
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), true, "", 0, "", 0},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), false, "exceeded max depth of 1000 nested arrays and objects", MaxDepth, strings.Repeat("/0", MaxDepth), 1},
		{`{"n": ` + strings.Repeat("9", MaxNumberLen) + `}`, true, "", 0, "", 0},
		{"{\n\"n\": " + strings.Repeat("9", MaxNumberLen+1) + `}`, false, "numeric literal longer than 500 bytes", 7, "/n", 2},
	} {
		_, err := ParseString(tc.doc)
		if (err == nil) != tc.ok {
			t.Errorf("%.30s…: error %v, want ok=%v", tc.doc, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		se := err.(*SyntaxError)
		if se.Msg != tc.msg || se.Offset != tc.off || se.Pointer != tc.ptr || se.Line != tc.line {
			t.Errorf("%.30s…: error %+v, want %q at %d (line %d) %s", tc.doc, se, tc.msg, tc.off, tc.line, tc.ptr)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{``, "line 1:1: empty document"},
		{" \n", "line 2:1: empty document"},
		{`{"a": [1, 2,]}`, "line 1:13: invalid character ']' looking for beginning of value (at /a/2)"},
		{"{\"calls\": [{\"tool\": \"x\"}, {\"tool\": tru}]}", "line 1:39: invalid character '}' in literal true (expecting 'e') (at /calls/1/tool)"},
		{`{"a" 1}`, "line 1:6: invalid character '1' after object key"},
		{`{"a~/b": {"c": "é` + "\n", "line 1:19: invalid character '\\n' in string literal (at /a~0~1b/c)"},
		{`[1] x`, "line 1:5: invalid character 'x' after top-level value"},
		{`{"a": é}`, "line 1:7: invalid character 'é' looking for beginning of value (at /a)"},
		{`[1, 2 3]`, "line 1:7: invalid character '3' after array element"},
		{`{"a": "\x"}`, `line 1:9: invalid character 'x' in string escape code (at /a)`},
		{`"\u12g4"`, `line 1:6: invalid character 'g' in \u hexadecimal character escape`},
		{`-`, "line 1:2: unexpected end of JSON input"},
		{`[1.]`, "line 1:4: invalid character ']' after decimal point in numeric literal (at /0)"},
	} {
		_, err := ParseString(tc.doc)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseString(%q) error %v, want %s", tc.doc, err, tc.want)
		}
	}
}

func TestParseSeq(t *testing.T) {
	v, err := ParseSeq(" 1 \n\"ok\" {\"k\":1} ")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{json.Number("1"), "ok", map[string]any{"k": json.Number("1")}}
	if diff := cmp.Diff(want, v.Any()); diff != "" {
		t.Errorf("values mismatch (-want +got):\n%s", diff)
	}
	var starts []int
	for _, e := range v.Elems() {
		starts = append(starts, e.Offset())
	}
	if diff := cmp.Diff([]int{1, 4, 9}, starts); diff != "" {
		t.Errorf("starts mismatch (-want +got):\n%s", diff)
	}
	if got := v.Index(2).Get("k").Pointer(); got != "/2/k" {
		t.Errorf("pointer %q", got)
	}
	_, err = ParseSeq("{}\n{\"a\": [1,}\n")
	if err == nil || err.Error() != "line 2:10: invalid character '}' looking for beginning of value (at /1/a/1)" {
		t.Errorf("error %v", err)
	}
	if v, err := ParseSeq(" \n"); err != nil || v.Kind() != Array || v.Len() != 0 {
		t.Errorf("empty sequence: %v %v", v.Any(), err)
	}
}

// TestParserShares checks that documents read by one Parser stay intact
// as it reads more, their buffers growing.
func TestParserShares(t *testing.T) {
	var p Parser
	var docs []Value
	var texts []string
	for i := range 500 {
		s := fmt.Sprintf(`{"i": %d, "s": "\u00e9%d\n", "a": [%d, "x"]}`, i, i, i)
		v, err := p.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
		texts = append(texts, s)
		if i%7 == 0 {
			if _, err := p.Parse(`{"bad": "\u00e9`); err == nil {
				t.Fatal("no error")
			}
		}
	}
	for i, v := range docs {
		var want any
		dec := json.NewDecoder(strings.NewReader(texts[i]))
		dec.UseNumber()
		dec.Decode(&want)
		if !reflect.DeepEqual(want, v.Any()) {
			t.Fatalf("document %d reads %v, want %v", i, v.Any(), want)
		}
	}
}

func TestAppendAny(t *testing.T) {
	v, _ := ParseString(`{"b":[1,"<x>"],"a":null}`)
	for _, x := range []any{
		map[string]any{"z": 1, "a": []any{1.5, json.Number("2"), "é\u2028", nil, true}, "v": v},
		[]any{json.Number(""), float64(1e21), 1e-7, math.Copysign(0, -1)},
		map[string]any{}, []any{}, map[string]any(nil), []any(nil),
	} {
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendAny([]byte("x"), x)
		if err != nil || string(got) != "x"+string(want) {
			t.Errorf("AppendAny(%v) = %s, %v; want x%s", x, got, err, want)
		}
	}
	for _, x := range []any{json.Number("01"), []any{1, json.Number("x")}} {
		got, err := AppendAny([]byte("x"), x)
		if !errors.Is(err, ErrUnsupported) || string(got) != "x" {
			t.Errorf("AppendAny(%v) = %s, %v; want ErrUnsupported", x, got, err)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12.5e-3": true, "1E9": true, "123456789012345678901234567890": true,
		"": false, "01": false, "1.": false, ".5": false, "+1": false, "1e": false, "1 ": false, " 1": false, "NaN": false, "0x10": false,
	} {
		if got := IsNumber(s); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestLineCol(t *testing.T) {
	s := "ab\ncd\n\nx"
	for _, tc := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {6, 3, 1}, {7, 4, 1}, {99, 4, 2}, {-1, 1, 1}} {
		if l, c := LineCol(s, tc.off); l != tc.line || c != tc.col {
			t.Errorf("LineCol(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}

func TestLineColBreaks(t *testing.T) {
	s := "ab\rcd\r\n\rx\n"
	for _, tc := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 2, 4}, {7, 3, 1}, {8, 4, 1}, {9, 4, 2}, {10, 5, 1}, {99, 5, 1}, {-1, 1, 1}} {
		if l, c := LineColBreaks(s, tc.off); l != tc.line || c != tc.col {
			t.Errorf("LineColBreaks(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
	if l, c := LineColBreaks("ab\ncd", 4); l != 2 || c != 2 {
		t.Errorf("LineColBreaks without CR = %d:%d, want 2:2", l, c)
	}
}

func TestMarshalUnmarshal(t *testing.T) {
	type call struct {
		Args   Value `json:"args"`
		Result Value `json:"result,omitzero"`
	}
	var c call
	if err := json.Unmarshal([]byte(`{"args": {"b": 1, "a": "<"}}`), &c); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(c)
	if err != nil || string(out) != `{"args":{"a":"\u003c","b":1}}` {
		t.Errorf("Marshal = %s, %v", out, err)
	}
	out, _ = json.Marshal(call{})
	if string(out) != `{"args":null}` {
		t.Errorf("Marshal of zero values = %s", out)
	}
	c = call{}
	if err := json.Unmarshal([]byte(`{"args": null, "result": null}`), &c); err != nil || c.Args.Exists() || c.Result.Exists() {
		t.Errorf("null reads as %+v, %v; want zero Values", c, err)
	}
	v := MustFromAny(map[string]any{"b": []any{1, "x"}, "a": nil})
	if got := string(v.AppendJSON(nil)); got != `{"a":null,"b":[1,"x"]}` {
		t.Errorf("FromAny = %s", got)
	}
	if _, err := FromAny(math.NaN()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("FromAny(NaN) error = %v", err)
	}
}

func TestObjectMembersBytes(t *testing.T) {
	data := []byte(` {"a": [1, 2], "b\u0063": "x", "a": {}} `)
	var got []string
	ok := ObjectMembersBytes(data, func(k string, raw []byte) bool {
		got = append(got, k+"="+string(raw))
		return true
	})
	if !ok || strings.Join(got, " ") != `a=[1, 2] bc="x" a={}` {
		t.Errorf("ObjectMembersBytes = %v %q", ok, got)
	}
	if ObjectMembersBytes([]byte(`{"a":1,}`), func(string, []byte) bool { return true }) {
		t.Error("accepted a trailing comma")
	}
}

// TestCensus checks Census's counts on a document with every kind, a
// repeated key and nesting, and on a scalar and the zero Value.
func TestCensus(t *testing.T) {
	v, err := ParseString(`{"a": [1, "x", true, null, {"b": "y", "b": 2}], "c": {}, "d": [[]]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Census{Members: 5, Elements: 6}
	want.Values[Object], want.Values[Array], want.Values[Number] = 3, 3, 2
	want.Values[String], want.Values[Bool], want.Values[Null] = 2, 1, 1
	if got := v.Census(); got != want {
		t.Errorf("Census() = %+v, want %+v", got, want)
	}
	var sub Census
	sub.Values[Object], sub.Values[String], sub.Values[Number], sub.Members = 1, 1, 1, 2
	if got := v.Get("a").Index(4).Census(); got != sub {
		t.Errorf("Census() of /a/4 = %+v, want %+v", got, sub)
	}
	var one Census
	one.Values[String] = 1
	if got := v.Get("a").Index(1).Census(); got != one {
		t.Errorf("Census() of a string = %+v, want %+v", got, one)
	}
	one.Add(sub)
	if one.Values[String] != 2 || one.Members != 2 || one.Values[Object] != 1 {
		t.Errorf("Add gave %+v", one)
	}
	if got := (Value{}).Census(); got != (Census{}) {
		t.Errorf("Census() of the zero Value = %+v, want none", got)
	}
}

// TestEscapedStrings reads string literals with escapes (which strSlow
// decodes eight bytes at a time between them) of many lengths, with the
// escape, a multi-byte character or invalid UTF-8 at every position and
// the literal's end at every distance from the end of the input (and
// the input cut short before its closing quote), alone,
// as object members, and one document after another through one
// Parser, and checks each against encoding/json.
func TestEscapedStrings(t *testing.T) {
	pieces := []string{`\"`, `\"\"\"\"\"`, `\\`, `\\u`, `\\\u0075`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud800`, "é", "\xff", `\/`, "<"}
	var p Parser
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			for _, piece := range pieces {
				lit := `"` + strings.Repeat("a", at) + piece + strings.Repeat("b", n-at) + `\t"`
				for _, doc := range []string{lit, `{"k":` + lit + `,"m":[` + lit + `]}`, "[" + lit + "," + lit + "]"} {
					checkAgainstStd(t, []byte(doc))
					checkAgainstStd(t, []byte(doc[:len(doc)-1])) // cut short: an error
					v, err := p.Parse(doc)
					if err != nil {
						t.Fatalf("Parser.Parse(%q): %v", doc, err)
					}
					if got, want := v.Doc().HoldsSlashU(), strings.Contains(doc, `\u`); got != want {
						t.Fatalf("Parser.Parse(%q): HoldsSlashU() = %v, want %v", doc, got, want)
					}
					want, _ := stdDecode([]byte(doc))
					if diff := cmp.Diff(want, v.Any()); diff != "" {
						t.Fatalf("Parser.Parse(%q) differs from encoding/json (-std +ours):\n%s", doc, diff)
					}
				}
			}
		}
	}
	// A literal longer than the room strSlow reserves at first.
	long := `"` + strings.Repeat(`ab\"cd\\ef\u00e9`, 2000) + "\xff" + `"`
	checkAgainstStd(t, []byte(long))
	checkAgainstStd(t, []byte(`[`+long+`,`+long+`]`))
}
