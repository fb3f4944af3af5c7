package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// FuzzDiffArgs checks diffArgs (members read once, sorted with the
// missing keys) against diffKeys (every key looked up with Get, nested
// objects too) for any expected and actual arguments, shown as they are
// or as another document.
func FuzzDiffArgs(f *testing.F) {
	for _, p := range [][3]string{
		{`{"a":1,"b":"x"}`, `{"a":2,"c":2}`, ``},
		{`{"a":{"b":1,"c":{"d":[1]}},"e":{"$regex":"^x"}}`, `{"a":{"b":2,"c":{"d":[2]},"z":0},"e":"yy","f":null}`, `{"a":{"b":"[R]","c":{"d":["[R]"]}},"e":"[R]"}`},
		{`{"k":1}`, `{"k":2,"k":1}`, ``},
		{`{"a":1}`, `[1,2]`, ``},
		{`{}`, `{"b":{"c":1}}`, ``},
	} {
		f.Add(p[0], p[1], p[2])
	}
	f.Fuzz(func(t *testing.T, e, a, shown string) {
		want, got, ok := expectedArgsInput(e, a)
		if !ok || len(want.keys) == 0 {
			return
		}
		shownGot := got
		if shown != "" {
			v, err := jsondoc.ParseString(shown)
			if err != nil {
				return
			}
			shownGot = v
		}
		m, _ := DecodeJSON([]byte(e))
		shownWant := shownArg{v: m}
		for _, strict := range []bool{false, true} {
			var ta, tb textArena
			var da, db argDiff
			diffArgs(&ta, "", want, got, nil, shownWant, shownGot, strict, &da)
			diffKeys(&tb, "", want, got, shownWant, shownGot, strict, &db)
			if !slices.Equal(da.missing, db.missing) || !slices.Equal(da.unexpected, db.unexpected) || !slices.Equal(da.mismatched, db.mismatched) {
				t.Fatalf("strict %v: diffArgs gave %+v, diffKeys %+v", strict, da, db)
			}
		}
	})
}

// FuzzDocValuePrefix compares docValue, which writes an array or object
// only as far as the cut needs (appendJSONPrefix), with the plain form:
// the whole value written by AppendJSON, then cut.
func FuzzDocValuePrefix(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[1,2,{"d":null,"c":true}]}`, `[ "x" , 1.50 , false ]`, `{}`, `[]`, `"s"`, `12`,
		`{"k":1,"k":2,"a":{"z":"<&>","y":"\u00e9\ud83d\ude00"}}`,
		`{"filter": {"lang": "en", "max": 3}, "tags": ["x", "y", "x"], "long": "` + strings.Repeat("é", 40) + `"}`,
		`[` + strings.Repeat(`{"a":"0123456789"},`, 10) + `1]`,
		`{"` + strings.Repeat("k", 70) + `":1}`, `{"a\u0000b":"\n\t","":[[[]]]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		root, err := jsondoc.ParseString(s)
		if err != nil {
			return
		}
		nodes := root.Nodes()
		for i := range nodes.Len() {
			if nodes.IsKey(i) {
				continue
			}
			v := nodes.Value(i)
			var a textArena
			got := a.docValue(v)
			want := ""
			switch v.Kind() {
			case jsondoc.String:
				want = cutValueText(quoteJSON(v.Text()))
			case jsondoc.Number:
				n, _ := v.Num()
				want = cutValueText(n)
			default:
				want = cutValueText(string(v.AppendJSON(nil)))
			}
			if got != want {
				t.Fatalf("%s: node %d: docValue %q, AppendJSON cut %q", s, i, got, want)
			}
			full := string(v.AppendJSON(nil))
			if p := string(appendJSONPrefix(nil, v, 1<<30)); p != full {
				t.Fatalf("%s: node %d: appendJSONPrefix without a limit %q, AppendJSON %q", s, i, p, full)
			}
			// The copy of a text written as AppendJSON writes it, without
			// a limit and at every limit: AppendJSON's text, or a prefix
			// of it as long as the limit.
			for _, limit := range []int{1 << 30, 0, 1, 2, 7, maxValueText + 1} {
				b, ok := v.AppendJSONPrefixAsWritten([]byte("x"), limit+1)
				if !ok {
					if len(b) != 1 {
						t.Fatalf("%s: node %d: AppendJSONPrefixAsWritten declined, appending %q", s, i, b[1:])
					}
					continue
				}
				p := string(b[1:])
				if !strings.HasPrefix(full, p) || len(p) < min(limit, len(full)) {
					t.Fatalf("%s: node %d: AppendJSONPrefixAsWritten limit %d %q, AppendJSON %q", s, i, limit, p, full)
				}
			}
		}
	})
}

// FuzzKeyLess checks keyLess, which orders keys by their first bytes when
// those differ, against the plain string order.
func FuzzKeyLess(f *testing.F) {
	for _, p := range [][2]string{{"", ""}, {"", "a"}, {"a", ""}, {"ab", "ac"}, {"b", "ab"}, {"é", "z"}, {"path", "page"}, {"q", "q"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := keyLess(a, b), a < b; got != want {
			t.Fatalf("keyLess(%q, %q) = %v, want %v", a, b, got, want)
		}
	})
}
