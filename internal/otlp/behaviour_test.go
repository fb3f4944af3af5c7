package otlp_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/toolscore/toolscore/internal/otlp"
	"github.com/toolscore/toolscore/internal/record"
)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// tid and sid make a trace id and a span id from small numbers.
func tid(n int) []byte {
	b, _ := hex.DecodeString(fmt.Sprintf("%032x", 0x1000+n))
	return b
}

func sid(n int) []byte {
	b, _ := hex.DecodeString(fmt.Sprintf("%016x", 0x100+n))
	return b
}

// toolSpan is an execute_tool span of trace t, child of span 1.
func toolSpan(t, n int, tool, args string) *tracepb.Span {
	return &tracepb.Span{TraceId: tid(t), SpanId: sid(n), ParentSpanId: sid(1), Name: "execute_tool " + tool,
		StartTimeUnixNano: uint64(1_700_000_000_000_000_000 + n), EndTimeUnixNano: uint64(1_700_000_000_000_000_000 + n + 1),
		Attributes: []*commonpb.KeyValue{str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", tool), str("gen_ai.tool.call.arguments", args)}}
}

// rootSpan is the invoke_agent root span (span 1) of trace t.
func rootSpan(t int, attrs ...*commonpb.KeyValue) *tracepb.Span {
	return &tracepb.Span{TraceId: tid(t), SpanId: sid(1), Name: "invoke_agent", StartTimeUnixNano: 1_700_000_000_000_000_000,
		EndTimeUnixNano: 1_700_000_000_000_000_900, Attributes: append([]*commonpb.KeyValue{str("gen_ai.operation.name", "invoke_agent")}, attrs...)}
}

func export(service string, spans ...*tracepb.Span) []byte {
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", service)}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "test"}, Spans: spans}},
	}}}
	b, _ := proto.Marshal(req)
	return b
}

func hexID(t int) string { return hex.EncodeToString(tid(t)) }

