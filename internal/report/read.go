package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// SavedError is a value of a saved-results file that is not a saved
// result, or a file that holds none: File names the file; Line and Column
// (1-based, columns counting bytes; 0 for the file as a whole) place the
// value or the part of it that is wrong, Pointer (RFC 6901, "" for the
// value itself) is that part inside the result, and Msg says what is
// wrong.
type SavedError struct {
	File         string
	Line, Column int
	Pointer      string
	Msg          string
}

// Error formats the error as "FILE: line L:C: /pointer: msg" (without
// the pointer for the value itself, without the place for the whole
// file).
func (e *SavedError) Error() string { return e.File + ": " + e.Reason() }

// Reason is Error without the file's name: "line L:C: /pointer: msg".
func (e *SavedError) Reason() string {
	if e.Line == 0 {
		return e.Msg
	}
	s := "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": "
	if e.Pointer != "" {
		s += jsondoc.ShortPointer(e.Pointer) + ": "
	}
	return s + e.Msg
}

// SavedValue is one JSON value of a saved-results file, as
// ReadSavedValues met it.
type SavedValue struct {
	// File names the file; Line and Column are where the value starts
	// in it.
	File         string
	Line, Column int
	// Value is the value, the root of a document of its own text; the
	// zero Value when Err is a syntax error.
	Value jsondoc.Value
	// Header is the value's header, its format_version checked (1 when
	// it has none); set when Err is nil.
	Header Header
	// Err is why the value is not a saved result (a *SavedError). The
	// reader goes on past such a value only in a file of one value per
	// line (JSON Lines); elsewhere it is the reader's error.
	Err error
	// col0 is the column of the file at which Value's text starts (on
	// line Line).
	col0 int
}

// Errorf returns a *SavedError placed at at, a value inside v.Value
// (the zero Value for v itself), with at's pointer when ptr is set.
func (v *SavedValue) Errorf(at jsondoc.Value, ptr bool, format string, args ...any) *SavedError {
	e := &SavedError{File: v.File, Line: v.Line, Column: v.Column, Msg: fmt.Sprintf(format, args...)}
	if !at.Exists() {
		return e
	}
	line, col := jsondoc.LineCol(at.Doc().Source(), at.Offset())
	if line == 1 {
		col += v.col0 - 1
	}
	e.Line, e.Column = v.Line+line-1, col
	if ptr {
		e.Pointer = at.Pointer()
	}
	return e
}

