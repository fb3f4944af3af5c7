package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// FuzzCompileDoc checks compileDoc, the one-walk compilation of arguments
// without matchers, against the plain reading (compileObject): for any
// JSON object, compileDoc either compiles what compileObject makes from
// the same builder, as far as anything reads it, or declines, and
// declines only for an object holding a "$" key or a repeated key,
// leaving the builder so that compileObject after it gives what it gives
// on a fresh builder. What it compiles has compileObject's top-level
// node (keys, key bits, source text) and members; an object or array
// member is one copDoc node that, against every value of the fuzzed
// object, of a second fuzzed value and of their compact copies, strict or
// not, matches as compileObject's node does, gives the same value, the
// same texts to scan and regex size, and, for an object, expands to
// nodes alike in the same way (sameCompiled). Each input is compiled
// with builders that start with no arrays, with arrays sized as a gold
// list reserves them (goldNeed), and with arrays too small for the value
// (the next chunks growing, or as large as they get), and told that the
// value holds no "$" key and no repeated key when it does not
// (cbuilder.plain, as expand tells it).
func FuzzCompileDoc(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x"}`, `{}`, `{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}`,
		`{"s":" padded ","t":"\u00a0x","u":"","v":"é"}`, `{"n":1e400,"m":-0.0,"o":12345678901234567890}`,
		`{"a":{"$regex":"^x"}}`, `{"$any":true}`, `{"a":[{"b":{"$one_of":[1,2]}}]}`,
		`{"a":1,"a":2}`, `{"x":{"k":1,"k":2}}`, `{"\u0024x":1}`, `{"":{"":[]}}`,
		`{"a":[[[]]],"b":[{}],"c":{"d":{"e":{"f":"g"}}}}`, `{"b":" x ","c":[1,"y",{"d":true}],"a":{"$regex":"^x"}}`,
		`{"b":2.5,"c":{"d":"e","d":"f"}}`, `{"a":{"x":"  s  ","y":[true,1],"$any":true}}`,
		`{"a":{"x":{"y":"\u0024z"}},"b":[{"\u0024":1}]}`, `{"token":{"password":"hunter22","n":[" a ",1.50]}}`,
	} {
		f.Add(s, `{"a":{"b":[1.0,2,{"c":null}]},"d":true,"c":{"d":{"e":{"f":" g "}}},"x":[" padded ",1e0]}`)
	}
	next := jsondoc.MustFromAny(map[string]any{"p": []any{nil, false, "t"}, "q": map[string]any{"r": 1, "s": "u"}, "v": 2.5})
	f.Fuzz(func(t *testing.T, s, other string) {
		v, err := jsondoc.ParseString(s)
		if err != nil || v.Kind() != jsondoc.Object {
			return
		}
		actuals := docValues(v)
		if o, err := jsondoc.ParseString(other); err == nil {
			actuals = append(actuals, docValues(o)...)
		}
		for _, size := range []string{"none", "gold", "plain", "small", "largest"} {
			var plain, fast contractParser
			reserveFor(&plain, v, size)
			reserveFor(&fast, v, size)
			want := &plain.cb.alloc(1)[0]
			plainOK := plain.compileObject(want, v)
			got := &fast.cb.alloc(1)[0]
			matcherFree := !hasDollarOrRepeat(v)
			if fast.cb.compileDoc(got, v) {
				if !matcherFree {
					t.Fatalf("%s (%s): compileDoc compiled an object with a $ key or a repeated key", s, size)
				}
			} else {
				if matcherFree {
					t.Fatalf("%s (%s): compileDoc declined an object without a $ key or a repeated key", s, size)
				}
				if dumpCval(got) != dumpCval(&cval{}) {
					t.Fatalf("%s (%s): compileDoc declined but left the node %+v", s, size, *got)
				}
				if ok := fast.compileObject(got, v); ok != plainOK {
					t.Fatalf("%s (%s): compileObject after compileDoc declined reports %v, on a fresh builder %v", s, size, ok, plainOK)
				}
			}
			if plainOK {
				sameCompiled(t, s+" ("+size+")", got, want, actuals)
			}
			// What the builders hand out next is alike too (nothing
			// compileDoc took and gave back is left written).
			want, got = &plain.cb.alloc(1)[0], &fast.cb.alloc(1)[0]
			plain.compileObject(want, next)
			fast.compileObject(got, next)
			if g, w := dumpCval(got), dumpCval(want); g != w {
				t.Fatalf("%s (%s): the next value compiles to\n%s\nafter compileDoc, to\n%s\nafter compileObject", s, size, g, w)
			}
			if len(fast.errs) != len(plain.errs) {
				t.Fatalf("%s (%s): %d problems after compileDoc, %d after compileObject alone", s, size, len(fast.errs), len(plain.errs))
			}
		}
	})
}

