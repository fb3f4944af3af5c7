package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/secrets"
)

// testBundle is a Server on a fake store, with the spec its responses are
// checked against.
type testBundle struct {
	s     *Server
	store *fakeStore
	reg   *prometheus.Registry
	spec  *spec
}

func setup(t *testing.T, mod func(*Config)) *testBundle {
	t.Helper()
	st := newFakeStore()
	reg := prometheus.NewRegistry()
	cfg := Config{Store: st, Logger: zaptest.NewLogger(t), Registerer: reg, Workers: 2, OpenAPI: toolscore.OpenAPI, AuthOff: true}
	if mod != nil {
		mod(&cfg)
	}
	s := New(cfg)
	t.Cleanup(s.Close)
	return &testBundle{s: s, store: st, reg: reg, spec: loadSpec(t)}
}

// do serves one request (a JSON body unless a Content-Type header is
// given; headers as name, value pairs) and checks the response against
// openapi.yaml.
func (b *testBundle) do(t *testing.T, method, target, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	b.s.Handler().ServeHTTP(rec, req)
	rctx := chi.NewRouteContext()
	if slices.Contains(b.s.allowed(req.URL.Path), method) && b.s.router.Match(rctx, method, req.URL.Path) {
		b.spec.check(t, rctx.RoutePattern(), method, rec)
	} else if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s %s: unmatched route answered with Content-Type %q, want problem+json", method, target, ct)
	}
	return rec
}

// decode decodes a JSON response body.
func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return v
}

const (
	goldList  = `[{"tool": "search_flights", "args": {"destination": "LIS"}}, {"tool": "book_flight", "args": {"flight_id": "FL-204"}}]`
	contractA = `{"contract_version": 2, "description": "Book a flight", "required": [{"tool": "search_flights", "args": {"destination": "LIS"}},
		{"id": "book", "alternatives": [[{"tool": "book_flight", "args": {"flight_id": {"$regex": "^FL-"}}}], [{"tool": "reserve_seat"}]]}],
		"optional": [{"tool": "get_weather"}], "forbidden": [{"tool": "cancel_booking", "reason": "never"}]}`
	traceGood = `[{"tool": "search_flights", "args": {"destination": "LIS"}}, {"tool": "get_weather", "args": {"city": "Lisbon"}}, {"tool": "book_flight", "args": {"flight_id": "FL-204"}}]`
	traceHalf = `[{"tool": "search_flights", "args": {"destination": "OPO"}}]`
)

