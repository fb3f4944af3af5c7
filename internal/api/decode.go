package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

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
	se := &engine.SyntaxError{Offset: off, Line: line, Column: col, Msg: msg}
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
