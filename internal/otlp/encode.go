package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// AppendJSON appends the OTLP/JSON export request {"resourceSpans": [...]}
// holding rs, as the OTLP/JSON mapping writes it: hex trace and span ids,
// 64-bit integers as decimal strings, enums as integers, bytes as base64,
// NaN and infinities as "NaN", "Infinity" and "-Infinity", fields at
// their zero value left out. Spans keep their order.
func AppendJSON(b []byte, rs []*tracepb.ResourceSpans) []byte {
	b = append(b, `{"resourceSpans":[`...)
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		f := fields{b: b}
		if r.Resource != nil {
			f.key("resource")
			f.b = append(f.b, '{')
			g := fields{b: f.b}
			g.attrs("attributes", r.Resource.Attributes)
			g.uint("droppedAttributesCount", uint64(r.Resource.DroppedAttributesCount))
			f.b = append(g.b, '}')
		}
		if len(r.ScopeSpans) > 0 {
			f.key("scopeSpans")
			f.b = append(f.b, '[')
			for j, ss := range r.ScopeSpans {
				if j > 0 {
					f.b = append(f.b, ',')
				}
				f.b = appendScopeSpans(f.b, ss)
			}
			f.b = append(f.b, ']')
		}
		f.str("schemaUrl", r.SchemaUrl)
		b = append(f.b, '}')
	}
	return append(b, "]}"...)
}

func appendScopeSpans(b []byte, ss *tracepb.ScopeSpans) []byte {
	b = append(b, '{')
	f := fields{b: b}
	if s := ss.Scope; s != nil {
		f.key("scope")
		f.b = append(f.b, '{')
		g := fields{b: f.b}
		g.str("name", s.Name)
		g.str("version", s.Version)
		g.attrs("attributes", s.Attributes)
		g.uint("droppedAttributesCount", uint64(s.DroppedAttributesCount))
		f.b = append(g.b, '}')
	}
	if len(ss.Spans) > 0 {
		f.key("spans")
		f.b = append(f.b, '[')
		for i, s := range ss.Spans {
			if i > 0 {
				f.b = append(f.b, ',')
			}
			f.b = appendSpan(f.b, s)
		}
		f.b = append(f.b, ']')
	}
	f.str("schemaUrl", ss.SchemaUrl)
	return append(f.b, '}')
}

func appendSpan(b []byte, s *tracepb.Span) []byte {
	b = append(b, '{')
	f := fields{b: b}
	f.hex("traceId", s.TraceId)
	f.hex("spanId", s.SpanId)
	f.str("traceState", s.TraceState)
	f.hex("parentSpanId", s.ParentSpanId)
	f.uint("flags", uint64(s.Flags))
	f.str("name", s.Name)
	f.uint("kind", uint64(s.Kind))
	f.fixed("startTimeUnixNano", s.StartTimeUnixNano)
	f.fixed("endTimeUnixNano", s.EndTimeUnixNano)
	f.attrs("attributes", s.Attributes)
	f.uint("droppedAttributesCount", uint64(s.DroppedAttributesCount))
	if len(s.Events) > 0 {
		f.key("events")
		f.b = append(f.b, '[')
		for i, e := range s.Events {
			if i > 0 {
				f.b = append(f.b, ',')
			}
			f.b = append(f.b, '{')
			g := fields{b: f.b}
			g.fixed("timeUnixNano", e.TimeUnixNano)
			g.str("name", e.Name)
			g.attrs("attributes", e.Attributes)
			g.uint("droppedAttributesCount", uint64(e.DroppedAttributesCount))
			f.b = append(g.b, '}')
		}
		f.b = append(f.b, ']')
	}
	f.uint("droppedEventsCount", uint64(s.DroppedEventsCount))
	if len(s.Links) > 0 {
		f.key("links")
		f.b = append(f.b, '[')
		for i, l := range s.Links {
			if i > 0 {
				f.b = append(f.b, ',')
			}
			f.b = append(f.b, '{')
			g := fields{b: f.b}
			g.hex("traceId", l.TraceId)
			g.hex("spanId", l.SpanId)
			g.str("traceState", l.TraceState)
			g.attrs("attributes", l.Attributes)
			g.uint("droppedAttributesCount", uint64(l.DroppedAttributesCount))
			g.uint("flags", uint64(l.Flags))
			f.b = append(g.b, '}')
		}
		f.b = append(f.b, ']')
	}
	f.uint("droppedLinksCount", uint64(s.DroppedLinksCount))
	if st := s.Status; st != nil {
		f.key("status")
		f.b = append(f.b, '{')
		g := fields{b: f.b}
		g.str("message", st.Message)
		g.uint("code", uint64(st.Code))
		f.b = append(g.b, '}')
	}
	return append(f.b, '}')
}