// Decode decodes the value into out (as json.Unmarshal does). A member
// of another type than out's field is a *SavedError placed at the
// member, with its pointer: "/score: must be a number, got string".
func (v *SavedValue) Decode(out any) error {
	raw := v.Value.Raw()
	err := json.Unmarshal([]byte(raw), out)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return v.Errorf(jsondoc.Value{}, false, "not a saved result: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	at, msg := jsondoc.TypeError(v.Value, v.Value.Offset(), te)
	return v.Errorf(at, true, "%s", msg)
}

// savedKinds are the kinds of a saved result's members (null is always
// allowed, as encoding/json reads it): what ReadSavedValues checks of
// every value, so that a reader's struct decodes them.
var savedKinds = map[string]jsondoc.Kind{
	"expectation_sha256": jsondoc.String,
	"source":             jsondoc.String,
	"error":              jsondoc.String,
	"score":              jsondoc.Number,
	"grade":              jsondoc.String,
	"passed":             jsondoc.Bool,
	"safety_gate":        jsondoc.Bool,
	"trace_calls":        jsondoc.Array,
	"expected_calls":     jsondoc.Array,
	"final_answer":       jsondoc.String,
	"issues":             jsondoc.Array,
	"checks":             jsondoc.Object,
	"metrics":            jsondoc.Object,
	"options":            jsondoc.Object,
}

// kindName is a kind with its article: "a number", "an array".
func kindName(k jsondoc.Kind) string {
	switch k {
	case jsondoc.Array, jsondoc.Object:
		return "an " + k.String()
	case jsondoc.Bool:
		return "true or false"
	}
	return "a " + k.String()
}

// traceKeys are members of the trace formats' top-level objects (a
// message, a chunk, an event, a run, a JSON-RPC message) that no saved
// result has.
var traceKeys = []string{
	"messages", "role", "content", "parts", "tool_calls", "tool_input", "function_call", "choices",
	"candidates", "contents", "modelVersion", "sdkHttpResponse", "events", "steps", "type", "kind",
	"resourceSpans", "input", "output", "run_type", "post", "patch", "jsonrpc", "method", "message",
	"direction", "agent",
}

// looksLikeTrace reports whether v, the first value of a file, is a
// trace rather than saved results: an object without a saved result's
// members and with a trace's, or an array whose first element is one.
func looksLikeTrace(v jsondoc.Value) bool {
	if v.Kind() == jsondoc.Array {
		v = v.Index(0)
	}
	if v.Kind() != jsondoc.Object {
		return false
	}
	for _, k := range []string{"format_version", "score", "trace_calls", "error", "source"} {
		if v.Get(k).Exists() {
			return false
		}
	}
	for _, k := range traceKeys {
		if v.Get(k).Exists() {
			return true
		}
	}
	return false
}

// traceError is the error for a file whose first value is a trace.
func (v *SavedValue) traceError() *SavedError {
	return v.Errorf(jsondoc.Value{}, false, "a trace, not a saved result: grade it with toolscore eval --json, whose output this reads")
}

// check checks the value as a saved result: an object (not an array or
// a harness report), of a format_version this toolscore reads, whose
// members have their kinds (savedKinds). It sets v.Header and returns a
// *SavedError.
func (v *SavedValue) check() error {
	root := v.Value
	switch root.Kind() {
	case jsondoc.Object:
	case jsondoc.Array:
		return v.Errorf(jsondoc.Value{}, false, "a JSON array, not a saved result: write the results one per line, as toolscore eval --json does")
	default:
		return v.Errorf(jsondoc.Value{}, false, "not a saved result: a JSON %s, want an object", root.Kind())
	}
	h := Header{FormatVersion: 1}
	if fv := root.Get("format_version"); fv.Exists() {
		n, ok := fv.Num()
		ver, err := strconv.Atoi(n)
		if !ok || err != nil || ver < 1 {
			return v.Errorf(fv, false, "format_version %s is not a version number", fv.Raw())
		}
		if ver > FormatVersion {
			return v.Errorf(fv, false, "format_version %d was written by a newer toolscore (this one reads up to %d): upgrade toolscore", ver, FormatVersion)
		}
		h.FormatVersion = ver
	}
	if root.Get("suite").Exists() && root.Get("tasks").Exists() {
		return v.Errorf(jsondoc.Value{}, false, "is a harness report, not an eval result (use it with toolscore harness --baseline)")
	}
	for k, m := range root.Members() {
		want, ok := savedKinds[k]
		if !ok || m.Kind() == want || m.IsNull() {
			continue
		}
		return v.Errorf(m, true, "must be %s, got %s", kindName(want), m.Kind())
	}
	h.ExpectationSHA256 = root.Get("expectation_sha256").Text()
	h.Source = root.Get("source").Text()
	h.Error = root.Get("error").Text()
	v.Header = h
	return nil
}

// ReadSavedValues reads the saved results of r, the file name, and calls
// fn with each value in order: `toolscore eval --json` output in any
// layout, one indented document, one result per line (JSON Lines), or
// documents one after another. Each value is checked (an object, not a
// trace or a harness report, of a format_version this toolscore reads,
// its members of their kinds: see SavedValue.Header and Err) and its
// errors are *SavedError placing it in the file by line, column and
// pointer.
//
// A file whose first line holds one whole JSON value is JSON Lines: it
// is read line by line, and a line that is not a saved result is handed
// to fn with its Err, the others still read. Otherwise the file is read
// whole and its first error is ReadSavedValues's. A first value that is
// a trace (see looksLikeTrace) is an error at once, as is an empty file.
// fn's error stops the reading and is returned.
func ReadSavedValues(r io.Reader, name string, fn func(*SavedValue) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	n, first := 0, ""
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return &SavedError{File: name, Msg: err.Error()}
		}
		if strings.TrimSpace(line) != "" {
			n++
			first = line
			break
		}
		n++
		if err != nil {
			return &SavedError{File: name, Msg: "file is empty"}
		}
	}
	if isLine(first) {
		return readLines(br, name, n, first, fn)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return &SavedError{File: name, Msg: err.Error()}
	}
	return readDocs(name, n, first+string(rest), fn)
}

