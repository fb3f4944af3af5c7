package otlp

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// emptySpansProtobuf is an ExportTraceServiceRequest holding one
// ResourceSpans, one ScopeSpans and n empty spans: 2 bytes of wire per
// span, each of which proto.Unmarshal turns into a ~300-byte Span.
func emptySpansProtobuf(n int) []byte {
	scope := bytes.Repeat([]byte{0x12, 0x00}, n)            // ScopeSpans.spans (2), empty
	res := protowire.AppendTag(nil, 2, protowire.BytesType) // ResourceSpans.scope_spans
	res = protowire.AppendBytes(res, scope)
	req := protowire.AppendTag(nil, 1, protowire.BytesType) // ExportTraceServiceRequest.resource_spans
	return protowire.AppendBytes(req, res)
}

// emptySpansJSON is the OTLP/JSON form of emptySpansProtobuf.
func emptySpansJSON(n int) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}]}]}`)
}

// TestDecodeRequestMessageLimit: an export of more than MaxMessages
// messages (spans, attributes, values, at any level) is ErrTooLarge before
// it is decoded, in both encodings, so a 14 MB body of empty spans (13 KB
// gzipped) cannot make the server allocate gigabytes; one of exactly
// MaxMessages messages decodes.
func TestDecodeRequestMessageLimit(t *testing.T) {
	// 1 ResourceSpans + 1 ScopeSpans + spans.
	atLimit := MaxMessages - 2
	for _, tc := range []struct {
		enc  Encoding
		body func(int) []byte
	}{{Protobuf, emptySpansProtobuf}, {JSON, emptySpansJSON}} {
		req, err := DecodeRequest(tc.body(atLimit), tc.enc)
		if err != nil {
			t.Fatalf("enc %d: %d messages: %v", tc.enc, MaxMessages, err)
		}
		if got := len(req.ResourceSpans[0].ScopeSpans[0].Spans); got != atLimit {
			t.Errorf("enc %d: decoded %d spans, want %d", tc.enc, got, atLimit)
		}
		_, err = DecodeRequest(tc.body(atLimit+1), tc.enc)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("enc %d: %d messages: err = %v, want ErrTooLarge", tc.enc, MaxMessages+1, err)
		}
		if want := "body too large: the export holds more than 524288 messages (spans, attributes, values); send fewer spans per export"; err.Error() != want {
			t.Errorf("enc %d: err = %q, want %q", tc.enc, err, want)
		}
	}
	// Strings and bytes are not messages, whatever they hold: a span whose
	// span id holds an over-limit body, or whose name holds MaxMessages+1
	// braces (and an escaped quote), decodes.
	id := emptySpansProtobuf(MaxMessages)
	span := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), id) // Span.span_id
	scope := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), span)
	res := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), scope)
	req, err := DecodeRequest(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res), Protobuf)
	if err != nil || !bytes.Equal(req.ResourceSpans[0].ScopeSpans[0].Spans[0].SpanId, id) {
		t.Errorf("protobuf span id of %d bytes: %v", len(id), err)
	}
	braces := `\"` + strings.Repeat("{", MaxMessages+1)
	req, err = DecodeRequest([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"`+braces+`"}]}]}]}`), JSON)
	if err != nil || req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name != `"`+braces[2:] {
		t.Errorf("JSON span named by braces: %v", err)
	}
}
