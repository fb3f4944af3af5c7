package jsondoc

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// htmlSafe[c] is true for the ASCII bytes json.Marshal writes as
// themselves; plainSafe[c] for those an encoding/json Encoder with
// SetEscapeHTML(false) writes as themselves (<, > and & too).
var htmlSafe, plainSafe = func() (html, plain [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return html, plain
}()

// htmlSafe8 and plainSafe8 are htmlSafe and plainSafe over every byte
// value (false from 0x80 on), for loops that need no range check.
var htmlSafe8, plainSafe8 = func() (html, plain [256]bool) {
	copy(html[:], htmlSafe[:])
	copy(plain[:], plainSafe[:])
	return html, plain
}()

// AppendString appends s as a JSON string exactly as json.Marshal writes
// it (encoding/json's appendString with HTML escaping on): ", \ and
// control characters escaped (\b \f \n \r \t by name, others as \u00XX),
// <, > and & as \u003c, \u003e and \u0026, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 as \u2028 and \u2029 (RFC 8259 section 7; the last two
// for JavaScript).
func AppendString(b []byte, s string) []byte { return appendString(b, s, &htmlSafe) }

// AppendStringNoHTML appends s as a JSON string exactly as an
// encoding/json Encoder with SetEscapeHTML(false) writes it: as
// AppendString does, except that <, > and & are written as themselves.
func AppendStringNoHTML(b []byte, s string) []byte { return appendString(b, s, &plainSafe) }

func appendString(b []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	html := safe == &htmlSafe
	i := plainRun(s, 0, html)
	b = append(b, '"')
	if i == len(s) { // nothing to escape (most names and texts)
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i < len(s) {
		// s[i] may not be written as itself (plainRun stops early at
		// times): an ASCII byte to escape, or the first byte of a
		// multi-byte (or invalid) sequence.
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i = plainRun(s, i+1, html)
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				start = i + size
			case r == '\u2028' || r == '\u2029':
				b = append(b, s[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
				start = i + size
			}
			i += size
		}
		i = plainRun(s, i, html)
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainRun returns an index of s at or after i before which every byte
// from i on is written by appendString as itself (HTML-escaped with
// html): the first byte it escapes or that is >= 0x80, or len(s) when
// there is none; at times an earlier byte, which is then written as
// itself (the caller looks at it again).
//
// It reads eight bytes at a time (see suspects), the last eight of a
// string of eight bytes or more overlapping those already read, and a
// shorter string one byte at a time.
func plainRun(s string, i int, html bool) int {
	if len(s) < 8 {
		safe := &plainSafe8
		if html {
			safe = &htmlSafe8
		}
		for i < len(s) && safe[s[i]] {
			i++
		}
		return i
	}
	last := len(s) - 8
	// i is never negative; max tells the compiler so, which then drops
	// load8's bounds check in the loop.
	for i = max(i, 0); i <= last; i += 8 {
		if bad := suspects(load8(s, i), html); bad != 0 {
			return i + bits.TrailingZeros64(bad)/8
		}
	}
	if i < len(s) {
		// The bytes of the last word before i were read already; a byte
		// of theirs that is flagged can make the next one flagged too,
		// which is then an early stop.
		if bad := suspects(load8(s, last), html) &^ (1<<(8*uint(i-last)) - 1); bad != 0 {
			return last + bits.TrailingZeros64(bad)/8
		}
	}
	return len(s)
}

// suspects returns, for the eight bytes of x (little-endian), a word in
// which only high bits of bytes are set: that of the first byte of x that
// appendString does not write as itself (HTML-escaped with html: a byte
// below 0x20 or from 0x80, '"' or '\\', with html '<', '>' or '&'), if
// any, and of none before it; bytes after it may be flagged whatever they
// are (a borrow from the subtraction that detects it). A word without
// such a byte gives 0.
func suspects(x uint64, html bool) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ '"'*ones
	bs := x ^ '\\'*ones
	bad := (x - 0x20*ones) | x | (q-ones)&^q | (bs-ones)&^bs
	if html {
		// '<' and '>' (0x3c and 0x3e) are 0x3c with bit 1 set or not;
		// '&' is 0x26.
		lt := (x &^ (2 * ones)) ^ '<'*ones
		amp := x ^ '&'*ones
		bad |= (lt-ones)&^lt | (amp-ones)&^amp
	}
	return bad & highs
}

// escapesHTML returns, for the eight bytes of x (little-endian), a word
// with the high bit of each byte that AppendString does not write as
// itself set, and no other bit: a byte below 0x20 (its low seven bits
// plus 0x60 stay below 0x80), at or above 0x80, '\\', '"' or '&' (0x22
// and 0x26), '<' or '>' (0x3c and 0x3e).
func escapesHTML(x uint64) uint64 {
	const ones, low7, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return (^((x&low7)+0x60*ones)|x)&highs | zero(x^'\\'*ones) | zero((x|0x04*ones)^0x26*ones) | zero((x|0x02*ones)^0x3e*ones)
}

// escapesPlain is escapesHTML for AppendStringNoHTML: '<', '>' and '&'
// are written as themselves.
func escapesPlain(x uint64) uint64 {
	const ones, low7, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return (^((x&low7)+0x60*ones)|x)&highs | zero(x^'\\'*ones) | zero(x^'"'*ones)
}

// zero returns the high bit of each byte of y that is 0, and no other.
func zero(y uint64) uint64 {
	const low7, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return ^(((y & low7) + low7) | y) & highs
}

// load8 returns the eight bytes of s at i as a little-endian word. It is
// bounds-checked as s[i:i+8] is: it panics unless 0 <= i and i+8 <=
// len(s) (its callers make sure of that), and never reads past s.
func load8(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), len(s))[i : i+8])
}

