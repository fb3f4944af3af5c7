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
// value of the document s write what json.Marshal and an Encoder with
// SetEscapeHTML(false) write for its Any.
func checkAsWritten(t *testing.T, s string) {
	t.Helper()
	root, err := ParseString(s)
	if err != nil {
		return
	}
	d := root.d
	for j := range uint32(len(d.nodes)) {
		v := Value{d, j}
		if d.nodes[j].flag&flagKey != 0 || d.nodes[j].flag&flagSeq != 0 {
			continue // keys are written with their members; a sequence is no value
		}
		want, err := json.Marshal(v.Any())
		if err != nil {
			t.Fatal(err)
		}
		if got := v.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Fatalf("%q at node %d: AppendJSON = %s, json.Marshal x%s", s, j, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v.Any()); err != nil {
			t.Fatal(err)
		}
		if got, want := v.AppendJSONNoHTML([]byte("x")), "x"+strings.TrimSuffix(buf.String(), "\n"); string(got) != want {
			t.Fatalf("%q at node %d: AppendJSONNoHTML = %s, Encoder %s", s, j, got, want)
		}
	}
}

var asWrittenSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1, "b":2}`,
	`{"a" :1}`, "[1,\n2]", ` [1] `, `{"a":"x y z"}`, `{"a":"\u00e9"}`, `{"a":"é中🙂"}`, `{"a":"\u2028"}`, "{\"a\":\"\u2028\"}",
	"{\"a\":\"\u2029x\"}", `{"a":"<b>&amp;</b>"}`, `{"a":"\"q\""}`, `{"a":"\\"}`, `{"a":"\/"}`, `[1e2,-0,1.0,0.5E-3,-12]`,
	`{"":1,"a":{"":[]}}`, `{"ab":1,"a":2}`, `{"a":1,"ab":2}`, "{\"a\":\"\xff\"}", `[[[[[[[[[[{"z":[{"y":1,"x":2}]}]]]]]]]]]]`,
	`{"aaaaaaaa":"bbbbbbbbbbbbbbbbbbbbbbbb<cccccccc","b":1}`, `{"aaaaaaaa":"bbbbbbbbbbbbbbbbbbbbbbbb cccccccc"}`,
	`{"k":[{"a":1,"b":2},{"b":1,"a":2}]}`, `"str"`, `12`, `null`, `{"a":[1,2,3],"b":{}}`,
	`"{\"a\":\"b\\\\c\"}"`, `"\u003c\u003e\u0026"`, `"\u003C"`, `"\u001f\u0000\u007f"`, `"\u000a"`, `"\b\f\n\r\t"`,
	`"\u2028\u2029\u2027"`, `"\ud83d\ude00"`, `"\/"`, `"\u0022\u005c"`, `"é\n"`, `"<\n"`, `"\u00e9"`, `"\u0080"`,
	`{"a": 1, "b": [2, 3.5, {"c": "d e"}], "d": true}`, "[\n  {\n    \"a\": \"x\"\n  }\n]", `{ "a" : [ ] , "b" : { } }`,
	`{"a": "<b>", "c": "&"}`, `{"b": 1, "a": [1, 2]}`, `{"a": " spaced string ", "b": "x"}`, `[ "" , "" ]`,
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

// TestAsWrittenCopies pins which texts the fast path copies as they are
// and which it copies without the white space between their tokens.
func TestAsWrittenCopies(t *testing.T) {
	for s, want := range map[string][2]int{ // {HTML, no HTML}: 0 written by appendAt, 1 copied, 2 compacted
		`{"a":1,"b":[true,false,null],"c":{"d":"e f"}}`: {1, 1},
		`[1e2,-0,1.0]`:                    {1, 1},
		`{"a":"é中🙂"}`:                     {0, 0},
		`{"a":"<&>"}`:                     {0, 1},
		`{"b":1,"a":2}`:                   {0, 0},
		`{"a":1,"a":1}`:                   {0, 0},
		`{"a":1, "b":2}`:                  {2, 2},
		`{"a":"\u0041"}`:                  {0, 0},
		"{\"a\":\"\u2028\"}":              {0, 0},
		"{\"a\":\"\xff\"}":                {0, 0},
		`{"k":[{"a":1},{"b":1,"a":2}]}`:   {0, 0},
		`[{"a": 1}]`:                      {2, 2},
		`{"a":[1 ,2]}`:                    {2, 2},
		`{"a":{"b":"\n"}}`:                {0, 0},
		"\t{\"a\":[\"x\"]}\n":             {1, 1},
		`[[],{},[{}]]`:                    {1, 1},
		`[{"a":1,"b":{"c":[{"d":"e"}]}}]`: {1, 1},
		"{\n  \"a\": [\n    1,\n    \"x y\"\n  ],\n  \"b\": { }\n}": {2, 2},
		`{"a": "<b>", "b": null}`:                                   {0, 2},
		`{"b": 1, "a": 2}`:                                          {0, 0},
		`{"a": "\"q\""}`:                                            {0, 0},
		`{"":1,"!":2}`:                                              {1, 1},
		`{"!":1,"":2}`:                                              {0, 0},
		`{"a":1,"":2}`:                                              {0, 0},
		`{"ba":1,"bb":2,"c":{"x":[],"xa":{}}}`:                      {1, 1},
		`{"ba":1,"b":2}`:                                            {0, 0},
	} {
		root := mustParse(s)
		var got [2]int
		for i, html := range []bool{true, false} {
			if _, compact, ok := root.d.tokensAsWritten(0, html); ok {
				got[i] = 2
				if compact {
					got[i] = 1
				}
			}
		}
		if got != want {
			t.Errorf("tokensAsWritten(%q) = %v; want %v", s, got, want)
		}
		checkAsWritten(t, s)
	}
}

func mustParse(s string) Value {
	v, err := ParseString(s)
	if err != nil {
		panic(err)
	}
	return v
}

// TestLiteralAsWritten pins which string literals (between their quotes)
// are copied.
func TestLiteralAsWritten(t *testing.T) {
	for s, want := range map[string][2]bool{ // {HTML, no HTML}
		`{\"a\":\"b\\\\c\"}`:                  {true, true},
		`\u003c\u003e\u0026`:                  {true, false},
		`<>&`:                                 {false, true},
		`\u003C`:                              {false, false},
		`\u001f\u0000\b\f\n\r\t`:              {true, true},
		`\u000a`:                              {false, false},
		`\u007f`:                              {false, false},
		`\u2028\u2029`:                        {true, true},
		`\ud83d\ude00`:                        {false, false},
		`\/`:                                  {false, false},
		`\u0022`:                              {false, false},
		"é 中 🙂 \\n":                           {true, true},
		"\u2028":                              {false, false},
		"\xff\\n":                             {false, false},
		`abcdefghijklmnopqrstuvwxyz\"0123456`: {true, true},
	} {
		if got := [2]bool{literalAsWritten(s, true), literalAsWritten(s, false)}; got != want {
			t.Errorf("literalAsWritten(%q) = %v, want %v", s, got, want)
		}
	}
}
