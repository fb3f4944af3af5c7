package format

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth caps the nesting of arrays and objects, as encoding/json does, so
// a hostile document cannot exhaust the stack.
const maxDepth = 10000

// decoder reads JSON text held in a string into the values encoding/json
// gives with UseNumber: map[string]any, []any, string, json.Number, bool and
// nil. It accepts exactly what encoding/json accepts and yields the same
// values (FuzzDecodeDiff checks this): invalid UTF-8 and lone surrogates
// become U+FFFD, and a repeated key keeps its last value.
//
// It exists because the service parses every POSTed trace and encoding/json
// decoding into any runs at about 60 MB/s on this machine; reading from a
// string lets unescaped strings and numbers share the input's memory instead
// of being copied, and object members are gathered on a reused stack so each
// map is allocated once at its final size.
type decoder struct {
	s     string
	pos   int
	depth int
	kvs   []member
	vals  []any
}

type member struct {
	k string
	v any
}

// jsonError is a syntax error at byte offset off of the decoder's input.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return e.msg }

func (d *decoder) fail(off int, format string, args ...any) error {
	return &jsonError{off: off, msg: fmt.Sprintf(format, args...)}
}

// quoteChar formats c as encoding/json does in its error messages.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.s) {
		switch d.s[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// atEnd skips white space and reports whether the input is exhausted.
func (d *decoder) atEnd() bool {
	d.skipSpace()
	return d.pos >= len(d.s)
}

// document decodes one JSON value followed only by white space.
func (d *decoder) document() (any, error) {
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if !d.atEnd() {
		return nil, d.fail(d.pos, "invalid character %s after top-level value", quoteChar(d.s[d.pos]))
	}
	return v, nil
}

func (d *decoder) value() (any, error) {
	d.skipSpace()
	if d.pos >= len(d.s) {
		return nil, d.fail(d.pos, "unexpected end of JSON input")
	}
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
		return s, nil
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return d.number()
		}
		return nil, d.fail(d.pos, "invalid character %s looking for beginning of value", quoteChar(c))
	}
}

func (d *decoder) literal(lit string) error {
	for i := 1; i < len(lit); i++ {
		p := d.pos + i
		if p >= len(d.s) {
			return d.fail(p, "unexpected end of JSON input")
		}
		if d.s[p] != lit[i] {
			return d.fail(p, "invalid character %s in literal %s (expecting %s)", quoteChar(d.s[p]), lit, quoteChar(lit[i]))
		}
	}
	d.pos += len(lit)
	return nil
}

func (d *decoder) number() (any, error) {
	s, start, i := d.s, d.pos, d.pos
	if s[i] == '-' {
		i++
	}
	digits := func() {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	need := func(what string) error {
		if i >= len(s) {
			return d.fail(i, "unexpected end of JSON input")
		}
		return d.fail(i, "invalid character %s %s", quoteChar(s[i]), what)
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		digits()
	default:
		return nil, need("in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return nil, need("after decimal point in numeric literal")
		}
		digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return nil, need("in exponent of numeric literal")
		}
		digits()
	}
	d.pos = i
	return json.Number(s[start:i]), nil
}

func (d *decoder) object() (any, error) {
	open := d.pos
	d.pos++
	if d.depth++; d.depth > maxDepth {
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
			return nil, d.fail(d.pos, "invalid character %s looking for beginning of object key string", quoteChar(d.s[d.pos]))
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
			return nil, d.fail(d.pos, "invalid character %s after object key", quoteChar(d.s[d.pos]))
		}
		d.pos++
		v, err := d.value()
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
		return nil, d.fail(d.pos-1, "invalid character %s after object key:value pair", quoteChar(c))
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

func (d *decoder) array() (any, error) {
	open := d.pos
	d.pos++
	if d.depth++; d.depth > maxDepth {
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
		v, err := d.value()
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
		return nil, d.fail(d.pos-1, "invalid character %s after array element", quoteChar(c))
	}
	a := make([]any, len(d.vals)-mark)
	copy(a, d.vals[mark:])
	clear(d.vals[mark:])
	d.vals = d.vals[:mark]
	d.depth--
	return a, nil
}

// str reads a string literal starting at the opening quote. A literal with
// no escapes and valid UTF-8 is returned as a substring of the input.
func (d *decoder) str() (string, error) {
	s := d.s
	start := d.pos + 1
	i := start
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return s[start:i], nil
		case c == '\\':
			return d.strSlow(start, i)
		case c < 0x20:
			return "", d.fail(i, "invalid character %s in string literal", quoteChar(c))
		case c < utf8.RuneSelf:
			i++
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
func (d *decoder) strSlow(start, i int) (string, error) {
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
		switch {
		case c == '"':
			d.pos = i + 1
			return b.String(), nil
		case c < 0x20:
			return "", d.fail(i, "invalid character %s in string literal", quoteChar(c))
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
				return "", d.fail(i, "invalid character %s in string escape code", quoteChar(e))
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
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
func (d *decoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.s) {
			return 0, d.fail(j, "unexpected end of JSON input")
		}
		v, ok := hexVal(d.s[j])
		if !ok {
			return 0, d.fail(j, "invalid character %s in \\u hexadecimal character escape", quoteChar(d.s[j]))
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
