package format

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
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

// Input is a trace document read once, handed to every Adapter. Its
// values are jsondoc.Values over the document's text: adapters navigate
// them (Get, Elems, Members, Str, Num, ...) and never build maps.
type Input struct {
	// Form is how the document was written.
	Form Form

	value jsondoc.Value   // see Value
	recs  []jsondoc.Value // see Records
	src   string          // the document's text
	// base maps offsets in the text that was read to the document's
	// text: the length of a skipped byte order mark, or for SSE the
	// place of each data line (sse).
	base int
	sse  []sseData
	// sub reports that value is a value inside a larger document
	// (ParseValue): pointers in errors are made relative to it.
	sub bool
	// scratch is the builder the first Parse of the document gets
	// (newBuilder), when a Reader read it; nil otherwise.
	scratch *builder
}

// Value returns the document: for FormJSON its value; for FormJSONLines
// and FormSSE an array of its records in order.
func (in *Input) Value() jsondoc.Value { return in.value }

// Object returns the document and true when it is one JSON object
// (FormJSON), the most common shape an adapter checks for first.
func (in *Input) Object() (jsondoc.Value, bool) {
	if in.Form == FormJSON && in.value.Kind() == jsondoc.Object {
		return in.value, true
	}
	return jsondoc.Value{}, false
}

// Records returns the document as a list: the records of a JSON Lines or
// SSE document, the elements of a JSON array, or a lone value by itself.
// The slice is shared: do not modify it.
func (in *Input) Records() []jsondoc.Value { return in.recs }

// setValue makes in (zero but for its scratch builder and the buffer of
// recs) the FormJSON Input of a value already read.
func (in *Input) setValue(v jsondoc.Value) {
	in.Form, in.value, in.src, in.sub = FormJSON, v, v.Raw(), true
	if v.Kind() == jsondoc.Array {
		if in.recs = in.recs[:0]; in.recs == nil || cap(in.recs) < v.Len() {
			in.recs = make([]jsondoc.Value, 0, v.Len()) // not nil, even when empty
		}
		for _, e := range v.Elems() {
			in.recs = append(in.recs, e)
		}
	} else {
		in.recs = append(in.recs[:0], v)
	}
}

// readInput reads data as JSON, JSON Lines or SSE (see Form).
func readInput(data []byte) (*Input, error) {
	in := &Input{}
	if err := in.read(string(data), nil); err != nil {
		return nil, err
	}
	return in, nil
}

// read fills in (zero but for the buffers of a Reader's Input: recs,
// sse, scratch) from the document s, read with p, or when p is nil each
// JSON text alone.
func (in *Input) read(s string, p *jsondoc.Parser) error {
	in.src = s
	in.base = jsondoc.BOMLen(s)
	text := s[in.base:]
	pos := jsondoc.SkipSpace(text, 0)
	if pos >= len(text) {
		return &jsondoc.SyntaxError{Line: 1, Column: 1, Msg: "empty document"}
	}
	switch text[pos] {
	case 'd', 'e', 'i', 'r', ':':
		if isSSEStart(text[pos:]) {
			return in.readSSE(text, pos, p)
		}
	}
	v, err := parseText(p, text, false)
	if err == nil {
		in.Form, in.value = FormJSON, v
		if v.Kind() == jsondoc.Array {
			in.recs = growRecs(in.recs, v.Len())
			for _, e := range v.Elems() {
				in.recs = append(in.recs, e)
			}
		} else {
			in.recs = append(in.recs[:0], v)
		}
		return nil
	}
	var se *jsondoc.SyntaxError
	if !errors.As(err, &se) || !strings.HasSuffix(se.Msg, "after top-level value") {
		return in.relocate(notJSONHint(err, text[pos:]))
	}
	// More than one value: JSON Lines.
	seq, err := parseText(p, text, true)
	if err != nil {
		return in.relocate(err)
	}
	in.Form, in.value = FormJSONLines, seq
	in.recs = growRecs(in.recs, seq.Len())
	for _, e := range seq.Elems() {
		in.recs = append(in.recs, e)
	}
	return nil
}

