package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// The fix of a missing call says in words what the call's arguments must
// be (appendArgsWords): each argument as its key in backquotes and what
// its value must be, in key order, joined with ", ":
//
//	`flight_id` = "FL-204"              a plain JSON value, as JSON
//	`date` matching /^2026-12-/         $regex
//	`tags` containing "vip"             $contains
//	`seat` one of "1A" or "2B"          $one_of
//	`note` any value                    $any
//	`count` of type integer or null     $type
//	`n` ≈ 5 (±0.5)                      $approx: the tolerance as the
//	`total` ≈ 100 (±1%)                 larger of abs and rel × |value|
//
// An object value holding a matcher is described member by member, under
// dotted keys (`filter.lang` matching /^fr/); inside an array or a
// matcher, values are described as nouns ("a string matching /^a/", "a
// number ≈ 5 (±0.5)"). A matcher the words do not know (a custom one) is
// shown by its JSON form: `code` matching {"$iata":true}. Every JSON text
// and pattern is cut at maxValueText bytes, at most maxDetailItems
// arguments (and elements of an array, candidates of a $one_of) are
// described ("and 2 more arguments"), the words stop with "…" once they
// pass maxArgsWords bytes (deeply nested matchers), and no arguments at
// all reads "no arguments".

// maxArgsWords bounds the words of one set of arguments: past it, what is
// left is not described.
const maxArgsWords = 10 * maxValueText

// argWords writes the words of one set of expected arguments; path is the
// key path of the object being described, n counts the arguments met.
// start is where the words begin in b; cut records that they passed
// maxArgsWords and ended with "…".
type argWords struct {
	b     []byte
	path  []string
	n     int
	start int
	cut   bool
}

// full reports whether the words passed maxArgsWords, ending them with
// "…" the first time.
func (w *argWords) full() bool {
	if !w.cut && len(w.b)-w.start > maxArgsWords {
		w.b = append(w.b, "…"...)
		w.cut = true
	}
	return w.cut
}

// appendArgsWords appends the words of expected arguments s (an object,
// as shownArgs gives it; see the comment above) to b. s is already
// redacted (redactor.expectedArgs): the words show what s holds, a
// redactedMatcher by the JSON form it shows.
func appendArgsWords(b []byte, s shownArg) []byte {
	w := argWords{b: b, start: len(b)}
	if s.isDoc {
		w.docObject(s.doc)
	} else if m, ok := s.v.(map[string]any); ok {
		w.object(m)
	}
	switch {
	case w.n == 0:
		w.b = append(w.b, "no arguments"...)
	case w.n > maxDetailItems:
		w.b = append(w.b, " and "...)
		w.b = strconv.AppendInt(w.b, int64(w.n-maxDetailItems), 10)
		w.b = append(w.b, " more argument"...)
		if w.n-maxDetailItems > 1 {
			w.b = append(w.b, 's')
		}
	}
	return w.b
}

// object describes the members of m, in key order: an object holding a
// matcher member by member, every other value as one argument.
func (w *argWords) object(m map[string]any) {
	for _, k := range sortedKeys(m) {
		v := m[k]
		if sub, ok := v.(map[string]any); ok && holdsMatcher(sub) {
			w.path = append(w.path, k)
			w.object(sub)
			w.path = w.path[:len(w.path)-1]
			continue
		}
		if w.item(k) {
			w.predicate(v)
		}
	}
}

// docObject describes the members of a document's object (which holds
// no matcher), in key order: the first maxDetailItems found one by one
// (each the smallest key after the one before), without sorting a copy of
// the keys, and the others counted.
func (w *argWords) docObject(d jsondoc.Value) {
	var prev string
	for i := range min(d.Len(), maxDetailItems) {
		var k string
		var v jsondoc.Value
		for mk, mv := range d.Members() {
			if (i == 0 || mk > prev) && (!v.Exists() || mk < k) {
				k, v = mk, mv
			}
		}
		prev = k
		if w.item(k) {
			w.b = append(w.b, "= "...)
			w.b = appendDocValueText(w.b, v)
		}
	}
	w.n = max(w.n, d.Len())
}

// item counts the argument k of the current path and, while fewer than
// maxDetailItems were described and the words are not full, starts its
// words ("`path.k` ") and reports true.
func (w *argWords) item(k string) bool {
	w.n++
	if w.n > maxDetailItems || w.full() {
		return false
	}
	if w.n > 1 {
		w.b = append(w.b, ", "...)
	}
	w.b = append(w.b, '`')
	for _, p := range w.path {
		w.b = append(w.b, p...)
		w.b = append(w.b, '.')
	}
	w.b = append(w.b, k...)
	w.b = append(w.b, "` "...)
	return true
}

