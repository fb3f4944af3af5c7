package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/auth"
)

// TestContractRepeatedKey: a key given twice in a contract is a 422
// invalid-contract at the later occurrence's pointer, inline (pointer,
// line and column in the request body), on /v1/validate and in the
// registry; in the request's own forbidden rules it is a 422
// invalid-request.
func TestContractRepeatedKey(t *testing.T) {
	b := setup(t, nil)
	const contract = `{"contract_version": 2, "required": [{"tool": "search_flights"}], "forbidden": [{"tool": "book_flight"}], "forbidden": []}`
	const msg = `repeated key "forbidden" at line 1:107 (first at line 1:67): a contract must not repeat a key`
	for _, tc := range []struct {
		name, target, body string
		slug               string
		want               []FieldProblem
	}{
		{"inline", "/v1/evaluations?store=false", `{"contract": ` + contract + `, "trace": ` + traceGood + `}`,
			"invalid-contract", []FieldProblem{{Pointer: "/contract/forbidden", Message: `repeated key "forbidden" at line 1:120 (first at line 1:80): a contract must not repeat a key`}}},
		{"validate", "/v1/validate", contract, "invalid-contract", []FieldProblem{{Pointer: "/forbidden", Message: msg}}},
		{"registry", "/v1/contracts/flights/versions", contract, "invalid-contract", []FieldProblem{{Pointer: "/forbidden", Message: msg}}},
		{"forbidden rules", "/v1/evaluations?store=false", `{"contract": ` + contractA + `, "trace": ` + traceGood + `, "forbidden": [{"tool": "x", "reason": "a", "reason": "b"}]}`,
			"invalid-request", []FieldProblem{{Pointer: "/forbidden/0/reason", Message: `repeated key "reason" at line 3:330 (first at line 3:315): forbidden rules must not repeat a key`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body), 422, tc.slug)
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.contracts) != 0 {
		t.Errorf("a contract with a repeated key was stored")
	}
}

// TestRequestRepeatedMember: a member the top-level object of a request
// body gives twice is a 422 invalid-request at its pointer, naming the key
// and the line:column of both occurrences (in a batch, that item's, its
// lines and columns counted in the item); the keys inside the members (a
// trace's, labels) keep the last one.
func TestRequestRepeatedMember(t *testing.T) {
	b := setup(t, nil)
	const rule = ": a request must not repeat a member"
	twoTraces := "{\n  \"contract\": \"flights\",\n  \"trace\": [],\n  \"trace\": " + traceGood + "\n}"
	twoTracesMsg := `repeated key "trace" at line 4:3 (first at line 3:3)` + rule
	for _, tc := range []struct {
		name, target, body string
		headers            []string
		detail             string
		want               []FieldProblem
	}{
		{"two traces", "/v1/evaluations?store=false", twoTraces, nil,
			"/trace: " + twoTracesMsg, []FieldProblem{{Pointer: "/trace", Message: twoTracesMsg}}},
		{"two traces, stored", "/v1/evaluations", twoTraces, nil,
			"/trace: " + twoTracesMsg, []FieldProblem{{Pointer: "/trace", Message: twoTracesMsg}}},
		{"two traces, idempotent", "/v1/evaluations", twoTraces, []string{"Idempotency-Key", "repeat-1"},
			"/trace: " + twoTracesMsg, []FieldProblem{{Pointer: "/trace", Message: twoTracesMsg}}},
		{"two contracts", "/v1/evaluations?store=false", `{"contract": "flights@1", "trace": [], "contract": "flights@2"}`, nil,
			`/contract: repeated key "contract" at line 1:40 (first at line 1:2)` + rule,
			[]FieldProblem{{Pointer: "/contract", Message: `repeated key "contract" at line 1:40 (first at line 1:2)` + rule}}},
		// The first contract is one the cache has (parseBody's path).
		{"cached contract, then another", "/v1/evaluations?store=false", `{"contract": ` + contractA + `, "trace": ` + traceGood + ",\n" + `"contract": "flights"}`, nil,
			`/contract: repeated key "contract" at line 4:1 (first at line 1:2)` + rule,
			[]FieldProblem{{Pointer: "/contract", Message: `repeated key "contract" at line 4:1 (first at line 1:2)` + rule}}},
		{"two members twice", "/v1/evaluations?store=false", `{"agent": "a", "agent": "b", "task_id": "t", "task_id": "u", "contract": "flights", "trace": []}`, nil,
			`/agent: repeated key "agent" at line 1:16 (first at line 1:2)` + rule + "; and 1 more repeated member",
			[]FieldProblem{{Pointer: "/agent", Message: `repeated key "agent" at line 1:16 (first at line 1:2)` + rule},
				{Pointer: "/task_id", Message: `repeated key "task_id" at line 1:46 (first at line 1:30)` + rule}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cached contract, then another" {
				if rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+contractA+`, "trace": `+traceGood+`}`); rec.Code != 200 {
					t.Fatalf("priming the cache = %d %s", rec.Code, rec.Body)
				}
			}
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body, tc.headers...), 422, "invalid-request")
			if p.Detail != tc.detail {
				t.Errorf("detail = %q, want %q", p.Detail, tc.detail)
			}
			if diff := cmp.Diff(tc.want, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if len(b.store.results) != 0 {
		t.Errorf("%d results stored, want none", len(b.store.results))
	}

	// Batches: the item that repeats a member is a 422, the others graded.
	good := `{"contract": ` + contractA + `, "trace": ` + traceGood + `}`
	for _, tc := range []struct {
		name, body, media string
		line              int
	}{
		{"array", "[" + good + ",\n" + twoTraces + "]", "application/json", 0},
		{"ndjson", `{"gold": ` + goldList + `, "trace": ` + traceGood + "}\n" + `{"contract": "flights", "trace": [], "trace": []}` + "\n", "application/x-ndjson", 2},
	} {
		t.Run("batch "+tc.name, func(t *testing.T) {
			rec := b.do(t, "POST", "/v1/evaluations/batch?store=false", tc.body, "Content-Type", tc.media)
			got := decode[batchView](t, rec)
			if len(got.Items) != 2 || got.Items[0].Status != 200 || got.Items[1].Status != 422 || got.Items[1].Line != tc.line || got.Items[1].Problem == nil {
				t.Fatalf("batch = %d %s", rec.Code, rec.Body)
			}
			msg := twoTracesMsg
			if tc.name == "ndjson" {
				msg = `repeated key "trace" at line 1:38 (first at line 1:25)` + rule
			}
			if diff := cmp.Diff([]FieldProblem{{Pointer: "/trace", Message: msg}}, got.Items[1].Problem.Errors); diff != "" {
				t.Errorf("item 1 errors (-want +got):\n%s", diff)
			}
		})
	}

	// Keys repeated inside the members keep the last one.
	rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+contractA+`, "labels": {"env": "dev", "env": "prod"}, "trace": `+
		`[{"tool": "search_flights", "args": {"destination": "OPO", "destination": "LIS"}}, {"tool": "get_weather", "tool": "get_weather", "args": {"city": "Lisbon"}}, {"tool": "book_flight", "args": {"flight_id": "FL-204"}}]}`)
	if rec.Code != 200 {
		t.Fatalf("repeated keys inside the members = %d %s", rec.Code, rec.Body)
	}
	if v := decode[evaluationView](t, rec); !v.Passed || v.Labels["env"] != "prod" {
		t.Errorf("repeated keys inside the members: passed %v, labels %v; want a PASS and env=prod", v.Passed, v.Labels)
	}
}

