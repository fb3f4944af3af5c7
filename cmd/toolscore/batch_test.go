package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/workload"
)

// fakeClock returns a clock that starts at a fixed time and moves 1.25 s
// forward at every reading, so reported durations are fixed.
func fakeClock() func() time.Time {
	t := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := t
		t = t.Add(1250 * time.Millisecond)
		return now
	}
}

// runBatchCLI runs toolscore in-process with a fixed clock.
func runBatchCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb, now: fakeClock()})
	return result{code, out.String(), errb.String()}
}

// batchFile is the path of a file under testdata/.
func batchFile(name string) string { return filepath.Join("testdata", name) }

// TestBatchGolden pins the summary and the JSON Lines of many traces: a
// directory (hidden and non-trace files left out, a broken trace named
// with its place), several files, and JSON Lines with --each-line.
func TestBatchGolden(t *testing.T) {
	brokenDir := "toolscore: " + batchFile("batch/c-broken.json") + ": line 2:1: unexpected end of JSON input\n" +
		"toolscore: 1 of 3 traces could not be graded\n"
	brokenLines := "toolscore: " + batchFile("batch.jsonl") + ":3: column 91: unexpected end of JSON input (at /1): the line ends inside a JSON value, one written across lines or cut short; " + eachLineNeeds + "\n" +
		"toolscore: 1 of 4 traces could not be graded\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"eval_batch_dir", []string{"eval", example("contract.json"), batchFile("batch")}, exitError, brokenDir},
		{"eval_batch_dir_json", []string{"eval", "--json", example("contract.json"), batchFile("batch")}, exitError, brokenDir},
		{"eval_batch_files", []string{"eval", example("contract.json"), batchFile("batch/a-pass.json"), batchFile("batch/b-unsafe.json")}, exitFail, ""},
		{"eval_batch_lines", []string{"eval", "--each-line", example("gold.json"), batchFile("batch.jsonl")}, exitError, brokenLines},
		{"eval_batch_lines_json", []string{"eval", "--each-line", "--json", "--jobs", "3", example("contract.json"), batchFile("batch.jsonl")}, exitError, brokenLines},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
			if diff := cmp.Diff(tc.stderr, r.stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			compareGolden(t, tc.name, r.stdout)
		})
	}
}

// TestBatchExitStatus checks the exit rules of many traces: 0 when every
// trace passes, 1 when one fails, 2 when one cannot be read (the others
// still graded and printed).
func TestBatchExitStatus(t *testing.T) {
	pass := example("trace.json")
	unsafe := batchFile("unsafe-trace.json")
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name   string
		traces []string
		code   int
		lines  int // JSON lines on stdout
	}{
		{"all pass", []string{pass, batchFile("batch/a-pass.json")}, exitOK, 2},
		{"one fails", []string{pass, unsafe, batchFile("batch/a-pass.json")}, exitFail, 3},
		{"one missing", []string{pass, missing, unsafe}, exitError, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, "", append([]string{"eval", "--json", example("contract.json")}, tc.traces...)...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
			if n := strings.Count(r.stdout, "\n"); n != tc.lines {
				t.Errorf("%d lines on stdout, want %d", n, tc.lines)
			}
		})
	}
	r := runBatchCLI(t, "", "eval", "--json", example("contract.json"), pass, missing)
	want := "toolscore: " + missing + ": no such file or directory\ntoolscore: 1 of 2 traces could not be graded\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// TestBatchDuplicatePaths checks that a trace named more than once (the