// TestExportHTTP checks the OTLP/HTTP answers: success in the request's
// encoding, partial success for invalid spans, 400 for malformed bodies
// (as google.rpc.Status), 415 and 413.
func TestExportHTTP(t *testing.T) {
	e := newEnv(t, otlp.Config{MaxBodyBytes: 4096})
	pb := "application/x-protobuf"

	code, h, body := e.do("POST", "/v1/traces", pb, export("svc", rootSpan(1)))
	if code != 200 || h.Get("Content-Type") != pb || len(body) != 0 {
		t.Errorf("protobuf export = %d %s %x, want 200 with an empty ExportTraceServiceResponse", code, h.Get("Content-Type"), body)
	}
	code, h, body = e.do("POST", "/v1/traces", "application/json",
		[]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"`+hexID(2)+`","spanId":"0000000000000101","name":"x","kind":1}]}]}]}`))
	if code != 200 || h.Get("Content-Type") != "application/json" || string(body) != "{}" {
		t.Errorf("JSON export = %d %s %s, want 200 {}", code, h.Get("Content-Type"), body)
	}

	// Partial success: one span without a valid span id, one all-zero trace id.
	bad := rootSpan(3)
	bad.SpanId = []byte{1, 2}
	zero := rootSpan(3)
	zero.TraceId = make([]byte, 16)
	code, _, body = e.do("POST", "/v1/traces", pb, export("svc", rootSpan(4), bad, zero))
	var resp coltracepb.ExportTraceServiceResponse
	if err := proto.Unmarshal(body, &resp); code != 200 || err != nil {
		t.Fatalf("partial export = %d %v", code, err)
	}
	if ps := resp.GetPartialSuccess(); ps.GetRejectedSpans() != 2 || !strings.Contains(ps.GetErrorMessage(), "2 spans rejected; the first: a span of trace") {
		t.Errorf("partial success = %v", ps)
	}
	code, _, body = e.do("POST", "/v1/traces", "application/json", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"`+hexID(5)+`","spanId":"00"}]}]}]}`))
	if code != 200 || string(body) != `{"partialSuccess":{"rejectedSpans":"1","errorMessage":"a span of trace 00000000000000000000000000001005 has a span id of 1 bytes, want 8"}}` {
		t.Errorf("JSON partial export = %d %s", code, body)
	}

	// gzip, both encodings.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(export("svc", rootSpan(6)))
	zw.Close()
	if code, _, body := e.do("POST", "/v1/traces", pb, gz.Bytes(), "Content-Encoding", "gzip"); code != 200 {
		t.Errorf("gzip export = %d %s", code, body)
	}

	for _, tc := range []struct {
		name, ct, encoding string
		body               []byte
		code               int
		msg                string
	}{
		{"bad protobuf", pb, "", []byte{0x0a, 0xff, 0x01}, 400, "malformed protobuf ExportTraceServiceRequest"},
		{"bad JSON", "application/json", "", []byte(`{"resourceSpans": [`), 400, "malformed OTLP/JSON: line 1:20: unexpected end of JSON input (at /resourceSpans)"},
		{"JSON id not hex", "application/json", "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), 400, `malformed OTLP/JSON: trace or span id "zz" is not hex`},
		{"JSON wrong type", "application/json", "", []byte(`{"resourceSpans":{}}`), 400, "malformed OTLP/JSON: line 1:18: /resourceSpans: must be an array, got object"},
		{"bad gzip", pb, "gzip", []byte("not gzip"), 400, "gzip:"},
		{"media type", "text/plain", "", []byte("x"), 415, "unsupported media type: Content-Type text/plain"},
		{"encoding", pb, "br", []byte("x"), 415, `unsupported content encoding: Content-Encoding "br"`},
		{"too large", pb, "", make([]byte, 5000), 413, "the body exceeds 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.encoding != "" {
				hdr = []string{"Content-Encoding", tc.encoding}
			}
			code, h, body := e.do("POST", "/v1/traces", tc.ct, tc.body, hdr...)
			if code != tc.code {
				t.Fatalf("status = %d, want %d: %q", code, tc.code, body)
			}
			var msg string
			if h.Get("Content-Type") == "application/json" {
				var st struct {
					Code    int
					Message string
				}
				if err := json.Unmarshal(body, &st); err != nil || st.Code != 3 {
					t.Fatalf("body %s is not a google.rpc.Status with code 3", body)
				}
				msg = st.Message
			} else {
				var st status.Status
				if err := proto.Unmarshal(body, &st); err != nil || st.Code != 3 {
					t.Fatalf("body %x is not a google.rpc.Status with code 3: %v", body, err)
				}
				msg = st.Message
			}
			if !strings.HasPrefix(msg, tc.msg) {
				t.Errorf("message = %q, want it to start with %q", msg, tc.msg)
			}
		})
	}
	// An ingest key may export; no key is 401 and a read-only key 403,
	// both problem+json; the ingest key cannot read traces.
	if code, _, body := e.do("POST", "/v1/traces", pb, export("svc", rootSpan(7)), "Authorization", "Bearer "+e.ingest); code != 200 {
		t.Errorf("export with an ingest key = %d %s", code, body)
	}
	if code, h, _ := e.do("POST", "/v1/traces", pb, export("svc", rootSpan(8)), "Authorization", ""); code != 401 || h.Get("Content-Type") != "application/problem+json" {
		t.Errorf("export without a key = %d %s, want 401 problem+json", code, h.Get("Content-Type"))
	}
	if code, _, body := e.do("GET", "/v1/traces/"+hexID(7), "", nil, "Authorization", "Bearer "+e.ingest); code != 403 || !strings.Contains(string(body), `"missing_scope":"read"`) {
		t.Errorf("GET trace with an ingest key = %d %s, want 403 missing read", code, body)
	}
	if n := e.metric("toolscore_otlp_spans_rejected_total"); n != 3 {
		t.Errorf("rejected spans = %v, want 3", n)
	}
	if n := e.metric("toolscore_otlp_spans_received_total"); n != 5 {
		t.Errorf("received spans = %v, want 5", n)
	}
}

// TestExportBusy: past MaxExports requests at once the answer is 429
// with Retry-After and RESOURCE_EXHAUSTED, which exporters retry.
func TestExportBusy(t *testing.T) {
	e := newEnv(t, otlp.Config{MaxExports: 1})
	// Hold the only export slot with a request whose body has not all
	// arrived.
	held := export("svc", rootSpan(2))
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	req := httptest.NewRequest("POST", "/v1/traces", pr)
	req.Header.Set("Content-Type", "application/x-protobuf")
	heldRec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		e.svc.Export(heldRec, req, record.DefaultProject)
		close(done)
	}()
	pw.Write(held[:4]) // returns once Export reads it: the slot is taken
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(export("svc", rootSpan(1))))
	r.Header.Set("Content-Type", "application/x-protobuf")
	e.svc.Export(rec, r, record.DefaultProject)
	var st status.Status
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || proto.Unmarshal(rec.Body.Bytes(), &st) != nil || st.Code != 8 {
		t.Errorf("second export = %d, Retry-After %q, body %x; want 429, 1 and RESOURCE_EXHAUSTED", rec.Code, rec.Header().Get("Retry-After"), rec.Body.Bytes())
	}
	pw.Write(held[4:])
	pw.Close()
	<-done
	if heldRec.Code != 200 {
		t.Errorf("held export = %d %s, want 200", heldRec.Code, heldRec.Body)
	}
}

