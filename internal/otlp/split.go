package otlp

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TraceID is an OTLP trace id: 16 bytes, not all zero.
type TraceID [16]byte

// String returns the id as 32 lowercase hex digits, as OTLP/JSON writes it.
func (id TraceID) String() string { return hex.EncodeToString(id[:]) }

// ParseTraceID reads 32 hex digits.
//
// Errors: the text is not 32 hex digits, or is all zeros.
func ParseTraceID(s string) (TraceID, error) {
	var id TraceID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("trace id %q is not 32 hex digits", s)
	}
	copy(id[:], b)
	if id == (TraceID{}) {
		return id, fmt.Errorf("trace id %q is all zeros", s)
	}
	return id, nil
}

// Batch is the spans of one trace from one export request, as stored:
// Data is a protobuf TracesData holding them with their resource and
// scope.
type Batch struct {
	TraceID TraceID
	// Spans is the number of spans in Data.
	Spans int
	// RootEnded reports whether Data holds a root span (no parent span
	// id). An SDK exports a span when it ends, so a root span that
	// arrived has ended.
	RootEnded bool
	// Data is the protobuf encoding of a tracepb.TracesData.
	Data []byte
}

// Split groups the spans of an export request by trace id, in order of
// first appearance, keeping each span's resource and scope and the
// spans' order. Spans with an invalid trace id (not 16 bytes, or all
// zeros) or span id (not 8 bytes, or all zeros) are rejected: counted in
// rejected and described in msg. raw, when non-nil, is the request's
// protobuf body: when the whole request is one trace with no rejected
// span it is stored as it is (an ExportTraceServiceRequest and a
// TracesData have the same encoding), saving a marshal.
func Split(req interface {
	GetResourceSpans() []*tracepb.ResourceSpans
}, raw []byte) (batches []Batch, rejected int64, msg string) {
	type acc struct {
		rs        []*tracepb.ResourceSpans
		spans     int
		rootEnded bool
	}
	var order []TraceID
	byTrace := map[TraceID]*acc{}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if why := invalidSpan(s); why != "" {
					if rejected == 0 {
						msg = why
					}
					rejected++
					continue
				}
				id := TraceID(s.TraceId)
				a := byTrace[id]
				if a == nil {
					a = &acc{}
					byTrace[id] = a
					order = append(order, id)
				}
				a.spans++
				if len(s.ParentSpanId) == 0 {
					a.rootEnded = true
				}
				a.rs = addSpan(a.rs, rs, ss, s)
			}
		}
	}
	if rejected > 1 {
		msg = fmt.Sprintf("%d spans rejected; the first: %s", rejected, msg)
	}
	batches = make([]Batch, 0, len(order))
	for _, id := range order {
		a := byTrace[id]
		b := Batch{TraceID: id, Spans: a.spans, RootEnded: a.rootEnded}
		if raw != nil && len(order) == 1 && rejected == 0 {
			b.Data = raw
		} else {
			b.Data, _ = proto.Marshal(&tracepb.TracesData{ResourceSpans: a.rs}) // valid messages always marshal
		}
		batches = append(batches, b)
	}
	return batches, rejected, msg
}

// invalidSpan says why a span cannot be stored, "" when it can.
func invalidSpan(s *tracepb.Span) string {
	switch {
	case len(s.TraceId) != 16:
		return fmt.Sprintf("span %x has a trace id of %d bytes, want 16", s.SpanId, len(s.TraceId))
	case bytes.Equal(s.TraceId, make([]byte, 16)):
		return fmt.Sprintf("span %x has an all-zero trace id", s.SpanId)
	case len(s.SpanId) != 8:
		return fmt.Sprintf("a span of trace %x has a span id of %d bytes, want 8", s.TraceId, len(s.SpanId))
	case bytes.Equal(s.SpanId, make([]byte, 8)):
		return fmt.Sprintf("a span of trace %x has an all-zero span id", s.TraceId)
	}
	return ""
}

// addSpan adds s, of resource rs and scope ss, to a trace's resource
// spans, reusing the last ResourceSpans and ScopeSpans when they are the
// same.
func addSpan(out []*tracepb.ResourceSpans, rs *tracepb.ResourceSpans, ss *tracepb.ScopeSpans, s *tracepb.Span) []*tracepb.ResourceSpans {
	var last *tracepb.ResourceSpans
	if n := len(out); n > 0 && out[n-1].Resource == rs.Resource && out[n-1].SchemaUrl == rs.SchemaUrl {
		last = out[n-1]
	} else {
		last = &tracepb.ResourceSpans{Resource: rs.Resource, SchemaUrl: rs.SchemaUrl}
		out = append(out, last)
	}
	var lss *tracepb.ScopeSpans
	if n := len(last.ScopeSpans); n > 0 && last.ScopeSpans[n-1].Scope == ss.Scope && last.ScopeSpans[n-1].SchemaUrl == ss.SchemaUrl {
		lss = last.ScopeSpans[n-1]
	} else {
		lss = &tracepb.ScopeSpans{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl}
		last.ScopeSpans = append(last.ScopeSpans, lss)
	}
	lss.Spans = append(lss.Spans, s)
	return out
}

// Assemble reads a trace's stored batches, in arrival order, into one
// list of resource spans, dropping repeated spans (the same span id
// again, as an exporter's retry of an export that was stored but not
// acknowledged sends it): the first copy is kept. It returns the resource
// spans and the number of distinct spans.
//
// Errors: a batch that is not a protobuf TracesData (naming its index).
func Assemble(data [][]byte) ([]*tracepb.ResourceSpans, int, error) {
	var out []*tracepb.ResourceSpans
	seen := map[[8]byte]bool{}
	n := 0
	for i, d := range data {
		var td tracepb.TracesData
		if err := proto.Unmarshal(d, &td); err != nil {
			return nil, 0, fmt.Errorf("stored span batch %d: %w", i, err)
		}
		for _, rs := range td.ResourceSpans {
			keep := rs.ScopeSpans[:0]
			for _, ss := range rs.ScopeSpans {
				spans := ss.Spans[:0]
				for _, s := range ss.Spans {
					var id [8]byte
					copy(id[:], s.SpanId)
					if seen[id] {
						continue
					}
					seen[id] = true
					spans = append(spans, s)
				}
				if len(spans) > 0 {
					ss.Spans = slices.Clip(spans)
					keep = append(keep, ss)
				}
			}
			if len(keep) > 0 {
				rs.ScopeSpans = keep
				out = append(out, rs)
				for _, ss := range keep {
					n += len(ss.Spans)
				}
			}
		}
	}
	return out, n, nil
}
