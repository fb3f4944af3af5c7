package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/harness"
)

// TestSuite runs the example suite against the scripted agent, as the
// README does, and checks every task's outcome and why the two failing
// tasks fail.
func TestSuite(t *testing.T) {
	srv := httptest.NewServer(newHandler())
	defer srv.Close()
	s, err := harness.LoadSuite("../suite.json")
	if err != nil {
		t.Fatalf("LoadSuite: %v", err)
	}
	runner, err := harness.NewHTTPRunner(srv.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := harness.Run(context.Background(), s, runner, harness.Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	type row struct {
		ID, Outcome, Format, FirstIssueKind string
	}
	var got []row
	for _, tr := range rep.Tasks {
		r := row{ID: tr.ID, Outcome: string(tr.Outcome), Format: tr.Format}
		if tr.Outcome == harness.OutcomeError {
			t.Errorf("task %s: error %s", tr.ID, tr.Reason)
			continue
		}
		if tr.Outcome == harness.OutcomeFail && len(tr.Result.Issues) > 0 {
			r.FirstIssueKind = tr.Result.Issues[0].Kind
		}
		got = append(got, r)
	}
	want := []row{
		{"book-lisbon", "pass", "openai", ""},
		{"seat-porto", "pass", "anthropic", ""},
		{"change-date", "fail", "openai", "forbidden-call"},
		{"book-with-bag", "fail", "anthropic", "missing-call"},
		{"flight-status", "pass", "openai", ""},
		{"search-only", "pass", "anthropic", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if rep.Summary.Passed != 4 || rep.Summary.Failed != 2 || rep.Summary.Errors != 0 {
		t.Errorf("summary = %d passed, %d failed, %d errors; want 4, 2, 0", rep.Summary.Passed, rep.Summary.Failed, rep.Summary.Errors)
	}
}