// TestRules covers matching: the first rule in force by priority, a
// newer version replacing an older one, the contract from an attribute,
// unmatched traces, traces with no tool call, an unknown contract.
func TestRules(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.contract("other", "../../examples/contracts/contract.json")
	e.rule("by-attribute", `{"priority": 1, "match": [{"attribute": "toolscore.contract", "exists": true}], "contract_attribute": "toolscore.contract"}`)
	e.rule("travel", `{"priority": 5, "match": [{"attribute": "service.name", "equals": "travel", "in": "resource"}], "contract": "nope"}`)
	e.rule("travel", `{"priority": 5, "match": [{"attribute": "service.name", "equals": "travel", "in": "resource"}], "contract": "flights"}`)
	e.rule("empty-ok", `{"priority": 9, "match": [{"attribute": "service.name", "equals": "quiet", "in": "resource"}], "contract": "flights", "grade_without_tool_calls": true}`)
	e.rule("unknown", `{"priority": 9, "match": [{"attribute": "service.name", "equals": "lost"}], "contract": "missing@3"}`)
	e.rule("disabled", `{"enabled": false, "contract": "flights"}`)
	e.rule("never", `{"match": [{"attribute": "service.name", "regex": "^travel$", "in": "span"}], "contract": "other"}`)

	call := func(t int) *tracepb.Span { return toolSpan(t, 2, "search_flights", `{"destination":"LIS"}`) }
	send := func(service string, spans ...*tracepb.Span) {
		if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export(service, spans...)); code != 200 {
			t.Fatalf("export = %d %s", code, body)
		}
	}
	send("travel", rootSpan(1), call(1))
	send("travel", rootSpan(2, str("toolscore.contract", "other@1")), call(2))
	send("elsewhere", rootSpan(3), call(3))
	send("travel", rootSpan(4))
	send("quiet", rootSpan(5))
	send("lost", rootSpan(6), call(6))

	for _, tc := range []struct {
		trace          int
		state, rule    string
		contract       string
		reasonContains string
	}{
		{1, "graded", "travel", "flights", ""},
		{2, "graded", "by-attribute", "other", ""},
		{3, "unmatched", "", "", "no grading rule matches"},
		{4, "no_tool_calls", "travel", "", "no tool call"},
		{5, "graded", "empty-ok", "flights", ""},
		{6, "failed", "unknown", "", "unknown-contract: no registry contract missing@3"},
	} {
		st := e.waitFinal(hexID(tc.trace), 0)
		if st.State != tc.state || st.Rule != tc.rule || !strings.Contains(st.Reason, tc.reasonContains) || (tc.state == "graded") != (st.ResultID != "") {
			t.Errorf("trace %d = %+v, want state %s by rule %q (reason %q)", tc.trace, st, tc.state, tc.rule, tc.reasonContains)
			continue
		}
		if tc.contract != "" {
			var res struct {
				Contract struct{ Name string }
			}
			e.mustJSON("GET", "/v1/evaluations/"+st.ResultID, nil, 200, &res)
			if res.Contract.Name != tc.contract {
				t.Errorf("trace %d graded against %q, want %q", tc.trace, res.Contract.Name, tc.contract)
			}
		}
	}
	for state, want := range map[string]float64{"graded": 3, "unmatched": 1, "no_tool_calls": 1, "failed": 1} {
		if n := e.metric("toolscore_otlp_traces_finished_total", "state", state); n != want {
			t.Errorf("finished %s = %v, want %v", state, n, want)
		}
	}
	// The spans of finished traces are gone (nothing is kept by default).
	var n int64
	if err := e.db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM otlp_spans`).Scan(&n); err != nil || n != 0 {
		t.Errorf("span batches left = %d (%v), want 0", n, err)
	}
}

// TestRuleRegistry checks the rule routes: versions, identical bodies,
// validation with pointers (the options as POST /v1/evaluations checks
// them).
func TestRuleRegistry(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	var v struct {
		Name    string
		Version int
		Rule    map[string]any
	}
	e.mustJSON("POST", "/v1/rules/a/versions", `{"contract": "flights"}`, 201, &v)
	e.mustJSON("POST", "/v1/rules/a/versions", `{ "contract" : "flights" }`, 200, &v)
	if v.Version != 1 {
		t.Errorf("identical body = version %d, want 1", v.Version)
	}
	e.mustJSON("POST", "/v1/rules/a/versions", `{"contract": "flights@2"}`, 201, &v)
	e.mustJSON("GET", "/v1/rules/a/versions/latest", nil, 200, &v)
	if v.Version != 2 || v.Rule["contract"] != "flights@2" {
		t.Errorf("latest = %+v", v)
	}
	var list struct {
		Items []struct {
			Name    string
			Version int
		}
	}
	e.mustJSON("GET", "/v1/rules/a/versions", nil, 200, &list)
	if len(list.Items) != 2 {
		t.Errorf("versions = %+v", list)
	}
	e.mustJSON("POST", "/v1/rules/b/versions", `{"contract": "x"}`, 201, nil)
	e.mustJSON("GET", "/v1/rules?limit=1", nil, 200, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "a" || list.Items[0].Version != 2 {
		t.Errorf("rules = %+v", list)
	}
	e.mustJSON("GET", "/v1/rules/zzz/versions/1", nil, 404, nil)
	for _, tc := range []struct {
		body string
		want []string // pointer: message prefix
	}{
		{`{}`, []string{"/contract: required"}},
		{`{"contract": "a@b"}`, []string{`/contract: "a@b" is not a registry contract reference`}},
		{`{"contract": "a", "match": [{"attribute": "x", "regex": "("}, {"equals": "y"}, {"attribute": "z", "in": "trace", "exists": true}]}`,
			[]string{"/match/0/regex: error parsing regexp", "/match/1/attribute: required", "/match/2/in: must be resource, span or any"}},
		{`{"contract": "a", "match": [{"attribute": "x"}, {"attribute": "y", "equals": "1", "exists": true}]}`,
			[]string{"/match/0: give exactly one of equals, regex and exists", "/match/1: give exactly one"}},
		{`{"contract": "a", "options": {"min_score": 2, "strict": "yes"}}`, []string{"/options/strict: must be a boolean"}},
		{`{"contract": "a", "options": {"min_score": 2}}`, []string{"/options/min_score: must be in [0, 1]"}},
		{`{"contract": "a", "options": {"format": "nope"}}`, []string{`/options/format: unknown format "nope"`}},
		{`{"contract": "a", "options": {"forbidden": [{"tool": 3}]}}`, []string{"/options/forbidden/0/tool:"}},
		{`{"contract": "a", "options": {"task_id": "t"}}`, []string{"/options/task_id: unknown option"}},
		{`{"contract": "a", "labels": {"otel.x": "a"}}`, []string{"/labels/otel.x: a label key must be"}},
		{`{"contract": "a", "colour": "red"}`, []string{`: unknown field "colour"`}},
	} {
		code, _, body := e.do("POST", "/v1/rules/bad/versions", "application/json", []byte(tc.body))
		var p struct {
			Type   string
			Errors []struct{ Pointer, Message string }
		}
		if err := json.Unmarshal(body, &p); err != nil || code != 422 || p.Type != "https://toolscore.dev/problems/invalid-rule" {
			t.Errorf("%s = %d %s, want 422 invalid-rule", tc.body, code, body)
			continue
		}
		var got []string
		for _, fe := range p.Errors {
			got = append(got, fe.Pointer+": "+fe.Message)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.body, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tc.want[i]) {
				t.Errorf("%s: error %d = %q, want prefix %q", tc.body, i, got[i], tc.want[i])
			}
		}
	}
}

// TestLateSpans: a span arriving after its trace was graded is counted;
// by default nothing else happens; with LateSpans regrade the trace is
// graded again, as a regrade of its first result.
func TestLateSpans(t *testing.T) {
	for _, mode := range []string{otlp.LateIgnore, otlp.LateRegrade} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, otlp.Config{LateSpans: mode})
			e.contract("flights", "../../examples/contracts/contract.json")
			e.rule("all", `{"contract": "flights"}`)
			send := func(spans ...*tracepb.Span) {
				if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export("svc", spans...)); code != 200 {
					t.Fatalf("export = %d %s", code, body)
				}
			}
			send(rootSpan(1), toolSpan(1, 2, "search_flights", `{"destination":"LIS","date":"2026-12-01"}`))
			first := e.waitFinal(hexID(1), 1)
			send(toolSpan(1, 3, "book_flight", `{"flight_id":"FL-1"}`))
			if mode == otlp.LateIgnore {
				var st traceState
				e.mustJSON("GET", "/v1/traces/"+hexID(1), nil, 200, &st)
				if st.State != "graded" || st.LateSpans != 1 || st.Revision != 1 || st.ResultID != first.ResultID {
					t.Errorf("after a late span: %+v", st)
				}
			} else {
				second := e.waitFinal(hexID(1), 2)
				if second.State != "graded" || second.LateSpans != 1 || second.ResultID == first.ResultID {
					t.Fatalf("after a late span: %+v", second)
				}
				var res struct {
					RegradeOf  string                  `json:"regrade_of"`
					TraceCalls []struct{ Tool string } `json:"trace_calls"`
				}
				e.mustJSON("GET", "/v1/evaluations/"+second.ResultID, nil, 200, &res)
				if res.RegradeOf != first.ResultID || len(res.TraceCalls) != 2 {
					t.Errorf("regrade result = %+v, want a regrade of %s with 2 calls", res, first.ResultID)
				}
			}
			if n := e.metric("toolscore_otlp_late_spans_total"); n != 1 {
				t.Errorf("late spans = %v, want 1", n)
			}
		})
	}
}

// TestMaxAge: a trace whose root span never arrives is graded at the
// maximum age, flagged incomplete.
func TestMaxAge(t *testing.T) {
	e := newEnv(t, otlp.Config{Quiet: 100 * time.Millisecond, MaxAge: time.Second})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("all", `{"contract": "flights"}`)
	start := time.Now()
	if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export("svc", toolSpan(1, 2, "search_flights", `{}`))); code != 200 {
		t.Fatalf("export = %d %s", code, body)
	}
	st := e.waitFinal(hexID(1), 0)
	if took := time.Since(start); st.State != "graded" || !st.Incomplete || took < time.Second {
		t.Fatalf("trace = %+v after %s, want graded, incomplete, after the 1 s maximum age", st, took)
	}
	var res struct{ Labels map[string]string }
	e.mustJSON("GET", "/v1/evaluations/"+st.ResultID, nil, 200, &res)
	if res.Labels["otel.incomplete"] != "true" {
		t.Errorf("labels = %v, want otel.incomplete=true", res.Labels)
	}
	if n := e.metric("toolscore_otlp_traces_assembled_total", "trigger", "max_age"); n != 1 {
		t.Errorf("assembled at max age = %v, want 1", n)
	}
}

// TestJobRetriesOnlyFailedTraces: traces closed together are graded by
// one job; when grading one of them fails with a transient error, the
// others' results are committed at once and the job's next attempt
// grades only the failed one: each trace ends with exactly one result.
// The retry's grading of the failed trace waits until the test has seen
// the others graded and the failed one still closed.
func TestJobRetriesOnlyFailedTraces(t *testing.T) {
	e := newEnv(t, otlp.Config{Workers: 1})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("all", `{"contract": "flights"}`)
	var calls sync.Map // trace id -> number of gradings
	failing := hexID(2)
	retry := make(chan struct{})
	var retryOnce sync.Once
	letRetry := func() { retryOnce.Do(func() { close(retry) }) }
	t.Cleanup(letRetry)
	hook := func(body []byte) error {
		var b struct{ Labels map[string]string }
		if err := json.Unmarshal(body, &b); err != nil {
			return err
		}
		id := b.Labels["otel.trace_id"]
		n, _ := calls.LoadOrStore(id, new(atomic.Int32))
		switch k := n.(*atomic.Int32).Add(1); {
		case id == failing && k == 1:
			return errors.New("database unavailable")
		case id == failing:
			<-retry
		}
		return nil
	}
	e.beforeGrade.Store(&hook)
	var spans []*tracepb.Span
	for i := 1; i <= 3; i++ {
		spans = append(spans, rootSpan(i), toolSpan(i, 2, "search_flights", `{"destination":"LIS"}`))
	}
	if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export("svc", spans...)); code != 200 {
		t.Fatalf("export = %d %s", code, body)
	}
	first := e.waitFinal(hexID(1), 0)
	if st := e.waitFinal(hexID(3), 0); st.State != "graded" || first.State != "graded" {
		t.Fatalf("traces 1 and 3 = %+v, %+v; want graded", first, st)
	}
	// Graded before the failed trace's retry grades it.
	var st traceState
	e.mustJSON("GET", "/v1/traces/"+failing, nil, 200, &st)
	if st.State != "closed" {
		t.Errorf("failed trace right after the others = %+v, want closed (its retry pending)", st)
	}
	letRetry()
	if st = e.waitFinal(failing, 0); st.State != "graded" {
		t.Fatalf("failed trace after its retry = %+v, want graded", st)
	}
	for i := 1; i <= 3; i++ {
		n, _ := calls.Load(hexID(i))
		want := int32(1)
		if hexID(i) == failing {
			want = 2
		}
		if got := n.(*atomic.Int32).Load(); got != want {
			t.Errorf("trace %d graded %d times, want %d", i, got, want)
		}
	}
	var results int64
	if err := e.db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM results`).Scan(&results); err != nil || results != 3 {
		t.Errorf("results = %d (%v), want 3", results, err)
	}
	var jobs []int64
	rows, err := e.db.Pool().Query(t.Context(), `SELECT jsonb_array_length(args->'traces') FROM river_job WHERE kind = 'otlp_traces'`)
	if err == nil {
		jobs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil || len(jobs) != 1 || jobs[0] != 3 {
		t.Errorf("grading jobs' trace counts = %v (%v), want one job of 3 traces", jobs, err)
	}
}

