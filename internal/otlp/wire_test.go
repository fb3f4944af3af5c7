package otlp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
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