// predicate describes what an argument's value must be, after its key:
// "= 5", "matching /x/".
func (w *argWords) predicate(v any) {
	if m, ok := v.(Matcher); ok {
		w.matcher(m, false)
		return
	}
	w.b = append(w.b, "= "...)
	w.noun(v)
}

// noun describes a value where it stands alone (in an array, or as a
// matcher's operand): a plain value as its JSON text, a matcher as "a
// string matching /x/", an array or object holding a matcher element by
// element or member by member.
func (w *argWords) noun(v any) {
	switch x := v.(type) {
	case Matcher:
		w.matcher(x, true)
		return
	case []any:
		if holdsMatcher(x) {
			w.array(x)
			return
		}
	case map[string]any:
		if holdsMatcher(x) {
			w.b = append(w.b, '{')
			for i, k := range sortedKeys(x) {
				if w.full() {
					return
				}
				if i > 0 {
					w.b = append(w.b, ", "...)
				}
				w.b = append(w.b, '`')
				w.b = append(w.b, k...)
				w.b = append(w.b, "` "...)
				w.predicate(x[k])
			}
			if !w.cut {
				w.b = append(w.b, '}')
			}
			return
		}
	}
	w.b = appendValueText(w.b, v)
}

// array describes the elements of an array holding a matcher, the first
// maxDetailItems of them: [1, any value, …].
func (w *argWords) array(xs []any) {
	w.b = append(w.b, '[')
	for i, x := range xs {
		if w.full() {
			return
		}
		if i > 0 {
			w.b = append(w.b, ", "...)
		}
		if i == maxDetailItems {
			w.b = append(w.b, "…"...)
			break
		}
		w.noun(x)
	}
	if !w.cut {
		w.b = append(w.b, ']')
	}
}

// matcher describes a matcher, as a predicate ("matching /x/") or, when
// noun, as a noun ("a string matching /x/").
func (w *argWords) matcher(m Matcher, noun bool) {
	switch x := m.(type) {
	case *Regex:
		w.regex(x.String(), noun)
	case *Contains:
		w.contains(x.Value, noun)
	case *OneOf:
		w.oneOf(x.Candidates)
	case Any, *Any:
		w.b = append(w.b, "any value"...)
	case *Type:
		if noun {
			w.b = append(w.b, "a value "...)
		}
		w.b = append(w.b, "of type "...)
		for i, n := range x.Names {
			w.b = appendListSep(w.b, i, len(x.Names))
			w.b = append(w.b, n...)
		}
	case *Approx:
		if noun {
			w.b = append(w.b, "a number "...)
		}
		w.b = append(w.b, "≈ "...)
		w.b = appendWordsNumber(w.b, x.Value)
		w.b = append(w.b, " (±"...)
		if rel := x.Rel * math.Abs(x.Value); x.Abs >= rel {
			w.b = appendWordsNumber(w.b, x.Abs)
		} else {
			// Rel × 100 rounded to 12 digits: 1e-6 × 100 is 0.0001, not
			// 9.999999999999999e-05.
			p, _ := strconv.ParseFloat(strconv.FormatFloat(x.Rel*100, 'g', 12, 64), 64)
			w.b = appendWordsNumber(w.b, p)
			w.b = append(w.b, '%')
		}
		w.b = append(w.b, ')')
	case *redactedMatcher:
		w.shownMatcher(x.shown, noun)
	default:
		w.other(m, noun)
	}
}

// shownMatcher describes a matcher by the JSON form a redactedMatcher
// shows ({"$regex": "[REDACTED:...]"}): the operators whose operand holds
// text ($regex, $contains, $one_of) as matcher does, any other as its
// JSON text.
func (w *argWords) shownMatcher(shown any, noun bool) {
	if m, ok := shown.(map[string]any); ok && len(m) == 1 {
		for op, arg := range m {
			switch op {
			case "$regex":
				if p, ok := arg.(string); ok {
					w.regex(p, noun)
					return
				}
			case "$contains":
				w.contains(arg, noun)
				return
			case "$one_of":
				if cs, ok := arg.([]any); ok {
					w.oneOf(cs)
					return
				}
			}
		}
	}
	w.other(shown, noun)
}

// regex writes "matching /pattern/" (the pattern as appendPattern
// writes it, cut at maxValueText bytes), "a string matching /pattern/"
// when noun.
func (w *argWords) regex(pattern string, noun bool) {
	if noun {
		w.b = append(w.b, "a string "...)
	}
	w.b = append(w.b, "matching /"...)
	start := len(w.b)
	w.b = cutFrom(appendPattern(w.b, pattern), start)
	w.b = append(w.b, '/')
}

