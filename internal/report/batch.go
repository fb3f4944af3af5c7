package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
)

// WorstCount is the number of traces a Batch keeps in Worst.
const WorstCount = 5

// MaxErrors is the number of unreadable traces a Batch keeps in Errors
// (Failures counts them all).
const MaxErrors = 20

// TraceLine is one graded trace of a batch.
type TraceLine struct {
	// Seq is the trace's 0-based position in the input.
	Seq int `json:"seq"`
	// Source is the file, or file:line, the trace came from.
	Source string `json:"source"`
	// Score, Grade and Passed are the result's.
	Score  float64      `json:"score"`
	Grade  engine.Grade `json:"grade"`
	Passed bool         `json:"passed"`
	// Issue is the result's top issue (see TopIssue).
	Issue string `json:"issue"`
}

// TraceError is a trace that could not be read or graded.
type TraceError struct {
	Seq    int    `json:"seq"`
	Source string `json:"source"`
	Error  string `json:"error"`
}

// Batch aggregates the results of many traces graded against one
// expectation, fed in input order by Add and AddError. Its memory does not
// grow with the number of traces: it keeps counts, the WorstCount lowest
// scores and the first MaxErrors errors.
type Batch struct {
	// Expectation names the contract or gold file; Kind describes it
	// ("contract v2", "gold file, 10 expected calls").
	Expectation string `json:"expectation"`
	Kind        string `json:"kind"`
	// Traces counts every trace, errors included; Passed, Failed and
	// Failures (unreadable or ungradable traces) split it.
	Traces   int `json:"traces"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Failures int `json:"errors"`
	// Grades counts the graded traces by grade.
	Grades map[engine.Grade]int `json:"grades"`
	// ScoreSum is the sum of the graded traces' scores.
	ScoreSum float64 `json:"-"`
	// Histogram counts graded scores in ten bins: [0,0.1), ...,
	// [0.9,1].
	Histogram [10]int `json:"histogram"`
	// Worst are the WorstCount lowest-scored traces, lowest first (ties
	// in input order).
	Worst []TraceLine `json:"worst"`
	// Errors are the first MaxErrors traces that could not be graded.
	Errors []TraceError `json:"error_list"`
	// Duration is the run's wall-clock time.
	Duration time.Duration `json:"-"`
	// Diff compares the run with a baseline (see CompareWith); nil
	// without one.
	Diff *BatchDiff `json:"diff,omitempty"`
}

// NewBatch returns an empty Batch for the named expectation.
func NewBatch(expectation, kind string) *Batch {
	return &Batch{Expectation: expectation, Kind: kind, Grades: map[engine.Grade]int{}}
}

// Add counts one graded trace.
func (b *Batch) Add(seq int, source string, res *engine.EvaluationResult) {
	b.AddGraded(seq, source, Summarize(res, b.Diff != nil))
}

// Graded is what a Batch keeps of one graded trace.
type Graded struct {
	// Score, Grade and Passed are the result's.
	Score  float64
	Grade  engine.Grade
	Passed bool
	// Issue is the result's top issue (TopIssue).
	Issue string
	// Safety names the safety checks that failed, when Summarize was
	// asked for them (a Batch compared with a baseline needs them).
	Safety []string
}

// Summarize is what a Batch keeps of res (Add is AddGraded of it; with
// safety, the failed safety checks too, which a Batch with a baseline
// needs). Its texts are copies: it stays valid when res and its trace are
// gone or their memory is reused (a format.Reader's next trace).
func Summarize(res *engine.EvaluationResult, safety bool) Graded {
	g := Graded{Score: res.Score, Grade: res.Grade, Passed: res.Passed, Issue: TopIssue(res)}
	if len(res.Issues) > 0 && res.Issues[0].Tool == "" {
		g.Issue = strings.Clone(g.Issue) // the issue's own text, not a new one
	}
	if safety {
		g.Safety = safetyFailures(res.Checks.Items)
		for i, s := range g.Safety {
			g.Safety[i] = strings.Clone(s)
		}
	}
	return g
}

// AddGraded counts one graded trace, summarized (Summarize, with safety
// when b has a baseline).
func (b *Batch) AddGraded(seq int, source string, g Graded) {
	b.Traces++
	if g.Passed {
		b.Passed++
	} else {
		b.Failed++
	}
	b.Grades[g.Grade]++
	b.ScoreSum += g.Score
	if b.Diff != nil {
		b.Diff.compare(seq, source, g)
	}
	bin := int(g.Score * 10)
	b.Histogram[min(max(bin, 0), 9)]++
	if len(b.Worst) == WorstCount && g.Score >= b.Worst[WorstCount-1].Score {
		return
	}
	line := TraceLine{Seq: seq, Source: source, Score: g.Score, Grade: g.Grade, Passed: g.Passed, Issue: g.Issue}
	at := len(b.Worst)
	for at > 0 && b.Worst[at-1].Score > g.Score {
		at--
	}
	if len(b.Worst) < WorstCount {
		b.Worst = append(b.Worst, TraceLine{})
	}
	copy(b.Worst[at+1:], b.Worst[at:len(b.Worst)-1])
	b.Worst[at] = line
}

// AddError counts one trace that could not be graded, and why.
func (b *Batch) AddError(seq int, source, msg string) {
	b.Traces++
	b.Failures++
	if b.Diff != nil {
		if e, ok := b.Diff.Base.entries[source]; ok && !e.seen {
			e.seen = true
			b.Diff.Matched++
		} else {
			b.Diff.New++
		}
	}
	if len(b.Errors) < MaxErrors {
		b.Errors = append(b.Errors, TraceError{Seq: seq, Source: source, Error: msg})
	}
}

// Graded is the number of traces that were graded (passed or failed).
func (b *Batch) Graded() int { return b.Passed + b.Failed }

// PassRate is Passed / Traces in [0,1] (errors count as not passed); 0
// for no traces.
func (b *Batch) PassRate() float64 {
	if b.Traces == 0 {
		return 0
	}
	return float64(b.Passed) / float64(b.Traces)
}

// MeanScore is the mean score of the graded traces; 0 when none was.
func (b *Batch) MeanScore() float64 {
	if b.Graded() == 0 {
		return 0
	}
	return b.ScoreSum / float64(b.Graded())
}

// SummaryLine is "3/4 passed (75.0%), 1 failed, 0 errors; mean score
// 87.3%; grades A 3, F 1", the words of the harness's summary.
func (b *Batch) SummaryLine() string {
	line := fmt.Sprintf("%d/%d passed (%s), %d failed, %d error%s; mean score %s",
		b.Passed, b.Traces, Percent(b.PassRate()), b.Failed, b.Failures, plural(b.Failures), Percent(b.MeanScore()))
	if g := GradeMix(b.Grades); g != "" {
		line += "; grades " + g
	}
	return line
}

// TopIssue is the one-line reason a result did not get full marks: its
// first (most important) issue as "tool: problem", else, when it failed,
// "score 0.850 below min_score 0.900"; "" otherwise.
func TopIssue(res *engine.EvaluationResult) string {
	switch {
	case len(res.Issues) > 0:
		is := res.Issues[0]
		if is.Tool == "" {
			return is.Problem
		}
		return is.Tool + ": " + is.Problem
	case !res.Passed:
		return fmt.Sprintf("score %.3f below min_score %.3f", res.Score, res.MinScore)
	}
	return ""
}

// Grades lists the grades in order, A first.
var Grades = []engine.Grade{engine.GradeA, engine.GradeB, engine.GradeC, engine.GradeD, engine.GradeF}

// GradeMix is "A 4, B 1, F 1" in grade order, "" when empty.
func GradeMix(grades map[engine.Grade]int) string {
	var parts []string
	for _, g := range Grades {
		if n := grades[g]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", g, n))
		}
	}
	return strings.Join(parts, ", ")
}

// Percent formats a share in [0,1] as "95.7%".
func Percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// Score formats a score in [0,1] with three decimals.
func Score(x float64) string { return fmt.Sprintf("%.3f", x) }

// Delta formats a signed difference of scores: "+0.050", "-0.120",
// "±0.000".
func Delta(x float64) string {
	switch {
	case x > 5e-4:
		return fmt.Sprintf("+%.3f", x)
	case x < -5e-4:
		return fmt.Sprintf("%.3f", x)
	}
	return "±0.000"
}

// DeltaPercent formats a signed difference of shares in percentage
// points: "+12.5 pts", "-50.0 pts", "±0.0 pts".
func DeltaPercent(x float64) string {
	switch {
	case x > 5e-4:
		return fmt.Sprintf("+%.1f pts", 100*x)
	case x < -5e-4:
		return fmt.Sprintf("%.1f pts", 100*x)
	}
	return "±0.0 pts"
}

// Duration rounds d for display: "850µs", "12ms", "1.52s".
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
