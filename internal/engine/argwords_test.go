package engine

import (
	"context"
	"encoding/json"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// missingFix returns the fix of the missing-call issue of tool in res.
func missingFix(t *testing.T, res *EvaluationResult, tool string) string {
	t.Helper()
	for _, is := range res.Issues {
		if is.Kind == IssueMissingCall && is.Tool == tool {
			return is.Fix
		}
	}
	t.Fatalf("no missing-call issue for %s in %+v", tool, res.Issues)
	return ""
}

// TestMissingCallFixWords checks the words of a missing call's fix for
// every matcher of docs/contracts.md, plain values, nesting, the cuts and
// the bounds.
func TestMissingCallFixWords(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct{ args, fix string }{
		// The example of the report: a regex and an approx.
		{`{"query": {"$regex": "^fl"}, "n": {"$approx": {"value": 5, "abs": 0.5}}}`,
			"Call `search` with `n` ≈ 5 (±0.5), `query` matching /^fl/"},
		// Plain values stay JSON values.
		{`{"flight_id": "FL-204"}`, "Call `search` with `flight_id` = \"FL-204\""},
		{`{"n": null, "b": true, "s": "q\"uote", "num": 1.50, "list": [1, "x"], "obj": {"k": 1}}`,
			"Call `search` with `b` = true, `list` = [1,\"x\"], `n` = null, `num` = 1.50, `obj` = {\"k\":1} and 1 more argument"},
		{`{}`, "Call `search` with no arguments"},
		{`{"k": 2, "z": {}, "": "empty key", "a": 0}`, "Call `search` with `` = \"empty key\", `a` = 0, `k` = 2, `z` = {}"},
		{`{"f": 6, "e": 5, "d": 4, "c": 3, "b": 2, "a": 1, "g": 7}`, "Call `search` with `a` = 1, `b` = 2, `c` = 3, `d` = 4, `e` = 5 and 2 more arguments"},
		// $regex, $contains, $one_of, $any, $type.
		{`{"date": {"$regex": "^2026-12-"}, "url": {"$regex": "^https://x/y$"}}`,
			"Call `search` with `date` matching /^2026-12-/, `url` matching /^https://x/y$/"},
		// Control characters in a pattern are written as RE2 escapes.
		{`{"re": {"$regex": "^a\nb\tc\u0001\u2028\\d"}}`,
			"Call `search` with `re` matching /^a\\nb\\tc\\x01\\x{2028}\\d/"},
		{`{"tags": {"$contains": "vip"}, "ids": {"$contains": 7}, "obj": {"$contains": {"k": 1}}}`,
			"Call `search` with `ids` containing 7, `obj` containing {\"k\":1}, `tags` containing \"vip\""},
		{`{"seat": {"$one_of": ["1A", "2B"]}, "one": {"$one_of": ["a"]}, "three": {"$one_of": [1, 2.5, null]}}`,
			"Call `search` with `one` one of \"a\", `seat` one of \"1A\" or \"2B\", `three` one of 1, 2.5 or null"},
		{`{"many": {"$one_of": [1, 2, 3, 4, 5, 6, 7]}, "none": {"$one_of": []}}`,
			"Call `search` with `many` one of 1, 2, 3, 4, 5 or 2 more, `none` one of nothing"},
		{`{"note": {"$any": true}}`, "Call `search` with `note` any value"},
		{`{"a": {"$type": "string"}, "b": {"$type": ["integer", "null"]}, "c": {"$type": ["string", "number", "boolean"]}}`,
			"Call `search` with `a` of type string, `b` of type integer or null, `c` of type string, number or boolean"},
		// $approx: the tolerance that applies, abs or rel × |value|.
		{`{"x": {"$approx": 3}}`, "Call `search` with `x` ≈ 3 (±0.0001%)"},
		{`{"x": {"$approx": {"value": 100, "rel": 0.01}}}`, "Call `search` with `x` ≈ 100 (±1%)"},
		{`{"x": {"$approx": {"value": 100, "rel": 0.01, "abs": 2}}}`, "Call `search` with `x` ≈ 100 (±2)"},
		{`{"x": {"$approx": {"value": 100, "rel": 0.07, "abs": 2}}}`, "Call `search` with `x` ≈ 100 (±7%)"},
		{`{"x": {"$approx": {"value": 0.0000001, "abs": 1e-9}}}`, "Call `search` with `x` ≈ 1e-7 (±1e-9)"},
		{`{"x": {"$approx": {"value": 1e22, "rel": 0.5}}}`, "Call `search` with `x` ≈ 1e+22 (±50%)"},
		{`{"x": {"$approx": {"value": -2.25, "abs": 0.125}}}`, "Call `search` with `x` ≈ -2.25 (±0.125)"},
		{`{"x": {"$approx": {"value": 0}}}`, "Call `search` with `x` ≈ 0 (±0)"},
		// Matchers inside matchers and arrays are nouns.
		{`{"x": {"$one_of": [{"$regex": "^a"}, {"$approx": 2}, {"$type": "null"}, {"$contains": "z"}, {"$any": true}]}}`,
			"Call `search` with `x` one of a string matching /^a/, a number ≈ 2 (±0.0001%), a value of type null, a value containing \"z\" or any value"},
		{`{"x": {"$contains": {"$regex": "^a"}}, "y": {"$one_of": [{"k": {"$any": true}, "n": 1}, [1, {"$type": "null"}]]}}`,
			"Call `search` with `x` containing a string matching /^a/, `y` one of {`k` any value, `n` = 1} or [1, a value of type null]"},
		{`{"arr": [1, 2, 3, 4, 5, 6, {"$any": true}], "short": [{"$regex": "x"}]}`,
			"Call `search` with `arr` = [1, 2, 3, 4, 5, …], `short` = [a string matching /x/]"},
		// An object holding a matcher is described under dotted keys; one
		// without stays a JSON value.
		{`{"f": {"lang": {"$regex": "^fr"}, "max": 7, "deep": {"a": {"$any": true}, "b": {}}}, "e": {}}`,
			"Call `search` with `e` = {}, `f.deep.a` any value, `f.deep.b` = {}, `f.lang` matching /^fr/, `f.max` = 7"},
		// At most maxDetailItems arguments.
		{`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": {"$any": true}}`,
			"Call `search` with `a` = 1, `b` = 2, `c` = 3, `d` = 4, `e` = 5 and 2 more arguments"},
		// Values and patterns are cut at maxValueText bytes.
		{`{"long": "` + long + `", "re": {"$regex": "^` + strings.Repeat("é", 40) + `"}}`,
			"Call `search` with `long` = \"" + long[:maxValueText-1] + "…, `re` matching /^" + strings.Repeat("é", 29) + "…/"},
		// Secret-looking expected values are hidden as the JSON text hid
		// them: secret-named keys' literals, what the scanner finds.
		{`{"password": "hunter2-secret", "api_key": {"$regex": "^sk-"}, "auth": {"$contains": "` + sampleGitHubPAT + `"}}`,
			"Call `search` with `api_key` matching /[REDACTED:secret-named-argument]/, `auth` containing \"[REDACTED:github-pat]\", `password` = \"[REDACTED:secret-named-argument]\""},
		{`{"token": {"$one_of": ["` + sampleGitHubPAT + `", {"$regex": "` + sampleGitHubPAT + `"}]}}`,
			"Call `search` with `token` one of \"[REDACTED:secret-named-argument]\" or a string matching /[REDACTED:secret-named-argument]/"},
	}
	for _, tc := range tests {
		c := `{"contract_version": 2, "required": [{"tool": "search", "args": ` + tc.args + `}]}`
		res := evaluateOK(t, c, `[]`, Options{SecretScanner: testSecrets})
		if got := missingFix(t, res, "search"); got != tc.fix {
			t.Errorf("%s:\n got %s\nwant %s", tc.args, got, tc.fix)
		} else if !utf8.ValidString(got) {
			t.Errorf("%s: fix %q is not valid UTF-8", tc.args, got)
		}
		// A gold file's call reads the same.
		res = evaluateOK(t, `[{"tool": "search", "args": `+tc.args+`}]`, `[]`, Options{SecretScanner: testSecrets})
		if got := missingFix(t, res, "search"); got != tc.fix {
			t.Errorf("%s (gold file):\n got %s\nwant %s", tc.args, got, tc.fix)
		}
	}
}

// TestMissingCallFixWordsGo checks the words of arguments built in Go
// (NewArgs) and of custom matchers, with and without a JSON form.
func TestMissingCallFixWordsGo(t *testing.T) {
	re, err := NewRegex(`^FL-\d+$`)
	if err != nil {
		t.Fatal(err)
	}
	args := NewArgs(map[string]any{
		"id":     re,
		"n":      &Approx{Value: 2.5},
		"m":      &Approx{Value: 10, Rel: 0.1},
		"any":    Any{},
		"kind":   &Type{Names: []string{"array", "object"}},
		"prefix": startsWith{p: "/tmp/"},
	})
	c := &Contract{Required: []Step{{Call: &ExpectedCall{Tool: "open", Args: args}}}, combos: 1, requiredCount: 1}
	res, err := Evaluate(context.Background(), c, mustTrace(t, `[]`), Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	want := "Call `open` with `any` any value, `id` matching /^FL-\\d+$/, `kind` of type array or object, `m` ≈ 10 (±10%), `n` ≈ 2.5 (±0) and 1 more argument"
	if got := missingFix(t, res, "open"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// A custom matcher is shown by its JSON form.
	c2, err := ParseContractWith([]byte(`[{"tool": "pick", "args": {"n": {"$even": true}, "s": {"$one_of": [{"$even": true}, "x"]}}}]`),
		ParseOptions{Matchers: map[string]MatcherFunc{"$even": evenFunc}})
	if err != nil {
		t.Fatal(err)
	}
	res, err = Evaluate(context.Background(), c2, mustTrace(t, `[]`), Options{SecretScanner: testSecrets})
	if err != nil {
		t.Fatal(err)
	}
	want = "Call `pick` with `n` matching {\"$even\":true}, `s` one of a value matching {\"$even\":true} or \"x\""
	if got := missingFix(t, res, "pick"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	one := NewArgs(map[string]any{"p": startsWith{p: "/tmp/"}})
	c3 := &Contract{Required: []Step{{Call: &ExpectedCall{Tool: "open", Args: one}}}, combos: 1, requiredCount: 1}
	res, err = Evaluate(context.Background(), c3, mustTrace(t, `[]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := missingFix(t, res, "open"), "Call `open` with `p` matching {\"prefix\":\"/tmp/\"}"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestMissingCallFixWordsShared checks the words are the contract's
// (rendered once, shared by the evaluations of the contract) unless a
// secret detected in the trace is in the arguments, and that such an
// evaluation neither uses nor stores the shared text.
func TestMissingCallFixWordsShared(t *testing.T) {
	c := mustContract(t, `{"contract_version": 2, "required": [
		{"tool": "login", "args": {"user": "`+sampleGitHubPAT+`x", "key": {"$regex": "^`+sampleGitHubPAT+`$"}, "n": {"$approx": 1}}}]}`)
	plain := mustTrace(t, `[]`)
	leak := mustTrace(t, `[{"tool": "echo", "args": {"v": "`+sampleGitHubPAT+`"}}]`)
	opts := Options{SecretScanner: testSecrets}
	eval := func(tr Trace, opts Options) string {
		t.Helper()
		res, err := Evaluate(context.Background(), c, tr, opts)
		if err != nil {
			t.Fatal(err)
		}
		return missingFix(t, res, "login")
	}
	const contractText = "Call `login` with `key` matching /^[REDACTED:github-pat]$/, `n` ≈ 1 (±0.0001%), `user` = \"[REDACTED:github-pat]x\""
	// The trace's secret is replaced wherever it is: the same text here,
	// rendered for this evaluation.
	if got := eval(leak, opts); got != contractText {
		t.Errorf("with the secret in the trace: got %s\nwant %s", got, contractText)
	}
	entry := func() *shownEntry {
		m, _ := c.scoringPlan().checks.shown.get(c, testSecrets)
		return m[c.Required[0].Call.Args.a]
	}
	if e := entry(); e == nil || e.words.Load() != nil {
		t.Fatalf("the evaluation with a secret of the trace in the arguments stored the shared words")
	}
	first := eval(plain, opts)
	if first != contractText {
		t.Errorf("got  %s\nwant %s", first, contractText)
	}
	if s, want := entry().words.Load(), strings.TrimPrefix(contractText, "Call `login` with "); s == nil || *s != want {
		t.Errorf("shared words %q, want %q", deref(s), want)
	}
	if got := eval(plain, opts); got != first {
		t.Errorf("second evaluation: got %s, want %s", got, first)
	}
	if got := eval(leak, opts); got != contractText {
		t.Errorf("with the secret in the trace, after: got %s\nwant %s", got, contractText)
	}
	// KeepSecrets shows the contract as written.
	kept := "Call `login` with `key` matching /^" + sampleGitHubPAT + "$/, `n` ≈ 1 (±0.0001%), `user` = \"" + sampleGitHubPAT + "x\""
	if got := eval(plain, Options{SecretScanner: testSecrets, KeepSecrets: true}); got != kept {
		t.Errorf("KeepSecrets: got %s\nwant %s", got, kept)
	}
}

// TestAppendValueText checks appendValueText and appendDocValueText write
// what renderValue and textArena.docValue return.
func TestAppendValueText(t *testing.T) {
	re, err := NewRegex("^FL-")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 50)
	values := []any{
		nil, true, false, json.Number("1e3"), json.Number(strings.Repeat("9", 80)), "plain", long, "quote \" <html> \xff",
		re, Any{}, &OneOf{Candidates: []any{json.Number("1"), "a"}}, &Approx{Value: 1, Rel: 0.5},
		map[string]any{"b": []any{"x", json.Number("2")}, "a": long}, []any{long, long},
		startsWith{p: "x"}, &opMatcher{op: "$even", arg: true, m: evenMatcher{}},
	}
	for _, v := range values {
		if got, want := string(appendValueText([]byte("pre"), v)), "pre"+renderValue(v); got != want {
			t.Errorf("appendValueText(%#v) = %s, want %s", v, got, want)
		}
	}
	for _, doc := range []string{`null`, `true`, `12.50`, `"s"`, `"` + long + `"`, `[1, 2]`, `{"b": 1, "a": [` + strings.Repeat(`"xx",`, 30) + `1]}`, `{"k": 1, "k": 2}`} {
		v, err := jsondoc.ParseString(doc)
		if err != nil {
			t.Fatal(err)
		}
		var a textArena
		if got, want := string(appendDocValueText([]byte("pre"), v)), "pre"+a.docValue(v); got != want {
			t.Errorf("appendDocValueText(%s) = %s, want %s", doc, got, want)
		}
	}
}

// deref returns *s, or "<nil>" for nil.
func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestMissingCallFixWordsBounded checks the words of deeply nested
// matchers stop with "…" past maxArgsWords bytes, and that long keys and
// many arguments are bounded as documented.
func TestMissingCallFixWordsBounded(t *testing.T) {
	deep := `{"$any": true}`
	for range 900 {
		deep = `[1, ` + deep + `]`
	}
	wide := `[` + strings.Repeat(`{"$regex": "`+strings.Repeat("x", 50)+`"}, `, 5) + `1]`
	for _, args := range []string{`{"d": ` + deep + `}`, `{"w": {"$one_of": [` + strings.Repeat(wide+`, `, 5) + `1]}}`} {
		res := evaluateOK(t, `[{"tool": "t", "args": `+args+`}]`, `[]`, Options{SecretScanner: testSecrets})
		fix := missingFix(t, res, "t")
		if words := strings.TrimPrefix(fix, "Call `t` with "); len(words) > maxArgsWords+200 || !strings.HasSuffix(words, "…") || !utf8.ValidString(words) {
			t.Errorf("%d bytes of words, want at most about %d ending with …: %s", len(words), maxArgsWords, words)
		}
	}
	res := evaluateOK(t, `[{"tool": "t", "args": {"d": `+deep+`, "a": 1}}]`, `[]`, Options{SecretScanner: testSecrets})
	if fix := missingFix(t, res, "t"); !strings.HasPrefix(fix, "Call `t` with `a` = 1, `d` = [1, [1, [1, ") || !strings.HasSuffix(fix, "…") {
		t.Errorf("got %.300s", fix)
	}
}

// TestAppendPattern checks a pattern written by appendPattern is one line
// that RE2 reads as the same expression.
func TestAppendPattern(t *testing.T) {
	for _, p := range []string{"^FL-\\d+$", "a\nb", "\t\r\f\v\x01\x7f", "x\u2028y\u2029", "é[\n-\r]+", "(?i)ab/cd"} {
		got := string(appendPattern(nil, p))
		if strings.ContainsAny(got, "\n\r\u2028\u2029") {
			t.Errorf("appendPattern(%q) = %q, not one line", p, got)
		}
		want, err1 := syntax.Parse(p, syntax.Perl)
		read, err2 := syntax.Parse(got, syntax.Perl)
		if err1 != nil || err2 != nil || want.String() != read.String() {
			t.Errorf("appendPattern(%q) = %q, read as %v (%v), want %v (%v)", p, got, read, err2, want, err1)
		}
	}
}
