package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEvalScoringCells: eval refuses, before scoring, a trace whose
// scoring cells (expected calls times trace calls) pass
// --max-scoring-cells, by default the service's 16,000,000; 0 lifts it.
func TestEvalScoringCells(t *testing.T) {
	gold := writeFile(t, "gold.json", `[{"tool": "a"}, {"tool": "b"}]`)
	trace := writeFile(t, "trace.json", `[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]`)
	const over = "the gold file's 2 expected calls (required and every alternative's) against the trace's 3 calls need 6 scoring cells, over the limit of 5: split the trace or the gold file, or raise --max-scoring-cells (0 for no limit)"
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--max-scoring-cells", "5"}, exitError, "toolscore: " + trace + ": " + over + "\n"},
		{[]string{"--max-scoring-cells", "6"}, exitFail, ""},
		{[]string{"--max-scoring-cells", "0"}, exitFail, ""},
		{nil, exitFail, ""},
		{[]string{"--max-scoring-cells", "-1"}, exitError, "toolscore: --max-scoring-cells: must not be negative, got -1\n"},
	} {
		r := runCLI(t, "", append(append([]string{"eval"}, tc.args...), gold, trace)...)
		if r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("eval %s = %d %q, want %d %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
	}
	// Many traces: the one over the bound is an error line, the other
	// graded.
	small := writeFile(t, "small.json", `[{"tool": "a"}]`)
	r := runBatchCLI(t, "", "eval", "--json", "--max-scoring-cells", "5", gold, small, trace)
	if want := "toolscore: " + trace + ": " + over + "\ntoolscore: 1 of 2 traces could not be graded\n"; r.code != exitError || r.stderr != want {
		t.Errorf("batch = %d %q, want %d %q", r.code, r.stderr, exitError, want)
	}
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[0], `"score"`) || !strings.Contains(lines[1], `"error":"`+over+`"`) {
		t.Errorf("batch --json lines = %q, want a result then the error", lines)
	}
	// The default bound: 400 expected calls against 40,001 calls are
	// 16,000,400 cells.
	var g, tr strings.Builder
	g.WriteString("[")
	for i := range 400 {
		if i > 0 {
			g.WriteString(",")
		}
		fmt.Fprintf(&g, `{"tool":"t%d"}`, i)
	}
	g.WriteString("]")
	tr.WriteString("[")
	for i := range 40001 {
		if i > 0 {
			tr.WriteString(",")
		}
		tr.WriteString(`{"tool":"x"}`)
	}
	tr.WriteString("]")
	big := writeFile(t, "big.json", tr.String())
	r = runCLI(t, "", "eval", writeFile(t, "gold400.json", g.String()), big)
	want := result{code: exitError, stderr: "toolscore: " + big + ": the gold file's 400 expected calls (required and every alternative's) against the trace's 40,001 calls need 16,000,400 scoring cells, over the limit of 16,000,000: split the trace or the gold file, or raise --max-scoring-cells (0 for no limit)\n"}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("default bound (-want +got):\n%s", diff)
	}
}

