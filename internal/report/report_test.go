package report

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/secrets"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// compareGolden compares got with testdata/name.golden, rewriting it
// under -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got; -update rewrites it):\n%s", path, diff)
	}
}

// example reads a file of examples/contracts or of the CLI's testdata.
func example(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// grade grades a trace file against a contract file of the repository.
func grade(t *testing.T, contractPath, tracePath string) (*engine.Contract, *format.Parsed, *engine.EvaluationResult) {
	t.Helper()
	c, err := engine.ParseContract(example(t, contractPath))
	if err != nil {
		t.Fatal(err)
	}
	p, err := format.Parse(example(t, tracePath), "auto")
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{SecretScanner: secrets.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c, p, res
}

const (
	contractFile = "examples/contracts/contract.json"
	goodTrace    = "examples/contracts/trace.json"
	unsafeTrace  = "cmd/toolscore/testdata/unsafe-trace.json"
)

// evalFixture is the report of the flight example's trace against its
// contract, compared with a baseline when base is a trace file.
func evalFixture(t *testing.T, tracePath, base string) *Eval {
	t.Helper()
	c, p, res := grade(t, contractFile, tracePath)
	e := &Eval{Expectation: "contract.json", Kind: "contract v2", Contract: c, Trace: filepath.Base(tracePath), Format: p.Format, Result: res}
	if base != "" {
		_, _, old := grade(t, contractFile, base)
		e.Diff = Compare("base.json", old, res, DefaultMaxDrop)
	}
	return e
}

// htmlText is the text content of an HTML page, one trimmed text node per
// line, style sheets left out.
func htmlText(t *testing.T, page string) string {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	var lines []string
	skip := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(lines, "\n") + "\n"
		case html.StartTagToken:
			name, _ := z.TagName()
			skip = string(name) == "style"
		case html.EndTagToken:
			skip = false
		case html.TextToken:
			if s := strings.Join(strings.Fields(string(z.Text())), " "); s != "" && !skip {
				lines = append(lines, s)
			}
		}
	}
}

// TestEvalReports pins the Markdown and the HTML text of one trace's
// report, without and with a baseline (an improvement and a regression).
func TestEvalReports(t *testing.T) {
	tests := []struct{ name, trace, base string }{
		{"eval", goodTrace, ""},
		{"eval_unsafe", unsafeTrace, ""},
		{"eval_improved", goodTrace, unsafeTrace},
		{"eval_regressed", unsafeTrace, goodTrace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := evalFixture(t, tc.trace, tc.base)
			var md, page bytes.Buffer
			if err := WriteEvalMarkdown(&md, e); err != nil {
				t.Fatal(err)
			}
			if err := WriteEvalHTML(&page, e); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, tc.name+".md", md.String())
			compareGolden(t, tc.name+".html.txt", htmlText(t, page.String()))
		})
	}
}

// TestCompare checks the comparison's exact findings: the unsafe trace
// against the good one's baseline regresses three ways.
func TestCompare(t *testing.T) {
	d := evalFixture(t, unsafeTrace, goodTrace).Diff
	want := []string{
		"score dropped by 0.179 (0.967 → 0.788), more than the 0.05 allowed",
		"verdict went from PASS to FAIL",
		"the forbidden-calls check newly fails",
		"the credentials check newly fails",
	}
	if diff := cmp.Diff(want, d.Regressions); diff != "" {
		t.Errorf("Regressions (-want +got):\n%s", diff)
	}
	if !d.Regressed() {
		t.Error("not a regression")
	}
	back := evalFixture(t, goodTrace, unsafeTrace).Diff
	if back.Regressed() {
		t.Errorf("the fix is a regression: %v", back.Regressions)
	}
	if len(back.Disappeared) == 0 || len(back.FixedIssues) == 0 {
		t.Errorf("no disappeared calls or fixed issues: %+v", back)
	}
	same := evalFixture(t, goodTrace, goodTrace).Diff
	if same.Regressed() || len(same.Appeared)+len(same.Disappeared)+len(same.NewIssues)+len(same.FixedIssues)+len(same.Checks) != 0 {
		t.Errorf("a result against itself changed: %+v", same)
	}
}

