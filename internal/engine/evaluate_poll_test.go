package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pollCtx is a context that counts the looks at Err and has ended from
// look number endAt on (never when endAt is 0).
type pollCtx struct {
	context.Context
	looks, endAt int
}

func (c *pollCtx) Err() error {
	c.looks++
	if c.endAt > 0 && c.looks >= c.endAt {
		return context.Canceled
	}
	return nil
}

// pollWorkload is a contract of n expected calls against a trace of m
// calls (tools a, b and c in turn), whose edit distance takes n·m steps.
func pollWorkload(t *testing.T, n, m int) (*Contract, Trace) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"contract_version":2,"required":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"tool":%q}`, string(rune('a'+i%2)))
	}
	b.WriteString(`]}`)
	tr := Trace{Calls: make([]ToolCall, m)}
	for i := range tr.Calls {
		tr.Calls[i] = ToolCall{Tool: string(rune('a' + i%3))}
	}
	return mustContract(t, b.String()), tr
}

// TestEvaluatePollsLongScoring: a combination whose edit distance is long
// (300 expected calls against 2,000 scored ones: 600,000 steps) looks at
// the context every pollWork (262,144) steps, a row of 2,000 steps at a
// time, so every 132 rows: rows 132 and 264, then the end of the choice
// and of Evaluate (the chosen combination's figures are the ones
// computed): 4 looks. Without those looks the scoring runs to its end
// however long it takes (the service's evaluation timeout overran by
// seconds on a 1 MB request). A small evaluation looks twice, as it
// always did.
func TestEvaluatePollsLongScoring(t *testing.T) {
	for _, tc := range []struct {
		n, m, looks int
	}{{300, 2000, 4}, {3, 10, 2}, {300, 60, 2}} {
		c, tr := pollWorkload(t, tc.n, tc.m)
		ctx := &pollCtx{Context: context.Background()}
		if _, err := Evaluate(ctx, c, tr, Options{}); err != nil {
			t.Fatalf("n=%d m=%d: %v", tc.n, tc.m, err)
		}
		if ctx.looks != tc.looks {
			t.Errorf("n=%d m=%d: %d looks at the context, want %d", tc.n, tc.m, ctx.looks, tc.looks)
		}
	}
}

// TestEvaluateStopsAtTheLook: a context found ended at its first look
// (row 132 of the first combination's edit distance) ends the evaluation
// there: context.Canceled after that one look.
func TestEvaluateStopsAtTheLook(t *testing.T) {
	c, tr := pollWorkload(t, 300, 2000)
	ctx := &pollCtx{Context: context.Background(), endAt: 1}
	if _, err := Evaluate(ctx, c, tr, Options{}); !errors.Is(err, context.Canceled) || ctx.looks != 1 {
		t.Errorf("Evaluate = %v after %d looks, want context.Canceled after 1", err, ctx.looks)
	}
}
