package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
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
//     forms \b \t \n \f \r and \u00xx otherwise (RFC 8785 section 3.2.2.2);
//   - numbers are kept exactly as written (RFC 8785 would rewrite them in
//     ECMAScript form). Contracts compare 1 and 1.0 differently in strict
//     mode and keep integers beyond 2^53 exactly (SPEC section 2), so
//     rewriting numbers could change what a contract means.
//
// Errors: the input must be exactly one valid JSON document.
func Canonical(data []byte) ([]byte, string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", fmt.Errorf("canonical json: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", errors.New("canonical json: unexpected data after the document")
	}
	var b bytes.Buffer
	b.Grow(len(data))
	writeCanonical(&b, v)
	sum := sha256.Sum256(b.Bytes())
	return b.Bytes(), hex.EncodeToString(sum[:]), nil
}

func writeCanonical(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(string(v))
	case string:
		writeCanonicalString(b, v)
	case []any:
		b.WriteByte('[')
		for i, el := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, el)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, k)
			b.WriteByte(':')
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	}
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

func writeCanonicalString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
