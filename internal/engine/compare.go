package engine

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
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
		return e == a || trimSpace(e) == trimSpace(a)
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

// number is a JSON number with its literal kind: an integer literal (no
// fraction or exponent) keeps its exact text; any other number is a
// float64.
type number struct {
	isInt bool
	// i is the value of an integer literal that fits int64.
	i     int64
	small bool // the integer literal fits int64
	text  string
	f     float64
}

// toNumber converts a JSON number (json.Number or a Go numeric type) to a
// number. Booleans and everything else are not numbers.
func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case json.Number:
		s := string(n)
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
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			// Out-of-range literals become ±Inf, as in other JSON readers.
			if e, ok := err.(*strconv.NumError); !ok || e.Err != strconv.ErrRange {
				return number{}, false
			}
		}
		return number{f: f, text: s}, true
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

// isIntLiteral reports whether a JSON number literal has no fraction and no
// exponent.
func isIntLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

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
