package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// The two-project isolation test (issue 14). Project A (default) holds
// contracts, evaluations (single, batch, with Idempotency-Keys), a
// regrade, a harness run and keys, all carrying marker strings. Project
// B's key, which holds every scope, then calls every route of the router
// (walked with chi.Walk, so a new route without a case here fails the
// test) with A's ids and names. B must see none of A's markers in any
// answer, get 404 for A's ids, and change nothing of A: every row of A
// in every table (the list of tables is checked against the database, so
// a new table cannot be forgotten either) is the same before and after.

const (
	markName = "amark-flights"
	markDesc = "A-MARK-description"
)

// isoContract returns a contract of A; v distinguishes its versions.
func isoContract(v int) string {
	return fmt.Sprintf(`{"contract_version": 2, "description": "%s %d", "required": [{"tool": "search", "args": {"q": {"$regex": "^lis"}}}], "min_score": 0.%d}`,
		markDesc, v, v)
}

// isoWorld is what the isolation cases know of A and B.
type isoWorld struct {
	base           string
	a, b           string // every-scope keys of A and B
	aEvalIDs       []string
	aRegradeID     string
	aRunID         string
	aKeyIDs        []string
	markers        []string // strings of A that B must never see
	bEvaluations   int      // B's stored evaluations so far
	bProject       string
	aIdem, aBatchI string
}

// aTraceID is the OpenTelemetry trace A exports; isoExport is an export
// of one span of that trace id, as A or B sends it.
const aTraceID = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a1"

