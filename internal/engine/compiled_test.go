package engine

import (
	"encoding/json"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Values chosen to collide often: equal after trimming or numerically,
// matched or not by the matchers.
var (
	randPlain    = []string{`"a"`, `" a"`, `"b"`, `"ab"`, `1`, `1.0`, `2`, `1e2`, `100`, `-0.5`, `true`, `null`, `[]`, `["a"]`, `[1,"a"]`, `{}`, `{"k":"a"}`, `{"k":1,"q":[true]}`, `123456789012345678901`}
	randMatchers = []string{`{"$regex":"^a"}`, `{"$regex":"a$"}`, `{"$regex":"b"}`, `{"$regex":"[ab]+"}`, `{"$regex":"^ab$"}`, `{"$one_of":[1,"a"]}`, `{"$one_of":[1,2,100]}`, `{"$approx":1}`, `{"$approx":{"value":100,"rel":0.1}}`, `{"$contains":"a"}`, `{"$contains":1}`, `{"$type":"integer"}`, `{"$type":["string","null"]}`, `{"$any":true}`, `{"k":{"$one_of":["a",1]}}`}
)

// upper is a caller's own Matcher: a string equal to Want in upper case.
type upper struct{ Want string }

func (u upper) Match(actual any, _ CompareOptions) bool {
	s, ok := actual.(string)
	return ok && strings.ToUpper(s) == u.Want
}

// compiledMatch compiles expected as the value of one argument and
// matches actual (as a document's value) against it; ok is false when
// actual is no plain JSON value.
func compiledMatch(expected, actual any, strict bool) (match, ok bool) {
	if !plainJSON(actual) {
		return false, false
	}
	v, err := jsondoc.FromAny(actual)
	if err != nil {
		return false, false
	}
	root := compileArgs(map[string]any{"v": expected})
	return root.kids[0].match(v, strict), true
}

// plainJSON reports whether v holds only the generic JSON values (and Go
// integers), which a document's value stands for exactly: a Go float
// (written by its shortest form, 1.0 as 1) or a json.Number that is no
// literal has no document of its own.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, int, int64, int32, uint, uint32, uint64:
		return true
	case json.Number:
		return jsondoc.IsNumber(string(x))
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// TestCompiledMatchesCompare checks every pair of a set of expected values
// (plain values, every matcher, Go numbers, a caller's matcher) and
// actual values: the compiled value matches exactly when Compare says the
// values are equal, in both modes.
func TestCompiledMatchesCompare(t *testing.T) {
	texts := append(append([]string{}, randPlain...), randMatchers...)
	texts = append(texts,
		`" a\u00a0"`, `"\u3000a"`, `"a\t"`, `""`, `" "`, `"\u0085"`, `"A"`, `9007199254740993`, `9007199254740992.0`,
		`9007199254740992`, `1e400`, `-1e400`, `0.1`, `-0.0`, `0`, `-0`, `2.5`, `1.5e1`, `15`, `123456789012345678`,
		`1234567890123456789`, `-123456789012345678`, `0.000000000000001`, `123456789012345.6`, `1234567890123456.7`,
		`{"k":{"q":[1,{"n":null}]}}`, `[{"$regex":"^a"},2]`, `{"$contains":{"$one_of":[1,2]}}`, `{"$one_of":[]}`,
		`{"$type":"number"}`, `{"$type":["integer","boolean"]}`, `{"$regex":""}`, `{"$regex":"^$"}`, `{"$regex":"(?i)A"}`,
		`{"$approx":{"value":0.1,"abs":0.05}}`, `{"$approx":0}`,
	)
	var values []any
	for _, s := range texts {
		values = append(values, mustExpected(t, s))
	}
	goValues := []any{
		1, int64(-3), int32(7), uint(2), uint32(2), uint64(1 << 63), float32(0.5), float64(1), 2.5, math.Inf(1),
		json.Number("+5"), json.Number("5"), json.Number("0x10"), json.Number("1."), json.Number(".5"),
		json.Number("00.5"), json.Number("-00.50"), json.Number("abc"), json.Number(""), json.Number("-"),
		json.Number("1e2"), json.Number("99999999999999999999"), upper{"A"}, &Any{}, map[string]string{"k": "a"},
		[]string{"a"}, struct{}{}, (*Contains)(nil),
	}
	expected := append(append([]any{}, values...), goValues...)
	actual := append(append([]any{}, values...), goValues[:len(goValues)-5]...)
	checked := 0
	for _, e := range expected {
		for _, a := range actual {
			if _, isNil := e.(*Contains); isNil {
				continue // a nil *Contains panics in Compare too
			}
			for _, strict := range []bool{false, true} {
				want := Compare(e, a, CompareOptions{Strict: strict})
				if got, ok := compiledMatch(e, a, strict); ok && got != want {
					t.Errorf("compiled %#v against %#v (strict %v) = %v, Compare says %v", e, a, strict, got, want)
				}
				checked++
			}
		}
	}
	if checked < 10000 {
		t.Fatalf("only %d pairs checked", checked)
	}
}

// TestCompiledCountEqual checks the two object queries of the scorer on
// a call's arguments: how many keys compare equal, and whether all do.
func TestCompiledCountEqual(t *testing.T) {
	exp := mustExpected(t, `{"q":{"$regex":"^a"},"n":{"$one_of":[1,2]},"k":" x "}`).(map[string]any)
	root := compileArgs(exp)
	for _, tc := range []struct {
		args  string
		count int
	}{
		{`{"q":"ab","n":2.0,"k":"x"}`, 3},
		{`{"q":"ab","n":2.0,"k":"x","extra":1}`, 3},
		{`{"q":"ba","n":3,"k":"x"}`, 1},
		{`{"n":1}`, 1},
		{`{}`, 0},
	} {
		args := jsondoc.MustFromAny(mustValue(t, tc.args))
		if got := root.countEqual(args, false); got != tc.count {
			t.Errorf("countEqual(%s) = %d, want %d", tc.args, got, tc.count)
		}
		if got := root.satisfiedBy(args, false); got != (tc.count == 3) {
			t.Errorf("satisfiedBy(%s) = %v, want %v", tc.args, got, tc.count == 3)
		}
	}
	if compileArgs(nil) != nil {
		t.Error("compileArgs(nil) is not nil: unchecked arguments must stay unchecked")
	}
	if root := compileArgs(map[string]any{}); root == nil || len(root.keys) != 0 {
		t.Error("compileArgs({}) must be an object with no keys")
	}
}

// FuzzCompiledCompare: for arbitrary JSON values (and the matchers built
// from them), the compiled value matches exactly when Compare says equal.
func FuzzCompiledCompare(f *testing.F) {
	for _, p := range [][2]string{
		{`1`, `1.0`}, {`" a "`, `"a"`}, {`{"a":[1,{"b":null}]}`, `{"a":[1,{"b":null}]}`},
		{`{"$regex":"^x"}`, `"xy"`}, {`{"$approx":{"value":1e308,"rel":10}}`, `-1e308`},
		{`{"$type":"integer"}`, `1e400`}, {`{"$contains":{"$one_of":[1,2]}}`, `[3,2]`}, {`{"$one_of":[1,2.5]}`, `2.50`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, e, a []byte) {
		ev, err1 := DecodeJSON(e)
		av, err2 := DecodeJSON(a)
		if err1 != nil || err2 != nil {
			return
		}
		exp, _ := expectedOf(ev)
		for _, strict := range []bool{false, true} {
			want := Compare(exp, av, CompareOptions{Strict: strict})
			if got, ok := compiledMatch(exp, av, strict); ok && got != want {
				t.Fatalf("compiled %s against %s (strict %v) = %v, Compare says %v", e, a, strict, got, want)
			}
		}
	})
}

func TestRegexLiteral(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		kind    regexKind
		lit     string
	}{
		{"^2026-12-", regexPrefix, "2026-12-"},
		{"abc", regexContains, "abc"},
		{"abc$", regexSuffix, "abc"},
		{"^abc$", regexEqual, "abc"},
		{`\Aab\z`, regexEqual, "ab"},
		{"", regexContains, ""},
		{"^$", regexEqual, ""},
		{"^", regexPrefix, ""},
		{"(?s)ab", regexContains, "ab"},
		{`a\.b`, regexContains, "a.b"},
		{"(?i)abc", regexGeneral, ""},
		{"(?m)^ab", regexGeneral, ""},
		{`^FL-\d+$`, regexGeneral, ""},
		{"a|b", regexGeneral, ""},
		{"東京", regexGeneral, ""},
		{"^^a", regexGeneral, ""},
	} {
		kind, lit := regexLiteral(tc.pattern)
		if kind != tc.kind || lit != tc.lit {
			t.Errorf("regexLiteral(%q) = %d %q, want %d %q", tc.pattern, kind, lit, tc.kind, tc.lit)
		}
	}
	inputs := []string{"", "a", "ab", "abc", "xabc", "abcx", "\nabc", "abc\n", "2026-12-01", "x2026-12-", "a.b", "axb", "\xffab", "ab\xff", "AB"}
	for _, p := range []string{"^2026-12-", "abc", "abc$", "^abc$", "", "^$", "^", "$", "(?s)ab", `a\.b`, "^ab", "ab$", "b"} {
		m, err := NewRegex(p)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(p)
		for _, s := range inputs {
			if got, want := m.Match(s, CompareOptions{}), re.MatchString(s); got != want {
				t.Errorf("pattern %q on %q: %v, regexp says %v", p, s, got, want)
			}
		}
	}
}

func TestParseSimpleDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(s string) {
		f, ok := parseSimpleDecimal(s)
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(f) != math.Float64bits(want)) {
			t.Fatalf("parseSimpleDecimal(%q) = %v, strconv says %v (%v)", s, f, want, err)
		}
	}
	accepted := 0
	for range 200000 {
		intDigits, fracDigits := 1+r.IntN(9), 1+r.IntN(9)
		s := strconv.FormatUint(r.Uint64N(uint64(math.Pow10(intDigits))), 10) + "." + fmt.Sprintf("%0*d", fracDigits, r.Uint64N(uint64(math.Pow10(fracDigits))))
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		if _, ok := parseSimpleDecimal(s); ok {
			accepted++
		}
		check(s)
	}
	if accepted < 100000 {
		t.Fatalf("only %d of 200000 simple decimals took the fast path", accepted)
	}
	for _, s := range []string{"0.1", "-0.0", "500.5", "00.5", "999999999999999.9", "0.000000000000001", "1.", ".5", "1e5", "1.5e1", "--1.5", "1..5", "+1.5", "1.5x", "1234567890123456.7", "-"} {
		check(s)
	}
	for _, s := range []string{"1.", ".5", "1e5", "+1.5", "1234567890123456.7", "1..5", "-.5"} {
		if _, ok := parseSimpleDecimal(s); ok {
			t.Errorf("parseSimpleDecimal(%q) took the fast path", s)
		}
	}
}

func TestParseSmallInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "+5", "007", "123456789012345678", "-123456789012345678", "1234567890123456789", "", "-", "+", "1.0", "1e2", "0x10", "1_000", " 1", "９"} {
		got, ok := parseSmallInt(s)
		want, err := strconv.ParseInt(s, 10, 64)
		if ok && (err != nil || got != want) {
			t.Errorf("parseSmallInt(%q) = %d, strconv says %d (%v)", s, got, want, err)
		}
		if !ok && err == nil && len(strings.TrimLeft(s, "+-")) <= 18 {
			t.Errorf("parseSmallInt(%q) refused a literal strconv reads", s)
		}
	}
}

func TestTrimSpaceFast(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a", "a ", "\ta\n", "\u00a0a", "a\u0085", "\u3000a\u3000", "ab", "\xff", "a\xff", "\xffa", "a b"} {
		if got, want := trimSpaceFast(s), trimSpace(s); got != want {
			t.Errorf("trimSpaceFast(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestMatcherJSONMapForm checks the matchers write what json.Marshal writes for
// their map form, HTML escaping and nested matchers included.
func TestMatcherJSONMapForm(t *testing.T) {
	for _, s := range []string{
		`{"$regex":"^<a&b>\u2028$"}`, `{"$contains":"<x>"}`, `{"$contains":{"$one_of":[1,"&"]}}`, `{"$contains":null}`,
		`{"$one_of":[10,11,1.50,"a<b",{"$regex":"^x"},{"$approx":{"value":2,"abs":0.5}},[1,{"k":"v"}]]}`, `{"$one_of":[]}`,
		`{"$type":"integer"}`, `{"$type":["string","null"]}`,
	} {
		m := mustExpected(t, s).(json.Marshaler)
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var op string
		var arg any
		switch x := m.(type) {
		case *Regex:
			op, arg = "$regex", x.re.String()
		case *Contains:
			op, arg = "$contains", x.Value
		case *OneOf:
			op, arg = "$one_of", x.Candidates
		case *Type:
			op, arg = "$type", any(x.Names)
			if len(x.Names) == 1 {
				arg = x.Names[0]
			}
		}
		want, err := json.Marshal(map[string]any{op: arg})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: MarshalJSON = %s, want %s", s, got, want)
		}
	}
}

// TestCompiledFromDocument checks that compiling a contract's arguments
// from its document (compileExpected, what ParseContract does) gives values
// that match exactly what compiling the parsed maps (compileArgs) gives,
// for every expected text of TestCompiledMatchesCompare nested at several
// depths and every actual value.
func TestCompiledFromDocument(t *testing.T) {
	texts := append(append([]string{}, randPlain...), randMatchers...)
	texts = append(texts, `{"k":{"q":[1,{"n":null}]}}`, `[{"$regex":"^a"},2]`, `{"$contains":{"$one_of":[1,2]}}`,
		`{"$one_of":[{"$contains":"a"},{"$approx":{"value":1,"abs":0.5}}]}`, `{"a":{"$contains":[1,{"b":2}]},"b":[{"$any":true}]}`)
	var actual []any
	for _, s := range texts {
		actual = append(actual, mustValue(t, s))
	}
	for _, s := range texts {
		for _, wrap := range []string{`{"v":%s}`, `{"x":1,"v":[%s,{"w":%s}]}`} {
			args := strings.ReplaceAll(wrap, "%s", s)
			c := mustContract(t, `[{"tool":"t","args":`+args+`}]`)
			call := c.Required[0].Call
			fromDoc := call.Args.compiled()
			fromMap := compileArgs(call.Args.Map())
			for _, a := range actual {
				for _, strict := range []bool{false, true} {
					for _, obj := range []map[string]any{{"v": a}, {"x": json.Number("1"), "v": []any{a, map[string]any{"w": a}}}} {
						if !plainJSON(obj) {
							continue
						}
						ov := jsondoc.MustFromAny(obj)
						if got, want := fromDoc.countEqual(ov, strict), fromMap.countEqual(ov, strict); got != want {
							t.Fatalf("args %s against %v (strict %v): from the document %d, from the map %d", args, obj, strict, got, want)
						}
					}
				}
			}
		}
	}
}

// TestCompiledTrimmed: a string node keeps what trimSpace removes as two
// lengths (or recomputes it when they do not fit), and gives back exactly
// trimSpace's result.
func TestCompiledTrimmed(t *testing.T) {
	long := strings.Repeat(" ", 70000)
	for _, s := range []string{"", " ", "a", " a ", "\u3000a\u00a0", "\ta\n", "\u0085", "a\xff ", " \xffa", long + "a", "a" + long, long, "  é  "} {
		var e cval
		e.setString(s)
		if got, want := e.trimmed(), trimSpace(s); got != want || e.s != s || e.op != copString {
			t.Errorf("setString(%q): trimmed %q, want %q", s, got, want)
		}
	}
}

// FuzzKeyBits checks the key-set guard of the scorer: for any expected
// arguments and actual arguments, an expected key set whose keyBits the
// call's do not hold is never satisfied, and disjoint bits mean no key
// compares equal.
func FuzzKeyBits(f *testing.F) {
	for _, p := range [][2]string{
		{`{"a":1,"b":"x"}`, `{"a":1,"b":"x","c":2}`}, {`{"a":1}`, `{"b":1}`}, {`{}`, `{"a":[]}`},
		{`{"city":"paris","q":2}`, `{"q":2.0,"city":" paris "}`}, {`{"é":1}`, `{"\u00e9":1,"é":2}`},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, e, a string) {
		want, args, ok := expectedArgsInput(e, a)
		if !ok {
			return
		}
		bits := keyBitsOf(args)
		for _, strict := range []bool{false, true} {
			if want.keyBits&^bits != 0 && want.satisfiedBy(args, strict) {
				t.Fatalf("%s satisfies %s, but its key bits %x lack some of %x", a, e, bits, want.keyBits)
			}
			if want.keyBits&bits == 0 && want.countEqual(args, strict) != 0 {
				t.Fatalf("%s has keys of %s that compare equal, but its key bits %x share none of %x", a, e, bits, want.keyBits)
			}
		}
	})
}

// expectedArgsInput reads a fuzz input pair: e, a JSON object whose
// matchers compile to the expected arguments, and a, the arguments of a
// call; ok is false when either does not read so.
func expectedArgsInput(e, a string) (want *cval, args jsondoc.Value, ok bool) {
	ev, err := DecodeJSON([]byte(e))
	if err != nil {
		return nil, jsondoc.Value{}, false
	}
	m, ok := ev.(map[string]any)
	if !ok {
		return nil, jsondoc.Value{}, false
	}
	exp, _ := expectedOf(m)
	em, ok := exp.(map[string]any)
	if !ok {
		return nil, jsondoc.Value{}, false
	}
	if args, err = jsondoc.ParseString(a); err != nil {
		return nil, jsondoc.Value{}, false
	}
	return compileArgs(em), args, true
}
