package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// saveResult runs args (an eval with --json) and writes its stdout to a
// file, as a CI job saves a baseline.
func saveResult(t *testing.T, name string, args ...string) string {
	t.Helper()
	r := runBatchCLI(t, "", args...)
	if r.code == exitError {
		t.Fatalf("toolscore %s: exit 2: %s", strings.Join(args, " "), r.stderr)
	}
	return writeFile(t, name, r.stdout)
}

// TestEvalBaseline compares one trace with a saved result: the same trace
// passes, the unsafe one regresses (exit 1), and the output of the
// comparison is pinned.
func TestEvalBaseline(t *testing.T) {
	unsafe := batchFile("unsafe-trace.json")
	good := saveResult(t, "good.json", "eval", "--json", example("contract.json"), example("trace.json"))
	bad := saveResult(t, "bad.json", "eval", "--json", example("contract.json"), unsafe)
	goodBase := strings.Replace(good, filepath.Dir(good), "BASE", 1)
	tests := []struct {
		name  string
		args  []string
		code  int
		lines []string // lines the output must hold
	}{
		{"same", []string{"eval", "--baseline", good, example("contract.json"), example("trace.json")}, exitOK,
			[]string{"Regression: none (max drop 0.05)"}},
		{"regressed", []string{"eval", "--baseline", good, example("contract.json"), unsafe}, exitFail,
			[]string{"REGRESSION: score dropped by 0.179 (0.967 → 0.788), more than the 0.05 allowed; verdict went from PASS to FAIL; the forbidden-calls check newly fails; the credentials check newly fails"}},
		{"within max drop", []string{"eval", "--baseline", good, "--max-drop", "0.2", "--no-safety-gate", "--min-score", "0.7", example("contract.json"), unsafe}, exitFail,
			[]string{"the forbidden-calls check newly fails"}},
		// A FAIL that was already a FAIL is no regression: exit 0.
		{"still failing", []string{"eval", "--baseline", bad, example("contract.json"), unsafe}, exitOK,
			[]string{"Baseline " + bad + ": grade C FAIL 0.788 → grade C FAIL 0.788 (±0.000)", "Regression: none"}},
		{"fixed", []string{"eval", "--baseline", bad, example("contract.json"), example("trace.json")}, exitOK,
			[]string{"Fixed issues", "  cancel_booking  `cancel_booking` is forbidden (never cancel an existing booking)", "Calls that disappeared\n  cancel_booking {\"booking_id\":\"BK-77\"}"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, "", tc.args...)
			if r.code != tc.code || r.stderr != "" {
				t.Errorf("exit %d, stderr %q; want %d and none\n%s", r.code, r.stderr, tc.code, r.stdout)
			}
			for _, l := range tc.lines {
				if !strings.Contains(r.stdout, l) {
					t.Errorf("output lacks %q:\n%s", l, r.stdout)
				}
			}
		})
	}
	r := runBatchCLI(t, "", "eval", "--baseline", good, example("contract.json"), unsafe)
	compareGolden(t, "eval_baseline_regressed", strings.ReplaceAll(r.stdout, good, goodBase))
	// Without --baseline the output is today's, byte for byte.
	plain := runBatchCLI(t, "", "eval", example("contract.json"), example("trace.json"))
	compareGolden(t, "eval_contract", plain.stdout)
}

