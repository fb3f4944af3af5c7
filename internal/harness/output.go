package harness

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/toolscore/toolscore/internal/engine"
)

// TextOptions tune WriteText.
type TextOptions struct {
	// Color adds ANSI colours (for a terminal).
	Color bool
}

// WriteText writes the report for a person: a table of the tasks in suite
// order, then the summary line, the failing tasks with their top issue and
// the slowest tasks.
func WriteText(w io.Writer, r *Report, opts TextOptions) error {
	p := paint(opts.Color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %d task%s in %s  run %s\n\n", p.bold("Suite "+r.Suite), len(r.Tasks), plural(len(r.Tasks)), fmtDuration(r.Duration), r.RunID)
	t := table.NewWriter()
	t.SetStyle(table.StyleLight)
	t.Style().Options.SeparateRows = false
	t.AppendHeader(table.Row{"#", "Task", "Outcome", "Score", "Grade", "Time", "Top issue"})
	t.SetColumnConfigs([]table.ColumnConfig{
		{Number: 1, Align: text.AlignRight},
		{Number: 4, Align: text.AlignRight},
		{Number: 6, Align: text.AlignRight},
		{Number: 7, WidthMax: 60, WidthMaxEnforcer: text.WrapSoft},
	})
	for i := range r.Tasks {
		tr := &r.Tasks[i]
		score, grade := "-", "-"
		if tr.Result != nil {
			score, grade = fmtPercent(tr.Result.Score), string(tr.Result.Grade)
		}
		t.AppendRow(table.Row{i + 1, tr.ID, p.outcome(tr.Outcome, 0), score, grade, fmtDuration(tr.Duration), tr.TopIssue()})
	}
	b.WriteString(t.Render())
	b.WriteString("\n\n")
	b.WriteString(summaryLine(&r.Summary, p) + "\n")
	if len(r.Summary.Failing) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.bold("Failing tasks"))
		width := 0
		for _, f := range r.Summary.Failing {
			width = max(width, len(f.ID))
		}
		for _, f := range r.Summary.Failing {
			fmt.Fprintf(&b, "  %-*s  %s  %s\n", width, f.ID, p.outcome(f.Outcome, 5), f.Issue)
		}
	}
	if len(r.Summary.Slowest) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.bold("Slowest tasks"))
		width := 0
		for _, s := range r.Summary.Slowest {
			width = max(width, len(s.ID))
		}
		for _, s := range r.Summary.Slowest {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, s.ID, fmtDuration(s.Duration))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryLine is "4/6 passed (66.7%), 1 failed, 1 error; mean score 88.1%;
// grades A 4, B 1".
func summaryLine(s *Summary, p paint) string {
	line := fmt.Sprintf("%s (%s), %d failed, %d error%s; mean score %s",
		p.bold(fmt.Sprintf("%d/%d passed", s.Passed, s.Tasks)), fmtPercent(s.PassRate),
		s.Failed, s.Errors, plural(s.Errors), fmtPercent(s.MeanScore))
	if g := gradeMix(s.Grades); g != "" {
		line += "; grades " + g
	}
	return line
}

// gradeMix is "A 4, B 1, F 1" in grade order, "" when empty.
func gradeMix(grades map[engine.Grade]int) string {
	var parts []string
	for _, g := range []engine.Grade{engine.GradeA, engine.GradeB, engine.GradeC, engine.GradeD, engine.GradeF} {
		if n := grades[g]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", g, n))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// JUnit XML (the schema Jenkins, GitLab and GitHub test reporters read):
// one <testsuite> for the suite, one <testcase> per task. A failed task
// has a <failure>, an errored one an <error>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// WriteJUnit writes the report as JUnit XML so CI systems show each task
// as a test case (classname is the suite's name). A failed task carries a
// <failure> with its issues, an errored one an <error> with the reason;
// every graded task's score, grade and format are in <system-out>.
func WriteJUnit(w io.Writer, r *Report) error {
	s := &r.Summary
	js := junitSuite{
		Name: r.Suite, Tests: s.Tasks, Failures: s.Failed, Errors: s.Errors,
		Time: junitSeconds(r.Duration), Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{"run_id", r.RunID},
			{"pass_rate", fmt.Sprintf("%.4f", s.PassRate)},
			{"mean_score", fmt.Sprintf("%.4f", s.MeanScore)},
		},
	}
	for i := range r.Tasks {
		tr := &r.Tasks[i]
		c := junitCase{Name: tr.ID, Classname: r.Suite, Time: junitSeconds(tr.Duration)}
		switch tr.Outcome {
		case OutcomeError:
			c.Error = &junitProblem{Message: tr.Reason, Type: "error", Text: xmlSafe(tr.Reason)}
		case OutcomeFail:
			c.Failure = &junitProblem{Message: tr.TopIssue(), Type: "fail", Text: xmlSafe(issueList(tr.Result))}
		}
		if tr.Result != nil {
			c.SystemOut = fmt.Sprintf("score %.4f grade %s min_score %.4f format %s attempts %d",
				tr.Result.Score, tr.Result.Grade, tr.Result.MinScore, tr.Format, tr.Attempts)
		}
		js.Cases = append(js.Cases, c)
	}
	doc := junitSuites{
		Name: "toolscore harness", Tests: s.Tasks, Failures: s.Failed, Errors: s.Errors,
		Time: js.Time, Suites: []junitSuite{js},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// issueList is a failed result's score line and every issue with its fix,
// one per line.
func issueList(res *engine.EvaluationResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "score %.4f (grade %s), min_score %.4f\n", res.Score, res.Grade, res.MinScore)
	for i, is := range res.Issues {
		fmt.Fprintf(&b, "%d. [%s] %s: %s", i+1, is.Severity, is.Tool, is.Problem)
		if is.Fix != "" {
			fmt.Fprintf(&b, " (fix: %s)", is.Fix)
		}
		b.WriteString("\n")
	}
	for _, c := range res.Checks.Items {
		if c.Status == engine.CheckFail {
			fmt.Fprintf(&b, "check %s failed: %s\n", c.Name, c.Detail)
		}
	}
	return b.String()
}

// xmlSafe replaces what XML 1.0 cannot carry even in CDATA (control
// characters other than tab and line breaks, invalid UTF-8) with U+FFFD;
// agents' error messages may hold terminal escapes. (encoding/xml does
// this for attributes and character data, not for CDATA.)
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == utf8.RuneError, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func junitSeconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// fmtPercent formats a share in [0,1] as "95.7%".
func fmtPercent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// fmtDuration rounds d for display: "850µs", "12ms", "1.52s".
func fmtDuration(d time.Duration) string {
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

func outcomeWord(o Outcome) string { return strings.ToUpper(string(o)) }

// paint adds ANSI colours when true.
type paint bool

func (p paint) wrap(s, code string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p paint) bold(s string) string { return p.wrap(s, "1") }

// outcome is the outcome's word, padded to width, coloured.
func (p paint) outcome(o Outcome, width int) string {
	w := fmt.Sprintf("%-*s", width, outcomeWord(o))
	switch o {
	case OutcomePass:
		return p.wrap(w, "32")
	case OutcomeFail:
		return p.wrap(w, "31")
	}
	return p.wrap(w, "33")
}
