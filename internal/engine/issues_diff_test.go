package engine

import (
	"slices"
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
