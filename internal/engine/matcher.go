package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Matcher decides whether an actual argument value satisfies an expected
// one. Matchers may stand anywhere an expected value may, at any depth of
// an ExpectedCall's Args. Implementations must be safe for concurrent use
// and should implement json.Marshaler so results can show them.
//
// The built-in matchers are the JSON operators of SPEC section 2: Regex
// ($regex), Contains ($contains), OneOf ($one_of), Any ($any), Type ($type)
// and Approx ($approx). Callers add their own by implementing Matcher and
// placing values in Args.
type Matcher interface {
	// Match reports whether actual (a plain JSON value: json.Number,
	// string, bool, nil, []any or map[string]any) satisfies the matcher.
	Match(actual any, opts CompareOptions) bool
}

// Regex matches a string value in which the RE2 pattern is found anywhere.
// Non-strings never match.
type Regex struct {
	re *regexp.Regexp
	// kind and lit are a shortcut for patterns that are one literal,
	// optionally anchored (see regexLiteral); kind is regexGeneral
	// otherwise.
	kind regexKind
	lit  string
}

// regexKind says how a Regex matches: with the regexp engine, or as a
// plain string test equivalent to it.
type regexKind uint8

const (
	regexGeneral  regexKind = iota // the regexp engine
	regexContains                  // lit: strings.Contains
	regexPrefix                    // ^lit: strings.HasPrefix
	regexSuffix                    // lit$: strings.HasSuffix
	regexEqual                     // ^lit$: ==
)

// NewRegex compiles pattern (RE2 syntax); the error says why it does not
// compile.
func NewRegex(pattern string) (*Regex, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	kind, lit := regexLiteral(pattern)
	return &Regex{re: re, kind: kind, lit: lit}, nil
}

// regexLiteral recognises the patterns whose match is a plain string test:
// an ASCII literal (no case folding), optionally preceded by ^ (or \A)
// and followed by $ (or \z), which regexp.Compile reads with the Perl
// flags, where ^ and $ anchor at the ends of the text. It returns
// regexGeneral for every other pattern. Restricting the literal to ASCII
// makes a byte test agree with the regexp engine even on invalid UTF-8.
func regexLiteral(pattern string) (regexKind, string) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return regexGeneral, ""
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	begin, end := false, false
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		begin, subs = true, subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		end, subs = true, subs[:len(subs)-1]
	}
	var lit string
	switch {
	case len(subs) == 0:
	case len(subs) == 1 && subs[0].Op == syntax.OpLiteral && subs[0].Flags&syntax.FoldCase == 0:
		for _, r := range subs[0].Rune {
			if r >= utf8.RuneSelf {
				return regexGeneral, ""
			}
		}
		lit = string(subs[0].Rune)
	case len(subs) == 1 && subs[0].Op == syntax.OpEmptyMatch:
	default:
		return regexGeneral, ""
	}
	switch {
	case begin && end:
		return regexEqual, lit
	case begin:
		return regexPrefix, lit
	case end:
		return regexSuffix, lit
	}
	return regexContains, lit
}

// Match implements Matcher.
func (m *Regex) Match(actual any, _ CompareOptions) bool {
	s, ok := actual.(string)
	return ok && m.matchString(s)
}

// matchString reports whether the pattern is found in s.
func (m *Regex) matchString(s string) bool {
	switch m.kind {
	case regexContains:
		return strings.Contains(s, m.lit)
	case regexPrefix:
		return strings.HasPrefix(s, m.lit)
	case regexSuffix:
		return strings.HasSuffix(s, m.lit)
	case regexEqual:
		return s == m.lit
	}
	return m.re.MatchString(s)
}

// String returns the RE2 pattern the Regex was compiled from.
func (m *Regex) String() string { return m.re.String() }

// MarshalJSON writes {"$regex": pattern}.
func (m *Regex) MarshalJSON() ([]byte, error) {
	return matcherJSON("$regex", m.String())
}

// Contains matches a string containing Value (a string) as a substring, or
// an array with an element that compares equal to Value.
type Contains struct{ Value any }

// Match implements Matcher.
func (m *Contains) Match(actual any, opts CompareOptions) bool {
	switch a := actual.(type) {
	case string:
		sub, ok := m.Value.(string)
		return ok && strings.Contains(a, sub)
	case []any:
		for _, el := range a {
			if Compare(m.Value, el, opts) {
				return true
			}
		}
	}
	return false
}

// MarshalJSON writes {"$contains": value}.
func (m *Contains) MarshalJSON() ([]byte, error) {
	return matcherJSON("$contains", m.Value)
}

// OneOf matches when any candidate compares equal; candidates may be
// matchers.
type OneOf struct{ Candidates []any }

// Match implements Matcher.
func (m *OneOf) Match(actual any, opts CompareOptions) bool {
	for _, c := range m.Candidates {
		if Compare(c, actual, opts) {
			return true
		}
	}
	return false
}

