package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
)

// The HTML reports are one self-contained file each: inline CSS and SVG,
// no script, no fetch (a Content-Security-Policy forbids any), every text
// escaped by html/template. Results are shown as the engine returns them,
// secrets already redacted.

//go:embed html.tmpl
var templateFS embed.FS

// pageTemplate returns the page template, parsed on first use (about 2.6
// million instructions, which a run that writes no HTML report does not
// spend at start).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("html.tmpl").Funcs(template.FuncMap{
		"score":    Score,
		"percent":  Percent,
		"delta":    Delta,
		"deltapct": DeltaPercent,
		"verdict":  verdictWord,
		"status":   statusWord,
		"bar":      func(x float64) float64 { return 120 * min(max(x, 0), 1) },
		"dur":      Duration,
		"join":     strings.Join,
		"outcome":  outcomeWord,
		"lower":    strings.ToLower,
		"add1":     func(i int) int { return i + 1 },
		"num":      num,
		"add":      func(a, b int) int { return a + b },
		"mul":      func(a, b int) int { return a * b },
		"sub":      func(a, b float64) float64 { return a - b },
		"int":      func(x float64) int { return int(x) },
	}).ParseFS(templateFS, "html.tmpl"))
})

// page is what the template renders: one of Eval, Batch and Harness.
type page struct {
	Title   string
	Eval    *evalView
	Batch   *batchView
	Harness *harnessView
}

// evalView is one trace's report.
type evalView struct {
	*Eval
	Metrics []MetricRow
	Values  []float64 // each metric row's value, for the bars
	Alts    *AlternativesView
	Calls   []callView
	// MoreCalls counts the calls after the timeline's MaxTimelineCalls.
	MoreCalls int
	// FinalAnswer is the trace's final answer, clipped; nil for none.
	FinalAnswer *string
	Issues      []engine.Issue
	More        int // issues beyond MaxIssues
	Gate        string
}

// MaxTimelineCalls is how many calls the HTML report's timeline shows
// (the first ones; it says how many more there are).
const MaxTimelineCalls = 500

// MaxShownRunes is how many characters of one text (a call's arguments,
// result or error, the final answer) the HTML report shows; it says how
// many more there are.
const MaxShownRunes = 4000

