package format

import (
	"fmt"
	"unsafe"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Reader reads many traces one after another (the lines of a batch) into
// the same memory: the document's values, the decoded argument texts, the
// calls and the Parsed it returns are reused by the next Parse, so that a
// Reader allocates only while its buffers grow to the largest trace. What
// it reads is exactly what Registry.Parse reads from the same bytes.
//
// A Reader is not safe for concurrent use; the zero Reader is not ready
// (use NewReader or Registry.NewReader).
type Reader struct {
	r   *Registry
	p   jsondoc.Parser
	in  Input
	b   builder
	out Parsed
}

// NewReader returns a Reader with the built-in adapters.
func NewReader() *Reader { return builtin.NewReader() }

// NewReader returns a Reader with r's adapters.
func (r *Registry) NewReader() *Reader {
	rd := &Reader{r: r}
	rd.b.dec = &rd.p
	return rd
}

// Parse reads a trace from data as Registry.Parse does, with the same
// result and errors, but without copying data: strings of the trace share
// its memory, so data must not change while the trace is in use. The
// returned Parsed, its trace and every value in it are valid until the
// next call of Parse; a caller that keeps anything of them longer (a tool
// name, an issue text built from one) must copy it.
func (rd *Reader) Parse(data []byte, name string) (*Parsed, error) {
	a, requested, err := rd.r.adapter(name)
	if err != nil {
		return nil, err
	}
	rd.p.Reset()
	rd.in = Input{recs: rd.in.recs[:0], sse: rd.in.sse[:0], scratch: &rd.b}
	if err := rd.in.read(unsafeString(data), &rd.p); err != nil {
		return nil, fmt.Errorf("%w: %w", engine.ErrInvalidTrace, err)
	}
	if err := rd.r.parse(&rd.in, a, requested, &rd.out); err != nil {
		return nil, err
	}
	return &rd.out, nil
}

// ParseValue reads a trace that is already a JSON value as
// Registry.ParseValue does, with the same result and errors, into the
// Reader's memory: the argument texts it decodes, the calls and the
// Parsed it returns are valid until the next Parse or ParseValue (v's
// document is only read, never reused).
func (rd *Reader) ParseValue(v jsondoc.Value, name string) (*Parsed, error) {
	a, requested, err := rd.r.adapter(name)
	if err != nil {
		return nil, err
	}
	rd.p.Reset()
	rd.in = Input{recs: rd.in.recs[:0], sse: rd.in.sse[:0], scratch: &rd.b}
	rd.in.setValue(v)
	if err := rd.r.parse(&rd.in, a, requested, &rd.out); err != nil {
		return nil, err
	}
	return &rd.out, nil
}

// Release drops the Reader's references to what it read last: the
// document, its records, the calls and the Parsed it returned, which must
// not be used after it. The buffers keep their capacity for the next Parse
// or ParseValue, so a Reader kept idle (in a pool) holds no trace's values
// alive, only its parser's buffers.
func (rd *Reader) Release() {
	clear(rd.in.recs[:cap(rd.in.recs)])
	rd.in = Input{recs: rd.in.recs[:0], sse: rd.in.sse[:0], scratch: &rd.b}
	b := &rd.b
	clear(b.byID)
	clear(b.dupIDs)
	clear(b.calls[:cap(b.calls)])
	*b = builder{calls: b.calls[:0], done: b.done[:0], byID: b.byID, dupIDs: b.dupIDs, dec: b.dec}
	rd.out = Parsed{}
	rd.p.Reset()
}

// unsafeString is b's bytes as a string, without copying: b must not
// change while the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