// consoleSpanNote is what a syntax error of the OpenTelemetry JS SDK's
// ConsoleSpanExporter output adds to its message.
const consoleSpanNote = "the document looks like the OpenTelemetry JS ConsoleSpanExporter's output, " +
	"Node's util.inspect notation (unquoted keys, 'single-quoted' strings), not JSON, and util.inspect " +
	"cuts long strings, long arrays and values deeper than 3 levels; export the spans as OTLP/JSON instead " +
	"(@opentelemetry/exporter-trace-otlp-http to toolscore's POST /v1/traces, or an OpenTelemetry Collector's file exporter)"

// notJSONHint returns err, the syntax error of the document text (from
// its first value's first byte), with consoleSpanNote added to its
// message when text looks like the OpenTelemetry JS ConsoleSpanExporter's
// output: console.dir of {resource, instrumentationScope, traceId, ...,
// name, id, kind, timestamp, duration, attributes, ...} per span, an
// object whose keys are written bare (`traceId: '4bf9...'`).
func notJSONHint(err error, text string) error {
	var se *jsondoc.SyntaxError
	if !errors.As(err, &se) || !strings.HasPrefix(text, "{") {
		return err
	}
	head := text[:min(len(text), 4096)]
	if strings.Contains(head, "traceId: '") && strings.Contains(head, "id: '") && strings.Contains(text, "attributes: {") {
		se.Msg += "; " + consoleSpanNote
	}
	return err
}

// growRecs returns recs emptied, with room for n values, and never nil:
// an Input of no records has an empty list.
func growRecs(recs []jsondoc.Value, n int) []jsondoc.Value {
	if recs == nil {
		return make([]jsondoc.Value, 0, n)
	}
	return slices.Grow(recs[:0], n)
}

// parseText reads one JSON value (or with seq a sequence of them) from s
// with p, or alone when p is nil.
func parseText(p *jsondoc.Parser, s string, seq bool) (jsondoc.Value, error) {
	switch {
	case p == nil && seq:
		return jsondoc.ParseSeq(s)
	case p == nil:
		return jsondoc.ParseString(s)
	case seq:
		return p.ParseSeq(s)
	}
	return p.Parse(s)
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

// sseData is one data line of an event: where its text starts in the
// joined text that is read (at) and in the document (off), and its
// length.
type sseData struct {
	at, off, n int
	// event is the index of the event the line belongs to.
	event int
}

// readSSE reads Server-Sent Events text (WHATWG HTML, "Parsing an event
// stream") from offset pos of text. Each event's data, its data lines
// joined with "\n", holds one or more JSON values; "[DONE]" and empty
// data are skipped. The events' data are read as one JSON Lines text, in
// which no value may span two events.
func (in *Input) readSSE(text string, pos int, p *jsondoc.Parser) error {
	in.Form = FormSSE
	var joined strings.Builder
	var event []sseData // the data lines of the event being read
	var events [][2]int // the [start, end) of each event in joined
	flush := func() {
		defer func() { event = event[:0] }()
		if len(event) == 0 {
			return
		}
		var t strings.Builder
		for i, d := range event {
			if i > 0 {
				t.WriteByte('\n')
			}
			t.WriteString(text[d.off : d.off+d.n])
		}
		if data := strings.TrimSpace(t.String()); data == "" || data == "[DONE]" {
			return
		}
		if joined.Len() > 0 {
			joined.WriteByte('\n')
		}
		start := joined.Len()
		for i, d := range event {
			if i > 0 {
				joined.WriteByte('\n')
			}
			d.at, d.event = joined.Len(), len(events)
			in.sse = append(in.sse, d)
			joined.WriteString(text[d.off : d.off+d.n])
		}
		events = append(events, [2]int{start, joined.Len()})
	}
	for pos < len(text) {
		end := pos
		for end < len(text) && text[end] != '\n' && text[end] != '\r' {
			end++
		}
		line := text[pos:end]
		next := end
		if next < len(text) {
			if text[next] == '\r' && next+1 < len(text) && text[next+1] == '\n' {
				next += 2
			} else {
				next++
			}
		}
		switch {
		case line == "":
			flush()
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
				event = append(event, sseData{off: off, n: len(value)})
			}
		}
		pos = next
	}
	flush()
	js := joined.String()
	seq, err := parseText(p, js, true)
	if err != nil {
		return in.relocate(in.eventError(js, events, err))
	}
	in.value = seq
	in.recs = growRecs(in.recs, seq.Len())
	for _, e := range seq.Elems() {
		// A value must lie within one event: read alone, the event
		// whose data it starts in fails.
		ev := in.sseLine(e.Offset()).event
		if r := events[ev]; e.Offset()+len(e.Raw()) > r[1] {
			return in.relocate(in.eventError(js, events, errors.New("a value spans two events")))
		}
		in.recs = append(in.recs, e)
	}
	return nil
}

