package main

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolscore/toolscore/internal/store/storetest"
)

// runObserved starts Run like runServer, without the bootstrap key unless
// env sets it, recording its log lines.
func runObserved(t *testing.T, dbURL string, env ...string) (string, *observer.ObservedLogs, func() error) {
	t.Helper()
	vars := map[string]string{"DATABASE_URL": dbURL}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	cfg, err := LoadConfig([]string{"-addr", "127.0.0.1:0", "-workers", "1", "-shutdown-grace", "5s"},
		func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, zap.New(core), prometheus.NewRegistry(), func(a net.Addr) { addr <- a }) }()
	select {
	case a := <-addr:
		return "http://" + a.String(), logs, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("Run() = %v before listening", err)
	}
	return "", nil, nil
}

func TestBootstrap(t *testing.T) {
	dbURL := storetest.NewDatabase(t)

	// An empty database without a bootstrap key: 401 and the hint.
	base, logs, stop := runObserved(t, dbURL)
	if r := call(t, "GET", base+"/v1/evaluations", ""); r.status != 401 {
		t.Errorf("GET without a key = %d, want 401", r.status)
	}
	if r := call(t, "GET", base+"/readyz", ""); r.status != 200 {
		t.Errorf("readyz = %d", r.status)
	}
	hints := logs.FilterMessage("no API key exists yet: every request but /healthz, /readyz and /openapi.yaml answers 401").All()
	if len(hints) != 1 || hints[0].ContextMap()["hint"] != bootstrapHint {
		t.Errorf("hint lines = %+v", hints)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// With a bootstrap key: stored once, as an admin key of default, and
	// never logged.
	const boot = "an-operator-chosen-bootstrap-secret-0123"
	base, logs, stop = runObserved(t, dbURL, "TOOLSCORE_BOOTSTRAP_KEY", boot)
	r := callAs(t, boot, "GET", base+"/v1/projects", "")
	if r.status != 200 || r.body["items"].([]any)[0].(map[string]any)["name"] != "default" {
		t.Errorf("GET /v1/projects with the bootstrap key = %d %v", r.status, r.body)
	}
	if r := callAs(t, boot, "GET", base+"/v1/evaluations", ""); r.status != 403 || r.body["missing_scope"] != "read" {
		t.Errorf("the bootstrap key reads = %d %v, want 403 missing read (admin only)", r.status, r.body)
	}
	for _, e := range logs.All() {
		for _, v := range e.ContextMap() {
			if s, ok := v.(string); ok && s == boot {
				t.Errorf("log line %q holds the bootstrap key", e.Message)
			}
		}
	}
	if n := logs.FilterMessage("created the bootstrap admin key of project default from TOOLSCORE_BOOTSTRAP_KEY").Len(); n != 1 {
		t.Errorf("bootstrap lines = %d, want 1", n)
	}
	// Revoke it with a second admin key: a restart with the same setting
	// does not bring it back.
	admin := newKey(t, base, boot, "admin")
	keys := callAs(t, admin, "GET", base+"/v1/keys", "")
	var bootID string
	for _, k := range keys.body["items"].([]any) {
		if k.(map[string]any)["name"] == "bootstrap" {
			bootID = k.(map[string]any)["id"].(string)
		}
	}
	if r := callAs(t, admin, "DELETE", base+"/v1/keys/"+bootID, ""); r.status != 200 {
		t.Fatalf("revoke = %d %v", r.status, r.body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base, logs, stop = runObserved(t, dbURL, "TOOLSCORE_BOOTSTRAP_KEY", boot)
	if r := callAs(t, boot, "GET", base+"/v1/projects", ""); r.status != 401 {
		t.Errorf("revoked bootstrap key after a restart = %d, want 401", r.status)
	}
	if n := logs.FilterMessage("TOOLSCORE_BOOTSTRAP_KEY is ignored: the database has keys already").Len(); n != 1 {
		t.Errorf("ignored lines = %d, want 1", n)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestAuthOffIsLoud(t *testing.T) {
	base, logs, stop := runObserved(t, storetest.NewDatabase(t), "TOOLSCORE_AUTH", "off")
	defer func() { _ = stop() }()
	if r := call(t, "GET", base+"/v1/evaluations", ""); r.status != 200 {
		t.Errorf("GET without a key, auth off = %d", r.status)
	}
	warn := logs.FilterLevelExact(zap.WarnLevel).All()
	if len(warn) == 0 || warn[0].Message[:len("AUTHENTICATION IS OFF")] != "AUTHENTICATION IS OFF" {
		t.Errorf("warnings = %+v", warn)
	}
}
