package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
