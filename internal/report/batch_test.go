package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

func TestBatch(t *testing.T) {
	b := NewBatch("gold.json", "gold file, 2 expected calls")
	scores := []float64{0.9, 0.2, 0.95, 0.2, 0.5, 1, 0.1, 0.3, 0.05}
	for i, s := range scores {
		if i == 4 {
			b.AddError(i, "t.jsonl:5", "column 3: bad")
			continue
		}
		res := &engine.EvaluationResult{Score: s, Grade: engine.GradeFor(s), Passed: s >= 0.9, MinScore: 0.9}
		if i == 1 {
			res.Issues = []engine.Issue{{Tool: "book", Problem: "not called"}}
		}
		b.Add(i, "t", res)
	}
	want := []TraceLine{
		{Seq: 8, Source: "t", Score: 0.05, Grade: engine.GradeF, Issue: "score 0.050 below min_score 0.900"},
		{Seq: 6, Source: "t", Score: 0.1, Grade: engine.GradeF, Issue: "score 0.100 below min_score 0.900"},
		{Seq: 1, Source: "t", Score: 0.2, Grade: engine.GradeF, Issue: "book: not called"},
		{Seq: 3, Source: "t", Score: 0.2, Grade: engine.GradeF, Issue: "score 0.200 below min_score 0.900"},
		{Seq: 7, Source: "t", Score: 0.3, Grade: engine.GradeF, Issue: "score 0.300 below min_score 0.900"},
	}
	if diff := cmp.Diff(want, b.Worst); diff != "" {
		t.Errorf("Worst (-want +got):\n%s", diff)
	}
	if got, want := b.SummaryLine(), "3/9 passed (33.3%), 5 failed, 1 error; mean score 46.2%; grades A 3, F 5"; got != want {
		t.Errorf("SummaryLine %q, want %q", got, want)
	}
	if want := [10]int{1, 1, 2, 1, 0, 0, 0, 0, 0, 3}; b.Histogram != want {
		t.Errorf("Histogram %v, want %v", b.Histogram, want)
	}
}
