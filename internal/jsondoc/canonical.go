package jsondoc

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns the canonical form of one JSON document and the
// lowercase hex sha256 of that form. It is how the contract registry
// identifies a body: two documents that differ only in white space, key
// order or string escaping have the same canonical form.
//
// The form follows RFC 8785 (JSON Canonicalization Scheme) with one
// deliberate difference:
//   - no insignificant white space;
//   - object members sorted by their keys' UTF-16 code units (RFC 8785
//     section 3.2.3); for duplicate keys the last one wins, as in
//     encoding/json;
//   - strings escape only '"', '\\' and control characters, with the short
//     forms \b \t \n \f \r and \u00xx otherwise (RFC 8785 section
//     3.2.2.2); invalid UTF-8 reads as U+FFFD;
//   - numbers are kept exactly as written (RFC 8785 would rewrite them in
//     ECMAScript form). Contracts compare 1 and 1.0 differently in strict
//     mode and keep integers beyond 2^53 exactly (SPEC section 2), so
//     rewriting numbers could change what a contract means.
//
// Errors: the input must be exactly one valid JSON document (a
// *SyntaxError).
func Canonical(data []byte) ([]byte, string, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, "", err
	}
	b := v.AppendCanonical(make([]byte, 0, len(data)))
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// AppendCanonical appends v's canonical form (see Canonical); null for
// the zero Value.
func (v Value) AppendCanonical(b []byte) []byte {
	if v.d == nil {
		return append(b, "null"...)
	}
	return v.d.appendCanonical(b, v.i)
}

func (d *Doc) appendCanonical(b []byte, j uint32) []byte {
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
		return appendCanonicalString(b, d.text(j))
	case Array:
		b = append(b, '[')
		k := j + 1
		for i := range nd.n {
			if i > 0 {
				b = append(b, ',')
			}
			b = d.appendCanonical(b, k)
			k = d.next(k)
		}
		return append(b, ']')
	}
	type member struct {
		key string
		at  uint32
	}
	ms := make([]member, 0, nd.n)
	k := j + 1
	for range nd.n {
		ms = append(ms, member{d.text(k), k + 1})
		k = d.next(k + 1)
	}
	slices.SortStableFunc(ms, func(a, b member) int { return compareUTF16(a.key, b.key) })
	b = append(b, '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue // the last of repeated keys wins
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendCanonicalString(b, m.key)
		b = append(b, ':')
		b = d.appendCanonical(b, m.at)
	}
	return append(b, '}')
}

// compareUTF16 orders strings by their UTF-16 code units.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return slices.Compare(utf16.Encode([]rune{ra}), utf16.Encode([]rune{rb}))
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func appendCanonicalString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b = append(b, `\"`...)
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
