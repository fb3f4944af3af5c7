package engine

import (
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// FuzzArgIndex checks the scorer's index of a call's arguments against
// the plain reads: the members Members yields, the keyBit set keyBitsOf
// gives, and countEqualIn and satisfiedByIn as countEqual and satisfiedBy
// say, for any expected and actual arguments.
func FuzzArgIndex(f *testing.F) {
	for _, p := range [][2]string{
		{`{"a":1,"b":"x"}`, `{"a":1,"b":"x","c":2}`}, {`{"a":1}`, `{"b":1}`}, {`{}`, `{"a":[]}`},
		{`{"city":"paris","q":2}`, `{"q":2.0,"city":" paris "}`}, {`{"é":1}`, `{"\u00e9":1,"é":2}`},
		{`{"a":{"b":[1,{"c":"d"}]},"e":{"$regex":"^x"}}`, `{"a":{"b":[1,{"c":"d"}]},"e":"xy","a":{"b":[1]}}`},
		{`{"a":1}`, `[1,2]`}, {`{}`, `"s"`},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, e, a string) {
		ev, err := DecodeJSON([]byte(e))
		if err != nil {
			return
		}
		m, ok := ev.(map[string]any)
		if !ok {
			return
		}
		exp, _ := expectedOf(m)
		em, ok := exp.(map[string]any)
		if !ok {
			return
		}
		want := compileArgs(em)
		args, err := jsondoc.ParseString(a)
		if err != nil {
			return
		}
		ms, bits := appendMembers([]argMember{{key: "before"}}, args)
		ms = ms[1:]
		var plain []argMember
		for k, v := range args.Members() {
			plain = append(plain, argMember{k, v})
		}
		if len(ms) != len(plain) {
			t.Fatalf("%s: %d members indexed, Members yields %d", a, len(ms), len(plain))
		}
		for i := range ms {
			if ms[i] != plain[i] {
				t.Fatalf("%s: member %d indexed as %q=%v, Members yields %q=%v", a, i, ms[i].key, ms[i].val, plain[i].key, plain[i].val)
			}
		}
		if b := keyBitsOf(args); bits != b {
			t.Fatalf("%s: indexed key bits %x, keyBitsOf %x", a, bits, b)
		}
		for _, strict := range []bool{false, true} {
			if got, w := want.countEqualIn(ms, strict), want.countEqual(args, strict); got != w {
				t.Fatalf("%s against %s (strict %v): countEqualIn %d, countEqual %d", a, e, strict, got, w)
			}
			if got, w := want.satisfiedByIn(ms, strict), want.satisfiedBy(args, strict); got != w {
				t.Fatalf("%s against %s (strict %v): satisfiedByIn %v, satisfiedBy %v", a, e, strict, got, w)
			}
		}
	})
}
