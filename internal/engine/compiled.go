package engine

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// cop is the operation of a compiled expected value.
type cop uint8

const (
	copNever    cop = iota // a value Compare cannot read: never equal
	copNull                // null
	copString              // a string literal (s; trimmed, see setString)
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
	op cop
	// flag is a boolean's value, a string's "trim too long to keep",
	// $contains' "the value is a string", $one_of's "every candidate is
	// a number"; for an object or array compiled from a document, that it
	// holds no matcher, and s is then its exact source text (see pure).
	flag bool
	// lead and trail are the bytes trimSpace removes from a string's s at
	// each end (flag set: too many to keep, trimmed computes them).
	lead, trail uint16
	s           string
	keys        []string
	kids        []cval
	// keyBits are an object's keys as a set of keyBit bits.
	keyBits uint64
	// num is a number's value (the value of $approx in num.f).
	num *number
	// x holds what a matcher other than $contains and $one_of needs.
	x *cmatcher
}

// cmatcher is the part of a compiled matcher that values do not need:
// the tolerance of $approx, the Regex of $regex, any other Matcher.
type cmatcher struct {
	tol float64
	re  *Regex
	m   Matcher
}

// compileArgs compiles an expected call's arguments: nil (unchecked) for
// nil, else an object node. All nodes and keys live in two arrays.
func compileArgs(args map[string]any) *cval {
	if args == nil {
		return nil
	}
	nodes, keys := countNodes(args)
	b := cbuilder{nodes: make([]cval, nodes), keys: make([]string, keys)}
	root := &b.alloc(1)[0]
	b.build(root, args)
	return root
}

// compileExpected compiles the expected value v of a contract document
// into dst, with the nodes of p.cb: what compileArgs makes of the value
// p.expected makes of v, recording the same problems in the same order.
// Matcher objects are read by p.matcher; the other values are compiled
// from the document without building Go values, and value gives them
// back (a number's literal is kept in s).
func (p *contractParser) compileExpected(dst *cval, v jsondoc.Value) {
	b := &p.cb
	switch v.Kind() {
	case jsondoc.Object:
		if p.compileObject(dst, v) {
			return
		}
		p.matchers++
		m, _ := p.matcher(v).(Matcher)
		if m == nil {
			dst.op = copNever // invalid: its problem is recorded
			return
		}
		b.buildMatcher(dst, m)
	case jsondoc.Array:
		dst.op = copArray
		dst.kids = b.alloc(v.Len())
		for i, e := range v.Elems() {
			p.compileExpected(&dst.kids[i], e)
		}
		dst.setPure(v)
	case jsondoc.String:
		dst.setString(v.Text())
	case jsondoc.Bool:
		f, _ := v.Bool()
		dst.op, dst.flag = copBool, f
	case jsondoc.Number:
		lit, _ := v.Num()
		dst.s = lit
		n, ok := parseNumber(lit)
		if !ok {
			dst.op = copNever
			return
		}
		dst.op, dst.num = copNumber, b.number(n)
	default:
		dst.op = copNull
	}
}

// compileObject compiles the object v into dst as compileExpected does
// when v is not a matcher object (no key starts with "$"), and reports
// whether it was not: for a matcher object it compiles and records
// nothing.
func (p *contractParser) compileObject(dst *cval, v jsondoc.Value) bool {
	if v.HasKeyPrefix("$") {
		return false
	}
	b := &p.cb
	n := v.Len()
	keys := b.allocKeys(n)
	kids := b.alloc(n)
	var bits uint64
	i := 0
	for k, e := range v.Members() {
		keys[i] = k
		bits |= keyBit(k)
		p.compileExpected(&kids[i], e)
		i++
	}
	dst.op, dst.keys, dst.kids, dst.keyBits = copObject, keys, kids, bits
	dst.setPure(v)
	return true
}

// compileDoc compiles the arguments object v into dst as compileObject
// does, in one walk of v's nodes, when nothing in v is a matcher or read
// another way by compileExpected: no object key starting with "$" and no
// object with a repeated key, at any depth. It reports whether it did;
// when it did not, b and dst are as they were (the nodes it had taken are
// zeroed and given back) and v is for the plain reading.
func (b *cbuilder) compileDoc(dst *cval, v jsondoc.Value) bool {
	saved := *b
	if b.compileNodes(dst, v.Nodes()) {
		return true
	}
	// Zero what was handed out: from the arrays b started with up to
	// where they stand now, or all of them when b took new chunks.
	if b.chunks == saved.chunks {
		clear(saved.nodes[:len(saved.nodes)-len(b.nodes)])
		clear(saved.keys[:len(saved.keys)-len(b.keys)])
	} else {
		clear(saved.nodes)
		clear(saved.keys)
	}
	*b = saved
	*dst = cval{}
	return false
}

