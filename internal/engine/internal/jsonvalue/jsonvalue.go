// Package jsonvalue decodes JSON text into the generic values encoding/json
// gives with UseNumber (map[string]any, []any, string, json.Number, bool and
// nil), faster than encoding/json. The engine reads contracts with it and
// the format package reads traces with it.
//
// It accepts exactly what encoding/json accepts and yields equal values:
// invalid UTF-8 and lone surrogates become U+FFFD, a repeated key keeps its
// last value, and nesting deeper than 10000 is an error. Its syntax errors
// carry encoding/json's messages and the byte offset of the offending byte.
package jsonvalue

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth caps the nesting of arrays and objects, as encoding/json does,
// so a hostile document cannot exhaust the stack.
const MaxDepth = 10000

// Decoder reads JSON values from a string. Reading from a string lets
// unescaped strings and numbers share the input's memory instead of being
// copied; object members and array elements are gathered on stacks reused
// across values, so each map and slice is allocated once at its final
// size; and equal short strings and numbers share one boxed value. The
// zero Decoder reads the empty string; Reset gives it input. A Decoder is
// not safe for concurrent use.
type Decoder struct {
	s     string
	pos   int
	depth int
	kvs   []member
	vals  []any
	// boxes caches short strings and numbers already boxed in an any, so
	// a value repeated in a document (a tool name, a small number, an
	// enum-like string) is allocated once: boxing allocates, and an any
	// holding a string is immutable, so sharing it is safe. Allocated on
	// first use.
	boxes *[boxSlots]any
}

type member struct {
	k string
	v any
}

// SyntaxError is JSON text that does not parse: Msg is encoding/json's
// message for it and Offset the byte offset, in the decoder's input, of
// the offending byte (the input's length for a premature end).
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error returns Msg.
func (e *SyntaxError) Error() string { return e.Msg }

// Reset makes d read s from byte offset pos. It keeps its reusable stacks
// and its cache of boxed values, which may keep earlier input alive as
// long as d: reuse a Decoder for the parts of one document, such as the
// argument texts of one trace.
func (d *Decoder) Reset(s string, pos int) {
	d.s, d.pos, d.depth = s, pos, 0
}

// Pos is the byte offset of the next unread byte.
func (d *Decoder) Pos() int { return d.pos }

func (d *Decoder) fail(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// QuoteChar formats c as encoding/json does in its error messages: 'x'.
func QuoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// space marks the bytes JSON counts as white space.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func (d *Decoder) skipSpace() {
	for d.pos < len(d.s) && space[d.s[d.pos]] {
		d.pos++
	}
}

// AtEnd skips white space and reports whether the input is exhausted.
func (d *Decoder) AtEnd() bool {
	d.skipSpace()
	return d.pos >= len(d.s)
}

// Document decodes one JSON value followed only by white space.
func (d *Decoder) Document() (any, error) {
	v, err := d.Value()
	if err != nil {
		return nil, err
	}
	if !d.AtEnd() {
		return nil, d.fail(d.pos, "invalid character %s after top-level value", QuoteChar(d.s[d.pos]))
	}
	return v, nil
}

// Value decodes the JSON value that starts at the next non-space byte and
// leaves d just after it. Errors are *SyntaxError.
func (d *Decoder) Value() (any, error) {
	d.skipSpace()
	if d.pos >= len(d.s) {
		return nil, d.fail(d.pos, "unexpected end of JSON input")
	}
	return d.value()
}

// value decodes the value at d.pos, which is not white space and not the
// end of the input.
func (d *Decoder) value() (any, error) {
	switch c := d.s[d.pos]; c {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return d.box(s, false), nil
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			n, err := d.number()
			if err != nil {
				return nil, err
			}
			return d.box(string(n), true), nil
		}
		return nil, d.fail(d.pos, "invalid character %s looking for beginning of value", QuoteChar(c))
	}
}

func (d *Decoder) literal(lit string) error {
	if len(d.s)-d.pos >= len(lit) && d.s[d.pos:d.pos+len(lit)] == lit {
		d.pos += len(lit)
		return nil
	}
	for i := 1; i < len(lit); i++ {
		p := d.pos + i
		if p >= len(d.s) {
			return d.fail(p, "unexpected end of JSON input")
		}
		if d.s[p] != lit[i] {
			return d.fail(p, "invalid character %s in literal %s (expecting %s)", QuoteChar(d.s[p]), lit, QuoteChar(lit[i]))
		}
	}
	d.pos += len(lit)
	return nil
}

