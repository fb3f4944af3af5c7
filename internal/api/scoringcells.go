package api

import (
	"fmt"
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
)

// MaxScoringCells bounds the scoring cells of one evaluation: the
// expected calls of its contract's required steps and alternatives
// (every option's) times its trace's calls
// (engine.Contract.ScoringCells), at most engine.MaxScoringCells (the
// engine keeps four bytes for each, so 64 MB; see there why).
const MaxScoringCells = engine.MaxScoringCells

// checkScoringCells refuses an evaluation whose contract and trace need
// more than MaxScoringCells scoring cells (422 at the contract: at /gold
// for an inline gold list), before any scoring.
func checkScoringCells(pc *parsedContract, in *evalInput, t *engine.Trace) error {
	cells := pc.c.ScoringCells(len(t.Calls))
	if cells <= MaxScoringCells {
		return nil
	}
	ptr, what := "/contract", "contract"
	if in.registry == nil && in.registryCV == nil && in.inlinePtr != "" {
		ptr = in.inlinePtr
	}
	if ptr == "/gold" {
		what = "gold list"
	}
	msg := fmt.Sprintf("the %s's %s expected calls (required and every alternative's) against the trace's %s calls need %s scoring cells, over the limit of %s (api.MaxScoringCells): split the trace or the contract",
		what, groupDigits(int64(pc.c.ExpectedCallCount())), groupDigits(int64(len(t.Calls))), groupDigits(cells), groupDigits(MaxScoringCells))
	return &apiError{kind: probInvalidRequest, detail: "the contract and the trace are too large to grade together",
		errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
}

// groupDigits writes n >= 0 in decimal with commas between groups of
// three digits (16,000,000).
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