// AppendFloat appends the finite f exactly as json.Marshal writes a
// float64: the shortest representation that reads back as f, in 'f'
// format unless the exponent is < -6 or >= 21 (then 'e', with e-07
// shortened to e-7), and -0 as -0. json.Marshal refuses NaN and
// infinities; callers must not pass them.
func AppendFloat(b []byte, f float64) []byte {
	if out, ok := appendShortFloat(b, f); ok {
		return out
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendShortFloat appends f as AppendFloat does when f reads back from
// a decimal with at most eight digits after the point and its magnitude is
// from 1e-6 to below 1e7 (scores and rates such as 0.75 or 1), and reports
// whether it did; for any other f it appends nothing.
//
// n = f·1e8 rounded is then that decimal's digits: f is within half an ulp
// of it, and below 1e7 half an ulp times 1e8 plus the product's rounding
// is less than ½. n/1e8, correctly rounded as ParseFloat rounds it, reads
// back as f exactly when such a decimal exists, and n without its
// trailing zeros is strconv's shortest digits (a decimal with fewer digits
// after the point would be n with more zeros; within that distance of f
// there is no other).
func appendShortFloat(b []byte, f float64) ([]byte, bool) {
	a, neg := f, false
	if a < 0 {
		a, neg = -a, true
	}
	if !(a >= 1e-6 && a < 1e7) { // also NaN, and ±0, which strconv writes
		return b, false
	}
	n := uint64(a*1e8 + 0.5)
	if float64(n)/1e8 != a {
		return b, false
	}
	// Strip the trailing zeros: all eight, or up to seven as 4, 2 and 1.
	k := 8
	if n%1e8 == 0 {
		n, k = n/1e8, 0
	} else {
		if n%1e4 == 0 {
			n, k = n/1e4, k-4
		}
		if n%100 == 0 {
			n, k = n/100, k-2
		}
		if n%10 == 0 {
			n, k = n/10, k-1
		}
	}
	var buf [24]byte
	i := len(buf)
	for range k {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if k > 0 {
		i--
		buf[i] = '.'
	}
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return append(b, buf[i:]...), true
}

// AppendJSON appends v exactly as json.Marshal writes v.Any(): object
// members sorted by key, each key once with its last value, strings
// HTML-escaped, numbers as their literals; null for the zero Value.
func (v Value) AppendJSON(b []byte) []byte {
	if v.d == nil {
		return append(b, "null"...)
	}
	if raw, compact, ok := v.d.tokensAsWritten(v.i, true); ok {
		if compact {
			return append(b, raw...)
		}
		return appendCompact(b, raw)
	}
	return v.d.appendAt(b, v.i, &htmlSafe)
}

// AppendJSONNoHTML appends v exactly as an encoding/json Encoder with
// SetEscapeHTML(false) writes v.Any() (without Encode's newline): as
// AppendJSON does, except that <, > and & in strings and keys are written
// as themselves.
func (v Value) AppendJSONNoHTML(b []byte) []byte {
	if v.d == nil {
		return append(b, "null"...)
	}
	if raw, compact, ok := v.d.tokensAsWritten(v.i, false); ok {
		if compact {
			return append(b, raw...)
		}
		return appendCompact(b, raw)
	}
	return v.d.appendAt(b, v.i, &plainSafe)
}

// asWritten returns the source text of array or object j and true when
// it is exactly what appendAt writes for it (HTML-escaped with html):
// tokensAsWritten's text, with nothing between its tokens. For anything
// else it returns false.
func (d *Doc) asWritten(j uint32, html bool) (string, bool) {
	raw, compact, ok := d.tokensAsWritten(j, html)
	return raw, ok && compact
}

// tokensAsWritten returns the source text of array or object j and true
// when appendAt writes each of its tokens as the text has it (HTML-escaped
// with html): the parser marked it flagTokens (every string plain ASCII
// as read, so it holds no quote, backslash or control character either,
// and every object's keys in increasing order, each once; numbers and
// literals are written as their text), and with html the text holds no
// <, > or &. compact reports that no white space lies between the tokens
// (flagCompact), so that the text is appendAt's output; else
// appendCompact of the text is. For anything else ok is false.
func (d *Doc) tokensAsWritten(j uint32, html bool) (raw string, compact, ok bool) {
	top := &d.nodes[j]
	if top.kind < Array || top.flag&flagTokens == 0 {
		return "", false, false
	}
	raw = d.src[top.off:top.rend]
	if html && (strings.IndexByte(raw, '<') >= 0 || strings.IndexByte(raw, '>') >= 0 || strings.IndexByte(raw, '&') >= 0) {
		return "", false, false
	}
	return raw, top.flag&flagCompact != 0, true
}

// appendCompact appends raw, the text of a value that tokensAsWritten
// accepts, without the white space between its tokens: its strings hold
// no quote or backslash, so every '"' opens or closes one.
func appendCompact(b []byte, raw string) []byte {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			end := i + 2 + strings.IndexByte(raw[i+1:], '"')
			b = append(b, raw[i:end]...)
			i = end
		case c <= ' ':
			i++
		default:
			end := i + 1
			for end < len(raw) && raw[end] > ' ' && raw[end] != '"' {
				end++
			}
			b = append(b, raw[i:end]...)
			i = end
		}
	}
	return b
}

// literalAsWritten reports whether s, the text between the quotes of a
// valid string literal, is exactly what appendString (HTML-escaped with
// html) writes between the quotes for the literal's value: every escape
// one appendString writes (\" \\ \b \f \n \r \t, \u00xx in lowercase for
// the other control characters and with html for <, > and &, \u2028 and
// \u2029), and every other byte one it writes as itself (valid UTF-8
// without U+2028 and U+2029; with html no <, > or &).
func literalAsWritten(s string, html bool) bool {
	for i := 0; i < len(s); {
		for i+8 <= len(s) {
			var bad uint64
			if x := load8(s, i); html {
				bad = escapesHTML(x)
			} else {
				bad = escapesPlain(x)
			}
			if bad != 0 {
				i += bits.TrailingZeros64(bad) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			return true
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return false
			}
			i += size
			continue
		}
		if c != '\\' {
			if c < 0x20 || !htmlSafe[c] && (html || c == '"') {
				return false
			}
			i++
			continue
		}
		if i+1 >= len(s) {
			return false
		}
		switch s[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
			continue
		case 'u':
		default:
			return false
		}
		if i+6 > len(s) {
			return false
		}
		switch h := s[i+2 : i+6]; {
		case h == "2028" || h == "2029":
		case h[0] == '0' && h[1] == '0':
			v := hexLower(h[2])<<4 | hexLower(h[3])
			switch {
			case v < 0 || v >= 0x80:
				return false
			case v < 0x20:
				if v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t' {
					return false
				}
			case !html || htmlSafe[v] || v == '"' || v == '\\':
				return false
			}
		default:
			return false
		}
		i += 6
	}
	return true
}