// TestMaxDrop checks the score rule at its edge: a drop of exactly
// max-drop is tolerated, one beyond it is not.
func TestMaxDrop(t *testing.T) {
	old := Side{Score: 0.80, Passed: false}
	if r := regressions(old, Side{Score: 0.75}, nil, nil, 0.05); len(r) != 0 {
		t.Errorf("a drop of exactly 0.05: %v", r)
	}
	if r := regressions(old, Side{Score: 0.7499}, nil, nil, 0.05); len(r) != 1 {
		t.Errorf("a drop of 0.0501: %v, want one reason", r)
	}
	if r := regressions(Side{Score: 0.5}, Side{Score: 0.5}, []string{"credentials"}, []string{"credentials"}, 0); len(r) != 0 {
		t.Errorf("a safety failure already in the baseline: %v", r)
	}
}

// batchFixture grades the good and the unsafe trace as a batch of three,
// compared with a baseline in which the unsafe one passed.
func batchFixture(t *testing.T) *Batch {
	t.Helper()
	c, _, good := grade(t, contractFile, goodTrace)
	_, _, bad := grade(t, contractFile, unsafeTrace)
	sha, err := ExpectationSHA256(example(t, contractFile))
	if err != nil {
		t.Fatal(err)
	}
	var base bytes.Buffer
	for _, l := range []struct {
		src string
		res *engine.EvaluationResult
	}{{"runs/a.json", good}, {"runs/b.json", good}, {"runs/gone.json", bad}} {
		line, err := AppendSaved(nil, Header{ExpectationSHA256: sha, Source: l.src}, l.res)
		if err != nil {
			t.Fatal(err)
		}
		base.Write(append(line, '\n'))
	}
	bb, err := ReadBatchBaseline(&base, "base.jsonl", sha, c, "contract.json")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBatch("contract.json", "contract v2")
	b.CompareWith(bb, DefaultMaxDrop)
	b.Add(0, "runs/a.json", good)
	b.Add(1, "runs/b.json", bad)
	b.AddError(2, "runs/c.json", "line 2:1: unexpected end of JSON input")
	b.Add(3, "runs/new.json", good)
	b.Duration = 1500 * time.Millisecond
	return b
}

// TestBatchReports pins the Markdown and HTML text of many traces
// compared with a baseline.
func TestBatchReports(t *testing.T) {
	b := batchFixture(t)
	d := b.Diff
	if d.Matched != 2 || d.New != 2 || d.Missing() != 1 || d.PassToFail != 1 || d.Regressed != 1 {
		t.Errorf("matched %d new %d missing %d pass→fail %d regressed %d; want 2 2 1 1 1", d.Matched, d.New, d.Missing(), d.PassToFail, d.Regressed)
	}
	var md, page bytes.Buffer
	if err := WriteBatchMarkdown(&md, b); err != nil {
		t.Fatal(err)
	}
	if err := WriteBatchHTML(&page, b); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "batch.md", md.String())
	compareGolden(t, "batch.html.txt", htmlText(t, page.String()))
}

// harnessFixture is a report with one task of each outcome.
func harnessFixture() *harness.Report {
	tasks := []harness.TaskResult{
		{ID: "book-lisbon", Outcome: harness.OutcomePass, Attempts: 1, Duration: 12 * time.Millisecond, Format: "openai",
			Labels: map[string]string{"kind": "booking"},
			Result: &engine.EvaluationResult{Score: 0.957, Grade: engine.GradeA, Passed: true, MinScore: 0.9,
				Issues: []engine.Issue{{Kind: "arguments", Severity: engine.SeverityLow, Tool: "reserve_seat", Problem: "`reserve_seat` called with unexpected arguments (unexpected: seat)"}}}},
		{ID: "change-date", Outcome: harness.OutcomeFail, Attempts: 1, Duration: 8 * time.Millisecond, Format: "openai",
			Result: &engine.EvaluationResult{Score: 0.825, Grade: engine.GradeB, Passed: false, MinScore: 0.8,
				Issues: []engine.Issue{
					{Kind: "forbidden-call", Severity: engine.SeverityCritical, Tool: "cancel_booking", Problem: "forbidden call | change the booking instead", Fix: "remove the cancel_booking call"},
					{Kind: "redundant", Severity: engine.SeverityLow, Tool: "cancel_booking", Problem: "extra call"},
				},
				Checks: engine.Checks{Fail: 1, Items: []engine.Check{{Name: "forbidden-calls", Status: engine.CheckFail, Detail: "cancel_booking called at 3"}}}}},
		{ID: "book-with-bag", Outcome: harness.OutcomeFail, Attempts: 2, Duration: 1500 * time.Millisecond, Format: "anthropic",
			Result: &engine.EvaluationResult{Score: 0.858, Grade: engine.GradeB, Passed: false, MinScore: 0.9}},
		{ID: "flight-status", Outcome: harness.OutcomeError, Attempts: 3, Duration: 2*time.Second + 40*time.Millisecond,
			Reason: "agent answered 503 Service Unavailable <busy> (after 3 attempts)"},
	}
	return &harness.Report{
		Suite:     "flight-booking",
		RunID:     "6f1c2a9e-0000-4000-8000-000000000001",
		StartedAt: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC),
		Duration:  2100 * time.Millisecond,
		Tasks:     tasks,
		Summary:   harness.Summarize(tasks),
	}
}