// clipText is s cut to MaxShownRunes characters, with how many were left
// out.
func clipText(s string) string {
	if utf8.RuneCountInString(s) <= MaxShownRunes {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (%d more characters)", string(r[:MaxShownRunes]), len(r)-MaxShownRunes)
}

// callView is one call of the timeline.
type callView struct {
	Index  int
	Tool   string
	Marks  []string // scored, optional, forbidden, error, extra
	Args   string   // indented JSON, or the unreadable text
	Result string
	Error  string
}

// batchView is the report of many traces.
type batchView struct {
	*Batch
	Verdict   string
	GradeBars []gradeBar
	HistBars  []histBar
}

type gradeBar struct {
	Grade engine.Grade
	Count int
	Width float64
}

type histBar struct {
	Label  string
	Count  int
	X      int
	Height float64
}

// harnessView is a harness run's report.
type harnessView struct {
	Report  *harness.Report
	Diff    *HarnessDiff
	Summary string
	Rows    []taskRow
}

type taskRow struct {
	N       int
	Task    *harness.TaskResult
	Change  *TaskChange
	Issue   string
	Verdict string
}

// WriteEvalHTML writes one trace's report as one self-contained HTML
// page: the verdict, the metrics, for contracts every combination's score
// and the chosen path, the trace as a timeline of calls marked scored,
// optional, forbidden, error or extra with their arguments, the ranked
// issues, the evidence checks and, with a baseline, the comparison.
func WriteEvalHTML(w io.Writer, e *Eval) error {
	res := e.Result
	v := &evalView{Eval: e, Metrics: MetricRows(res), Alts: Alternatives(e.Contract, res), Gate: safetyGateFailure(res)}
	m := res.Metrics
	v.Values = []float64{m.SelectionAccuracy, m.Arguments.F1, m.Sequence.SequenceAccuracy, 1 - m.Efficiency.RedundantRate,
		m.RequiredCallRecall, m.InvocationAccuracy, m.ToolCorrectness.ToolCorrectness}
	v.Issues = res.Issues
	if len(v.Issues) > MaxIssues {
		v.More = len(v.Issues) - MaxIssues
		v.Issues = v.Issues[:MaxIssues]
	}
	var forbidden []int
	for _, c := range res.Checks.Items {
		if c.Name == "forbidden-calls" && c.Status == engine.CheckFail {
			forbidden = c.Calls
		}
	}
	var optional []int
	if m.Contract != nil {
		optional = m.Contract.OptionalMatched
	}
	if fa := res.FinalAnswer; fa != nil {
		clipped := clipText(*fa)
		v.FinalAnswer = &clipped
	}
	shown := min(len(res.TraceCalls), MaxTimelineCalls)
	v.MoreCalls = len(res.TraceCalls) - shown
	marks := make([]string, shown) // the score's mark of each shown call
	for _, set := range []struct {
		idx  []int
		mark string
	}{{optional, "optional"}, {res.ScoredIndexes, "scored"}} {
		for _, i := range set.idx {
			if i >= 0 && i < shown {
				marks[i] = set.mark
			}
		}
	}
	for i := range res.TraceCalls[:shown] {
		c := &res.TraceCalls[i]
		cv := callView{Index: i, Tool: clipText(c.Tool), Args: clipText(indentJSON(c.Args.Any())), Error: clipText(string(c.Error))}
		if c.ArgsError != "" {
			cv.Args = clipText(c.ArgsRaw) + "\n(unreadable: " + c.ArgsError + ")"
		}
		if c.HasResult() {
			cv.Result = clipText(indentJSON(c.Result.Any()))
		}
		if marks[i] == "" {
			marks[i] = "not scored"
		}
		cv.Marks = append(cv.Marks, marks[i])
		if slices.Contains(forbidden, i) {
			cv.Marks = append(cv.Marks, "forbidden")
		}
		if c.Failed() {
			cv.Marks = append(cv.Marks, "error")
		}
		v.Calls = append(v.Calls, cv)
	}
	title := fmt.Sprintf("toolscore: %s %s (%s) — %s", verdictWord(res.Passed), res.Grade, Percent(res.Score), e.Trace)
	return render(w, &page{Title: title, Eval: v})
}

// WriteBatchHTML writes the report of many traces as one self-contained
// HTML page: the summary with the grade mix and a histogram of the scores
// (inline SVG), the worst traces, the traces that could not be graded and,
// with a baseline, the comparison.
func WriteBatchHTML(w io.Writer, b *Batch) error {
	v := &batchView{Batch: b, Verdict: "PASS"}
	switch {
	case b.Failures > 0:
		v.Verdict = "ERROR"
	case b.Failed > 0 || b.Traces == 0:
		v.Verdict = "FAIL"
	}
	most := 1
	for _, g := range Grades {
		most = max(most, b.Grades[g])
	}
	for _, g := range Grades {
		v.GradeBars = append(v.GradeBars, gradeBar{g, b.Grades[g], 240 * float64(b.Grades[g]) / float64(most)})
	}
	most = 1
	for _, n := range b.Histogram {
		most = max(most, n)
	}
	for i, n := range b.Histogram {
		v.HistBars = append(v.HistBars, histBar{fmt.Sprintf("%.1f", float64(i)/10), n, 10 + 36*i, 100 * float64(n) / float64(most)})
	}
	title := fmt.Sprintf("toolscore: %s, %d/%d traces passed — %s", v.Verdict, b.Passed, b.Traces, b.Expectation)
	return render(w, &page{Title: title, Batch: v})
}

// WriteHarnessHTML writes a harness run's report as one self-contained
// HTML page: the summary, with a baseline the comparison, and every task
// in suite order with its outcome, score, change and top issue.
func WriteHarnessHTML(w io.Writer, r *harness.Report, d *HarnessDiff) error {
	v := &harnessView{Report: r, Diff: d, Summary: harnessSummary(&r.Summary)}
	byID := map[string]*TaskChange{}
	if d != nil {
		for i := range d.Tasks {
			byID[d.Tasks[i].ID] = &d.Tasks[i]
		}
	}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		v.Rows = append(v.Rows, taskRow{N: i + 1, Task: t, Change: byID[t.ID], Issue: t.TopIssue(), Verdict: outcomeWord(t.Outcome)})
	}
	verdict := "PASS"
	if !r.AllPassed() {
		verdict = "FAIL"
	}
	title := fmt.Sprintf("toolscore harness: %s, %d/%d tasks passed — %s", verdict, r.Summary.Passed, r.Summary.Tasks, r.Suite)
	return render(w, &page{Title: title, Harness: v})
}

// render executes the page template into w.
func render(w io.Writer, p *page) error {
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, p); err != nil {
		return fmt.Errorf("render HTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// indentJSON is v as indented JSON, HTML characters unescaped (the
// template escapes them).
func indentJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
