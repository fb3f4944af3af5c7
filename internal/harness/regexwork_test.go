package harness

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// TestRunTaskRegexWork: grading locally with Options.MaxRegexWork, a task
// whose trace's arguments against the contract's $regex patterns could
// take more regexp work is an error saying the work and the bound, not
// graded; one at the bound is graded; 0 means no bound.
func TestRunTaskRegexWork(t *testing.T) {
	task := mustSuite(t, "x").Tasks[0]
	c, err := engine.ParseContract([]byte(`{"required":[{"tool":"lookup","args":{"id":{"$regex":"^x+$"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	task.Contract = c
	// The work of one call is its argument bytes times the pattern's
	// instructions: measure it rather than restate the regexp compiler.
	args, err := jsondoc.ParseString(`{"id":"xxxx"}`)
	if err != nil {
		t.Fatal(err)
	}
	one := c.RegexSizes().RegexWork(&engine.Trace{Calls: []engine.ToolCall{{Tool: "lookup", Args: args}}})
	if one <= 0 {
		t.Fatalf("RegexWork of one call = %d, want > 0", one)
	}
	trace := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`{"tool":"lookup","args":{"id":"xxxx"}},`, n), ",") + "]")
	}
	for _, tc := range []struct {
		name    string
		calls   int
		max     int64
		outcome Outcome
		reason  string
	}{
		{"at the bound", 2, 2 * one, OutcomeFail, ""},
		{"over", 3, 2 * one, OutcomeError, "grading: matching the contract's $regex patterns against the trace's arguments could take " + strconv.FormatInt(3*one, 10) + " steps (argument bytes times pattern instructions), over the limit of " + strconv.FormatInt(2*one, 10)},
		{"no bound", 3, 0, OutcomeFail, ""},
	} {
		runner := RunnerFunc(func(context.Context, *Request) ([]byte, error) { return trace(tc.calls), nil })
		tr := RunTask(context.Background(), task, runner, Options{MaxRegexWork: tc.max})
		if tr.Outcome != tc.outcome || tr.Reason != tc.reason || (tr.Result != nil) != (tc.reason == "") {
			t.Errorf("%s: outcome %s, reason %q, graded %t; want %s, %q, %t", tc.name, tr.Outcome, tr.Reason, tr.Result != nil, tc.outcome, tc.reason, tc.reason == "")
		}
	}
}
