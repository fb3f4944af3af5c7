package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/otlp"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// env is a whole server in the test process on a fresh database: the
// API with the ingest, and one river client working trace jobs.
type env struct {
	t     *testing.T
	db    *store.DB
	dbURL string
	api   *api.Server
	svc   *otlp.Service
	http  *httptest.Server
	reg   *prometheus.Registry
	// token is a key of project default with every scope, sent by do;
	// ingest a key with the ingest scope only.
	token, ingest string
	// beforeGrade, when set, runs before each grading with the
	// evaluation body; its error is the grading's.
	beforeGrade atomic.Pointer[func(body []byte) error]
}

// newEnv starts an env; cfg's Store, Grade, Logger and Registerer are
// filled in, and Quiet and SweepEvery default to 300 ms and 50 ms.
func newEnv(t *testing.T, cfg otlp.Config) *env {
	t.Helper()
	e := newHeldEnv(t, cfg)
	e.svc.Start()
	return e
}

// newHeldEnv is newEnv with the service's background loops (the
// assembler, the retention sweep) not started: spans are stored, and no
// trace closes until the test calls e.svc.Start.
func newHeldEnv(t *testing.T, cfg otlp.Config) *env {
	t.Helper()
	dbURL := storetest.NewDatabase(t)
	ctx := context.Background()
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	reg := prometheus.NewRegistry()
	db, err := store.Open(ctx, store.Config{URL: dbURL, Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, dbURL: dbURL, reg: reg}
	cfg.Store, cfg.Logger, cfg.Registerer = db, log, reg
	cfg.Grade = func(ctx context.Context, project int64, body []byte, id uuid.UUID) (*record.Result, error) {
		if f := e.beforeGrade.Load(); f != nil {
			if err := (*f)(body); err != nil {
				return nil, err
			}
		}
		return e.api.Grade(ctx, project, body, id)
	}
	if cfg.Quiet == 0 {
		cfg.Quiet = 300 * time.Millisecond
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = 50 * time.Millisecond
	}
	if e.svc, err = otlp.New(cfg); err != nil {
		t.Fatal(err)
	}
	rg, err := regrade.New(regrade.Config{Store: db, Logger: log, RescueAfter: 5 * time.Second,
		Jobs: func(w *river.Workers) map[string]river.QueueConfig { return e.svc.Register(w) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		dst    *string
		scopes []auth.Scope
	}{{&e.token, auth.AllScopes()}, {&e.ingest, []auth.Scope{auth.ScopeIngest}}} {
		key, token, err := auth.NewKey(record.DefaultProject, "test", k.scopes, uuid.Nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		*k.dst = token
	}
	e.api = api.New(api.Config{Store: db, Logger: log, Registerer: reg, Workers: 2, Regrades: rg, OTLP: e.svc,
		Auth: auth.NewAuthenticator(auth.Config{Store: db}), Keys: db})
	if err := rg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewServer(e.api.Handler())
	t.Cleanup(func() {
		e.http.Close()
		e.svc.Stop()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rg.Stop(sctx)
		e.api.Close()
		db.Close()
	})
	return e
}

// do sends a request and returns the status and body.
func (e *env) do(method, path, contentType string, body []byte, header ...string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// mustJSON sends JSON and decodes the answer into out, failing unless the
// status is want.
func (e *env) mustJSON(method, path string, body any, want int, out any) {
	e.t.Helper()
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			e.t.Fatal(err)
		}
	}
	ct := ""
	if b != nil {
		ct = "application/json"
	}
	code, _, resp := e.do(method, path, ct, b)
	if code != want {
		e.t.Fatalf("%s %s = %d, want %d: %s", method, path, code, want, resp)
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, resp)
		}
	}
}

// contract registers a contract version from a file.
func (e *env) contract(name, file string) {
	e.t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatal(err)
	}
	e.mustJSON("POST", "/v1/contracts/"+name+"/versions", b, 201, nil)
}

// rule registers a grading rule version.
func (e *env) rule(name, body string) {
	e.t.Helper()
	e.mustJSON("POST", "/v1/rules/"+name+"/versions", body, 201, nil)
}

// traceState is GET /v1/traces/{id}.
type traceState struct {
	TraceID    string `json:"trace_id"`
	State      string `json:"state"`
	Revision   int    `json:"revision"`
	Spans      int    `json:"spans"`
	LateSpans  int    `json:"late_spans"`
	Incomplete bool   `json:"incomplete"`
	Rule       string `json:"rule"`
	ResultID   string `json:"result_id"`
	Reason     string `json:"reason"`
}

// waitFinal polls a trace until its state is final (or, with revision > 0,
// final at that revision).
func (e *env) waitFinal(traceID string, revision int) traceState {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, b := e.do("GET", "/v1/traces/"+traceID, "", nil)
		var st traceState
		if code == 200 {
			if err := json.Unmarshal(b, &st); err != nil {
				e.t.Fatal(err)
			}
			if st.State != "open" && st.State != "closed" && (revision == 0 || st.Revision == revision) {
				return st
			}
		} else if code != 404 {
			e.t.Fatalf("GET trace %s = %d: %s", traceID, code, b)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("trace %s not final after 30 s: %d %s", traceID, code, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metric returns a counter or gauge's value.
func (e *env) metric(name string, labels ...string) float64 {
	e.t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.Label {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}
