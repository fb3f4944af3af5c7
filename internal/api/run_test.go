package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/record"
)

// fakeRuns is an in-memory Runs: runs in creation order, tasks by run. It
// records the last run created and the last list arguments.
type fakeRuns struct {
	runs    []record.Run
	tasks   map[uuid.UUID][]record.RunTask
	created record.Run

	lastAfter *record.Cursor
	lastLimit int
}

var _ Runs = (*fakeRuns)(nil)

func (f *fakeRuns) Create(_ context.Context, projectID int64, r record.Run) (record.Run, error) {
	f.created = r
	r.ID, r.ProjectID, r.State, r.SuiteName, r.Total, r.CreatedAt = uuid.Must(uuid.NewV7()), projectID, record.RunRunning, "s", 2, t0
	f.runs = append(f.runs, r)
	return r, nil
}

func (f *fakeRuns) find(id uuid.UUID) (int, error) {
	for i, r := range f.runs {
		if r.ID == id {
			return i, nil
		}
	}
	return 0, engine.ErrNotFound
}

func (f *fakeRuns) Get(_ context.Context, _ int64, id uuid.UUID) (record.Run, []record.RunTask, error) {
	i, err := f.find(id)
	if err != nil {
		return record.Run{}, nil, err
	}
	return f.runs[i], f.tasks[id], nil
}

func (f *fakeRuns) List(_ context.Context, _ int64, after *record.Cursor, limit int) ([]record.Run, error) {
	f.lastAfter, f.lastLimit = after, limit
	var out []record.Run
	for i := len(f.runs) - 1; i >= 0; i-- {
		r := f.runs[i]
		if after != nil && !r.CreatedAt.Before(after.CreatedAt) {
			continue
		}
		out = append(out, r)
	}
	return out[:min(limit, len(out))], nil
}

func (f *fakeRuns) Cancel(_ context.Context, _ int64, id uuid.UUID) (record.Run, error) {
	i, err := f.find(id)
	if err != nil {
		return record.Run{}, err
	}
	if !f.runs[i].State.Final() {
		end := t0.Add(time.Minute)
		f.runs[i].State, f.runs[i].FinishedAt = record.RunCancelled, &end
	}
	return f.runs[i], nil
}

func (f *fakeRuns) MaxTaskTime() time.Duration { return 2 * time.Minute }

func (f *fakeRuns) CheckAgentURL(raw string) error {
	if strings.Contains(raw, "169.254.169.254") {
		return errors.New("169.254.169.254 is a link-local address, not in the allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)")
	}
	return nil
}

func setupRuns(t *testing.T) (*testBundle, *fakeRuns) {
	t.Helper()
	fr := &fakeRuns{tasks: map[uuid.UUID][]record.RunTask{}}
	b := setup(t, func(c *Config) { c.Runs = fr })
	return b, fr
}

const runSuite = `{"name": "s", "tasks": [
	{"id": "a", "input": "book", "contract": ` + contractA + `},
	{"id": "b", "input": [{"role": "user", "content": "go"}], "gold": ` + goldList + `}]}`

