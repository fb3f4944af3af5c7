package engine

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// plainWalk is the credential scan's walk in one pass, the plain way:
// every value visited with its path, every string and object key
// collected, every literal under a secret-named key recorded where it is
// met.
type plainWalk struct {
	call  int
	segs  []string
	texts []string
	shown []string
	lits  []literalValue
}

func (w *plainWalk) walk(v jsondoc.Value, secretKey bool) {
	switch v.Kind() {
	case jsondoc.Object:
		for k, e := range v.Members() {
			if k != "" {
				w.shown = append(w.shown, k)
			}
			w.segs = append(w.segs, k)
			w.walk(e, mayBeLiteral(e) && isSecretKey(k))
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.Array:
		for i, e := range v.Elems() {
			w.segs = append(w.segs, strconv.Itoa(i))
			w.walk(e, secretKey)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.String:
		x := v.Text()
		if x == "" {
			return
		}
		w.texts = append(w.texts, x)
		if secretKey {
			w.literal(x, x)
		}
	case jsondoc.Number:
		if secretKey {
			n, _ := v.Num()
			w.literal(json.Number(n), "")
		}
	}
}

// plainShown appends every non-empty object key and string of v to out,
// recursively: what collectShown collects of a tool result.
func plainShown(v jsondoc.Value, out *[]string) {
	switch v.Kind() {
	case jsondoc.Object:
		for k, e := range v.Members() {
			if k != "" {
				*out = append(*out, k)
			}
			plainShown(e, out)
		}
	case jsondoc.Array:
		for _, e := range v.Elems() {
			plainShown(e, out)
		}
	case jsondoc.String:
		if x := v.Text(); x != "" {
			*out = append(*out, x)
		}
	}
}

func (w *plainWalk) literal(v any, text string) {
	s, ok := literalSecret(v)
	if !ok {
		return
	}
	w.lits = append(w.lits, literalValue{text: text, finding: credentialFinding{
		Finding: Finding{Call: w.call, Path: pointerOf(w.segs), Rule: RuleSecretNamedArgument, Value: maskSecret(s, RuleSecretNamedArgument, 0)},
		secret:  s,
		exact:   true,
		segs:    slices.Clone(w.segs),
	}})
}

// FuzzCredentialWalk checks the credential scan's walk (collectFlat, else
// collect, which keep no paths, then literals only for a call that holds
// a literal secret; collectShown for results) against plainWalk: the
// same texts and keys in the same order (but those shorter than the
// scanner's minimum length) and the same literals with the same paths,
// for any JSON arguments.
func FuzzCredentialWalk(f *testing.F) {
	for _, s := range []string{
		`{"password": "hunter2hunter2", "user": "ana"}`,
		`{"a": {"api_key": ["sk-live-1234", 12345, "${KEY}"], "b": [{"token": 98765}]}}`,
		`{"x": [[["secret-value"]]], "secret": {"k": "v"}, "db_password": "", "pwd": "abcd"}`,
		`{"client_secret": "  spaced  ", "next_token": "abcdefgh", "a/b~c": {"token": "é€𝄞x"}}`,
		`{"k": "v", "k": "w", "password": "dup", "password": "duplicate-value"}`,
		`[]`,
		`"text"`,
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var tr Trace
		for _, s := range []string{a, b} {
			v, err := jsondoc.ParseString(s)
			if err != nil {
				return
			}
			tr.Calls = append(tr.Calls, ToolCall{Tool: "t", Args: v})
		}
		var want plainWalk
		for i, c := range tr.Calls {
			want.call = i
			want.walk(c.Args, false)
		}
		// The walk leaves out texts shorter than the scanner's minimum
		// length, and nothing else.
		for _, minLen := range []int{0, 1, 4, 10} {
			got := argWalker{minLen: minLen}
			for i, c := range tr.Calls {
				if !got.collectFlat(c.Args) && got.collect(c.Args) {
					got.call = i
					got.literals(c.Args, false)
				}
			}
			short := func(s string) bool { return len(s) < minLen }
			if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(want.texts), short), got.texts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("minLen %d: texts differ (-plain +walk):\n%s", minLen, diff)
			}
			if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(want.shown), short), got.shown, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("minLen %d: keys differ (-plain +walk):\n%s", minLen, diff)
			}
			if diff := cmp.Diff(want.lits, got.lits, cmp.AllowUnexported(literalValue{}, credentialFinding{})); diff != "" {
				t.Errorf("minLen %d: literals differ (-plain +walk):\n%s", minLen, diff)
			}
			// collect adds what collectFlat adds when it can.
			for _, c := range tr.Calls {
				flat, walk := argWalker{minLen: minLen}, argWalker{minLen: minLen}
				if flat.collectFlat(c.Args) {
					if walk.collect(c.Args) {
						t.Errorf("minLen %d: collectFlat for arguments with a literal secret", minLen)
					}
					if !slices.Equal(flat.texts, walk.texts) || !slices.Equal(flat.shown, walk.shown) {
						t.Errorf("minLen %d: collectFlat gave %q, %q; collect %q, %q", minLen, flat.texts, flat.shown, walk.texts, walk.shown)
					}
				} else if len(flat.texts)+len(flat.shown) > 0 {
					t.Errorf("minLen %d: collectFlat added texts and reported false", minLen)
				}
			}
			// The same documents as tool results: every key and string.
			var wantShown []string
			got.shown = nil
			for _, c := range tr.Calls {
				plainShown(c.Args, &wantShown)
				got.collectShown(c.Args)
			}
			if diff := cmp.Diff(slices.DeleteFunc(wantShown, short), got.shown, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("minLen %d: result texts differ (-plain +walk):\n%s", minLen, diff)
			}
		}
	})
}

