package main

import (
	"fmt"
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
	const msg = "grading took longer than --timeout 1ns: raise it (0 for no limit), or split the trace or the contract"
	r := runCLI(t, "", "eval", "--timeout", "1ns", contract, trace)
	if want := (result{code: exitError, stderr: "toolscore: " + trace + ": " + msg + "\n"}); r != want {
		t.Errorf("eval --timeout 1ns = %+v, want %+v", r, want)
	}
	r = runBatchCLI(t, "", "eval", "--timeout", "1ns", contract, trace, trace)
	if want := "toolscore: " + trace + ": " + msg + "\ntoolscore: " + trace + ": " + msg + "\ntoolscore: 2 of 2 traces could not be graded\n"; r.code != exitError || r.stderr != want {
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
