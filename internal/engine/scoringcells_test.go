package engine

import "testing"

// TestScoringCells: the count is every expected call of the required
// steps and of every option of the groups (optional calls and forbidden
// rules left out) times the trace's calls, and it is the size of the
// scorer's table of (expected call, trace call) figures.
func TestScoringCells(t *testing.T) {
	tests := []struct {
		name     string
		contract string
		calls    int
		want     int64
	}{
		{"plain calls", `{"contract_version": 2, "required": [{"tool": "a"}, {"tool": "b"}, {"tool": "a"}]}`, 5, 15},
		{"groups, optional and forbidden", `{"contract_version": 2,
			"required": [{"tool": "a"}, {"alternatives": [[{"tool": "b"}, {"tool": "c"}], [{"tool": "d"}]]}, {"alternatives": [[{"tool": "e"}], [{"tool": "f"}, {"tool": "g"}, {"tool": "h"}]]}],
			"optional": [{"tool": "o"}], "forbidden": [{"tool": "x"}]}`, 7, (1 + 3 + 4) * 7},
		{"no trace calls", `{"contract_version": 2, "required": [{"tool": "a"}]}`, 0, 0},
		{"optional only", `{"contract_version": 2, "optional": [{"tool": "a"}]}`, 9, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseContract([]byte(tc.contract))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.ScoringCells(tc.calls); got != tc.want {
				t.Errorf("ScoringCells(%d) = %d, want %d", tc.calls, got, tc.want)
			}
			calls := make([]ToolCall, tc.calls)
			for i := range calls {
				calls[i].Tool = "a"
			}
			tr := Trace{Calls: calls}
			sc := newScorer(c, &tr, CompareOptions{}, Weights{})
			defer sc.release()
			if got := int64(len(sc.memo)); got != tc.want {
				t.Errorf("the scorer's table has %d cells, want %d", got, tc.want)
			}
		})
	}
}
