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
		if nd := &d.nodes[j]; nd.kind >= Array && nd.flag&flagSeq == 0 {
			tokens, compact := walkAsWritten(d, j)
			if got := [2]bool{nd.flag&flagTokens != 0, nd.flag&flagCompact != 0}; got != [2]bool{tokens, tokens && compact} {
				t.Fatalf("%q at node %d: flagTokens, flagCompact = %v, the walk finds %v", s, j, got, [2]bool{tokens, compact})
			}
			if nd.kind == Object {
				if got, want := nd.flag&flagDup != 0, walkRepeatsKey(d, j); got != want {
					t.Fatalf("%q at node %d: flagDup %v, the walk finds a repeated key: %v", s, j, got, want)
				}
			}
		}
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
	// A Parser's later document (its nodes and decoded strings after
	// another's) and a sequence of the text twice get the same flags.
	var p Parser
	if _, err := p.Parse(`{"b":"\u0041","a":[1, 2]}`); err != nil {
		t.Fatal(err)
	}
	later, err := p.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := ParseSeq(s + "\n" + s)
	if err != nil {
		t.Fatal(err)
	}
	for j, nd := range d.nodes {
		if got := later.d.nodes[j].flag; got != nd.flag {
			t.Fatalf("%q at node %d: flags %#x after another document, %#x alone", s, j, got, nd.flag)
		}
		for _, at := range []int{1 + j, 1 + len(d.nodes) + j} {
			if got := seq.d.nodes[at].flag; got != nd.flag {
				t.Fatalf("%q at node %d: flags %#x in a sequence, %#x alone", s, j, got, nd.flag)
			}
		}
	}
}

// walkRepeatsKey reports whether two keys of object j have the same
// text.
func walkRepeatsKey(d *Doc, j uint32) bool {
	seen := map[string]bool{}
	k := j + 1
	for range d.nodes[j].n {
		key := d.text(k)
		if seen[key] {
			return true
		}
		seen[key] = true
		k = d.next(k + 1)
	}
	return false
}

// walkAsWritten is what the parser's flagTokens and flagCompact say of
// array or object j, found by walking its nodes: tokens reports that
// every string in it is plain ASCII as read and every object's keys
// increase strictly, compact that the text's length is the compact length
// of its tokens as well.
func walkAsWritten(d *Doc, j uint32) (tokens, compact bool) {
	top := &d.nodes[j]
	raw := d.src[top.off:top.rend]
	// The compact length of the tokens, which equals the text's length
	// exactly when nothing lies between them: a plain string's literal is
	// its text and two quotes; a number or literal is its text; an array
	// of n elements has its brackets and n-1 commas, an object of n
	// members also the n colons of its keys.
	size := uint32(0)
	nodes := d.nodes[j:d.next(j)]
	for k := range nodes {
		nd := &nodes[k]
		if nd.kind == String && nd.flag&(flagEsc|flagWide) != 0 {
			return false, false
		}
		n := nd.n
		switch nd.kind {
		case String:
			size += n + 2
		case Object:
			var prev string
			kj := j + uint32(k) + 1
			for i := range n {
				if d.nodes[kj].flag&flagEsc != 0 {
					return false, false
				}
				key := d.text(kj)
				if i > 0 && key <= prev {
					return false, false
				}
				prev = key
				kj = d.next(kj + 1)
			}
			size += n
			fallthrough
		case Array:
			size += n + 1
			if n == 0 {
				size++
			}
		default:
			size += n
		}
	}
	return true, size == uint32(len(raw))
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
	`{"abcdefgh":1,"abcdefgh":2}`, `{"abcdefgh":1,"abcdefghi":2,"abcdefgi":3}`, `{"abcdefghij":1,"abcdefghi":2}`,
	`{"a":{"x":1},"a":2}`, `{"a":{"z":1},"b":[{"y":2,"x":1}],"c":3}`, `{"b":{"c":1},"a":1}`, `{"a":1,"é":2,"f":3}`,
	`{"abcdefg":1,"abcdefgh":{},"abcdefg":2}`, `{"":{},"":1}`, `{"a":1,"\u0062":2,"c":3}`, `{"x":[{"b":1}],"w":2}`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10}`, `{"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9,"b":10}`,
	`{"a":` + strings.Repeat(`{"b":[`, 20) + strings.Repeat(`]}`, 20) + `,"c":1,"a":2}`,
	`{"b":` + strings.Repeat(`{"a":{"x":1},"b":`, 20) + "0" + strings.Repeat(`}`, 20) + `,"c":1}`,
	`{"abcdefghijklmnop":1,"abcdefghijklmnop":2}`, `{"abcdefghijklmnop":1,"abcdefghijklmnoq":2}`, `{"a":1,"b":2}  `, `{"a":1,"b":2,"a"`,
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
