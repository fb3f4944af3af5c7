package runs

import (
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// TestOptionsBoundScoringCells: a server-side run grades its tasks (the
// client's contracts, the agent's traces) within the service's bound on
// scoring cells.
func TestOptionsBoundScoringCells(t *testing.T) {
	if got := options(&record.Run{}, nil).MaxScoringCells; got != engine.MaxScoringCells {
		t.Errorf("MaxScoringCells = %d, want engine.MaxScoringCells (%d)", got, engine.MaxScoringCells)
	}
}
