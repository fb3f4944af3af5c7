package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/toolscore/toolscore/internal/secrets"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// The secret sweep (issue 14, "secrets nowhere in clear"). Every place a
// client can put a credential is seeded, through the real HTTP routes
// against the real Postgres, with a fake secret of its own, of a form the
// default scanner (gitleaks' rules) detects: evaluations (argument values
// and names, malformed argument text, tool results and errors, the final
// answer, task_id, run_id, agent, labels, Idempotency-Key), batches,
// registry contracts, grading rules, OpenTelemetry spans, regrade
// selections, harness runs (the agent, what the agent answers, a refused
// agent URL, task id and labels) and list filters. Then every column of
// every table (listed from information_schema, so a new table or column
// is swept too), every answer, every log line and the /metrics output
// are searched for every seed: none may hold one, except the grading
// inputs kept as written (sweepKept), which must hold theirs, so the
// search is shown to find what is there.

// sweepLog is a thread-safe buffer of JSON log lines.
type sweepLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *sweepLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *sweepLog) Sync() error { return nil }

func (l *sweepLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// sweepSecrets makes the fake secrets, one per place, deterministic and
// each of a form a gitleaks rule detects.
type sweepSecrets struct {
	rng    *rand.Rand
	kinds  int
	byName map[string]string
	names  []string
	// context is the text a seed is detected after ("" for most).
	context map[string]string
}

func newSweepSecrets() *sweepSecrets {
	return &sweepSecrets{rng: rand.New(rand.NewPCG(14, 4)), byName: map[string]string{}, context: map[string]string{}}
}

func (s *sweepSecrets) chars(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// seed returns a new secret for the place name: in turn an AWS access
// key id, a GitHub token, a Slack bot token and a Stripe key.
func (s *sweepSecrets) seed(name string) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var v string
	switch s.kinds % 4 {
	case 0:
		v = "AKIA" + s.chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
	case 1:
		v = "ghp_" + s.chars(36, alnum)
	case 2:
		v = "xoxb-" + s.chars(12, "0123456789") + "-" + s.chars(13, "0123456789") + "-" + s.chars(24, alnum)
	case 3:
		v = "sk_live_" + s.chars(32, alnum)
	}
	s.kinds++
	s.byName[name] = v
	s.names = append(s.names, name)
	return v
}

// sweepKept are the places that keep a seed as the client wrote it,
// because grading needs it (docs/security.md "What is redacted where"):
// table.column and the seeds that must be found there.
var sweepKept = map[string][]string{
	// A registry contract grades with its values; its body is answered
	// redacted.
	"contracts.body": {"contract-description", "contract-argument"},
	// A grading rule matches with its values; its body is answered
	// redacted.
	"grading_rules.body": {"rule-description"},
	// A run's tasks are sent to the agent as written; no route answers
	// them.
	"runs.suite": {"run-input"},
}

// sweepClient calls the server and keeps every answer.
type sweepClient struct {
	t       *testing.T
	base    string
	key     string
	mu      sync.Mutex
	answers []sweepAnswer
}

// sweepAnswer is one answer's body and the request it answered.
type sweepAnswer struct{ request, body string }

func (c *sweepClient) call(method, path, body string, headers ...string) (int, map[string]any) {
	c.t.Helper()
	r, raw := callRaw(c.t, c.key, method, c.base+path, body, headers...)
	c.mu.Lock()
	c.answers = append(c.answers, sweepAnswer{method + " " + path, raw})
	c.mu.Unlock()
	return r.status, r.body
}

func (c *sweepClient) must(status int, method, path, body string, headers ...string) map[string]any {
	c.t.Helper()
	got, b := c.call(method, path, body, headers...)
	if got != status {
		c.t.Fatalf("%s %s = %d %v, want %d", method, path, got, b, status)
	}
	return b
}

func TestSecretSweep(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	logs := &sweepLog{}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zapcore.DebugLevel))
	base, stop := runServerLogged(t, dbURL, log, "TOOLSCORE_RUN_ALLOWED_HOSTS", "127.0.0.1", "TOOLSCORE_OTLP_QUIET", "200ms",
		"TOOLSCORE_METRICS_OPEN", "true")
	stopped := false
	defer func() {
		if !stopped {
			_ = stop()
		}
	}()
	s := newSweepSecrets()
	c := &sweepClient{t: t, base: base}
	c.key = newKey(t, base, testBootstrapKey, "ingest", "read", "contracts:write", "regrades", "runs", "admin")

	// Evaluations: the trace's places, the caller's identifiers and the
	// Idempotency-Key.
	taskID, agent, runID := "task-"+s.seed("task_id"), "agent "+s.seed("agent"), s.seed("run_id")
	labelKey, labelValue := "k-"+s.seed("label-key"), s.seed("label-value")
	idem := s.seed("idempotency-key")
	ids := func(extra string) string {
		return fmt.Sprintf(`"task_id": %q, "agent": %q, "run_id": %q, "labels": {%q: "v", "env": %q, "api_key": "Zq8vR2kL9xT4wB7nM3pQ"}%s`,
			taskID, agent, runID, labelKey, labelValue, extra)
	}
	// A value secret only by its key (an assignment rule's).
	s.byName["label-assignment"] = "Zq8vR2kL9xT4wB7nM3pQ"
	s.names = append(s.names, "label-assignment")
	s.context["label-assignment"] = "api_key="
	plain := fmt.Sprintf(`[{"tool": "search", "args": {"q": %q, %q: "x"}, "result": "found %s"},
		{"tool": "book", "args": {"id": "42"}, "error": "denied for %s"}]`,
		s.seed("argument-value"), s.seed("argument-name"), s.seed("result"), s.seed("error"))
	gold := `[{"tool": "search"}, {"tool": "book"}]`
	forbidden := fmt.Sprintf(`, "forbidden": [{"tool": "leak", "args": {"k": %q}}]`, s.seed("forbidden-argument"))
	eval := fmt.Sprintf(`{"gold": %s, "trace": %s, "final_answer": "done with %s", %s}`, gold, plain, s.seed("final-answer"), ids(forbidden))
	first := c.must(201, "POST", "/v1/evaluations", eval, "Idempotency-Key", idem)
	c.must(201, "POST", "/v1/evaluations", eval, "Idempotency-Key", idem) // replayed
	c.must(409, "POST", "/v1/evaluations", strings.Replace(eval, `"book"`, `"book2"`, 1), "Idempotency-Key", idem)
	openai := fmt.Sprintf(`[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
		"function": {"name": "search", "arguments": "{\"q\": \"%s\""}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok %s"}]`,
		s.seed("args_raw"), s.seed("openai-result"))
	c.must(201, "POST", "/v1/evaluations", fmt.Sprintf(`{"gold": %s, "trace": %s, %s}`, gold, openai, ids("")))
	c.must(200, "POST", "/v1/evaluations?store=false", fmt.Sprintf(`{"gold": %s, "trace": %s, %s}`, gold, plain, ids("")))

	// A batch.
	item := fmt.Sprintf(`{"gold": %s, "trace": [{"tool": "search", "args": {"q": %q}}], %s}`, gold, s.seed("batch-argument"), ids(""))
	c.must(200, "POST", "/v1/evaluations/batch", "["+item+","+item+"]", "Idempotency-Key", s.seed("batch-idempotency-key"))

	// A registry contract and evaluations against it.
	contract := fmt.Sprintf(`{"contract_version": 2, "description": "deploys with %s", "required": [{"tool": "deploy", "args": {"key": %q}}]}`,
		s.seed("contract-description"), s.seed("contract-argument"))
	c.must(201, "POST", "/v1/contracts/deploy/versions", contract)
	c.must(200, "POST", "/v1/validate", contract)
	deployTrace := fmt.Sprintf(`[{"tool": "deploy", "args": {"key": %q}, "result": "deployed with %s"}]`, s.byName["contract-argument"], s.seed("deploy-result"))
	c.must(201, "POST", "/v1/evaluations", fmt.Sprintf(`{"contract": "deploy@1", "trace": %s, %s}`, deployTrace, ids("")))
	c.must(201, "POST", "/v1/contracts/deploy/versions", strings.Replace(contract, `"required"`, `"min_score": 0.5, "required"`, 1))

	// A regrade selecting by the secret identifiers (as the client knows
	// them), and its dry run.
	sel := fmt.Sprintf(`"contract": "deploy@2", "task_id": %q, "agent": %q, "labels": {%q: "v"}`, taskID, agent, labelKey)
	if _, b := c.call("POST", "/v1/regrades", "{"+sel+`, "dry_run": true}`); b["total"] != 1.0 {
		t.Errorf("the regrade's dry run selects %v results, want 1: the redacted selection must match the redacted rows", b["total"])
	}
	rg := c.must(202, "POST", "/v1/regrades", "{"+sel+"}")

	// A harness run: its agent, and an agent answering with secrets (the
	// handler reads its own copy: it runs while the test seeds more).
	answer := s.seed("agent-answer")
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"tool": "search", "args": {"q": "lisbon"}, "result": "token %s"}]`, answer)
	}))
	defer agentSrv.Close()
	suite := fmt.Sprintf(`{"name": "sweep", "tasks": [{"id": "t1", "input": "go with %s", "gold": [{"tool": "search"}]}]}`, s.seed("run-input"))
	run := c.must(202, "POST", "/v1/runs", fmt.Sprintf(`{"suite": %s, "agent_url": "%s/", "agent": "bot %s", "retries": 0}`, suite, agentSrv.URL, s.seed("run-agent")))
	badSuite := fmt.Sprintf(`{"name": "sweep", "tasks": [{"id": %q, "input": "go", "gold": [{"tool": "search"}], "labels": {"k": %q}}]}`,
		s.seed("run-task-id"), s.seed("run-label"))
	c.must(422, "POST", "/v1/runs", fmt.Sprintf(`{"suite": %s, "agent_url": "%s/?api_key=%s"}`, badSuite, agentSrv.URL, s.seed("agent-url-query")))

	// An OpenTelemetry trace graded by a rule.
	c.must(201, "POST", "/v1/rules/sweep/versions", fmt.Sprintf(`{"description": "rule %s", "match": [{"attribute": "service.name", "equals": "sweep-svc"}],
		"contract": "deploy@1", "task_id": "toolscore.task_id", "agent": "toolscore.agent"}`, s.seed("rule-description")))
	const traceID = "5eec5eec5eec5eec5eec5eec5eec5ee1"
	args, _ := json.Marshal(fmt.Sprintf(`{"key": %q}`, s.seed("span-argument")))
	export := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"sweep-svc"}}]},
		"scopeSpans":[{"spans":[{"traceId":%q,"spanId":"0000000000000001","name":"invoke_agent","startTimeUnixNano":"1","endTimeUnixNano":"9",
		"attributes":[{"key":"toolscore.task_id","value":{"stringValue":%q}},{"key":"toolscore.agent","value":{"stringValue":%q}}]},
		{"traceId":%q,"spanId":"0000000000000002","parentSpanId":"0000000000000001","name":"execute_tool deploy","startTimeUnixNano":"2","endTimeUnixNano":"3",
		"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"deploy"}},
		{"key":"gen_ai.tool.call.arguments","value":{"stringValue":%s}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"ok %s"}}]}]}]}]}`,
		traceID, s.seed("span-task-id"), s.seed("span-agent"), traceID, args, s.seed("span-result"))
	c.must(200, "POST", "/v1/traces", export)

	// Wait for the regrade, the run and the trace.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, g := c.call("GET", "/v1/regrades/"+rg["id"].(string), "")
		_, r := c.call("GET", "/v1/runs/"+run["id"].(string), "")
		_, tr := c.call("GET", "/v1/traces/"+traceID, "")
		if g["state"] == "completed" && r["state"] == "completed" && tr["state"] == "graded" {
			if g["done"] != 1.0 {
				t.Errorf("the regrade did %v results, want 1", g["done"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not finished: regrade %v, run %v, trace %v", g, r, tr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Every read route, with the secret filters as the client knows them.
	c.must(200, "GET", "/v1/evaluations/"+first["id"].(string), "")
	q := "?task_id=" + strings.ReplaceAll(taskID, " ", "+") + "&agent=" + strings.ReplaceAll(agent, " ", "+") + "&run_id=" + runID + "&label=" + labelKey + "=v"
	list := c.must(200, "GET", "/v1/evaluations"+q, "")
	if n := len(list["items"].([]any)); n < 5 {
		t.Errorf("the secret filters select %d evaluations, want the 5 originals at least", n)
	}
	for _, it := range c.must(200, "GET", "/v1/evaluations?limit=100", "")["items"].([]any) {
		c.must(200, "GET", "/v1/evaluations/"+it.(map[string]any)["id"].(string), "")
	}
	for _, p := range []string{"/v1/stats?group_by=agent", "/v1/stats?group_by=task", "/v1/stats?group_by=day" + strings.Replace(q, "?", "&", 1),
		"/v1/evaluations?latest=true", "/v1/regrades/" + rg["id"].(string) + "/changes", "/v1/regrades/" + rg["id"].(string) + "/failures",
		"/v1/runs", "/v1/contracts", "/v1/contracts/deploy/versions", "/v1/contracts/deploy/versions/1", "/v1/contracts/deploy/versions/latest",
		"/v1/rules", "/v1/rules/sweep/versions", "/v1/rules/sweep/versions/1", "/v1/keys", "/v1/projects"} {
		c.must(200, "GET", p, "")
	}
	if _, raw := callRaw(t, "", "GET", base+"/metrics", ""); !strings.Contains(raw, "toolscore_") {
		t.Fatalf("/metrics = %.300s", raw)
	} else {
		c.answers = append(c.answers, sweepAnswer{"GET /metrics", raw})
	}

	// Every seed is one the default scanner detects.
	sc := secrets.New()
	for _, name := range s.names {
		found, err := sc.ScanSecrets(context.Background(), []string{s.context[name] + s.byName[name]})
		if err != nil || len(found) == 0 {
			t.Errorf("seed %s (%s) is not detected by the default scanner: %v", name, s.byName[name], err)
		}
	}

	if err := stop(); err != nil {
		t.Errorf("Run() = %v", err)
	}
	stopped = true

	// The answers, the log lines and the metrics.
	for _, a := range c.answers {
		for _, name := range s.names {
			if strings.Contains(a.body, s.byName[name]) {
				t.Errorf("the answer to %.200s holds the %s seed: %.400s", a.request, name, a.body)
			}
		}
	}
	logText := logs.String()
	if !strings.Contains(logText, `"route":"/v1/evaluations"`) {
		t.Fatalf("the server's log was not captured: %.300s", logText)
	}
	for _, line := range strings.Split(logText, "\n") {
		for _, name := range s.names {
			if strings.Contains(line, s.byName[name]) {
				t.Errorf("a log line holds the %s seed: %.400s", name, line)
			}
		}
	}

	// Every column of every table.
	hits := sweepDatabase(t, dbURL, s)
	for col, names := range hits {
		kept := sweepKept[col]
		for _, n := range names {
			if !slices.Contains(kept, n) {
				t.Errorf("%s holds the %s seed in clear", col, n)
			}
		}
	}
	for col, want := range sweepKept {
		for _, n := range want {
			if !slices.Contains(hits[col], n) {
				t.Errorf("%s should keep the %s seed as written (a grading input), but the sweep did not find it there", col, n)
			}
		}
	}
}

// sweepDatabase returns, per table.column of the database (every table
// of schema public, from information_schema), the names of the seeds it
// holds: text forms are searched as text, bytea columns as bytes.
func sweepDatabase(t *testing.T, dbURL string, s *sweepSecrets) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ Table, Name, Type string }
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[column])
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for _, c := range cols {
		tables[c.Table] = true
	}
	for _, want := range []string{"results", "idempotency_keys", "contracts", "runs", "run_tasks", "regrades", "otlp_traces", "otlp_spans", "grading_rules", "river_job"} {
		if !tables[want] {
			t.Fatalf("the sweep does not see table %s (columns: %d)", want, len(cols))
		}
	}
	names := slices.Clone(s.names)
	sort.Strings(names)
	needles := make([]string, len(names))
	for i, n := range names {
		needles[i] = s.byName[n]
	}
	out := map[string][]string{}
	for _, c := range cols {
		expr := fmt.Sprintf("%q::text", c.Name)
		if c.Type == "bytea" {
			expr = fmt.Sprintf("encode(%q, 'escape')", c.Name)
		}
		var found []int32
		q := fmt.Sprintf(`SELECT coalesce(array_agg(DISTINCT n.i), '{}') FROM %q AS x, unnest($1::text[]) WITH ORDINALITY AS n(s, i)
			WHERE strpos(%s, n.s) > 0`, c.Table, expr)
		if err := conn.QueryRow(ctx, q, needles).Scan(&found); err != nil {
			t.Fatalf("%s.%s: %v", c.Table, c.Name, err)
		}
		for _, i := range found {
			out[c.Table+"."+c.Name] = append(out[c.Table+"."+c.Name], names[i-1])
		}
	}
	return out
}
