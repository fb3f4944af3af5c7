package record

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// RunState is the state of a harness run (issue 7).
type RunState string

// The states of a run: running until every task finished (completed),
// or until it is cancelled or fails.
const (
	RunRunning   RunState = "running"
	RunCompleted RunState = "completed"
	RunCancelled RunState = "cancelled"
	RunFailed    RunState = "failed"
)

// Final reports whether the run can no longer change.
func (s RunState) Final() bool { return s != RunRunning }

// Run is one server-side harness run: a suite run against an agent URL
// as river jobs, one per task (internal/runs).
type Run struct {
	// ID is a UUIDv7; its text form is the run_id of the run's results.
	ID        uuid.UUID
	ProjectID int64
	State     RunState
	// SuiteName is the suite's name; Suite the suite document as JSON.
	SuiteName string
	Suite     json.RawMessage
	// AgentURL is the agent's HTTP endpoint (it may carry credentials).
	AgentURL string
	// Agent names the agent in stored results; "" for none.
	Agent string
	// Concurrency is the most tasks in flight at once (>= 1).
	Concurrency int
	// Timeout bounds each attempt at the agent.
	Timeout time.Duration
	// Retries is how many times a transient failure is retried (>= 0).
	Retries int
	// Total is the number of tasks; Done those finished, of which Passed,
	// Failed and Errors by outcome.
	Total, Done, Passed, Failed, Errors int
	// ScoreSum is the sum of the scores of the graded tasks.
	ScoreSum float64
	// Error says why a failed run failed; "" otherwise.
	Error      string
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// RunTask is one finished task of a run.
type RunTask struct {
	// TaskID and Index identify the task in its suite.
	TaskID string
	Index  int
	// Outcome is "pass", "fail" or "error".
	Outcome string
	// Reason says why the outcome is error; "" otherwise.
	Reason string
	// ResultID is the stored result; uuid.Nil for an error.
	ResultID uuid.UUID
	// Score and Grade are the result's (0 and "" for an error).
	Score float64
	Grade string
	// TopIssue is the one-line reason the task did not pass ("" when it
	// passed cleanly).
	TopIssue string
	// Attempts is how many times the agent was asked.
	Attempts int
	// Duration is the task's wall-clock time (microseconds are kept).
	Duration time.Duration
	// Format is the trace format of the answer; "" for an error.
	Format string
}

// RunTaskWrite is a finished task to store: its outcome and, when it was
// graded, its result (nil for an error).
type RunTaskWrite struct {
	ProjectID int64
	RunID     uuid.UUID
	Task      RunTask
	Result    *Result
}
