package otlp

import (
	"fmt"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxMessages is the most messages (resource spans, scope spans, spans,
// events, links, key-values, values, at any level below the request) one
// export request may hold. The body limit alone does not bound the
// decoded size: an empty span is 2 bytes of protobuf (3 of JSON) and a
// ~300-byte Span once decoded, so 14 MB of them would take 2 GB. At this
// limit a decoded export takes at most ~160 MB; an SDK's batch (512 spans
// of ~20 attributes each) holds ~20,000 messages.
const MaxMessages = 1 << 19

// errTooManyMessages is the error of an export over MaxMessages.
var errTooManyMessages = fmt.Errorf("%w: the export holds more than %d messages (spans, attributes, values); send fewer spans per export", ErrTooLarge, MaxMessages)

// requestDescriptor describes ExportTraceServiceRequest, the message
// countProtobufMessages walks.
var requestDescriptor = (&coltracepb.ExportTraceServiceRequest{}).ProtoReflect().Descriptor()

// countProtobufMessages returns errTooManyMessages when the protobuf
// ExportTraceServiceRequest body holds more than MaxMessages messages,
// counted from the wire without decoding (fields of message type by the
// schema; strings, bytes and unknown fields are not messages). Malformed
// wire data stops the count without an error: proto.Unmarshal reports it.
func countProtobufMessages(body []byte) error {
	n := 0
	return countMessages(body, requestDescriptor, &n, 0)
}

// maxCountDepth is the nesting at which countMessages stops descending;
// proto.Unmarshal refuses deeper messages itself (its limit is 10,000).
const maxCountDepth = 10_000

// countMessages adds to *n the messages in b, a message of type md at
// nesting depth.
func countMessages(b []byte, md protoreflect.MessageDescriptor, n *int, depth int) error {
	if depth > maxCountDepth {
		return nil
	}
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return nil
		}
		b = b[tl:]
		if typ != protowire.BytesType {
			vl := protowire.ConsumeFieldValue(num, typ, b)
			if vl < 0 {
				return nil
			}
			b = b[vl:]
			continue
		}
		v, vl := protowire.ConsumeBytes(b)
		if vl < 0 {
			return nil
		}
		b = b[vl:]
		fd := fields.ByNumber(num)
		if fd == nil || fd.Kind() != protoreflect.MessageKind {
			continue
		}
		if *n++; *n > MaxMessages {
			return errTooManyMessages
		}
		if err := countMessages(v, fd.Message(), n, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// countJSONMessages returns errTooManyMessages when the OTLP/JSON body holds
// more than MaxMessages objects below its top-level one (every object of
// OTLP/JSON is a message). Objects are counted by their opening braces
// outside strings; malformed JSON is left to the decoder.
func countJSONMessages(body []byte) error {
	n := -1 // the request object itself
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			if n++; n > MaxMessages {
				return errTooManyMessages
			}
		}
	}
	return nil
}
