package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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

// readBody reads the request body up to limit bytes, as one of the
// bodies being received at once (Config.MaxBodyReaders; bodies over
// MaxBodyBytes, batches and runs, also as one of 2 × MaxBatches), within
// Config.BodyTimeout from now: a client that sends its body slowly holds a
// reader for at most that long, and nothing else (evaluation slots are
// taken after the body is read).
//
// Errors: 415 unsupported-media-type for a Content-Encoding other than
// identity; 429 queue-full when too many bodies are being received; 413
// body-too-large beyond limit; 408 body-timeout; 499 client-closed-request
// when the client went away (or the connection broke) mid-body, which the
// client never sees but the metrics count; 400 for an empty body. The
// body returned starts after a leading UTF-8 byte order mark, if any.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, enc := range strings.Split(v, ",") {
			if enc = strings.TrimSpace(enc); enc != "" && !strings.EqualFold(enc, "identity") {
				return nil, &apiError{kind: probMediaType, detail: fmt.Sprintf("Content-Encoding %s is not accepted; send the body uncompressed", enc),
					errors: []FieldProblem{{Parameter: "Content-Encoding", Message: "must be identity (or absent)"}}}
			}
		}
	}
	if r.ContentLength > limit {
		return nil, newError(probTooLarge, "the body has %d bytes; the limit is %d", r.ContentLength, limit)
	}
	readers := []chan struct{}{s.bodyReaders}
	if limit > s.cfg.MaxBodyBytes {
		readers = append(readers, s.largeReaders)
	}
	for i, ch := range readers {
		select {
		case ch <- struct{}{}:
		default:
			for _, held := range readers[:i] {
				<-held
			}
			s.metrics.poolRejected.Inc()
			return nil, &apiError{kind: probQueueFull, detail: fmt.Sprintf("%d request bodies are being received; retry later", cap(ch)),
				retryAfter: 1, cause: errQueueFull}
		}
	}
	defer func() {
		for _, ch := range readers {
			<-ch
		}
	}()
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)); err == nil {
		// The server sets the connection's deadlines again for the next
		// request; this one only bounds the rest of this body.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		// ReadFrom wants bytes.MinRead free bytes to see the end of the
		// body: without them it would copy the whole body into a buffer
		// twice as large just to read nothing.
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return nil, newError(probTooLarge, "the body exceeds the limit of %d bytes", limit)
		case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			return nil, &apiError{kind: probBodyTimeout, detail: fmt.Sprintf("the body was not received within %s", s.cfg.BodyTimeout), cause: err}
		}
		// The client closed the connection, or it broke: nobody reads the
		// answer, and the body says nothing about its JSON.
		return nil, &apiError{kind: probClientClosed, detail: "the client closed the connection while sending the body", cause: err}
	}
	// Every body read here is JSON (or JSON Lines): a leading byte order
	// mark is skipped, as the CLI skips one in files.
	data := buf.Bytes()
	data = data[jsondoc.BOMLen(data):]
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &apiError{kind: probInvalidJSON, detail: "the body is empty", syntax: &engine.SyntaxError{Line: 1, Column: 1, Msg: "empty document"}}
	}
	return data, nil
}

// limitError turns err, when it is a syntax error the JSON layer found
// inside a field of a request that is otherwise valid JSON, into a 422 of
// kind k at the field's pointer (base) plus the error's: such an error is
// one of the layer's limits (a numeric literal longer than
// jsondoc.MaxNumberLen bytes, nesting deeper than jsondoc.MaxDepth), which
// encoding/json does not have. Any other error is returned unchanged.
func limitError(k problemKind, base string, err error) error {
	var se *engine.SyntaxError
	var ae *apiError
	if errors.As(err, &ae) || !errors.As(err, &se) {
		return err
	}
	ptr := base + se.Pointer
	return &apiError{kind: k, detail: ptrOrRoot(ptr) + ": " + se.Msg, errors: []FieldProblem{{Pointer: ptr, Message: se.Msg}}, cause: err}
}