// hexLower returns the value of the lowercase hex digit c, or -1<<8 (so
// that a value built from it stays negative) for any other byte.
func hexLower(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1 << 8
}

// appendAt writes node j, its strings escaped with the table safe.
func (d *Doc) appendAt(b []byte, j uint32, safe *[utf8.RuneSelf]bool) []byte {
	nd := &d.nodes[j]
	switch nd.kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if nd.flag&flagTrue != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Number:
		return append(b, d.text(j)...)
	case String:
		if nd.flag&flagEsc != 0 {
			// A literal with escapes is often already in this form.
			if lit := d.src[nd.end:nd.rend]; literalAsWritten(lit[1:len(lit)-1], safe == &htmlSafe) {
				return append(b, lit...)
			}
		}
		return appendString(b, d.text(j), safe)
	case Array:
		b = append(b, '[')
		k := j + 1
		for i := range nd.n {
			if i > 0 {
				b = append(b, ',')
			}
			b = d.appendAt(b, k, safe)
			k = d.next(k)
		}
		return append(b, ']')
	case Object:
		return d.appendObject(b, j, safe)
	}
	return append(b, "null"...)
}

// appendObject writes object j with its members sorted by key, each key
// once (its last value): in place when they are sorted and unique, else
// through a sorted copy of the member list.
func (d *Doc) appendObject(b []byte, j uint32, safe *[utf8.RuneSelf]bool) []byte {
	nd := &d.nodes[j]
	sorted := nd.flag&flagDup == 0
	prev := ""
	k := j + 1
	for i := range nd.n {
		key := d.text(k)
		if i > 0 && key <= prev {
			sorted = false
			break
		}
		prev = key
		k = d.next(k + 1)
	}
	b = append(b, '{')
	if sorted {
		k = j + 1
		for i := range nd.n {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, d.text(k), safe)
			b = append(b, ':')
			b = d.appendAt(b, k+1, safe)
			k = d.next(k + 1)
		}
		return append(b, '}')
	}
	type member struct {
		key string
		at  uint32
	}
	var buf [16]member
	ms := buf[:0]
	k = j + 1
	for range nd.n {
		ms = append(ms, member{d.text(k), k + 1})
		k = d.next(k + 1)
	}
	// A stable sort keeps repeated keys in document order: the last of a
	// run is the value encoding/json keeps.
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, m.key, safe)
		b = append(b, ':')
		b = d.appendAt(b, m.at, safe)
	}
	return append(b, '}')
}

