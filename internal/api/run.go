package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/record"
)

// Runs is what the harness run routes need (issue 7); cmd/server passes
// in *runs.Service, whose methods of the same names document the exact
// behaviour. Methods return the engine's sentinels (ErrNotFound,
// ErrUnavailable).
type Runs interface {
	// Create starts a run of r.Suite against r.AgentURL (r's Agent,
	// Concurrency, Timeout and Retries are read too; the API validates
	// them first).
	Create(ctx context.Context, projectID int64, r record.Run) (record.Run, error)
	// Get returns a run and its finished tasks in suite order.
	Get(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, []record.RunTask, error)
	// List returns runs newest first after the cursor.
	List(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Run, error)
	Cancel(ctx context.Context, projectID int64, id uuid.UUID) (record.Run, error)
	// MaxTaskTime is the longest budget a task may have (see
	// runs.Budget).
	MaxTaskTime() time.Duration
	// CheckAgentURL says why the server will not call an agent URL (not
	// on its allow-list, a password in it, runs disabled); nil when it
	// will.
	CheckAgentURL(rawURL string) error
}

// Defaults and limits of a run request.
const (
	defaultRunConcurrency = 4
	maxRunConcurrency     = 64
	defaultRunTimeout     = 30 * time.Second
	defaultRunRetries     = 2
	maxRunRetries         = 10
	// runGrace is what runs.Budget adds to the harness budget.
	runGrace = 15 * time.Second
)

func (s *Server) runRoutes(r chi.Router) {
	r.Post("/runs", s.handle(s.createRun))
	r.Get("/runs", s.handle(s.listRuns))
	r.Get("/runs/{id}", s.handle(s.getRun))
	r.Delete("/runs/{id}", s.handle(s.cancelRun))
}

// runs returns the configured service, or a 503 problem when the server
// runs without one.
func (s *Server) runs() (Runs, error) {
	if s.cfg.Runs == nil {
		return nil, newError(probUnavailable, "harness runs are not enabled on this server")
	}
	return s.cfg.Runs, nil
}

// runRequest is the body of POST /v1/runs.
type runRequest struct {
	// Suite is a suite document (schemas/suite.schema.json).
	Suite    json.RawMessage `json:"suite"`
	AgentURL string          `json:"agent_url"`
	Agent    string          `json:"agent"`
	// Concurrency is the most tasks in flight; default 4, at most 64.
	Concurrency *int `json:"concurrency"`
	// Timeout bounds each attempt at the agent: a Go duration string
	// ("30s") or a number of seconds; default 30 s.
	Timeout json.RawMessage `json:"timeout"`
	// Retries is how many times a transient failure is retried; default 2.
	Retries *int `json:"retries"`
}

