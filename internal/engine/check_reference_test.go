package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randJSONText returns a random JSON value as text, with random white
// space, often an object with an "error" member written in various ways.
func randJSONText(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[r.IntN(5)] }
	scalars := []string{`null`, `false`, `true`, `""`, `"x"`, `0`, `0.0`, `-0`, `1`, `1e3`, `-12.5E-3`, `"0"`, `" "`, `"a\"b\\c\/d\b\f\n\r\t\u00e9\ud800"`, "\"\xff\xfe\"", `"é"`, `{}`, `[]`, `{ }`, "[\n]"}
	if depth > 3 || r.IntN(3) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	if r.IntN(3) == 0 {
		var elems []string
		for range r.IntN(4) {
			elems = append(elems, ws()+randJSONText(r, depth+1)+ws())
		}
		return "[" + strings.Join(elems, ",") + "]"
	}
	keys := []string{`"error"`, `"error"`, `"\u0065rror"`, `"err\u006Fr"`, `"Error"`, `"error "`, `"errors"`, `"status"`, `"\ud800"`, `"err\"or"`, `"\u0000"`, `""`}
	var members []string
	for range r.IntN(5) {
		members = append(members, ws()+keys[r.IntN(len(keys))]+ws()+":"+ws()+randJSONText(r, depth+1)+ws())
	}
	return "{" + strings.Join(members, ",") + "}"
}

// mutateJSON damages s at random: a byte deleted, inserted or replaced, or
// the text cut.
func mutateJSON(r *rand.Rand, s string) string {
	const bytesPool = "{}[]\",:\\ \t\n0123456789-+.eEtrufalsn\x00\x1f\x7f\xff/ub"
	if s == "" {
		return s
	}
	i := r.IntN(len(s))
	c := string(bytesPool[r.IntN(len(bytesPool))])
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

// TestErrorResultMatchesReference compares errorResult with the decoding
// reference on random JSON texts, intact and damaged, with white space and
// "Error:" prefixes around them, and on their decoded forms.
func TestErrorResultMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	prefixes := []string{"", "", "", " ", "\u00a0\n", "Error: ", "error:", "  ERROR:x", "\v"}
	set := 0
	for n := range 200000 {
		s := randJSONText(r, 0)
		for range r.IntN(3) {
			if r.IntN(3) == 0 {
				s = mutateJSON(r, s)
			}
		}
		s = prefixes[r.IntN(len(prefixes))] + s + []string{"", "", " ", "\n", "x", "}"}[r.IntN(6)]
		got, want := errorResult(s), refErrorResult(s)
		if got != want {
			t.Fatalf("case %d: errorResult(%q) = %v, reference %v", n, s, got, want)
		}
		if got {
			set++
		}
		if v, err := DecodeJSON([]byte(s)); err == nil {
			if got, want := errorResult(v), refErrorResult(v); got != want {
				t.Fatalf("case %d: errorResult(%s decoded) = %v, reference %v", n, s, got, want)
			}
		}
	}
	if set < 10000 {
		t.Errorf("only %d of the random texts read as errors", set)
	}
	// encoding/json's nesting limit: 10000 arrays and objects open at once.
	for _, depth := range []int{9998, 9999, 10000, 10001} {
		s := `{"error":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
		if got, want := errorResult(s), refErrorResult(s); got != want {
			t.Errorf("depth %d: errorResult = %v, reference %v", depth, got, want)
		}
	}
}

// FuzzErrorResult compares errorResult with the decoding reference.
func FuzzErrorResult(f *testing.F) {
	for _, s := range []string{`{"error": "x"}`, `{"error": null}`, `{"\u0065rror": 1}`, `{"error": { }}`, `{"error":1,"error":0}`, `{"a":[1,{"b":"\ud800"}],"error":"0"}`, `Error: x`, `{"error": "x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := errorResult(s), refErrorResult(s); got != want {
			t.Errorf("errorResult(%q) = %v, reference %v", s, got, want)
		}
	})
}
