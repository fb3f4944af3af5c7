package jsondoc

import (
	"strings"
	"unsafe"
)

// These functions delimit values in JSON text without decoding them:
// nothing is allocated but what they return. A text they accept is one
// Parse accepts (the same grammar, MaxDepth and MaxNumberLen), so a
// caller can take a raw value they return for valid JSON; for the reason
// a text is refused, Parse it.

// SkipSpace returns the index of the first byte of s at or after i that
// is not JSON white space.
func SkipSpace(s string, i int) int {
	for i < len(s) && space[s[i]] {
		i++
	}
	return i
}

// SkipValue returns the index just after the JSON value starting at s[i]
// (no white space before it) and whether that value is valid.
func SkipValue(s string, i int) (end int, ok bool) {
	return skipValue(s, i, 0)
}

// Valid reports whether s is exactly one JSON document (white space
// around it allowed).
func Valid(s string) bool {
	i := SkipSpace(s, 0)
	end, ok := skipValue(s, i, 0)
	return ok && SkipSpace(s, end) == len(s)
}

func skipValue(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; c {
	case '"':
		return skipString(s, i)
	case '{', '[':
		return skipContainer(s, i, depth+1)
	case 't':
		return skipLiteral(s, i, "true")
	case 'f':
		return skipLiteral(s, i, "false")
	case 'n':
		return skipLiteral(s, i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return skipNumber(s, i)
		}
		return i, false
	}
}

func skipLiteral(s string, i int, lit string) (int, bool) {
	if !strings.HasPrefix(s[i:], lit) {
		return i, false
	}
	return i + len(lit), true
}

// skipNumber skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at s[i]
// of at most MaxNumberLen bytes.
func skipNumber(s string, i int) (int, bool) {
	start := i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = skipDigits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = skipDigits(s, i)
	}
	return i, i-start <= MaxNumberLen
}

func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// skipString skips the string whose opening quote is s[i]: valid escapes,
// no control character, closed. Invalid UTF-8 is valid (it reads as
// U+FFFD).
func skipString(s string, i int) (int, bool) {
	for i++; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(s) {
				return i, false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, bad := hex4(s, i+2); bad >= 0 {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

// skipContainer skips the object or array whose opening bracket is s[i],
// depth counting it.
func skipContainer(s string, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	obj := s[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if obj {
			if i >= len(s) || s[i] != '"' {
				return i, false
			}
			if i, ok = skipString(s, i); !ok {
				return i, false
			}
			i = SkipSpace(s, i)
			if i >= len(s) || s[i] != ':' {
				return i, false
			}
			i = SkipSpace(s, i+1)
		}
		if i, ok = skipValue(s, i, depth); !ok {
			return i, false
		}
		i = SkipSpace(s, i)
		if i >= len(s) {
			return i, false
		}
		switch s[i] {
		case ',':
			i = SkipSpace(s, i+1)
		case closing:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// ObjectMembers calls fn with the key (decoded) and the raw value text of
// each member of the object document s, in order, repeated keys included;
// it stops when fn returns false. It reports false when s is not exactly
// one valid JSON object (white space around it allowed) or fn stopped.
func ObjectMembers(s string, fn func(key, raw string) bool) bool {
	i := SkipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return SkipSpace(s, i+1) == len(s)
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return false
		}
		kend, ok := skipString(s, i)
		if !ok {
			return false
		}
		key := s[i+1 : kend-1]
		if strings.IndexByte(key, '\\') >= 0 || !isPlainText(key) {
			v, err := ParseString(s[i:kend])
			if err != nil {
				return false
			}
			key = v.Text()
		}
		i = SkipSpace(s, kend)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		start := SkipSpace(s, i+1)
		end, ok := skipValue(s, start, 1)
		if !ok || !fn(key, s[start:end]) {
			return false
		}
		i = SkipSpace(s, end)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = SkipSpace(s, i+1)
		case '}':
			return SkipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// ObjectMembersBytes is ObjectMembers on bytes, without copying them: raw
// is a slice of data, and key (decoded) may share data's memory, so it is
// valid only during the call to fn (copy it to keep it).
func ObjectMembersBytes(data []byte, fn func(key string, raw []byte) bool) bool {
	s := bytesString(data)
	return ObjectMembers(s, func(key, raw string) bool {
		return fn(key, data[offsetIn(s, raw):][:len(raw)])
	})
}

// offsetIn returns the offset in s of sub, a substring of s (sharing its
// memory).
func offsetIn(s, sub string) int {
	if len(sub) == 0 {
		return 0
	}
	return int(uintptr(unsafe.Pointer(unsafe.StringData(sub))) - uintptr(unsafe.Pointer(unsafe.StringData(s))))
}

// isPlainText reports whether s is ASCII text that a JSON string holds as
// it is.
func isPlainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// Lookup returns the raw text of the value of member key (its last
// occurrence) of the object document s. ok is false when s is not exactly
// one valid JSON object; found is false when it has no such member.
func Lookup(s, key string) (raw string, found, ok bool) {
	ok = ObjectMembers(s, func(k, r string) bool {
		if k == key {
			raw, found = r, true
		}
		return true
	})
	if !ok {
		return "", false, false
	}
	return raw, found, true
}

// Elements returns the raw texts of the elements of the array document s
// (white space around it allowed), and false when s is not exactly one
// valid JSON array.
func Elements(s string) ([]string, bool) {
	i := SkipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, false
	}
	i = SkipSpace(s, i+1)
	out := []string{}
	if i < len(s) && s[i] == ']' {
		return out, SkipSpace(s, i+1) == len(s)
	}
	for {
		end, ok := skipValue(s, i, 1)
		if !ok {
			return nil, false
		}
		out = append(out, s[i:end])
		i = SkipSpace(s, end)
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case ',':
			i = SkipSpace(s, i+1)
		case ']':
			if SkipSpace(s, i+1) != len(s) {
				return nil, false
			}
			return out, true
		default:
			return nil, false
		}
	}
}
