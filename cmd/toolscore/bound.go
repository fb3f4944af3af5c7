package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolscore/toolscore/internal/engine"
)

// gradeBounds are the bounds on grading one trace (--timeout,
// --max-scoring-cells), each 0 for none.
type gradeBounds struct {
	// timeout bounds the time engine.Evaluate takes on one trace.
	timeout time.Duration
	// timeoutFlag is the flag that set timeout, as messages name it.
	timeoutFlag string
	// maxCells bounds the trace's scoring cells
	// (engine.Contract.ScoringCells), checked before any scoring.
	maxCells int64
}

// boundFlags are the flags that make gradeBounds, the same on every
// command that grades (eval, regrade, harness).
type boundFlags struct {
	// timeoutName is the name of the timeout flag without its dashes:
	// "timeout", or "grade-timeout" where --timeout means something else.
	timeoutName string
	timeout     time.Duration // 0: no limit
	maxCells    int64         // 0: no limit
}

// add registers the flags on cmd, with their defaults (no time limit, the
// service's engine.MaxScoringCells), the timeout as --NAME; prefix starts
// their usage texts ("" or "offline: ").
func (f *boundFlags) add(cmd *cobra.Command, name, prefix string) {
	f.timeoutName = name
	fl := cmd.Flags()
	fl.DurationVar(&f.timeout, name, 0, prefix+"stop grading a trace after `DURATION` (30s, 2m; 0 for no limit)")
	fl.Int64Var(&f.maxCells, "max-scoring-cells", engine.MaxScoringCells, prefix+"refuse a trace whose expected calls times its calls pass `N` (0 for no limit)")
}

// boundError is a trace that passed one of the gradeBounds; its text
// says which and how to lift it, without the trace's name.
type boundError struct{ msg string }

// Error returns the message.
func (e *boundError) Error() string { return e.msg }

// bounds validates the timeout and --max-scoring-cells. Errors name the
// flag.
func (f *boundFlags) bounds() (gradeBounds, error) {
	flag := "--" + f.timeoutName
	if f.timeout < 0 {
		return gradeBounds{}, failf("%s: must not be negative, got %s", flag, f.timeout)
	}
	if f.maxCells < 0 {
		return gradeBounds{}, failf("--max-scoring-cells: must not be negative, got %d", f.maxCells)
	}
	return gradeBounds{timeout: f.timeout, timeoutFlag: flag, maxCells: f.maxCells}, nil
}

// evaluate is engine.Evaluate within b (see grade).
func (b gradeBounds) evaluate(ctx context.Context, c *engine.Contract, t engine.Trace, opts engine.Options) (*engine.EvaluationResult, error) {
	return b.grade(ctx, c, len(t.Calls), func(ctx context.Context) (*engine.EvaluationResult, error) {
		return engine.Evaluate(ctx, c, t, opts)
	})
}

// grade runs eval, a grading of a trace of calls calls against c, within
// b: a *boundError when they need more than b.maxCells scoring cells
// (before eval runs), or when eval takes longer than b.timeout (the
// context eval gets, which engine.Evaluate polls, ends then). Neither
// text starts with what was being done ("grading"): eval writes it after
// the trace's name, harness after its own "grading: ". eval's own
// errors, ctx's end included, are returned as they are.
func (b gradeBounds) grade(ctx context.Context, c *engine.Contract, calls int, eval func(context.Context) (*engine.EvaluationResult, error)) (*engine.EvaluationResult, error) {
	if cells := c.ScoringCells(calls); b.maxCells > 0 && cells > b.maxCells {
		what := "contract"
		if c.Gold {
			what = "gold file"
		}
		// Counts with commas between groups of three digits (16,000,000),
		// as the service's message writes them.
		return nil, &boundError{message.NewPrinter(language.English).Sprintf("the %s's %d expected calls (required and every alternative's) against the trace's %d calls need %d scoring cells, over the limit of %d: split the trace or the %s, or raise --max-scoring-cells (0 for no limit)",
			what, c.ExpectedCallCount(), calls, cells, b.maxCells, what)}
	}
	if b.timeout <= 0 {
		return eval(ctx)
	}
	tctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := eval(tctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, &boundError{fmt.Sprintf("took longer than %s %s: raise it (0 for no limit), or split the trace or the contract", b.timeoutFlag, b.timeout)}
	}
	return res, err
}