// isLine reports whether line holds one whole JSON value and white space.
func isLine(line string) bool {
	i := jsondoc.SkipSpace(line, 0)
	end, ok := jsondoc.SkipValue(line, i)
	return ok && jsondoc.SkipSpace(line, end) == len(line)
}

// readLines reads a JSON Lines file whose line n (first) is its first
// value, the rest from br.
func readLines(br *bufio.Reader, name string, n int, line string, fn func(*SavedValue) error) error {
	for seen := 0; ; {
		if strings.TrimSpace(line) != "" {
			text := strings.TrimRight(line, "\r\n")
			v := &SavedValue{File: name, Line: n, Column: jsondoc.SkipSpace(text, 0) + 1, col0: 1}
			val, err := jsondoc.ParseString(text)
			var se *jsondoc.SyntaxError
			switch {
			case errors.As(err, &se):
				v.Err = &SavedError{File: name, Line: n, Column: se.Column, Pointer: se.Pointer, Msg: se.Msg}
			case err != nil:
				v.Err = &SavedError{File: name, Line: n, Column: 1, Msg: err.Error()}
			default:
				v.Value = val
				if seen == 0 && looksLikeTrace(val) {
					return v.traceError()
				}
				if err := v.check(); err != nil {
					v.Err = err
				}
			}
			seen++
			if err := fn(v); err != nil {
				return err
			}
		}
		var err error
		line, err = br.ReadString('\n')
		n++
		if line == "" && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return &SavedError{File: name, Msg: err.Error()}
		}
	}
}

// readDocs reads text, a file's values from its line n on, whole: its
// first error ends the reading.
func readDocs(name string, n int, text string, fn func(*SavedValue) error) error {
	seq, err := jsondoc.ParseSeq(text)
	if err != nil {
		var se *jsondoc.SyntaxError
		if !errors.As(err, &se) {
			return &SavedError{File: name, Msg: err.Error()}
		}
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "data:") || strings.HasPrefix(t, "event:") || strings.HasPrefix(t, ":") {
			return &SavedError{File: name, Line: n, Column: 1, Msg: "a trace (an event stream), not a saved result: grade it with toolscore eval --json, whose output this reads"}
		}
		// The pointer's first token is the value's place in the sequence,
		// which the line says better: keep the pointer inside the value.
		ptr := ""
		if _, in, ok := strings.Cut(strings.TrimPrefix(se.Pointer, "/"), "/"); ok {
			ptr = "/" + in
		}
		return &SavedError{File: name, Line: n - 1 + se.Line, Column: se.Column, Pointer: ptr, Msg: se.Msg}
	}
	i := 0
	for _, el := range seq.Elems() {
		line, col := jsondoc.LineCol(text, el.Offset())
		v := &SavedValue{File: name, Line: n - 1 + line, Column: col, col0: col}
		// Each value is a document of its own, for pointers inside it.
		if v.Value, err = jsondoc.ParseString(el.Raw()); err != nil {
			return &SavedError{File: name, Line: v.Line, Column: col, Msg: err.Error()}
		}
		if i == 0 && looksLikeTrace(v.Value) {
			return v.traceError()
		}
		if err := v.check(); err != nil {
			return err
		}
		i++
		if err := fn(v); err != nil {
			return err
		}
	}
	if i == 0 {
		return &SavedError{File: name, Msg: "file is empty"}
	}
	return nil
}