// same file twice, under another spelling, or a file and its directory)
// is graded once, where it is first named, with a note for each
// repetition on stderr, so that the saved results serve as a baseline;
// standard input is not a path.
func TestBatchDuplicatePaths(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, mustRead(t, example("trace.json")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again := dir + string(filepath.Separator) + "." + string(filepath.Separator) + "a.json"
	note := func(p string) string { return "toolscore: " + p + ": named more than once, graded once\n" }
	tests := []struct {
		name    string
		args    []string
		sources []string
		stderr  string
	}{
		{"file twice", []string{a, a}, []string{a}, note(a)},
		{"another spelling", []string{a, again}, []string{a}, note(again)},
		{"file then its directory", []string{a, dir}, []string{a, b}, note(a)},
		{"directory then a file in it", []string{dir, b}, []string{a, b}, note(b)},
		{"directory twice", []string{dir, dir + "/"}, []string{a, b}, note(dir + "/")},
		{"standard input is not a path", []string{a, "-"}, []string{a, "<stdin>"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, string(mustRead(t, example("trace.json"))), append([]string{"eval", "--json", example("contract.json")}, tc.args...)...)
			if r.code != exitOK || r.stderr != tc.stderr {
				t.Errorf("exit %d, stderr %q; want 0, %q", r.code, r.stderr, tc.stderr)
			}
			var sources []string
			for line := range strings.Lines(r.stdout) {
				var h struct{ Source string }
				if err := json.Unmarshal([]byte(line), &h); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				sources = append(sources, h.Source)
			}
			if diff := cmp.Diff(tc.sources, sources); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
			// The saved results serve as a baseline of the same traces.
			base := filepath.Join(t.TempDir(), "base.jsonl")
			if err := os.WriteFile(base, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := runBatchCLI(t, string(mustRead(t, example("trace.json"))), append([]string{"eval", "--baseline", base, example("contract.json")}, tc.args...)...); r.code != exitOK {
				t.Errorf("--baseline: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

// TestBatchSymlinks grades a directory whose traces are symbolic links:
// a link to a trace is graded like the trace, a broken link is named as a
// trace that cannot be read, a link to a directory is not followed.
func TestBatchSymlinks(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(example("trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"a.json": abs, "b.json": filepath.Join(dir, "gone.json"), "sub": filepath.Dir(abs)} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := runBatchCLI(t, "", "eval", "--json", example("contract.json"), dir)
	broken := filepath.Join(dir, "b.json")
	if r.code != exitError || r.stderr != "toolscore: "+broken+": no such file or directory\ntoolscore: 1 of 2 traces could not be graded\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"source":"`+filepath.Join(dir, "a.json")+`","score":0.967`) || !strings.Contains(lines[1], `"source":"`+broken+`","error":"no such file or directory"}`) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// TestBatchOrder grades many JSON Lines with more workers than cores and
// checks that the results come out in input order, each the same as
// grading its line alone.
func TestBatchOrder(t *testing.T) {
	const n = 300
	var lines bytes.Buffer
	if err := workload.WritePerfLines(&lines, "small", n); err != nil {
		t.Fatal(err)
	}
	gold, _, err := workload.Perf("small")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goldPath := filepath.Join(dir, "gold.json")
	linesPath := filepath.Join(dir, "small.jsonl")
	if err := os.WriteFile(goldPath, gold, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(linesPath, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBatchCLI(t, "", "eval", "--each-line", "--json", "--jobs", "7", goldPath, linesPath)
	if r.code == exitError {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	out := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(out) != n {
		t.Fatalf("%d result lines, want %d", len(out), n)
	}
	docs := strings.Split(strings.TrimSuffix(lines.String(), "\n"), "\n")
	for i, line := range out {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if want := fmt.Sprintf("%s:%d", linesPath, i+1); got["source"] != want {
			t.Fatalf("line %d: source %v, want %s", i+1, got["source"], want)
		}
		if i%37 != 0 {
			continue
		}
		// The same trace graded alone gives the same result.
		single := runCLI(t, docs[i], "eval", "--json", goldPath, "-")
		var alone map[string]any
		if err := json.Unmarshal([]byte(single.stdout), &alone); err != nil {
			t.Fatal(err)
		}
		delete(got, "source")
		delete(alone, "source")
		delete(got, "format_version")
		delete(alone, "format_version")
		delete(got, "expectation_sha256")
		delete(alone, "expectation_sha256")
		if diff := cmp.Diff(alone, got); diff != "" {
			t.Errorf("line %d graded in the batch differs from alone (-alone +batch):\n%s", i+1, diff)
		}
	}
}

// TestBatchBadInput checks the errors that stop a batch before it
// starts, and those that name one trace.
func TestBatchBadInput(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name   string
		stdin  string
		args   []string
		stderr string
	}{
		{"two stdin", "", []string{"eval", example("contract.json"), "-", "-"}, "toolscore: standard input (-) can be given once\n"},
		{"final answer", "", []string{"eval", "--final-answer", "x", example("contract.json"), example("trace.json"), example("trace.json")},
			"toolscore: --final-answer applies to one trace only, got 2 trace arguments\n"},
		{"bad jobs", "", []string{"eval", "--jobs", "-1", example("contract.json"), example("trace.json"), example("trace.json")},
			"toolscore: --jobs: must be from 1 to 1024, or 0 for one per core, got -1\n"},
		{"bad weights", "", []string{"eval", "--weights", "nope=1", example("contract.json"), example("trace.json"), example("trace.json")},
			"toolscore: --weights: unknown weight \"nope\" (valid: selection_accuracy, argument_f1, sequence_accuracy, redundant_rate, required_call_recall)\n"},
		{"empty dir", "", []string{"eval", example("contract.json"), empty},
			"toolscore: " + empty + ": no trace files (.json, .jsonl, .ndjson, .sse) in the directory\ntoolscore: 1 of 1 traces could not be graded\n"},
		{"stdin lines", "[{\"tool\":\"search_flights\"}]\n\n{\"x\":\n", []string{"eval", "--each-line", example("gold.json"), "-"},
			"toolscore: <stdin>:3: column 6: unexpected end of JSON input: the line ends inside a JSON value, one written across lines or cut short; " + eachLineNeeds + "\ntoolscore: 1 of 2 traces could not be graded\n"},
		// A line is one trace: a second value on it is named where it
		// starts, whether the values would read as JSON Lines or not; a
		// character that starts no value is the syntax error it is, with
		// no pointer (the reader's would count values on the line).
		{"two values on a line", "[{\"tool\":\"search_flights\"}]\n{\"a\":1} {\"b\":2}\n[{\"tool\":\"a\"}][{\"tool\":\"b\"}]\n{\"é\":1}\t[2\n{\"a\":1} x\n",
			[]string{"eval", "--each-line", example("gold.json"), "-"},
			"toolscore: <stdin>:2: column 9: more than one JSON value on the line\n" +
				"toolscore: <stdin>:3: column 15: more than one JSON value on the line\n" +
				"toolscore: <stdin>:4: column 10: more than one JSON value on the line\n" +
				"toolscore: <stdin>:5: column 9: invalid character 'x' after top-level value\n" +
				"toolscore: 4 of 5 traces could not be graded\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, tc.stdin, tc.args...)
			if r.code != exitError {
				t.Errorf("exit %d, want 2", r.code)
			}
			if diff := cmp.Diff(tc.stderr, r.stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBatchCancel cancels a batch after a few results: the run stops with
// the context's error, and what was delivered is a prefix of the input in
// order, with no gap.
func TestBatchCancel(t *testing.T) {
	var lines bytes.Buffer
	if err := workload.WritePerfLines(&lines, "small", 2000); err != nil {
		t.Fatal(err)
	}
	gold, _, err := workload.Perf("small")
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.ParseContract(gold)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seqs []int
	j := &batchJob{
		s: stdio{in: &lines}, contract: c, format: "auto", eachLine: true, jobs: 3, traceArgs: []string{"-"},
		onOutcome: func(o *batchOutcome) {
			seqs = append(seqs, o.seq)
			if len(seqs) == 25 {
				cancel()
			}
		},
	}
	if err := j.run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	if len(seqs) < 25 || len(seqs) > 25+batchWindow(3) {
		t.Errorf("%d results after cancelling at 25 (window %d)", len(seqs), batchWindow(3))
	}
	for i, s := range seqs {
		if s != i {
			t.Fatalf("result %d has seq %d: not in input order", i, s)
		}
	}
}

// TestBatchSecrets checks that the batch path grades with the same secret
// scanner as one trace: a token gitleaks' rules know, in one line of
// many, fails the credentials check and is redacted in the output.
func TestBatchSecrets(t *testing.T) {
	const token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	lines := `[{"tool":"search_flights","args":{"destination":"LIS","note":"` + token + `"}}]` + "\n" +
		`[{"tool":"search_flights","args":{"destination":"LIS"}}]` + "\n"
	r := runBatchCLI(t, lines, "eval", "--each-line", "--json", example("gold.json"), "-")
	if r.code != exitFail {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, token) {
		t.Error("the token is in the output")
	}
	out := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for i, want := range []string{"fail", "pass"} {
		var res struct {
			Checks struct {
				Items []struct{ Name, Status string }
			}
		}
		if err := json.Unmarshal([]byte(out[i]), &res); err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Checks.Items {
			if c.Name == "credentials" && c.Status != want {
				t.Errorf("line %d: credentials %s, want %s", i+1, c.Status, want)
			}
		}
	}
	if !strings.Contains(out[0], `"note":"[REDACTED:github-pat]"`) {
		t.Errorf("line 1 is not redacted: %.300s", out[0])
	}
}

// TestBatchLineAtTheCap checks the --each-line cap on one line: a line of
// exactly maxTraceBytes is graded whether it ends in "\n" or "\r\n", and
// one byte more is an error item naming the line.
func TestBatchLineAtTheCap(t *testing.T) {
	call := `[{"tool":"search_flights"}]`
	line := call + strings.Repeat(" ", maxTraceBytes-len(call))
	stdin := line + "\r\n" + line + "\n" + line + " \n"
	r := runBatchCLI(t, stdin, "eval", "--each-line", "--json", example("gold.json"), "-")
	if r.code != exitError {
		t.Errorf("exit %d, want 2", r.code)
	}
	if want := "toolscore: <stdin>:3: line longer than 64 MiB\ntoolscore: 1 of 3 traces could not be graded\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	if n := strings.Count(r.stdout, "\n"); n != 3 {
		t.Fatalf("%d lines of output, want 3", n)
	}
	for i, l := range strings.SplitN(r.stdout, "\n", 3)[:2] {
		if !strings.Contains(l, `"source":"<stdin>:`+strconv.Itoa(i+1)+`"`) || !strings.Contains(l, `"tool":"search_flights"`) {
			t.Errorf("line %d: %.200s", i+1, l)
		}
	}
}

// TestEvalJobsOneTrace checks that --jobs is validated whatever the
// number of traces: one trace refuses the values a directory refuses.
func TestEvalJobsOneTrace(t *testing.T) {
	for _, jobs := range []string{"-1", "-5", "1025"} {
		r := runCLI(t, "", "eval", "--jobs", jobs, example("contract.json"), example("trace.json"))
		want := result{code: exitError, stderr: "toolscore: --jobs: must be from 1 to 1024, or 0 for one per core, got " + jobs + "\n"}
		if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
			t.Errorf("eval --jobs %s with one trace (-want +got):\n%s", jobs, diff)
		}
	}
	// 0 and 1024 are accepted with one trace, as with many.
	for _, jobs := range []string{"0", "1024"} {
		r := runCLI(t, "", "eval", "--jobs", jobs, example("contract.json"), example("trace.json"))
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("eval --jobs %s with one trace: exit %d, stderr %q; want exit 0, no stderr", jobs, r.code, r.stderr)
		}
	}
}

// TestEachLineSplitValue: a pretty-printed trace given to --each-line is
// a piece of one JSON value on each line; each such line is an error
// saying so and where (the line, the column), and that --each-line needs
// one whole JSON value per line, with no pointer counting values on the
// line. A line that is a whole value is graded; a line broken inside its
// one value keeps the reader's error, pointer included.
func TestEachLineSplitValue(t *testing.T) {
	stdin := "[\n" +
		"  {\"tool\": \"search_flights\",\n" +
		"   \"args\": {\"destination\": \"LIS\"}},\n" +
		"  {\"tool\": \"book_flight\"}\n" +
		"]\n" +
		"[{\"tool\": \"search_flights\", \"args\": {\"date\": }}]\n" +
		"[{\"tool\": \"search_flights\"}]]\n"
	r := runBatchCLI(t, stdin, "eval", "--each-line", "--json", example("gold.json"), "-")
	const need = "--each-line needs one whole JSON value per line (grade a pretty-printed trace without --each-line)"
	wantErrs := []string{
		"<stdin>:1: column 2: unexpected end of JSON input: the line ends inside a JSON value, one written across lines or cut short; " + need,
		"<stdin>:2: column 29: unexpected end of JSON input: the line ends inside a JSON value, one written across lines or cut short; " + need,
		"<stdin>:3: column 10: ':' after a whole JSON value: the line holds part of a JSON value written across lines; " + need,
		"<stdin>:5: column 1: the line starts with ']', inside a JSON value begun on an earlier line: " + need,
		"<stdin>:6: column 46: invalid character '}' looking for beginning of value (at /0/args/date)",
		"<stdin>:7: column 29: ']' after a whole JSON value: the line holds part of a JSON value written across lines; " + need,
	}
	var want strings.Builder
	for _, e := range wantErrs {
		want.WriteString("toolscore: " + e + "\n")
	}
	want.WriteString("toolscore: 6 of 7 traces could not be graded\n")
	if diff := cmp.Diff(want.String(), r.stderr); diff != "" || r.code != exitError {
		t.Errorf("exit %d, stderr (-want +got):\n%s", r.code, diff)
	}
	// With --json, each is its line's "error"; line 4 is graded.
	var got []string
	for line := range strings.Lines(r.stdout) {
		var res struct{ Source, Error string }
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Source+": "+res.Error)
	}
	wantLines := append(append(wantErrs[:3:3], "<stdin>:4: "), wantErrs[3:]...)
	if diff := cmp.Diff(wantLines, got); diff != "" {
		t.Errorf("--json lines (-want +got):\n%s", diff)
	}
}
