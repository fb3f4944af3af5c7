package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// testBootstrapKey is the TOOLSCORE_BOOTSTRAP_KEY of runServer.
const testBootstrapKey = "tsk_bootstrapbootstrapbootstrapbootstrap"

// runServer starts Run on a fresh port against dbURL, with
// testBootstrapKey and the extra variables env (name, value pairs), and
// returns its base URL and a function that stops it and returns Run's
// error.
func runServer(t *testing.T, dbURL string, env ...string) (string, func() error) {
	t.Helper()
	return runServerLogged(t, dbURL, zaptest.NewLogger(t), env...)
}

// runServerLogged is runServer logging to log.
func runServerLogged(t *testing.T, dbURL string, log *zap.Logger, env ...string) (string, func() error) {
	t.Helper()
	vars := map[string]string{"DATABASE_URL": dbURL, "TOOLSCORE_BOOTSTRAP_KEY": testBootstrapKey}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	cfg, err := LoadConfig([]string{"-addr", "127.0.0.1:0", "-workers", "2", "-shutdown-grace", "5s"},
		func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, log, prometheus.NewRegistry(), func(a net.Addr) { addr <- a })
	}()
	select {
	case a := <-addr:
		return "http://" + a.String(), func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("Run() = %v before listening", err)
	}
	return "", nil
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

// newKey makes a key with scopes using the admin key admin and returns
// its token.
func newKey(t *testing.T, base, admin string, scopes ...string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": "test", "scopes": scopes})
	r := callAs(t, admin, "POST", base+"/v1/keys", string(b))
	if r.status != 201 {
		t.Fatalf("POST /v1/keys = %d %v", r.status, r.body)
	}
	return r.body["token"].(string)
}

// callAs is call with "Authorization: Bearer key".
func callAs(t *testing.T, key, method, url, body string, headers ...string) response {
	t.Helper()
	return call(t, method, url, body, append([]string{"Authorization", "Bearer " + key}, headers...)...)
}

func call(t *testing.T, method, url, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	r := response{status: resp.StatusCode, header: resp.Header}
	b, _ := io.ReadAll(resp.Body)
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(b, &r.body); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return r
}

const (
	contract = `{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^lis"}}}], "forbidden": [{"tool": "rm"}]}`
	trace    = `{"role": "assistant", "content": "Found it.", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"lisbon\"}"}}]}`
)

// TestRunEndToEnd starts the real server on a fresh database behind a
// proxy: it stores and serves evaluations; while Postgres is away writes
// answer 503 problem+json and /readyz fails; when it returns the same
// process recovers; SIGTERM-style cancellation shuts it down cleanly.
func TestRunEndToEnd(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	proxy := storetest.NewProxy(t, dbURL)
	base, stop := runServer(t, proxy.URL())

	if r := call(t, "GET", base+"/readyz", ""); r.status != 200 {
		t.Fatalf("readyz = %d %v", r.status, r.body)
	}
	key := newKey(t, base, testBootstrapKey, "ingest", "read", "contracts:write")
	call := func(t *testing.T, method, url, body string, headers ...string) response {
		t.Helper()
		return callAs(t, key, method, url, body, headers...)
	}
	if r := call(t, "POST", base+"/v1/contracts/search/versions", contract); r.status != 201 {
		t.Fatalf("create contract = %d %v", r.status, r.body)
	}
	eval := `{"contract": "search@1", "trace": [` + trace + `], "agent": "bot", "labels": {"env": "ci"}}`
	r := call(t, "POST", base+"/v1/evaluations", eval, "Idempotency-Key", "e2e-1")
	if r.status != 201 || r.body["grade"] != "A" || r.body["passed"] != true || r.body["format"] != "openai" {
		t.Fatalf("evaluate = %d %v", r.status, r.body)
	}
	id := r.body["id"].(string)
	if g := call(t, "GET", base+"/v1/evaluations/"+id, ""); g.status != 200 || g.body["id"] != id {
		t.Errorf("GET evaluation = %d %v", g.status, g.body)
	}
	if again := call(t, "POST", base+"/v1/evaluations", eval, "Idempotency-Key", "e2e-1"); again.body["id"] != id {
		t.Errorf("idempotent replay = %d %v, want id %s", again.status, again.body["id"], id)
	}
	list := call(t, "GET", base+"/v1/evaluations?contract=search@1&label=env=ci&passed=true", "")
	if items := list.body["items"].([]any); len(items) != 1 {
		t.Errorf("list = %v", list.body)
	}
	stats := call(t, "GET", base+"/v1/stats?group_by=agent", "")
	if g := stats.body["groups"].([]any); len(g) != 1 || g[0].(map[string]any)["key"] != "bot" || g[0].(map[string]any)["pass_rate"] != 1.0 {
		t.Errorf("stats = %v", stats.body)
	}

	// Postgres goes away.
	proxy.Down()
	down := call(t, "POST", base+"/v1/evaluations", eval)
	if down.status != 503 || down.header.Get("Content-Type") != "application/problem+json" ||
		down.body["type"] != "https://toolscore.dev/problems/unavailable" || down.header.Get("Retry-After") == "" {
		t.Errorf("POST while down = %d %v %v", down.status, down.header, down.body)
	}
	if r := call(t, "GET", base+"/readyz", ""); r.status != 503 {
		t.Errorf("readyz while down = %d", r.status)
	}
	if r := call(t, "GET", base+"/healthz", ""); r.status != 200 {
		t.Errorf("healthz while down = %d", r.status)
	}
	// It comes back: the same process recovers.
	proxy.Up()
	if r := call(t, "GET", base+"/readyz", ""); r.status != 200 {
		t.Errorf("readyz after recovery = %d %v", r.status, r.body)
	}
	if r := call(t, "POST", base+"/v1/evaluations", eval); r.status != 201 {
		t.Errorf("POST after recovery = %d %v", r.status, r.body)
	}
	if m := call(t, "GET", base+"/metrics", ""); m.status != 401 {
		t.Errorf("metrics with an API key = %d, want 401 (metrics have their own token)", m.status)
	}

	if err := stop(); err != nil {
		t.Errorf("Run() after cancel = %v, want nil", err)
	}
	// Exactly the two acknowledged evaluations were stored; nothing of the
	// one refused while Postgres was away.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&n); err != nil || n != 2 {
		t.Errorf("stored results = %d, %v; want 2", n, err)
	}
}