// TestBodyRepeatedMember: the bodies encoding/json reads (regrades, runs,
// keys, projects) refuse a member given twice as the evaluation request
// does, and one given again in another case too, which encoding/json
// would read into the same field.
func TestBodyRepeatedMember(t *testing.T) {
	const rule = ": a request must not repeat a member"
	rb, _ := setupRegrades(t)
	runs, _ := setupRuns(t)
	ab, keys := setupAuth(t, nil)
	admin := bearer(keys.addKey(t, 1, auth.ScopeAdmin))
	for _, tc := range []struct {
		name    string
		b       *testBundle
		target  string
		body    string
		headers []string
		want    FieldProblem
	}{
		{"regrade", rb, "/v1/regrades", `{"contract": "flights@2", "contract": "flights@3"}`, nil,
			FieldProblem{Pointer: "/contract", Message: `repeated key "contract" at line 1:27 (first at line 1:2)` + rule}},
		{"regrade, case", rb, "/v1/regrades", `{"contract": "flights@2", "Contract": "flights@3"}`, nil,
			FieldProblem{Pointer: "/Contract", Message: `repeated key "Contract" at line 1:27 (first at line 1:2 as "contract")` + rule}},
		{"run", runs, "/v1/runs", "{\"agent\": \"a\",\n \"suite\": {\"name\": \"s\", \"name\": \"t\"},\n \"agent\": \"b\"}", nil,
			FieldProblem{Pointer: "/agent", Message: `repeated key "agent" at line 3:2 (first at line 1:2)` + rule}},
		{"key", ab, "/v1/keys", `{"name": "ci", "scopes": ["read"], "name": "c\u0069"}`, admin,
			FieldProblem{Pointer: "/name", Message: `repeated key "name" at line 1:36 (first at line 1:2)` + rule}},
		{"key, escaped", ab, "/v1/keys", `{"name": "ci", "scopes": ["read"], "n\u0061me": "x"}`, admin,
			FieldProblem{Pointer: "/name", Message: `repeated key "name" at line 1:36 (first at line 1:2)` + rule}},
		{"project", ab, "/v1/projects", `{"name": "team-b", "name": "team-c"}`, admin,
			FieldProblem{Pointer: "/name", Message: `repeated key "name" at line 1:20 (first at line 1:2)` + rule}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, tc.b.do(t, "POST", tc.target, tc.body, tc.headers...), 422, "invalid-request")
			if want := tc.want.Pointer + ": " + tc.want.Message; p.Detail != want {
				t.Errorf("detail = %q, want %q", p.Detail, want)
			}
			if diff := cmp.Diff([]FieldProblem{tc.want}, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTopRepeats: topRepeats reads the top-level members of valid JSON
// only, past strings holding brackets, quotes and escapes and nested
// values holding the same keys.
func TestTopRepeats(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []repeatedMember
	}{
		{`{}`, nil},
		{` [{"a": 1, "a": 2}] `, nil},
		{`"a"`, nil},
		{`{"a": {"a": 1, "a": 2}, "b": [{"a": 3}], "c": "}\"{", "d": -1.5e3, "e": true, "f": null}`, nil},
		{`{"a": "x\\", "b": "]", "a": 1}`, []repeatedMember{{"a", "a", 23, 1}}},
		{` { "a" : [ "{" , { "a" : 1 } ] , "A" : 2 } `, []repeatedMember{{"A", "a", 33, 3}}},
		{`{"k": 1, "\u212a": 2, "ſ": 3, "s": 4}`, []repeatedMember{{"\u212a", "k", 9, 1}, {"s", "ſ", 31, 22}}},
	} {
		if got := topRepeats([]byte(tc.doc)); !cmp.Equal(tc.want, got, cmp.AllowUnexported(repeatedMember{})) {
			t.Errorf("topRepeats(%s) = %+v, want %+v", tc.doc, got, tc.want)
		}
	}
}
