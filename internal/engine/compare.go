package engine

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CompareOptions tune Compare and every Matcher.
type CompareOptions struct {
	// Strict turns off string trimming and int/float leniency at every
	// depth (SPEC section 2).
	Strict bool
}

// Compare reports whether actual satisfies expected (SPEC section 2).
//
// expected is a JSON value (numbers as json.Number, or any Go number) that
// may hold Matcher values at any depth; actual is a plain JSON value.
// Lenient (the default): numbers are equal when numerically equal, strings
// after trimming Unicode White_Space, objects need the same key set and
// equal values, arrays the same length and pairwise equal values; true
// never equals 1. Strict: no trimming, and an integer literal never equals
// a non-integer literal. Integer literals compare exactly at any size;
// non-integer literals compare as IEEE-754 doubles.
func Compare(expected, actual any, opts CompareOptions) bool {
	switch e := expected.(type) {
	case Matcher:
		return e.Match(actual, opts)
	case nil:
		return actual == nil
	case string:
		a, ok := actual.(string)
		if !ok {
			return false
		}
		if opts.Strict {
			return e == a
		}
		return e == a || trimSpaceFast(e) == trimSpaceFast(a)
	case bool:
		a, ok := actual.(bool)
		return ok && a == e
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for k, ev := range e {
			av, ok := a[k]
			if !ok || !Compare(ev, av, opts) {
				return false
			}
		}
		return true
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for i := range e {
			if !Compare(e[i], a[i], opts) {
				return false
			}
		}
		return true
	}
	en, ok := toNumber(expected)
	if !ok {
		return false
	}
	an, ok := toNumber(actual)
	if !ok {
		return false
	}
	return en.equal(an, opts.Strict)
}

// trimSpace trims leading and trailing Unicode White_Space.
func trimSpace(s string) string { return strings.TrimFunc(s, unicode.IsSpace) }

// trimSpaceFast is trimSpace, without decoding runes when s starts and
// ends with an ASCII character that is not white space (the usual case).
func trimSpaceFast(s string) string {
	if len(s) == 0 {
		return s
	}
	if c, d := s[0], s[len(s)-1]; c < utf8.RuneSelf && d < utf8.RuneSelf && !asciiSpace[c] && !asciiSpace[d] {
		return s
	}
	return trimSpace(s)
}

// asciiSpace marks the ASCII characters unicode.IsSpace accepts.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// number is a JSON number with its literal kind: an integer literal (no
// fraction or exponent) keeps its exact text; any other number is a
// float64.
type number struct {
	// i is the value of an integer literal that fits int64.
	i    int64
	text string
	f    float64
	// isInt and small (the integer literal fits int64) come last, so that
	// they share one word.
	isInt bool
	small bool
}

// toNumber converts a JSON number (json.Number or a Go numeric type) to a
// number. Booleans and everything else are not numbers.
func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case json.Number:
		return parseNumber(string(n))
	case float64:
		return number{f: n}, true
	case float32:
		return number{f: float64(n)}, true
	case int:
		return number{isInt: true, i: int64(n), small: true}, true
	case int64:
		return number{isInt: true, i: n, small: true}, true
	case int32:
		return number{isInt: true, i: int64(n), small: true}, true
	case uint64:
		if n > math.MaxInt64 {
			return number{isInt: true, text: strconv.FormatUint(n, 10)}, true
		}
		return number{isInt: true, i: int64(n), small: true}, true
	case uint:
		return toNumber(uint64(n))
	case uint32:
		return number{isInt: true, i: int64(n), small: true}, true
	}
	return number{}, false
}

// parseNumber reads a JSON number literal: an integer literal exactly (a
// big one as its text), any other as a float64 (out-of-range literals
// become ±Inf, as in other JSON readers); false for text that is not a
// number.
func parseNumber(s string) (number, bool) {
	if i, ok := parseSmallInt(s); ok {
		return number{isInt: true, i: i, small: true, text: s}, true
	}
	if isIntLiteral(s) {
		i, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return number{isInt: true, i: i, small: true, text: s}, true
		}
		if _, ok := new(big.Int).SetString(s, 10); !ok {
			return number{}, false
		}
		return number{isInt: true, text: s}, true
	}
	if f, ok := parseSimpleDecimal(s); ok {
		return number{f: f, text: s}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if e, ok := err.(*strconv.NumError); !ok || e.Err != strconv.ErrRange {
			return number{}, false
		}
	}
	return number{f: f, text: s}, true
}

// isIntLiteral reports whether a JSON number literal has no fraction and no
// exponent.
func isIntLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// parseSmallInt parses an optional sign and 1 to 18 decimal digits, which
// always fit int64; it accepts exactly the texts of that form that
// strconv.ParseInt(s, 10, 64) accepts, with the same value.
func parseSmallInt(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int64(c)
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseSimpleDecimal parses "d.d" literals (an optional minus, digits, a
// point, digits; 15 digits at most, so the digits read as an integer are
// below 2^53) exactly as strconv.ParseFloat does: both the integer and the
// power of ten are exact doubles, so one division rounds correctly (the
// exact fast path of strconv's own reader).
func parseSimpleDecimal(s string) (float64, bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if len(s) < 3 || len(s) > 16 {
		return 0, false
	}
	var mant uint64
	point := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if point >= 0 {
				return 0, false
			}
			point = i
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		mant = mant*10 + uint64(c-'0')
	}
	if point <= 0 || point == len(s)-1 {
		return 0, false
	}
	f := float64(mant)
	if neg {
		f = -f
	}
	return f / pow10[len(s)-1-point], true
}

// pow10 are the powers of ten up to 1e15, each an exact double.
var pow10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// float returns n as a float64 (rounded for huge integers).
func (n number) float() float64 {
	if !n.isInt {
		return n.f
	}
	if n.small {
		return float64(n.i)
	}
	f, _ := strconv.ParseFloat(n.text, 64)
	return f
}

// bigInt returns an integer number as a big.Int.
func (n number) bigInt() *big.Int {
	if n.small {
		return big.NewInt(n.i)
	}
	b, _ := new(big.Int).SetString(n.text, 10)
	return b
}

const maxExactFloatInt = 1 << 53

func (n number) equal(m number, strict bool) bool {
	if strict && n.isInt != m.isInt {
		return false
	}
	switch {
	case n.isInt && m.isInt:
		if n.small && m.small {
			return n.i == m.i
		}
		return n.bigInt().Cmp(m.bigInt()) == 0
	case !n.isInt && !m.isInt:
		return n.f == m.f
	}
	// One integer literal, one double: compare the integer exactly against
	// the double's exact value.
	i, f := n, m
	if !n.isInt {
		i, f = m, n
	}
	if i.small && i.i <= maxExactFloatInt && i.i >= -maxExactFloatInt {
		return float64(i.i) == f.f
	}
	if math.IsInf(f.f, 0) || f.f != math.Trunc(f.f) {
		return false
	}
	bf := new(big.Float).SetFloat64(f.f)
	fi, _ := bf.Int(nil)
	return fi.Cmp(i.bigInt()) == 0
}