// engineResult grades with the engine directly, for comparison.
func engineResult(t *testing.T, contract, trace string, opts engine.Options) *engine.EvaluationResult {
	t.Helper()
	c, err := engine.ParseContract([]byte(contract))
	if err != nil {
		t.Fatal(err)
	}
	var calls []engine.ToolCall
	if err := json.Unmarshal([]byte(trace), &calls); err != nil {
		t.Fatal(err)
	}
	opts.SecretScanner = secrets.New()
	res, err := engine.Evaluate(context.Background(), c, engine.Trace{Calls: calls}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func body(fields ...string) string {
	return "{" + strings.Join(fields, ",") + "}"
}

func TestCreateEvaluation(t *testing.T) {
	b := setup(t, nil)
	good := engineResult(t, contractA, traceGood, engine.Options{})
	half := engineResult(t, goldList, traceHalf, engine.Options{})
	if good.Score < 0.999 || good.Grade != engine.GradeA || !good.Passed || half.Passed {
		t.Fatalf("fixtures: good trace scored %v %s %v, want ~1 A pass; half passed %v", good.Score, good.Grade, good.Passed, half.Passed)
	}
	tests := []struct {
		name       string
		target     string
		body       string
		wantStatus int
		want       *engine.EvaluationResult
		wantKind   string
	}{
		{"inline contract", "/v1/evaluations", body(`"contract":`+contractA, `"trace":`+traceGood, `"task_id":"t1"`, `"labels":{"env":"prod"}`), 201, good, "contract"},
		{"gold list as contract", "/v1/evaluations", body(`"contract":`+goldList, `"trace":`+traceHalf), 201, half, "gold"},
		{"gold field", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf), 201, half, "gold"},
		{"dry run", "/v1/evaluations?store=false", body(`"gold":`+goldList, `"trace":`+traceHalf), 200, half, "gold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do(t, "POST", tc.target, tc.body)
			if rec.Code != tc.wantStatus {
				t.Fatalf("POST %s = %d %s, want %d", tc.target, rec.Code, rec.Body, tc.wantStatus)
			}
			got := decode[evaluationView](t, rec)
			if got.Score != tc.want.Score || got.Grade != string(tc.want.Grade) || got.Passed != tc.want.Passed {
				t.Errorf("score, grade, passed = %v %s %v, want %v %s %v", got.Score, got.Grade, got.Passed, tc.want.Score, tc.want.Grade, tc.want.Passed)
			}
			if got.Contract.Kind != tc.wantKind || len(got.Contract.SHA256) != 64 {
				t.Errorf("contract = %+v, want kind %s and a sha256", got.Contract, tc.wantKind)
			}
			wantMetrics, _ := json.Marshal(tc.want.Metrics)
			if diff := cmp.Diff(string(wantMetrics), string(got.Metrics)); diff != "" {
				t.Errorf("metrics differ from the engine's (-engine +api):\n%s", diff)
			}
			stored := tc.wantStatus == 201
			if got.Stored != stored || (got.ID != "") != stored {
				t.Errorf("stored = %v, id = %q; want stored %v", got.Stored, got.ID, stored)
			}
			if stored {
				if loc := rec.Header().Get("Location"); loc != "/v1/evaluations/"+got.ID {
					t.Errorf("Location = %q", loc)
				}
				// GET returns the same document.
				rec2 := b.do(t, "GET", "/v1/evaluations/"+got.ID, "")
				if rec2.Code != 200 {
					t.Fatalf("GET = %d %s", rec2.Code, rec2.Body)
				}
				if diff := cmp.Diff(rec.Body.String(), rec2.Body.String()); diff != "" {
					t.Errorf("GET differs from POST (-post +get):\n%s", diff)
				}
			}
		})
	}
	if n := len(b.store.results); n != 3 {
		t.Errorf("stored results = %d, want 3 (the dry run is not stored)", n)
	}
	if v := value(t, b.s.metrics.evaluations.WithLabelValues("A", "pass")); v != 1 {
		t.Errorf("toolscore_evaluations_total{grade=A,verdict=pass} = %v, want 1", v)
	}
}