// compileNodes compiles the object or array node 0 of ns into dst as
// compileExpected does, from the same arrays of b in the same order, in
// one walk over the nodes in document order (no matcher test, no second
// look at the children for setPure). It reports false when it meets an
// object key starting with "$", an object with a repeated key, or a
// number parseNumber cannot read (none that JSON allows); compileDoc
// then undoes it. Every object and array it compiles is then pure: its
// values are strings, numbers, booleans, nulls and pure objects and
// arrays.
func (b *cbuilder) compileNodes(dst *cval, ns jsondoc.Nodes) bool {
	c := ns.Cursor()
	return b.fillNodes(dst, &c)
}

// fillNodes compiles the object or array node c is at into e (see
// compileNodes), leaving c at the last node of its subtree.
func (b *cbuilder) fillNodes(e *cval, c *jsondoc.Cursor) bool {
	if c.RepeatsKey() {
		return false
	}
	obj := c.Kind() == jsondoc.Object
	n := c.Count()
	e.flag, e.s = true, c.Raw()
	kids := b.alloc(n)
	e.kids = kids
	if !obj {
		e.op = copArray
		for m := range kids {
			c.Next()
			if !b.fillValue(&kids[m], c) {
				return false
			}
		}
		return true
	}
	keys := b.allocKeys(n)[:len(kids)]
	var bits uint64
	for m := range kids {
		c.Next()
		k := c.Text()
		if len(k) > 0 && k[0] == '$' {
			return false
		}
		keys[m] = k
		bits |= keyBit(k)
		c.Next()
		if !b.fillValue(&kids[m], c) {
			return false
		}
	}
	e.op, e.keys, e.keyBits = copObject, keys, bits
	return true
}

// fillValue compiles the value node c is at into e (see compileNodes),
// leaving c at the last node of its subtree.
func (b *cbuilder) fillValue(e *cval, c *jsondoc.Cursor) bool {
	switch c.Kind() {
	case jsondoc.Object, jsondoc.Array:
		return b.fillNodes(e, c)
	case jsondoc.String:
		s := c.Text()
		e.op, e.s = copString, s
		if len(s) > 0 && (trimEnd[s[0]] || trimEnd[s[len(s)-1]]) {
			e.trimLengths()
		}
	case jsondoc.Number:
		lit := c.Text()
		num := slot(&b.nums, &b.numChunk)
		if !readNumber(num, lit) {
			return false
		}
		e.op, e.s, e.num = copNumber, lit, num
	case jsondoc.Bool:
		e.op, e.flag = copBool, c.True()
	default:
		e.op = copNull
	}
	return true
}

// readNumber sets *n to parseNumber(lit) and reports parseNumber's ok:
// in one pass over lit for the literals of parseSmallInt without a sign
// or with "-" and of parseSimpleDecimal (the same values, computed the
// same way), through parseNumber for any other.
func readNumber(n *number, lit string) bool {
	s := lit
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return readNumberSlow(n, lit)
	}
	// The digits before a point, then (after one) those after it.
	var mant uint64
	i := 0
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		mant = mant*10 + uint64(d)
	}
	point := -1
	if i < len(s) {
		if s[i] != '.' {
			return readNumberSlow(n, lit)
		}
		point = i
		for i++; i < len(s); i++ {
			d := s[i] - '0'
			if d > 9 {
				return readNumberSlow(n, lit)
			}
			mant = mant*10 + uint64(d)
		}
	}
	if point < 0 {
		// parseSmallInt: 1 to 18 digits.
		v := int64(mant)
		if neg {
			v = -v
		}
		*n = number{isInt: true, i: v, small: true, text: lit}
		return true
	}
	// parseSimpleDecimal: digits on both sides of the point, 16 bytes at
	// most.
	if len(s) < 3 || len(s) > 16 || point == 0 || point == len(s)-1 {
		return readNumberSlow(n, lit)
	}
	f := float64(mant)
	if neg {
		f = -f
	}
	*n = number{f: f / pow10[len(s)-1-point], text: lit}
	return true
}

