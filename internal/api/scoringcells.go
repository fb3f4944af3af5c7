package api

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
	// Counts with commas between groups of three digits (16,000,000).
	msg := message.NewPrinter(language.English).Sprintf("the %s's %d expected calls (required and every alternative's) against the trace's %d calls need %d scoring cells, over the limit of %d (api.MaxScoringCells): split the trace or the contract",
		what, pc.c.ExpectedCallCount(), len(t.Calls), cells, MaxScoringCells)
	return &apiError{kind: probInvalidRequest, detail: "the contract and the trace are too large to grade together",
		errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
}