// MarshalJSON writes {"$one_of": [candidates]}.
func (m *OneOf) MarshalJSON() ([]byte, error) {
	return matcherJSON("$one_of", m.Candidates)
}

// Any matches any value; the key must still be present.
type Any struct{}

// Match implements Matcher.
func (Any) Match(any, CompareOptions) bool { return true }

// MarshalJSON writes {"$any": true}.
func (Any) MarshalJSON() ([]byte, error) { return []byte(`{"$any":true}`), nil }

// Type matches a value of one of the JSON type names: string, integer (a
// number with no fractional part), number, boolean, array, object, null.
type Type struct{ Names []string }

var typeNames = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "array": true, "object": true, "null": true}

// Match implements Matcher.
func (m *Type) Match(actual any, _ CompareOptions) bool {
	for _, n := range m.Names {
		if jsonTypeIs(actual, n) {
			return true
		}
	}
	return false
}

func jsonTypeIs(v any, name string) bool {
	switch name {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := toNumber(v)
		return ok
	case "integer":
		n, ok := toNumber(v)
		if !ok {
			return false
		}
		if n.isInt {
			return true
		}
		if n.text != "" {
			// Decide on the exact decimal, not the rounded double.
			return isIntegralLiteral(n.text)
		}
		return !math.IsInf(n.f, 0) && n.f == math.Trunc(n.f)
	}
	return false
}

// isIntegralLiteral reports whether a JSON number literal has no
// fractional part, exactly, in time linear in its length (big.Rat would
// expand an exponent such as 1e999999999).
func isIntegralLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			// An exponent beyond int range: huge means integral, tiny
			// means a fraction unless the mantissa is zero.
			e = math.MaxInt32
			if strings.HasPrefix(s[i+1:], "-") {
				e = math.MinInt32
			}
		}
		exp = max(min(e, math.MaxInt32), math.MinInt32)
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimRight(intPart+frac, "0")
	if strings.Trim(digits, "0") == "" {
		return true // zero
	}
	zeros := len(intPart) + len(frac) - len(digits)
	return exp-len(frac)+zeros >= 0
}

// MarshalJSON writes {"$type": name} or {"$type": [names]}.
func (m *Type) MarshalJSON() ([]byte, error) {
	if len(m.Names) == 1 {
		return matcherJSON("$type", m.Names[0])
	}
	return matcherJSON("$type", m.Names)
}

// Approx matches a number a with |a-Value| <= max(Rel*|Value|, Abs).
// Booleans and non-numbers never match.
type Approx struct{ Value, Rel, Abs float64 }

// Match implements Matcher.
func (m *Approx) Match(actual any, _ CompareOptions) bool {
	n, ok := toNumber(actual)
	if !ok {
		return false
	}
	return math.Abs(n.float()-m.Value) <= math.Max(m.Rel*math.Abs(m.Value), m.Abs)
}

// MarshalJSON writes {"$approx": {"value", "rel", "abs"}}.
func (m *Approx) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"$approx": map[string]float64{"value": m.Value, "rel": m.Rel, "abs": m.Abs}})
}

// matcherJSON returns {"op":v} as json.Marshal writes map[string]any{op:
// v} (op needs no escaping), without building the map.
func matcherJSON(op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(op)+len(b)+5)
	out = append(out, `{"`...)
	out = append(out, op...)
	out = append(out, `":`...)
	out = append(out, b...)
	return append(out, '}'), nil
}

// matcherKeys are the JSON matcher operators, sorted.
var matcherKeys = []string{"$any", "$approx", "$contains", "$one_of", "$regex", "$type"}

// expected turns a contract's JSON value into an expected value: every
// matcher object (an object whose only key is a $ operator) becomes a
// Matcher; numbers become json.Number, objects map[string]any (a repeated
// key keeps its last value), arrays []any. Problems are recorded with the
// JSON pointer of their place. An object with a key that starts with "$"
// is a matcher object; an unknown operator, or an operator beside other
// keys, is an error.
func (p *contractParser) expected(v jsondoc.Value) any {
	switch v.Kind() {
	case jsondoc.Object:
		if hasOperator(v) {
			return p.matcher(v)
		}
		out := make(map[string]any, v.Len())
		for k, ev := range v.Members() {
			out[k] = p.expected(ev)
		}
		return out
	case jsondoc.Array:
		out := make([]any, v.Len())
		for i, ev := range v.Elems() {
			out[i] = p.expected(ev)
		}
		return out
	case jsondoc.String:
		return v.Text()
	case jsondoc.Number:
		n, _ := v.Num()
		return json.Number(n)
	case jsondoc.Bool:
		b, _ := v.Bool()
		return b
	}
	return nil
}

