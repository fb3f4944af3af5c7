package engine

import (
	"slices"
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
		want, args, ok := expectedArgsInput(e, a)
		if !ok {
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

// FuzzSameText checks match's first test (an expected object or array
// read from a document, holding no matcher, matches a value with its
// exact source text) against the plain path: for any args object, each
// expected value compiled from the document agrees with the same value
// compiled from Go values on actual values that share its text, nested
// or whole, and on the plain path's own actuals.
func FuzzSameText(f *testing.F) {
	for _, s := range argsSeeds {
		f.Add(s)
	}
	f.Add(`{"a":{"b":[1,{"c":" d "}],"e":1.50},"f":[[],{}],"g":{"h":1e999}}`)
	f.Add(`{"a":{"k":1,"k":2},"b":[1,{"$regex":"x"}]}`)
	f.Fuzz(func(t *testing.T, args string) {
		v, err := jsondoc.ParseString(args)
		if err != nil || v.Kind() != jsondoc.Object {
			return
		}
		c, err := ParseContract([]byte(`[{"tool":"t","args":` + args + `}]`))
		if err != nil {
			return
		}
		_, _, plain := plainArgs(v)
		if plain == nil {
			return
		}
		fast := c.Required[0].Call.Args.compiled()
		// The members again, in another object: each value keeps its
		// text, the object does not.
		var b []byte
		b = append(b, `{"pad":0`...)
		for k, e := range v.Members() {
			b = append(b, ',')
			b = jsondoc.AppendString(b, k)
			b = append(b, ':')
			b = append(b, e.Raw()...)
		}
		b = append(b, '}')
		again, err := jsondoc.ParseString(string(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		// The scorer's first test on a call's arguments: the same text
		// satisfies, every key compares equal.
		if fast.flag {
			for _, strict := range []bool{false, true} {
				if n := plain.countEqual(v, strict); n != len(plain.keys) || !plain.satisfiedBy(v, strict) {
					t.Fatalf("%s against itself (strict %v): %d of %d keys compare equal", args, strict, n, len(plain.keys))
				}
			}
		}
		for _, av := range []jsondoc.Value{v, again} {
			for _, strict := range []bool{false, true} {
				if got, want := fast.match(av, strict), plain.match(av, strict); got != want {
					t.Fatalf("%s against %s (strict %v): from the document %v, plain %v", args, av.Raw(), strict, got, want)
				}
				if got, want := fast.countEqual(av, strict), plain.countEqual(av, strict); got != want {
					t.Fatalf("%s against %s (strict %v): countEqual from the document %d, plain %d", args, av.Raw(), strict, got, want)
				}
				for i, k := range fast.keys {
					j := slices.Index(plain.keys, k)
					e := v.Get(k)
					if got, want := fast.kids[i].match(e, strict), plain.kids[j].match(e, strict); got != want {
						t.Fatalf("%s: member %q against its own text (strict %v): from the document %v, plain %v", args, k, strict, got, want)
					}
				}
			}
		}
	})
}

// keyBitsOf returns the keyBit set of the keys of args (a JSON object),
// the plain form of appendMembers' bits.
func keyBitsOf(args jsondoc.Value) uint64 {
	var bits uint64
	for k := range args.Members() {
		bits |= keyBit(k)
	}
	return bits
}

// countEqual returns how many of an object node's keys are present in
// args (a JSON object) with a value that matches: the plain form of
// countEqualIn, which the scorer uses.
func (e *cval) countEqual(args jsondoc.Value, strict bool) int {
	n := 0
	for i, k := range e.keys {
		if av := args.Get(k); av.Exists() && e.kids[i].match(av, strict) {
			n++
		}
	}
	return n
}