// ErrUnsupported is the error of AppendAny for a value json.Marshal
// refuses, wrapping its error.
var ErrUnsupported = errors.New("jsondoc: value json.Marshal refuses")

// maxAnyDepth is the nesting depth beyond which AppendAny hands a value to
// json.Marshal, which detects cycles.
const maxAnyDepth = 200

// AppendAny appends v exactly as json.Marshal writes it. The generic
// values of encoding/json (nil, bool, string, json.Number, float64, int,
// []any, map[string]any, whose keys are sorted) and Values are written
// here; anything else (json.Marshaler implementations included) through
// json.Marshal. The error, for a value json.Marshal refuses (a NaN or
// infinite float, an invalid json.Number, an unsupported type), has
// json.Marshal's text and matches both ErrUnsupported and json.Marshal's
// error with errors.Is and As; b is then returned as it was.
func AppendAny(b []byte, v any) ([]byte, error) {
	out, err := appendAny(b, v, 0)
	if err != nil {
		return b, err
	}
	return out, nil
}

func appendAny(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxAnyDepth {
		return appendMarshal(b, v)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, x), nil
	case json.Number:
		switch {
		case x == "":
			return append(b, '0'), nil // as encoding/json writes the zero Number
		case IsNumber(string(x)):
			return append(b, x...), nil
		}
		return appendMarshal(b, v) // its error
	case bool:
		return strconv.AppendBool(b, x), nil
	case Value:
		return x.AppendJSON(b), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		var buf [16]string
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendAny(b, x[k], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendAny(b, el, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return appendMarshal(b, v)
		}
		return AppendFloat(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	}
	return appendMarshal(b, v)
}

// appendMarshal appends json.Marshal(v).
func appendMarshal(b []byte, v any) ([]byte, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return b, unsupportedError{err}
	}
	return append(b, out...), nil
}

