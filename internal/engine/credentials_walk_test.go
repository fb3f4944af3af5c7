package engine

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// FuzzCredentialWalk checks the credential scan's walk (collect, which
// keeps no paths, then literals only for a call that holds a literal
// secret) against plainWalk: the same texts and keys in the same order
// and the same literals with the same paths, for any JSON arguments.
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
		var got argWalker
		var want plainWalk
		for i, c := range tr.Calls {
			if got.collect(c.Args, false) {
				got.call = i
				got.literals(c.Args, false)
			}
			want.call = i
			want.walk(c.Args, false)
		}
		if diff := cmp.Diff(want.texts, got.texts); diff != "" {
			t.Errorf("texts differ (-plain +walk):\n%s", diff)
		}
		if diff := cmp.Diff(want.shown, got.shown); diff != "" {
			t.Errorf("keys differ (-plain +walk):\n%s", diff)
		}
		if diff := cmp.Diff(want.lits, got.lits, cmp.AllowUnexported(literalValue{}, credentialFinding{})); diff != "" {
			t.Errorf("literals differ (-plain +walk):\n%s", diff)
		}
	})
}
