package engine

import (
	"slices"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// diffArgsPlain is diffArgs the plain way (FuzzDiffArgs compares them):
// the differences between an expected call's
// arguments, compiled as wc (an object node), and got, a trace call's
// (keys prefixed with prefix, nested objects walked with "." between
// keys): keys missing, unexpected and mismatched, each list in key order.
// shownWant and shownGot are the same arguments as results show them
// (secrets redacted); mismatched values are rendered from them. Key paths
// and values are texts of t.
func diffArgsPlain(t *textArena, prefix string, wc *cval, got jsondoc.Value, shownWant shownArg, shownGot jsondoc.Value, strict bool, d *argDiff) {
	// at returns the index of key k in wc.keys, or -1.
	var index map[string]int
	if len(wc.keys) > 16 {
		index = make(map[string]int, len(wc.keys))
		for i, k := range wc.keys {
			index[k] = i
		}
	}
	at := func(k string) int {
		if index == nil {
			return slices.Index(wc.keys, k)
		}
		if i, ok := index[k]; ok {
			return i
		}
		return -1
	}
	var buf [16]string
	keys := buf[:0]
	if n := len(wc.keys) + got.Len(); n > len(buf) {
		keys = make([]string, 0, n)
	}
	keys = append(keys, wc.keys...)
	for k := range got.Members() {
		if at(k) < 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	path := func(k string) string {
		if prefix == "" {
			return k
		}
		return t.str(prefix, k)
	}
	for _, k := range keys {
		i := at(k)
		av := got.Get(k)
		switch {
		case !av.Exists():
			d.missing = append(d.missing, path(k))
		case i < 0:
			d.unexpected = append(d.unexpected, path(k))
		default:
			kc := &wc.kids[i]
			if kc.op == copObject && av.Kind() == jsondoc.Object {
				if !kc.match(av, strict) {
					diffArgsPlain(t, t.str(prefix, k, "."), kc, av, shownWant.member(k), shownGot.Get(k), strict, d)
				}
				continue
			}
			if !kc.match(av, strict) {
				d.mismatched = append(d.mismatched, mismatch{key: path(k), expected: t.shown(shownWant.member(k)), actual: t.docValue(shownGot.Get(k))})
			}
		}
	}
}

// FuzzDiffArgs checks diffArgs (members read once, sorted with the
// missing keys) against diffArgsPlain (every key looked up with Get) for
// any expected and actual arguments, shown as they are or as another
// document.
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
			diffArgs(&ta, "", want, got, shownWant, shownGot, strict, &da)
			diffArgsPlain(&tb, "", want, got, shownWant, shownGot, strict, &db)
			if !slices.Equal(da.missing, db.missing) || !slices.Equal(da.unexpected, db.unexpected) || !slices.Equal(da.mismatched, db.mismatched) {
				t.Fatalf("strict %v: diffArgs gave %+v, diffArgsPlain %+v", strict, da, db)
			}
		}
	})
}
