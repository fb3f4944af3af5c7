package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// agentBin is the example agent (examples/harness/agent), built once by
// TestMain.
var agentBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runs-agent")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "agent")
	if out, err := exec.Command("go", "build", "-o", agentBin, "../../examples/harness/agent").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the example agent: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startAgent runs the example agent on a free port until the test ends
// and returns its URL.
func startAgent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(agentBin, "-addr", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/"
		}
		if time.Now().After(deadline) {
			t.Fatalf("the example agent does not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // waiting for a child process to listen: no signal to wait on
	}
}

// testBundle is a migrated database, a Service on it and a river client
// working its jobs.
type testBundle struct {
	db     *store.DB
	svc    *Service
	client *river.Client[pgx.Tx]
	events <-chan *river.Event
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: storetest.NewDatabase(t), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	b := &testBundle{db: db}
	b.start(t)
	return b
}

// start builds a Service and a river client working its jobs (one more
// process), stopped when the test ends.
func (b *testBundle) start(t *testing.T) {
	t.Helper()
	svc, err := New(Config{Store: b.db, Logger: zaptest.NewLogger(t), Workers: 4, AllowedHosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	client, err := river.NewClient(riverpgxv5.New(b.db.Pool()), &river.Config{Queues: svc.Register(workers), Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	t.Cleanup(cancel)
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	b.svc, b.client, b.events = svc, client, events
}

// wait waits, on job events, until cond holds for the run.
func (b *testBundle) wait(t *testing.T, r record.Run, cond func(record.Run) bool) record.Run {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		got, err := b.db.GetRun(context.Background(), r.ProjectID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cond(got) {
			return got
		}
		select {
		case <-b.events:
		case <-timeout:
			t.Fatalf("run %s: condition not met within 15s: %+v", r.ID, got)
		}
	}
}

func final(r record.Run) bool { return r.State.Final() }

func exampleSuite(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/harness/suite.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// taskRow is what the tests compare of a stored task.
type taskRow struct {
	ID, Outcome, Grade, TopIssue, Format string
}

func taskRows(tasks []record.RunTask) []taskRow {
	var out []taskRow
	for _, t := range tasks {
		out = append(out, taskRow{t.TaskID, t.Outcome, t.Grade, t.TopIssue, t.Format})
	}
	return out
}

// wantExample is the example suite against the example agent
// (examples/harness/README.md): four pass, two fail.
var wantExample = []taskRow{
	{"book-lisbon", "pass", "A", "", "openai"},
	{"seat-porto", "pass", "A", "", "anthropic"},
	{"change-date", "fail", "B", "cancel_booking: `cancel_booking` is forbidden (change the booking with change_booking; cancelling loses the fare)", "openai"},
	{"book-with-bag", "fail", "B", "add_baggage: `add_baggage` was not called", "anthropic"},
	{"flight-status", "pass", "A", "", "openai"},
	{"search-only", "pass", "A", "", "anthropic"},
}

func TestRunExampleSuite(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	run, err := b.svc.Create(ctx, record.DefaultProject, record.Run{Suite: exampleSuite(t), AgentURL: startAgent(t),
		Agent: "scripted", Concurrency: 2, Timeout: 5 * time.Second, Retries: 1})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if run.State != record.RunRunning || run.Total != 6 || run.SuiteName != "flight-booking" {
		t.Errorf("created = %+v", run)
	}
	got := b.wait(t, run, final)
	if got.State != record.RunCompleted || got.Done != 6 || got.Passed != 4 || got.Failed != 2 || got.Errors != 0 || got.FinishedAt == nil {
		t.Errorf("run = %+v, want completed 4 passed 2 failed", got)
	}
	if mean := got.ScoreSum / 6; fmt.Sprintf("%.3f", mean) != "0.947" {
		t.Errorf("mean score = %.4f, want 0.947 (README)", mean)
	}
	_, tasks, err := b.svc.Get(ctx, record.DefaultProject, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantExample, taskRows(tasks)); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}

	// The results are ordinary results: listed by run_id, with task ids,
	// each linked from its task.
	results, err := b.db.ListResults(ctx, record.DefaultProject, record.ResultFilter{RunID: run.ID.String()}, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	byTask := map[string]record.ResultSummary{}
	for _, r := range results {
		byTask[r.TaskID] = r
	}
	if len(results) != 6 || len(byTask) != 6 {
		t.Fatalf("results of the run = %d (%d tasks), want 6", len(results), len(byTask))
	}
	for _, tk := range tasks {
		r := byTask[tk.TaskID]
		if r.ID != tk.ResultID || r.Passed != (tk.Outcome == "pass") || r.Grade != tk.Grade || r.Agent != "scripted" || r.Contract.SHA256 == "" {
			t.Errorf("result of %s = %+v, task %+v", tk.TaskID, r, tk)
		}
	}
	full, err := b.db.GetResult(ctx, record.DefaultProject, byTask["change-date"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if full.Score != tasks[2].Score || full.FinalAnswer == nil || len(full.TraceCalls) < 10 {
		t.Errorf("stored result of change-date = %+v", full.ResultSummary)
	}

	// A task job that runs again (a crash after the agent answered, a
	// rescue) stores nothing more.
	first, state, err := b.db.WriteRunTask(ctx, record.RunTaskWrite{ProjectID: 1, RunID: run.ID,
		Task: record.RunTask{TaskID: "book-lisbon", Index: 0, Outcome: "fail", Attempts: 1}}, nil)
	if err != nil || first || state != record.RunCompleted {
		t.Errorf("WriteRunTask again = %v, %v, %v; want false, completed", first, state, err)
	}
	again, _ := b.db.GetRun(ctx, 1, run.ID)
	if again.Done != 6 || again.Passed != 4 {
		t.Errorf("counters after a repeated task = %+v", again)
	}

	list, err := b.svc.List(ctx, record.DefaultProject, nil, 10)
	if err != nil || len(list) != 1 || list[0].ID != run.ID || list[0].Suite != nil {
		t.Errorf("List = %+v, %v", list, err)
	}
}

// hangingAgent answers nothing until the request ends; started receives
// one value per request.
func hangingAgent(t *testing.T) (string, <-chan struct{}) {
	started := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body is
		// read.
		_, _ = io.Copy(io.Discard, r.Body)
		started <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, started
}

func TestCancelRun(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	url, started := hangingAgent(t)
	run, err := b.svc.Create(ctx, record.DefaultProject, record.Run{Suite: exampleSuite(t), AgentURL: url,
		Concurrency: 2, Timeout: 30 * time.Second, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	<-started
	got, err := b.svc.Cancel(ctx, record.DefaultProject, run.ID)
	if err != nil || got.State != record.RunCancelled || got.FinishedAt == nil {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	// Both running jobs end cancelled, and store nothing.
	for range 2 {
		select {
		case ev := <-b.events:
			if ev.Kind != river.EventKindJobCancelled {
				t.Errorf("job event %s, want cancelled", ev.Kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the running jobs were not cancelled")
		}
	}
	_, tasks, err := b.svc.Get(ctx, record.DefaultProject, run.ID)
	if err != nil || len(tasks) != 0 {
		t.Errorf("tasks after cancel = %+v, %v", tasks, err)
	}
	var open int
	if err := b.db.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'run_id' = $1 AND finalized_at IS NULL`, run.ID.String()).Scan(&open); err != nil || open != 0 {
		t.Errorf("unfinished jobs after cancel = %d, %v", open, err)
	}
	again, err := b.svc.Cancel(ctx, record.DefaultProject, run.ID)
	if err != nil || again.State != record.RunCancelled || !again.FinishedAt.Equal(*got.FinishedAt) {
		t.Errorf("second Cancel = %+v, %v", again, err)
	}
}

// TestResumeAfterStop stops the only worker process while a task waits for
// the agent (its job rolls back, as when a process dies) and starts
// another: the run resumes with the unfinished task only, and every
// task's result is stored once.
func TestResumeAfterStop(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	target, err := url.Parse(startAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	blocked := make(chan struct{}, 1)
	var once sync.Once
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			TaskID string `json:"task_id"`
		}
		_ = json.Unmarshal(body, &req)
		block := false
		if req.TaskID == "book-lisbon" {
			once.Do(func() { block = true })
		}
		if block {
			blocked <- struct{}{}
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(agent.Close)

	run, err := b.svc.Create(ctx, record.DefaultProject, record.Run{Suite: exampleSuite(t), AgentURL: agent.URL,
		Concurrency: 6, Timeout: 30 * time.Second, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	<-blocked
	b.wait(t, run, func(r record.Run) bool { return r.Done == 5 })
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.client.StopAndCancel(sctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if got, _ := b.db.GetRun(ctx, 1, run.ID); got.Done != 5 || got.State != record.RunRunning {
		t.Fatalf("run after the stop = %+v, want running with 5 done", got)
	}

	b.start(t) // another process
	got := b.wait(t, run, final)
	if got.State != record.RunCompleted || got.Done != 6 || got.Passed != 4 || got.Failed != 2 || got.Errors != 0 {
		t.Errorf("run = %+v, want completed 4 passed 2 failed", got)
	}
	_, tasks, err := b.svc.Get(ctx, 1, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantExample, taskRows(tasks)); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	results, err := b.db.ListResults(ctx, 1, record.ResultFilter{RunID: run.ID.String()}, nil, 100)
	if err != nil || len(results) != 6 {
		t.Errorf("results of the run = %d, %v; want 6", len(results), err)
	}
}

// TestRunFormatWarning checks that a task's stored result carries the
// trace format's warning, redacted, as POST /v1/evaluations stores it:
// the agent's answer has no call the openai-responses format reads, and a
// member whose name holds a GitHub token.
func TestRunFormatWarning(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	token := "ghp_" + "R7cXk2Vq9LmN4bT8wZ3yH6jF1dS5aQ0pE2uK"
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"trace": [{"type": "function_call_output", "call_id": "c1", "output": "ok", "tool_call_`+token+`": "x"}]}`)
	}))
	defer agent.Close()
	suite := `{"name": "warned", "tasks": [{"id": "t1", "input": "Search.", "contract": {"contract_version": 2, "required": [{"tool": "search"}]}}]}`
	run, err := b.svc.Create(ctx, record.DefaultProject, record.Run{Suite: []byte(suite), AgentURL: agent.URL,
		Concurrency: 1, Timeout: 5 * time.Second, Retries: 0})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got := b.wait(t, run, final); got.State != record.RunCompleted || got.Failed != 1 {
		t.Fatalf("run = %+v, want completed with 1 failed", got)
	}
	_, tasks, err := b.svc.Get(ctx, record.DefaultProject, run.ID)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks = %+v, %v", tasks, err)
	}
	const want = "the trace has no calls, though 2 values in it look like tool calls or results that the openai-responses format does not read: " +
		"type function_call_output at /0/type, tool_call_[REDACTED:github-pat] at /0/tool_call_[REDACTED:github-pat]"
	res, err := b.db.GetResult(ctx, record.DefaultProject, tasks[0].ResultID)
	if err != nil || res.Format != "openai-responses" || res.FormatWarning != want {
		t.Errorf("stored result: format %q, format_warning %q, %v; want openai-responses, %q", res.Format, res.FormatWarning, err, want)
	}
}
