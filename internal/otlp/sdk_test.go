package otlp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolscore/toolscore/internal/otlp"
)

// fakeAgent is an instrumented agent: it "books a flight" with the
// OpenTelemetry GenAI conventions, as an agent framework's
// instrumentation would record it: an invoke_agent root span, chat spans
// for the model calls and execute_tool spans for the tools, one of them
// failing. It returns the trace id.
func fakeAgent(ctx context.Context, tp trace.TracerProvider, task string) string {
	tr := tp.Tracer("fake-agent", trace.WithInstrumentationVersion("1.0.0"))
	ctx, root := tr.Start(ctx, "invoke_agent travel", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", "travel"),
		attribute.String("toolscore.task_id", task),
		attribute.String("session.id", "run-42"),
	))
	chat := func(out string) {
		_, s := tr.Start(ctx, "chat gpt-4o", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.output.messages", out)))
		s.End()
	}
	tool := func(name, id, args, result string, fail error) {
		_, s := tr.Start(ctx, "execute_tool "+name, trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name),
			attribute.String("gen_ai.tool.call.id", id),
			attribute.String("gen_ai.tool.call.arguments", args)))
		if fail != nil {
			s.RecordError(fail)
			s.SetStatus(codes.Error, fail.Error())
		} else {
			s.SetAttributes(attribute.String("gen_ai.tool.call.result", result))
		}
		s.End()
	}
	chat(`[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"search_flights"}]}]`)
	tool("search_flights", "c1", `{"destination":"LIS","date":"2026-12-12"}`, `[{"id":"FL-204"}]`, nil)
	tool("get_weather", "c2", `{"city":"Lisbon"}`, "", fmt.Errorf("weather service down"))
	tool("book_flight", "c3", `{"flight_id":"FL-204"}`, `{"booking":"B-1"}`, nil)
	chat(`[{"role":"assistant","parts":[{"type":"text","content":"Booked FL-204 to Lisbon."}]}]`)
	root.End()
	return root.SpanContext().TraceID().String()
}

// capture is an OTLP/HTTP endpoint that keeps the bodies it receives.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// TestSDKExporter points the OpenTelemetry Go SDK's OTLP/HTTP exporter
// (protobuf and JSON, gzip and not) at the server, runs the fake agent,
// and checks that the trace is graded by the rule, with the identifiers
// it takes from the attributes, and that the result equals POST
// /v1/evaluations of the spans as the same SDK writes them in OTLP/JSON
// (captured by a second exporter).
func TestSDKExporter(t *testing.T) {
	e := newEnv(t, otlp.Config{})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("travel", `{"match": [{"attribute": "service.name", "equals": "travel-agent", "in": "resource"},
		{"attribute": "gen_ai.agent.name", "regex": "^trav"}],
		"contract": "flights@1", "task_id": "toolscore.task_id", "run_id": "session.id", "agent": "gen_ai.agent.name",
		"labels": {"env": "deployment.environment.name"}}`)
	for _, tc := range []struct {
		name string
		opts []otlptracehttp.Option
	}{
		{"protobuf", nil},
		{"protobuf-gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
		{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}},
		{"json-gzip", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON), otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			exp, err := otlptracehttp.New(ctx, append([]otlptracehttp.Option{otlptracehttp.WithEndpointURL(e.http.URL + "/v1/traces"),
				otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + e.ingest})}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			var cap capture
			cs := httptest.NewServer(&cap)
			defer cs.Close()
			capExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cs.URL+"/v1/traces"), otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
			if err != nil {
				t.Fatal(err)
			}
			res := resource.NewSchemaless(attribute.String("service.name", "travel-agent"), attribute.String("deployment.environment.name", "test"))
			// Small batches: the spans of one trace arrive over several
			// export requests.
			tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
				sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(2)),
				sdktrace.WithBatcher(capExp))
			traceID := fakeAgent(ctx, tp, "lisbon-"+tc.name)
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatalf("exporter: %v", err)
			}
			st := e.waitFinal(traceID, 0)
			if st.State != "graded" || st.Spans != 6 || st.Rule != "travel" || st.Incomplete {
				t.Fatalf("trace = %+v, want graded with 6 spans by rule travel", st)
			}
			var got struct {
				TaskID     string `json:"task_id"`
				RunID      string `json:"run_id"`
				Agent      string
				Labels     map[string]string
				Contract   struct{ Name string }
				TraceCalls []struct {
					Tool  string
					Error any
				} `json:"trace_calls"`
				FinalAnswer string `json:"final_answer"`
			}
			_, _, stored := e.do("GET", "/v1/evaluations/"+st.ResultID, "", nil)
			if err := json.Unmarshal(stored, &got); err != nil {
				t.Fatal(err)
			}
			var tools []string
			for _, c := range got.TraceCalls {
				tools = append(tools, fmt.Sprintf("%s error=%v", c.Tool, c.Error))
			}
			wantTools := []string{"search_flights error=<nil>", "get_weather error=weather service down", "book_flight error=<nil>"}
			if diff := cmp.Diff(wantTools, tools); diff != "" {
				t.Errorf("trace calls (-want +got):\n%s", diff)
			}
			if got.TaskID != "lisbon-"+tc.name || got.RunID != "run-42" || got.Agent != "travel" || got.Contract.Name != "flights" ||
				got.FinalAnswer != "Booked FL-204 to Lisbon." || got.Labels["env"] != "test" || got.Labels["otel.trace_id"] != traceID {
				t.Errorf("result = %s", stored)
			}
			doc := bytes.Join(cap.bodies, []byte("\n"))
			req := fmt.Sprintf(`{"contract": "flights@1", "trace": %s, "task_id": %q, "run_id": "run-42", "agent": "travel",
				"labels": {"otel.trace_id": %q, "env": "test"}}`, traceField(doc), "lisbon-"+tc.name, traceID)
			code, _, posted := e.do("POST", "/v1/evaluations?store=false", "application/json", []byte(req))
			if code != 200 {
				t.Fatalf("POST /v1/evaluations = %d: %s", code, posted)
			}
			if diff := cmp.Diff(withoutIdentity(t, posted), withoutIdentity(t, stored)); diff != "" {
				t.Errorf("stored result differs from POST /v1/evaluations (-posted +stored):\n%s", diff)
			}
		})
	}
	if n := e.metric("toolscore_otlp_traces_finished_total", "state", "graded"); n != 4 {
		t.Errorf("traces graded = %v, want 4", n)
	}
	if n := e.metric("toolscore_otlp_spans_received_total"); n != 24 {
		t.Errorf("spans received = %v, want 24", n)
	}
	if n := e.metric("toolscore_otlp_traces_assembled_total", "trigger", "complete"); n != 4 {
		t.Errorf("traces assembled = %v, want 4", n)
	}
	if n := e.metric("toolscore_otlp_assembly_lag_seconds"); n != 4 {
		t.Errorf("lag observations = %v, want 4", n)
	}
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// firstRead closes c at its first Read.
type firstRead struct {
	io.ReadCloser
	c    chan struct{}
	once sync.Once
}

