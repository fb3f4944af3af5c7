package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"strconv"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Encoding is the body encoding of an OTLP/HTTP request (and of its
// response, which uses the request's).
type Encoding int

// The OTLP/HTTP encodings.
const (
	// Protobuf is "application/x-protobuf", the binary protobuf encoding.
	Protobuf Encoding = iota
	// JSON is "application/json", the OTLP/JSON mapping of the protobuf
	// messages (hex trace and span ids, enums as integers, lowerCamelCase
	// field names).
	JSON
)

// ContentType returns the media type of e.
func (e Encoding) ContentType() string {
	if e == JSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// ErrMediaType is returned by ParseContentType for a media type OTLP/HTTP
// does not define.
var ErrMediaType = errors.New("unsupported media type")

// ParseContentType returns the encoding of a Content-Type header value.
//
// Errors: ErrMediaType (wrapped, naming the type) for anything but
// application/x-protobuf and application/json.
func ParseContentType(ct string) (Encoding, error) {
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == "application/x-protobuf":
		return Protobuf, nil
	case err == nil && mt == "application/json":
		return JSON, nil
	}
	if ct == "" {
		ct = "none"
	}
	return Protobuf, fmt.Errorf("%w: Content-Type %s; send application/x-protobuf or application/json", ErrMediaType, ct)
}

// ErrTooLarge is returned by ReadBody when the body, or its decompressed
// form, exceeds the limit.
var ErrTooLarge = errors.New("body too large")

// ErrEncoding is returned by ReadBody for a Content-Encoding other than
// gzip or identity.
var ErrEncoding = errors.New("unsupported content encoding")

// BadRequestError is a body that cannot be read as an OTLP export request
// (malformed protobuf or JSON, bad gzip data); OTLP/HTTP answers it 400.
type BadRequestError struct {
	// Msg says what is wrong and where (a byte offset for JSON).
	Msg string
}

func (e *BadRequestError) Error() string { return e.Msg }

func badRequest(format string, args ...any) *BadRequestError {
	return &BadRequestError{Msg: fmt.Sprintf(format, args...)}
}

// ReadBody reads an export request body of at most limit bytes, after
// decompression when contentEncoding is gzip.
//
// Errors: ErrTooLarge; ErrEncoding; *BadRequestError for corrupt gzip
// data; the reader's error.
func ReadBody(r io.Reader, contentEncoding string, limit int64) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(contentEncoding)) {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(io.LimitReader(r, limit+1))
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, badRequest("gzip: empty body")
			}
			return nil, badRequest("gzip: %v", err)
		}
		defer zr.Close()
		b, err := readLimited(zr, limit)
		if err != nil && !errors.Is(err, ErrTooLarge) {
			return nil, badRequest("gzip: %v", err)
		}
		return b, err
	default:
		return nil, fmt.Errorf("%w: Content-Encoding %q; send gzip or none", ErrEncoding, contentEncoding)
	}
	return readLimited(r, limit)
}

func readLimited(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// DecodeRequest decodes an ExportTraceServiceRequest in encoding enc.
//
// Errors: *BadRequestError for malformed protobuf or JSON; ErrTooLarge
// for more than MaxMessages messages.
func DecodeRequest(body []byte, enc Encoding) (*coltracepb.ExportTraceServiceRequest, error) {
	req := &coltracepb.ExportTraceServiceRequest{}
	if enc == Protobuf {
		if err := countProtobufMessages(body); err != nil {
			return nil, err
		}
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, badRequest("malformed protobuf ExportTraceServiceRequest: %v", err)
		}
		return req, nil
	}
	if err := countJSONMessages(body); err != nil {
		return nil, err
	}
	var doc jsonRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonError(body, err)
	}
	if dec.More() {
		// Something follows the request: jsondoc says what and where.
		return nil, jsonError(body, errAfterRequest)
	}
	req.ResourceSpans = make([]*tracepb.ResourceSpans, len(doc.ResourceSpans))
	for i := range doc.ResourceSpans {
		req.ResourceSpans[i] = doc.ResourceSpans[i].proto()
	}
	return req, nil
}

