package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine"
)

// Media types the API reads.
const (
	mediaJSON   = "application/json"
	mediaNDJSON = "application/x-ndjson"
)

// mediaType checks the request's Content-Type against the accepted ones
// (a +json suffix counts as JSON) and returns the matched one.
//
// Errors: 415 unsupported-media-type.
func mediaType(r *http.Request, accepted ...string) (string, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil {
		if strings.HasSuffix(mt, "+json") {
			mt = mediaJSON
		}
		for _, a := range accepted {
			if mt == a {
				return mt, nil
			}
		}
	}
	if ct == "" {
		ct = "none"
	}
	return "", &apiError{kind: probMediaType, detail: fmt.Sprintf("Content-Type %s is not accepted; send %s", ct, strings.Join(accepted, " or ")),
		errors: []FieldProblem{{Parameter: "Content-Type", Message: "must be " + strings.Join(accepted, " or ")}}}
}

// readBody reads the request body up to limit bytes.
//
// Errors: 413 body-too-large beyond limit; 400 for an empty body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, newError(probTooLarge, "the body has %d bytes; the limit is %d", r.ContentLength, limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(probTooLarge, "the body exceeds the limit of %d bytes", limit)
		}
		return nil, newError(probInvalidJSON, "reading the body: %v", err)
	}
	if len(bytes.TrimSpace(buf.Bytes())) == 0 {
		return nil, &apiError{kind: probInvalidJSON, detail: "the body is empty", syntax: &engine.SyntaxError{Line: 1, Column: 1, Msg: "empty document"}}
	}
	return buf.Bytes(), nil
}

// decodeStrict decodes one JSON document into v, refusing unknown fields
// and trailing data. base is the document's JSON pointer inside the
// request ("" for the body itself).
//
// Errors: 400 invalid-json (with offset, line and column) for bad syntax;
// 422 invalid-request with a pointer for a wrong type or unknown field.
func decodeStrict(data []byte, v any, base string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		end := dec.InputOffset()
		if _, terr := dec.Token(); terr != io.EOF {
			for end < int64(len(data)) && strings.IndexByte(" \t\r\n", data[end]) >= 0 {
				end++
			}
			return syntaxError(data, end, "unexpected data after the JSON document")
		}
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := se.Offset
		if off > 0 {
			off--
		}
		return syntaxError(data, off, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return syntaxError(data, int64(len(data)), "unexpected end of JSON input")
	case errors.As(err, &te):
		ptr := base + "/" + strings.ReplaceAll(te.Field, ".", "/")
		if te.Field == "" {
			ptr = base
		}
		if p, ok := pointerAt(data, te.Offset); ok {
			ptr = base + p // with map keys and array indexes, which Field lacks
		}
		msg := fmt.Sprintf("must be %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)
		return &apiError{kind: probInvalidRequest, detail: ptrOrRoot(ptr) + ": " + msg, errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		ptr := base + "/" + escapePointer(name)
		return &apiError{kind: probInvalidRequest, detail: fmt.Sprintf("unknown field %q", name),
			errors: []FieldProblem{{Pointer: ptr, Message: "unknown field"}}}
	}
	return &apiError{kind: probInvalidRequest, detail: err.Error(), errors: []FieldProblem{{Pointer: base, Message: err.Error()}}}
}

func ptrOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "map", k == "struct":
		return "an object"
	case k == "slice", k == "array":
		return "an array"
	}
	return k
}

// syntaxError locates a syntax error at byte offset off.
func syntaxError(data []byte, off int64, msg string) error {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	se := &engine.SyntaxError{Offset: int(off), Line: line, Column: col, Msg: msg}
	return &apiError{kind: probInvalidJSON, detail: fmt.Sprintf("line %d:%d (byte %d): %s", line, col, off, msg), syntax: se}
}

// escapePointer escapes one JSON pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// hasNUL reports whether JSON text holds a \u0000 escape (a NUL character
// in a string), which Postgres text and jsonb cannot store.
func hasNUL(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u0000`))
		if i < 0 {
			return false
		}
		// The escape is real when preceded by an even number of backslashes.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		b = b[i+6:]
	}
}

// textProblem returns why s cannot be stored as Postgres text (a NUL
// character or bytes that are not UTF-8), or "" when it can.
func textProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "must not contain a NUL character (\\u0000)"
	}
	return ""
}

// nulPointer returns the JSON pointer of the first string value or object
// key (keys in sorted order) of the JSON document data that holds a NUL
// character, and false when none does or data is not JSON. Call it only
// when hasNUL(data) is true: it decodes the whole document.
func nulPointer(data []byte) (string, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "", false
	}
	var walk func(ptr string, v any) (string, bool)
	walk = func(ptr string, v any) (string, bool) {
		switch v := v.(type) {
		case string:
			return ptr, strings.IndexByte(v, 0) >= 0
		case []any:
			for i, e := range v {
				if p, ok := walk(ptr+"/"+strconv.Itoa(i), e); ok {
					return p, true
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := ptr + "/" + escapePointer(k)
				if strings.IndexByte(k, 0) >= 0 {
					return p, true
				}
				if p, ok := walk(p, v[k]); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return walk("", v)
}

// nulProblem returns the problem of a JSON document (at pointer base of
// the body) that holds a NUL character, which Postgres cannot store, and
// false when it holds none.
func nulProblem(base string, data []byte) (FieldProblem, bool) {
	if !hasNUL(data) {
		return FieldProblem{}, false
	}
	ptr, _ := nulPointer(data)
	return FieldProblem{Pointer: base + ptr, Message: "must not contain a NUL character (\\u0000)"}, true
}

// nulError is the 422 invalid-request of nulProblem, or nil.
func nulError(base string, data []byte) error {
	fp, ok := nulProblem(base, data)
	if !ok {
		return nil
	}
	return &apiError{kind: probInvalidRequest, detail: ptrOrRoot(fp.Pointer) + ": " + fp.Message, errors: []FieldProblem{fp}}
}

// pointerAt returns the JSON pointer of the value of the JSON document
// data that ends at or after byte offset off (the Offset of a
// json.UnmarshalTypeError), and false when there is none.
func pointerAt(data []byte, off int64) (string, bool) {
	type frame struct {
		obj     bool
		key     string
		idx     int
		wantKey bool
	}
	advance := func(f *frame) {
		if f.obj {
			f.wantKey = true
		} else {
			f.idx++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		d, isDelim := tok.(json.Delim)
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if isDelim && (d == '}' || d == ']') {
				stack = stack[:n-1]
				if len(stack) > 0 {
					advance(&stack[len(stack)-1])
				}
				continue
			}
			if top.obj && top.wantKey {
				top.key, top.wantKey = tok.(string), false
				continue
			}
		}
		if dec.InputOffset() >= off {
			var b strings.Builder
			for _, f := range stack {
				b.WriteByte('/')
				if f.obj {
					b.WriteString(escapePointer(f.key))
				} else {
					b.WriteString(strconv.Itoa(f.idx))
				}
			}
			return b.String(), true
		}
		if isDelim {
			stack = append(stack, frame{obj: d == '{', wantKey: d == '{'})
			continue
		}
		if len(stack) > 0 {
			advance(&stack[len(stack)-1])
		}
	}
}