func (r *firstRead) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.c) })
	return r.ReadCloser.Read(p)
}

// TestSDKExporterRetries429 points the OpenTelemetry Go SDK's OTLP/HTTP
// exporter, with its retries on, at a server with room for one export at
// a time, held by a slow export: the SDK's first export is answered 429
// with Retry-After, which frees the slot, and the exporter retries after
// it and delivers every span (Shutdown reports no error); the trace is
// graded whole.
func TestSDKExporterRetries429(t *testing.T) {
	e := newEnv(t, otlp.Config{MaxExports: 1})
	e.contract("flights", "../../examples/contracts/contract.json")
	e.rule("travel", `{"contract": "flights@1"}`)
	api := e.api.Handler()
	var mu sync.Mutex
	var sdkCodes []int
	release := make(chan struct{})
	var releaseOnce sync.Once
	reading := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Held") != "" {
			r.Body = &firstRead{ReadCloser: r.Body, c: reading}
		}
		rec := &statusRecorder{ResponseWriter: w}
		api.ServeHTTP(rec, r)
		if strings.HasPrefix(r.UserAgent(), "OTel OTLP Exporter Go/") {
			mu.Lock()
			sdkCodes = append(sdkCodes, rec.code)
			mu.Unlock()
			if rec.code == http.StatusTooManyRequests {
				releaseOnce.Do(func() { close(release) })
			}
		}
	}))
	defer front.Close()
	// Hold the only export slot with an export whose body stops after 4
	// bytes until the SDK has been refused (written on a connection of
	// its own: an HTTP client may buffer a body's first bytes).
	held := export("held", rootSpan(7))
	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: test\r\nX-Held: 1\r\nContent-Type: application/x-protobuf\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", e.ingest, len(held))
	conn.Write(held[:4])
	heldCode := make(chan int, 1)
	go func() {
		<-release
		conn.Write(held[4:])
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			heldCode <- 0
			return
		}
		resp.Body.Close()
		heldCode <- resp.StatusCode
	}()
	defer releaseOnce.Do(func() { close(release) })
	// Export reads the body only once it holds the slot.
	select {
	case <-reading:
	case <-time.After(10 * time.Second):
		t.Fatal("the held export was not read within 10 s")
	}

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(front.URL+"/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + e.ingest}),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 50 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 20 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "travel-agent"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(2)))
	start := time.Now()
	traceID := fakeAgent(ctx, tp, "retry")
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("exporter: %v", err)
	}
	took := time.Since(start)
	if code := <-heldCode; code != http.StatusOK {
		t.Errorf("held export = %d, want 200", code)
	}
	mu.Lock()
	codes := slices.Clone(sdkCodes)
	mu.Unlock()
	// 6 spans in batches of 2: 3 exports, the first refused once.
	if want := []int{429, 200, 200, 200}; !slices.Equal(codes, want) {
		t.Errorf("the SDK's exports were answered %v, want %v", codes, want)
	}
	if took < time.Second {
		t.Errorf("the exporter finished %s after the agent started, want at least the 1 s Retry-After", took)
	}
	st := e.waitFinal(traceID, 0)
	if st.State != "graded" || st.Spans != 6 || st.Rule != "travel" {
		t.Errorf("trace = %+v, want graded with its 6 spans", st)
	}
}