// appendPattern appends an RE2 pattern as it is written, but for the
// control characters and line separators in it, written as the escapes
// RE2 reads as them (\n, \t, \x01, \x{2028}): a fix stays on one line.
func appendPattern(b []byte, p string) []byte {
	const hex = "0123456789abcdef"
	for _, r := range p {
		switch {
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r == '\v':
			b = append(b, `\v`...)
		case r < 0x20 || r == 0x7f:
			b = append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\x{`...)
			b = strconv.AppendInt(b, int64(r), 16)
			b = append(b, '}')
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

// contains writes "containing " and the operand, "a value containing "
// when noun.
func (w *argWords) contains(v any, noun bool) {
	if noun {
		w.b = append(w.b, "a value "...)
	}
	w.b = append(w.b, "containing "...)
	w.noun(v)
}

// oneOf writes "one of" and the candidates, the first maxDetailItems of
// them: `one of "a", "b" or "c"`, `one of 1, 2, 3, 4, 5 or 2 more`, "one
// of nothing" for no candidate.
func (w *argWords) oneOf(cs []any) {
	w.b = append(w.b, "one of "...)
	if len(cs) == 0 {
		w.b = append(w.b, "nothing"...)
		return
	}
	if len(cs) > maxDetailItems {
		for i, c := range cs[:maxDetailItems] {
			if w.full() {
				return
			}
			if i > 0 {
				w.b = append(w.b, ", "...)
			}
			w.noun(c)
		}
		if w.cut {
			return
		}
		w.b = append(w.b, " or "...)
		w.b = strconv.AppendInt(w.b, int64(len(cs)-maxDetailItems), 10)
		w.b = append(w.b, " more"...)
		return
	}
	for i, c := range cs {
		if w.full() {
			return
		}
		w.b = appendListSep(w.b, i, len(cs))
		w.noun(c)
	}
}

// other writes a matcher the words do not know by its JSON text:
// "matching {...}", "a value matching {...}" when noun.
func (w *argWords) other(m any, noun bool) {
	if noun {
		w.b = append(w.b, "a value "...)
	}
	w.b = append(w.b, "matching "...)
	w.b = appendValueText(w.b, m)
}

// appendListSep appends what comes before item i of n in a list read as
// "a, b or c".
func appendListSep(b []byte, i, n int) []byte {
	switch {
	case i == 0:
		return b
	case i == n-1:
		return append(b, " or "...)
	}
	return append(b, ", "...)
}

// holdsMatcher reports whether v (an expected value) is or holds a
// Matcher, at any depth.
func holdsMatcher(v any) bool {
	switch x := v.(type) {
	case Matcher:
		return true
	case map[string]any:
		for _, e := range x {
			if holdsMatcher(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, holdsMatcher)
	}
	return false
}

// appendWordsNumber appends f as encoding/json writes a float64: without
// an exponent from 1e-6 to 1e21, else with the shortest one (1e-7, 1e+21).
func appendWordsNumber(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 to 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendValueText appends v as textArena.value renders it (its JSON
// text, cut at maxValueText bytes with "…").
func appendValueText(b []byte, v any) []byte {
	start := len(b)
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		b = append(b, x...)
	case jsondoc.Value:
		return appendDocValueText(b, x)
	case string:
		b = appendQuoteJSON(b, x)
	case json.Marshaler: // matchers: their own JSON
		if nb, ok := appendMatcherJSON(b, x); ok {
			b = nb
			break
		}
		j, err := x.MarshalJSON()
		if err != nil {
			return fmt.Appendf(b, "%v", v)
		}
		b = append(b, j...)
	default:
		nb, err := jsondoc.AppendAny(b, v)
		if err != nil {
			return fmt.Appendf(b, "%v", v)
		}
		b = nb
	}
	return cutFrom(b, start)
}

// appendDocValueText appends a document's value as textArena.docValue
// renders it.
func appendDocValueText(b []byte, v jsondoc.Value) []byte {
	start := len(b)
	switch v.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
		return append(b, "null"...)
	case jsondoc.Bool:
		x, _ := v.Bool()
		return strconv.AppendBool(b, x)
	case jsondoc.Number:
		n, _ := v.Num()
		b = append(b, n...)
	case jsondoc.String:
		b = appendQuoteJSON(b, v.Text())
	default:
		limit := start + maxValueText + 1
		var ok bool
		if b, ok = v.AppendJSONPrefixAsWritten(b, limit); !ok {
			b = appendJSONPrefix(b, v, limit)
		}
	}
	return cutFrom(b, start)
}

// cutFrom cuts the text b[start:] as cutValueText cuts a string.
func cutFrom(b []byte, start int) []byte {
	if len(b)-start <= maxValueText {
		return b
	}
	return append(b[:start+valueCut(bytesText(b[start:]))], "…"...)
}
