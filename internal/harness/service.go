package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// Service grades a trace and stores the result in a toolscore service.
// Implementations must be safe for concurrent use and mark failures worth
// retrying (transport errors, 429, 5xx) with Transient.
type Service interface {
	Evaluate(ctx context.Context, req *EvaluationRequest) (*StoredResult, error)
}

// EvaluationRequest is one task's trace to grade and store. Exactly one of
// Contract, Gold and ContractRef is set.
type EvaluationRequest struct {
	// RunID and TaskID identify the run and the task.
	RunID  string
	TaskID string
	// Contract is an inline Contract v2 document.
	Contract json.RawMessage
	// Gold is an inline gold file.
	Gold json.RawMessage
	// ContractRef is a registry reference: name, name@version or
	// name@latest.
	ContractRef string
	// Agent names the agent; "" for none.
	Agent string
	// Trace is the agent's normalised trace.
	Trace engine.Trace
	// Document is the agent's own trace document when it is JSON, read as
	// Format; nil otherwise (JSONL and SSE answers), and then Trace is
	// sent in the plain format.
	Document json.RawMessage
	Format   string
	// MinScore overrides the passing score; nil for the contract's (or the
	// default).
	MinScore *float64
	// Labels are stored with the result; nil for none.
	Labels map[string]string
}

// StoredResult is a graded result and the id it is stored under.
type StoredResult struct {
	ID     string
	Result *engine.EvaluationResult
}

// ServiceClient is the Service of a toolscore server reached over HTTP:
// POST {BaseURL}/v1/evaluations. It is safe for concurrent use.
type ServiceClient struct {
	// BaseURL is the server's root, such as "http://localhost:8080".
	BaseURL string
	// Client sends the requests; timeouts come from the context.
	Client *http.Client
	// APIKey, when set, is sent as "Authorization: Bearer APIKey" (a key
	// with scope ingest).
	APIKey string
}

// NewServiceClient returns a client for the toolscore server at baseURL
// keeping up to maxConns idle connections. It fails when baseURL is not an
// absolute http or https URL.
func NewServiceClient(baseURL string, maxConns int) (*ServiceClient, error) {
	if err := checkHTTPURL(baseURL); err != nil {
		return nil, fmt.Errorf("server url: %w", err)
	}
	return &ServiceClient{BaseURL: strings.TrimRight(baseURL, "/"), Client: newHTTPClient(maxConns)}, nil
}

// evaluationBody is the JSON body of POST /v1/evaluations. A registry
// contract is sent as the string "name" or "name@version" in "contract",
// an inline one as the object itself.
type evaluationBody struct {
	Contract    json.RawMessage   `json:"contract,omitempty"`
	Gold        json.RawMessage   `json:"gold,omitempty"`
	Trace       json.RawMessage   `json:"trace"`
	Format      string            `json:"format"`
	FinalAnswer *string           `json:"final_answer,omitempty"`
	TaskID      string            `json:"task_id"`
	RunID       string            `json:"run_id"`
	Agent       string            `json:"agent,omitempty"`
	MinScore    *float64          `json:"min_score,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// Evaluate POSTs the trace with the task's contract to /v1/evaluations:
// the agent's own document with its format when there is one, else the
// normalised calls as the plain format. The final answer is always sent
// (it may come from an envelope the document lacks). The
// Idempotency-Key is "RUN_ID/TASK_ID", so a retried request is stored
// once.
//
// Errors: Transient for transport failures, 429 and 5xx; a final error
// quoting the problem for other non-2xx answers and for a response that
// is not an evaluation result.
func (c *ServiceClient) Evaluate(ctx context.Context, req *EvaluationRequest) (*StoredResult, error) {
	b := evaluationBody{
		Contract: req.Contract, Gold: req.Gold,
		Trace: req.Document, Format: req.Format, FinalAnswer: req.Trace.FinalAnswer,
		TaskID: req.TaskID, RunID: req.RunID, Agent: req.Agent, MinScore: req.MinScore, Labels: req.Labels,
	}
	if b.Trace == nil {
		calls := req.Trace.Calls
		if calls == nil {
			calls = []engine.ToolCall{}
		}
		plain, err := json.Marshal(calls)
		if err != nil {
			return nil, fmt.Errorf("encode trace: %w", err)
		}
		b.Trace, b.Format = plain, "plain"
	}
	if req.ContractRef != "" {
		ref, err := json.Marshal(req.ContractRef)
		if err != nil {
			return nil, err
		}
		b.Contract = ref
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode evaluation: %w", err)
	}
	h := http.Header{"Idempotency-Key": {req.RunID + "/" + req.TaskID}}
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	data, err := postJSON(ctx, client, c.BaseURL+"/v1/evaluations", body, h, DefaultMaxAnswerBytes, "toolscore service", nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		ID     string                   `json:"id"`
		Result *engine.EvaluationResult `json:"result"`
		engine.EvaluationResult
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("toolscore service answer is not an evaluation result: %w", err)
	}
	res := out.Result
	if res == nil {
		res = &out.EvaluationResult
	}
	if res.Grade == "" {
		return nil, fmt.Errorf("toolscore service answer is not an evaluation result%s", quoteBody(data, nil))
	}
	return &StoredResult{ID: out.ID, Result: res}, nil
}
