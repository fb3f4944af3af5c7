package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/report"
)

// verdictText is "PASS" or "FAIL", coloured.
func verdictText(p painter, passed bool) string {
	if passed {
		return p.paint("PASS", sgrGreen)
	}
	return p.paint("FAIL", sgrRed)
}

// regressionLine is "Regression: none (...)" or "REGRESSION: reasons".
func regressionLine(p painter, reasons []string, maxDrop float64) string {
	if len(reasons) == 0 {
		return fmt.Sprintf("%s none (max drop %s)", p.bold("Regression:"), fmtNum(maxDrop))
	}
	return fmt.Sprintf("%s %s", p.paint("REGRESSION:", sgrBold, sgrRed), strings.Join(reasons, "; "))
}

// writeDiffText prints one trace's comparison with its baseline below the
// report: the verdict line, every metric side by side, the changed
// checks, the calls that appeared or disappeared, new and fixed issues,
// and whether it is a regression.
func writeDiffText(w io.Writer, p painter, d *report.Diff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s: grade %s %s %s → grade %s %s %s (%s)\n", p.bold("Baseline"), d.Baseline,
		d.Old.Grade, verdictText(p, d.Old.Passed), fmtScore(d.Old.Score),
		d.New.Grade, verdictText(p, d.New.Passed), fmtScore(d.New.Score), report.Delta(d.New.Score-d.Old.Score))
	t := newTable()
	t.AppendHeader(table.Row{"metric", "baseline", "now", "change"})
	for _, m := range d.Metrics {
		t.AppendRow(table.Row{m.Name, fmtScore(m.Old), fmtScore(m.New), report.Delta(m.Delta)})
	}
	t.SetColumnConfigs([]table.ColumnConfig{
		{Number: 2, Align: text.AlignRight}, {Number: 3, Align: text.AlignRight}, {Number: 4, Align: text.AlignRight},
	})
	b.WriteString(t.Render() + "\n")
	for _, c := range d.Checks {
		fmt.Fprintf(&b, "  check %s: %s → %s\n", c.Name, p.status(c.Old, string(c.Old)), p.status(c.New, string(c.New)))
	}
	for _, l := range []struct {
		title string
		items []string
	}{{"Calls that appeared", d.Appeared}, {"Calls that disappeared", d.Disappeared}} {
		if len(l.items) > 0 {
			fmt.Fprintf(&b, "%s\n", p.bold(l.title))
			for _, it := range l.items {
				fmt.Fprintf(&b, "  %s\n", it)
			}
		}
	}
	for _, l := range []struct {
		title string
		items []engine.Issue
	}{{"New issues", d.NewIssues}, {"Fixed issues", d.FixedIssues}} {
		if len(l.items) > 0 {
			fmt.Fprintf(&b, "%s\n", p.bold(l.title))
			for _, is := range l.items {
				line := is.Problem
				if is.Tool != "" {
					line = is.Tool + "  " + line
				}
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
	}
	b.WriteString(regressionLine(p, d.Regressions, d.MaxDrop) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBatchDiffText prints the comparison of many traces with their
// baseline below the summary.
func writeBatchDiffText(w io.Writer, p painter, bt *report.Batch) error {
	d := bt.Diff
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s: %d trace%s, pass rate %s → %s (%s), mean score %s → %s (%s)\n", p.bold("Baseline"), d.Baseline,
		d.Base.Traces, plural(d.Base.Traces), report.Percent(d.Base.PassRate()), report.Percent(bt.PassRate()), report.DeltaPercent(bt.PassRate()-d.Base.PassRate()),
		fmtScore(d.Base.MeanScore()), fmtScore(bt.MeanScore()), report.Delta(bt.MeanScore()-d.Base.MeanScore()))
	fmt.Fprintf(&b, "  %d matched, %d new, %d missing; %d PASS → FAIL, %d FAIL → PASS\n", d.Matched, d.New, d.Missing(), d.PassToFail, d.FailToPass)
	if len(d.Regressions) > 0 {
		t := newTable()
		t.AppendHeader(table.Row{"trace", "baseline", "now", "change", "why"})
		for _, c := range d.Regressions {
			t.AppendRow(table.Row{c.Source, fmtScore(c.Old.Score) + " " + verdictText(p, c.Old.Passed),
				fmtScore(c.New.Score) + " " + verdictText(p, c.New.Passed), report.Delta(c.New.Score - c.Old.Score), strings.Join(c.Reasons, "; ")})
		}
		t.SetColumnConfigs([]table.ColumnConfig{{Number: 4, Align: text.AlignRight}, {Number: 5, WidthMax: 60, WidthMaxEnforcer: text.WrapSoft}})
		fmt.Fprintf(&b, "%s\n%s\n", p.bold("Regressions (worst first)"), t.Render())
	}
	if d.Regressed > 0 {
		fmt.Fprintf(&b, "%s %d trace%s regressed\n", p.paint("REGRESSION:", sgrBold, sgrRed), d.Regressed, plural(d.Regressed))
	} else {
		fmt.Fprintf(&b, "%s none (max drop %s per trace)\n", p.bold("Regression:"), fmtNum(d.MaxDrop))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHarnessDiffText prints a harness run's comparison with its
// baseline below the report: every task whose outcome or score changed,
// then whether the run regressed.
func writeHarnessDiffText(w io.Writer, p painter, d *report.HarnessDiff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s: %d PASS → FAIL or ERROR, %d → PASS\n", p.bold("Baseline"), d.Baseline, d.PassToFail, d.FailToPass)
	t := newTable()
	t.AppendHeader(table.Row{"task", "baseline", "now", "change", "why"})
	rows := 0
	for i := range d.Tasks {
		c := &d.Tasks[i]
		old := "new"
		if c.Old != nil {
			old = sideText(c.Old)
			if c.Flip() == "" && len(c.Reasons) == 0 && c.Delta > -5e-4 && c.Delta < 5e-4 {
				continue
			}
		}
		change := ""
		if c.Old != nil && c.Old.Outcome != harness.OutcomeError && c.New.Outcome != harness.OutcomeError {
			change = report.Delta(c.Delta)
		}
		t.AppendRow(table.Row{c.ID, old, sideText(&c.New), change, strings.Join(c.Reasons, "; ")})
		rows++
	}
	if rows > 0 {
		t.SetColumnConfigs([]table.ColumnConfig{{Number: 4, Align: text.AlignRight}, {Number: 5, WidthMax: 60, WidthMaxEnforcer: text.WrapSoft}})
		b.WriteString(t.Render() + "\n")
	} else {
		b.WriteString("  no task changed\n")
	}
	if len(d.Missing) > 0 {
		fmt.Fprintf(&b, "  not in this run: %s\n", strings.Join(d.Missing, ", "))
	}
	if d.Regressed > 0 {
		fmt.Fprintf(&b, "%s %d task%s regressed\n", p.paint("REGRESSION:", sgrBold, sgrRed), d.Regressed, plural(d.Regressed))
	} else {
		fmt.Fprintf(&b, "%s none (max drop %s per task)\n", p.bold("Regression:"), fmtNum(d.MaxDrop))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sideText is "PASS 0.967" or "ERROR".
func sideText(s *report.TaskSide) string {
	word := strings.ToUpper(string(s.Outcome))
	if s.Outcome == harness.OutcomeError {
		return word
	}
	return word + " " + fmtScore(s.Score)
}