func TestCreateEvaluationRegistry(t *testing.T) {
	b := setup(t, nil)
	if rec := b.do(t, "POST", "/v1/contracts/flights/versions", contractA); rec.Code != 201 {
		t.Fatalf("create contract = %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, "POST", "/v1/contracts/flights/versions", goldList); rec.Code != 201 {
		t.Fatalf("create v2 = %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct {
		ref         string
		wantVersion int
		wantKind    string
	}{{"flights@1", 1, "contract"}, {"flights", 2, "gold"}, {"flights@latest", 2, "gold"}} {
		rec := b.do(t, "POST", "/v1/evaluations", body(`"contract":"`+tc.ref+`"`, `"trace":`+traceGood))
		if rec.Code != 201 {
			t.Fatalf("POST contract %s = %d %s", tc.ref, rec.Code, rec.Body)
		}
		got := decode[evaluationView](t, rec).Contract
		if got.Name != "flights" || got.Version != tc.wantVersion || got.Kind != tc.wantKind {
			t.Errorf("contract %s resolved to %+v, want flights@%d (%s)", tc.ref, got, tc.wantVersion, tc.wantKind)
		}
	}
}

// problemOf decodes and checks a problem response.
func problemOf(t *testing.T, rec *httptest.ResponseRecorder, status int, slug string) Problem {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	p := decode[Problem](t, rec)
	if p.Type != ProblemTypeBase+slug || p.Status != status || p.RequestID == "" {
		t.Errorf("problem = %+v, want type %s, status %d and a request id", p, slug, status)
	}
	return p
}

func TestCreateEvaluationErrors(t *testing.T) {
	b := setup(t, func(c *Config) { c.MaxBodyBytes = 4096 })
	b.do(t, "POST", "/v1/contracts/flights/versions", contractA)
	tests := []struct {
		name       string
		body       string
		headers    []string
		target     string
		wantStatus int
		wantSlug   string
		wantErrors []FieldProblem
		wantDetail string
	}{
		{name: "bad json", body: "{\n  \"trace\": [1,\n  ]}", wantStatus: 400, wantSlug: "invalid-json",
			wantDetail: "line 3:3 (byte 19): invalid character ']' looking for beginning of value (at /trace/1)"},
		{name: "truncated json", body: `{"trace": [`, wantStatus: 400, wantSlug: "invalid-json",
			wantDetail: "line 1:12 (byte 11): unexpected end of JSON input (at /trace)"},
		{name: "trailing data", body: `{"trace": []} {}`, wantStatus: 400, wantSlug: "invalid-json",
			wantDetail: "line 1:15 (byte 14): unexpected data after the JSON document"},
		{name: "empty body", body: " ", wantStatus: 400, wantSlug: "invalid-json", wantDetail: "the body is empty"},
		{name: "unknown field", body: body(`"gold":`+goldList, `"trace":[]`, `"trcae":1`), wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{{Pointer: "/trcae", Message: "unknown field"}}},
		{name: "wrong type", body: body(`"gold":`+goldList, `"trace":[]`, `"strict":"yes"`), wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{{Pointer: "/strict", Message: "must be a boolean, got string"}}},
		{name: "no contract, no trace", body: `{}`, wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{
				{Pointer: "/contract", Message: `required: an inline contract (object), a gold list (array) or a registry reference ("name" or "name@version")`},
				{Pointer: "/trace", Message: "required: the agent's trace, in any supported format"},
			}},
		{name: "bad fields", body: body(`"gold":`+goldList, `"trace":[]`, `"min_score":2`, `"weights":{"nope":1}`, `"format":"xml"`), wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{
				{Pointer: "/format", Message: "unknown format \"xml\"; valid: auto, " + strings.Join(format.Names(), ", ")},
				{Pointer: "/min_score", Message: "must be in [0, 1], got 2"},
				{Pointer: "/weights/nope", Message: `unknown weight "nope" (valid: selection_accuracy, argument_f1, sequence_accuracy, redundant_rate, required_call_recall)`},
			}},
		{name: "invalid contract", body: body(`"contract":{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$nope":1}}}]}`, `"trace":[]`),
			wantStatus: 422, wantSlug: "invalid-contract"},
		{name: "unknown registry contract", body: body(`"contract":"hotels@3"`, `"trace":[]`), wantStatus: 422, wantSlug: "unknown-contract",
			wantErrors: []FieldProblem{{Pointer: "/contract", Message: "no registry contract hotels@3"}}},
		{name: "bad reference", body: body(`"contract":"flights@x"`, `"trace":[]`), wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{{Pointer: "/contract", Message: `"flights@x" has an invalid version "x": want a number from 1, or latest`}}},
		{name: "unreadable trace", body: body(`"gold":`+goldList, `"trace":{"foo":1}`), wantStatus: 422, wantSlug: "invalid-trace"},
		{name: "wrong-typed tool name", body: body(`"gold":`+goldList, `"format":"openai"`,
			`"trace":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":5,"arguments":"{}"}}]}]`),
			wantStatus: 422, wantSlug: "invalid-trace",
			wantDetail: "invalid trace: openai: /0/tool_calls/0/function/name: name must be a string, not a number",
			wantErrors: []FieldProblem{{Pointer: "/trace", Message: "invalid trace: openai: /0/tool_calls/0/function/name: name must be a string, not a number"}}},
		{name: "wrong-typed tool name, detected", body: body(`"gold":`+goldList,
			`"trace":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":5,"arguments":"{}"}}]}]`),
			wantStatus: 422, wantSlug: "invalid-trace",
			wantErrors: []FieldProblem{{Pointer: "/trace", Message: "invalid trace: openai: /0/tool_calls/0/function/name: name must be a string, not a number"}}},
		{name: "contract given as gold", body: body(`"gold":`+contractA, `"trace":[]`), wantStatus: 422, wantSlug: "invalid-request",
			wantErrors: []FieldProblem{{Pointer: "/gold", Message: "is a contract; send it as contract"}}},
		{name: "bad forbidden", body: body(`"gold":`+goldList, `"trace":[]`, `"forbidden":[{"args":{}}]`), wantStatus: 422, wantSlug: "invalid-request"},
		{name: "wrong media type", body: `{}`, headers: []string{"Content-Type", "text/plain"}, wantStatus: 415, wantSlug: "unsupported-media-type",
			wantErrors: []FieldProblem{{Parameter: "Content-Type", Message: "must be application/json"}}},
		{name: "too large", body: body(`"trace":"` + strings.Repeat("x", 5000) + `"`), wantStatus: 413, wantSlug: "body-too-large",
			wantDetail: "the body has 5012 bytes; the limit is 4096"},
		{name: "bad store param", target: "/v1/evaluations?store=maybe", body: `{}`, wantStatus: 400, wantSlug: "invalid-parameter",
			wantErrors: []FieldProblem{{Parameter: "store", Message: `must be true or false, got "maybe"`}}},
		{name: "bad idempotency key", body: `{}`, headers: []string{"Idempotency-Key", "caf\u00e9"}, wantStatus: 400, wantSlug: "invalid-parameter",
			wantErrors: []FieldProblem{{Parameter: "Idempotency-Key", Message: "must be printable ASCII"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = "/v1/evaluations"
			}
			p := problemOf(t, b.do(t, "POST", target, tc.body, tc.headers...), tc.wantStatus, tc.wantSlug)
			if tc.wantErrors != nil {
				if diff := cmp.Diff(tc.wantErrors, p.Errors); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			}
			if tc.wantDetail != "" && p.Detail != tc.wantDetail {
				t.Errorf("detail = %q, want %q", p.Detail, tc.wantDetail)
			}
			if tc.wantStatus == 422 && len(p.Errors) == 0 {
				t.Errorf("422 without errors[]: %+v", p)
			}
			for _, e := range p.Errors {
				if tc.wantSlug == "invalid-contract" && !strings.HasPrefix(e.Pointer, "/contract/") {
					t.Errorf("contract error pointer %q is not under /contract/", e.Pointer)
				}
			}
		})
	}
	if len(b.store.results) != 0 {
		t.Errorf("%d results stored by failing requests", len(b.store.results))
	}
}

func TestBadJSONLocation(t *testing.T) {
	b := setup(t, nil)
	p := problemOf(t, b.do(t, "POST", "/v1/evaluations", "{\n  \"trace\": [1,\n  ]}"), 400, "invalid-json")
	if p.Offset == nil || *p.Offset != 19 || p.Line != 3 || p.Column != 3 || p.Pointer == nil || *p.Pointer != "/trace/1" {
		t.Errorf("offset, line, column, pointer = %v, %d, %d, %v; want 19, 3, 3, /trace/1", p.Offset, p.Line, p.Column, p.Pointer)
	}
}

func TestIdempotencyKey(t *testing.T) {
	b := setup(t, nil)
	req := body(`"gold":`+goldList, `"trace":`+traceHalf)
	first := b.do(t, "POST", "/v1/evaluations", req, "Idempotency-Key", "k-1")
	if first.Code != 201 {
		t.Fatalf("first = %d %s", first.Code, first.Body)
	}
	again := b.do(t, "POST", "/v1/evaluations", req, "Idempotency-Key", "k-1")
	if again.Code != 201 || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay = %d (Idempotent-Replayed %q) %s", again.Code, again.Header().Get("Idempotent-Replayed"), again.Body)
	}
	if diff := cmp.Diff(first.Body.String(), again.Body.String()); diff != "" {
		t.Errorf("replay differs (-first +replay):\n%s", diff)
	}
	other := body(`"gold":`+goldList, `"trace":`+traceGood)
	problemOf(t, b.do(t, "POST", "/v1/evaluations", other, "Idempotency-Key", "k-1"), 409, "idempotency-conflict")
	if n := len(b.store.results); n != 1 {
		t.Errorf("stored results = %d, want 1", n)
	}
}

func TestStoreUnavailable(t *testing.T) {
	b := setup(t, nil)
	b.store.insertErr = fmt.Errorf("write results: %w: dial tcp: connection refused", engine.ErrUnavailable)
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf))
	p := problemOf(t, rec, 503, "unavailable")
	if rec.Header().Get("Retry-After") != "5" || strings.Contains(p.Detail, "refused") {
		t.Errorf("Retry-After = %q, detail = %q; want 5 and a generic detail", rec.Header().Get("Retry-After"), p.Detail)
	}
	b.store.readyErr = b.store.insertErr
	problemOf(t, b.do(t, "GET", "/readyz", ""), 503, "not-ready")
	// Dry runs need no database.
	if rec := b.do(t, "POST", "/v1/evaluations?store=false", body(`"gold":`+goldList, `"trace":`+traceHalf)); rec.Code != 200 {
		t.Errorf("dry run while the store is down = %d", rec.Code)
	}
	b.store.insertErr, b.store.readyErr = nil, nil
	if rec := b.do(t, "GET", "/readyz", ""); rec.Code != 200 {
		t.Errorf("readyz after recovery = %d", rec.Code)
	}
	if rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf)); rec.Code != 201 {
		t.Errorf("POST after recovery = %d", rec.Code)
	}
}

func TestInternalErrorIsGeneric(t *testing.T) {
	b := setup(t, nil)
	b.store.getErr = errors.New("secret internals")
	p := problemOf(t, b.do(t, "GET", "/v1/evaluations/"+uuid.NewString(), ""), 500, "internal")
	if strings.Contains(p.Detail, "secret") {
		t.Errorf("500 detail leaks the error: %q", p.Detail)
	}
}

// fillPool occupies every worker and queue slot of s's pool with jobs that
// wait for release, and returns once they are running or queued.
func fillPool(t *testing.T, p *Pool) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	started := make(chan struct{}, p.workers+p.QueueCapacity())
	done := make(chan struct{})
	n := p.workers + p.QueueCapacity()
	for i := range n {
		go func() {
			_ = p.DoWait(context.Background(), func(context.Context) error {
				started <- struct{}{}
				<-gate
				return nil
			})
			done <- struct{}{}
		}()
		if i < p.workers {
			<-started // one more worker busy
		}
	}
	for p.QueueLength() < p.QueueCapacity() {
		runtime.Gosched() // the remaining jobs are being queued
	}
	return func() {
		close(gate)
		for range n {
			<-done
		}
	}
}

func TestQueueFull(t *testing.T) {
	b := setup(t, func(c *Config) { c.Workers, c.Queue = 1, 2 })
	release := fillPool(t, b.s.pool)
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf))
	problemOf(t, rec, 429, "queue-full")
	if rec.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", rec.Header().Get("Retry-After"))
	}
	if v := value(t, b.s.metrics.poolRejected); v != 1 {
		t.Errorf("toolscore_pool_rejected_total = %v, want 1", v)
	}
	if v := value(t, b.s.metrics.evaluations.WithLabelValues("F", "fail")); v != 0 {
		t.Errorf("a rejected request was evaluated")
	}
	release()
	if rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf)); rec.Code != 201 {
		t.Errorf("after the queue drained = %d", rec.Code)
	}
}

