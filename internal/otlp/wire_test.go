package otlp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// seedExports are OTLP/JSON export requests from the format testdata.
func seedExports(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, f := range []string{"otel/export.json", "real/ai-sdk-otel-v6/generate-parallel.json", "real/openinference/agent-parallel.json"} {
		b, err := os.ReadFile(filepath.Join("../engine/format/testdata", f))
		if err == nil {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no seed export found under ../engine/format/testdata")
	}
	return out
}

// TestJSONRoundTrip: an export decoded from OTLP/JSON, written back with
// AppendJSON and decoded again is the same message; so is its protobuf.
func TestJSONRoundTrip(t *testing.T) {
	for _, doc := range seedExports(t) {
		req, err := DecodeRequest(doc, JSON)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRequest(AppendJSON(nil, req.ResourceSpans), JSON)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(req, back) {
			t.Errorf("JSON round trip changed the request")
		}
		pb, _ := proto.Marshal(req)
		again, err := DecodeRequest(pb, Protobuf)
		if err != nil || !proto.Equal(req, again) {
			t.Errorf("protobuf round trip: %v", err)
		}
	}
}

// TestSplitAssemble: splitting an export by trace and assembling each
// trace's batches keeps every span once, in order; a repeated span (an
// exporter's retry) is kept once.
func TestSplitAssemble(t *testing.T) {
	req, err := DecodeRequest(seedExports(t)[0], JSON)
	if err != nil {
		t.Fatal(err)
	}
	batches, rejected, _ := Split(req, nil)
	if rejected != 0 || len(batches) != 1 || batches[0].Spans != 6 || !batches[0].RootEnded {
		t.Fatalf("Split = %d batches (%+v), %d rejected", len(batches), batches, rejected)
	}
	rs, n, err := Assemble([][]byte{batches[0].Data, batches[0].Data})
	if err != nil || n != 6 {
		t.Fatalf("Assemble = %d spans, %v; want 6", n, err)
	}
	want := AppendJSON(nil, req.ResourceSpans)
	if got := AppendJSON(nil, rs); !bytes.Equal(got, want) {
		t.Errorf("assembled trace differs:\n%s\nwant\n%s", got, want)
	}
	if _, _, err := Assemble([][]byte{{0xff}}); err == nil {
		t.Error("Assemble of a corrupt batch succeeded")
	}
}

// FuzzDecodeRequest: any body decodes or fails with *BadRequestError,
// never panics; what decodes writes back to OTLP/JSON that decodes to
// the same message.
func FuzzDecodeRequest(f *testing.F) {
	for _, doc := range seedExports(f) {
		f.Add(doc, false)
		req, _ := DecodeRequest(doc, JSON)
		pb, _ := proto.Marshal(req)
		f.Add(pb, true)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102","kind":"SPAN_KIND_SERVER","status":{"code":"STATUS_CODE_ERROR"}}]}]}]}`), false)
	f.Fuzz(func(t *testing.T, body []byte, isProto bool) {
		enc := JSON
		if isProto {
			enc = Protobuf
		}
		req, err := DecodeRequest(body, enc)
		if err != nil {
			if _, ok := err.(*BadRequestError); !ok {
				t.Fatalf("error %T %v is not a *BadRequestError", err, err)
			}
			return
		}
		js := AppendJSON(nil, req.ResourceSpans)
		back, err := DecodeRequest(js, JSON)
		if err != nil {
			t.Fatalf("AppendJSON wrote what does not decode: %v\n%s", err, js)
		}
		// Unknown protobuf fields have no OTLP/JSON form: compare without.
		norm := func(rs []*tracepb.ResourceSpans) []byte {
			b, _ := proto.Marshal(&tracepb.TracesData{ResourceSpans: rs})
			var td tracepb.TracesData
			if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &td); err != nil {
				t.Fatal(err)
			}
			b, _ = proto.MarshalOptions{Deterministic: true}.Marshal(&td)
			return b
		}
		if !bytes.Equal(norm(req.ResourceSpans), norm(back.ResourceSpans)) {
			t.Fatalf("round trip changed the request:\n%s", js)
		}
		Split(req, nil)
	})
}

// TestDecodeRequestJSONErrors pins the messages of OTLP/JSON bodies that
// do not read: each placed by line and column, with the JSON pointer of
// the value (the member of another type, the value a syntax error is in).
func TestDecodeRequestJSONErrors(t *testing.T) {
	deep := strings.Repeat("[", jsondoc.MaxDepth+1) + strings.Repeat("]", jsondoc.MaxDepth+1)
	for _, tc := range []struct{ body, msg string }{
		{``, "malformed OTLP/JSON: line 1:1: empty document"},
		{`{"resourceSpans": [`, "malformed OTLP/JSON: line 1:20: unexpected end of JSON input (at /resourceSpans)"},
		{`{"resourceSpans": [}`, "malformed OTLP/JSON: line 1:20: invalid character '}' looking for beginning of value (at /resourceSpans/0)"},
		{`{"resourceSpans":[]} {}`, "malformed OTLP/JSON: line 1:22: invalid character '{' after top-level value"},
		{`{"resourceSpans":{}}`, "malformed OTLP/JSON: line 1:18: /resourceSpans: must be an array, got object"},
		{"{\n \"resourceSpans\": [\n  {\"scopeSpans\": [{\"spans\": [{\"name\": 5}]}]}\n ]\n}", "malformed OTLP/JSON: line 3:39: /resourceSpans/0/scopeSpans/0/spans/0/name: must be a string, got number"},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"flags": -1}]}]}]}`, "malformed OTLP/JSON: line 1:54: /resourceSpans/0/scopeSpans/0/spans/0/flags: must be an unsigned 32-bit integer, got number"},
		{`[1]`, "malformed OTLP/JSON: line 1:1: must be an object, got array"},
		{deep, "malformed OTLP/JSON: line 1:1001: exceeded max depth of 1000 nested arrays and objects (at /0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0…/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0)"},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`, `malformed OTLP/JSON: trace or span id "zz" is not hex`},
	} {
		_, err := DecodeRequest([]byte(tc.body), JSON)
		var be *BadRequestError
		if !errors.As(err, &be) || be.Msg != tc.msg {
			t.Errorf("%.40q: %v\nwant %s", tc.body, err, tc.msg)
		}
	}
}

// TestParseRuleJSONErrors pins the errors of rule documents that do not
// decode: placed at the member of another type with its line and column,
// a syntax error at the value it is in.
func TestParseRuleJSONErrors(t *testing.T) {
	for _, tc := range []struct{ rule, err string }{
		{`{"contract": "a", "priority": "x"}`, "invalid grading rule: /priority: line 1:31: must be an integer, got string"},
		{`{"contract": "a", "match": [{"attribute": 1}]}`, "invalid grading rule: /match/0/attribute: line 1:43: must be a string, got number"},
		{"{\"contract\": \"a\",\n \"labels\": {\"k\": 1}}", "invalid grading rule: /labels/k: line 2:18: must be a string, got number"},
		{`{"contract": "a",}`, "invalid grading rule: /: not JSON: line 1:18: invalid character '}' looking for beginning of object key string"},
		{`{"match": [{"attribute": "a",]}`, "invalid grading rule: /match/0: not JSON: line 1:30: invalid character ']' looking for beginning of object key string"},
		{`{"contract": "a", "bogus": 1}`, `invalid grading rule: /: unknown field "bogus"`},
	} {
		_, err := ParseRule([]byte(tc.rule))
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s: %v\nwant %s", tc.rule, err, tc.err)
		}
	}
}
