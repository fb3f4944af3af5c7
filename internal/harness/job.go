package harness

import (
	"context"
	"time"
)

// RunTask asks runner to perform one task and grades its answer with the
// task's contract, exactly as Run does for each task (retries with
// backoff on transient failures only, opts.Timeout per attempt, grading
// by opts.Service when set, else locally). It is the unit of work of a
// server-side run (internal/runs), which runs each task as its own
// durable job; opts.OnResult and opts.Concurrency are not used.
//
// A task with a ContractRef needs opts.Service: without it the task is
// OutcomeError. A failure is never an error: the result's Outcome is
// OutcomeError with the reason ("run cancelled" when ctx ended).
func RunTask(ctx context.Context, t *Task, runner Runner, opts Options) TaskResult {
	o := opts.withDefaults()
	if t.Contract == nil && o.Service == nil {
		return TaskResult{ID: t.ID, Outcome: OutcomeError, Labels: t.Labels,
			Reason: "contract " + t.ContractRef + " is in a registry: it needs a toolscore service"}
	}
	return runTask(ctx, t, runner, &o)
}

// TaskBudget is the longest RunTask may spend asking the agent with opts:
// every attempt running out of time, and the backoff waits between them.
// Grading comes on top.
func TaskBudget(opts Options) time.Duration {
	o := opts.withDefaults()
	total, wait := time.Duration(0), o.Backoff
	for i := range o.Attempts {
		total += o.Timeout
		if i < o.Attempts-1 {
			total += wait
			wait = min(2*wait, MaxBackoff)
		}
	}
	return total
}