// jsonError places an encoding/json error in body by line and column
// (jsondoc.LineCol's): a syntax error, the body cut short, or data after
// the request as jsondoc's parser words and places it, with the JSON
// pointer of the value it is in ("malformed OTLP/JSON: line 3:15:
// invalid character '}' looking for beginning of value (at
// /resourceSpans/0)"); a member of another type at the member ("line
// 1:18: /resourceSpans: must be an array, got object"). A
// *BadRequestError of a member's own decoding is returned as it is.
func jsonError(body []byte, err error) error {
	var be *BadRequestError
	var te *json.UnmarshalTypeError
	if errors.As(err, &be) {
		return be
	}
	if errors.As(err, &te) {
		// The request read: place the error in its value (what follows
		// it, if anything, is not read here).
		s := string(body)
		end, ok := jsondoc.SkipValue(s, jsondoc.SkipSpace(s, 0))
		if !ok {
			end = len(s) // past jsondoc's limits: ParseString says which
		}
		root, perr := jsondoc.ParseString(s[:end])
		var jse *jsondoc.SyntaxError
		switch {
		case perr == nil:
			at, msg := jsondoc.TypeError(root, 0, te)
			line, col := jsondoc.LineCol(s, at.Offset())
			ptr := ""
			if p := at.Pointer(); p != "" {
				ptr = jsondoc.ShortPointer(p) + ": "
			}
			return badRequest("malformed OTLP/JSON: line %d:%d: %s%s", line, col, ptr, msg)
		case errors.As(perr, &jse):
			// Past one of jsondoc's limits (MaxDepth, MaxNumberLen).
			return badRequest("malformed OTLP/JSON: %v", jse)
		}
		return badRequest("malformed OTLP/JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	var jse *jsondoc.SyntaxError
	if _, perr := jsondoc.Parse(body); errors.As(perr, &jse) {
		// encoding/json's offset is just past the byte jsondoc's is at.
		var se *json.SyntaxError
		if !errors.As(err, &se) || se.Offset-1 == int64(jse.Offset) {
			return badRequest("malformed OTLP/JSON: %v", jse)
		}
		// jsondoc stopped elsewhere (at one of its limits): encoding/json's
		// error, placed without a pointer.
		line, col := jsondoc.LineCol(string(body), int(se.Offset)-1)
		return badRequest("malformed OTLP/JSON: line %d:%d: %v", line, col, se)
	}
	if errors.Is(err, errAfterRequest) {
		return badRequest("malformed OTLP/JSON: %v", err)
	}
	return badRequest("malformed OTLP/JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// errAfterRequest is DecodeRequest's error for a body with more than
// white space after the request, which jsondoc places.
var errAfterRequest = errors.New("unexpected data after the request")

// EncodeResponse encodes an ExportTraceServiceResponse: empty (full
// success) when rejected is 0 and msg is "", else with partial_success.
func EncodeResponse(enc Encoding, rejected int64, msg string) []byte {
	if enc == JSON {
		if rejected == 0 && msg == "" {
			return []byte("{}")
		}
		b := []byte(`{"partialSuccess":{"rejectedSpans":"`)
		b = strconv.AppendInt(b, rejected, 10)
		b = append(b, `","errorMessage":`...)
		b = jsondoc.AppendString(b, msg)
		return append(b, "}}"...)
	}
	resp := &coltracepb.ExportTraceServiceResponse{}
	if rejected != 0 || msg != "" {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: rejected, ErrorMessage: msg}
	}
	b, _ := proto.Marshal(resp) // a plain message always marshals
	return b
}

// EncodeStatus encodes the google.rpc.Status body OTLP/HTTP sends with an
// error status: code is a gRPC code (3 INVALID_ARGUMENT, 8
// RESOURCE_EXHAUSTED, 14 UNAVAILABLE, ...).
func EncodeStatus(enc Encoding, code int32, msg string) []byte {
	if enc == JSON {
		b := []byte(`{"code":`)
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, `,"message":`...)
		b = jsondoc.AppendString(b, msg)
		return append(b, '}')
	}
	// google.rpc.Status: field 1 code (int32), field 2 message (string).
	var b []byte
	if code != 0 {
		b = append(b, 0x08)
		b = appendVarint(b, uint64(code))
	}
	if msg != "" {
		b = append(b, 0x12)
		b = appendVarint(b, uint64(len(msg)))
		b = append(b, msg...)
	}
	return b
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// The OTLP/JSON request, decoded with encoding/json (field names match
// case-insensitively; unknown fields are ignored, as OTLP/JSON requires).
type jsonRequest struct {
	ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
}

type jsonResourceSpans struct {
	Resource   *jsonResource    `json:"resource"`
	ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	SchemaURL  string           `json:"schemaUrl"`
}

type jsonResource struct {
	Attributes             []jsonKV `json:"attributes"`
	DroppedAttributesCount uint32   `json:"droppedAttributesCount"`
}

type jsonScopeSpans struct {
	Scope     *jsonScope `json:"scope"`
	Spans     []jsonSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl"`
}

type jsonScope struct {
	Name                   string   `json:"name"`
	Version                string   `json:"version"`
	Attributes             []jsonKV `json:"attributes"`
	DroppedAttributesCount uint32   `json:"droppedAttributesCount"`
}

type jsonSpan struct {
	TraceID                hexID      `json:"traceId"`
	SpanID                 hexID      `json:"spanId"`
	TraceState             string     `json:"traceState"`
	ParentSpanID           hexID      `json:"parentSpanId"`
	Flags                  uint32     `json:"flags"`
	Name                   string     `json:"name"`
	Kind                   enumValue  `json:"kind"`
	StartTimeUnixNano      jsonUint64 `json:"startTimeUnixNano"`
	EndTimeUnixNano        jsonUint64 `json:"endTimeUnixNano"`
	Attributes             []jsonKV   `json:"attributes"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount"`
	Events                 []struct {
		TimeUnixNano           jsonUint64 `json:"timeUnixNano"`
		Name                   string     `json:"name"`
		Attributes             []jsonKV   `json:"attributes"`
		DroppedAttributesCount uint32     `json:"droppedAttributesCount"`
	} `json:"events"`
	DroppedEventsCount uint32 `json:"droppedEventsCount"`
	Links              []struct {
		TraceID                hexID    `json:"traceId"`
		SpanID                 hexID    `json:"spanId"`
		TraceState             string   `json:"traceState"`
		Attributes             []jsonKV `json:"attributes"`
		DroppedAttributesCount uint32   `json:"droppedAttributesCount"`
		Flags                  uint32   `json:"flags"`
	} `json:"links"`
	DroppedLinksCount uint32 `json:"droppedLinksCount"`
	Status            *struct {
		Message string    `json:"message"`
		Code    enumValue `json:"code"`
	} `json:"status"`
}

type jsonKV struct {
	Key   string        `json:"key"`
	Value *jsonAnyValue `json:"value"`
}

type jsonAnyValue struct {
	StringValue *string     `json:"stringValue"`
	BoolValue   *bool       `json:"boolValue"`
	IntValue    *jsonInt64  `json:"intValue"`
	DoubleValue *jsonDouble `json:"doubleValue"`
	ArrayValue  *struct {
		Values []jsonAnyValue `json:"values"`
	} `json:"arrayValue"`
	KvlistValue *struct {
		Values []jsonKV `json:"values"`
	} `json:"kvlistValue"`
	BytesValue *[]byte `json:"bytesValue"` // base64, as encoding/json reads []byte
}

// hexID is a trace or span id: hex text in OTLP/JSON (not base64).
type hexID []byte

func (h *hexID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return badRequest("malformed OTLP/JSON: a trace or span id must be a hex string, not %s", b)
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return badRequest("malformed OTLP/JSON: trace or span id %q is not hex", s)
	}
	*h = v
	return nil
}

// jsonUint64 is a fixed64 given as a decimal string (as OTLP/JSON writes
// 64-bit integers) or a number.
type jsonUint64 uint64

func (u *jsonUint64) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "" || s == "null" {
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return badRequest("malformed OTLP/JSON: %s is not an unsigned 64-bit integer", b)
	}
	*u = jsonUint64(v)
	return nil
}

// jsonInt64 is an int64 given as a decimal string or a number.
type jsonInt64 int64

func (i *jsonInt64) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return badRequest("malformed OTLP/JSON: intValue %s is not a 64-bit integer", b)
	}
	*i = jsonInt64(v)
	return nil
}

