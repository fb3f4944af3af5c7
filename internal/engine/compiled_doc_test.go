package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// FuzzCompileDoc checks compileDoc, the one-walk compilation of arguments
// without matchers, against the plain reading (compileObject): for any
// JSON object, compileDoc either compiles exactly the nodes compileObject
// makes from the same builder (compared whole, purity and source texts
// included) or declines, and declines only for an object holding a "$"
// key or a repeated key, leaving the builder so that compileObject after
// it gives what it gives on a fresh builder. Each input is compiled with
// builders that start with no arrays, with arrays sized by Census as a
// gold list reserves them, and with arrays too small for the value (the
// next chunks growing, or as large as they get).
func FuzzCompileDoc(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x"}`, `{}`, `{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}`,
		`{"s":" padded ","t":"\u00a0x","u":"","v":"é"}`, `{"n":1e400,"m":-0.0,"o":12345678901234567890}`,
		`{"a":{"$regex":"^x"}}`, `{"$any":true}`, `{"a":[{"b":{"$one_of":[1,2]}}]}`,
		`{"a":1,"a":2}`, `{"x":{"k":1,"k":2}}`, `{"\u0024x":1}`, `{"":{"":[]}}`,
		`{"a":[[[]]],"b":[{}],"c":{"d":{"e":{"f":"g"}}}}`, `{"b":" x ","c":[1,"y",{"d":true}],"a":{"$regex":"^x"}}`,
		`{"b":2.5,"c":{"d":"e","d":"f"}}`, `{"a":{"x":"  s  ","y":[true,1],"$any":true}}`,
	} {
		f.Add(s)
	}
	next := jsondoc.MustFromAny(map[string]any{"p": []any{nil, false, "t"}, "q": map[string]any{"r": 1, "s": "u"}, "v": 2.5})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := jsondoc.ParseString(s)
		if err != nil || v.Kind() != jsondoc.Object {
			return
		}
		for _, size := range []string{"none", "census", "small", "largest"} {
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
				if g, w := dumpCval(got), dumpCval(want); g != w {
					t.Fatalf("%s (%s): compileDoc gives\n%s\ncompileObject gives\n%s", s, size, g, w)
				}
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

// reserveFor sizes p's arrays for v: none, as a gold list does (Census),
// or too small for v (the next chunks growing, or at their largest size).
func reserveFor(p *contractParser, v jsondoc.Value, size string) {
	need := v.Census()
	switch size {
	case "census":
		p.reserve(need, 1)
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
		fmt.Fprintf(&b, "%*sop=%d flag=%v lead=%d trail=%d s=%q keys=%q nkids=%d bits=%x", 2*depth, "", e.op, e.flag, e.lead, e.trail, e.s, e.keys, len(e.kids), e.keyBits)
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
		b.WriteByte('\n')
		for i := range e.kids {
			walk(&e.kids[i], depth+1)
		}
	}
	walk(e, 0)
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
