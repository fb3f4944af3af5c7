package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mustSuite returns a suite whose tasks have the given ids; task ID is
// graded with the gold file [{"tool": "lookup", "args": {"id": ID}}].
func mustSuite(tb testing.TB, ids ...string) *Suite {
	tb.Helper()
	var tasks []string
	for _, id := range ids {
		tasks = append(tasks, fmt.Sprintf(`{"id":%q,"input":"look up %s","gold":[{"tool":"lookup","args":{"id":%q}}]}`, id, id, id))
	}
	s, err := ParseSuite([]byte(`{"name":"test","tasks":[`+strings.Join(tasks, ",")+`]}`), ".json")
	if err != nil {
		tb.Fatalf("ParseSuite: %v", err)
	}
	return s
}

// goodTrace is a plain-format trace that passes task id's gold file.
func goodTrace(id string) []byte {
	return fmt.Appendf(nil, `[{"tool":"lookup","args":{"id":%q}}]`, id)
}

// badTrace calls the wrong tool: a graded failure.
func badTrace() []byte { return []byte(`[{"tool":"delete_everything","args":{}}]`) }

// outcomeRow is the part of a TaskResult the tests compare.
type outcomeRow struct {
	ID       string
	Outcome  Outcome
	Reason   string
	Attempts int
}

func rows(rep *Report) []outcomeRow {
	var out []outcomeRow
	for _, t := range rep.Tasks {
		out = append(out, outcomeRow{t.ID, t.Outcome, t.Reason, t.Attempts})
	}
	return out
}

