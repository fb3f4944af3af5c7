package harness

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

// fakeService is a Service whose behaviour is a function field.
type fakeService struct {
	EvaluateFn func(ctx context.Context, req *EvaluationRequest) (*StoredResult, error)
}

func (f *fakeService) Evaluate(ctx context.Context, req *EvaluationRequest) (*StoredResult, error) {
	return f.EvaluateFn(ctx, req)
}

var (
	_ Service = (*fakeService)(nil)
	_ Service = (*ServiceClient)(nil)
)

// TestRunWithService checks that with a Service every task is sent to it
// with the run id, task id, labels and the right kind of contract, and
// that the service's results are the ones reported.
func TestRunWithService(t *testing.T) {
	s, err := ParseSuite([]byte(`{"name":"x","min_score":0.8,"tasks":[
		{"id":"inline","input":"hi","contract":{"contract_version":2,"required":[{"tool":"lookup"}]},"labels":{"team":"a"}},
		{"id":"gold","input":"hi","gold":[{"tool":"lookup"}]},
		{"id":"ref","input":"hi","contract_ref":"flights@4"},
		{"id":"down","input":"hi","gold":[{"tool":"lookup"}]}]}`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []EvaluationRequest
	calls := map[string]int{}
	svc := &fakeService{EvaluateFn: func(_ context.Context, req *EvaluationRequest) (*StoredResult, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[req.TaskID]++
		if req.TaskID == "down" {
			return nil, Transient(errors.New("toolscore service answered 503 Service Unavailable"))
		}
		got = append(got, *req)
		passed := req.TaskID != "ref"
		return &StoredResult{ID: "ev-" + req.TaskID, Result: &engine.EvaluationResult{Score: 0.5, Grade: engine.GradeF, Passed: passed}}, nil
	}}
	runner := RunnerFunc(func(_ context.Context, req *Request) ([]byte, error) {
		return []byte(`{"trace":[{"tool":"lookup","args":{"q":1}}],"final_answer":"ok"}`), nil
	})
	rep, err := Run(context.Background(), s, runner, Options{Service: svc, RunID: "run-1", Agent: "bot-1", Concurrency: 1, Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RunID != "run-1" {
		t.Errorf("RunID = %q, want run-1", rep.RunID)
	}
	min := 0.8
	fa := "ok"
	trace := engine.Trace{Calls: []engine.ToolCall{{Tool: "lookup", Args: jsondoc.MustFromAny(map[string]any{"q": json.Number("1")})}}, FinalAnswer: &fa}
	// The agent's own document (the envelope's trace) goes to the service
	// with the format it was read as.
	doc := json.RawMessage(`[{"tool":"lookup","args":{"q":1}}]`)
	want := []EvaluationRequest{
		{RunID: "run-1", TaskID: "inline", Agent: "bot-1", Contract: json.RawMessage(`{"contract_version":2,"required":[{"tool":"lookup"}]}`),
			Trace: trace, Document: doc, Format: "plain", Labels: map[string]string{"team": "a"}},
		{RunID: "run-1", TaskID: "gold", Agent: "bot-1", Gold: json.RawMessage(`[{"tool":"lookup"}]`), Trace: trace, Document: doc, Format: "plain", MinScore: &min},
		{RunID: "run-1", TaskID: "ref", Agent: "bot-1", ContractRef: "flights@4", Trace: trace, Document: doc, Format: "plain"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("service requests (-want +got):\n%s", diff)
	}
	wantRows := []outcomeRow{
		{"inline", OutcomePass, "", 1},
		{"gold", OutcomePass, "", 1},
		{"ref", OutcomeFail, "", 1},
		{"down", OutcomeError, "grading: toolscore service answered 503 Service Unavailable (after 2 attempts)", 1},
	}
	if diff := cmp.Diff(wantRows, rows(rep)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if calls["down"] != 2 {
		t.Errorf("service calls for a failing task = %d, want 2 (retried)", calls["down"])
	}
	if id := rep.Tasks[0].EvaluationID; id != "ev-inline" {
		t.Errorf("EvaluationID = %q, want ev-inline", id)
	}
}

// TestServiceClient checks the HTTP client against a fake toolscore
// server: the request it sends and how it reads each kind of answer.
func TestServiceClient(t *testing.T) {
	type seen struct {
		Path, Key, ContentType string
		Body                   map[string]any
	}
	var mu sync.Mutex
	var requests []seen
	status, answer := 0, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		requests = append(requests, seen{r.URL.Path, r.Header.Get("Idempotency-Key"), r.Header.Get("Content-Type"), body})
		st, an := status, answer
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		io.WriteString(w, an)
	}))
	defer srv.Close()
	// The race detector does not see the happens-before edge of a TCP
	// round trip: share state with the handler under mu only.
	set := func(st int, an string) {
		mu.Lock()
		status, answer = st, an
		mu.Unlock()
	}
	request := func(i int) seen {
		mu.Lock()
		defer mu.Unlock()
		return requests[i]
	}
	c, err := NewServiceClient(srv.URL+"/", 2)
	if err != nil {
		t.Fatal(err)
	}
	min := 0.7
	fa := "done"
	req := &EvaluationRequest{
		RunID: "r1", TaskID: "t1", Gold: json.RawMessage(`[{"tool":"a"}]`), MinScore: &min,
		Trace:  engine.Trace{Calls: []engine.ToolCall{{Tool: "a", Args: jsondoc.MustFromAny(map[string]any{"x": json.Number("1")})}}, FinalAnswer: &fa},
		Labels: map[string]string{"k": "v"},
	}

	set(http.StatusCreated, `{"id":"0190-abc","score":0.95,"grade":"A","passed":true,"min_score":0.7}`)
	got, err := c.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if got.ID != "0190-abc" || got.Result.Score != 0.95 || got.Result.Grade != engine.GradeA || !got.Result.Passed {
		t.Errorf("Evaluate = %+v %+v", got, got.Result)
	}
	wantSeen := seen{
		Path: "/v1/evaluations", Key: "r1/t1", ContentType: "application/json",
		Body: map[string]any{
			"gold":         []any{map[string]any{"tool": "a"}},
			"trace":        []any{map[string]any{"tool": "a", "args": map[string]any{"x": 1.0}}},
			"format":       "plain",
			"final_answer": "done",
			"task_id":      "t1",
			"run_id":       "r1",
			"min_score":    0.7,
			"labels":       map[string]any{"k": "v"},
		},
	}
	if diff := cmp.Diff(wantSeen, request(0)); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}

	// A registry reference is sent as the contract's name@version string.
	_, _ = c.Evaluate(context.Background(), &EvaluationRequest{RunID: "r1", TaskID: "t2", ContractRef: "flights@2"})
	if got := request(1).Body["contract"]; got != "flights@2" {
		t.Errorf("contract for a reference = %v, want flights@2", got)
	}
	if got := request(1).Body["trace"]; !cmp.Equal(got, []any{}) {
		t.Errorf("empty trace sent as %v, want []", got)
	}
	// The agent's own document is sent as it is, with its format.
	_, _ = c.Evaluate(context.Background(), &EvaluationRequest{RunID: "r1", TaskID: "t3", Agent: "bot", ContractRef: "f",
		Document: json.RawMessage(`{"messages":[]}`), Format: "openai"})
	b := request(2).Body
	if !cmp.Equal(b["trace"], map[string]any{"messages": []any{}}) || b["format"] != "openai" || b["agent"] != "bot" {
		t.Errorf("document request = %v, want the document, format openai and agent bot", b)
	}

	tests := []struct {
		name      string
		status    int
		answer    string
		wantErr   string
		transient bool
	}{
		{"unavailable", 503, `{"title":"database down"}`, `toolscore service answered 503 Service Unavailable: database down`, true},
		{"too many requests", 429, ``, `toolscore service answered 429 Too Many Requests`, true},
		{"invalid", 422, `{"type":"invalid-contract","title":"Invalid contract","detail":"/required: expected array","errors":[{"pointer":"/required"}]}`, `toolscore service answered 422 Unprocessable Entity: /required: expected array`, false},
		{"not a problem", 400, `{"error":"bad"}`, `toolscore service answered 400 Bad Request: {"error":"bad"}`, false},
		{"not a result", 201, `{"id":"x"}`, `toolscore service answer is not an evaluation result: {"id":"x"}`, false},
		{"not json", 201, `<html>`, `toolscore service answer is not an evaluation result: invalid character '<' looking for beginning of value`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set(tc.status, tc.answer)
			_, err := c.Evaluate(context.Background(), req)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Evaluate error = %v, want %s", err, tc.wantErr)
			}
			if IsTransient(err) != tc.transient {
				t.Errorf("IsTransient(%v) = %v, want %v", err, IsTransient(err), tc.transient)
			}
		})
	}

	// A nested {"id", "result"} answer is read too.
	set(http.StatusCreated, `{"id":"e2","result":{"score":1,"grade":"A","passed":true}}`)
	got, err = c.Evaluate(context.Background(), req)
	if err != nil || got.ID != "e2" || got.Result.Grade != engine.GradeA {
		t.Errorf("Evaluate(nested) = %+v, %v", got, err)
	}

	srv.Close()
	_, err = c.Evaluate(context.Background(), req)
	if !IsTransient(err) || !strings.HasPrefix(err.Error(), "toolscore service unreachable: ") {
		t.Errorf("Evaluate(server down) = %v, want a transient unreachable error", err)
	}
	if _, err := NewServiceClient("localhost:8080", 1); err == nil {
		t.Error("NewServiceClient(no scheme) succeeded, want an error")
	}
}