// jsonDouble is a double given as a number, or as "NaN", "Infinity" or
// "-Infinity" (the protobuf JSON mapping's names).
type jsonDouble float64

func (d *jsonDouble) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*d = jsonDouble(math.NaN())
	case `"Infinity"`:
		*d = jsonDouble(math.Inf(1))
	case `"-Infinity"`:
		*d = jsonDouble(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(bytes.Trim(b, `"`)), 64)
		if err != nil {
			return badRequest("malformed OTLP/JSON: doubleValue %s is not a number", b)
		}
		*d = jsonDouble(v)
	}
	return nil
}

// enumValue is an enum given as an integer (as OTLP/JSON requires) or by
// its protobuf name (SPAN_KIND_SERVER, STATUS_CODE_ERROR), which some
// senders write.
type enumValue int32

var enumNames = func() map[string]int32 {
	m := map[string]int32{}
	for k, v := range tracepb.Span_SpanKind_value {
		m[k] = v
	}
	for k, v := range tracepb.Status_StatusCode_value {
		m[k] = v
	}
	return m
}()

func (e *enumValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return badRequest("malformed OTLP/JSON: enum %s", b)
		}
		v, ok := enumNames[s]
		if !ok {
			return badRequest("malformed OTLP/JSON: unknown enum value %q", s)
		}
		*e = enumValue(v)
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return badRequest("malformed OTLP/JSON: enum %s is not an integer", b)
	}
	*e = enumValue(v)
	return nil
}