// docValues returns every value of v's subtree, then every value of a
// compact copy of it (the same values in other source texts).
func docValues(v jsondoc.Value) []jsondoc.Value {
	var out []jsondoc.Value
	add := func(v jsondoc.Value) {
		ns := v.Nodes()
		for i := range ns.Len() {
			if !ns.IsKey(i) || ns.Kind(i) != jsondoc.String {
				out = append(out, ns.Value(i))
			}
		}
	}
	add(v)
	if c, err := jsondoc.Parse(v.AppendJSON(nil)); err == nil {
		add(c)
	}
	return out
}

// sameCompiled fails t unless the node fast (compileDoc's) reads as the
// node plain (compileObject's, from the same value): the same fields,
// members alike, and for a copDoc node, which stands for an object or
// array plain compiled whole (pure, with the same source text), the same
// match against each of actuals, strict or not, the same value, texts to
// scan and regex size, and for an object an expansion alike.
func sameCompiled(t *testing.T, in string, fast, plain *cval, actuals []jsondoc.Value) {
	t.Helper()
	if fast.op == copDoc {
		if plain.op != copObject && plain.op != copArray || !plain.flag || plain.s != fast.s {
			t.Fatalf("%s: a copDoc node for\n%s", in, dumpCval(plain))
		}
		for _, a := range actuals {
			for _, strict := range []bool{false, true} {
				if g, w := fast.match(a, strict), plain.match(a, strict); g != w {
					t.Fatalf("%s: %s matches %s (strict %v): copDoc %v, compiled %v", in, fast.s, a.Raw(), strict, g, w)
				}
			}
		}
		if g, w := fmt.Sprintf("%#v", fast.value()), fmt.Sprintf("%#v", plain.value()); g != w {
			t.Fatalf("%s: %s: value %s, compiled %s", in, fast.s, g, w)
		}
		for _, minLen := range []int{1, 3} {
			var gt, wt []string
			gok, wok := textsOf(fast, minLen, &gt), textsOf(plain, minLen, &wt)
			if gok != wok || fmt.Sprint(gt) != fmt.Sprint(wt) {
				t.Fatalf("%s: %s: textsOf %q %v, compiled %q %v", in, fast.s, gt, gok, wt, wok)
			}
		}
		if g, w := fast.regexSize(), plain.regexSize(); g != w {
			t.Fatalf("%s: %s: regexSize %d, compiled %d", in, fast.s, g, w)
		}
		if x := fast.expand(); x != nil {
			if plain.op != copObject {
				t.Fatalf("%s: %s expands to an object, compiled op %d", in, fast.s, plain.op)
			}
			sameCompiled(t, in, x, plain, actuals)
		} else if fast.doc.Kind() == jsondoc.Object {
			t.Fatalf("%s: %s does not expand", in, fast.s)
		}
		return
	}
	if g, w := dumpNode(fast), dumpNode(plain); g != w || fast.doc != plain.doc {
		t.Fatalf("%s: compileDoc gives\n%s\ncompileObject gives\n%s", in, dumpCval(fast), dumpCval(plain))
	}
	for i := range fast.kids {
		sameCompiled(t, in, &fast.kids[i], &plain.kids[i], actuals)
	}
	for _, a := range actuals {
		for _, strict := range []bool{false, true} {
			if g, w := fast.match(a, strict), plain.match(a, strict); g != w {
				t.Fatalf("%s: %s matches %s (strict %v): %v, compiled %v", in, fast.s, a.Raw(), strict, g, w)
			}
		}
	}
}