// run checks the request and returns the run to create.
//
// Errors: 422 invalid-request naming every bad field, suite problems
// under /suite.
func (req *runRequest) run(maxTask time.Duration, checkURL func(string) error) (record.Run, error) {
	var probs []FieldProblem
	bad := func(ptr, format string, args ...any) {
		probs = append(probs, FieldProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	r := record.Run{AgentURL: req.AgentURL, Agent: req.Agent, Concurrency: defaultRunConcurrency,
		Timeout: defaultRunTimeout, Retries: defaultRunRetries}
	if isNull(req.Suite) {
		bad("/suite", "is required: a suite document {name, tasks} (schemas/suite.schema.json)")
	} else {
		s, err := harness.ParseSuite(req.Suite, ".json")
		var se *harness.SuiteError
		switch {
		case errors.As(err, &se):
			probs = append(probs, fieldErrors("/suite", se.Errors)...)
		case err != nil:
			bad("/suite", "%v", err)
		default:
			for _, t := range s.Tasks {
				if t.ContractRef != "" {
					bad("/suite"+t.Pointer()+"/contract_ref", "registry contracts are not supported in server-side runs; inline the contract")
				}
			}
		}
	}
	if fp, ok := nulProblem("/suite", req.Suite); ok {
		probs = append(probs, fp) // the suite is stored as jsonb, which cannot hold it
	}
	if u, err := url.Parse(req.AgentURL); req.AgentURL == "" {
		bad("/agent_url", "is required: the agent's http:// or https:// endpoint")
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || textProblem(req.AgentURL) != "" {
		bad("/agent_url", "must be an absolute http:// or https:// URL")
	} else if err := checkURL(req.AgentURL); err != nil {
		bad("/agent_url", "%v", err)
	}
	if len(req.Agent) > maxIDLength {
		bad("/agent", "must be at most %d bytes", maxIDLength)
	} else if p := textProblem(req.Agent); p != "" {
		bad("/agent", "%s", p)
	}

	if req.Concurrency != nil {
		if c := *req.Concurrency; c < 1 || c > maxRunConcurrency {
			bad("/concurrency", "must be from 1 to %d, got %d", maxRunConcurrency, c)
		} else {
			r.Concurrency = c
		}
	}
	if req.Retries != nil {
		if n := *req.Retries; n < 0 || n > maxRunRetries {
			bad("/retries", "must be from 0 to %d, got %d", maxRunRetries, n)
		} else {
			r.Retries = n
		}
	}
	timeoutOK := true
	if !isNull(req.Timeout) {
		d, err := parseRunTimeout(req.Timeout)
		if err != nil {
			bad("/timeout", "%v", err)
			timeoutOK = false
		} else {
			r.Timeout = d
		}
	}
	if timeoutOK {
		if b := harness.TaskBudget(harness.Options{Timeout: r.Timeout, Attempts: r.Retries + 1}) + runGrace; b > maxTask {
			bad("/timeout", "a task could take %s (timeout × (retries + 1), the backoff and %s for grading), more than this server's %s; lower timeout or retries",
				b, runGrace, maxTask)
		}
	}
	if len(probs) > 0 {
		return r, &apiError{kind: probInvalidRequest, detail: "the run request has invalid fields", errors: probs}
	}
	r.Suite = req.Suite
	return r, nil
}

// parseRunTimeout reads a timeout: a Go duration string or a number of
// seconds, above 0 and at most 10 min.
func parseRunTimeout(raw json.RawMessage) (time.Duration, error) {
	var d time.Duration
	var str string
	var secs float64
	switch {
	case json.Unmarshal(raw, &str) == nil:
		var err error
		if d, err = time.ParseDuration(str); err != nil {
			return 0, fmt.Errorf("must be a duration such as \"30s\", got %q", str)
		}
	case json.Unmarshal(raw, &secs) == nil:
		if secs > 600 {
			secs = 601
		}
		d = time.Duration(secs * float64(time.Second))
	default:
		return 0, errors.New("must be a duration string such as \"30s\" or a number of seconds")
	}
	if d <= 0 || d > 10*time.Minute {
		return 0, fmt.Errorf("must be above 0 and at most 10m, got %s", d)
	}
	return d, nil
}

// runView is the JSON form of a run.
type runView struct {
	ID          string  `json:"id"`
	State       string  `json:"state"`
	Suite       string  `json:"suite"`
	AgentURL    string  `json:"agent_url"`
	Agent       string  `json:"agent,omitempty"`
	Concurrency int     `json:"concurrency"`
	Timeout     float64 `json:"timeout_seconds"`
	Retries     int     `json:"retries"`
	Total       int     `json:"total"`
	Done        int     `json:"done"`
	Passed      int     `json:"passed"`
	Failed      int     `json:"failed"`
	Errors      int     `json:"errors"`
	// Progress is done / total in [0,1] (1 for an empty run).
	Progress float64 `json:"progress"`
	// MeanScore is the mean score of the graded tasks so far.
	MeanScore float64 `json:"mean_score"`
	// Summary aggregates the finished tasks (GET /v1/runs/{id} only).
	Summary *harness.Summary `json:"summary,omitempty"`
	// Tasks are the finished tasks in suite order (GET /v1/runs/{id} only).
	Tasks      []runTaskView `json:"tasks,omitempty"`
	Error      string        `json:"error,omitempty"`
	CreatedAt  time.Time     `json:"created_at"`
	StartedAt  *time.Time    `json:"started_at,omitempty"`
	FinishedAt *time.Time    `json:"finished_at,omitempty"`
}

// runTaskView is one finished task of a run.
type runTaskView struct {
	ID              string  `json:"id"`
	Outcome         string  `json:"outcome"`
	Reason          string  `json:"reason,omitempty"`
	EvaluationID    string  `json:"evaluation_id,omitempty"`
	Score           float64 `json:"score"`
	Grade           string  `json:"grade,omitempty"`
	TopIssue        string  `json:"top_issue,omitempty"`
	Attempts        int     `json:"attempts"`
	DurationSeconds float64 `json:"duration_seconds"`
	Format          string  `json:"format,omitempty"`
}

// redactURL hides the password of a URL's user info and the values of
// its query (which may hold tokens).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func viewRun(r record.Run) runView {
	v := runView{
		ID: r.ID.String(), State: string(r.State), Suite: r.SuiteName, AgentURL: redactURL(r.AgentURL), Agent: r.Agent,
		Concurrency: r.Concurrency, Timeout: r.Timeout.Seconds(), Retries: r.Retries,
		Total: r.Total, Done: r.Done, Passed: r.Passed, Failed: r.Failed, Errors: r.Errors, Error: r.Error,
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
	}
	v.Progress = 1
	if r.Total > 0 {
		v.Progress = float64(r.Done) / float64(r.Total)
	}
	if graded := r.Passed + r.Failed; graded > 0 {
		v.MeanScore = r.ScoreSum / float64(graded)
	}
	return v
}

// summarize rebuilds the harness's summary from stored tasks: each
// graded task's result carries its score, grade and top issue (as an
// issue without a tool, so TaskResult.TopIssue returns it as stored).
func summarize(tasks []record.RunTask) harness.Summary {
	trs := make([]harness.TaskResult, len(tasks))
	for i, t := range tasks {
		tr := harness.TaskResult{ID: t.TaskID, Outcome: harness.Outcome(t.Outcome), Reason: t.Reason, Duration: t.Duration}
		if t.Outcome != string(harness.OutcomeError) {
			tr.Result = &engine.EvaluationResult{Score: t.Score, Grade: engine.Grade(t.Grade), Passed: t.Outcome == string(harness.OutcomePass)}
			if t.TopIssue != "" {
				tr.Result.Issues = []engine.Issue{{Problem: t.TopIssue}}
			}
		}
		trs[i] = tr
	}
	return harness.Summarize(trs)
}

// createRun starts a run: 202 with its state and Location.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.runs()
	if err != nil {
		return err
	}
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBatchBytes)
	if err != nil {
		return err
	}
	var req runRequest
	if err := decodeStrict(body, &req, ""); err != nil {
		return err
	}
	run, err := req.run(svc.MaxTaskTime(), svc.CheckAgentURL)
	if err != nil {
		return err
	}
	if err := s.refuseRunSecrets(r.Context(), &run); err != nil {
		return err
	}
	run, err = svc.Create(r.Context(), ProjectFrom(r.Context()), run)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/runs/"+run.ID.String())
	writeJSON(w, mediaJSON, http.StatusAccepted, viewRun(run))
	return nil
}