// fields appends the members of one JSON object, leaving out zero values.
type fields struct {
	b []byte
	n int
}

func (f *fields) key(k string) {
	if f.n > 0 {
		f.b = append(f.b, ',')
	}
	f.n++
	f.b = append(f.b, '"')
	f.b = append(f.b, k...)
	f.b = append(f.b, '"', ':')
}

func (f *fields) str(k, v string) {
	if v != "" {
		f.key(k)
		f.b = jsondoc.AppendString(f.b, v)
	}
}

func (f *fields) uint(k string, v uint64) {
	if v != 0 {
		f.key(k)
		f.b = strconv.AppendUint(f.b, v, 10)
	}
}

// fixed writes a fixed64 as a decimal string.
func (f *fields) fixed(k string, v uint64) {
	if v != 0 {
		f.key(k)
		f.b = append(f.b, '"')
		f.b = strconv.AppendUint(f.b, v, 10)
		f.b = append(f.b, '"')
	}
}

func (f *fields) hex(k string, v []byte) {
	if len(v) > 0 {
		f.key(k)
		f.b = append(f.b, '"')
		f.b = hex.AppendEncode(f.b, v)
		f.b = append(f.b, '"')
	}
}

func (f *fields) attrs(k string, kvs []*commonpb.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	f.key(k)
	f.b = appendKVs(f.b, kvs)
}

func appendKVs(b []byte, kvs []*commonpb.KeyValue) []byte {
	b = append(b, '[')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = jsondoc.AppendString(b, kv.Key)
		b = append(b, `,"value":`...)
		b = appendValue(b, kv.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendValue appends an AnyValue; nil or unset is {}.
func appendValue(b []byte, v *commonpb.AnyValue) []byte {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		b = append(b, `{"stringValue":`...)
		b = jsondoc.AppendString(b, x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		b = append(b, `{"boolValue":`...)
		b = strconv.AppendBool(b, x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		b = append(b, `{"intValue":"`...)
		b = strconv.AppendInt(b, x.IntValue, 10)
		b = append(b, '"')
	case *commonpb.AnyValue_DoubleValue:
		b = append(b, `{"doubleValue":`...)
		switch d := x.DoubleValue; {
		case math.IsNaN(d):
			b = append(b, `"NaN"`...)
		case math.IsInf(d, 1):
			b = append(b, `"Infinity"`...)
		case math.IsInf(d, -1):
			b = append(b, `"-Infinity"`...)
		default:
			b = jsondoc.AppendFloat(b, d)
		}
	case *commonpb.AnyValue_ArrayValue:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		b = append(b, "]}"...)
	case *commonpb.AnyValue_KvlistValue:
		b = append(b, `{"kvlistValue":{"values":`...)
		b = appendKVs(b, x.KvlistValue.GetValues())
		b = append(b, '}')
	case *commonpb.AnyValue_BytesValue:
		b = append(b, `{"bytesValue":"`...)
		b = base64.StdEncoding.AppendEncode(b, x.BytesValue)
		b = append(b, '"')
	default:
		return append(b, "{}"...)
	}
	return append(b, '}')
}