// TestExportMessageLimit: a 13 KB gzipped export of 7,000,000 empty spans
// (14 MB decompressed, under the body limit) is 413 with a
// google.rpc.Status, not 1.7 GB of decoded spans.
func TestExportMessageLimit(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	scope := bytes.Repeat([]byte{0x12, 0x00}, 7_000_000)
	res := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), scope)
	body := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	code, _, out := e.do("POST", "/v1/traces", "application/x-protobuf", gz.Bytes(), "Content-Encoding", "gzip")
	var st status.Status
	if err := proto.Unmarshal(out, &st); err != nil || code != 413 || st.Code != 3 ||
		st.Message != "body too large: the export holds more than 524288 messages (spans, attributes, values); send fewer spans per export" {
		t.Errorf("export of 7,000,000 empty spans = %d %v (%v), want 413 INVALID_ARGUMENT", code, &st, err)
	}
}

// TestRegradeKeptTraces: with KeepUnmatched, a trace no rule matched
// keeps its spans; once a matching rule is registered, POST
// /v1/traces/regrade grades it (revision 2, a result of its own), while a
// trace still unmatched goes back to unmatched with its spans kept.
// Without KeepUnmatched there is nothing to regrade.
func TestRegradeKeptTraces(t *testing.T) {
	e := newEnv(t, otlp.Config{KeepUnmatched: true})
	e.contract("flights", "../../examples/contracts/contract.json")
	send := func(service string, spans ...*tracepb.Span) {
		if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export(service, spans...)); code != 200 {
			t.Fatalf("export = %d %s", code, body)
		}
	}
	send("travel", rootSpan(1, str("toolscore.task_id", "kept-1")), toolSpan(1, 2, "search_flights", `{"destination":"LIS"}`))
	send("elsewhere", rootSpan(2), toolSpan(2, 2, "search_flights", `{"destination":"LIS"}`))
	for _, id := range []string{hexID(1), hexID(2)} {
		if st := e.waitFinal(id, 1); st.State != "unmatched" || st.ResultID != "" {
			t.Fatalf("trace %s before any rule = %+v, want unmatched", id, st)
		}
	}
	e.rule("travel", `{"match": [{"attribute": "service.name", "equals": "travel", "in": "resource"}], "contract": "flights", "task_id": "toolscore.task_id"}`)
	// Registering a rule grades nothing by itself.
	var st traceState
	e.mustJSON("GET", "/v1/traces/"+hexID(1), nil, 200, &st)
	if st.State != "unmatched" || st.Revision != 1 {
		t.Errorf("trace 1 after the rule, before a regrade = %+v, want unmatched at revision 1", st)
	}
	var out struct {
		Queued   int      `json:"queued"`
		More     bool     `json:"more"`
		Before   string   `json:"before"`
		TraceIDs []string `json:"trace_ids"`
	}
	e.mustJSON("POST", "/v1/traces/regrade", `{}`, 200, &out)
	slices.Sort(out.TraceIDs)
	if out.Queued != 2 || out.More || len(out.TraceIDs) != 2 || out.TraceIDs[0] != hexID(1) || out.TraceIDs[1] != hexID(2) {
		t.Fatalf("regrade = %+v, want traces 1 and 2 queued", out)
	}
	graded := e.waitFinal(hexID(1), 2)
	if graded.State != "graded" || graded.Rule != "travel" || graded.ResultID == "" {
		t.Fatalf("trace 1 after the regrade = %+v, want graded by rule travel at revision 2", graded)
	}
	var res struct {
		TaskID    string `json:"task_id"`
		RegradeOf string `json:"regrade_of"`
		Labels    map[string]string
	}
	e.mustJSON("GET", "/v1/evaluations/"+graded.ResultID, nil, 200, &res)
	if res.TaskID != "kept-1" || res.RegradeOf != "" || res.Labels["otel.trace_id"] != hexID(1) {
		t.Errorf("result = %+v, want task kept-1, not a regrade of anything", res)
	}
	still := e.waitFinal(hexID(2), 2)
	if still.State != "unmatched" {
		t.Errorf("trace 2 after the regrade = %+v, want unmatched again", still)
	}
	// The same request again: both finished after its before.
	e.mustJSON("POST", "/v1/traces/regrade", fmt.Sprintf(`{"before": %q}`, out.Before), 200, &out)
	if out.Queued != 0 {
		t.Errorf("second regrade with the first's before = %+v, want none", out)
	}
	// Trace 2, still kept, by id.
	e.mustJSON("POST", "/v1/traces/regrade", fmt.Sprintf(`{"trace_ids": [%q, %q]}`, hexID(2), hexID(9)), 200, &out)
	if out.Queued != 1 || out.TraceIDs[0] != hexID(2) {
		t.Errorf("regrade by id = %+v, want trace 2", out)
	}
	if st := e.waitFinal(hexID(2), 3); st.State != "unmatched" {
		t.Errorf("trace 2 = %+v, want unmatched at revision 3", st)
	}
	if n := e.metric("toolscore_otlp_traces_assembled_total", "trigger", "regrade"); n != 3 {
		t.Errorf("traces closed by regrades = %v, want 3", n)
	}
	var results int64
	if err := e.db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM results`).Scan(&results); err != nil || results != 1 {
		t.Errorf("results = %d (%v), want 1", results, err)
	}

	code, _, body := e.do("POST", "/v1/traces/regrade", "application/json",
		[]byte(`{"states": ["open", "graded"], "trace_ids": ["xyz"], "before": "yesterday", "limit": 0}`))
	var p struct {
		Errors []struct{ Pointer, Message string }
	}
	if err := json.Unmarshal(body, &p); err != nil || code != 422 || len(p.Errors) != 4 ||
		p.Errors[0].Pointer != "/states/0" || p.Errors[1].Pointer != "/trace_ids/0" || p.Errors[2].Pointer != "/before" || p.Errors[3].Pointer != "/limit" {
		t.Errorf("invalid regrade = %d %s, want 422 naming /states/0, /trace_ids/0, /before and /limit", code, body)
	}

	// Dropped at once by default: nothing to regrade.
	d := newEnv(t, otlp.Config{})
	if code, _, body := d.do("POST", "/v1/traces", "application/x-protobuf", export("travel", rootSpan(1), toolSpan(1, 2, "search_flights", `{}`))); code != 200 {
		t.Fatalf("export = %d %s", code, body)
	}
	if st := d.waitFinal(hexID(1), 1); st.State != "unmatched" {
		t.Fatalf("trace = %+v, want unmatched", st)
	}
	d.mustJSON("POST", "/v1/traces/regrade", `{}`, 200, &out)
	if out.Queued != 0 || out.More || out.TraceIDs == nil {
		t.Errorf("regrade without kept spans = %+v, want none queued (and an empty list)", out)
	}
}

// TestNoToolContent: a matched trace whose spans hold no tool content at
// all (plain HTTP spans, no GenAI attribute) is not graded unless its
// rule says grade_without_tool_calls; then it is graded as a 0-call
// trace.
func TestNoToolContent(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("plain", `{"match": [{"attribute": "service.name", "equals": "plain", "in": "resource"}], "contract": "flights"}`)
	e.rule("zero", `{"match": [{"attribute": "service.name", "equals": "zero", "in": "resource"}], "contract": "flights", "grade_without_tool_calls": true}`)
	httpSpans := func(tr int) []*tracepb.Span {
		return []*tracepb.Span{
			{TraceId: tid(tr), SpanId: sid(1), Name: "GET /search", StartTimeUnixNano: 1_700_000_000_000_000_000, EndTimeUnixNano: 1_700_000_000_000_000_900,
				Attributes: []*commonpb.KeyValue{str("http.request.method", "GET"), str("url.path", "/search")}},
			{TraceId: tid(tr), SpanId: sid(2), ParentSpanId: sid(1), Name: "SELECT flights", StartTimeUnixNano: 1_700_000_000_000_000_100, EndTimeUnixNano: 1_700_000_000_000_000_200,
				Attributes: []*commonpb.KeyValue{str("db.system.name", "postgresql")}},
		}
	}
	for i, service := range []string{"plain", "zero"} {
		if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export(service, httpSpans(i+1)...)); code != 200 {
			t.Fatalf("export = %d %s", code, body)
		}
	}
	st := e.waitFinal(hexID(1), 0)
	if st.State != "no_tool_calls" || st.Rule != "plain" || st.ResultID != "" || st.Reason != "the trace has no tool call and the rule does not grade such traces" {
		t.Errorf("plain trace = %+v, want no_tool_calls by rule plain, no result", st)
	}
	st = e.waitFinal(hexID(2), 0)
	if st.State != "graded" || st.Rule != "zero" || st.ResultID == "" {
		t.Fatalf("zero trace = %+v, want graded by rule zero", st)
	}
	var res struct {
		TraceCalls []any `json:"trace_calls"`
		Contract   struct{ Name string }
	}
	e.mustJSON("GET", "/v1/evaluations/"+st.ResultID, nil, 200, &res)
	if res.TraceCalls == nil || len(res.TraceCalls) != 0 || res.Contract.Name != "flights" {
		t.Errorf("result = %+v, want 0 trace calls graded against flights", res)
	}
	for state, want := range map[string]float64{"graded": 1, "no_tool_calls": 1, "unmatched": 0, "failed": 0} {
		if n := e.metric("toolscore_otlp_traces_finished_total", "state", state); n != want {
			t.Errorf("finished %s = %v, want %v", state, n, want)
		}
	}
}

// TestRuleRegexWork: a rule's regex work on a trace is, per regex
// condition, the text length of every attribute it tests times the
// pattern's compiled instructions (`^x+$` compiles to 6, `a|b` to 3).
func TestRuleRegexWork(t *testing.T) {
	num := &commonpb.KeyValue{Key: "n", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 12345}}}
	list := &commonpb.KeyValue{Key: "n", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}}
	rs := []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "travel"), str("blob", "0123456789")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
			rootSpan(1, str("blob", "abcd"), num),
			{TraceId: tid(1), SpanId: sid(2), ParentSpanId: sid(1), Attributes: []*commonpb.KeyValue{str("blob", "ab"), list}},
		}}},
	}}
	attrs := otlp.TraceAttrs(rs)
	for _, tc := range []struct {
		rule string
		want int64
	}{
		{`{"contract": "a"}`, 0},
		{`{"contract": "a", "match": [{"attribute": "service.name", "equals": "travel"}, {"attribute": "blob", "exists": true}]}`, 0},
		{`{"contract": "a", "match": [{"attribute": "blob", "regex": "^x+$"}]}`, 6 * (4 + 2 + 10)},
		{`{"contract": "a", "match": [{"attribute": "blob", "regex": "^x+$", "in": "span"}]}`, 6 * (4 + 2)},
		{`{"contract": "a", "match": [{"attribute": "blob", "regex": "^x+$", "in": "resource"}]}`, 6 * 10},
		{`{"contract": "a", "match": [{"attribute": "blob", "regex": "^x+$", "in": "resource"}, {"attribute": "n", "regex": "a|b"}]}`, 6*10 + 3*5},
		{`{"contract": "a", "match": [{"attribute": "missing", "regex": "^x+$"}]}`, 0},
		{`{"enabled": false, "contract": "a", "match": [{"attribute": "blob", "regex": "^x+$"}]}`, 0},
	} {
		r, err := otlp.ParseRule([]byte(tc.rule))
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		if got := r.RegexWork(attrs); got != tc.want {
			t.Errorf("%s: RegexWork = %d, want %d", tc.rule, got, tc.want)
		}
	}
}

// TestRuleRegexWorkLimit: a trace on which the regex conditions of the
// rules tried before one matches could take more than engine.MaxRegexWork
// steps is failed naming the rule that crosses it, before any of its
// matching; a trace matched by an earlier rule, or with a short value,
// is graded.
func TestRuleRegexWorkLimit(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("early", `{"priority": 1, "match": [{"attribute": "service.name", "equals": "early", "in": "resource"}], "contract": "flights"}`)
	e.rule("bomb", `{"priority": 5, "match": [{"attribute": "blob", "regex": "[a-z]{1,1000}x"}], "contract": "flights"}`)
	e.rule("late", `{"priority": 9, "match": [{"attribute": "service.name", "equals": "late", "in": "resource"}], "contract": "flights"}`)
	long := strings.Repeat("a", 120_000)
	for i, tc := range []struct{ service, blob string }{{"early", long}, {"late", long}, {"late", "abcx"}} {
		tr := i + 1
		if code, _, body := e.do("POST", "/v1/traces", "application/x-protobuf", export(tc.service, rootSpan(tr, str("blob", tc.blob)), toolSpan(tr, 2, "search_flights", `{"destination":"LIS"}`))); code != 200 {
			t.Fatalf("export = %d %s", code, body)
		}
	}
	// `[a-z]{1,1000}x` compiles to 2,002 instructions: 2,002 x 120,000.
	const reason = `matching the regex conditions of the grading rules up to "bomb" against this trace's attributes could take 240240000 steps (attribute bytes times pattern instructions), over the limit of 20000000: use shorter patterns or test shorter attributes`
	for _, tc := range []struct {
		trace       int
		state, rule string
		reason      string
	}{
		{1, "graded", "early", ""},
		{2, "failed", "", reason},
		{3, "graded", "bomb", ""},
	} {
		st := e.waitFinal(hexID(tc.trace), 0)
		if st.State != tc.state || st.Rule != tc.rule || st.Reason != tc.reason || (tc.state == "graded") != (st.ResultID != "") {
			t.Errorf("trace %d = %+v, want state %s by rule %q, reason %q", tc.trace, st, tc.state, tc.rule, tc.reason)
		}
	}
	for state, want := range map[string]float64{"graded": 2, "unmatched": 0, "no_tool_calls": 0, "failed": 1} {
		if n := e.metric("toolscore_otlp_traces_finished_total", "state", state); n != want {
			t.Errorf("finished %s = %v, want %v", state, n, want)
		}
	}
}