func TestCreateRun(t *testing.T) {
	b, fr := setupRuns(t)
	rec := b.do(t, "POST", "/v1/runs", `{"suite": `+runSuite+`, "agent_url": "http://agent.test/run?token=abc",
		"agent": "bot", "concurrency": 8, "timeout": "5s", "retries": 1}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	v := decode[runView](t, rec)
	if got := rec.Header().Get("Location"); got != "/v1/runs/"+v.ID {
		t.Errorf("Location = %q, want /v1/runs/%s", got, v.ID)
	}
	if v.AgentURL != "http://agent.test/run?token=xxxxx" || v.State != "running" || v.Concurrency != 8 ||
		v.Timeout != 5 || v.Retries != 1 || v.Agent != "bot" || v.Total != 2 || v.Progress != 0 {
		t.Errorf("view = %+v", v)
	}
	c := fr.created
	if c.AgentURL != "http://agent.test/run?token=abc" || c.Concurrency != 8 || c.Timeout != 5*time.Second || c.Retries != 1 || c.Agent != "bot" {
		t.Errorf("Create got %+v", c)
	}
	var want, got any
	_ = json.Unmarshal([]byte(runSuite), &want)
	_ = json.Unmarshal(c.Suite, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suite passed to Create (-want +got):\n%s", diff)
	}

	// Defaults; a timeout in seconds.
	for body, want := range map[string][3]any{
		`{"suite": ` + runSuite + `, "agent_url": "https://agent.test"}`:                 {4, 30 * time.Second, 2},
		`{"suite": ` + runSuite + `, "agent_url": "https://agent.test", "timeout": 1.5}`: {4, 1500 * time.Millisecond, 2},
	} {
		if rec := b.do(t, "POST", "/v1/runs", body); rec.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if got := [3]any{fr.created.Concurrency, fr.created.Timeout, fr.created.Retries}; got != want {
			t.Errorf("options of %s = %v, want %v", body, got, want)
		}
	}
}

func TestCreateRunErrors(t *testing.T) {
	b, _ := setupRuns(t)
	tests := []struct {
		name, body string
		status     int
		slug       string
		pointers   []string
	}{
		{"empty", `{}`, 422, "invalid-request", []string{"/suite", "/agent_url"}},
		{"bad options", `{"suite": ` + runSuite + `, "agent_url": "ftp://x", "concurrency": 0, "retries": 11, "timeout": "soon"}`,
			422, "invalid-request", []string{"/agent_url", "/concurrency", "/retries", "/timeout"}},
		{"refused agent host", `{"suite": ` + runSuite + `, "agent_url": "http://169.254.169.254/latest/meta-data/"}`, 422, "invalid-request", []string{"/agent_url"}},
		{"timeout too long", `{"suite": ` + runSuite + `, "agent_url": "http://x", "timeout": "11m"}`, 422, "invalid-request", []string{"/timeout"}},
		{"budget over the limit", `{"suite": ` + runSuite + `, "agent_url": "http://x", "timeout": "60s", "retries": 2}`, 422, "invalid-request", []string{"/timeout"}},
		{"bad suite", `{"agent_url": "http://x", "suite": {"name": "s", "tasks": [
			{"id": "a", "input": "x", "contract": {"contract_version": 2, "required": [{"tool": 3}]}},
			{"id": "a", "input": "y", "gold": []}]}}`, 422, "invalid-request",
			[]string{"/suite/tasks/0/contract/required/0/tool", "/suite/tasks/1/id"}},
		{"contract_ref", `{"agent_url": "http://x", "suite": {"name": "s", "tasks": [{"id": "a", "input": "x", "contract_ref": "flights@2"}]}}`,
			422, "invalid-request", []string{"/suite/tasks/0/contract_ref"}},
		{"unknown field", `{"suite": ` + runSuite + `, "agent_url": "http://x", "workers": 2}`, 422, "invalid-request", []string{"/workers"}},
		{"NUL in text", `{"suite": {"name": "s\u0000", "tasks": [{"id": "a", "input": "y", "gold": []}]}, "agent_url": "http://x", "agent": "a\u0000"}`,
			422, "invalid-request", []string{"/suite/name", "/agent"}},
		{"bad json", `{"suite": `, 400, "invalid-json", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do(t, "POST", "/v1/runs", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			p := decode[Problem](t, rec)
			if p.Type != ProblemTypeBase+tc.slug {
				t.Errorf("type = %s, want %s", p.Type, tc.slug)
			}
			var ptrs []string
			for _, e := range p.Errors {
				ptrs = append(ptrs, e.Pointer)
			}
			if diff := cmp.Diff(tc.pointers, ptrs); diff != "" {
				t.Errorf("pointers (-want +got):\n%s\n%s", diff, rec.Body)
			}
		})
	}
}

// TestCreateRunIntegers: an integer option given a fraction says it
// must be an integer (it said "must be a number, got number 1.5").
func TestCreateRunIntegers(t *testing.T) {
	b, _ := setupRuns(t)
	for _, tc := range []struct{ body, ptr, msg string }{
		{`"concurrency": 1.5`, "/concurrency", "must be an integer, got number 1.5"},
		{`"retries": 2.0`, "/retries", "must be an integer, got number 2.0"},
		{`"retries": "2"`, "/retries", "must be an integer, got string"},
	} {
		p := problemOf(t, b.do(t, "POST", "/v1/runs", `{"suite": `+runSuite+`, "agent_url": "http://x", `+tc.body+`}`), 422, "invalid-request")
		if want := []FieldProblem{{Pointer: tc.ptr, Message: tc.msg}}; !cmp.Equal(want, p.Errors) {
			t.Errorf("%s: errors = %+v, want %+v", tc.body, p.Errors, want)
		}
	}
}

func TestRunsDisabled(t *testing.T) {
	b := setup(t, nil)
	for _, req := range [][2]string{{"POST", "/v1/runs"}, {"GET", "/v1/runs"}, {"GET", "/v1/runs/" + uuid.NewString()}, {"DELETE", "/v1/runs/" + uuid.NewString()}} {
		body := ""
		if req[0] == "POST" {
			body = `{}`
		}
		if rec := b.do(t, req[0], req[1], body); rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s: status %d, want 503", req[0], req[1], rec.Code)
		}
	}
}

func TestGetRun(t *testing.T) {
	b, fr := setupRuns(t)
	started, finished := t0.Add(time.Second), t0.Add(time.Minute)
	run := record.Run{ID: uuid.Must(uuid.NewV7()), ProjectID: 1, State: record.RunCompleted, SuiteName: "flight-booking",
		AgentURL: "http://agent.test/", Concurrency: 2, Timeout: 10 * time.Second, Retries: 1,
		Total: 4, Done: 4, Passed: 2, Failed: 1, Errors: 1, ScoreSum: 2.7, CreatedAt: t0, StartedAt: &started, FinishedAt: &finished}
	fr.runs = append(fr.runs, run)
	r1, r2, r3 := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	fr.tasks[run.ID] = []record.RunTask{
		{TaskID: "a", Index: 0, Outcome: "pass", ResultID: r1, Score: 1, Grade: "A", Attempts: 1, Duration: 5 * time.Millisecond, Format: "openai"},
		{TaskID: "b", Index: 1, Outcome: "fail", ResultID: r2, Score: 0.8, Grade: "B", TopIssue: "cancel_booking: forbidden", Attempts: 1, Duration: 30 * time.Millisecond, Format: "plain"},
		{TaskID: "c", Index: 2, Outcome: "error", Reason: "agent answered 500", TopIssue: "agent answered 500", Attempts: 2, Duration: 20 * time.Millisecond},
		{TaskID: "d", Index: 3, Outcome: "pass", ResultID: r3, Score: 0.9, Grade: "A", Attempts: 1, Duration: time.Millisecond, Format: "plain"},
	}
	rec := b.do(t, "GET", "/v1/runs/"+run.ID.String(), "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := runView{ID: run.ID.String(), State: "completed", Suite: "flight-booking", AgentURL: "http://agent.test/",
		Concurrency: 2, Timeout: 10, Retries: 1, Total: 4, Done: 4, Passed: 2, Failed: 1, Errors: 1, Progress: 1, MeanScore: 0.9,
		Summary: &harness.Summary{Tasks: 4, Passed: 2, Failed: 1, Errors: 1, PassRate: 0.5, MeanScore: 0.9,
			Grades: map[engine.Grade]int{"A": 2, "B": 1},
			Failing: []harness.FailingTask{{ID: "b", Outcome: "fail", Issue: "cancel_booking: forbidden"},
				{ID: "c", Outcome: "error", Issue: "agent answered 500"}},
			Slowest: []harness.SlowTask{{ID: "b", Duration: 30 * time.Millisecond}, {ID: "c", Duration: 20 * time.Millisecond}, {ID: "a", Duration: 5 * time.Millisecond}}},
		Tasks: []runTaskView{
			{ID: "a", Outcome: "pass", EvaluationID: r1.String(), Score: 1, Grade: "A", Attempts: 1, DurationSeconds: 0.005, Format: "openai"},
			{ID: "b", Outcome: "fail", EvaluationID: r2.String(), Score: 0.8, Grade: "B", TopIssue: "cancel_booking: forbidden", Attempts: 1, DurationSeconds: 0.03, Format: "plain"},
			{ID: "c", Outcome: "error", Reason: "agent answered 500", Attempts: 2, DurationSeconds: 0.02},
			{ID: "d", Outcome: "pass", EvaluationID: r3.String(), Score: 0.9, Grade: "A", Attempts: 1, DurationSeconds: 0.001, Format: "plain"},
		},
		CreatedAt: t0, StartedAt: &started, FinishedAt: &finished}
	got := decode[runView](t, rec)
	// SlowTask's duration travels as duration_seconds.
	for i := range got.Summary.Slowest {
		got.Summary.Slowest[i].Duration = want.Summary.Slowest[i].Duration
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}
	var raw struct {
		Summary struct {
			Slowest []struct {
				DurationSeconds float64 `json:"duration_seconds"`
			} `json:"slowest"`
		} `json:"summary"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &raw)
	if len(raw.Summary.Slowest) != 3 || raw.Summary.Slowest[0].DurationSeconds != 0.03 {
		t.Errorf("slowest = %+v", raw.Summary.Slowest)
	}

	for target, status := range map[string]int{"/v1/runs/" + uuid.NewString(): 404, "/v1/runs/nope": 400} {
		if rec := b.do(t, "GET", target, ""); rec.Code != status {
			t.Errorf("GET %s: status %d, want %d", target, rec.Code, status)
		}
	}
}

func TestListRuns(t *testing.T) {
	b, fr := setupRuns(t)
	for i := range 3 {
		fr.runs = append(fr.runs, record.Run{ID: uuid.Must(uuid.NewV7()), State: record.RunRunning, SuiteName: "s",
			AgentURL: "http://a/", Concurrency: 1, Timeout: time.Second, Total: 2, Done: i, Passed: i, ScoreSum: float64(i),
			CreatedAt: t0.Add(time.Duration(i) * time.Second)})
	}
	rec := b.do(t, "GET", "/v1/runs?limit=2", "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	p := decode[page[runView]](t, rec)
	if len(p.Items) != 2 || p.Items[0].ID != fr.runs[2].ID.String() || p.Items[1].ID != fr.runs[1].ID.String() || p.NextCursor == "" || fr.lastLimit != 3 {
		t.Fatalf("page 1 = %+v (limit %d)", p, fr.lastLimit)
	}
	if p.Items[0].Progress != 1 || p.Items[0].MeanScore != 1 || p.Items[0].Summary != nil || p.Items[0].Tasks != nil {
		t.Errorf("item = %+v", p.Items[0])
	}
	p = decode[page[runView]](t, b.do(t, "GET", "/v1/runs?limit=2&cursor="+p.NextCursor, ""))
	if len(p.Items) != 1 || p.Items[0].ID != fr.runs[0].ID.String() || p.NextCursor != "" {
		t.Errorf("page 2 = %+v", p)
	}
	if want := (&record.Cursor{CreatedAt: fr.runs[1].CreatedAt, ID: fr.runs[1].ID}); !cmp.Equal(want, fr.lastAfter) {
		t.Errorf("cursor = %+v, want %+v", fr.lastAfter, want)
	}
	if rec := b.do(t, "GET", "/v1/runs?cursor=!!!", ""); rec.Code != 400 {
		t.Errorf("bad cursor: status %d", rec.Code)
	}
}

func TestCancelRun(t *testing.T) {
	b, fr := setupRuns(t)
	run := record.Run{ID: uuid.Must(uuid.NewV7()), State: record.RunRunning, SuiteName: "s", AgentURL: "http://a/",
		Concurrency: 1, Timeout: time.Second, Total: 3, Done: 1, Errors: 1, CreatedAt: t0}
	fr.runs = append(fr.runs, run)
	rec := b.do(t, "DELETE", "/v1/runs/"+run.ID.String(), "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if v := decode[runView](t, rec); v.State != "cancelled" || v.FinishedAt == nil || v.Done != 1 {
		t.Errorf("after cancel = %+v", v)
	}
	if rec := b.do(t, "DELETE", "/v1/runs/"+uuid.NewString(), ""); rec.Code != 404 {
		t.Errorf("unknown run: status %d, want 404", rec.Code)
	}
}

// TestCreateRunSecrets checks that a run's agent is stored redacted, and
// that an agent URL, suite name, task id or label holding a secret is
// refused at its pointer without the secret in the answer.
func TestCreateRunSecrets(t *testing.T) {
	b, fr := setupRuns(t)
	rec := b.do(t, "POST", "/v1/runs", `{"suite": `+runSuite+`, "agent_url": "https://agent.test/run", "agent": "bot-`+fakeGitHub+`"}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if fr.created.Agent != "bot-[REDACTED:github-pat]" || strings.Contains(rec.Body.String(), fakeGitHub) {
		t.Errorf("created agent %q, answer %s", fr.created.Agent, rec.Body)
	}
	suite := `{"name": "s-` + fakeAWSKey + `", "tasks": [{"id": "a", "input": "go", "gold": [{"tool": "b"}]},
		{"id": "` + fakeGitHub + `", "input": "go", "gold": [{"tool": "b"}], "labels": {"k-` + fakeSlackBot + `": "v", "ok": "fine"}}]}`
	n := len(fr.runs)
	rec = b.do(t, "POST", "/v1/runs", `{"suite": `+suite+`, "agent_url": "https://agent.test/run?api_key=Zq8vR2kL9xT4wB7nM3pQ&x=`+fakeAWSKey+`"}`)
	p := problemOf(t, rec, 422, "invalid-request")
	want := []FieldProblem{
		{Pointer: "/agent_url", Message: "holds a secret (aws-access-token), which the stored run would keep; leave it out"},
		{Pointer: "/suite/name", Message: "holds a secret (aws-access-token), which the stored run would keep; leave it out"},
		{Pointer: "/suite/tasks/1/id", Message: "holds a secret (github-pat), which the stored run would keep; leave it out"},
		{Pointer: "/suite/tasks/1/labels", Message: "holds a secret (slack-bot-token), which the stored run would keep; leave it out"},
	}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	for _, s := range []string{fakeAWSKey, fakeGitHub, fakeSlackBot, "Zq8vR2kL9xT4wB7nM3pQ"} {
		if strings.Contains(rec.Body.String(), s) {
			t.Errorf("the answer holds %s", s)
		}
	}
	// A query parameter named like a credential is seen too.
	rec = b.do(t, "POST", "/v1/runs", `{"suite": `+runSuite+`, "agent_url": "https://agent.test/run?api_key=Zq8vR2kL9xT4wB7nM3pQ"}`)
	if p := problemOf(t, rec, 422, "invalid-request"); len(p.Errors) != 1 || p.Errors[0].Pointer != "/agent_url" ||
		!strings.Contains(p.Errors[0].Message, "generic-api-key") {
		t.Errorf("errors = %+v", p.Errors)
	}
	if len(fr.runs) != n {
		t.Errorf("a refused run was created")
	}
}