func TestInFlightLimit(t *testing.T) {
	b := setup(t, func(c *Config) { c.MaxInFlight = 1 })
	b.s.inflight <- struct{}{} // one evaluation in flight
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf))
	problemOf(t, rec, 429, "queue-full")
	if rec.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q", rec.Header().Get("Retry-After"))
	}
	<-b.s.inflight
	if rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf)); rec.Code != 201 {
		t.Errorf("after the evaluation ended = %d", rec.Code)
	}
}

func TestBatch(t *testing.T) {
	b := setup(t, nil)
	good := body(`"gold":`+goldList, `"trace":`+traceHalf)
	bad := body(`"gold":`+goldList, `"trace":{"nope":1}`)
	t.Run("json array", func(t *testing.T) {
		rec := b.do(t, "POST", "/v1/evaluations/batch", "["+good+","+bad+","+body(`"trace":[]`)+"]")
		if rec.Code != 200 {
			t.Fatalf("batch = %d %s", rec.Code, rec.Body)
		}
		got := decode[batchView](t, rec)
		var statuses []int
		for _, it := range got.Items {
			statuses = append(statuses, it.Status)
		}
		if diff := cmp.Diff([]int{201, 422, 422}, statuses); diff != "" || got.Succeeded != 1 || got.Failed != 2 {
			t.Errorf("statuses (-want +got):\n%s; succeeded %d failed %d", diff, got.Succeeded, got.Failed)
		}
		if p := got.Items[2].Problem; p == nil || p.Errors[0].Pointer != "/contract" {
			t.Errorf("item 2 problem = %+v, want a /contract pointer", p)
		}
	})
	t.Run("ndjson", func(t *testing.T) {
		rec := b.do(t, "POST", "/v1/evaluations/batch?store=false", good+"\n\n{oops\n"+good+"\n", "Content-Type", "application/x-ndjson")
		got := decode[batchView](t, rec)
		want := []batchItemView{{Index: 0, Line: 1, Status: 200}, {Index: 1, Line: 3, Status: 400}, {Index: 2, Line: 4, Status: 200}}
		var gotItems []batchItemView
		for _, it := range got.Items {
			gotItems = append(gotItems, batchItemView{Index: it.Index, Line: it.Line, Status: it.Status})
		}
		if diff := cmp.Diff(want, gotItems); diff != "" {
			t.Errorf("items (-want +got):\n%s", diff)
		}
		if p := got.Items[1].Problem; p == nil || p.Line != 1 || p.Column != 2 {
			t.Errorf("line 3 problem = %+v, want line 1 column 2 of the item", p)
		}
	})
	t.Run("idempotent", func(t *testing.T) {
		req := "[" + good + "," + bad + "]"
		first := b.do(t, "POST", "/v1/evaluations/batch", req, "Idempotency-Key", "batch-1")
		again := b.do(t, "POST", "/v1/evaluations/batch", req, "Idempotency-Key", "batch-1")
		if again.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay not marked")
		}
		if diff := cmp.Diff(first.Body.String(), again.Body.String()); diff != "" {
			t.Errorf("replay differs (-first +replay):\n%s", diff)
		}
		problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", "["+good+"]", "Idempotency-Key", "batch-1"), 409, "idempotency-conflict")
	})
	t.Run("limits", func(t *testing.T) {
		problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", "[]"), 422, "invalid-request")
		problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", good), 422, "invalid-request")
		items := strings.TrimSuffix(strings.Repeat(`{},`, 1001), ",")
		p := problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", "["+items+"]"), 422, "invalid-request")
		if p.Detail != "a batch holds 1 to 1000 evaluations, got 1001" {
			t.Errorf("detail = %q", p.Detail)
		}
		problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", "[", "Content-Type", "application/json"), 400, "invalid-json")
		problemOf(t, b.do(t, "POST", "/v1/evaluations/batch", "[]", "Content-Type", "text/csv"), 415, "unsupported-media-type")
	})
}