// withinLimits reports whether data, which the JSON layer refused with
// err, is valid JSON: then err is one of the layer's limits (a numeric
// literal longer than jsondoc.MaxNumberLen bytes, nesting deeper than
// jsondoc.MaxDepth), a 422 at its pointer, not a 400. encoding/json
// checks the grammar, but json.Valid also refuses nesting deeper than
// its own cap of 10,000; for a depth error past that cap the document is
// read token by token, which has no cap.
func withinLimits(data []byte, err error) bool {
	if json.Valid(data) {
		return true
	}
	var se *jsondoc.SyntaxError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Msg, "exceeded max depth") {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for depth := 0; ; {
		tok, terr := dec.Token()
		if terr != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
				continue
			}
			depth--
		}
		if depth == 0 {
			// The one top-level value is complete: only white space may follow.
			_, terr = dec.Token()
			return terr == io.EOF
		}
	}
}

// decodeStrict decodes one JSON document into v, refusing unknown fields,
// trailing data and, in a body (base ""), a member its top-level object
// gives twice (topRepeats: encoding/json would keep the last). base is
// the document's JSON pointer inside the request ("" for the body
// itself).
//
// Errors: 400 invalid-json (with offset, line and column) for bad syntax;
// 422 invalid-request with a pointer for a wrong type, an unknown field
// or a repeated member (repeatedMembersError).
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
		if base == "" {
			if rms := topRepeats(data); len(rms) > 0 {
				return repeatedMembersError(string(data), rms)
			}
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
		if lit, ok := strings.CutPrefix(te.Value, "number "); ok {
			switch k := te.Type.Kind(); {
			case k == reflect.Float64 || k == reflect.Float32:
				msg = outOfRange(lit)
			case k >= reflect.Int && k <= reflect.Uint64:
				msg = integerProblem(lit, te.Type)
			}
		}
		return &apiError{kind: probInvalidRequest, detail: ptrOrRoot(ptr) + ": " + msg, errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		ptr := base + "/" + escapePointer(name)
		return &apiError{kind: probInvalidRequest, detail: fmt.Sprintf("unknown field %q", name),
			errors: []FieldProblem{{Pointer: ptr, Message: "unknown field"}}}
	}
	return &apiError{kind: probInvalidRequest, detail: err.Error(), errors: []FieldProblem{{Pointer: base, Message: err.Error()}}}
}

// outOfRange is the message for a numeric literal lit, where a number is
// read, that is outside float64's range (1e400): valid JSON, but not a
// finite number.
func outOfRange(lit string) string {
	return "must be a finite number, got " + lit + " (out of float64's range)"
}

// integerProblem is the message for a numeric literal lit that
// encoding/json would not read into the integer type t: "must be an
// integer, got number 1.5" for a literal with a fraction or an exponent,
// "must be an integer from -9223372036854775808 to 9223372036854775807,
// got number 99999999999999999999" (t's range) for a whole number beyond t.
func integerProblem(lit string, t reflect.Type) string {
	if strings.ContainsAny(lit, ".eE") {
		return "must be an integer, got number " + lit
	}
	bits := t.Bits()
	lo, hi := "0", strconv.FormatUint(1<<bits-1, 10)
	if t.Kind() <= reflect.Int64 {
		lo, hi = strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
	}
	return "must be an integer from " + lo + " to " + hi + ", got number " + lit
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
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "map", k == "struct":
		return "an object"
	case k == "slice", k == "array":
		return "an array"
	}
	return k
}

// syntaxError locates a syntax error encoding/json found at byte offset
// off of data, with the JSON pointer of the value being read there as
// jsondoc's parser names it. When that parser stops elsewhere (at one of
// its limits, before off) the pointer is not known and left out.
func syntaxError(data []byte, off int64, msg string) error {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := jsondoc.LineCol(string(data), int(off))
	se := &engine.SyntaxError{Offset: int(off), Line: line, Column: col, Msg: msg}
	var jse *jsondoc.SyntaxError
	_, err := jsondoc.Parse(data) // only on this error path
	known := errors.As(err, &jse) && jse.Offset == se.Offset
	if known {
		se.Pointer = jse.Pointer
	}
	return &apiError{kind: probInvalidJSON, detail: syntaxDetail(se), syntax: se, noPointer: !known}
}

// syntaxDetail is the detail of a 400 invalid-json: "line L:C (byte N):
// msg", then " (at /pointer)" when the error is inside the top-level
// value (a long pointer shortened as jsondoc.ShortPointer does; the
// problem's pointer member holds it whole).
func syntaxDetail(se *engine.SyntaxError) string {
	d := fmt.Sprintf("line %d:%d (byte %d): %s", se.Line, se.Column, se.Offset, se.Msg)
	if se.Pointer != "" {
		d += " (at " + jsondoc.ShortPointer(se.Pointer) + ")"
	}
	return d
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