func TestRunRefusesNewerSchema(t *testing.T) {
	dbURL := storetest.NewDatabase(t)
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	cfg := Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, Workers: 1, Queue: 1, MaxBodyBytes: 1 << 20, MaxBatchBytes: 1 << 20,
		EvalTimeout: time.Second, ShutdownGrace: time.Second, DBMaxConns: 2, DBWriters: 1, LogLevel: "info", GCPercent: 0, MaxConns: 16}
	err = Run(ctx, cfg, zaptest.NewLogger(t), prometheus.NewRegistry(), func(net.Addr) { t.Error("the server started") })
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("Run() = %v, want ErrSchemaTooNew", err)
	}
}

// TestRunsNeedAllowedHosts: without TOOLSCORE_RUN_ALLOWED_HOSTS the server
// calls no agent; with it, a listed name that is not a listed address
// cannot reach the metadata endpoint.
func TestRunsNeedAllowedHosts(t *testing.T) {
	suite := `{"name": "s", "tasks": [{"id": "a", "input": "x", "gold": [{"tool": "t"}]}]}`
	for _, tc := range []struct {
		env       []string
		agentURL  string
		wantError string
	}{
		{nil, "http://agent.example.com/", "this server allows no agent hosts (set TOOLSCORE_RUN_ALLOWED_HOSTS to enable server-side runs)"},
		{[]string{"TOOLSCORE_RUN_ALLOWED_HOSTS", "agent.example.com"}, "http://169.254.169.254/latest/meta-data/",
			"host 169.254.169.254 is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)"},
		{[]string{"TOOLSCORE_RUN_ALLOWED_HOSTS", "agent.example.com"}, "http://u:pw@agent.example.com/",
			"the URL holds a password, which the stored run would keep; reach the agent without one"},
	} {
		base, stop := runServer(t, storetest.NewDatabase(t), tc.env...)
		key := newKey(t, base, testBootstrapKey, "runs")
		r := callAs(t, key, "POST", base+"/v1/runs", `{"suite": `+suite+`, "agent_url": "`+tc.agentURL+`"}`)
		errs, _ := r.body["errors"].([]any)
		if r.status != 422 || len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/agent_url" || errs[0].(map[string]any)["message"] != tc.wantError {
			t.Errorf("POST /v1/runs %s with %v = %d %v, want 422 at /agent_url: %s", tc.agentURL, tc.env, r.status, r.body, tc.wantError)
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	}
}