func TestListEvaluations(t *testing.T) {
	b := setup(t, nil)
	var ids []string
	for range 3 {
		rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf, `"agent":"a1"`))
		ids = append(ids, decode[evaluationView](t, rec).ID)
	}
	rec := b.do(t, "GET", "/v1/evaluations?limit=2&contract=flights@2&task_id=t&run_id=r&agent=a1&label=env=prod&label=team&passed=false&grade=A,B&grade=F&since=2026-11-01T00:00:00Z&until=2026-12-01T00:00:00Z", "")
	if rec.Code != 200 {
		t.Fatalf("list = %d %s", rec.Code, rec.Body)
	}
	no := false
	wantFilter := record.ResultFilter{ContractName: "flights", ContractVersion: 2, TaskID: "t", RunID: "r", Agent: "a1",
		Labels: []record.LabelFilter{{Key: "env", Value: "prod", HasValue: true}, {Key: "team"}}, Passed: &no,
		Grades: []string{"A", "B", "F"}, Since: mustTime(t, "2026-11-01T00:00:00Z"), Until: mustTime(t, "2026-12-01T00:00:00Z")}
	if diff := cmp.Diff(wantFilter, b.store.lastFilter); diff != "" {
		t.Errorf("filter (-want +got):\n%s", diff)
	}
	pg := decode[page[evaluationSummaryView]](t, rec)
	if len(pg.Items) != 2 || pg.Items[0].ID != ids[2] || pg.Items[1].ID != ids[1] || pg.NextCursor == "" {
		t.Fatalf("page 1 = %+v", pg)
	}
	rec = b.do(t, "GET", "/v1/evaluations?limit=2&cursor="+pg.NextCursor, "")
	pg2 := decode[page[evaluationSummaryView]](t, rec)
	if len(pg2.Items) != 1 || pg2.Items[0].ID != ids[0] || pg2.NextCursor != "" {
		t.Errorf("page 2 = %+v", pg2)
	}
	if b.store.lastAfter == nil || b.store.lastAfter.ID.String() != ids[1] {
		t.Errorf("cursor decoded to %+v, want id %s", b.store.lastAfter, ids[1])
	}
	for _, q := range []string{"limit=0", "limit=x", "passed=maybe", "grade=E", "since=yesterday", "cursor=%%%", "cursor=bm90IGpzb24", "label==v", "contract=a@b",
		"passed=true&passed=false", "regrades=only&regrades=bogus", "limit=1&limit=2", "latest=true&latest=true"} {
		problemOf(t, b.do(t, "GET", "/v1/evaluations?"+strings.ReplaceAll(q, "%%%", "%25"), ""), 400, "invalid-parameter")
	}
	problemOf(t, b.do(t, "GET", "/v1/evaluations/not-a-uuid", ""), 400, "invalid-parameter")
	problemOf(t, b.do(t, "GET", "/v1/evaluations/"+uuid.NewString(), ""), 404, "not-found")
	if p := problemOf(t, b.do(t, "GET", "/v1/evaluations?regrades=only&regrades=bogus", ""), 400, "invalid-parameter"); p.Detail != "regrades: given 2 times; it takes one value" {
		t.Errorf("repeated regrades: detail = %q", p.Detail)
	}
	// name@latest would read as every version: refused, in the list and the stats.
	for _, target := range []string{"/v1/evaluations?contract=flights@latest", "/v1/stats?contract=flights@latest"} {
		p := problemOf(t, b.do(t, "GET", target, ""), 400, "invalid-parameter")
		if want := `contract: "flights@latest": filter by name (every version) or name@N (one version); latest is not a filter`; p.Detail != want {
			t.Errorf("%s: detail = %q, want %q", target, p.Detail, want)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// value reads a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

func TestStats(t *testing.T) {
	b := setup(t, nil)
	b.store.groups = []record.StatsGroup{{Key: "flights@1", Count: 4, Passed: 3, MeanScore: 0.8, Grades: map[string]int64{"A": 3, "B": 0, "C": 0, "D": 0, "F": 1}}}
	rec := b.do(t, "GET", "/v1/stats?group_by=agent&agent=a1", "")
	want := statsView{GroupBy: "agent", Groups: []statsGroupView{{Key: "flights@1", Count: 4, Passed: 3, PassRate: 0.75, MeanScore: 0.8,
		Grades: map[string]int64{"A": 3, "B": 0, "C": 0, "D": 0, "F": 1}}}}
	if diff := cmp.Diff(want, decode[statsView](t, rec)); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if b.store.lastGroup != record.GroupByAgent || b.store.lastFilter.Agent != "a1" {
		t.Errorf("store got group %q filter %+v", b.store.lastGroup, b.store.lastFilter)
	}
	if rec := b.do(t, "GET", "/v1/stats", ""); decode[statsView](t, rec).GroupBy != "contract_version" {
		t.Errorf("default group_by is not contract_version: %s", rec.Body)
	}
	problemOf(t, b.do(t, "GET", "/v1/stats?group_by=hour", ""), 400, "invalid-parameter")
}

func TestContracts(t *testing.T) {
	b := setup(t, nil)
	rec := b.do(t, "POST", "/v1/contracts/flights/versions", contractA)
	if rec.Code != 201 || rec.Header().Get("Location") != "/v1/contracts/flights/versions/1" {
		t.Fatalf("create = %d %s (Location %q)", rec.Code, rec.Body, rec.Header().Get("Location"))
	}
	v1 := decode[contractVersionView](t, rec)
	if v1.Combinations != 2 || v1.Kind != "contract" || v1.Description != "Book a flight" {
		t.Errorf("v1 = %+v", v1)
	}
	// The same contract with other white space and key order is the same version.
	var m map[string]any
	_ = json.Unmarshal([]byte(contractA), &m)
	reordered, _ := json.MarshalIndent(m, "", "\t")
	rec = b.do(t, "POST", "/v1/contracts/flights/versions", string(reordered))
	if rec.Code != 200 || decode[contractVersionView](t, rec).Version != 1 {
		t.Errorf("identical body = %d %s, want 200 with version 1", rec.Code, rec.Body)
	}
	if rec := b.do(t, "POST", "/v1/contracts/flights/versions", goldList); rec.Code != 201 || decode[contractVersionView](t, rec).Version != 2 {
		t.Errorf("v2 = %d %s", rec.Code, rec.Body)
	}
	b.do(t, "POST", "/v1/contracts/hotels/versions", goldList)

	got := decode[contractVersionView](t, b.do(t, "GET", "/v1/contracts/flights/versions/1", ""))
	wantBody, _, _ := jsondoc.Canonical([]byte(contractA))
	if got.SHA256 != v1.SHA256 || string(got.Contract) != string(wantBody) {
		t.Errorf("get v1 = %+v, want the canonical body %s", got, wantBody)
	}
	if latest := decode[contractVersionView](t, b.do(t, "GET", "/v1/contracts/flights/versions/latest", "")); latest.Version != 2 {
		t.Errorf("latest = %d, want 2", latest.Version)
	}
	vs := decode[page[contractVersionView]](t, b.do(t, "GET", "/v1/contracts/flights/versions?limit=1", ""))
	if len(vs.Items) != 1 || vs.Items[0].Version != 1 || vs.NextCursor == "" {
		t.Errorf("versions page 1 = %+v", vs)
	}
	vs = decode[page[contractVersionView]](t, b.do(t, "GET", "/v1/contracts/flights/versions?limit=1&cursor="+vs.NextCursor, ""))
	if len(vs.Items) != 1 || vs.Items[0].Version != 2 || vs.NextCursor != "" {
		t.Errorf("versions page 2 = %+v", vs)
	}
	names := decode[page[contractSummaryView]](t, b.do(t, "GET", "/v1/contracts", ""))
	if len(names.Items) != 2 || names.Items[0].Name != "flights" || names.Items[0].LatestVersion != 2 || names.Items[1].Name != "hotels" {
		t.Errorf("contracts = %+v", names)
	}

	problemOf(t, b.do(t, "GET", "/v1/contracts/flights/versions/9", ""), 404, "not-found")
	problemOf(t, b.do(t, "GET", "/v1/contracts/flights/versions/zero", ""), 400, "invalid-parameter")
	problemOf(t, b.do(t, "GET", "/v1/contracts/nope/versions", ""), 404, "not-found")
	problemOf(t, b.do(t, "POST", "/v1/contracts/bad@name/versions", goldList), 400, "invalid-parameter")
	p := problemOf(t, b.do(t, "POST", "/v1/contracts/x/versions", `{"contract_version": 3, "required": []}`), 422, "invalid-contract")
	if len(p.Errors) == 0 || p.Errors[0].Pointer != "/contract_version" {
		t.Errorf("errors = %+v, want a /contract_version pointer", p.Errors)
	}
	p = problemOf(t, b.do(t, "POST", "/v1/contracts/x/versions", "{\"required\": [}"), 400, "invalid-json")
	if p.Line != 1 || p.Column != 15 || p.Pointer == nil || *p.Pointer != "/required/0" {
		t.Errorf("line:col, pointer = %d:%d, %v; want 1:15, /required/0", p.Line, p.Column, p.Pointer)
	}
}

func TestValidate(t *testing.T) {
	b := setup(t, nil)
	got := decode[validationView](t, b.do(t, "POST", "/v1/validate", contractA))
	_, sum, _ := jsondoc.Canonical([]byte(contractA))
	want := validationView{Valid: true, Kind: "contract", SHA256: sum, Description: "Book a flight", Combinations: 2,
		RequiredCount: 2, OptionalCount: 1, ForbiddenCount: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("validate (-want +got):\n%s", diff)
	}
	problemOf(t, b.do(t, "POST", "/v1/validate", `{"contract_version": 2, "required": [{"alternatives": []}]}`), 422, "invalid-contract")
	if len(b.store.contracts) != 0 {
		t.Errorf("validate stored a contract")
	}
}

func TestOperations(t *testing.T) {
	b := setup(t, func(c *Config) { c.OpenAPI = []byte("openapi: 3.1.0\n") })
	if rec := b.do(t, "GET", "/healthz", ""); rec.Code != 200 || rec.Body.String() != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, "GET", "/readyz", ""); rec.Code != 200 {
		t.Errorf("readyz = %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, "GET", "/openapi.yaml", ""); rec.Body.String() != "openapi: 3.1.0\n" || rec.Header().Get("Content-Type") != "application/yaml" {
		t.Errorf("openapi = %q %q", rec.Header().Get("Content-Type"), rec.Body)
	}
	rec := b.do(t, "GET", "/metrics", "")
	for _, name := range []string{"toolscore_pool_queue_length", "toolscore_pool_busy_workers", "toolscore_build_info", `toolscore_http_requests_total{code="200",method="GET",route="/healthz"} 1`} {
		if !strings.Contains(rec.Body.String(), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	problemOf(t, b.do(t, "GET", "/nope", ""), 404, "not-found")
	problemOf(t, b.do(t, "DELETE", "/v1/evaluations", ""), 405, "method-not-allowed")
	rec = b.do(t, "GET", "/healthz", "", "X-Request-Id", "abc-123")
	if rec.Header().Get("X-Request-Id") != "abc-123" {
		t.Errorf("X-Request-Id not kept: %q", rec.Header().Get("X-Request-Id"))
	}
}