// IsNumber reports whether s is exactly one JSON number.
func IsNumber(s string) bool {
	if s == "" {
		return false
	}
	d := Decoder{s: s}
	_, err := d.number()
	return err == nil && d.pos == len(s)
}

func (d *Decoder) number() (json.Number, error) {
	s, start, i := d.s, d.pos, d.pos
	if s[i] == '-' {
		i++
	}
	need := func(i int, what string) error {
		if i >= len(s) {
			return d.fail(i, "unexpected end of JSON input")
		}
		return d.fail(i, "invalid character %s %s", QuoteChar(s[i]), what)
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return "", need(i, "in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", need(i, "after decimal point in numeric literal")
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return "", need(i, "in exponent of numeric literal")
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return json.Number(s[start:i]), nil
}

func (d *Decoder) object() (any, error) {
	open := d.pos
	d.pos++
	if d.depth++; d.depth > MaxDepth {
		return nil, d.fail(open, "exceeded max depth")
	}
	mark := len(d.kvs)
	d.skipSpace()
	if d.pos < len(d.s) && d.s[d.pos] == '}' {
		d.pos++
		d.depth--
		return map[string]any{}, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.s) {
			return nil, d.fail(d.pos, "unexpected end of JSON input")
		}
		if d.s[d.pos] != '"' {
			return nil, d.fail(d.pos, "invalid character %s looking for beginning of object key string", QuoteChar(d.s[d.pos]))
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.s) {
			return nil, d.fail(d.pos, "unexpected end of JSON input")
		}
		if d.s[d.pos] != ':' {
			return nil, d.fail(d.pos, "invalid character %s after object key", QuoteChar(d.s[d.pos]))
		}
		d.pos++
		v, err := d.Value()
		if err != nil {
			return nil, err
		}
		d.kvs = append(d.kvs, member{k, v})
		d.skipSpace()
		if d.pos >= len(d.s) {
			return nil, d.fail(d.pos, "unexpected end of JSON input")
		}
		c := d.s[d.pos]
		d.pos++
		if c == ',' {
			continue
		}
		if c == '}' {
			break
		}
		return nil, d.fail(d.pos-1, "invalid character %s after object key:value pair", QuoteChar(c))
	}
	m := make(map[string]any, len(d.kvs)-mark)
	for _, kv := range d.kvs[mark:] {
		m[kv.k] = kv.v
	}
	clear(d.kvs[mark:])
	d.kvs = d.kvs[:mark]
	d.depth--
	return m, nil
}

func (d *Decoder) array() (any, error) {
	open := d.pos
	d.pos++
	if d.depth++; d.depth > MaxDepth {
		return nil, d.fail(open, "exceeded max depth")
	}
	mark := len(d.vals)
	d.skipSpace()
	if d.pos < len(d.s) && d.s[d.pos] == ']' {
		d.pos++
		d.depth--
		return []any{}, nil
	}
	for {
		v, err := d.Value()
		if err != nil {
			return nil, err
		}
		d.vals = append(d.vals, v)
		d.skipSpace()
		if d.pos >= len(d.s) {
			return nil, d.fail(d.pos, "unexpected end of JSON input")
		}
		c := d.s[d.pos]
		d.pos++
		if c == ',' {
			continue
		}
		if c == ']' {
			break
		}
		return nil, d.fail(d.pos-1, "invalid character %s after array element", QuoteChar(c))
	}
	a := make([]any, len(d.vals)-mark)
	copy(a, d.vals[mark:])
	clear(d.vals[mark:])
	d.vals = d.vals[:mark]
	d.depth--
	return a, nil
}

// plain marks the string bytes that need no care: printable ASCII other
// than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string literal starting at the opening quote. A literal with
// no escapes and valid UTF-8 is returned as a substring of the input.
func (d *Decoder) str() (string, error) {
	s := d.s
	start := d.pos + 1
	i := start
	for i < len(s) {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			d.pos = i + 1
			return s[start:i], nil
		case c == '\\':
			return d.strSlow(start, i)
		case c < 0x20:
			return "", d.fail(i, "invalid character %s in string literal", QuoteChar(c))
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return d.strSlow(start, i)
			}
			i += size
		}
	}
	return "", d.fail(len(s), "unexpected end of JSON input")
}

