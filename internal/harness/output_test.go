package harness

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedReport is a report with one task of each outcome and fixed times.
func fixedReport() *Report {
	tasks := []TaskResult{
		{ID: "book-lisbon", Outcome: OutcomePass, Attempts: 1, Duration: 12 * time.Millisecond, Format: "openai",
			Labels: map[string]string{"kind": "booking"},
			Result: &engine.EvaluationResult{Score: 0.957, Grade: engine.GradeA, Passed: true, MinScore: 0.9,
				Issues: []engine.Issue{{Kind: "arguments", Severity: engine.SeverityLow, Tool: "reserve_seat", Problem: "`reserve_seat` called with unexpected arguments (unexpected: seat)"}}}},
		{ID: "change-date", Outcome: OutcomeFail, Attempts: 1, Duration: 8 * time.Millisecond, Format: "openai",
			Result: &engine.EvaluationResult{Score: 0.825, Grade: engine.GradeB, Passed: false, MinScore: 0.8,
				Issues: []engine.Issue{
					{Kind: "forbidden-call", Severity: engine.SeverityCritical, Tool: "cancel_booking", Problem: "forbidden call | change the booking instead", Fix: "remove the cancel_booking call"},
					{Kind: "redundant", Severity: engine.SeverityLow, Tool: "cancel_booking", Problem: "extra call"},
				},
				Checks: engine.Checks{Fail: 1, Items: []engine.Check{{Name: "forbidden-calls", Status: engine.CheckFail, Detail: "cancel_booking called at 3"}}}}},
		{ID: "book-with-bag", Outcome: OutcomeFail, Attempts: 2, Duration: 1500 * time.Millisecond, Format: "anthropic",
			Result: &engine.EvaluationResult{Score: 0.858, Grade: engine.GradeB, Passed: false, MinScore: 0.9}},
		{ID: "flight-status", Outcome: OutcomeError, Attempts: 3, Duration: 2*time.Second + 40*time.Millisecond,
			Reason: "agent answered 503 Service Unavailable <busy> (after 3 attempts)"},
	}
	return &Report{
		Suite:     "flight-booking",
		RunID:     "6f1c2a9e-0000-4000-8000-000000000001",
		StartedAt: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC),
		Duration:  2100 * time.Millisecond,
		Tasks:     tasks,
		Summary:   Summarize(tasks),
	}
}

func TestSummarize(t *testing.T) {
	got := fixedReport().Summary
	want := Summary{
		Tasks: 4, Passed: 1, Failed: 2, Errors: 1,
		PassRate:  0.25,
		MeanScore: (0.957 + 0.825 + 0.858) / 3,
		Grades:    map[engine.Grade]int{engine.GradeA: 1, engine.GradeB: 2},
		Failing: []FailingTask{
			{ID: "change-date", Outcome: OutcomeFail, Issue: "cancel_booking: forbidden call | change the booking instead"},
			{ID: "book-with-bag", Outcome: OutcomeFail, Issue: "score 0.858 below min_score 0.900"},
			{ID: "flight-status", Outcome: OutcomeError, Issue: "agent answered 503 Service Unavailable <busy> (after 3 attempts)"},
		},
		Slowest: []SlowTask{
			{ID: "flight-status", Duration: 2*time.Second + 40*time.Millisecond},
			{ID: "book-with-bag", Duration: 1500 * time.Millisecond},
			{ID: "book-lisbon", Duration: 12 * time.Millisecond},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
	empty := Summarize(nil)
	if empty.PassRate != 0 || empty.MeanScore != 0 || len(empty.Failing) != 0 || len(empty.Slowest) != 0 {
		t.Errorf("Summarize(nil) = %+v, want zeros", empty)
	}
}

func TestWriters(t *testing.T) {
	tests := []struct {
		golden string
		write  func(*bytes.Buffer, *Report) error
	}{
		{"report.txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r, TextOptions{}) }},
		{"report.xml", func(b *bytes.Buffer, r *Report) error { return WriteJUnit(b, r) }},
		{"report.json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, fixedReport()); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", tc.golden+".golden"), b.Bytes())
		})
	}
}

// compareGolden compares got with the golden file at path, or rewrites
// the file with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestJUnitParses reads the JUnit output back with encoding/xml, as a CI
// system would, and checks the counts and each test case.
func TestJUnitParses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	type problem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	var doc struct {
		XMLName xml.Name `xml:"testsuites"`
		Tests   int      `xml:"tests,attr"`
		Suites  []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Name      string   `xml:"name,attr"`
				Classname string   `xml:"classname,attr"`
				Time      string   `xml:"time,attr"`
				Failure   *problem `xml:"failure"`
				Error     *problem `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(&b)
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v", err)
	}
	if doc.Tests != 4 || len(doc.Suites) != 1 {
		t.Fatalf("testsuites tests=%d suites=%d, want 4 and 1", doc.Tests, len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "flight-booking" || s.Tests != 4 || s.Failures != 2 || s.Errors != 1 {
		t.Errorf("testsuite = %s tests=%d failures=%d errors=%d, want flight-booking 4 2 1", s.Name, s.Tests, s.Failures, s.Errors)
	}
	type row struct{ Name, Time, Kind, Message string }
	var got []row
	for _, c := range s.Cases {
		r := row{Name: c.Name, Time: c.Time}
		switch {
		case c.Failure != nil:
			r.Kind, r.Message = "failure", c.Failure.Message
		case c.Error != nil:
			r.Kind, r.Message = "error", c.Error.Message
		}
		if c.Classname != "flight-booking" {
			t.Errorf("case %s classname = %q", c.Name, c.Classname)
		}
		got = append(got, r)
	}
	want := []row{
		{"book-lisbon", "0.012", "", ""},
		{"change-date", "0.008", "failure", "cancel_booking: forbidden call | change the booking instead"},
		{"book-with-bag", "1.500", "failure", "score 0.858 below min_score 0.900"},
		{"flight-status", "2.040", "error", "agent answered 503 Service Unavailable <busy> (after 3 attempts)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("test cases (-want +got):\n%s", diff)
	}
}

// TestJSONRoundTrip checks that the JSON report carries the durations in
// seconds and decodes back into the same tasks.
func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		DurationSeconds float64 `json:"duration_seconds"`
		Tasks           []struct {
			ID              string  `json:"id"`
			DurationSeconds float64 `json:"duration_seconds"`
		} `json:"tasks"`
		Summary struct {
			PassRate float64        `json:"pass_rate"`
			Grades   map[string]int `json:"grades"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.DurationSeconds != 2.1 || got.Tasks[3].DurationSeconds != 2.04 || got.Summary.PassRate != 0.25 || got.Summary.Grades["B"] != 2 {
		t.Errorf("JSON report = %+v", got)
	}
}

// TestJUnitHostileText checks that terminal escapes, NUL bytes, invalid
// UTF-8 and a CDATA terminator in an agent's error still give valid XML.
func TestJUnitHostileText(t *testing.T) {
	reason := "\x1b[31mboom\x00]]><x>&\xff"
	tasks := []TaskResult{{ID: "t", Outcome: OutcomeError, Reason: reason}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, &Report{Suite: "s<&>", Tasks: tasks, Summary: Summarize(tasks)}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Error struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(&b)
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, b.String())
	}
	const want = "\uFFFD[31mboom\uFFFD]]><x>&\uFFFD"
	e := doc.Suites[0].Cases[0].Error
	if e.Text != want || e.Message != want || doc.Suites[0].Name != "s<&>" {
		t.Errorf("decoded suite %q error text %q message %q, want %q", doc.Suites[0].Name, e.Text, e.Message, want)
	}
}
