package regrade

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/reeval"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// failedCredentials returns the failed credentials check of checks, as
// the store's query does.
func failedCredentials(checks json.RawMessage) json.RawMessage {
	var cs struct {
		Items []json.RawMessage `json:"items"`
	}
	_ = json.Unmarshal(checks, &cs)
	for _, raw := range cs.Items {
		var c engine.Check
		if json.Unmarshal(raw, &c) == nil && c.Name == "credentials" && c.Status == engine.CheckFail {
			return raw
		}
	}
	return nil
}

// stored turns a result into the original a chunk reads.
func stored(r record.Result) record.RegradeOriginal {
	var issues []json.RawMessage
	_ = json.Unmarshal(r.Issues, &issues)
	o := record.RegradeOriginal{ResultSummary: r.ResultSummary, Options: r.Options, TraceCalls: r.TraceCalls,
		FinalAnswer: r.FinalAnswer, FailedCredentials: failedCredentials(r.Checks)}
	if len(issues) > 0 {
		o.FirstIssue = issues[0]
	}
	return o
}

func TestRegradeOne(t *testing.T) {
	t.Parallel()
	v1 := record.ContractRef{Name: "flights", Version: 1, SHA256: strings.Repeat("1", 64), Kind: record.KindContract}
	v2 := record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}
	c1, _ := engine.ParseContract([]byte(flightsV1))
	c2, _ := engine.ParseContract([]byte(flightsV2))
	orig := regradetest.Result(t, v1, c1, traceSearch, regradetest.Options{SafetyGate: true}, t0)
	orig.TaskID, orig.RunID, orig.Labels = "task-1", "run-1", map[string]string{"env": "prod"}
	o := stored(orig)
	rg, id := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	now := t0.Add(time.Hour)
	out, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, id, now, nil)
	if err != nil || out.Failure != "" {
		t.Fatalf("regradeOne = %+v, %v", out, err)
	}
	// The same as grading the trace afresh against v2, with the original's
	// identifiers.
	want := regradetest.Result(t, v2, c2, traceSearch, regradetest.Options{SafetyGate: true}, now)
	want.ID, want.TaskID, want.RunID, want.Labels = id, "task-1", "run-1", map[string]string{"env": "prod"}
	want.RegradeOf, want.RegradeID = orig.ID, rg
	// Its trace calls are the original's bytes, which the store then keeps
	// once (migration 00011).
	want.SharesTrace = true
	if string(out.Result.TraceCalls) != string(orig.TraceCalls) {
		t.Errorf("trace_calls %s, want the original's %s", out.Result.TraceCalls, orig.TraceCalls)
	}
	if diff := cmp.Diff(&want, out.Result); diff != "" {
		t.Errorf("regraded result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig.ResultSummary, out.Original); diff != "" {
		t.Errorf("outcome original (-want +got):\n%s", diff)
	}
	// With a cache, its expected calls are the cache's bytes for its
	// combination (none: flights has no alternatives), which the store
	// keeps once per regrade (migration 00016).
	cached, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, id, now, &resultjson.ExpectedCache{})
	if err != nil || cached.Result == nil {
		t.Fatalf("regradeOne with a cache = %+v, %v", cached, err)
	}
	want.SharesExpected, want.ExpectedKey = true, ""
	if diff := cmp.Diff(&want, cached.Result); diff != "" {
		t.Errorf("regraded result with a cache (-want +got):\n%s", diff)
	}

	for name, mod := range map[string]func(*record.RegradeOriginal){
		"unreadable": func(o *record.RegradeOriginal) { o.Unreadable = "labels: bad" },
		"options":    func(o *record.RegradeOriginal) { o.Options = json.RawMessage(`{"min_score": "high"}`) },
		"weights":    func(o *record.RegradeOriginal) { o.Options = json.RawMessage(`{"weights": {"nope": 1}}`) },
		"calls":      func(o *record.RegradeOriginal) { o.TraceCalls = json.RawMessage(`7`) },
	} {
		bad := stored(orig)
		mod(&bad)
		out, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &bad, rg, id, now, nil)
		if err != nil || out.Result != nil || out.Failure == "" {
			t.Errorf("%s: regradeOne = %+v, %v; want a failure", name, out, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := regradeOne(ctx, testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, id, now, nil); err != context.Canceled {
		t.Errorf("regradeOne(cancelled) = %v, want context.Canceled", err)
	}
}

func TestRegradeKeepsCredentialFinding(t *testing.T) {
	t.Parallel()
	v1 := record.ContractRef{Name: "flights", Version: 1, SHA256: strings.Repeat("1", 64), Kind: record.KindContract}
	v2 := record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}
	c1, _ := engine.ParseContract([]byte(flightsV1))
	// v2 without flightsV2's min_score: the extra api_key argument costs
	// the score 0.1.
	c2, _ := engine.ParseContract([]byte(`{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^a"}}}, {"tool": "book"}]}`))
	leaky := engine.Trace{Calls: []engine.ToolCall{
		{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": "abc", "api_key": "k7Hq93LmPz2Xw8Rt"})},
		{Tool: "book", Args: jsondoc.MustFromAny(map[string]any{})},
	}}
	orig := regradetest.Result(t, v1, c1, leaky, regradetest.Options{SafetyGate: true}, t0)
	if orig.Passed || strings.Contains(string(orig.TraceCalls), "k7Hq93LmPz2Xw8Rt") {
		t.Fatalf("original: passed %v, trace_calls %s; want a failed, redacted result", orig.Passed, orig.TraceCalls)
	}
	o := stored(orig)
	rg := uuid.Must(uuid.NewV7())
	out, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, uuid.Must(uuid.NewV7()), t0, nil)
	if err != nil || out.Result == nil {
		t.Fatalf("regradeOne = %+v, %v", out, err)
	}
	// Against v2 the calls pass on score (0.9), but the leaked secret still
	// fails the safety gate.
	r := out.Result
	if r.SharesTrace {
		t.Error("a result whose credentials check found a secret shares its original's trace calls; want its own redacted copy")
	}
	if cached, _ := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, uuid.Must(uuid.NewV7()), t0, &resultjson.ExpectedCache{}); cached.Result == nil || cached.Result.SharesExpected {
		t.Error("a result whose credentials check found a secret shares its regrade's expected calls; want its own redacted copy")
	}
	if r.Passed || !engine.PassesMinScore(r.Score, r.MinScore) {
		t.Errorf("regraded: passed %v, score %v (min %v); want FAIL with a passing score", r.Passed, r.Score, r.MinScore)
	}
	var checks engine.Checks
	var issues []engine.Issue
	if err := json.Unmarshal(r.Checks, &checks); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Issues, &issues); err != nil {
		t.Fatal(err)
	}
	var cred engine.Check
	for _, c := range checks.Items {
		if c.Name == "credentials" {
			cred = c
		}
	}
	if cred.Status != engine.CheckFail || checks.Fail < 1 || checks.Pass+checks.Fail+checks.Unknown != len(checks.Items) {
		t.Errorf("checks = %+v; want the original's failed credentials check, counts consistent", checks)
	}
	if len(issues) == 0 || issues[0].Kind != engine.IssueCredential || issues[0].Tool != "search" || issues[0].Severity != engine.SeverityCritical {
		t.Errorf("issues = %+v; want the credential issue first", issues)
	}

	// With the safety gate off the verdict follows the score.
	orig = regradetest.Result(t, v1, c1, leaky, regradetest.Options{SafetyGate: false}, t0)
	o = stored(orig)
	if out, _ := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, rg, uuid.Must(uuid.NewV7()), t0, nil); out.Result == nil || !out.Result.Passed {
		t.Errorf("regraded without the safety gate: passed %v; want PASS", out.Result != nil && out.Result.Passed)
	}
}

