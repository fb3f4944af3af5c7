package engine

import (
	"math"
	"strings"
)

// cop is the operation of a compiled expected value.
type cop uint8

const (
	copNever    cop = iota // a value Compare cannot read: never equal
	copNull                // null
	copString              // a string literal (s, trimmed t)
	copBool                // a boolean (flag)
	copNumber              // a number (num)
	copObject              // an object (keys, kids)
	copArray               // an array (kids)
	copAny                 // $any
	copRegex               // $regex through the regexp engine (re)
	copRegexLit            // $regex as a string test (re.kind, re.lit)
	copContains            // $contains (kids[0]; flag: the value is a string s)
	copOneOf               // $one_of (kids; flag: every candidate is a number)
	copApprox              // $approx (num.f the value, tol the tolerance)
	copMatcher             // any other Matcher (m)
)

// cval is an expected argument value compiled once per contract: the
// matcher tree flattened into one array, numbers parsed, strings trimmed,
// $approx tolerances computed. match gives exactly what Compare gives for
// the value it was compiled from.
type cval struct {
	op   cop
	flag bool
	s, t string
	num  number
	tol  float64
	keys []string
	kids []cval
	re   *Regex
	m    Matcher
}

// compileArgs compiles an expected call's arguments: nil (unchecked) for
// nil, else an object node. All nodes and keys live in two arrays.
func compileArgs(args map[string]any) *cval {
	if args == nil {
		return nil
	}
	var b cbuilder
	nodes, keys := countNodes(args)
	b.nodes = make([]cval, nodes)
	b.keys = make([]string, keys)
	root := &b.alloc(1)[0]
	b.build(root, args)
	return root
}

// cbuilder hands out nodes and keys from arrays sized by countNodes.
type cbuilder struct {
	nodes []cval
	keys  []string
}

func (b *cbuilder) alloc(n int) []cval {
	s := b.nodes[:n:n]
	b.nodes = b.nodes[n:]
	return s
}

// countNodes returns how many nodes and object keys build uses for v; it
// follows build's recursion exactly.
func countNodes(v any) (nodes, keys int) {
	nodes = 1
	add := func(w any) {
		n, k := countNodes(w)
		nodes += n
		keys += k
	}
	switch x := v.(type) {
	case Matcher:
		switch m := x.(type) {
		case *Contains:
			if m != nil {
				add(m.Value)
			}
		case *OneOf:
			if m != nil {
				for _, c := range m.Candidates {
					add(c)
				}
			}
		}
	case map[string]any:
		keys += len(x)
		for _, w := range x {
			add(w)
		}
	case []any:
		for _, w := range x {
			add(w)
		}
	}
	return nodes, keys
}

// build compiles v into dst, mirroring Compare's type switch.
func (b *cbuilder) build(dst *cval, v any) {
	switch x := v.(type) {
	case Matcher:
		b.buildMatcher(dst, x)
	case nil:
		dst.op = copNull
	case string:
		dst.op, dst.s, dst.t = copString, x, trimSpace(x)
	case bool:
		dst.op, dst.flag = copBool, x
	case map[string]any:
		dst.op = copObject
		dst.keys = b.keys[:len(x):len(x)]
		b.keys = b.keys[len(x):]
		dst.kids = b.alloc(len(x))
		i := 0
		for k, w := range x {
			dst.keys[i] = k
			b.build(&dst.kids[i], w)
			i++
		}
	case []any:
		dst.op = copArray
		dst.kids = b.alloc(len(x))
		for i, w := range x {
			b.build(&dst.kids[i], w)
		}
	default:
		n, ok := toNumber(v)
		if !ok {
			dst.op = copNever
			return
		}
		dst.op, dst.num = copNumber, n
	}
}

func (b *cbuilder) buildMatcher(dst *cval, m Matcher) {
	dst.op, dst.m = copMatcher, m
	switch x := m.(type) {
	case *Regex:
		if x != nil && x.re != nil {
			dst.op, dst.re = copRegex, x
			if x.kind != regexGeneral {
				dst.op = copRegexLit
			}
		}
	case Any:
		dst.op = copAny
	case *Contains:
		if x != nil {
			dst.op = copContains
			dst.kids = b.alloc(1)
			b.build(&dst.kids[0], x.Value)
			dst.s, dst.flag = x.Value.(string)
		}
	case *OneOf:
		if x != nil {
			dst.op = copOneOf
			dst.kids = b.alloc(len(x.Candidates))
			dst.flag = true
			for i, c := range x.Candidates {
				b.build(&dst.kids[i], c)
				dst.flag = dst.flag && dst.kids[i].op == copNumber
			}
		}
	case *Approx:
		if x != nil {
			dst.op = copApprox
			dst.num.f = x.Value
			dst.tol = math.Max(x.Rel*math.Abs(x.Value), x.Abs)
		}
	}
}

// match reports whether actual satisfies the compiled value; it is
// Compare(original, actual, CompareOptions{Strict: strict}).
func (e *cval) match(actual any, strict bool) bool {
	switch e.op {
	case copString:
		a, ok := actual.(string)
		if !ok {
			return false
		}
		if a == e.s {
			return true
		}
		return !strict && trimSpaceFast(a) == e.t
	case copNumber:
		an, ok := toNumber(actual)
		return ok && e.num.equal(an, strict)
	case copObject:
		a, ok := actual.(map[string]any)
		if !ok || len(a) != len(e.keys) {
			return false
		}
		for i, k := range e.keys {
			av, ok := a[k]
			if !ok || !e.kids[i].match(av, strict) {
				return false
			}
		}
		return true
	case copArray:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e.kids) {
			return false
		}
		for i := range e.kids {
			if !e.kids[i].match(a[i], strict) {
				return false
			}
		}
		return true
	case copRegexLit:
		a, ok := actual.(string)
		return ok && e.re.matchString(a)
	case copRegex:
		a, ok := actual.(string)
		return ok && e.re.re.MatchString(a)
	case copOneOf:
		if e.flag {
			// Every candidate is a number: read actual once.
			an, ok := toNumber(actual)
			if !ok {
				return false
			}
			for i := range e.kids {
				if e.kids[i].num.equal(an, strict) {
					return true
				}
			}
			return false
		}
		for i := range e.kids {
			if e.kids[i].match(actual, strict) {
				return true
			}
		}
		return false
	case copApprox:
		n, ok := toNumber(actual)
		return ok && math.Abs(n.float()-e.num.f) <= e.tol
	case copNull:
		return actual == nil
	case copBool:
		a, ok := actual.(bool)
		return ok && a == e.flag
	case copAny:
		return true
	case copContains:
		switch a := actual.(type) {
		case string:
			return e.flag && strings.Contains(a, e.s)
		case []any:
			for _, el := range a {
				if e.kids[0].match(el, strict) {
					return true
				}
			}
		}
		return false
	case copMatcher:
		return e.m.Match(actual, CompareOptions{Strict: strict})
	}
	return false
}

// countEqual returns how many of an object node's keys are present in args
// with a value that matches.
func (e *cval) countEqual(args map[string]any, strict bool) int {
	n := 0
	for i, k := range e.keys {
		if av, ok := args[k]; ok && e.kids[i].match(av, strict) {
			n++
		}
	}
	return n
}

// satisfiedBy reports whether every key of an object node is present in
// args with a value that matches (extra keys are allowed).
func (e *cval) satisfiedBy(args map[string]any, strict bool) bool {
	for i, k := range e.keys {
		if av, ok := args[k]; !ok || !e.kids[i].match(av, strict) {
			return false
		}
	}
	return true
}