// hasOperator reports whether the object v has a key that starts with
// "$": it is then a matcher object.
func hasOperator(v jsondoc.Value) bool { return v.HasKeyPrefix("$") }

// regex compiles a $regex pattern, once per contract.
func (p *contractParser) regex(pattern string) (*Regex, error) {
	if m, ok := p.regexes[pattern]; ok {
		return m, nil
	}
	m, err := NewRegex(pattern)
	if err != nil {
		return nil, err
	}
	if p.regexes == nil {
		p.regexes = make(map[string]*Regex)
	}
	p.regexes[pattern] = m
	return m, nil
}

func (p *contractParser) matcher(obj jsondoc.Value) any {
	bad := func(at jsondoc.Value, msg string, below ...string) any {
		p.fail(at, msg, below...)
		return nil
	}
	if obj.Len() != 1 {
		keys := make([]string, 0, obj.Len())
		for k := range obj.Members() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return bad(obj, "a matcher object must have exactly one key, got "+strings.Join(keys, ", "))
	}
	var op string
	var arg jsondoc.Value
	for k, v := range obj.Members() {
		op, arg = k, v
	}
	switch op {
	case "$regex":
		s, ok := arg.Str()
		if !ok {
			return bad(arg, "$regex takes a string pattern")
		}
		m, err := p.regex(s)
		if err != nil {
			return bad(arg, fmt.Sprintf("regex does not compile: %v", err))
		}
		return m
	case "$contains":
		return &Contains{Value: p.expected(arg)}
	case "$one_of":
		if arg.Kind() != jsondoc.Array {
			return bad(arg, "$one_of takes an array of candidates")
		}
		cands := make([]any, arg.Len())
		for i, c := range arg.Elems() {
			cands[i] = p.expected(c)
		}
		return &OneOf{Candidates: cands}
	case "$any":
		if b, ok := arg.Bool(); !ok || !b {
			return bad(arg, "$any takes true")
		}
		return Any{}
	case "$type":
		var names []string
		switch arg.Kind() {
		case jsondoc.String:
			names = []string{arg.Text()}
		case jsondoc.Array:
			for _, n := range arg.Elems() {
				s, ok := n.Str()
				if !ok {
					return bad(n, "$type names must be strings")
				}
				names = append(names, s)
			}
		default:
			return bad(arg, "$type takes a type name or a list of them")
		}
		if len(names) == 0 {
			return bad(arg, "$type needs at least one type name")
		}
		for _, n := range names {
			if !typeNames[n] {
				return bad(arg, fmt.Sprintf("unknown type %q (valid: string, integer, number, boolean, array, object, null)", n))
			}
		}
		return &Type{Names: names}
	case "$approx":
		m := &Approx{Rel: 1e-6}
		if arg.Kind() == jsondoc.Object {
			for k, v := range arg.Members() {
				if k != "value" && k != "rel" && k != "abs" {
					return bad(v, fmt.Sprintf("unknown $approx key %q (valid: value, rel, abs)", k))
				}
			}
			val, ok := finiteValue(arg.Get("value"))
			if !ok {
				return bad(arg, "$approx needs a finite number \"value\"", "value")
			}
			m.Value = val
			if r := arg.Get("rel"); r.Exists() {
				f, ok := finiteValue(r)
				if !ok || f < 0 {
					return bad(r, nonNegative("rel", r))
				}
				m.Rel = f
			}
			if r := arg.Get("abs"); r.Exists() {
				f, ok := finiteValue(r)
				if !ok || f < 0 {
					return bad(r, nonNegative("abs", r))
				}
				m.Abs = f
			}
			return m
		}
		val, ok := finiteValue(arg)
		if !ok {
			return bad(arg, "$approx takes a finite number or {value, rel, abs}")
		}
		m.Value = val
		return m
	}
	if f, ok := p.custom[op]; ok {
		return p.customMatcher(op, arg, f)
	}
	return bad(arg, fmt.Sprintf("unknown matcher %q (valid: %s)", op, p.validMatcherNames()))
}

// finiteValue reads a number of a document as a finite float64: false for
// anything else, a number outside float64's range included.
// nonNegative is the message for the $approx tolerance key whose value v
// is not a finite non-negative number.
func nonNegative(key string, v jsondoc.Value) string {
	if n, ok := v.Num(); ok {
		if _, finite := finiteValue(v); !finite {
			return key + " must be a finite number, got " + n + " (out of float64's range)"
		}
	}
	return key + " must be a non-negative number"
}

func finiteValue(v jsondoc.Value) (float64, bool) {
	n, ok := v.Num()
	if !ok {
		return 0, false
	}
	return finiteNumber(json.Number(n))
}

func finiteNumber(v any) (float64, bool) {
	n, ok := toNumber(v)
	if !ok {
		return 0, false
	}
	f := n.float()
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