// readNumberSlow is readNumber through parseNumber.
func readNumberSlow(n *number, lit string) bool {
	var ok bool
	*n, ok = parseNumber(lit)
	return ok
}

// trimEnd marks the bytes at an end of a string that make setString
// compute its trim lengths: ASCII white space and the bytes of
// multi-byte characters (trimSpaceFast's test).
var trimEnd = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= utf8.RuneSelf || asciiSpace[c]
	}
	return t
}()

// pure reports whether a node compiled from a document counts as pure
// for its parent (setPure): a string, number, boolean or null, or a pure
// object or array.
func (e *cval) pure() bool {
	switch e.op {
	case copString, copNumber, copBool, copNull:
		return true
	case copObject, copArray:
		return e.flag
	}
	return false
}

// setPure marks an object or array node compiled from the document value
// v as pure when nothing inside it is a matcher (or a value Compare
// cannot read), keeping v's source text in s: a value with the same
// source text is the same JSON value, which matches it (match's first
// test).
func (e *cval) setPure(v jsondoc.Value) {
	for i := range e.kids {
		if !e.kids[i].pure() {
			return
		}
	}
	e.flag, e.s = true, v.Raw()
}

// slot returns a pointer to a new zero item of *chunk, allocating a new
// chunk (the old one stays with what was handed out from it) when it is
// full.
func slot[T any](chunk *[]T, last *int) *T {
	if len(*chunk) == cap(*chunk) {
		*chunk = make([]T, 0, nextChunk(last, 1))
	}
	*chunk = (*chunk)[:len(*chunk)+1]
	return &(*chunk)[len(*chunk)-1]
}

// setString makes e the string literal s, with the lengths of the white
// space trimSpace removes at each end of s.
func (e *cval) setString(s string) {
	e.op, e.s = copString, s
	if len(s) == 0 || s[0] < utf8.RuneSelf && s[len(s)-1] < utf8.RuneSelf && !asciiSpace[s[0]] && !asciiSpace[s[len(s)-1]] {
		return // trimSpaceFast's test: nothing to trim
	}
	e.trimLengths()
}

// trimLengths sets the lengths of the white space trimSpace removes at
// each end of a string node's s (flag when they do not fit).
func (e *cval) trimLengths() {
	s := e.s
	left := strings.TrimLeftFunc(s, unicode.IsSpace)
	right := strings.TrimRightFunc(left, unicode.IsSpace)
	lead, trail := len(s)-len(left), len(left)-len(right)
	if lead > math.MaxUint16 || trail > math.MaxUint16 {
		e.flag = true
		return
	}
	e.lead, e.trail = uint16(lead), uint16(trail)
}

// trimmed returns a string node's s as trimSpace trims it.
func (e *cval) trimmed() string {
	if e.flag {
		return trimSpace(e.s)
	}
	return e.s[e.lead : len(e.s)-int(e.trail)]
}

// cbuilder hands out nodes, keys and numbers from arrays: those it
// starts with (compileArgs sizes them with countNodes), then chunks of
// growing size shared by every value it compiles (one contract's).
type cbuilder struct {
	nodes []cval
	keys  []string
	nums  []number
	// the sizes of the last chunks.
	nodeChunk, keyChunk, numChunk int
	// chunks counts the chunks of nodes and keys taken.
	chunks int
}

// number returns a pointer to n in b's numbers.
func (b *cbuilder) number(n number) *number {
	p := slot(&b.nums, &b.numChunk)
	*p = n
	return p
}

// nextChunk returns the size of a chunk for n items after one of *last
// (doubling, from 16 to 512 items).
func nextChunk(last *int, n int) int {
	*last = min(max(2**last, 16), 512)
	return max(n, *last)
}

func (b *cbuilder) alloc(n int) []cval {
	if n > len(b.nodes) {
		b.nodes = make([]cval, nextChunk(&b.nodeChunk, n))
		b.chunks++
	}
	s := b.nodes[:n:n]
	b.nodes = b.nodes[n:]
	return s
}

func (b *cbuilder) allocKeys(n int) []string {
	if n > len(b.keys) {
		b.keys = make([]string, nextChunk(&b.keyChunk, n))
		b.chunks++
	}
	s := b.keys[:n:n]
	b.keys = b.keys[n:]
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
		dst.setString(x)
	case bool:
		dst.op, dst.flag = copBool, x
	case map[string]any:
		dst.op = copObject
		dst.keys = b.allocKeys(len(x))
		dst.kids = b.alloc(len(x))
		i := 0
		for k, w := range x {
			dst.keys[i] = k
			dst.keyBits |= keyBit(k)
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
		dst.op, dst.num = copNumber, b.number(n)
	}
}

