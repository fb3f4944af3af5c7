package harness

import (
	"context"
	"strings"
	"testing"
)

// TestRunTaskScoringCells: grading locally with Options.MaxScoringCells,
// a task whose contract and trace need more scoring cells is an error
// saying the counts and the bound, not graded; one at the bound is
// graded; 0 means no bound.
func TestRunTaskScoringCells(t *testing.T) {
	task := mustSuite(t, "x").Tasks[0]
	trace := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`{"tool":"lookup","args":{"id":"x"}},`, n), ",") + "]")
	}
	for _, tc := range []struct {
		name    string
		calls   int
		max     int64
		outcome Outcome
		reason  string
	}{
		{"at the bound", 2, 2, OutcomeFail, ""},
		{"over", 3, 2, OutcomeError, "grading: the contract's 1 expected calls (required and every alternative's) against the trace's 3 calls need 3 scoring cells, over the limit of 2"},
		{"no bound", 3, 0, OutcomeFail, ""},
	} {
		runner := RunnerFunc(func(context.Context, *Request) ([]byte, error) { return trace(tc.calls), nil })
		tr := RunTask(context.Background(), task, runner, Options{MaxScoringCells: tc.max})
		if tr.Outcome != tc.outcome || tr.Reason != tc.reason || (tr.Result != nil) != (tc.reason == "") {
			t.Errorf("%s: outcome %s, reason %q, graded %t; want %s, %q, %t", tc.name, tr.Outcome, tr.Reason, tr.Result != nil, tc.outcome, tc.reason, tc.reason == "")
		}
	}
}