func isoExport(service string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"` + service + `"}}]},
		"scopeSpans":[{"spans":[{"traceId":"` + aTraceID + `","spanId":"0000000000000001","name":"invoke_agent","startTimeUnixNano":"1","endTimeUnixNano":"9",
		"attributes":[{"key":"toolscore.task_id","value":{"stringValue":"A-MARK-otel-task"}}]},
		{"traceId":"` + aTraceID + `","spanId":"0000000000000002","parentSpanId":"0000000000000001","name":"execute_tool search","startTimeUnixNano":"2",
		"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"search"}},
		{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"q\":\"lisbon\"}"}}]}]}]}]}`
}

// isoRule is A's grading rule; v distinguishes its versions.
func isoRule(v int) string {
	return fmt.Sprintf(`{"description": "%s rule %d", "match": [{"attribute": "service.name", "equals": "A-MARK-service"}], "contract": "%s@1", "task_id": "toolscore.task_id"}`,
		markDesc, v, markName)
}

// isoCase is the check of one route: it calls the route as B and fails
// the test on any leak or change.
type isoCase func(t *testing.T, w *isoWorld)

// asB calls a route with B's key and checks the answer for A's markers.
func (w *isoWorld) asB(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	r, raw := callRaw(t, w.b, method, w.base+path, body, headers...)
	for _, m := range w.markers {
		// An id B sent may be echoed back (in a 404's instance and
		// detail): that says nothing of A.
		if strings.Contains(raw, m) && !strings.Contains(path+body, m) {
			t.Errorf("%s %s as B: the answer holds A's %q: %.300s", method, path, m, raw)
		}
	}
	return r
}

// want404 checks that B gets 404 not-found for each of A's paths.
func (w *isoWorld) want404(t *testing.T, method string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if r := w.asB(t, method, p, ""); r.status != 404 || r.body["type"] != "https://toolscore.dev/problems/not-found" {
			t.Errorf("%s %s as B = %d %v, want 404", method, p, r.status, r.body)
		}
	}
}

// items returns the items of a page answer.
func items(r response) []any {
	v, _ := r.body["items"].([]any)
	return v
}

var isoCases = map[string]isoCase{
	"GET /healthz":  func(t *testing.T, w *isoWorld) { w.asB(t, "GET", "/healthz", "") },
	"HEAD /healthz": func(t *testing.T, w *isoWorld) { w.asB(t, "HEAD", "/healthz", "") },
	"GET /readyz":   func(t *testing.T, w *isoWorld) { w.asB(t, "GET", "/readyz", "") },
	"HEAD /readyz":  func(t *testing.T, w *isoWorld) { w.asB(t, "HEAD", "/readyz", "") },
	"GET /openapi.yaml": func(t *testing.T, w *isoWorld) {
		// A static document (its examples name project default).
		if r, _ := callRaw(t, w.b, "GET", w.base+"/openapi.yaml", ""); r.status != 200 {
			t.Errorf("openapi.yaml = %d", r.status)
		}
	},
	"GET /metrics": func(t *testing.T, w *isoWorld) {
		// Metrics count every project: an API key does not open them.
		if r := w.asB(t, "GET", "/metrics", ""); r.status != 401 {
			t.Errorf("GET /metrics as B = %d, want 401", r.status)
		}
	},
	"POST /v1/validate": func(t *testing.T, w *isoWorld) {
		if r := w.asB(t, "POST", "/v1/validate", `{"contract_version": 2, "required": [{"tool": "b"}]}`); r.status != 200 {
			t.Errorf("validate = %d", r.status)
		}
	},
	"POST /v1/traces": func(t *testing.T, w *isoWorld) {
		// B's spans with A's trace id make B's own trace, matched by none
		// of A's rules (A's trace and rows stay as they are).
		if r := w.asB(t, "POST", "/v1/traces", isoExport("A-MARK-service")); r.status != 200 {
			t.Errorf("B exports under A's trace id = %d %v, want 200", r.status, r.body)
		}
	},
	"POST /v1/traces/regrade": func(t *testing.T, w *isoWorld) {
		// A's trace keeps its spans (TOOLSCORE_OTLP_KEEP_SPANS), so only
		// the project stops B from grading it again; B may requeue a trace
		// of its own under that id, never A's.
		r := w.asB(t, "POST", "/v1/traces/regrade", `{"states": ["graded", "unmatched", "no_tool_calls", "failed"], "trace_ids": ["`+aTraceID+`"]}`)
		if r.status != 200 {
			t.Fatalf("B regrades A's trace id = %d %v, want 200", r.status, r.body)
		}
		if a := callAs(t, w.a, "GET", w.base+"/v1/traces/"+aTraceID, ""); a.body["revision"] != 1.0 || a.body["state"] != "graded" {
			t.Errorf("A's trace after B's regrade = %v, want graded at revision 1", a.body)
		}
	},
	"GET /v1/traces/{trace_id}": func(t *testing.T, w *isoWorld) {
		// 404, or B's own trace (after B exported under that id): never A's.
		r := w.asB(t, "GET", "/v1/traces/"+aTraceID, "")
		if r.status != 404 && (r.status != 200 || r.body["result_id"] != nil) {
			t.Errorf("B reads A's trace = %d %v, want 404 or B's own, ungraded", r.status, r.body)
		}
	},
	"GET /v1/rules": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "GET", "/v1/rules", "")
		for _, it := range items(r) {
			if it.(map[string]any)["version"] != 1.0 {
				t.Errorf("B's rules hold %v, not only B's own version 1", it)
			}
		}
	},
	"GET /v1/rules/{name}/versions": func(t *testing.T, w *isoWorld) {
		if r := w.asB(t, "GET", "/v1/rules/"+markName+"/versions", ""); r.status != 404 && len(items(r)) != 1 {
			t.Errorf("B lists A's rule versions = %d %v, want 404 or B's own one", r.status, r.body)
		}
	},
	"GET /v1/rules/{name}/versions/{version}": func(t *testing.T, w *isoWorld) {
		w.want404(t, "GET", "/v1/rules/"+markName+"/versions/2")
	},
	"POST /v1/rules/{name}/versions": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "POST", "/v1/rules/"+markName+"/versions", `{"contract": "b-contract"}`)
		if r.status != 201 || r.body["version"] != 1.0 {
			t.Errorf("B publishes a rule under A's name = %d %v, want 201 version 1", r.status, r.body)
		}
	},
	"GET /v1/contracts": func(t *testing.T, w *isoWorld) {
		if r := w.asB(t, "GET", "/v1/contracts", ""); r.status != 200 || len(items(r)) != 0 {
			t.Errorf("B's contracts = %d %v, want none", r.status, r.body)
		}
	},
	"GET /v1/contracts/{name}/versions": func(t *testing.T, w *isoWorld) {
		w.want404(t, "GET", "/v1/contracts/"+markName+"/versions")
	},
	"GET /v1/contracts/{name}/versions/{version}": func(t *testing.T, w *isoWorld) {
		w.want404(t, "GET", "/v1/contracts/"+markName+"/versions/1", "/v1/contracts/"+markName+"/versions/latest")
	},
	"POST /v1/contracts/{name}/versions": func(t *testing.T, w *isoWorld) {
		// B may use the same name: it gets its own version 1.
		r := w.asB(t, "POST", "/v1/contracts/"+markName+"/versions", `[{"tool": "search"}]`)
		if r.status != 201 || r.body["version"] != 1.0 {
			t.Errorf("B publishes under A's name = %d %v, want 201 version 1", r.status, r.body)
		}
	},
	"POST /v1/evaluations": func(t *testing.T, w *isoWorld) {
		// A's registry version 2 does not exist for B.
		r := w.asB(t, "POST", "/v1/evaluations", `{"contract": "`+markName+`@2", "trace": [{"tool": "search", "args": {"q": "lisbon"}}]}`)
		if r.status != 422 || r.body["type"] != "https://toolscore.dev/problems/unknown-contract" {
			t.Errorf("B evaluates with A's contract = %d %v, want 422 unknown-contract", r.status, r.body)
		}
		// A's Idempotency-Key is B's own: a new evaluation, not A's.
		r = w.asB(t, "POST", "/v1/evaluations", `{"gold": [{"tool": "search"}], "trace": [{"tool": "search"}]}`, "Idempotency-Key", w.aIdem)
		if r.status != 201 || r.header.Get("Idempotent-Replayed") != "" || slices.Contains(w.aEvalIDs, fmt.Sprint(r.body["id"])) {
			t.Errorf("B with A's Idempotency-Key = %d %v %v, want a new 201", r.status, r.header, r.body)
		}
		w.bEvaluations++
	},
	"POST /v1/evaluations/batch": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "POST", "/v1/evaluations/batch", `[{"gold": [{"tool": "search"}], "trace": [{"tool": "search"}]}]`, "Idempotency-Key", w.aBatchI)
		if r.status != 200 || r.header.Get("Idempotent-Replayed") != "" || r.body["succeeded"] != 1.0 {
			t.Errorf("B's batch with A's Idempotency-Key = %d %v %v, want a new batch", r.status, r.header, r.body)
		}
		w.bEvaluations++
	},
	"GET /v1/evaluations": func(t *testing.T, w *isoWorld) {
		for _, q := range []string{"", "?task_id=A-MARK-task", "?agent=A-MARK-agent", "?label=amark=A-MARK-label", "?run_id=" + w.aRunID,
			"?contract=" + markName, "?latest=true", "?regrades=only"} {
			r := w.asB(t, "GET", "/v1/evaluations"+q, "")
			if r.status != 200 || len(items(r)) > w.bEvaluations {
				t.Errorf("B lists%s = %d, %d items; B has %d", q, r.status, len(items(r)), w.bEvaluations)
			}
		}
	},
	"GET /v1/evaluations/{id}": func(t *testing.T, w *isoWorld) {
		var paths []string
		for _, id := range w.aEvalIDs {
			paths = append(paths, "/v1/evaluations/"+id)
		}
		w.want404(t, "GET", paths...)
	},
	"GET /v1/stats": func(t *testing.T, w *isoWorld) {
		for _, q := range []string{"?group_by=agent", "?group_by=day", "?group_by=task", "?group_by=contract_version&contract=" + markName} {
			r := w.asB(t, "GET", "/v1/stats"+q, "")
			var n float64
			for _, g := range r.body["groups"].([]any) {
				n += g.(map[string]any)["count"].(float64)
			}
			if r.status != 200 || int(n) > w.bEvaluations {
				t.Errorf("B's stats%s = %d, count %v; B has %d", q, r.status, n, w.bEvaluations)
			}
		}
	},
	"GET /v1/stats/compare": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "GET", "/v1/stats/compare?contract="+markName+"&a=1&b=2", "")
		if r.status == 200 && r.body["originals"] != 0.0 {
			t.Errorf("B compares A's versions = %d %v, want nothing counted", r.status, r.body)
		}
	},
	"POST /v1/regrades": func(t *testing.T, w *isoWorld) {
		for _, body := range []string{`{"contract": "` + markName + `@2"}`, `{"contract": "` + markName + `@2", "dry_run": true}`} {
			if r := w.asB(t, "POST", "/v1/regrades", body); r.status != 404 {
				t.Errorf("B regrades to A's version = %d %v, want 404", r.status, r.body)
			}
		}
		// B's own version of the name counts only B's results.
		r := w.asB(t, "POST", "/v1/regrades", `{"contract": "`+markName+`@1", "dry_run": true}`)
		if r.status != 200 || r.body["total"] != 0.0 {
			t.Errorf("B's dry run = %d %v, want total 0", r.status, r.body)
		}
	},
	"GET /v1/regrades/{id}": func(t *testing.T, w *isoWorld) { w.want404(t, "GET", "/v1/regrades/"+w.aRegradeID) },
	"GET /v1/regrades/{id}/changes": func(t *testing.T, w *isoWorld) {
		w.want404(t, "GET", "/v1/regrades/"+w.aRegradeID+"/changes")
	},
	"GET /v1/regrades/{id}/failures": func(t *testing.T, w *isoWorld) {
		w.want404(t, "GET", "/v1/regrades/"+w.aRegradeID+"/failures")
	},
	"DELETE /v1/regrades/{id}": func(t *testing.T, w *isoWorld) { w.want404(t, "DELETE", "/v1/regrades/"+w.aRegradeID) },
	"POST /v1/regrades/{id}/cancel": func(t *testing.T, w *isoWorld) {
		w.want404(t, "POST", "/v1/regrades/"+w.aRegradeID+"/cancel")
	},
	"POST /v1/runs": func(t *testing.T, w *isoWorld) {
		// A run of B is B's: A's key does not find it.
		r := w.asB(t, "POST", "/v1/runs", `{"suite": {"name": "b-suite", "tasks": [{"id": "b1", "input": "go", "gold": [{"tool": "b"}]}]},
			"agent_url": "http://127.0.0.1:1/", "retries": 0}`)
		if r.status != 202 {
			t.Fatalf("B's run = %d %v", r.status, r.body)
		}
		if ra := callAs(t, w.a, "GET", w.base+"/v1/runs/"+r.body["id"].(string), ""); ra.status != 404 {
			t.Errorf("A reads B's run = %d, want 404", ra.status)
		}
	},
	"GET /v1/runs": func(t *testing.T, w *isoWorld) {
		if r := w.asB(t, "GET", "/v1/runs", ""); r.status != 200 {
			t.Errorf("B's runs = %d", r.status)
		}
	},
	"GET /v1/runs/{id}":    func(t *testing.T, w *isoWorld) { w.want404(t, "GET", "/v1/runs/"+w.aRunID) },
	"DELETE /v1/runs/{id}": func(t *testing.T, w *isoWorld) { w.want404(t, "DELETE", "/v1/runs/"+w.aRunID) },
	"POST /v1/keys": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "POST", "/v1/keys", `{"scopes": ["read"]}`)
		if r.status != 201 || r.body["project"] != w.bProject {
			t.Errorf("B makes a key = %d %v, want one of %s", r.status, r.body, w.bProject)
		}
	},
	"GET /v1/keys": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "GET", "/v1/keys", "")
		for _, k := range items(r) {
			if p := k.(map[string]any)["project"]; p != w.bProject {
				t.Errorf("B lists a key of %v", p)
			}
		}
	},
	"DELETE /v1/keys/{id}": func(t *testing.T, w *isoWorld) {
		var paths []string
		for _, id := range w.aKeyIDs {
			paths = append(paths, "/v1/keys/"+id)
		}
		w.want404(t, "DELETE", paths...)
	},
	"POST /v1/projects": func(t *testing.T, w *isoWorld) {
		if r := w.asB(t, "POST", "/v1/projects", `{"name": "default"}`); r.status != 409 {
			t.Errorf("B creates a project named default = %d, want 409", r.status)
		}
		r := w.asB(t, "POST", "/v1/projects", `{"name": "b-child"}`)
		if r.status != 201 {
			t.Fatalf("B creates a project = %d %v", r.status, r.body)
		}
		// The new project's key sees nothing of A either.
		child := r.body["key"].(map[string]any)["token"].(string)
		if rc, raw := callRaw(t, child, "GET", w.base+"/v1/projects", ""); rc.status != 200 || strings.Contains(raw, `"default"`) {
			t.Errorf("the child's projects = %s", raw)
		}
	},
	"GET /v1/projects": func(t *testing.T, w *isoWorld) {
		r := w.asB(t, "GET", "/v1/projects", "")
		if len(items(r)) != 1 || items(r)[0].(map[string]any)["name"] != w.bProject {
			t.Errorf("B's projects = %v, want only %s", r.body, w.bProject)
		}
	},
}

// routerRoutes walks the API's router: "METHOD pattern" of every route.
func routerRoutes(t *testing.T) []string {
	t.Helper()
	srv := api.New(api.Config{Store: nil})
	defer srv.Close()
	var out []string
	err := chi.Walk(srv.Handler().(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, method+" "+strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/*"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// callRaw is callAs that also returns the raw body.
func callRaw(t *testing.T, key, method, u, body string, headers ...string) (response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	r := response{status: resp.StatusCode, header: resp.Header}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		_ = json.Unmarshal([]byte(b.String()), &r.body)
	}
	return r, b.String()
}

// projectTables says how to select project A's rows of every table of
// the database; river's and goose's own tables are global (job rows carry
// project ids in their args, checked through the rows they produce).
var projectTables = map[string]string{
	"projects":               `SELECT * FROM projects WHERE id = $1`,
	"api_keys":               `SELECT id, project_id, name, prefix, lookup, hash, scopes, created_by, created_at, revoked_at FROM api_keys WHERE project_id = $1`,
	"contracts":              `SELECT * FROM contracts WHERE project_id = $1`,
	"results":                `SELECT * FROM results WHERE project_id = $1`,
	"idempotency_keys":       `SELECT * FROM idempotency_keys WHERE project_id = $1`,
	"regrades":               `SELECT * FROM regrades WHERE project_id = $1`,
	"regrade_chunks":         `SELECT c.* FROM regrade_chunks c JOIN regrades r ON r.id = c.regrade_id WHERE r.project_id = $1`,
	"regrade_changes":        `SELECT c.* FROM regrade_changes c JOIN regrades r ON r.id = c.regrade_id WHERE r.project_id = $1`,
	"regrade_failures":       `SELECT c.* FROM regrade_failures c JOIN regrades r ON r.id = c.regrade_id WHERE r.project_id = $1`,
	"regrade_expected_calls": `SELECT c.* FROM regrade_expected_calls c JOIN regrades r ON r.id = c.regrade_id WHERE r.project_id = $1`,
	"runs":                   `SELECT * FROM runs WHERE project_id = $1`,
	"run_tasks":              `SELECT t.* FROM run_tasks t JOIN runs r ON r.id = t.run_id WHERE r.project_id = $1`,
	// The web console's aggregates and sign-ins (internal/ui); rollup_state
	// is one global row (how far the aggregates reach), no project's.
	"result_rollup":                `SELECT * FROM result_rollup WHERE project_id = $1`,
	"result_rollup_issues":         `SELECT * FROM result_rollup_issues WHERE project_id = $1`,
	"result_rollup_labels":         `SELECT * FROM result_rollup_labels WHERE project_id = $1`,
	"result_rollup_label_issues":   `SELECT * FROM result_rollup_label_issues WHERE project_id = $1`,
	"result_rollup_label_overflow": `SELECT * FROM result_rollup_label_overflow WHERE project_id = $1`,
	"rollup_state":                 `SELECT * FROM rollup_state WHERE $1::bigint IS NULL`,
	"console_sessions":             `SELECT s.* FROM console_sessions s JOIN api_keys k ON k.hash = s.key_hash WHERE k.project_id = $1`,
	"otlp_traces":                  `SELECT * FROM otlp_traces WHERE project_id = $1`,
	"otlp_spans":                   `SELECT * FROM otlp_spans WHERE project_id = $1`,
	"grading_rules":                `SELECT * FROM grading_rules WHERE project_id = $1`,
}

// snapshot returns, per table, the md5 of project A's rows (in text form,
// sorted) and their count, and fails when the database has a table that
// projectTables does not cover.
func snapshot(t *testing.T, dbURL string, project int64) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'
		AND table_name NOT LIKE 'river\_%' AND table_name <> 'goose_db_version'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tb := range tables {
		q, ok := projectTables[tb]
		if !ok {
			t.Errorf("table %s has no entry in projectTables: say how to select one project's rows", tb)
			continue
		}
		var sum string
		var n int
		if err := conn.QueryRow(ctx, `SELECT coalesce(md5(string_agg(s::text, '|' ORDER BY s::text)), ''), count(*) FROM (`+q+`) s`, project).Scan(&sum, &n); err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		out[tb] = fmt.Sprintf("%d rows %s", n, sum)
	}
	return out
}

func TestTwoProjectIsolation(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	base, stop := runServer(t, dbURL, "TOOLSCORE_RUN_ALLOWED_HOSTS", "127.0.0.1", "TOOLSCORE_OTLP_QUIET", "200ms", "TOOLSCORE_OTLP_KEEP_SPANS", "1h")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	all := []string{"ingest", "read", "contracts:write", "regrades", "runs", "admin"}
	w := &isoWorld{base: base, aIdem: "A-MARK-idem", aBatchI: "A-MARK-batch-idem", bProject: "team-b"}
	w.a = newKey(t, base, testBootstrapKey, all...)

	// Project A's data, through the API.
	must := func(r response, status int, what string) response {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s = %d %v, want %d", what, r.status, r.body, status)
		}
		return r
	}
	for v := 1; v <= 2; v++ {
		must(callAs(t, w.a, "POST", base+"/v1/contracts/"+markName+"/versions", isoContract(v)), 201, "publish")
	}
	eval := `{"contract": "` + markName + `@1", "trace": [{"tool": "search", "args": {"q": "lisbon"}}], "task_id": "A-MARK-task",
		"agent": "A-MARK-agent", "labels": {"amark": "A-MARK-label"}}`
	r := must(callAs(t, w.a, "POST", base+"/v1/evaluations", eval, "Idempotency-Key", w.aIdem), 201, "evaluate")
	w.aEvalIDs = append(w.aEvalIDs, r.body["id"].(string))
	r = must(callAs(t, w.a, "POST", base+"/v1/evaluations/batch", "["+eval+","+eval+"]", "Idempotency-Key", w.aBatchI), 200, "batch")
	for _, it := range r.body["items"].([]any) {
		w.aEvalIDs = append(w.aEvalIDs, it.(map[string]any)["evaluation"].(map[string]any)["id"].(string))
	}
	r = must(callAs(t, w.a, "POST", base+"/v1/regrades", `{"contract": "`+markName+`@2"}`), 202, "regrade")
	w.aRegradeID = r.body["id"].(string)

	agent := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`[{"tool": "search", "args": {"q": "lisbon"}}]`))
	}))
	defer agent.Close()
	suite := `{"name": "A-MARK-suite", "tasks": [{"id": "A-MARK-run-task", "input": "go", "labels": {"amark": "A-MARK-label"}, "contract": ` + isoContract(1) + `}]}`
	r = must(callAs(t, w.a, "POST", base+"/v1/runs", `{"suite": `+suite+`, "agent_url": "`+agent.URL+`/", "agent": "A-MARK-agent"}`), 202, "run")
	w.aRunID = r.body["id"].(string)

	// Wait for the regrade and the run to finish, so that A's rows stop
	// changing on their own.
	deadline := time.Now().Add(60 * time.Second)
	for {
		rg := callAs(t, w.a, "GET", base+"/v1/regrades/"+w.aRegradeID, "")
		run := callAs(t, w.a, "GET", base+"/v1/runs/"+w.aRunID, "")
		if rg.body["state"] == "completed" && run.body["state"] == "completed" {
			for _, task := range run.body["tasks"].([]any) {
				w.aEvalIDs = append(w.aEvalIDs, task.(map[string]any)["evaluation_id"].(string))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's regrade %v and run %v did not complete", rg.body, run.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A's OpenTelemetry trace, graded by A's rule.
	for v := 1; v <= 2; v++ {
		must(callAs(t, w.a, "POST", base+"/v1/rules/"+markName+"/versions", isoRule(v)), 201, "publish rule")
	}
	must(callAs(t, w.a, "POST", base+"/v1/traces", isoExport("A-MARK-service")), 200, "export")
	for {
		tr := callAs(t, w.a, "GET", base+"/v1/traces/"+aTraceID, "")
		if tr.body["state"] == "graded" {
			w.aEvalIDs = append(w.aEvalIDs, tr.body["result_id"].(string))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's trace did not get graded: %v", tr.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	regraded := must(callAs(t, w.a, "GET", base+"/v1/evaluations?regrades=only", ""), 200, "regrade results")
	for _, it := range items(regraded) {
		w.aEvalIDs = append(w.aEvalIDs, it.(map[string]any)["id"].(string))
	}
	if len(w.aEvalIDs) != 8 {
		t.Fatalf("A's evaluations = %v, want 3 + 3 regrade results + 1 of the run + 1 of the trace", w.aEvalIDs)
	}
	for _, k := range items(must(callAs(t, w.a, "GET", base+"/v1/keys", ""), 200, "A's keys")) {
		w.aKeyIDs = append(w.aKeyIDs, k.(map[string]any)["id"].(string))
	}

	// Project B and its every-scope key.
	r = must(callAs(t, w.a, "POST", base+"/v1/projects", `{"name": "`+w.bProject+`"}`), 201, "create B")
	bAdmin := r.body["key"].(map[string]any)["token"].(string)
	w.b = newKey(t, base, bAdmin, all...)

	w.markers = append([]string{markDesc, "A-MARK-task", "A-MARK-agent", "A-MARK-label", "A-MARK-suite", "A-MARK-run-task", "A-MARK-otel-task",
		w.aRegradeID, w.aRunID, `"default"`, agent.URL}, w.aEvalIDs...)
	w.markers = append(w.markers, w.aKeyIDs...)
	before := snapshot(t, dbURL, 1)
	aStats := callAs(t, w.a, "GET", base+"/v1/stats?group_by=agent", "")

	routes := routerRoutes(t)
	for _, route := range routes {
		c, ok := isoCases[route]
		if !ok {
			t.Errorf("route %s has no isolation case in isoCases: add one checking that project B cannot see or change project A through it", route)
			continue
		}
		t.Run(url.PathEscape(route), func(t *testing.T) { c(t, w) })
	}
	for route := range isoCases {
		if !slices.Contains(routes, route) {
			t.Errorf("isoCases has %s, which the router does not serve", route)
		}
	}

	// Nothing of A changed, and A still works as before.
	after := snapshot(t, dbURL, 1)
	for tb, b := range before {
		if after[tb] != b {
			t.Errorf("project A's %s changed: %s before, %s after", tb, b, after[tb])
		}
	}
	if got := callAs(t, w.a, "GET", base+"/v1/stats?group_by=agent", ""); fmt.Sprint(got.body) != fmt.Sprint(aStats.body) {
		t.Errorf("A's stats changed: %v, then %v", aStats.body, got.body)
	}
	if got := callAs(t, w.a, "GET", base+"/v1/evaluations/"+w.aEvalIDs[0], ""); got.status != 200 {
		t.Errorf("A reads its evaluation = %d", got.status)
	}
}