// unsupportedError is json.Marshal's error for a value AppendAny cannot
// write: its text is json.Marshal's, and it matches ErrUnsupported.
type unsupportedError struct{ err error }

func (e unsupportedError) Error() string   { return e.err.Error() }
func (e unsupportedError) Unwrap() []error { return []error{ErrUnsupported, e.err} }

// IsNumber reports whether s is exactly one JSON number literal (of any
// length).
func IsNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
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
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
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
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// AppendJSONPrefixAsWritten appends what AppendJSON appends for v, or,
// once b has at least limit bytes, as much of that as it has written by
// then (a prefix of AppendJSON's text of at least limit bytes), and
// reports true, when v is an array or object whose tokens AppendJSON
// writes as the text has them (see tokensAsWritten): each token is
// copied from the text (a string with its quotes), an array or object
// stopping before its next element or member once b has limit bytes. For
// any other value it appends nothing and reports false.
func (v Value) AppendJSONPrefixAsWritten(b []byte, limit int) ([]byte, bool) {
	if v.d == nil {
		return b, false
	}
	raw, compact, ok := v.d.tokensAsWritten(v.i, true)
	switch {
	case !ok:
		return b, false
	case compact:
		return append(b, raw[:min(len(raw), max(limit-len(b), 0))]...), true
	}
	b, _ = v.d.appendTokens(b, v.i, limit)
	return b, true
}

// appendTokens appends node j, of an array or object tokensAsWritten
// accepts, as AppendJSON writes it, each token copied from the text; an
// array or object stops before its next element or member once b has
// limit bytes. It also returns the node after j's subtree.
func (d *Doc) appendTokens(b []byte, j uint32, limit int) ([]byte, uint32) {
	nd := &d.nodes[j]
	switch nd.kind {
	case String:
		return append(b, d.src[nd.end:nd.rend]...), j + 1
	case Array, Object:
		open, end := byte('['), byte(']')
		if nd.kind == Object {
			open, end = '{', '}'
		}
		b = append(b, open)
		k := j + 1
		for e := range nd.n {
			if len(b) >= limit {
				return b, nd.end
			}
			if e > 0 {
				b = append(b, ',')
			}
			if nd.kind == Object {
				key := &d.nodes[k]
				b = append(b, d.src[key.end:key.rend]...)
				b = append(b, ':')
				k++
			}
			b, k = d.appendTokens(b, k, limit)
		}
		return append(b, end), nd.end
	}
	// A number or literal: its text.
	return append(b, d.src[nd.off:nd.off+nd.n]...), j + 1
}