// getRun serves GET /v1/runs/{id}: the run's progress, the summary of its
// finished tasks and those tasks in suite order.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.runs()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	run, tasks, err := svc.Get(r.Context(), ProjectFrom(r.Context()), id)
	if err != nil {
		return notFoundID("run", id, err)
	}
	v := viewRun(run)
	sum := summarize(tasks)
	v.Summary = &sum
	v.Tasks = make([]runTaskView, len(tasks))
	for i, t := range tasks {
		tv := runTaskView{ID: t.TaskID, Outcome: t.Outcome, Reason: t.Reason, Score: t.Score, Grade: t.Grade,
			Attempts: t.Attempts, DurationSeconds: t.Duration.Seconds(), Format: t.Format}
		if t.Outcome != string(harness.OutcomeError) {
			tv.TopIssue = t.TopIssue
		}
		if t.ResultID != uuid.Nil {
			tv.EvaluationID = t.ResultID.String()
		}
		v.Tasks[i] = tv
	}
	writeJSON(w, mediaJSON, http.StatusOK, v)
	return nil
}

// listRuns serves GET /v1/runs: runs newest first, keyset-paginated.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.runs()
	if err != nil {
		return err
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after *record.Cursor
	if r.URL.Query().Get("cursor") != "" {
		var c resultCursor
		if err := decodeCursor(r, &c); err != nil {
			return err
		}
		after = &record.Cursor{CreatedAt: c.T, ID: c.ID}
	}
	rs, err := svc.List(r.Context(), ProjectFrom(r.Context()), after, limit+1)
	if err != nil {
		return err
	}
	out := page[runView]{Items: []runView{}}
	for i, run := range rs {
		if i == limit {
			last := rs[i-1]
			out.NextCursor = encodeCursor(resultCursor{T: last.CreatedAt, ID: last.ID})
			break
		}
		out.Items = append(out.Items, viewRun(run))
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// cancelRun serves DELETE /v1/runs/{id}: the run stops (tasks already
// stored stay) and is answered in its state after the call.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.runs()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	run, err := svc.Cancel(r.Context(), ProjectFrom(r.Context()), id)
	if err != nil {
		return notFoundID("run", id, err)
	}
	writeJSON(w, mediaJSON, http.StatusOK, viewRun(run))
	return nil
}

// refuseRunSecrets keeps detected secrets out of a run's stored row,
// which the run's jobs read back: r.Agent is redacted (like an
// evaluation's agent); an agent URL, suite name, task id or label that
// holds a secret is refused, since the run needs it as written (the URL
// is called, task ids key the run's tasks). The URL is scanned whole and
// as each query parameter's "name=value", so that a parameter named like
// a credential is seen. Problems name the pointer and the rule, never
// the secret.
//
// Errors: 422 invalid-request naming each place; the scan's error.
func (s *Server) refuseRunSecrets(ctx context.Context, r *record.Run) error {
	sc := s.cfg.SecretScanner
	if sc == nil {
		return nil
	}
	if err := redactTexts(ctx, sc, []*string{&r.Agent}, nil); err != nil {
		return err
	}
	suite, err := harness.ParseSuite(r.Suite, ".json")
	if err != nil {
		return err // checked by runRequest.run
	}
	var texts, ptrs []string
	add := func(ptr, text string) { texts, ptrs = append(texts, text), append(ptrs, ptr) }
	add("/agent_url", r.AgentURL)
	if u, err := url.Parse(r.AgentURL); err == nil {
		for k, vs := range u.Query() {
			for _, v := range vs {
				add("/agent_url", k+"="+v)
			}
		}
	}
	add("/suite/name", suite.Name)
	for _, t := range suite.Tasks {
		add("/suite"+t.Pointer()+"/id", t.ID)
		for k, v := range t.Labels {
			lp := "/suite" + t.Pointer() + "/labels" // a key may be the secret
			add(lp, k)
			add(lp, v)
			add(lp, k+"="+v)
		}
	}
	found, err := sc.ScanSecrets(ctx, texts)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var probs []FieldProblem
	for _, f := range found {
		if f.Text < 0 || f.Text >= len(texts) || seen[ptrs[f.Text]] {
			continue
		}
		seen[ptrs[f.Text]] = true
		probs = append(probs, FieldProblem{Pointer: ptrs[f.Text],
			Message: fmt.Sprintf("holds a secret (%s), which the stored run would keep; leave it out", f.Rule)})
	}
	if len(probs) == 0 {
		return nil
	}
	slices.SortFunc(probs, func(a, b FieldProblem) int { return strings.Compare(a.Pointer, b.Pointer) })
	return &apiError{kind: probInvalidRequest, detail: "the run request holds secrets", errors: probs}
}
