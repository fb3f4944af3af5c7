package ui

import (
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolscore/toolscore/internal/record"
)

// runsPage is the number of runs per page of the list.
const runsPage = 50

type runsView struct {
	Rows  []runRow
	First string
	Next  string
}

// runRow is a run with its derived figures.
type runRow struct {
	record.Run
	Progress  float64
	MeanScore float64
	// PassRate is passed over finished tasks (errors count as not
	// passed).
	PassRate float64
}

func newRunRow(r record.Run) runRow {
	row := runRow{Run: r, Progress: 1}
	if r.Total > 0 {
		row.Progress = float64(r.Done) / float64(r.Total)
	}
	if graded := r.Passed + r.Failed; graded > 0 {
		row.MeanScore = r.ScoreSum / float64(graded)
	}
	if r.Done > 0 {
		row.PassRate = float64(r.Passed) / float64(r.Done)
	}
	row.AgentURL = redactURL(r.AgentURL)
	return row
}

// redactURL hides a URL's password and query values (which may hold
// tokens), as the API shows it.
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

// runService returns nil when harness runs are served, else the page
// saying they are off.
func (c *Console) runService() error {
	if c.cfg.Runs == nil {
		return &pageError{status: http.StatusServiceUnavailable, title: "Harness runs are off",
			detail: "This server runs without server-side harness runs."}
	}
	return nil
}

func (c *Console) runs(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"cursor"}, nil); err != nil {
		return err
	}
	if err := c.runService(); err != nil {
		return err
	}
	after, err := decodeCursor(r.URL.Query())
	if err != nil {
		return err
	}
	rs, err := c.cfg.Runs.List(r.Context(), project(r), after, runsPage+1)
	if err != nil {
		return err
	}
	v := runsView{}
	for i, run := range rs {
		if i == runsPage {
			v.Next = withQuery("/ui/runs", url.Values{"cursor": {encodeCursor(record.Cursor{CreatedAt: rs[i-1].CreatedAt, ID: rs[i-1].ID})}})
			break
		}
		v.Rows = append(v.Rows, newRunRow(run))
	}
	if after != nil {
		v.First = "/ui/runs"
	}
	return c.render(w, r, "runs.tmpl", "runs", "harness runs", v)
}

// runView is what run.tmpl shows.
type runView struct {
	runRow
	Final bool
	Tasks []taskRow
	// Grades counts the graded tasks per grade.
	Grades []gradeBar
	// Slowest are the slowest finished tasks.
	Slowest    []taskRow
	ResultsURL string
}

type taskRow struct {
	record.RunTask
	Duration string
}

// slowestShown is how many of the slowest tasks a run's page lists.
const slowestShown = 5

func (c *Console) run(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, nil, nil); err != nil {
		return err
	}
	if err := c.runService(); err != nil {
		return err
	}
	id, err := pathUUID("run", chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	run, tasks, err := c.cfg.Runs.Get(r.Context(), project(r), id)
	if err != nil {
		return notFoundAs("run", id, err)
	}
	v := runView{runRow: newRunRow(run), Final: run.State.Final(),
		ResultsURL: withQuery("/ui/evaluations", url.Values{"run_id": {run.ID.String()}})}
	var grades [5]int64
	for _, t := range tasks {
		tr := taskRow{RunTask: t, Duration: duration(t.Duration)}
		v.Tasks = append(v.Tasks, tr)
		if i := gradeIndex(t.Grade); i >= 0 && t.Outcome != "error" {
			grades[i]++
		}
	}
	v.Grades = newGradeBars(grades)
	v.Slowest = slowest(v.Tasks, slowestShown)
	return c.render(w, r, "run.tmpl", "runs", "run "+run.SuiteName, v)
}

// slowest returns the n slowest tasks, slowest first (ties in suite
// order).
func slowest(tasks []taskRow, n int) []taskRow {
	out := make([]taskRow, 0, n)
	used := make([]bool, len(tasks))
	for range n {
		best := -1
		var bestD time.Duration
		for i, t := range tasks {
			if !used[i] && (best < 0 || t.RunTask.Duration > bestD) {
				best, bestD = i, t.RunTask.Duration
			}
		}
		if best < 0 {
			break
		}
		used[best] = true
		out = append(out, tasks[best])
	}
	return out
}

func gradeIndex(g string) int {
	switch g {
	case "A":
		return 0
	case "B":
		return 1
	case "C":
		return 2
	case "D":
		return 3
	case "F":
		return 4
	}
	return -1
}

func (c *Console) runProgress(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, nil, nil); err != nil {
		return err
	}
	if err := c.runService(); err != nil {
		return err
	}
	id, err := pathUUID("run", chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	run, _, err := c.cfg.Runs.Get(r.Context(), project(r), id)
	if err != nil {
		return notFoundAs("run", id, err)
	}
	row := newRunRow(run)
	return writeJSON(w, progressView{State: string(run.State), Final: run.State.Final(), Progress: row.Progress,
		Total: int64(run.Total), Done: int64(run.Done), Failed: int64(run.Failed), Passed: int64(run.Passed), Errors: int64(run.Errors)})
}
