package runs

import (
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// TestOptionsBoundScoringCells: a server-side run grades its tasks (the
// client's contracts, the agent's traces) within the service's bound on
// scoring cells and $regex work.
func TestOptionsBoundScoringCells(t *testing.T) {
	o := options(&record.Run{}, nil)
	if o.MaxScoringCells != engine.MaxScoringCells {
		t.Errorf("MaxScoringCells = %d, want engine.MaxScoringCells (%d)", o.MaxScoringCells, engine.MaxScoringCells)
	}
	if o.MaxRegexWork != engine.MaxRegexWork {
		t.Errorf("MaxRegexWork = %d, want engine.MaxRegexWork (%d)", o.MaxRegexWork, engine.MaxRegexWork)
	}
}