func (r *jsonResourceSpans) proto() *tracepb.ResourceSpans {
	out := &tracepb.ResourceSpans{SchemaUrl: r.SchemaURL}
	if r.Resource != nil {
		out.Resource = &resourcepb.Resource{Attributes: kvs(r.Resource.Attributes), DroppedAttributesCount: r.Resource.DroppedAttributesCount}
	}
	out.ScopeSpans = make([]*tracepb.ScopeSpans, len(r.ScopeSpans))
	for i := range r.ScopeSpans {
		ss := &r.ScopeSpans[i]
		pss := &tracepb.ScopeSpans{SchemaUrl: ss.SchemaURL}
		if ss.Scope != nil {
			pss.Scope = &commonpb.InstrumentationScope{Name: ss.Scope.Name, Version: ss.Scope.Version,
				Attributes: kvs(ss.Scope.Attributes), DroppedAttributesCount: ss.Scope.DroppedAttributesCount}
		}
		pss.Spans = make([]*tracepb.Span, len(ss.Spans))
		for j := range ss.Spans {
			pss.Spans[j] = ss.Spans[j].proto()
		}
		out.ScopeSpans[i] = pss
	}
	return out
}

func (s *jsonSpan) proto() *tracepb.Span {
	out := &tracepb.Span{
		TraceId: s.TraceID, SpanId: s.SpanID, TraceState: s.TraceState, ParentSpanId: s.ParentSpanID,
		Flags: s.Flags, Name: s.Name, Kind: tracepb.Span_SpanKind(s.Kind),
		StartTimeUnixNano: uint64(s.StartTimeUnixNano), EndTimeUnixNano: uint64(s.EndTimeUnixNano),
		Attributes: kvs(s.Attributes), DroppedAttributesCount: s.DroppedAttributesCount,
		DroppedEventsCount: s.DroppedEventsCount, DroppedLinksCount: s.DroppedLinksCount,
	}
	for _, e := range s.Events {
		out.Events = append(out.Events, &tracepb.Span_Event{TimeUnixNano: uint64(e.TimeUnixNano), Name: e.Name,
			Attributes: kvs(e.Attributes), DroppedAttributesCount: e.DroppedAttributesCount})
	}
	for _, l := range s.Links {
		out.Links = append(out.Links, &tracepb.Span_Link{TraceId: l.TraceID, SpanId: l.SpanID, TraceState: l.TraceState,
			Attributes: kvs(l.Attributes), DroppedAttributesCount: l.DroppedAttributesCount, Flags: l.Flags})
	}
	if s.Status != nil {
		out.Status = &tracepb.Status{Message: s.Status.Message, Code: tracepb.Status_StatusCode(s.Status.Code)}
	}
	return out
}

func kvs(in []jsonKV) []*commonpb.KeyValue {
	if len(in) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(in))
	for i, kv := range in {
		out[i] = &commonpb.KeyValue{Key: kv.Key, Value: kv.Value.proto()}
	}
	return out
}

func (v *jsonAnyValue) proto() *commonpb.AnyValue {
	if v == nil {
		return nil
	}
	switch {
	case v.StringValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: *v.StringValue}}
	case v.BoolValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: *v.BoolValue}}
	case v.IntValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(*v.IntValue)}}
	case v.DoubleValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: float64(*v.DoubleValue)}}
	case v.ArrayValue != nil:
		vals := make([]*commonpb.AnyValue, len(v.ArrayValue.Values))
		for i := range v.ArrayValue.Values {
			vals[i] = v.ArrayValue.Values[i].proto()
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}}
	case v.KvlistValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs(v.KvlistValue.Values)}}}
	case v.BytesValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: *v.BytesValue}}
	}
	return &commonpb.AnyValue{}
}