// harnessBaseline is the fixture's report as it was a week before: the
// change-date task passed without its forbidden call, book-with-bag scored
// higher, flight-status passed, and a task since removed.
func harnessBaseline(t *testing.T) *HarnessBaseline {
	t.Helper()
	old := harnessFixture()
	old.Tasks[1].Outcome = harness.OutcomePass
	old.Tasks[1].Result = &engine.EvaluationResult{Score: 0.9, Grade: engine.GradeA, Passed: true, MinScore: 0.8}
	old.Tasks[2].Result = &engine.EvaluationResult{Score: 0.88, Grade: engine.GradeB, Passed: false, MinScore: 0.9}
	old.Tasks[3] = harness.TaskResult{ID: "flight-status", Outcome: harness.OutcomePass,
		Result: &engine.EvaluationResult{Score: 1, Grade: engine.GradeA, Passed: true, MinScore: 0.9}}
	old.Tasks = append(old.Tasks, harness.TaskResult{ID: "refund", Outcome: harness.OutcomeFail,
		Result: &engine.EvaluationResult{Score: 0.5, Grade: engine.GradeF, MinScore: 0.9}})
	var buf bytes.Buffer
	if err := harness.WriteJSON(&buf, old); err != nil {
		t.Fatal(err)
	}
	b, err := ReadHarnessBaseline(&buf, "last-week.json", "flight-booking")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHarnessReports pins the harness Markdown (the harness's former
// output without a baseline) and HTML text, without and with a baseline.
func TestHarnessReports(t *testing.T) {
	rep := harnessFixture()
	d := CompareHarness(harnessBaseline(t), rep, DefaultMaxDrop)
	if d.Regressed != 2 || d.PassToFail != 2 || d.FailToPass != 0 || !slicesEqual(d.Missing, []string{"refund"}) {
		t.Errorf("regressed %d pass→fail %d fail→pass %d missing %v; want 2 2 0 [refund]", d.Regressed, d.PassToFail, d.FailToPass, d.Missing)
	}
	for _, tc := range []struct {
		name string
		diff *HarnessDiff
	}{{"harness", nil}, {"harness_baseline", d}} {
		var md, page bytes.Buffer
		if err := WriteHarnessMarkdown(&md, rep, tc.diff); err != nil {
			t.Fatal(err)
		}
		if err := WriteHarnessHTML(&page, rep, tc.diff); err != nil {
			t.Fatal(err)
		}
		compareGolden(t, tc.name+".md", md.String())
		compareGolden(t, tc.name+".html.txt", htmlText(t, page.String()))
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestHTMLEscapes checks that text from a trace cannot inject markup: an
// issue, a tool name and arguments holding HTML come out escaped, and the
// page loads nothing from the network.
func TestHTMLEscapes(t *testing.T) {
	e := evalFixture(t, goodTrace, "")
	res := *e.Result
	res.Issues = []engine.Issue{{Tool: `<img src=x onerror=alert(1)>`, Problem: "</td><script>alert(2)</script>", Fix: `" onmouseover="x`}}
	res.TraceCalls = []engine.ToolCall{{Tool: "<b>t</b>", Args: jsondoc.MustFromAny(map[string]any{"q": "</pre><script>alert(3)</script>"})}}
	e.Result = &res
	var page, md bytes.Buffer
	if err := WriteEvalHTML(&page, e); err != nil {
		t.Fatal(err)
	}
	out := page.String()
	for _, bad := range []string{"<script", "<img", "<b>t", `" onmouseover`, "http://", "https://", `src="`, `href="`} {
		if strings.Contains(out, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(2)&lt;/script&gt;") {
		t.Error("the issue's text is not shown escaped")
	}
	if err := WriteEvalMarkdown(&md, e); err != nil {
		t.Fatal(err)
	}
	if unescaped := strings.ReplaceAll(md.String(), `\<`, ""); strings.Contains(unescaped, "<script") || strings.Contains(unescaped, "<img") {
		t.Errorf("the Markdown lets HTML through:\n%s", md.String())
	}
}

// TestReadSaved checks which files are baselines of one trace and the
// errors for the others, each naming the file and why.
func TestReadSaved(t *testing.T) {
	c, err := engine.ParseContract(example(t, contractFile))
	if err != nil {
		t.Fatal(err)
	}
	gold, err := engine.ParseContract(example(t, "examples/contracts/gold.json"))
	if err != nil {
		t.Fatal(err)
	}
	sha, _ := ExpectationSHA256(example(t, contractFile))
	_, _, res := grade(t, contractFile, goodTrace)
	var saved bytes.Buffer
	if err := WriteSavedIndented(&saved, Header{ExpectationSHA256: sha}, res); err != nil {
		t.Fatal(err)
	}
	// Today's eval --json output, without the header: format version 1.
	legacy := example(t, "cmd/toolscore/testdata/eval_contract_json.golden")
	legacy = bytes.Replace(legacy, []byte(`"format_version": 1,`), nil, 1)
	legacy = bytes.Replace(legacy, []byte(`"expectation_sha256": "`+sha+`",`), nil, 1)
	var rep bytes.Buffer
	if err := harness.WriteJSON(&rep, harnessFixture()); err != nil {
		t.Fatal(err)
	}
	read := func(data []byte) (*Saved, error) {
		var got *Saved
		err := ReadSaved(bytes.NewReader(data), "base.json", func(s *Saved) error { got = s; return nil })
		return got, err
	}
	for _, tc := range []struct {
		name string
		data []byte
		c    *engine.Contract
		err  string
	}{
		{"saved", saved.Bytes(), c, ""},
		{"legacy", legacy, c, ""},
		{"legacy against a gold file", legacy, gold, "base.json: was graded against another expectation than exp.json (a contract, not a gold file); save a new baseline with toolscore eval --json"},
		{"another contract", saved.Bytes(), gold, "base.json: was graded against another expectation than exp.json (sha256 " + sha[:12] + ", exp.json has 000000000000); save a new baseline with toolscore eval --json"},
		{"newer", []byte(`{"format_version": 7, "score": 1}`), c, "base.json: line 1:20: format_version 7 was written by a newer toolscore (this one reads up to 1): upgrade toolscore"},
		{"version as a string", []byte(`{"format_version": "1", "score": 1}`), c, `base.json: line 1:20: format_version "1" is not a version number`},
		{"score as a string", []byte("{\n  \"format_version\": 1,\n  \"score\": \"x\"\n}\n"), c, "base.json: line 3:12: /score: must be a number, got string"},
		{"nested type", []byte(`{"format_version": 1, "grade": "A", "metrics": {"weights": {"selection_accuracy": "x"}}}`), c, "base.json: line 1:83: /metrics/weights/selection_accuracy: must be a number, got string"},
		{"harness report", rep.Bytes(), c, "base.json: line 1:1: is a harness report, not an eval result (use it with toolscore harness --baseline)"},
		{"not a result", []byte(`{"calls": []}`), c, "base.json: line 1:1: not a saved result: no grade and metrics (want the output of toolscore eval --json)"},
		{"broken", []byte(`{"score": `), c, "base.json: line 1:11: unexpected end of JSON input"},
		{"broken, indented", []byte("{\n  \"score\": 1,\n  \"grade\": x\n}\n"), c, "base.json: line 3:12: /grade: invalid character 'x' looking for beginning of value"},
		{"empty", nil, c, "base.json: file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := read(tc.data)
			if err == nil {
				id := sha
				if tc.c == gold {
					id = strings.Repeat("0", 64)
				}
				err = CheckExpectation("base.json", s, id, tc.c, "exp.json")
			}
			got := ""
			if err != nil {
				got = err.Error()
				var be *BaselineError
				var se *SavedError
				if !errors.As(err, &be) && !errors.As(err, &se) {
					t.Errorf("%T is not a *BaselineError or *SavedError", err)
				}
			}
			if got != tc.err {
				t.Errorf("error %q\nwant %q", got, tc.err)
			}
			if tc.err == "" && (s.Result == nil || s.Result.Score != res.Score || s.FormatVersion != 1) {
				t.Errorf("read back %+v", s)
			}
		})
	}
}

// TestReadHarnessBaselineErrors checks the errors of a harness baseline.
func TestReadHarnessBaselineErrors(t *testing.T) {
	_, _, res := grade(t, contractFile, goodTrace)
	line, _ := AppendSaved(nil, Header{}, res)
	for _, tc := range []struct{ name, data, err string }{
		{"another suite", `{"suite": "other", "tasks": []}`, `r.json: is a report of suite "other", not "flight-booking"`},
		{"eval result", string(line), "r.json: is an eval result, not a harness report (use it with toolscore eval --baseline)"},
		{"newer", `{"format_version": 2, "suite": "flight-booking", "tasks": []}`, "r.json: line 1:20: format_version 2 was written by a newer toolscore (this one reads up to 1): upgrade toolscore"},
		{"version as a string", `{"format_version": "1", "suite": "flight-booking", "tasks": []}`, `r.json: line 1:20: format_version "1" is not a version number`},
		{"legacy", `{"suite": "flight-booking", "tasks": [{"id": "a", "outcome": "pass", "result": {"score": 1, "grade": "A", "passed": true}}]}`, ""},
		{"twice", `{"suite": "flight-booking", "tasks": [{"id": "a", "outcome": "error"}, {"id": "a", "outcome": "error"}]}`, `r.json: line 1:79: /tasks/1/id: task "a" is in the report twice`},
		{"empty", " \n", "r.json: file is empty"},
		{"not JSON", "{\"suite\": \"flight-booking\",\n  \"tasks\": [x]}", "r.json: line 2:13: /tasks/0: invalid character 'x' looking for beginning of value"},
		{"cut short", `{"suite": "flight-booking", "tasks": [`, "r.json: line 1:39: /tasks: unexpected end of JSON input"},
		{"two reports", `{"suite": "flight-booking", "tasks": []} {}`, "r.json: line 1:42: invalid character '{' after top-level value"},
		{"an array", `[{"suite": "flight-booking", "tasks": []}]`, "r.json: line 1:1: not a harness report: a JSON array, want an object"},
		{"outcome a number", "{\"suite\": \"flight-booking\", \"tasks\": [\n  {\"id\": \"a\", \"outcome\": 3}\n]}", "r.json: line 2:26: /tasks/0/outcome: must be a string, got number"},
		{"score a string", `{"suite": "flight-booking", "tasks": [{"id": "a", "outcome": "pass", "result": {"score": "1"}}]}`, "r.json: line 1:90: /tasks/0/result/score: must be a number, got string"},
		{"tasks an object", `{"suite": "flight-booking", "tasks": {}}`, "r.json: line 1:38: /tasks: must be an array, got object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHarnessBaseline(strings.NewReader(tc.data), "r.json", "flight-booking")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
		})
	}
}

// TestHTMLLongTrace checks that the HTML report of a trace of many calls
// with long texts stays a page a person can read: the first
// MaxTimelineCalls calls, then how many more there are, each argument and
// result clipped to MaxShownRunes characters with how many were left out,
// the final answer too.
func TestHTMLLongTrace(t *testing.T) {
	e := evalFixture(t, goodTrace, "")
	res := *e.Result
	long := strings.Repeat("é", MaxShownRunes+500)
	res.TraceCalls = nil
	for i := range MaxTimelineCalls + 250 {
		res.TraceCalls = append(res.TraceCalls, engine.ToolCall{Tool: "search_flights", Args: jsondoc.MustFromAny(map[string]any{"i": i, "q": long}), Result: jsondoc.MustFromAny(long)})
	}
	answer := long
	res.FinalAnswer = &answer
	e.Result = &res
	var page bytes.Buffer
	if err := WriteEvalHTML(&page, e); err != nil {
		t.Fatal(err)
	}
	text := htmlText(t, page.String())
	for _, want := range []string{
		fmt.Sprintf("Trace: %d calls", MaxTimelineCalls+250),
		fmt.Sprintf("#%d search_flights", MaxTimelineCalls-1),
		"… and 250 more calls (toolscore eval --json lists them all)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(text, fmt.Sprintf("#%d search_flights", MaxTimelineCalls)) {
		t.Errorf("the page shows call #%d", MaxTimelineCalls)
	}
	// Arguments (the JSON's quote and indent before the text), result and
	// final answer, each clipped.
	if n := strings.Count(text, "… (500 more characters)"); n != 1 {
		t.Errorf("%d final answers clipped to %d characters, want 1", n, MaxShownRunes)
	}
	if n := strings.Count(page.String(), " more characters)"); n != 2*MaxTimelineCalls+1 {
		t.Errorf("%d clipped texts, want %d", n, 2*MaxTimelineCalls+1)
	}
	if page.Len() > 2*MaxTimelineCalls*2*(MaxShownRunes+200) {
		t.Errorf("the page is %d bytes", page.Len())
	}
}