// TestEvalBaselineErrors checks the baselines that cannot be used: each is
// an error naming the file and why, exit 2.
func TestEvalBaselineErrors(t *testing.T) {
	gold := saveResult(t, "gold.json", "eval", "--json", example("gold.json"), example("trace.json"))
	many := saveResult(t, "many.jsonl", "eval", "--json", example("contract.json"), example("trace.json"), batchFile("batch/a-pass.json"))
	legacyGold := writeFile(t, "legacy.json", string(mustRead(t, filepath.Join("testdata", "eval_gold_json.golden"))))
	broken := writeFile(t, "broken.json", `{"score": 0.5,`)
	newer := writeFile(t, "newer.json", `{"format_version": 9, "score": 1}`)
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name     string
		baseline string
		stderr   string
	}{
		{"another expectation", gold, "toolscore: --baseline: " + gold + ": was graded against another expectation than ../../examples/contracts/contract.json (sha256 "},
		{"legacy of another kind", legacyGold, "toolscore: --baseline: " + legacyGold + ": was graded against another expectation than ../../examples/contracts/contract.json (sha256 "},
		{"many traces", many, "toolscore: --baseline: " + many + ": holds the results of many traces: grade as many traces to compare with it\n"},
		{"broken", broken, "toolscore: --baseline: " + broken + ": line 1:15: unexpected end of JSON input\n"},
		{"newer", newer, "toolscore: --baseline: " + newer + ": line 1:20: format_version 9 was written by a newer toolscore (this one reads up to 1): upgrade toolscore\n"},
		{"missing", missing, "toolscore: --baseline: " + missing + ": no such file or directory\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, "", "eval", "--baseline", tc.baseline, example("contract.json"), example("trace.json"))
			if r.code != exitError || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
			}
			if !strings.HasPrefix(r.stderr, tc.stderr) {
				t.Errorf("stderr %q\nwant prefix %q", r.stderr, tc.stderr)
			}
		})
	}
	r := runBatchCLI(t, "", "eval", "--max-drop", "0.1", example("contract.json"), example("trace.json"))
	if r.code != exitError || r.stderr != "toolscore: --max-drop needs --baseline FILE\n" {
		t.Errorf("--max-drop alone: exit %d, stderr %q", r.code, r.stderr)
	}
	// Today's result, saved before results had a header, is a baseline:
	// the legacy gold result against the gold file.
	r = runBatchCLI(t, "", "eval", "--baseline", legacyGold, example("gold.json"), example("trace.json"))
	if r.code != exitOK || !strings.Contains(r.stdout, "Regression: none") {
		t.Errorf("legacy baseline: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
}

// TestBatchBaseline compares many traces with the saved results of many:
// the same traces pass; a trace that became unsafe regresses.
func TestBatchBaseline(t *testing.T) {
	contract, err := filepath.Abs(example("contract.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := mustRead(t, example("trace.json"))
	unsafe := mustRead(t, batchFile("unsafe-trace.json"))
	var out, markdown string
	// In a directory of its own, so the traces have short relative names.
	t.Run("run", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if err := os.Mkdir("runs", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"runs/a.json", "runs/b.json"} {
			if err := os.WriteFile(n, good, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := runBatchCLI(t, "", "eval", "--json", contract, "runs")
		if err := os.WriteFile("base.jsonl", []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "base.jsonl", contract, "runs")
		if r.code != exitOK || !strings.Contains(r.stdout, "2 matched, 0 new, 0 missing; 0 PASS → FAIL, 0 FAIL → PASS") {
			t.Errorf("same traces: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
		}
		if err := os.WriteFile("runs/b.json", unsafe, 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "base.jsonl", "--markdown", "report.md", contract, "runs")
		if r.code != exitFail {
			t.Errorf("regressed trace: exit %d, stderr %q", r.code, r.stderr)
		}
		out = strings.ReplaceAll(r.stdout, contract, "contract.json")
		markdown = string(mustRead(t, "report.md"))
		// The same traces under other names (absolute paths): nothing to
		// compare, which must not pass as "no regression".
		abs, err := filepath.Abs("runs")
		if err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "base.jsonl", contract, abs)
		want := "toolscore: --baseline: base.jsonl: none of this run's 2 traces is in it (its 2 traces are named like runs/a.json, this run's like " +
			filepath.Join(abs, "a.json") + "): grade them under the names they had when it was saved, or save a new baseline\n"
		if r.code != exitError || r.stderr != want {
			t.Errorf("renamed traces: exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
		}
	})
	t.Run("a bad line", func(t *testing.T) {
		// A line of the baseline that is not a saved result is named, the
		// others still compared (its trace counts as new), exit 2: as
		// regrade reads such a file (TestRegradeMixedLines).
		t.Chdir(t.TempDir())
		if err := os.Mkdir("runs", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"runs/a.json", "runs/b.json", "runs/c.json"} {
			if err := os.WriteFile(n, good, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := runBatchCLI(t, "", "eval", "--json", contract, "runs")
		lines := strings.SplitAfter(r.stdout, "\n")
		lines[1] = "{bad}\n"
		lines[2] = strings.Replace(lines[2], `"weights":{"selection_accuracy":`, `"weights":{"selection_accuracy":"x","was":`, 1)
		if err := os.WriteFile("base.jsonl", []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "base.jsonl", contract, "runs")
		col := strings.Index(lines[2], `"x"`) + 1
		want := "toolscore: --baseline: base.jsonl: line 2:2: invalid character 'b' looking for beginning of object key string\n" +
			"toolscore: --baseline: base.jsonl: line 3:" + strconv.Itoa(col) + ": /metrics/weights/selection_accuracy: must be a number, got string\n" +
			"toolscore: --baseline: 2 of 3 results of base.jsonl could not be read: the traces they are of were compared as new\n"
		if r.code != exitError || r.stderr != want {
			t.Errorf("exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
		}
		if want := "1 matched, 2 new, 0 missing"; !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
		// A baseline none of whose lines reads is refused before grading.
		if err := os.WriteFile("bad.jsonl", []byte(lines[2]), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "bad.jsonl", contract, "runs")
		if want := "toolscore: --baseline: bad.jsonl: line 1:" + strconv.Itoa(col) + ": /metrics/weights/selection_accuracy: must be a number, got string\n"; r.code != exitError || r.stderr != want || r.stdout != "" {
			t.Errorf("no line reads: exit %d, stderr %q, stdout %q\nwant %q", r.code, r.stderr, r.stdout, want)
		}
	})
	t.Run("one trace", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if err := os.Mkdir("runs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("runs/a.json", good, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runBatchCLI(t, "", "eval", "--json", contract, "runs")
		if err := os.WriteFile("base.jsonl", []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		r = runBatchCLI(t, "", "eval", "--baseline", "base.jsonl", contract, "runs")
		if want := "\nBaseline base.jsonl: 1 trace, pass rate 100.0% → 100.0% (±0.0 pts)"; r.code != exitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s", r.code, want, r.stdout)
		}
	})
	compareGolden(t, "eval_batch_baseline", out)
	if !strings.Contains(markdown, "**Regression:** 1 trace regressed.") {
		t.Errorf("--markdown lacks the regression:\n%s", markdown)
	}
	// A baseline of one trace cannot compare many.
	one := saveResult(t, "one.json", "eval", "--json", example("contract.json"), example("trace.json"))
	r := runBatchCLI(t, "", "eval", "--baseline", one, example("contract.json"), example("trace.json"), example("trace.json"))
	want := "toolscore: --baseline: " + one + ": line 1:1: has no source: it is one trace's result; a baseline of many traces is the output of toolscore eval --json over many traces\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("one-trace baseline: exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
}

// TestEvalReportFiles checks that --markdown and --html write their files
// for one trace, and that the JSON output carries its header.
func TestEvalReportFiles(t *testing.T) {
	dir := t.TempDir()
	md, page := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	r := runBatchCLI(t, "", "eval", "--markdown", md, "--html", page, example("contract.json"), example("trace.json"))
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := string(mustRead(t, md)); !strings.HasPrefix(got, "## toolscore: PASS, grade A (96.7%)\n") {
		t.Errorf("Markdown starts %q", got[:min(len(got), 60)])
	}
	if got := string(mustRead(t, page)); !strings.HasPrefix(got, "<!DOCTYPE html>") || !strings.Contains(got, "<title>toolscore: PASS A (96.7%) — ../../examples/contracts/trace.json</title>") {
		t.Errorf("HTML starts %q", got[:min(len(got), 200)])
	}
	r = runBatchCLI(t, "", "eval", "--markdown", filepath.Join(dir, "no", "r.md"), example("contract.json"), example("trace.json"))
	if r.code != exitError || !strings.HasPrefix(r.stderr, "toolscore: --markdown: open "+filepath.Join(dir, "no", "r.md")) {
		t.Errorf("unwritable --markdown: exit %d, stderr %q", r.code, r.stderr)
	}
	// Two reports in one file: refused before grading, the file untouched.
	same := filepath.Join(dir, "same")
	for _, args := range [][]string{
		{"--markdown", same, "--html", same},
		{"--markdown", same, "--html", filepath.Join(dir, ".", "x", "..", "same")},
	} {
		r = runBatchCLI(t, "", append(append([]string{"eval"}, args...), example("contract.json"), example("trace.json"))...)
		want := fmt.Sprintf("toolscore: --markdown and --html name the same file %q: each report needs its own file\n", args[3])
		if r.code != exitError || r.stderr != want || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, want stderr %q", args, r.code, r.stdout, r.stderr, want)
		}
		if _, err := os.Stat(same); !os.IsNotExist(err) {
			t.Errorf("%q: the report file was written (stat: %v)", args, err)
		}
	}
	j := runBatchCLI(t, "", "eval", "--json", example("contract.json"), example("trace.json"))
	head := strings.SplitN(j.stdout, "\n", 4)
	if diff := cmp.Diff([]string{"{", `  "format_version": 1,`, `  "expectation_sha256": "ca65c803234a47796180b8c99e7060a72fbc1c18ac51503ff9648395e71ab6bd",`}, head[:3]); diff != "" {
		t.Errorf("--json header (-want +got):\n%s", diff)
	}
}

// TestHarnessBaseline compares a harness run with its saved report: the
// same run does not regress, a task that now fails does (exit 1), and a
// report of another suite or a member of another type is refused (exit
// 2), the member placed in the file.
func TestHarnessBaseline(t *testing.T) {
	suite := writeFile(t, "suite.json", harnessSuite)
	url := testAgent(t, "abc", "")
	base := writeFile(t, "base.json", runCLI(t, "", "harness", suite, "--agent-url", url, "--json").stdout)
	r := runCLI(t, "", "harness", suite, "--agent-url", url, "--baseline", base)
	if r.code != exitOK || !strings.Contains(r.stdout, "Regression: none (max drop 0.05 per task)") {
		t.Errorf("same run: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	worse := testAgent(t, "ab", "")
	dir := t.TempDir()
	md, page := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	r = runCLI(t, "", "harness", suite, "--agent-url", worse, "--baseline", base, "--markdown", md, "--html", page)
	if r.code != exitFail {
		t.Errorf("regressed run: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"Baseline " + base + ": 1 PASS → FAIL or ERROR, 0 → PASS", "REGRESSION: 1 task regressed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if text := string(mustRead(t, md)); !strings.Contains(text, "- `c`: score dropped by ") {
		t.Errorf("--markdown lacks the regressed task:\n%s", text)
	}
	if text := string(mustRead(t, page)); !strings.Contains(text, "<title>toolscore harness: FAIL, 2/3 tasks passed — cli</title>") {
		t.Errorf("--html lacks its title:\n%.300s", text)
	}
	other := writeFile(t, "other.json", strings.Replace(string(mustRead(t, base)), `"suite": "cli"`, `"suite": "other"`, 1))
	r = runCLI(t, "", "harness", suite, "--agent-url", url, "--baseline", other)
	if want := "toolscore: --baseline: " + other + ": is a report of suite \"other\", not \"cli\"\n"; r.code != exitError || r.stderr != want {
		t.Errorf("other suite: exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
	// A task's outcome of another type is placed in the file.
	bad := writeFile(t, "bad.json", strings.Replace(string(mustRead(t, base)), `"outcome": "pass"`, `"outcome": 1`, 1))
	r = runCLI(t, "", "harness", suite, "--agent-url", url, "--baseline", bad)
	if !strings.Contains(r.stderr, ": /tasks/0/outcome: must be a string, got number\n") || !strings.HasPrefix(r.stderr, "toolscore: --baseline: "+bad+": line ") || r.code != exitError {
		t.Errorf("bad outcome: exit %d, stderr %q", r.code, r.stderr)
	}
}
