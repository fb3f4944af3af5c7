package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// TestNULInTextFields checks that a NUL character in a field stored as
// text is a 422 naming the field (Postgres refuses it with SQLSTATE 22021
// or 22P05), not a 500.
func TestNULInTextFields(t *testing.T) {
	b := setup(t, nil)
	const nul = `a\u0000b`
	msg := "must not contain a NUL character (\\u0000)"
	tests := []struct {
		name, target, body string
		want               []FieldProblem
	}{
		{"agent", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`, `"agent":"`+nul+`"`),
			[]FieldProblem{{Pointer: "/agent", Message: msg}}},
		{"task_id and run_id", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`, `"task_id":"`+nul+`"`, `"run_id":"`+nul+`"`),
			[]FieldProblem{{Pointer: "/run_id", Message: msg}, {Pointer: "/task_id", Message: msg}}},
		{"label value", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`, `"labels":{"env":"`+nul+`"}`),
			[]FieldProblem{{Pointer: "/labels/env", Message: "a label value must be at most 256 bytes of UTF-8 without NUL"}}},
		{"contract description", "/v1/contracts/flights/versions",
			`{"contract_version": 2, "description": "` + nul + `", "required": [{"tool": "search_flights"}]}`,
			[]FieldProblem{{Pointer: "/description", Message: msg}}},
		{"contract argument", "/v1/contracts/flights/versions",
			`{"contract_version": 2, "required": [{"tool": "search_flights", "args": {"to": "x", "from": "` + nul + `"}}]}`,
			[]FieldProblem{{Pointer: "/required/0/args/from", Message: msg}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body), 422, "invalid-request")
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.results) != 0 || len(b.store.contracts) != 0 {
		t.Errorf("stored %d results and %d contracts", len(b.store.results), len(b.store.contracts))
	}
}

// TestNULInResult checks that a NUL character that reaches the stored
// result is a 422 naming where it came from: the trace, the final answer
// or the inline contract.
func TestNULInResult(t *testing.T) {
	b := setup(t, nil)
	const holds = "holds a NUL character (\\u0000)"
	tests := []struct {
		name, body, kind string
		want             FieldProblem
	}{
		{"trace argument", body(`"gold":`+goldList, `"trace":[{"tool":"search","args":{"q":"a\u0000b"}}]`),
			"invalid-trace", FieldProblem{Pointer: "/trace", Message: holds}},
		{"OpenAI arguments", body(`"gold":`+goldList,
			`"trace":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":\"a\\u0000b\"}"}}]}]`),
			"invalid-trace", FieldProblem{Pointer: "/trace", Message: holds}},
		{"string trace", body(`"gold":`+goldList, `"trace":"{\"tool\":\"search\",\"args\":{\"q\":\"a\\u0000b\"}}"`),
			"invalid-trace", FieldProblem{Pointer: "/trace", Message: holds}},
		{"string trace, escaped backslash", body(`"gold":`+goldList, `"trace":"{\"tool\":\"search\",\"args\":{\"q\":\"a\u005cu0000b\"}}"`),
			"invalid-trace", FieldProblem{Pointer: "/trace", Message: holds}},
		{"final answer", body(`"gold":`+goldList, `"trace":[]`, `"final_answer":"ok\u0000"`),
			"invalid-request", FieldProblem{Pointer: "/final_answer", Message: holds}},
		{"inline contract", body(`"contract":{"contract_version":2,"required":[{"tool":"a","args":{"x":"\u0000"}}]}`, `"trace":[]`),
			"invalid-contract", FieldProblem{Pointer: "/contract", Message: holds}},
		{"gold list", body(`"gold":[{"tool":"a","args":{"x":"\u0000"}}]`, `"trace":[]`),
			"invalid-contract", FieldProblem{Pointer: "/gold", Message: holds}},
		{"forbidden reason", body(`"contract":{"contract_version":2,"required":[{"tool":"a"}],"forbidden":[{"tool":"b","reason":"r\u0000"}]}`, `"trace":[{"tool":"a"},{"tool":"b"}]`),
			"invalid-contract", FieldProblem{Pointer: "/contract", Message: holds}},
		{"alternatives group", body(`"contract":{"contract_version":2,"required":[{"id":"g\u0000","alternatives":[[{"tool":"a"}],[{"tool":"b"}]]}]}`, `"trace":[{"tool":"a"}]`),
			"invalid-contract", FieldProblem{Pointer: "/contract", Message: holds}},
		{"optional call", body(`"contract":{"contract_version":2,"required":[{"tool":"a"}],"optional":[{"tool":"o\u0000"}]}`, `"trace":[{"tool":"a"},{"tool":"o\u0000"}]`),
			"invalid-trace", FieldProblem{Pointer: "/trace", Message: holds}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", "/v1/evaluations", tc.body), 422, tc.kind)
			if diff := cmp.Diff([]FieldProblem{tc.want}, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.results) != 0 {
		t.Errorf("stored %d results", len(b.store.results))
	}
}

// TestNULInBatch checks that a batch answers an item with a NUL in a text
// field with its own 422 and stores the good items, with and without an
// Idempotency-Key.
func TestNULInBatch(t *testing.T) {
	for _, key := range []string{"", "nul-batch"} {
		t.Run(fmt.Sprintf("key %q", key), func(t *testing.T) {
			b := setup(t, nil)
			good := body(`"gold":`+goldList, `"trace":`+traceHalf, `"agent":"ok"`)
			bad := body(`"gold":`+goldList, `"trace":`+traceHalf, `"labels":{"a\u0000":"x"}`)
			var headers []string
			if key != "" {
				headers = []string{"Idempotency-Key", key}
			}
			rec := b.do(t, "POST", "/v1/evaluations/batch", "["+good+","+bad+"]", headers...)
			if rec.Code != 200 {
				t.Fatalf("batch = %d %s", rec.Code, rec.Body)
			}
			got := decode[batchView](t, rec)
			if got.Items[0].Status != 201 || got.Items[1].Status != 422 || got.Succeeded != 1 || got.Failed != 1 {
				t.Fatalf("items = %+v", got.Items)
			}
			want := []FieldProblem{{Pointer: "/labels/a\x00", Message: "a label key must be 1 to 64 bytes of UTF-8 without '=' or NUL"}}
			if diff := cmp.Diff(want, got.Items[1].Problem.Errors); diff != "" {
				t.Errorf("item 1 errors (-want +got):\n%s", diff)
			}
			if len(b.store.results) != 1 {
				t.Errorf("stored %d results, want 1", len(b.store.results))
			}
		})
	}
}

// TestBadQueryText checks that query values with a NUL or invalid UTF-8,
// and malformed query strings, are a 400 naming the parameter.
func TestBadQueryText(t *testing.T) {
	b := setup(t, nil)
	tests := []struct {
		target string
		want   FieldProblem
	}{
		{"/v1/evaluations?agent=a%00b", FieldProblem{Parameter: "agent", Message: "must not contain a NUL character (\\u0000)"}},
		{"/v1/stats?task_id=a%00b", FieldProblem{Parameter: "task_id", Message: "must not contain a NUL character (\\u0000)"}},
		{"/v1/evaluations?label=env%3D%FF", FieldProblem{Parameter: "label", Message: "must be valid UTF-8"}},
		{"/v1/evaluations?run_id=1&cursor=%%%%", FieldProblem{Parameter: "cursor", Message: `the query string is malformed: the value "%%%%" is not validly %-escaped`}},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			p := problemOf(t, b.do(t, "GET", tc.target, ""), 400, "invalid-parameter")
			if diff := cmp.Diff([]FieldProblem{tc.want}, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	problemOf(t, b.do(t, "GET", "/v1/contracts/a%00b/versions", ""), 404, "not-found")
	problemOf(t, b.do(t, "GET", "/v1/contracts/a%00b/versions/1", ""), 404, "not-found")
}

// TestInvalidTextFromStore checks the backstop: a store error wrapping
// record.ErrInvalidText is a 422, not a 500.
func TestInvalidTextFromStore(t *testing.T) {
	b := setup(t, nil)
	b.store.insertErr = fmt.Errorf("write results: %w", record.ErrInvalidText)
	p := problemOf(t, b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":[]`)), 422, "invalid-request")
	if !errors.Is(problemFor(fmt.Errorf("x: %w", record.ErrInvalidText)), record.ErrInvalidText) {
		t.Errorf("problemFor lost the cause")
	}
	if p.Detail != "a text value holds a NUL character (\\u0000) or invalid UTF-8, which cannot be stored" {
		t.Errorf("detail = %q", p.Detail)
	}
}

// TestReadyzHidesDriverError checks that /readyz answers a dropped
// database with 503 not-ready and Retry-After, without the driver's
// message (user, host:port, database name).
func TestReadyzHidesDriverError(t *testing.T) {
	b := setup(t, nil)
	b.store.readyErr = fmt.Errorf("schema version: %w: failed to connect to `user=postgres database=prod_db`: 10.0.0.5:5432: FATAL: database \"prod_db\" does not exist (SQLSTATE 3D000)", engine.ErrUnavailable)
	rec := b.do(t, "GET", "/readyz", "")
	p := problemOf(t, rec, 503, "not-ready")
	if want := "not ready: the database is unreachable or cannot be used; see the server log"; p.Detail != want {
		t.Errorf("detail = %q, want %q", p.Detail, want)
	}
	if got := rec.Header().Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
	b.store.readyErr = errors.New("database schema at version 3, want 6")
	if p := problemOf(t, b.do(t, "GET", "/readyz", ""), 503, "not-ready"); p.Detail != "not ready: database schema at version 3, want 6" {
		t.Errorf("schema detail = %q", p.Detail)
	}
}
