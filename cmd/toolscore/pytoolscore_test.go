package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pythonResult is one line of testdata/pytoolscore/python-results.json:
// Python Toolscore 1.8.1's grade of a gold file and a trace of its own
// examples (python_reference.py writes it).
type pythonResult struct {
	Gold               string  `json:"gold"`
	Trace              string  `json:"trace"`
	Format             string  `json:"format"`
	Calls              int     `json:"calls"`
	Score              float64 `json:"score"`
	Grade              string  `json:"grade"`
	SelectionAccuracy  float64 `json:"selection_accuracy"`
	InvocationAccuracy float64 `json:"invocation_accuracy"`
	ArgumentF1         float64 `json:"argument_f1"`
	SequenceAccuracy   float64 `json:"sequence_accuracy"`
	RedundantRate      float64 `json:"redundant_rate"`
}

// TestPythonToolscoreExamples reads Python Toolscore 1.8.1's example gold
// files and traces (testdata/pytoolscore, copied unchanged from its
// examples/ and examples/datasets/) as its README uses them: `eval
// GOLD TRACE` (auto-detected and with Python's --format names), `inspect`
// and `doctor --contract`. Every pair's score, grade, metrics and call
// count are exactly those Python Toolscore computed for it.
func TestPythonToolscoreExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "pytoolscore", "python-results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []pythonResult
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 46 {
		t.Fatalf("%d Python results, want 46", len(want))
	}
	t.Chdir(filepath.Join("testdata", "pytoolscore"))
	seen := map[string]bool{}
	for _, w := range want {
		args := []string{"eval", "--json"}
		if w.Format != "auto" {
			args = append(args, "--format", w.Format)
		}
		r := runCLI(t, "", append(args, w.Gold, w.Trace)...)
		if r.code != exitOK && r.code != exitFail {
			t.Errorf("eval %s %s (format %s): exit %d\n%s", w.Gold, w.Trace, w.Format, r.code, r.stderr)
			continue
		}
		var res struct {
			Score   float64 `json:"score"`
			Grade   string  `json:"grade"`
			Passed  bool    `json:"passed"`
			Metrics struct {
				SelectionAccuracy  float64 `json:"selection_accuracy"`
				InvocationAccuracy float64 `json:"invocation_accuracy"`
				Arguments          struct {
					F1 float64 `json:"f1"`
				} `json:"argument_metrics"`
				Sequence struct {
					SequenceAccuracy float64 `json:"sequence_accuracy"`
				} `json:"sequence_metrics"`
				Efficiency struct {
					RedundantRate float64 `json:"redundant_rate"`
				} `json:"efficiency_metrics"`
			} `json:"metrics"`
			TraceCalls []json.RawMessage `json:"trace_calls"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Errorf("eval %s %s: %v\n%s", w.Gold, w.Trace, err, r.stdout)
			continue
		}
		m := res.Metrics
		got := pythonResult{
			Gold: w.Gold, Trace: w.Trace, Format: w.Format, Calls: len(res.TraceCalls),
			Score: res.Score, Grade: res.Grade,
			SelectionAccuracy: m.SelectionAccuracy, InvocationAccuracy: m.InvocationAccuracy,
			ArgumentF1: m.Arguments.F1, SequenceAccuracy: m.Sequence.SequenceAccuracy, RedundantRate: m.Efficiency.RedundantRate,
		}
		if got != w {
			t.Errorf("eval %s %s (format %s):\n got %+v\nwant %+v (Python Toolscore)", w.Gold, w.Trace, w.Format, got, w)
		}
		if wantCode := map[bool]int{true: exitOK, false: exitFail}[res.Passed]; r.code != wantCode {
			t.Errorf("eval %s %s: exit %d with passed %v", w.Gold, w.Trace, r.code, res.Passed)
		}
		if seen[w.Trace] {
			continue
		}
		seen[w.Trace] = true
		r = runCLI(t, "", "inspect", "--json", w.Trace)
		var ins struct {
			Calls []json.RawMessage `json:"calls"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &ins); r.code != exitOK || err != nil || len(ins.Calls) != w.Calls {
			t.Errorf("inspect %s: exit %d, %d calls (%v), want 0 and %d\n%s", w.Trace, r.code, len(ins.Calls), err, w.Calls, r.stderr)
		}
	}
	golds, _ := filepath.Glob("datasets/*.json")
	golds = append(golds, "gold_calls.json")
	if len(golds) != 6 {
		t.Errorf("%d gold files, want 6", len(golds))
	}
	for _, g := range golds {
		if r := runCLI(t, "", "doctor", "--contract", g); r.code != exitOK || !strings.Contains(r.stdout, "Python Toolscore's extras") {
			t.Errorf("doctor --contract %s: exit %d\n%s%s", g, r.code, r.stdout, r.stderr)
		}
	}
	if len(seen) != 13 {
		t.Errorf("%d traces inspected, want 13", len(seen))
	}
}
