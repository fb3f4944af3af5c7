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
	"sync"
	"sync/atomic"
	"unicode/utf8"
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

// regexEntry is one compiled pattern of the cache.
type regexEntry struct {
	re   *regexp.Regexp
	kind regexKind
	lit  string
}

// NewRegex compiles pattern (RE2 syntax); the error says why it does not
// compile. Compiled patterns are shared: a service parses the same
// contracts all day, and compiling is most of a contract's parse time.
func NewRegex(pattern string) (*Regex, error) {
	if e, ok := regexCache.Load(pattern); ok {
		e := e.(*regexEntry)
		return &Regex{re: e.re, kind: e.kind, lit: e.lit}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	kind, lit := regexLiteral(pattern)
	e := &regexEntry{re: re, kind: kind, lit: lit}
	// A *regexp.Regexp is safe for concurrent use and immutable, so the
	// cache cannot change any result; it only stops growing when full.
	if regexCacheSize.Load() < maxCachedRegexes {
		if _, loaded := regexCache.LoadOrStore(pattern, e); !loaded {
			regexCacheSize.Add(1)
		}
	}
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

// maxCachedRegexes bounds the compiled-pattern cache.
const maxCachedRegexes = 4096

var (
	regexCache     sync.Map // pattern -> *regexEntry
	regexCacheSize atomic.Int64
)

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

// MarshalJSON writes {"$regex": pattern}.
func (m *Regex) MarshalJSON() ([]byte, error) {
	return matcherJSON("$regex", m.re.String())
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

// parseExpected turns a decoded JSON value into an expected value: every
// matcher object (an object whose only key is a $ operator) becomes a
// Matcher. Problems are appended to errs with JSON pointers below ptr. An
// object with a key that starts with "$" is a matcher object; an unknown
// operator, or an operator beside other keys, is an error.
func parseExpected(v any, ptr string, errs *[]FieldError) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if strings.HasPrefix(k, "$") {
				return parseMatcher(x, ptr, errs)
			}
		}
		out := make(map[string]any, len(x))
		for k, ev := range x {
			out[k] = parseExpected(ev, ptr+"/"+escapePointer(k), errs)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, ev := range x {
			out[i] = parseExpected(ev, fmt.Sprintf("%s/%d", ptr, i), errs)
		}
		return out
	}
	return v
}

func parseMatcher(obj map[string]any, ptr string, errs *[]FieldError) any {
	bad := func(p, format string, a ...any) any {
		*errs = append(*errs, FieldError{p, fmt.Sprintf(format, a...)})
		return nil
	}
	if len(obj) != 1 {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return bad(ptr, "a matcher object must have exactly one key, got %s", strings.Join(keys, ", "))
	}
	var op string
	var arg any
	for k, v := range obj {
		op, arg = k, v
	}
	p := ptr + "/" + escapePointer(op)
	switch op {
	case "$regex":
		s, ok := arg.(string)
		if !ok {
			return bad(p, "$regex takes a string pattern")
		}
		m, err := NewRegex(s)
		if err != nil {
			return bad(p, "regex does not compile: %v", err)
		}
		return m
	case "$contains":
		return &Contains{Value: parseExpected(arg, p, errs)}
	case "$one_of":
		list, ok := arg.([]any)
		if !ok {
			return bad(p, "$one_of takes an array of candidates")
		}
		cands := make([]any, len(list))
		for i, c := range list {
			cands[i] = parseExpected(c, fmt.Sprintf("%s/%d", p, i), errs)
		}
		return &OneOf{Candidates: cands}
	case "$any":
		if b, ok := arg.(bool); !ok || !b {
			return bad(p, "$any takes true")
		}
		return Any{}
	case "$type":
		var names []string
		switch t := arg.(type) {
		case string:
			names = []string{t}
		case []any:
			for i, n := range t {
				s, ok := n.(string)
				if !ok {
					return bad(fmt.Sprintf("%s/%d", p, i), "$type names must be strings")
				}
				names = append(names, s)
			}
		default:
			return bad(p, "$type takes a type name or a list of them")
		}
		if len(names) == 0 {
			return bad(p, "$type needs at least one type name")
		}
		for _, n := range names {
			if !typeNames[n] {
				return bad(p, "unknown type %q (valid: string, integer, number, boolean, array, object, null)", n)
			}
		}
		return &Type{Names: names}
	case "$approx":
		m := &Approx{Rel: 1e-6}
		switch a := arg.(type) {
		case map[string]any:
			for k := range a {
				if k != "value" && k != "rel" && k != "abs" {
					return bad(p+"/"+escapePointer(k), "unknown $approx key %q (valid: value, rel, abs)", k)
				}
			}
			val, ok := finiteNumber(a["value"])
			if !ok {
				return bad(p+"/value", "$approx needs a finite number \"value\"")
			}
			m.Value = val
			if r, present := a["rel"]; present {
				f, ok := finiteNumber(r)
				if !ok || f < 0 {
					return bad(p+"/rel", "rel must be a non-negative number")
				}
				m.Rel = f
			}
			if r, present := a["abs"]; present {
				f, ok := finiteNumber(r)
				if !ok || f < 0 {
					return bad(p+"/abs", "abs must be a non-negative number")
				}
				m.Abs = f
			}
		default:
			val, ok := finiteNumber(arg)
			if !ok {
				return bad(p, "$approx takes a finite number or {value, rel, abs}")
			}
			m.Value = val
		}
		return m
	}
	return bad(p, "unknown matcher %q (valid: %s)", op, strings.Join(matcherKeys, ", "))
}

func finiteNumber(v any) (float64, bool) {
	n, ok := toNumber(v)
	if !ok {
		return 0, false
	}
	f := n.float()
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
