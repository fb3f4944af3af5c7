package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/report"
)

// maxIssues is how many "top issues to fix" the human output lists; --json
// carries them all.
const maxIssues = 10

// painter adds ANSI colours when enabled. go-pretty's own colour switch is
// a process-wide variable that looks at TERM and NO_COLOR but not at
// whether stdout is a terminal, so the CLI decides for itself.
type painter bool

func (p painter) paint(s string, codes ...string) string {
	if !p || s == "" || len(codes) == 0 {
		return s
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[0m"
}

// ANSI SGR codes.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
)

func (p painter) bold(s string) string { return p.paint(s, sgrBold) }
func (p painter) dim(s string) string  { return p.paint(s, sgrDim) }

// status colours a check status or verdict word.
func (p painter) status(st engine.CheckStatus, s string) string {
	switch st {
	case engine.CheckPass:
		return p.paint(s, sgrGreen)
	case engine.CheckFail:
		return p.paint(s, sgrRed)
	}
	return p.paint(s, sgrYellow)
}

// gradeColor colours a grade: A and B green, C and D yellow, F red.
func (p painter) grade(g engine.Grade) string {
	switch g {
	case engine.GradeA, engine.GradeB:
		return p.paint(string(g), sgrBold, sgrGreen)
	case engine.GradeC, engine.GradeD:
		return p.paint(string(g), sgrBold, sgrYellow)
	}
	return p.paint(string(g), sgrBold, sgrRed)
}

// newTable returns a go-pretty table in the CLI's house style: light
// rounded borders, headers as written (not upper-cased).
func newTable() table.Writer {
	t := table.NewWriter()
	t.SetStyle(table.StyleRounded)
	t.Style().Format.Header = text.FormatDefault
	return t
}

// indent prefixes every line of s with pad.
func indent(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// fmtScore formats a value in [0,1] with three decimals.
func fmtScore(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// fmtDelta formats a change of score as fmtScore does, with its sign:
// "+0.500", "-0.125", and "+0.000" for a change that rounds to none (a
// float's -1e-16 too, which fmtScore writes "-0.000").
func fmtDelta(v float64) string {
	s := fmtScore(v)
	if s == "-0.000" {
		s = "0.000"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// fmtNum formats a number in its shortest exact form ("0.9").
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// evalReport renders one evaluation for a person.
type evalReport struct {
	stdio
	expPath, tracePath string
	contract           *engine.Contract
	parsed             *format.Parsed
	res                *engine.EvaluationResult
}

// write prints the report on r.out: the boxed verdict, a summary, the
// metrics, for contracts the alternatives, the top issues to fix and the
// evidence.
func (r *evalReport) write() error {
	p := painter(r.color)
	var b strings.Builder
	r.writeVerdict(&b, p)
	r.writeSummary(&b, p)
	r.writeMetrics(&b, p)
	r.writeAlternatives(&b, p)
	writeIssues(&b, p, r.res.Issues)
	writeEvidence(&b, p, r.res.Checks, r.res.TraceCalls)
	_, err := io.WriteString(r.text(), b.String())
	return err
}

// writeVerdict prints the boxed "Grade A   PASS (95.7%)" line.
func (r *evalReport) writeVerdict(b *strings.Builder, p painter) {
	verdict := p.paint("PASS", sgrBold, sgrGreen)
	if !r.res.Passed {
		verdict = p.paint("FAIL", sgrBold, sgrRed)
	}
	t := newTable()
	t.AppendRow(table.Row{fmt.Sprintf("Grade %s   %s (%.1f%%)", p.grade(r.res.Grade), verdict, r.res.Score*100)})
	b.WriteString(t.Render())
	b.WriteString("\n")
}

// writeSummary prints what was compared, the score against the passing
// score, and the safety gate when it decided the verdict or was off.
func (r *evalReport) writeSummary(b *strings.Builder, p painter) {
	c := r.contract
	exp := fmt.Sprintf("contract v%d", c.Version)
	if c.Gold {
		exp = fmt.Sprintf("gold file, %d expected call%s", len(r.res.ExpectedCalls), plural(len(r.res.ExpectedCalls)))
	}
	n := len(r.parsed.Trace.Calls)
	answer := "final answer"
	if r.res.FinalAnswer == nil {
		answer = "no final answer"
	}
	fmt.Fprintf(b, "%-12s %s (%s)\n", "Expectation", r.expPath, exp)
	if len(c.IgnoredKeys) > 0 {
		fmt.Fprintf(b, "%-12s %s\n", "Ignored", ignoredKeys(c.IgnoredKeys))
	}
	fmt.Fprintf(b, "%-12s %s (%s, %d call%s, %s)\n", "Trace", r.tracePath, r.parsed.Format, n, plural(n), answer)
	if w := r.parsed.Warning; w != "" {
		fmt.Fprintf(b, "%-12s %s\n", "Warning", p.paint(flat(w), sgrYellow))
	}
	fmt.Fprintf(b, "%-12s %s (min score %s)\n", "Score", fmtScore(r.res.Score), fmtNum(r.res.MinScore))
	switch {
	case !r.res.SafetyGate:
		fmt.Fprintf(b, "%-12s off (--no-safety-gate)\n", "Safety gate")
	case !r.res.Passed && engine.PassesMinScore(r.res.Score, r.res.MinScore):
		var failed []string
		for _, ch := range r.res.Checks.Items {
			if ch.Status == engine.CheckFail && (ch.Name == "forbidden-calls" || ch.Name == "credentials") {
				failed = append(failed, ch.Name)
			}
		}
		fmt.Fprintf(b, "%-12s %s: %s failed (--no-safety-gate turns the gate off)\n",
			"Safety gate", p.paint("FAIL", sgrBold, sgrRed), strings.Join(failed, " and "))
	}
}

// writeMetrics prints the composite's metrics with their effective weights,
// then the metrics outside the composite.
func (r *evalReport) writeMetrics(b *strings.Builder, p painter) {
	m := r.res.Metrics
	w := m.Weights
	t := newTable()
	t.AppendHeader(table.Row{"metric", "value", "weight", "detail"})
	t.AppendRows([]table.Row{
		{"selection_accuracy", fmtScore(m.SelectionAccuracy), fmtScore(w.SelectionAccuracy), ""},
		{"argument_f1", fmtScore(m.Arguments.F1), fmtScore(w.ArgumentF1),
			fmt.Sprintf("precision %s, recall %s", fmtScore(m.Arguments.Precision), fmtScore(m.Arguments.Recall))},
		{"sequence_accuracy", fmtScore(m.Sequence.SequenceAccuracy), fmtScore(w.SequenceAccuracy),
			"edit distance " + fmtNum(m.Sequence.EditDistance)},
		{"1 - redundant_rate", fmtScore(1 - m.Efficiency.RedundantRate), fmtScore(w.RedundantRate),
			fmt.Sprintf("%d redundant of %d scored call%s", m.Efficiency.RedundantCount, m.Efficiency.TotalCalls, plural(m.Efficiency.TotalCalls))},
		{"required_call_recall", fmtScore(m.RequiredCallRecall), fmtScore(w.RequiredCallRecall), ""},
	})
	t.AppendSeparator()
	t.AppendRows([]table.Row{
		{"invocation_accuracy", fmtScore(m.InvocationAccuracy), "-", ""},
		{"tool_correctness", fmtScore(m.ToolCorrectness.ToolCorrectness), "-", report.ToolDiff(m.ToolCorrectness)},
	})
	t.SetColumnConfigs([]table.ColumnConfig{
		{Number: 2, Align: text.AlignRight},
		{Number: 3, Align: text.AlignRight},
	})
	fmt.Fprintf(b, "\n%s\n%s\n", p.bold("Metrics"), t.Render())
}

// groups returns the contract's alternatives groups in combination order.
func groups(c *engine.Contract) []*engine.Group {
	var gs []*engine.Group
	for _, st := range c.Required {
		if st.Group != nil {
			gs = append(gs, st.Group)
		}
	}
	return gs
}

// writeAlternatives prints, for a contract, the option chosen per group,
// every combination's score and the optional calls left out of the score.
func (r *evalReport) writeAlternatives(b *strings.Builder, p painter) {
	cm := r.res.Metrics.Contract
	if cm == nil {
		return
	}
	gs := groups(r.contract)
	if len(gs) > 0 {
		fmt.Fprintf(b, "\n%s (%d combination%s)\n", p.bold("Alternatives"),
			len(cm.Alternatives.Combinations), plural(len(cm.Alternatives.Combinations)))
		chosen := make([]int, len(gs))
		for i, ch := range cm.Alternatives.Chosen {
			if i < len(chosen) {
				chosen[i] = ch.Option
			}
			if i < len(gs) {
				fmt.Fprintf(b, "  chosen  %s: %s\n", report.GroupName(gs[i], i), report.OptionLabel(gs[i], ch.Option))
			}
		}
		t := newTable()
		header := table.Row{"#"}
		for i, g := range gs {
			header = append(header, report.GroupName(g, i))
		}
		header = append(header, "score", "")
		t.AppendHeader(header)
		for n, combo := range cm.Alternatives.Combinations {
			row := table.Row{n}
			same := len(combo.Options) == len(chosen)
			for k, o := range combo.Options {
				if k < len(gs) {
					row = append(row, report.OptionLabel(gs[k], o))
				}
				if same && chosen[k] != o {
					same = false
				}
			}
			mark := ""
			if same {
				mark = p.bold("chosen")
			}
			row = append(row, fmtScore(combo.Score), mark)
			t.AppendRow(row)
		}
		t.SetColumnConfigs([]table.ColumnConfig{{Number: len(gs) + 2, Align: text.AlignRight}})
		fmt.Fprintf(b, "%s\n", indent(t.Render(), "  "))
	}
	if len(cm.OptionalMatched) > 0 {
		items := make([]string, len(cm.OptionalMatched))
		for i, idx := range cm.OptionalMatched {
			items[i] = fmt.Sprintf("%s #%d", r.toolAt(idx), idx)
		}
		fmt.Fprintf(b, "\n%s %s\n", p.bold("Optional, left out of the score:"), strings.Join(items, ", "))
	}
}

// toolAt is the tool name of trace call i.
func (r *evalReport) toolAt(i int) string { return toolAt(r.res.TraceCalls, i) }

// toolAt is the tool name of calls[i] ("?" when out of range).
func toolAt(calls []engine.ToolCall, i int) string {
	if i < 0 || i >= len(calls) {
		return "?"
	}
	return flat(calls[i].Tool)
}

// writeIssues prints the ranked "Top issues to fix": "  1. tool  problem"
// then the fix below it.
func writeIssues(b *strings.Builder, p painter, issues []engine.Issue) {
	fmt.Fprintf(b, "\n%s\n", p.bold("Top issues to fix"))
	if len(issues) == 0 {
		b.WriteString("  none\n")
		return
	}
	for i, is := range issues {
		if i == maxIssues {
			fmt.Fprintf(b, "  … and %d more (--json lists them all)\n", len(issues)-maxIssues)
			break
		}
		num := fmt.Sprintf("%d.", i+1)
		if is.Severity == engine.SeverityCritical {
			num = p.paint(num, sgrBold, sgrRed)
		} else {
			num = p.bold(num)
		}
		line := flat(is.Problem)
		if is.Tool != "" {
			line = p.bold(flat(is.Tool)) + "  " + line
		}
		fmt.Fprintf(b, "  %s %s\n", num, line)
		if is.Fix != "" {
			pad := strings.Repeat(" ", len(strconv.Itoa(i+1))+4)
			fmt.Fprintf(b, "%s%s %s\n", pad, p.dim("fix:"), flat(is.Fix))
		}
	}
}

// writeEvidence prints the counts line and, below it, each failed or
// unknown check with its detail, the calls involved and its findings.
func writeEvidence(b *strings.Builder, p painter, cs engine.Checks, calls []engine.ToolCall) {
	fmt.Fprintf(b, "\n%s %s pass, %s fail, %s unknown\n", p.bold("Evidence:"),
		p.status(engine.CheckPass, strconv.Itoa(cs.Pass)),
		p.status(engine.CheckFail, strconv.Itoa(cs.Fail)),
		p.status(engine.CheckUnknown, strconv.Itoa(cs.Unknown)))
	width := 0
	for _, ch := range cs.Items {
		if ch.Status != engine.CheckPass {
			width = max(width, len(ch.Name))
		}
	}
	for _, ch := range cs.Items {
		if ch.Status == engine.CheckPass {
			continue
		}
		line := fmt.Sprintf("  %s  %-*s  %s", p.status(ch.Status, fmt.Sprintf("%-7s", ch.Status)), width, ch.Name, flat(ch.Detail))
		if len(ch.Calls) > 0 {
			line += "  " + p.dim(callRefs(ch.Calls))
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		pad := strings.Repeat(" ", 2+7+2+width+2)
		for _, f := range ch.Findings {
			where := "final answer"
			if f.Call >= 0 {
				where = fmt.Sprintf("%s #%d", toolAt(calls, f.Call), f.Call)
			}
			parts := []string{where}
			for _, s := range []string{f.Path, f.Rule, f.Value} {
				if s != "" {
					parts = append(parts, flat(s))
				}
			}
			fmt.Fprintf(b, "%s%s\n", pad, strings.Join(parts, "  "))
		}
	}
}

// callRefs is "(calls #1, #3)": trace indexes, 0-based as everywhere in
// results and in the checks' details.
func callRefs(idx []int) string {
	parts := make([]string, len(idx))
	for i, n := range idx {
		parts[i] = "#" + strconv.Itoa(n)
	}
	word := "calls"
	if len(idx) == 1 {
		word = "call"
	}
	return "(" + word + " " + strings.Join(parts, ", ") + ")"
}

// ignoredKeys summarises a gold file's ignored keys (their JSON pointers)
// on one line: how many, and their distinct names.
func ignoredKeys(pointers []string) string {
	seen := map[string]bool{}
	var names []string
	for _, p := range pointers {
		k := p[strings.LastIndexByte(p, '/')+1:]
		if !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("%d key%s of the calls toolscore does not read (%s; Python Toolscore's extras)", len(pointers), plural(len(pointers)), strings.Join(names, ", "))
}