func (b *cbuilder) buildMatcher(dst *cval, m Matcher) {
	dst.op, dst.x = copMatcher, &cmatcher{m: m}
	switch x := m.(type) {
	case *Regex:
		if x != nil && x.re != nil {
			dst.op, dst.x.re = copRegex, x
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
			dst.num = b.number(number{f: x.Value})
			dst.x.tol = math.Max(x.Rel*math.Abs(x.Value), x.Abs)
		}
	}
}

// match reports whether actual satisfies the compiled value; it is
// Compare(original, actual.Any(), CompareOptions{Strict: strict}).
func (e *cval) match(actual jsondoc.Value, strict bool) bool {
	switch e.op {
	case copString:
		a, ok := actual.Str()
		if !ok {
			return false
		}
		if a == e.s {
			return true
		}
		return !strict && trimSpaceFast(a) == e.trimmed()
	case copNumber:
		lit, ok := actual.Num()
		if !ok {
			return false
		}
		if lit == e.num.text && lit != "" {
			return true // the same literal: the same number, strict or not
		}
		an, ok := parseNumber(lit)
		return ok && e.num.equal(an, strict)
	case copObject:
		if e.flag && actual.Raw() == e.s {
			return true // the same text: the same value
		}
		if actual.Kind() != jsondoc.Object || actual.Len() != len(e.keys) {
			return false
		}
		for i, k := range e.keys {
			av := actual.Get(k)
			if !av.Exists() || !e.kids[i].match(av, strict) {
				return false
			}
		}
		return true
	case copArray:
		if e.flag && actual.Raw() == e.s {
			return true // the same text: the same value
		}
		if actual.Kind() != jsondoc.Array || actual.Len() != len(e.kids) {
			return false
		}
		for i, av := range actual.Elems() {
			if !e.kids[i].match(av, strict) {
				return false
			}
		}
		return true
	case copRegexLit:
		a, ok := actual.Str()
		return ok && e.x.re.matchString(a)
	case copRegex:
		a, ok := actual.Str()
		return ok && e.x.re.re.MatchString(a)
	case copOneOf:
		if e.flag {
			// Every candidate is a number: read actual once.
			an, ok := valueNumber(actual)
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
		n, ok := valueNumber(actual)
		return ok && math.Abs(n.float()-e.num.f) <= e.x.tol
	case copNull:
		return actual.Kind() == jsondoc.Null
	case copBool:
		a, ok := actual.Bool()
		return ok && a == e.flag
	case copAny:
		return true
	case copContains:
		switch actual.Kind() {
		case jsondoc.String:
			return e.flag && strings.Contains(actual.Text(), e.s)
		case jsondoc.Array:
			for _, el := range actual.Elems() {
				if e.kids[0].match(el, strict) {
					return true
				}
			}
		}
		return false
	case copMatcher:
		return e.x.m.Match(actual.Any(), CompareOptions{Strict: strict})
	}
	return false
}

// valueNumber reads a number of a document.
func valueNumber(v jsondoc.Value) (number, bool) {
	lit, ok := v.Num()
	if !ok {
		return number{}, false
	}
	return parseNumber(lit)
}

// keyBit is one bit of a 64-bit set chosen by keyHash: a set of keys
// holds every key of another only if its bits hold every bit of the
// other's (the scorer's correct and satisfies rule out most trace calls
// with it before looking up any key).
func keyBit(k string) uint64 { return 1 << keyHash(k) }

// keyHash is a 6-bit hash of a key or tool name: its length and first
// and last bytes (keyBit's bit, contractPlan.byHash's slot).
func keyHash(k string) int {
	h := len(k) * 31
	if len(k) > 0 {
		h += int(k[0])*7 + int(k[len(k)-1])
	}
	return h & 63
}

// satisfiedBy reports whether every key of an object node is present in
// args with a value that matches (extra keys are allowed).
func (e *cval) satisfiedBy(args jsondoc.Value, strict bool) bool {
	for i, k := range e.keys {
		if av := args.Get(k); !av.Exists() || !e.kids[i].match(av, strict) {
			return false
		}
	}
	return true
}
