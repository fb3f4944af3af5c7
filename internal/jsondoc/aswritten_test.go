package jsondoc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// checkAsWritten checks that AppendJSON and AppendJSONNoHTML of every
// value of the document s write what the plain encoder (appendAt, which
// never copies source text) writes, and that the plain encoder agrees with
// encoding/json on the root.
func checkAsWritten(t *testing.T, s string) {
	t.Helper()
	root, err := ParseString(s)
	if err != nil {
		return
	}
	d := root.d
	for j := range uint32(len(d.nodes)) {
		v := Value{d, j}
		if got, want := v.AppendJSON([]byte("x")), d.appendAt([]byte("x"), j, &htmlSafe); !bytes.Equal(got, want) {
			t.Fatalf("%q at node %d: AppendJSON = %s, plain encoder %s", s, j, got, want)
		}
		if got, want := v.AppendJSONNoHTML([]byte("x")), d.appendAt([]byte("x"), j, &plainSafe); !bytes.Equal(got, want) {
			t.Fatalf("%q at node %d: AppendJSONNoHTML = %s, plain encoder %s", s, j, got, want)
		}
	}
	want, err := json.Marshal(root.Any())
	if err != nil {
		t.Fatal(err)
	}
	if got := root.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("%q: AppendJSON = %s, json.Marshal %s", s, got, want)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root.Any()); err != nil {
		t.Fatal(err)
	}
	if got := root.AppendJSONNoHTML(nil); string(got) != strings.TrimSuffix(buf.String(), "\n") {
		t.Fatalf("%q: AppendJSONNoHTML = %s, Encoder %s", s, got, buf.String())
	}
}

var asWrittenSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1, "b":2}`,
	`{"a" :1}`, "[1,\n2]", ` [1] `, `{"a":"x y z"}`, `{"a":"\u00e9"}`, `{"a":"é中🙂"}`, `{"a":"\u2028"}`, "{\"a\":\"\u2028\"}",
	"{\"a\":\"\u2029x\"}", `{"a":"<b>&amp;</b>"}`, `{"a":"\"q\""}`, `{"a":"\\"}`, `{"a":"\/"}`, `[1e2,-0,1.0,0.5E-3,-12]`,
	`{"":1,"a":{"":[]}}`, `{"ab":1,"a":2}`, `{"a":1,"ab":2}`, "{\"a\":\"\xff\"}", `[[[[[[[[[[{"z":[{"y":1,"x":2}]}]]]]]]]]]]`,
	`{"aaaaaaaa":"bbbbbbbbbbbbbbbbbbbbbbbb<cccccccc","b":1}`, `{"aaaaaaaa":"bbbbbbbbbbbbbbbbbbbbbbbb cccccccc"}`,
	`{"k":[{"a":1,"b":2},{"b":1,"a":2}]}`, `"str"`, `12`, `null`, `{"a":[1,2,3],"b":{}}`,
}

func FuzzAsWritten(f *testing.F) {
	for _, s := range asWrittenSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		checkAsWritten(t, s)
	})
}

func TestAsWrittenSeeds(t *testing.T) {
	for _, s := range asWrittenSeeds {
		checkAsWritten(t, s)
	}
}

// TestAsWrittenRandom writes random values with json.Marshal (the form
// the fast path copies) and in other forms (indented, unsorted, with
// escapes) and checks every value of each against the plain encoder.
func TestAsWrittenRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	copied := 0
	for range 3000 {
		v := randomValue(r, 0)
		m, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		checkAsWritten(t, string(m))
		if root := mustParse(string(m)); root.Kind() >= Array {
			if _, ok := root.d.asWritten(0, false); ok {
				copied++
			}
		}
		ind, _ := json.MarshalIndent(v, "", " ")
		checkAsWritten(t, string(ind))
		checkAsWritten(t, randomText(r, 0))
	}
	if copied < 500 {
		t.Errorf("the fast path copied %d of 3000 marshalled values, want at least 500", copied)
	}
}

func randomString(r *rand.Rand) string {
	pieces := []string{"a", "b", "ab", " ", "<", ">", "&", "\"", "\\", "\n", "\x01", "é", "中", "🙂", "\u2028", "\u2029", "\xff", "/", "xyzxyzxy"}
	var sb strings.Builder
	for range r.IntN(6) {
		p := pieces[r.IntN(len(pieces))]
		if r.IntN(3) > 0 {
			p = pieces[r.IntN(3)]
		}
		sb.WriteString(p)
	}
	return sb.String()
}

func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(7)
	if depth > 6 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number([]string{"0", "-0", "1e2", "1.0", "-12.5E-3", "123456789012345678901234567890", "7"}[r.IntN(7)])
	case 3:
		return randomString(r)
	case 4, 5:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth+1)
		}
		return m
	}
	a := []any{}
	for range r.IntN(5) {
		a = append(a, randomValue(r, depth+1))
	}
	return a
}

// randomText writes a random value as text directly: keys in any order
// and repeated, white space between tokens now and then, strings with
// their characters escaped or not.
func randomText(r *rand.Rand, depth int) string {
	ws := func() string {
		if r.IntN(8) == 0 {
			return []string{" ", "\n", "\t", "\r"}[r.IntN(4)]
		}
		return ""
	}
	str := func() string {
		s := randomString(r)
		if r.IntN(2) == 0 {
			return strconv.Quote(s) // \x escapes make it invalid now and then
		}
		return string(AppendStringNoHTML(nil, s))
	}
	k := r.IntN(6)
	if depth > 5 {
		k = r.IntN(3)
	}
	switch k {
	case 0:
		return []string{"null", "true", "false", "0", "-0", "1e2", "1.0", "-1.5E+3"}[r.IntN(8)]
	case 1, 2:
		return str()
	case 3, 4:
		keys := []string{`"a"`, `"b"`, `"ab"`, `""`, str()}
		var sb strings.Builder
		sb.WriteString("{" + ws())
		for i := range r.IntN(5) {
			if i > 0 {
				sb.WriteString("," + ws())
			}
			sb.WriteString(keys[r.IntN(len(keys))] + ws() + ":" + ws() + randomText(r, depth+1) + ws())
		}
		sb.WriteString("}")
		return sb.String()
	}
	var sb strings.Builder
	sb.WriteString("[" + ws())
	for i := range r.IntN(5) {
		if i > 0 {
			sb.WriteString("," + ws())
		}
		sb.WriteString(randomText(r, depth+1) + ws())
	}
	sb.WriteString("]")
	return sb.String()
}

// TestAsWrittenCopies pins which texts the fast path copies.
func TestAsWrittenCopies(t *testing.T) {
	for s, want := range map[string][2]bool{ // {HTML, no HTML}
		`{"a":1,"b":[true,false,null],"c":{"d":"e f"}}`: {true, true},
		`[1e2,-0,1.0]`:                    {true, true},
		`{"a":"é中🙂"}`:                     {false, false},
		`{"a":"<&>"}`:                     {false, true},
		`{"b":1,"a":2}`:                   {false, false},
		`{"a":1,"a":1}`:                   {false, false},
		`{"a":1, "b":2}`:                  {false, false},
		`{"a":"\u0041"}`:                  {false, false},
		"{\"a\":\"\u2028\"}":              {false, false},
		"{\"a\":\"\xff\"}":                {false, false},
		`{"k":[{"a":1},{"b":1,"a":2}]}`:   {false, false},
		`[{"a": 1}]`:                      {false, false},
		`{"a":[1 ,2]}`:                    {false, false},
		`{"a":{"b":"\n"}}`:                {false, false},
		"\t{\"a\":[\"x\"]}\n":             {true, true},
		`[[],{},[{}]]`:                    {true, true},
		`[{"a":1,"b":{"c":[{"d":"e"}]}}]`: {true, true},
	} {
		root := mustParse(s)
		_, html := root.d.asWritten(0, true)
		_, plain := root.d.asWritten(0, false)
		if [2]bool{html, plain} != want {
			t.Errorf("asWritten(%q) = %v, %v; want %v", s, html, plain, want)
		}
	}
}

func mustParse(s string) Value {
	v, err := ParseString(s)
	if err != nil {
		panic(err)
	}
	return v
}