// strSlow finishes a string literal that has escapes or invalid UTF-8,
// copying it; i is the first byte that needs care.
func (d *Decoder) strSlow(start, i int) (string, error) {
	s := d.s
	// Size the builder once from the literal's raw length: escapes only
	// shrink it (invalid UTF-8, replaced by U+FFFD, may grow it a little).
	end := i
	for end < len(s) && s[end] != '"' {
		if s[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(min(end, len(s)) - start)
	b.WriteString(s[start:i])
	for i < len(s) {
		c := s[i]
		if plain[c] {
			// Copy the run of bytes that need no care at once.
			j := i + 1
			for j < len(s) && plain[s[j]] {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		switch {
		case c == '"':
			d.pos = i + 1
			return b.String(), nil
		case c < 0x20:
			return "", d.fail(i, "invalid character %s in string literal", QuoteChar(c))
		case c == '\\':
			i++
			if i >= len(s) {
				return "", d.fail(i, "unexpected end of JSON input")
			}
			switch e := s[i]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
				i++
			case 'b':
				b.WriteByte('\b')
				i++
			case 'f':
				b.WriteByte('\f')
				i++
			case 'n':
				b.WriteByte('\n')
				i++
			case 'r':
				b.WriteByte('\r')
				i++
			case 't':
				b.WriteByte('\t')
				i++
			case 'u':
				r, err := d.hex4(i + 1)
				if err != nil {
					return "", err
				}
				i += 5
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else leaves
					// U+FFFD and reads on, as encoding/json does.
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2, ok := peekHex4(s, i+2); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b.WriteRune(dec)
								i += 6
								break
							}
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				return "", d.fail(i, "invalid character %s in string escape code", QuoteChar(e))
			}
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return "", d.fail(len(s), "unexpected end of JSON input")
}

// hex4 reads the four hex digits of a \u escape starting at i.
func (d *Decoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.s) {
			return 0, d.fail(j, "unexpected end of JSON input")
		}
		v, ok := hexVal(d.s[j])
		if !ok {
			return 0, d.fail(j, "invalid character %s in \\u hexadecimal character escape", QuoteChar(d.s[j]))
		}
		r = r<<4 | v
	}
	return r, nil
}

// peekHex4 reads four hex digits at i without failing.
func peekHex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		v, ok := hexVal(s[j])
		if !ok {
			return 0, false
		}
		r = r<<4 | v
	}
	return r, true
}

func hexVal(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

// LineCol converts a byte offset of s into a 1-based line and column
// (columns count bytes). An offset outside s is clamped to it.
func LineCol(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	prefix := s[:off]
	line = strings.Count(prefix, "\n") + 1
	return line, off - (strings.LastIndexByte(prefix, '\n') + 1) + 1
}

// boxSlots is the size of the boxed-value cache; maxBoxLen bounds the
// length of the values it keeps, so a lookup costs a short comparison.
const (
	boxBits   = 5
	boxSlots  = 1 << boxBits
	maxBoxLen = 32
)

// box returns s as an any holding a string, or a json.Number when num.
func (d *Decoder) box(s string, num bool) any {
	n := len(s)
	if n == 0 || n > maxBoxLen {
		if num {
			return json.Number(s)
		}
		return s
	}
	// Fibonacci hashing of the length and three of the bytes.
	h := (uint32(s[0]) | uint32(s[n/2])<<8 | uint32(s[n-1])<<16 | uint32(n)<<24) * 0x9E3779B1 >> (32 - boxBits)
	if d.boxes == nil {
		d.boxes = new([boxSlots]any)
	}
	e := &d.boxes[h]
	if num {
		if v, ok := (*e).(json.Number); ok && string(v) == s {
			return *e
		}
		*e = json.Number(s)
	} else {
		if v, ok := (*e).(string); ok && v == s {
			return *e
		}
		*e = s
	}
	return *e
}