// reserveFor sizes p's arrays for v: none, as a gold list does
// (goldNeed; "plain" also telling compileDoc, as expand does, that v
// holds no "$" key and no repeated key when it does not), or too small for v (the next chunks growing, or at their
// largest size).
func reserveFor(p *contractParser, v jsondoc.Value, size string) {
	switch size {
	case "plain":
		// As expand tells compileDoc of a value it knows to hold no "$"
		// key and no repeated key.
		p.cb.plain = v.KeysAvoid('$')
		fallthrough
	case "gold":
		l, err := jsondoc.Parse(append(append([]byte(`[{"tool":"t","args":`), v.Raw()...), "}]"...))
		if err != nil {
			panic(err)
		}
		p.reserve(goldNeed(l.Nodes(), 1))
	case "small", "largest":
		p.cb.nodes = make([]cval, 2)
		p.cb.keys = make([]string, 1)
		p.cb.nums = make([]number, 0, 1)
		if size == "largest" {
			// The chunks have reached their largest size: the next
			// ones are as large.
			p.cb.nodeChunk, p.cb.keyChunk, p.cb.numChunk = 512, 512, 512
		}
	}
}

// hasDollarOrRepeat reports whether v holds an object key starting with
// "$" or an object with a repeated key, at any depth.
func hasDollarOrRepeat(v jsondoc.Value) bool {
	ns := v.Nodes()
	for i := range ns.Len() {
		if s, key, _ := ns.Str(i); key && strings.HasPrefix(s, "$") || ns.RepeatsKey(i) {
			return true
		}
	}
	return false
}

// dumpCval writes every field of a compiled node and of the nodes below
// it, numbers by value and matchers by their type and JSON.
func dumpCval(e *cval) string {
	var b strings.Builder
	var walk func(e *cval, depth int)
	walk = func(e *cval, depth int) {
		fmt.Fprintf(&b, "%*s%s\n", 2*depth, "", dumpNode(e))
		for i := range e.kids {
			walk(&e.kids[i], depth+1)
		}
	}
	walk(e, 0)
	return b.String()
}

// dumpNode writes every field of a compiled node but its children,
// numbers by value, matchers by their type and a copDoc node's value by
// its source text.
func dumpNode(e *cval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "op=%d flag=%v lead=%d trail=%d s=%q keys=%q nkids=%d bits=%x", e.op, e.flag, e.lead, e.trail, e.s, e.keys, len(e.kids), e.keyBits)
	if e.keys == nil {
		b.WriteString(" keys=nil")
	}
	if e.kids == nil {
		b.WriteString(" kids=nil")
	}
	if e.num != nil {
		fmt.Fprintf(&b, " num=%+v", *e.num)
	}
	if e.x != nil {
		fmt.Fprintf(&b, " tol=%v re=%v m=%T", e.x.tol, e.x.re != nil, e.x.m)
	}
	if e.doc.Exists() {
		fmt.Fprintf(&b, " doc=%s", e.doc.Raw())
	}
	return b.String()
}

// FuzzReadNumber checks readNumber, compileDoc's one-pass reading of a
// number literal, against parseNumber: the same number and the same ok
// for any text.
func FuzzReadNumber(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "7", "-12", "123456789012345678", "1234567890123456789", "+5", "",
		"-", "1.5", "-0.25", "0.1", "123456789012345.6", "1234567890123456.7", "1.", ".5",
		"1.2.3", "1e5", "-1E-5", "00", "1x", "9223372036854775807", "-9223372036854775808",
		"12345678901234.56", "1.234567890123456", "-.5", "1.-5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got number
		gotOK := readNumber(&got, s)
		want, wantOK := parseNumber(s)
		if gotOK != wantOK || gotOK && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Fatalf("readNumber(%q) = %#v, %v; parseNumber gives %#v, %v", s, got, gotOK, want, wantOK)
		}
	})
}