// TestEvalTimeout: --timeout is the context Evaluate polls; a trace
// graded past it is an error saying so (one deadline already passed makes
// the outcome certain).
func TestEvalTimeout(t *testing.T) {
	contract, trace := example("contract.json"), example("trace.json")
	const msg = "took longer than --timeout 1ns: raise it (0 for no limit), or split the trace or the contract"
	r := runCLI(t, "", "eval", "--timeout", "1ns", contract, trace)
	if want := (result{code: exitError, stderr: "toolscore: " + trace + ": " + msg + "\n"}); r != want {
		t.Errorf("eval --timeout 1ns = %+v, want %+v", r, want)
	}
	other := batchFile("batch/a-pass.json")
	r = runBatchCLI(t, "", "eval", "--timeout", "1ns", contract, trace, other)
	if want := "toolscore: " + trace + ": " + msg + "\ntoolscore: " + other + ": " + msg + "\ntoolscore: 2 of 2 traces could not be graded\n"; r.code != exitError || r.stderr != want {
		t.Errorf("batch --timeout 1ns = %d %q, want %d %q", r.code, r.stderr, exitError, want)
	}
	for _, args := range [][]string{{"--timeout", "1m"}, {"--timeout", "0"}, nil} {
		if r := runCLI(t, "", append(append([]string{"eval"}, args...), contract, trace)...); r.code != exitOK {
			t.Errorf("eval %s = %d %q, want a PASS", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := runCLI(t, "", "eval", "--timeout", "-1s", contract, trace); r.stderr != "toolscore: --timeout: must not be negative, got -1s\n" || r.code != exitError {
		t.Errorf("eval --timeout -1s = %d %q", r.code, r.stderr)
	}
}

// TestRegradeBounds: regrade takes eval's --timeout and
// --max-scoring-cells, with the same defaults, checks and messages, the
// error naming the result file.
func TestRegradeBounds(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}, {"tool": "b"}]`)
	trace := put(t, "trace.json", `[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]`)
	res := evalJSON(t, "result.json", gold, trace)
	const over = "the gold file's 2 expected calls (required and every alternative's) against the trace's 3 calls need 6 scoring cells, over the limit of 5: split the trace or the gold file, or raise --max-scoring-cells (0 for no limit)"
	const slow = "took longer than --timeout 1ns: raise it (0 for no limit), or split the trace or the contract"
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--max-scoring-cells", "5"}, exitError, "toolscore: result.json: " + over + "\n"},
		{[]string{"--max-scoring-cells", "6"}, exitOK, ""},
		{[]string{"--max-scoring-cells", "0"}, exitOK, ""},
		{[]string{"--max-scoring-cells", "-1"}, exitError, "toolscore: --max-scoring-cells: must not be negative, got -1\n"},
		{[]string{"--timeout", "1ns"}, exitError, "toolscore: result.json: " + slow + "\n"},
		{[]string{"--timeout", "1m"}, exitOK, ""},
		{[]string{"--timeout", "-1s"}, exitError, "toolscore: --timeout: must not be negative, got -1s\n"},
		{nil, exitOK, ""},
	} {
		r := runCLI(t, "", append(append([]string{"regrade", "--contract", gold}, tc.args...), res)...)
		if r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("regrade %s = %d %q, want %d %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
	}
	regradeBoundsBatch(t, gold)
	// The default is the service's bound, as eval's.
	cmd := newRegradeCmd(stdio{})
	if got := cmd.Flags().Lookup("max-scoring-cells").DefValue; got != "16000000" {
		t.Errorf("regrade --max-scoring-cells default = %s, want 16000000", got)
	}
	if got := cmd.Flags().Lookup("timeout").DefValue; got != "0s" {
		t.Errorf("regrade --timeout default = %s, want 0s", got)
	}
}

// regradeBoundsBatch: in a file of many results (eval --each-line
// --json), one over a bound is an error naming it (FILE:LINE and its
// trace) and the bound, on stderr at the end; the others are regraded,
// the summary counts it, its --json row carries the error, and the exit
// status is 2.
func regradeBoundsBatch(t *testing.T, gold string) {
	t.Helper()
	traces := put(t, "traces.jsonl", `[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]`+"\n"+`[{"tool": "a"}]`+"\n"+`{"calls": [}`+"\n")
	r := runBatchCLI(t, "", "eval", "--each-line", "--json", gold, traces)
	if r.code != exitError || strings.Count(r.stdout, "\n") != 3 {
		t.Fatalf("eval --each-line --json = %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	results := put(t, "results.jsonl", r.stdout)
	const (
		over    = "the gold file's 2 expected calls (required and every alternative's) against the trace's 3 calls need 6 scoring cells, over the limit of 5: split the trace or the gold file, or raise --max-scoring-cells (0 for no limit)"
		slow    = "took longer than --timeout 1ns: raise it (0 for no limit), or split the trace or the contract"
		skipped = "toolscore: results.jsonl:3: skipped, eval could not grade the trace: traces.jsonl:3: column 12: invalid character '}' looking for beginning of value (at /calls/0)\n"
	)
	type row struct {
		File, Source, Change, Error string
		New                         bool
	}
	for _, tc := range []struct {
		args    []string
		stderr  string
		summary string
		rows    []row
		sum     regradeSummary
	}{
		{[]string{"--max-scoring-cells", "5"},
			skipped + "toolscore: results.jsonl:1: traces.jsonl:1: " + over + "\ntoolscore: 1 of 2 results could not be regraded\n",
			"Summary: 0 pass→fail, 0 fail→pass, 0 grade changed, 1 unchanged (1 skipped: eval could not grade it; 1 could not be regraded); mean score delta +0.000\n",
			[]row{{"results.jsonl:1", "traces.jsonl:1", "error", over, false}, {"results.jsonl:2", "traces.jsonl:2", "", "", true}},
			regradeSummary{Results: 1, Skipped: 1, Failed: 1, Unchanged: 1}},
		{[]string{"--timeout", "1ns"},
			skipped + "toolscore: results.jsonl:1: traces.jsonl:1: " + slow + "\ntoolscore: results.jsonl:2: traces.jsonl:2: " + slow + "\ntoolscore: 2 of 2 results could not be regraded\n",
			"Summary: 0 pass→fail, 0 fail→pass, 0 grade changed, 0 unchanged (1 skipped: eval could not grade it; 2 could not be regraded); mean score delta +0.000\n",
			[]row{{"results.jsonl:1", "traces.jsonl:1", "error", slow, false}, {"results.jsonl:2", "traces.jsonl:2", "error", slow, false}},
			regradeSummary{Skipped: 1, Failed: 2}},
	} {
		args := append(append([]string{"regrade", "--contract", gold}, tc.args...), results)
		r := runCLI(t, "", args...)
		_, summary, _ := strings.Cut(r.stdout, "\n\n")
		if r.code != exitError || r.stderr != tc.stderr || summary != tc.summary {
			t.Errorf("regrade %s = %d, stderr %q, summary %q, want %d %q %q", strings.Join(tc.args, " "), r.code, r.stderr, summary, exitError, tc.stderr, tc.summary)
		}
		r = runCLI(t, "", append([]string{"regrade", "--json"}, args[1:]...)...)
		var got struct {
			Results []regradeFileView `json:"results"`
			Summary regradeSummary    `json:"summary"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitError || r.stderr != tc.stderr {
			t.Errorf("regrade --json %s = %d %v, stderr %q", strings.Join(tc.args, " "), r.code, err, r.stderr)
			continue
		}
		var rows []row
		for _, res := range got.Results {
			rows = append(rows, row{res.File, res.Source, res.Change, res.Error, res.New != nil})
		}
		if diff := cmp.Diff(tc.rows, rows); diff != "" {
			t.Errorf("regrade --json %s rows (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
		if diff := cmp.Diff(tc.sum, got.Summary); diff != "" {
			t.Errorf("regrade --json %s summary (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
		if want := `"new": null,`; tc.rows[0].Change == "error" && !strings.Contains(r.stdout, want) {
			t.Errorf("regrade --json %s: no %s in\n%s", strings.Join(tc.args, " "), want, r.stdout)
		}
	}
}

// TestHarnessBounds: harness grades each task's trace locally within
// --max-scoring-cells and --grade-timeout (its --timeout bounds each
// attempt at the agent), eval's bounds with eval's messages; a task over
// one is an error with that reason and the others are still graded.
func TestHarnessBounds(t *testing.T) {
	inTempDir(t)
	suite := put(t, "suite.json", `{"name": "bounds", "tasks": [
  {"id": "big", "input": "x", "gold": [{"tool": "a"}, {"tool": "b"}]},
  {"id": "small", "input": "x", "gold": [{"tool": "a"}]}
]}`)
	if err := os.Mkdir("runs", 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, "runs/big.json", `[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]`)
	put(t, "runs/small.json", `[{"tool": "a"}]`)
	const over = "grading: the gold file's 2 expected calls (required and every alternative's) against the trace's 3 calls need 6 scoring cells, over the limit of 5: split the trace or the gold file, or raise --max-scoring-cells (0 for no limit)"
	const slow = "grading: took longer than --grade-timeout 1ns: raise it (0 for no limit), or split the trace or the contract"
	type task struct{ ID, Outcome, Reason string }
	for _, tc := range []struct {
		args  []string
		tasks []task
	}{
		{[]string{"--max-scoring-cells", "5"}, []task{{"big", "error", over}, {"small", "pass", ""}}},
		{[]string{"--max-scoring-cells", "6"}, []task{{"big", "fail", ""}, {"small", "pass", ""}}},
		{[]string{"--max-scoring-cells", "0"}, []task{{"big", "fail", ""}, {"small", "pass", ""}}},
		{[]string{"--grade-timeout", "1ns"}, []task{{"big", "error", slow}, {"small", "error", slow}}},
		{[]string{"--grade-timeout", "1m"}, []task{{"big", "fail", ""}, {"small", "pass", ""}}},
		{nil, []task{{"big", "fail", ""}, {"small", "pass", ""}}},
	} {
		r := runCLI(t, "", append([]string{"harness", suite, "--traces", "runs", "--json"}, tc.args...)...)
		var rep struct{ Tasks []task }
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitFail {
			t.Errorf("harness %s = %d %v\nstderr: %s", strings.Join(tc.args, " "), r.code, err, r.stderr)
			continue
		}
		if diff := cmp.Diff(tc.tasks, rep.Tasks); diff != "" {
			t.Errorf("harness %s tasks (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--max-scoring-cells", "-1"}},
		{[]string{"--grade-timeout", "-1s"}},
	} {
		want := map[string]string{"--max-scoring-cells": "toolscore: --max-scoring-cells: must not be negative, got -1\n",
			"--grade-timeout": "toolscore: --grade-timeout: must not be negative, got -1s\n"}[tc.args[0]]
		r := runCLI(t, "", append([]string{"harness", suite, "--traces", "runs"}, tc.args...)...)
		if r.code != exitError || r.stderr != want {
			t.Errorf("harness %s = %d %q, want %d %q", strings.Join(tc.args, " "), r.code, r.stderr, exitError, want)
		}
	}
	cmd := newHarnessCmd(stdio{})
	if got := cmd.Flags().Lookup("max-scoring-cells").DefValue; got != "16000000" {
		t.Errorf("harness --max-scoring-cells default = %s, want 16000000", got)
	}
	if got := cmd.Flags().Lookup("grade-timeout").DefValue; got != "0s" {
		t.Errorf("harness --grade-timeout default = %s, want 0s", got)
	}
}