// TestRunHTTPFaults runs one suite against an HTTP agent that behaves
// differently per task: each fault is reported on its own task, with the
// right number of attempts, and the rest of the run is unaffected.
func TestRunHTTPFaults(t *testing.T) {
	t.Parallel() // waits out two timeouts
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		hits[req.TaskID]++
		n := hits[req.TaskID]
		mu.Unlock()
		switch req.TaskID {
		case "ok":
			w.Write(goodTrace(req.TaskID))
		case "wrong":
			w.Write(badTrace())
		case "hang":
			<-r.Context().Done()
		case "down":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "garbage":
			w.Write([]byte("<html>hello</html>"))
		case "close":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case "flaky": // 503 once, then a good answer
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			w.Write(goodTrace(req.TaskID))
		case "missing":
			http.Error(w, "no such task", http.StatusNotFound)
		}
	}))
	defer srv.Close()

	ids := []string{"ok", "wrong", "hang", "down", "garbage", "close", "flaky", "missing"}
	s := mustSuite(t, ids...)
	runner, err := NewHTTPRunner(srv.URL, 8)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), s, runner, Options{
		Concurrency: 8, Attempts: 2, Backoff: time.Millisecond, Timeout: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := rows(rep)
	// The garbage reason comes from the format package; only its prefix is
	// the harness's.
	if r := got[4].Reason; !strings.HasPrefix(r, "unreadable trace: ") {
		t.Errorf("garbage reason = %q, want an unreadable trace", r)
	}
	got[4].Reason = "unreadable trace: ..."
	want := []outcomeRow{
		{"ok", OutcomePass, "", 1},
		{"wrong", OutcomeFail, "", 1},
		{"hang", OutcomeError, "no answer within 500ms (after 2 attempts)", 2},
		{"down", OutcomeError, "agent answered 500 Internal Server Error: boom (after 2 attempts)", 2},
		{"garbage", OutcomeError, "unreadable trace: ...", 1},
		{"close", OutcomeError, "agent unreachable: EOF (after 2 attempts)", 2},
		{"flaky", OutcomePass, "", 2},
		{"missing", OutcomeError, "agent answered 404 Not Found: no such task", 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	// A graded failure is never asked again; transient failures are
	// retried up to Attempts.
	wantHits := map[string]int{"ok": 1, "wrong": 1, "hang": 2, "down": 2, "garbage": 1, "close": 2, "flaky": 2, "missing": 1}
	// The race detector does not see the happens-before edge of a TCP
	// round trip, so read the handler's map under its lock.
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(wantHits, hits); diff != "" {
		t.Errorf("requests per task (-want +got):\n%s", diff)
	}
	sum := rep.Summary
	if sum.Passed != 2 || sum.Failed != 1 || sum.Errors != 5 || sum.Tasks != 8 {
		t.Errorf("summary = %d/%d passed, %d failed, %d errors; want 2/8, 1, 5", sum.Passed, sum.Tasks, sum.Failed, sum.Errors)
	}
}

// TestRunRequestBody checks what an HTTP agent receives.
func TestRunRequestBody(t *testing.T) {
	var got []map[string]any
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" || r.Method != http.MethodPost {
			t.Errorf("agent got %s with Content-Type %q, want POST application/json", r.Method, ct)
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, body)
		mu.Unlock()
		w.Write(goodTrace(body["task_id"].(string)))
	}))
	defer srv.Close()
	s, err := ParseSuite([]byte(`{"name":"x","tools":[{"name":"lookup"}],"tasks":[
		{"id":"a","input":[{"role":"user","content":"hi"}],"gold":[{"tool":"lookup"}]}]}`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	runner, _ := NewHTTPRunner(srv.URL, 1)
	if _, err := Run(context.Background(), s, runner, Options{}); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{
		"task_id": "a",
		"input":   []any{map[string]any{"role": "user", "content": "hi"}},
		"tools":   []any{map[string]any{"name": "lookup"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestRunOrder makes the tasks finish in reverse order and checks the
// report is still in suite order.
func TestRunOrder(t *testing.T) {
	ids := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	s := mustSuite(t, ids...)
	// Task i answers only once task i+1 has finished.
	finished := make(map[string]chan struct{})
	for _, id := range ids {
		finished[id] = make(chan struct{})
	}
	runner := RunnerFunc(func(ctx context.Context, req *Request) ([]byte, error) {
		var next string
		fmt.Sscanf(req.TaskID, "t%d", new(int))
		for i, id := range ids {
			if id == req.TaskID && i+1 < len(ids) {
				next = ids[i+1]
			}
		}
		if next != "" {
			select {
			case <-finished[next]:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return goodTrace(req.TaskID), nil
	})
	var order []string
	rep, err := Run(context.Background(), s, runner, Options{
		Concurrency: len(ids),
		OnResult: func(tr *TaskResult) {
			order = append(order, tr.ID)
			close(finished[tr.ID])
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"t5", "t4", "t3", "t2", "t1", "t0"}, order); diff != "" {
		t.Errorf("finishing order (-want +got):\n%s", diff)
	}
	var got []string
	for _, tr := range rep.Tasks {
		got = append(got, tr.ID)
		if tr.Outcome != OutcomePass {
			t.Errorf("task %s: %s %s", tr.ID, tr.Outcome, tr.Reason)
		}
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("report order (-want +got):\n%s", diff)
	}
}

// TestRunConcurrencyLimit checks that no more than Concurrency tasks are
// in flight at once.
func TestRunConcurrencyLimit(t *testing.T) {
	var ids []string
	for i := range 20 {
		ids = append(ids, fmt.Sprintf("t%d", i))
	}
	s := mustSuite(t, ids...)
	var inFlight, peak atomic.Int64
	runner := RunnerFunc(func(ctx context.Context, req *Request) ([]byte, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		return goodTrace(req.TaskID), nil
	})
	rep, err := Run(context.Background(), s, runner, Options{Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 3 || p < 1 {
		t.Errorf("peak tasks in flight = %d, want 1..3", p)
	}
	if rep.Summary.Passed != 20 {
		t.Errorf("passed = %d, want 20", rep.Summary.Passed)
	}
}

// TestRunCancelled cancels the run while a task is in flight: the report
// comes back with every task accounted for and the context's error.
func TestRunCancelled(t *testing.T) {
	s := mustSuite(t, "a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	runner := RunnerFunc(func(ctx context.Context, req *Request) ([]byte, error) {
		if req.TaskID == "a" {
			return goodTrace("a"), nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	rep, err := Run(ctx, s, runner, Options{Concurrency: 1})
	if err != context.Canceled {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	want := []outcomeRow{
		{"a", OutcomePass, "", 1},
		{"b", OutcomeError, "run cancelled", 1},
		{"c", OutcomeError, "run cancelled", 0},
	}
	if diff := cmp.Diff(want, rows(rep)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestRunContractRefNeedsService(t *testing.T) {
	s, err := ParseSuite([]byte(`{"name":"x","tasks":[{"id":"a","input":"hi","gold":[]},{"id":"b","input":"hi","contract_ref":"flights@2"}]}`), ".json")
	if err != nil {
		t.Fatal(err)
	}
	called := false
	runner := RunnerFunc(func(context.Context, *Request) ([]byte, error) { called = true; return nil, nil })
	_, err = Run(context.Background(), s, runner, Options{})
	want := `invalid suite: /tasks/1/contract_ref: contract "flights@2" is in a registry: it needs a toolscore service (--server URL)`
	if err == nil || err.Error() != want {
		t.Errorf("Run error = %v, want %s", err, want)
	}
	if called {
		t.Error("the agent was asked although the suite cannot be graded")
	}
}

func TestRunRecorded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("good.json", string(goodTrace("good")))
	write("wrong.json", string(badTrace()))
	write("twice.json", string(goodTrace("twice")))
	write("twice.sse", "data: {}\n\n")
	write("empty.json", "")
	s := mustSuite(t, "good", "wrong", "absent", "twice", "empty")
	runner, err := NewRecordedRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), s, runner, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := rows(rep)
	if r := got[4].Reason; !strings.HasPrefix(r, "unreadable trace: ") {
		t.Errorf("empty file reason = %q, want an unreadable trace", r)
	}
	got[4].Reason = ""
	want := []outcomeRow{
		{"good", OutcomePass, "", 1},
		{"wrong", OutcomeFail, "", 1},
		{"absent", OutcomeError, "no recorded trace absent{.json,.jsonl,.sse} in " + dir, 1},
		{"twice", OutcomeError, "more than one recorded trace for the task: " + filepath.Join(dir, "twice.json") + ", " + filepath.Join(dir, "twice.sse"), 1},
		{"empty", OutcomeError, "", 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if _, err := NewRecordedRunner(filepath.Join(dir, "good.json")); err == nil {
		t.Error("NewRecordedRunner(a file) succeeded, want an error")
	}
}

func TestRunCommand(t *testing.T) {
	t.Parallel() // waits out a timeout
	s := mustSuite(t, "good", "wrong", "exit", "hang", "stdin")
	// The script answers by task id; "stdin" echoes the task it was given
	// back as the final answer, to show the request arrives on stdin.
	const script = `case "$TOOLSCORE_TASK_ID" in
good) printf '[{"tool":"lookup","args":{"id":"good"}}]' ;;
wrong) printf '[{"tool":"nope","args":{}}]' ;;
exit) echo "first line" >&2; echo "model quota exceeded" >&2; exit 3 ;;
hang) exec sleep 30 ;;
stdin) req=$(cat); printf '{"trace":[{"tool":"lookup","args":{"id":"stdin"}}],"final_answer":%s}' "$(printf '%s' "$req" | sed 's/"/\\"/g; s/^/"/; s/$/"/')" ;;
esac`
	runner, err := NewCommandRunner(script)
	if err != nil {
		t.Fatal(err)
	}
	var final string
	rep, err := Run(context.Background(), s, runner, Options{
		Concurrency: 5, Attempts: 1, Timeout: time.Second,
		OnResult: func(tr *TaskResult) {
			if tr.ID == "stdin" && tr.Result != nil && tr.Result.FinalAnswer != nil {
				final = *tr.Result.FinalAnswer
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []outcomeRow{
		{"good", OutcomePass, "", 1},
		{"wrong", OutcomeFail, "", 1},
		{"exit", OutcomeError, "agent command failed (exit status 3): model quota exceeded", 1},
		{"hang", OutcomeError, "no answer within 1s", 1},
		{"stdin", OutcomePass, "", 1},
	}
	if diff := cmp.Diff(want, rows(rep)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if wantIn := `{"task_id":"stdin","input":"look up stdin","tools":[]}`; final != wantIn {
		t.Errorf("command stdin = %s, want %s", final, wantIn)
	}
	if _, err := NewCommandRunner("  "); err == nil {
		t.Error("NewCommandRunner(blank) succeeded, want an error")
	}
}

func TestNewHTTPRunnerBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x/", "http://", "://"} {
		if _, err := NewHTTPRunner(u, 1); err == nil {
			t.Errorf("NewHTTPRunner(%q) succeeded, want an error", u)
		}
	}
}

func TestRetryBackoff(t *testing.T) {
	// Three transient failures then success: waits of 1, 2 and 4 units.
	var calls int
	var gaps []time.Duration
	last := time.Now()
	o := &Options{Attempts: 4, Backoff: 5 * time.Millisecond, Timeout: time.Second}
	_, attempts, err := retry(context.Background(), o, func(context.Context) ([]byte, error) {
		now := time.Now()
		if calls > 0 {
			gaps = append(gaps, now.Sub(last))
		}
		last = now
		calls++
		if calls < 4 {
			return nil, Transient(fmt.Errorf("try %d", calls))
		}
		return []byte("ok"), nil
	})
	if err != nil || attempts != 4 {
		t.Fatalf("retry = %d attempts, %v; want 4, nil", attempts, err)
	}
	// Only lower bounds can be asserted without timing flakiness.
	for i, min := range []time.Duration{5, 10, 20} {
		if gaps[i] < min*time.Millisecond {
			t.Errorf("wait %d = %v, want >= %v", i+1, gaps[i], min*time.Millisecond)
		}
	}
	// A final error stops at once.
	calls = 0
	_, attempts, err = retry(context.Background(), o, func(context.Context) ([]byte, error) {
		calls++
		return nil, fmt.Errorf("bad request")
	})
	if attempts != 1 || err == nil || err.Error() != "bad request" {
		t.Errorf("retry(final error) = %d attempts, %v; want 1, bad request", attempts, err)
	}
}

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name, answer string
		wantFormat   string
		wantCalls    int
		wantFinal    *string
	}{
		{"plain list", `[{"tool":"a","args":{}}]`, "plain", 1, nil},
		{"envelope", `{"trace":[{"tool":"a"},{"tool":"b"}],"final_answer":"done"}`, "plain", 2, ptr("done")},
		{"envelope with format", `{"format":"plain","trace":[{"tool":"a"}]}`, "plain", 1, nil},
		{"final answer overrides the format's", `{"trace":[{"role":"user","content":"hi"},{"role":"assistant","content":"from format"}],"final_answer":"explicit"}`, "", -1, ptr("explicit")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAnswer([]byte(tc.answer))
			if err != nil {
				t.Fatalf("ParseAnswer(%s): %v", tc.answer, err)
			}
			if tc.wantFormat != "" && p.Format != tc.wantFormat {
				t.Errorf("format = %q, want %q", p.Format, tc.wantFormat)
			}
			if tc.wantCalls >= 0 && len(p.Trace.Calls) != tc.wantCalls {
				t.Errorf("calls = %d, want %d", len(p.Trace.Calls), tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantFinal, p.Trace.FinalAnswer); diff != "" {
				t.Errorf("final answer (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"", "hello", `{"trace":"x"}`, `{"format":"nope","trace":[]}`} {
		if _, err := ParseAnswer([]byte(bad)); err == nil {
			t.Errorf("ParseAnswer(%q) succeeded, want an error", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }
