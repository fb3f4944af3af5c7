package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// A request body's top-level object must not give a member twice: every
// reader of one (readRequest's, encoding/json's) keeps the last, so a
// second "trace" or "contract" would silently replace the first. The
// values inside the members are not checked here: a contract, a gold
// list's own keys and forbidden rules refuse repeated keys themselves
// (the engine), and a trace, labels and the like read the last one, as
// Python's json does.

// repeatedRule ends the message of a repeated member.
const repeatedRule = "a request must not repeat a member"

// repeatedMember is a member that a request's top-level object gives
// again.
type repeatedMember struct {
	// key is this occurrence's key; firstKey the first occurrence's,
	// which differs from key only in case (encoding/json matches member
	// names to fields without regard to case).
	key, firstKey string
	// at and first are the byte offsets, in the request's text, of this
	// occurrence's and the first occurrence's opening quote.
	at, first int
}

// repeatedMembersError is the 422 invalid-request for the members rms of
// the request text src: one problem at each later occurrence's pointer,
// naming the key and the line:column of it and of its first occurrence
// (`repeated key "trace" at line 3:3 (first at line 2:3): a request must
// not repeat a member`); the detail is the first problem, with the
// number of the others.
func repeatedMembersError(src string, rms []repeatedMember) error {
	errs := make([]FieldProblem, len(rms))
	for i, rm := range rms {
		line, col := jsondoc.LineCol(src, rm.at)
		fline, fcol := jsondoc.LineCol(src, rm.first)
		as := ""
		if rm.firstKey != rm.key {
			as = fmt.Sprintf(" as %q", rm.firstKey)
		}
		errs[i] = FieldProblem{Pointer: "/" + escapePointer(rm.key),
			Message: fmt.Sprintf("repeated key %q at line %d:%d (first at line %d:%d%s): %s", rm.key, line, col, fline, fcol, as, repeatedRule)}
	}
	detail := errs[0].Pointer + ": " + errs[0].Message
	if n := len(errs) - 1; n == 1 {
		detail += "; and 1 more repeated member"
	} else if n > 1 {
		detail += fmt.Sprintf("; and %d more repeated members", n)
	}
	return &apiError{kind: probInvalidRequest, detail: detail, errors: errs}
}

// repeatedMembers is the error for the members the request object v
// gives again (v.RepeatsKey), its keys compared exactly, as readRequest
// reads them.
func repeatedMembers(v jsondoc.Value) error {
	rks := v.AppendRepeatedMembers(nil)
	rms := make([]repeatedMember, len(rks))
	for i, rk := range rks {
		rms[i] = repeatedMember{key: rk.Key, firstKey: rk.Key, at: rk.Offset, first: rk.First}
	}
	return repeatedMembersError(v.Doc().Source(), rms)
}

// topRepeats returns the members that the top-level object of data, a
// valid JSON document, gives again, their keys compared as encoding/json
// matches names to a struct's fields: without regard to case (foldKey).
// It is nil when data is not an object or repeats no member. It
// reads data once, skipping each member's value.
func topRepeats(data []byte) []repeatedMember {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	var seen map[string]int // folded key -> offset of its first quote
	var out []repeatedMember
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := stringEnd(data, i)
		key := unquoteKey(data[i:end])
		if seen == nil {
			seen = make(map[string]int, 8)
		}
		folded := foldKey(key)
		if at, ok := seen[folded]; ok {
			out = append(out, repeatedMember{key: key, firstKey: unquoteKey(data[at:stringEnd(data, at)]), at: i, first: at})
		} else {
			seen[folded] = i
		}
		i = skipSpace(data, end) // at the colon
		i = skipValue(data, skipSpace(data, i+1))
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return out
}

// foldKey is a key's case-folded form, the key itself when it holds no
// upper-case ASCII letter and no byte >= 0x80, else its upper case's
// lower case (which is one for the keys strings.EqualFold calls equal,
// the Kelvin sign and k, ſ and s among them).
func foldKey(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return strings.ToLower(strings.ToUpper(s))
		}
	}
	return s
}

// skipSpace returns the offset of the first byte at or after i that is
// not JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string whose opening quote
// is at i.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); {
		k := bytes.IndexAny(data[j:], `"\`)
		if k < 0 {
			break
		}
		j += k
		if data[j] == '\\' {
			j += 2
			continue
		}
		return j + 1
	}
	return len(data)
}

// skipValue returns the offset just past the value that starts at i.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']' {
		i++
	}
	return i
}

// unquoteKey returns the text of the JSON string q (its quotes included).
func unquoteKey(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	_ = json.Unmarshal(q, &s) // valid JSON: the document decoded
	return s
}