// FuzzKeyMayNameSecret checks that keyMayNameSecret and secretKeyPairs
// leave out only keys that name no secret.
func FuzzKeyMayNameSecret(f *testing.F) {
	for _, s := range append(append([]string{"api_key", "X-Api-Key", "next_token", "é-pwd", "pwd", "a", "", "API_KEY_"}, secretKeyNames...), secretKeySuffixes...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if isSecretKey(key) && !keyMayNameSecret(key) {
			t.Errorf("isSecretKey(%q) but not keyMayNameSecret", key)
		}
		if n := len(key); isSecretKey(key) && (n < 2 || !secretKeyPairs.Has(key[n-2], key[n-1])) {
			t.Errorf("isSecretKey(%q) but its last two bytes are not in secretKeyPairs", key)
		}
	})
}

// TestDistinctTexts checks that distinctTexts keeps every distinct
// non-empty text, first occurrences in order, drops the repeats its
// table catches, and clears the rest of the slice.
func TestDistinctTexts(t *testing.T) {
	in := []string{"report.txt", "a", "report.txt", "b", "a", "", "report.txt"}
	buf := slices.Clone(in)
	got := distinctTexts(buf)
	if want := []string{"report.txt", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("distinctTexts(%q) = %q, want %q", in, got, want)
	}
	if rest := buf[len(got):]; slices.ContainsFunc(rest, func(s string) bool { return s != "" }) {
		t.Errorf("distinctTexts left %q after the texts", rest)
	}
	// An empty text is left out wherever it is: alone, first, or after a
	// text in the table's slot of "" ("a0" is in slot 0).
	for _, tc := range [][]string{{""}, {"", "a0"}, {"a0", ""}, {"a0", "", "b", ""}} {
		got := distinctTexts(slices.Clone(tc))
		if want := slices.DeleteFunc(slices.Clone(tc), func(s string) bool { return s == "" }); !slices.Equal(got, want) {
			t.Errorf("distinctTexts(%q) = %q, want %q", tc, got, want)
		}
	}
	// Many texts, some sharing a slot of the table: every distinct one is
	// kept, each first occurrence before the others.
	var many []string
	for i := range 200 {
		many = append(many, strconv.Itoa(i%70*7), "id-"+strconv.Itoa(i%3))
	}
	got = distinctTexts(slices.Clone(many))
	var firsts []string
	for _, s := range many {
		if !slices.Contains(firsts, s) {
			firsts = append(firsts, s)
		}
	}
	if len(got) > len(many) || len(got) < len(firsts) {
		t.Fatalf("distinctTexts kept %d of %d texts, %d distinct", len(got), len(many), len(firsts))
	}
	for i, j := 0, 0; i < len(firsts); i++ {
		k := slices.Index(got[j:], firsts[i])
		if k < 0 {
			t.Fatalf("distinctTexts lost %q (or put it before an earlier text)", firsts[i])
		}
		j += k + 1
	}
	if len(got) == len(many) {
		t.Errorf("distinctTexts dropped no repeat of %d texts, %d distinct", len(many), len(firsts))
	}
}
