package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIdempotencyCanonical checks that a retry with the same JSON in
// another key order or white space replays the stored answer, that other
// content under the key is 409, and that an empty key is 400.
func TestIdempotencyCanonical(t *testing.T) {
	b := setup(t, nil)
	first := b.do(t, "POST", "/v1/evaluations", `{"gold": `+goldList+`, "trace": `+traceHalf+`, "agent": "a"}`, "Idempotency-Key", "k-1")
	if first.Code != 201 {
		t.Fatalf("first = %d %s", first.Code, first.Body)
	}
	again := b.do(t, "POST", "/v1/evaluations", "{\n  \"agent\":\"a\",\"trace\":"+traceHalf+",\n  \"gold\":"+goldList+"}", "Idempotency-Key", "k-1")
	if again.Code != 201 || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("reordered replay = %d (Idempotent-Replayed %q) %s", again.Code, again.Header().Get("Idempotent-Replayed"), again.Body)
	}
	if diff := cmp.Diff(first.Body.String(), again.Body.String()); diff != "" {
		t.Errorf("replay differs (-first +replay):\n%s", diff)
	}
	problemOf(t, b.do(t, "POST", "/v1/evaluations", `{"gold": `+goldList+`, "trace": `+traceHalf+`, "agent": "b"}`, "Idempotency-Key", "k-1"),
		409, "idempotency-conflict")
	// A key may be a credential: the conflict does not echo it.
	const secretKey = "ghp_R7cXk2Vq9LmN4bT8wZ3yH6jF1dS5aQ0pE2uK"
	b.do(t, "POST", "/v1/evaluations", `{"gold": `+goldList+`, "trace": `+traceHalf+`}`, "Idempotency-Key", secretKey)
	conflict := b.do(t, "POST", "/v1/evaluations", `{"gold": `+goldList+`, "trace": `+traceHalf+`, "agent": "c"}`, "Idempotency-Key", secretKey)
	if p := problemOf(t, conflict, 409, "idempotency-conflict"); p.Detail != "the Idempotency-Key was used with another request" {
		t.Errorf("conflict detail = %q", p.Detail)
	}

	item := body(`"gold":`+goldList, `"trace":`+traceHalf)
	firstBatch := b.do(t, "POST", "/v1/evaluations/batch", item+"\n"+item+"\n", "Content-Type", "application/x-ndjson", "Idempotency-Key", "b-1")
	spaced := `{ "trace" : ` + traceHalf + ` , "gold" : ` + goldList + ` }`
	againBatch := b.do(t, "POST", "/v1/evaluations/batch", "\n"+spaced+"\n"+item, "Content-Type", "application/x-ndjson", "Idempotency-Key", "b-1")
	if firstBatch.Code != 200 || againBatch.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("NDJSON batch replay = %d (Idempotent-Replayed %q) %s", againBatch.Code, againBatch.Header().Get("Idempotent-Replayed"), againBatch.Body)
	}
	if n := len(b.store.results); n != 4 {
		t.Errorf("stored results = %d, want 4", n)
	}

	p := problemOf(t, b.do(t, "POST", "/v1/evaluations", item, "Idempotency-Key", ""), 400, "invalid-parameter")
	want := []FieldProblem{{Parameter: "Idempotency-Key", Message: "must be 1 to 255 printable ASCII characters; omit the header for none"}}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("empty key errors (-want +got):\n%s", diff)
	}
}