// TestRegradeRegexWork: an original whose arguments the new contract's
// $regex patterns (and its stored forbidden rules') could take more than
// engine.MaxRegexWork steps to match is not graded, naming the bound; one
// just under it is.
func TestRegradeRegexWork(t *testing.T) {
	t.Parallel()
	v1 := record.ContractRef{Name: "flights", Version: 1, SHA256: strings.Repeat("1", 64), Kind: record.KindContract}
	v2 := record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}
	c1, _ := engine.ParseContract([]byte(flightsV1))
	c2, err := engine.ParseContract([]byte(`{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "[a-z]{1,1000}x"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sizes := c2.RegexSizes()
	n := int64(sizes["search"])
	if n == 0 {
		t.Fatal("no regex size for search")
	}
	// The largest argument under the bound, and one byte more.
	under := engine.MaxRegexWork / n
	for _, tc := range []struct {
		name      string
		bytes     int64
		forbidden json.RawMessage
		fails     bool
	}{
		{"under", under, nil, false},
		{"over", under + 1, nil, true},
		{"forbidden", under, json.RawMessage(`[{"tool": "search", "args": {"q": {"$regex": "[a-z]{1,5}x"}}}]`), true},
	} {
		trace := engine.Trace{Calls: []engine.ToolCall{{Tool: "search", Args: jsondoc.MustFromAny(map[string]any{"q": strings.Repeat("a", int(tc.bytes))})}}}
		o := stored(regradetest.Result(t, v1, c1, trace, regradetest.Options{Forbidden: tc.forbidden}, t0))
		out, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, sizes, v2, &o, uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), t0, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !tc.fails {
			if out.Failure != "" || out.Result == nil {
				t.Errorf("%s: regradeOne = failure %q, want a result", tc.name, out.Failure)
			}
			continue
		}
		work := n * tc.bytes
		if tc.forbidden != nil {
			fc, _ := engine.ParseForbidden(tc.forbidden)
			work += int64(engine.ForbiddenRegexSizes(fc)["search"]) * tc.bytes
		}
		want := fmt.Sprintf("matching the $regex patterns of the contract and the stored forbidden rules against this result's arguments could take %d steps (argument bytes times pattern instructions), over the limit of 20000000", work)
		if out.Result != nil || out.Failure != want {
			t.Errorf("%s: regradeOne = result %t, failure %q; want failure %q", tc.name, out.Result != nil, out.Failure, want)
		}
	}
}

// TestRegradeScoringCells: an original whose calls against the new
// contract need more than engine.MaxScoringCells scoring cells (its
// expected calls times the original's calls) is not graded, saying the
// counts and the bound; one at the bound is.
func TestRegradeScoringCells(t *testing.T) {
	t.Parallel()
	v1 := record.ContractRef{Name: "flights", Version: 1, SHA256: strings.Repeat("1", 64), Kind: record.KindContract}
	v2 := record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}
	c1, _ := engine.ParseContract([]byte(flightsV1))
	calls := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"tool": "a"},`, n), ",") + "]"
	}
	for _, tc := range []struct {
		name     string
		expected int
		want     string
	}{
		{"at the bound", 4000, ""},
		{"over", 4001, "the contract's 4001 expected calls (required and every alternative's) against this result's 4000 calls need 16004000 scoring cells, over the limit of 16000000"},
	} {
		c2, err := engine.ParseContract([]byte(`{"contract_version": 2, "required": ` + calls(tc.expected) + `}`))
		if err != nil {
			t.Fatal(err)
		}
		trace := engine.Trace{Calls: make([]engine.ToolCall, 4000)}
		for i := range trace.Calls {
			trace.Calls[i].Tool = "a"
		}
		o := stored(regradetest.Result(t, v1, c1, trace, regradetest.Options{}, t0))
		out, err := regradeOne(context.Background(), testSecrets, new(reeval.Reader), c2, c2.RegexSizes(), v2, &o, uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), t0, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == "" {
			if out.Failure != "" || out.Result == nil || !out.Result.Passed {
				t.Errorf("%s: regradeOne = failure %q, result %t; want a passing result", tc.name, out.Failure, out.Result != nil)
			}
			continue
		}
		if out.Result != nil || out.Failure != tc.want {
			t.Errorf("%s: regradeOne = result %t, failure %q; want failure %q", tc.name, out.Result != nil, out.Failure, tc.want)
		}
	}
}