// eventError narrows an error reading the joined events to the event it
// happened in: that event's data read alone (an unterminated value then
// ends at its event's end, not at the next event).
func (in *Input) eventError(js string, events [][2]int, err error) error {
	// The error may lie in a value that started in an earlier event:
	// every event is read alone until one fails.
	before := 0 // the records of the events read so far
	for _, r := range events {
		v, e := jsondoc.ParseSeq(js[r[0]:r[1]])
		if e != nil {
			return renumber(shiftError(e, r[0]), before)
		}
		before += v.Len()
	}
	return err
}

// renumber adds n to the record index that starts the pointer of a
// *jsondoc.SyntaxError read from one event.
func renumber(err error, n int) error {
	var se *jsondoc.SyntaxError
	if errors.As(err, &se) && se.Pointer != "" {
		tok, rest, deeper := strings.Cut(se.Pointer[1:], "/")
		if i, e := strconv.Atoi(tok); e == nil {
			se.Pointer = "/" + strconv.Itoa(i+n)
			if deeper {
				se.Pointer += "/" + rest
			}
		}
	}
	return err
}

// shiftError moves a *jsondoc.SyntaxError's offset by d (its line and
// column are recomputed by relocate).
func shiftError(err error, d int) error {
	var se *jsondoc.SyntaxError
	if errors.As(err, &se) {
		se.Offset += d
	}
	return err
}

// sseLine returns the data line holding offset off of the joined text.
func (in *Input) sseLine(off int) sseData {
	lo, hi := 0, len(in.sse)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if in.sse[mid].at <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return in.sse[lo]
}

// docOffset maps an offset of the text that was read to the document.
func (in *Input) docOffset(off int) int {
	if in.Form == FormSSE && len(in.sse) > 0 {
		d := in.sseLine(off)
		return in.base + d.off + min(off-d.at, d.n)
	}
	return in.base + off
}

// relocate puts a *jsondoc.SyntaxError's place in the document's terms:
// its offset, line and column in the document (past a byte order mark,
// inside an SSE data line).
func (in *Input) relocate(err error) error {
	var se *jsondoc.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	se.Offset = in.docOffset(se.Offset)
	se.Line, se.Column = in.lineCol(se.Offset)
	return err
}

// lineCol is the 1-based line and column of offset off of the document:
// an SSE stream's lines may end in a bare CR, a JSON or JSON Lines
// document's only in LF (a CR there is white space).
func (in *Input) lineCol(off int) (line, col int) {
	if in.Form == FormSSE {
		return jsondoc.LineColBreaks(in.src, off)
	}
	return jsondoc.LineCol(in.src, off)
}

// recordLine is the 1-based line on which record i starts, or 0 when the
// document is a single JSON value.
func (in *Input) recordLine(i int) int {
	if in.Form == FormJSON || i < 0 || i >= len(in.recs) {
		return 0
	}
	line, _ := in.lineCol(in.docOffset(in.recs[i].Offset()))
	return line
}
