package harness

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
)

// Outcome is a task's verdict in a run.
type Outcome string

// The outcomes of a task.
const (
	// OutcomePass: the agent answered and the result passed (EvaluationResult.Passed).
	OutcomePass Outcome = "pass"
	// OutcomeFail: the agent answered and the result did not pass.
	OutcomeFail Outcome = "fail"
	// OutcomeError: the agent could not be asked or its answer could not be
	// graded; TaskResult.Reason says why.
	OutcomeError Outcome = "error"
)

// SlowestCount is the number of tasks listed in Summary.Slowest.
const SlowestCount = 3

// Report is the outcome of a run: every task in suite order and the
// summary.
type Report struct {
	// Suite is the suite's name.
	Suite string `json:"suite"`
	// RunID names the run (the run_id of results stored in a service).
	RunID string `json:"run_id"`
	// StartedAt is when the run started, in UTC.
	StartedAt time.Time `json:"started_at"`
	// Duration is the run's wall-clock time.
	Duration time.Duration `json:"-"`
	// Tasks are the task results in suite order.
	Tasks []TaskResult `json:"tasks"`
	// Summary aggregates Tasks.
	Summary Summary `json:"summary"`
}

// ReportFormatVersion is the version of the report's JSON shape, written
// as its format_version member first. A report without one is version 1
// (reports written before the member existed have the same shape).
const ReportFormatVersion = 1

// MarshalJSON adds format_version (first) and duration_seconds.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		FormatVersion int `json:"format_version"`
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{ReportFormatVersion, plain(r), r.Duration.Seconds()})
}

// TaskResult is one task's outcome.
type TaskResult struct {
	// ID is the task's id.
	ID string `json:"id"`
	// Outcome is pass, fail or error.
	Outcome Outcome `json:"outcome"`
	// Reason says why the outcome is error; "" otherwise.
	Reason string `json:"reason,omitempty"`
	// Attempts is how many times the agent was asked (0 when the run was
	// cancelled before the task started).
	Attempts int `json:"attempts"`
	// Duration is the task's wall-clock time: asking (with retries and
	// backoff), reading and grading.
	Duration time.Duration `json:"-"`
	// Format is the trace format the answer was read as; "" on error.
	Format string `json:"format,omitempty"`
	// FormatWarning is the trace format's warning when it read the answer
	// with a caveat (format.Parsed.Warning, the CLI's "warning:" line);
	// "" when there was none and on error.
	FormatWarning string `json:"format_warning,omitempty"`
	// Labels are the task's labels from the suite.
	Labels map[string]string `json:"labels,omitempty"`
	// EvaluationID is the stored result's id when a Service graded the
	// task; "" otherwise.
	EvaluationID string `json:"evaluation_id,omitempty"`
	// Result is the graded result; nil when Outcome is error.
	Result *engine.EvaluationResult `json:"result,omitempty"`
}

// MarshalJSON adds duration_seconds.
func (t TaskResult) MarshalJSON() ([]byte, error) {
	type plain TaskResult
	return json.Marshal(struct {
		plain
		DurationSeconds float64 `json:"duration_seconds"`
	}{plain(t), t.Duration.Seconds()})
}

// TopIssue returns the one-line reason a task did not pass: the reason of
// an error, else the result's first (most important) issue as "tool:
// problem", else the failed score ("score 0.850 below min_score 0.900").
// It is "" for a passing task with no issue.
func (t *TaskResult) TopIssue() string {
	switch {
	case t.Outcome == OutcomeError:
		return t.Reason
	case t.Result == nil:
		return ""
	case len(t.Result.Issues) > 0:
		is := t.Result.Issues[0]
		if is.Tool == "" {
			return is.Problem
		}
		return is.Tool + ": " + is.Problem
	case !t.Result.Passed:
		return fmt.Sprintf("score %.3f below min_score %.3f", t.Result.Score, t.Result.MinScore)
	}
	return ""
}

// Summary aggregates a run's task results.
type Summary struct {
	// Tasks is the number of tasks.
	Tasks int `json:"tasks"`
	// Passed, Failed and Errors count the tasks of each outcome.
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	Errors int `json:"errors"`
	// PassRate is Passed / Tasks in [0,1] (errors count as not passed); 0
	// when there are no tasks.
	PassRate float64 `json:"pass_rate"`
	// MeanScore is the mean score of the graded tasks (pass and fail) in
	// [0,1]; 0 when none was graded.
	MeanScore float64 `json:"mean_score"`
	// Grades counts the graded tasks by grade; grades with no task are
	// absent.
	Grades map[engine.Grade]int `json:"grades"`
	// Failing lists the tasks that failed or errored, in suite order.
	Failing []FailingTask `json:"failing"`
	// Slowest lists the SlowestCount slowest tasks, slowest first (ties in
	// suite order).
	Slowest []SlowTask `json:"slowest"`
}

// FailingTask is a task that did not pass, with its top issue (see
// TaskResult.TopIssue).
type FailingTask struct {
	ID      string  `json:"id"`
	Outcome Outcome `json:"outcome"`
	Issue   string  `json:"issue"`
}

// SlowTask is a task and its wall-clock time.
type SlowTask struct {
	ID       string        `json:"id"`
	Duration time.Duration `json:"-"`
}

// MarshalJSON writes the duration as duration_seconds.
func (s SlowTask) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID              string  `json:"id"`
		DurationSeconds float64 `json:"duration_seconds"`
	}{s.ID, s.Duration.Seconds()})
}

// Summarize aggregates task results (in suite order).
func Summarize(tasks []TaskResult) Summary {
	s := Summary{Tasks: len(tasks), Grades: map[engine.Grade]int{}, Failing: []FailingTask{}, Slowest: []SlowTask{}}
	var sum float64
	graded := 0
	for i := range tasks {
		t := &tasks[i]
		switch t.Outcome {
		case OutcomePass:
			s.Passed++
		case OutcomeFail:
			s.Failed++
		default:
			s.Errors++
		}
		if t.Outcome != OutcomePass {
			s.Failing = append(s.Failing, FailingTask{ID: t.ID, Outcome: t.Outcome, Issue: t.TopIssue()})
		}
		if t.Result != nil {
			graded++
			sum += t.Result.Score
			s.Grades[t.Result.Grade]++
		}
	}
	if s.Tasks > 0 {
		s.PassRate = float64(s.Passed) / float64(s.Tasks)
	}
	if graded > 0 {
		s.MeanScore = sum / float64(graded)
	}
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(tasks[b].Duration, tasks[a].Duration)
	})
	for _, i := range order[:min(SlowestCount, len(order))] {
		s.Slowest = append(s.Slowest, SlowTask{ID: tasks[i].ID, Duration: tasks[i].Duration})
	}
	return s
}

// AllPassed reports whether every task passed (true for an empty run).
func (r *Report) AllPassed() bool { return r.Summary.Passed == r.Summary.Tasks }
