package format

import (
	"errors"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
)

// Form is how a trace document is written.
type Form string

// The forms a trace document may take.
const (
	// FormJSON is one JSON value.
	FormJSON Form = "json"
	// FormJSONLines is several JSON values separated by white space: JSON
	// Lines, or concatenated or pretty-printed records.
	FormJSONLines Form = "jsonl"
	// FormSSE is Server-Sent Events text whose data fields hold JSON
	// values; comments, other fields and "[DONE]" are skipped.
	FormSSE Form = "sse"
)

// Input is a trace document decoded once, handed to every Adapter.
//
// Value holds numbers as json.Number, objects as map[string]any and arrays
// as []any. For FormJSON it is the document's value; for FormJSONLines and
// FormSSE it is the []any of the records in order. Strings in Value may
// share memory with the document.
type Input struct {
	// Value is the decoded document; see the type comment.
	Value any
	// Form is how the document was written.
	Form Form

	src    string
	starts []int // byte offset of each record (FormJSONLines, FormSSE)
}

// Records returns the document as a list: the records of a JSON Lines or
// SSE document, the elements of a JSON array, or a lone value by itself.
func (in *Input) Records() []any {
	if a, ok := in.Value.([]any); ok {
		return a
	}
	return []any{in.Value}
}

// recordLine is the 1-based line on which record i starts, or 0 when the
// document is a single JSON value.
func (in *Input) recordLine(i int) int {
	if in.Form == FormJSON || i < 0 || i >= len(in.starts) {
		return 0
	}
	line, _ := jsonvalue.LineCol(in.src, in.starts[i])
	return line
}

// readInput decodes data as JSON, JSON Lines or SSE (see Form).
func readInput(data []byte) (*Input, error) {
	s := string(data)
	d := &jsonvalue.Decoder{}
	d.Reset(s, 0)
	if strings.HasPrefix(s, "\uFEFF") {
		d.Reset(s, len("\uFEFF"))
	}
	if d.AtEnd() {
		return nil, &engine.SyntaxError{Line: 1, Column: 1, Msg: "empty document"}
	}
	switch pos := d.Pos(); s[pos] {
	case '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return readJSON(s, d)
	case 'd', 'e', 'i', 'r', ':':
		if isSSEStart(s[pos:]) {
			return readSSE(s, pos)
		}
	}
	return nil, syntaxError(s, &jsonvalue.SyntaxError{Offset: d.Pos(), Msg: "invalid character " + jsonvalue.QuoteChar(s[d.Pos()]) + " looking for beginning of value"})
}

// readJSON reads the JSON values of s from d's position: one value, or
// several (JSON Lines).
func readJSON(s string, d *jsonvalue.Decoder) (*Input, error) {
	first := d.Pos()
	v, err := d.Value()
	if err != nil {
		return nil, syntaxError(s, err)
	}
	if d.AtEnd() {
		return &Input{Value: v, Form: FormJSON, src: s}, nil
	}
	recs := []any{v}
	starts := []int{first}
	for !d.AtEnd() {
		starts = append(starts, d.Pos())
		v, err := d.Value()
		if err != nil {
			return nil, syntaxError(s, err)
		}
		recs = append(recs, v)
	}
	return &Input{Value: recs, Form: FormJSONLines, src: s, starts: starts}, nil
}

// isSSEStart reports whether s begins with an SSE field or comment line.
func isSSEStart(s string) bool {
	if s[0] == ':' {
		return true
	}
	for _, f := range [...]string{"data", "event", "id", "retry"} {
		if rest, ok := strings.CutPrefix(s, f); ok && (rest == "" || rest[0] == ':' || rest[0] == '\n' || rest[0] == '\r') {
			return true
		}
	}
	return false
}

// sseData is one data line of an event: its value's offset in the document
// and its text.
type sseData struct {
	off  int
	text string
}

// readSSE parses Server-Sent Events text (WHATWG HTML, "Parsing an event
// stream") from offset pos. Each event's data, its data lines joined with
// "\n", is decoded as one or more JSON values; "[DONE]" and empty data are
// skipped.
func readSSE(s string, pos int) (*Input, error) {
	in := &Input{Form: FormSSE, src: s}
	d := &jsonvalue.Decoder{} // shared by the events, with its stacks
	var recs []any
	var data []sseData
	dispatch := func() error {
		defer func() { data = data[:0] }()
		if len(data) == 0 {
			return nil
		}
		if len(data) == 1 {
			t := strings.TrimSpace(data[0].text)
			if t == "" || t == "[DONE]" {
				return nil
			}
			// Decode in place so errors carry the document's line:column.
			end := data[0].off + len(data[0].text)
			d.Reset(s[:end], data[0].off)
			for !d.AtEnd() {
				in.starts = append(in.starts, d.Pos())
				v, err := d.Value()
				if err != nil {
					return syntaxError(s, err)
				}
				recs = append(recs, v)
			}
			return nil
		}
		var b strings.Builder
		for i, dl := range data {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(dl.text)
		}
		joined := b.String()
		if t := strings.TrimSpace(joined); t == "" || t == "[DONE]" {
			return nil
		}
		d.Reset(joined, 0)
		for !d.AtEnd() {
			in.starts = append(in.starts, data[0].off)
			v, err := d.Value()
			if err != nil {
				var je *jsonvalue.SyntaxError
				if errors.As(err, &je) {
					je.Offset = mapJoinedOffset(data, je.Offset)
				}
				return syntaxError(s, err)
			}
			recs = append(recs, v)
		}
		return nil
	}
	for pos < len(s) {
		end := pos
		for end < len(s) && s[end] != '\n' && s[end] != '\r' {
			end++
		}
		line := s[pos:end]
		next := end
		if next < len(s) {
			if s[next] == '\r' && next+1 < len(s) && s[next+1] == '\n' {
				next += 2
			} else {
				next++
			}
		}
		switch {
		case line == "":
			if err := dispatch(); err != nil {
				return nil, err
			}
		case line[0] == ':':
			// Comment.
		default:
			field, value, found := strings.Cut(line, ":")
			off := pos + len(field)
			if found {
				off++
				if strings.HasPrefix(value, " ") {
					value = value[1:]
					off++
				}
			}
			if field == "data" {
				data = append(data, sseData{off: off, text: value})
			}
		}
		pos = next
	}
	if err := dispatch(); err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []any{}
	}
	in.Value = recs
	return in, nil
}

// mapJoinedOffset maps an offset in the joined data of an event back to
// the document.
func mapJoinedOffset(data []sseData, off int) int {
	for _, dl := range data {
		if off <= len(dl.text) {
			return dl.off + off
		}
		off -= len(dl.text) + 1
	}
	last := data[len(data)-1]
	return last.off + len(last.text)
}

// syntaxError turns a decoder error into an *engine.SyntaxError located in
// the document s.
func syntaxError(s string, err error) error {
	var je *jsonvalue.SyntaxError
	if !errors.As(err, &je) {
		return err
	}
	line, col := jsonvalue.LineCol(s, je.Offset)
	return &engine.SyntaxError{Offset: int64(je.Offset), Line: line, Column: col, Msg: je.Msg}
}
