package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolscore/toolscore/internal/engine"
)

// gradeBounds are eval's bounds on grading one trace (--timeout,
// --max-scoring-cells), each 0 for none.
type gradeBounds struct {
	// timeout bounds the time engine.Evaluate takes on one trace.
	timeout time.Duration
	// maxCells bounds the trace's scoring cells
	// (engine.Contract.ScoringCells), checked before any scoring.
	maxCells int64
}

// boundError is a trace that passed one of the gradeBounds; its text
// says which and how to lift it, without the trace's name.
type boundError struct{ msg string }

// Error returns the message.
func (e *boundError) Error() string { return e.msg }

// bounds validates --timeout and --max-scoring-cells. Errors name the
// flag.
func (f *evalFlags) bounds() (gradeBounds, error) {
	if f.timeout < 0 {
		return gradeBounds{}, failf("--timeout: must not be negative, got %s", f.timeout)
	}
	if f.maxCells < 0 {
		return gradeBounds{}, failf("--max-scoring-cells: must not be negative, got %d", f.maxCells)
	}
	return gradeBounds{timeout: f.timeout, maxCells: f.maxCells}, nil
}

// evaluate is engine.Evaluate within b: a *boundError when c and t need
// more than b.maxCells scoring cells (before scoring), or when grading
// takes longer than b.timeout (the context Evaluate polls ends then).
// Evaluate's own errors, ctx's end included, are returned as they are.
func (b gradeBounds) evaluate(ctx context.Context, c *engine.Contract, t engine.Trace, opts engine.Options) (*engine.EvaluationResult, error) {
	if cells := c.ScoringCells(len(t.Calls)); b.maxCells > 0 && cells > b.maxCells {
		what := "contract"
		if c.Gold {
			what = "gold file"
		}
		// Counts with commas between groups of three digits (16,000,000),
		// as the service's message writes them.
		return nil, &boundError{message.NewPrinter(language.English).Sprintf("the %s's %d expected calls (required and every alternative's) against the trace's %d calls need %d scoring cells, over the limit of %d: split the trace or the %s, or raise --max-scoring-cells (0 for no limit)",
			what, c.ExpectedCallCount(), len(t.Calls), cells, b.maxCells, what)}
	}
	if b.timeout <= 0 {
		return engine.Evaluate(ctx, c, t, opts)
	}
	tctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := engine.Evaluate(tctx, c, t, opts)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, &boundError{fmt.Sprintf("grading took longer than --timeout %s: raise it (0 for no limit), or split the trace or the contract", b.timeout)}
	}
	return res, err
}
