package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
)

// Eval is one graded trace, as the reports show it.
type Eval struct {
	// Expectation names the contract or gold file; Kind describes it
	// ("contract v2", "gold file, 2 expected calls").
	Expectation string
	Kind        string
	// Contract is the parsed expectation (for the alternatives' names).
	Contract *engine.Contract
	// Trace names the trace file; Format is the format it was read as.
	Trace  string
	Format string
	// Result is the evaluation result, secrets redacted as the engine
	// returns it.
	Result *engine.EvaluationResult
	// Diff compares it with a baseline; nil without one.
	Diff *Diff
}

// MaxIssues is how many issues the reports list; the JSON has them all.
const MaxIssues = 10

// WriteEvalMarkdown writes one trace's report as GitHub-flavoured
// Markdown, for a pull-request comment or $GITHUB_STEP_SUMMARY: the
// verdict, what was compared, the metrics, for contracts every
// combination's score and the chosen path, the ranked issues, the
// evidence checks and, with a baseline, the comparison.
func WriteEvalMarkdown(w io.Writer, e *Eval) error {
	var b strings.Builder
	res := e.Result
	fmt.Fprintf(&b, "## toolscore: %s, grade %s (%s)\n\n", verdictWord(res.Passed), res.Grade, Percent(res.Score))
	n := len(res.TraceCalls)
	fmt.Fprintf(&b, "%s (%s, %d call%s) against %s (%s): score %s, min score %s",
		mdCode(e.Trace), mdText(e.Format), n, plural(n), mdCode(e.Expectation), mdText(e.Kind), Score(res.Score), num(res.MinScore))
	if !res.SafetyGate {
		b.WriteString(", safety gate off")
	}
	b.WriteString(".\n")
	if g := safetyGateFailure(res); g != "" {
		fmt.Fprintf(&b, "\n**Safety gate: FAIL** (%s failed).\n", g)
	}
	if e.Diff != nil {
		writeDiffMarkdown(&b, e.Diff)
	}
	b.WriteString("\n### Metrics\n\n| metric | value | weight | detail |\n|---|--:|--:|---|\n")
	for _, m := range MetricRows(res) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", m.Name, m.Value, m.Weight, mdCell(m.Detail))
	}
	if alts := Alternatives(e.Contract, res); alts != nil {
		fmt.Fprintf(&b, "\n### Alternatives (%d combination%s)\n\n", len(alts.Rows), plural(len(alts.Rows)))
		for _, c := range alts.Chosen {
			fmt.Fprintf(&b, "- chosen for %s: %s\n", mdText(c.Group), mdText(c.Option))
		}
		b.WriteString("\n| # |")
		for _, g := range alts.Groups {
			fmt.Fprintf(&b, " %s |", mdCell(g))
		}
		b.WriteString(" score | |\n|--:|")
		b.WriteString(strings.Repeat("---|", len(alts.Groups)))
		b.WriteString("--:|---|\n")
		for _, r := range alts.Rows {
			fmt.Fprintf(&b, "| %d |", r.Index)
			for _, o := range r.Options {
				fmt.Fprintf(&b, " %s |", mdCell(o))
			}
			mark := ""
			if r.Chosen {
				mark = "**chosen**"
			}
			fmt.Fprintf(&b, " %s | %s |\n", Score(r.Score), mark)
		}
	}
	b.WriteString("\n### Top issues to fix\n\n")
	writeIssuesMarkdown(&b, res.Issues)
	c := res.Checks
	fmt.Fprintf(&b, "\n### Evidence: %d pass, %d fail, %d unknown\n\n| check | status | detail |\n|---|---|---|\n", c.Pass, c.Fail, c.Unknown)
	for _, ch := range c.Items {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", ch.Name, statusWord(ch.Status), mdCell(ch.Detail))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeIssuesMarkdown writes a ranked issue list.
func writeIssuesMarkdown(b *strings.Builder, issues []engine.Issue) {
	if len(issues) == 0 {
		b.WriteString("None.\n")
		return
	}
	for i, is := range issues {
		if i == MaxIssues {
			fmt.Fprintf(b, "\n… and %d more (`--json` lists them all).\n", len(issues)-MaxIssues)
			break
		}
		line := mdText(is.Problem)
		if is.Tool != "" {
			line = "**" + mdText(is.Tool) + "** " + line
		}
		if is.Severity == engine.SeverityCritical {
			line += " (critical)"
		}
		fmt.Fprintf(b, "%d. %s", i+1, line)
		if is.Fix != "" {
			fmt.Fprintf(b, "  \n   fix: %s", mdText(is.Fix))
		}
		b.WriteString("\n")
	}
}

// writeDiffMarkdown writes the comparison of one trace with its baseline.
func writeDiffMarkdown(b *strings.Builder, d *Diff) {
	fmt.Fprintf(b, "\n### Compared with the baseline %s\n\n", mdCode(d.Baseline))
	if d.Regressed() {
		fmt.Fprintf(b, "**Regression:** %s.\n\n", mdText(strings.Join(d.Regressions, "; ")))
	} else {
		fmt.Fprintf(b, "No regression (a drop of more than %s, PASS → FAIL or a new safety failure would be one).\n\n", num(d.MaxDrop))
	}
	b.WriteString("| | baseline | now | change |\n|---|--:|--:|--:|\n")
	fmt.Fprintf(b, "| verdict | %s | %s | %s |\n", verdictWord(d.Old.Passed), verdictWord(d.New.Passed), flip(d.Old.Passed, d.New.Passed))
	fmt.Fprintf(b, "| grade | %s | %s | |\n", d.Old.Grade, d.New.Grade)
	for _, m := range d.Metrics {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", m.Name, Score(m.Old), Score(m.New), Delta(m.Delta))
	}
	for _, c := range d.Checks {
		fmt.Fprintf(b, "| check %s | %s | %s | |\n", c.Name, statusWord(c.Old), statusWord(c.New))
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(b, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(b, "- %s\n", mdCode(it))
		}
	}
	list("Calls that appeared", d.Appeared)
	list("Calls that disappeared", d.Disappeared)
	issues := func(title string, items []engine.Issue) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(b, "\n%s:\n", title)
		for _, is := range items {
			line := mdText(is.Problem)
			if is.Tool != "" {
				line = "**" + mdText(is.Tool) + "** " + line
			}
			fmt.Fprintf(b, "- %s\n", line)
		}
	}
	issues("New issues", d.NewIssues)
	issues("Fixed issues", d.FixedIssues)
}

// WriteBatchMarkdown writes the report of many traces: the summary, the
// worst traces, the traces that could not be graded and, with a baseline,
// the comparison.
func WriteBatchMarkdown(w io.Writer, bt *Batch) error {
	var b strings.Builder
	verdict := "PASS"
	switch {
	case bt.Failures > 0:
		verdict = "ERROR"
	case bt.Failed > 0 || bt.Traces == 0:
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "## toolscore: %s, %d/%d traces passed\n\n", verdict, bt.Passed, bt.Traces)
	fmt.Fprintf(&b, "%d trace%s against %s (%s).\n\n%s.\n", bt.Traces, plural(bt.Traces), mdCode(bt.Expectation), mdText(bt.Kind), bt.SummaryLine())
	if d := bt.Diff; d != nil {
		writeBatchDiffMarkdown(&b, bt, d)
	}
	if len(bt.Worst) > 0 {
		b.WriteString("\n### Worst traces\n\n| trace | score | grade | verdict | top issue |\n|---|--:|:-:|---|---|\n")
		for _, l := range bt.Worst {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCodeCell(l.Source), Score(l.Score), l.Grade, verdictWord(l.Passed), mdCell(l.Issue))
		}
	}
	if len(bt.Errors) > 0 {
		fmt.Fprintf(&b, "\n### Traces that could not be graded (%d)\n\n", bt.Failures)
		for _, e := range bt.Errors {
			fmt.Fprintf(&b, "- %s: %s\n", mdCode(e.Source), mdText(e.Error))
		}
		if bt.Failures > len(bt.Errors) {
			fmt.Fprintf(&b, "- … and %d more\n", bt.Failures-len(bt.Errors))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBatchDiffMarkdown writes the comparison of many traces with their
// baseline.
func writeBatchDiffMarkdown(b *strings.Builder, bt *Batch, d *BatchDiff) {
	fmt.Fprintf(b, "\n### Compared with the baseline %s\n\n", mdCode(d.Baseline))
	if d.Regressed > 0 {
		fmt.Fprintf(b, "**Regression:** %d trace%s regressed.\n\n", d.Regressed, plural(d.Regressed))
	} else {
		fmt.Fprintf(b, "No regression (max drop %s per trace).\n\n", num(d.MaxDrop))
	}
	b.WriteString("| | baseline | now | change |\n|---|--:|--:|--:|\n")
	fmt.Fprintf(b, "| traces | %d | %d | |\n", d.Base.Traces, bt.Traces)
	fmt.Fprintf(b, "| pass rate | %s | %s | %s |\n", Percent(d.Base.PassRate()), Percent(bt.PassRate()), DeltaPercent(bt.PassRate()-d.Base.PassRate()))
	fmt.Fprintf(b, "| mean score | %s | %s | %s |\n", Score(d.Base.MeanScore()), Score(bt.MeanScore()), Delta(bt.MeanScore()-d.Base.MeanScore()))
	fmt.Fprintf(b, "\n%d matched, %d new, %d missing; %d PASS → FAIL, %d FAIL → PASS.\n", d.Matched, d.New, d.Missing(), d.PassToFail, d.FailToPass)
	changes := func(title string, list []TraceChange) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(b, "\n%s:\n\n| trace | baseline | now | change | why |\n|---|--:|--:|--:|---|\n", title)
		for _, c := range list {
			fmt.Fprintf(b, "| %s | %s %s | %s %s | %s | %s |\n", mdCodeCell(c.Source),
				Score(c.Old.Score), verdictWord(c.Old.Passed), Score(c.New.Score), verdictWord(c.New.Passed),
				Delta(c.New.Score-c.Old.Score), mdCell(strings.Join(c.Reasons, "; ")))
		}
	}
	changes("Regressions (worst first)", d.Regressions)
	changes("Fixed (FAIL → PASS)", d.Fixes)
}

// WriteHarnessMarkdown writes a harness run's report as GitHub-flavoured
// Markdown: a heading, the summary line, with a baseline the comparison,
// a table of the tasks in suite order (with their change against the
// baseline), the failing tasks and the slowest tasks.
func WriteHarnessMarkdown(w io.Writer, r *harness.Report, d *HarnessDiff) error {
	var b strings.Builder
	s := &r.Summary
	fmt.Fprintf(&b, "## toolscore harness: %s\n\n", mdText(r.Suite))
	fmt.Fprintf(&b, "%s\n\nRun %s, %d task%s in %s.\n\n", harnessSummary(s), mdCode(r.RunID), len(r.Tasks), plural(len(r.Tasks)), Duration(r.Duration))
	var byID map[string]*TaskChange
	if d != nil {
		fmt.Fprintf(&b, "### Compared with the baseline %s\n\n", mdCode(d.Baseline))
		if d.Regressed > 0 {
			fmt.Fprintf(&b, "**Regression:** %d task%s regressed", d.Regressed, plural(d.Regressed))
		} else {
			fmt.Fprintf(&b, "No regression (max drop %s per task)", num(d.MaxDrop))
		}
		fmt.Fprintf(&b, "; %d PASS → FAIL or ERROR, %d → PASS", d.PassToFail, d.FailToPass)
		if len(d.Missing) > 0 {
			fmt.Fprintf(&b, "; not in this run: %s", mdText(strings.Join(d.Missing, ", ")))
		}
		b.WriteString(".\n\n")
		byID = map[string]*TaskChange{}
		for i := range d.Tasks {
			byID[d.Tasks[i].ID] = &d.Tasks[i]
		}
	}
	if d != nil {
		b.WriteString("| # | Task | Outcome | Score | Grade | Baseline | Change | Time | Top issue |\n")
		b.WriteString("|--:|---|---|--:|:-:|---|--:|--:|---|\n")
	} else {
		b.WriteString("| # | Task | Outcome | Score | Grade | Time | Top issue |\n")
		b.WriteString("|--:|---|---|--:|:-:|--:|---|\n")
	}
	for i := range r.Tasks {
		tr := &r.Tasks[i]
		score, grade := "-", "-"
		if tr.Result != nil {
			score, grade = Percent(tr.Result.Score), string(tr.Result.Grade)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |", i+1, mdCodeCell(tr.ID), outcomeWord(tr.Outcome), score, grade)
		if d != nil {
			base, change := "new", ""
			if c := byID[tr.ID]; c != nil && c.Old != nil {
				base = outcomeWord(c.Old.Outcome)
				if c.Old.Outcome != harness.OutcomeError {
					base += " " + Percent(c.Old.Score)
				}
				if tr.Outcome != harness.OutcomeError && c.Old.Outcome != harness.OutcomeError {
					change = Delta(c.Delta)
				}
				if len(c.Reasons) > 0 {
					change = "**" + strings.TrimSpace(change+" regressed") + "**"
				}
			}
			fmt.Fprintf(&b, " %s | %s |", base, change)
		}
		fmt.Fprintf(&b, " %s | %s |\n", Duration(tr.Duration), mdCell(tr.TopIssue()))
	}
	if d != nil && d.Regressed > 0 {
		b.WriteString("\n### Regressed tasks\n\n")
		for _, c := range d.Tasks {
			if len(c.Reasons) > 0 {
				fmt.Fprintf(&b, "- %s: %s\n", mdCode(c.ID), mdText(strings.Join(c.Reasons, "; ")))
			}
		}
	}
	if len(s.Failing) > 0 {
		b.WriteString("\n### Failing tasks\n\n")
		for _, f := range s.Failing {
			fmt.Fprintf(&b, "- %s %s: %s\n", mdCode(f.ID), outcomeWord(f.Outcome), mdText(f.Issue))
		}
	}
	if len(s.Slowest) > 0 {
		b.WriteString("\n### Slowest tasks\n\n")
		for _, t := range s.Slowest {
			fmt.Fprintf(&b, "- %s %s\n", mdCode(t.ID), Duration(t.Duration))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// harnessSummary is the harness's summary line: "4/6 passed (66.7%), 1
// failed, 1 error; mean score 88.1%; grades A 4, B 1".
func harnessSummary(s *harness.Summary) string {
	line := fmt.Sprintf("%d/%d passed (%s), %d failed, %d error%s; mean score %s",
		s.Passed, s.Tasks, Percent(s.PassRate), s.Failed, s.Errors, plural(s.Errors), Percent(s.MeanScore))
	if g := GradeMix(s.Grades); g != "" {
		line += "; grades " + g
	}
	return line
}

// mdText makes s safe as GitHub-flavoured Markdown text outside a table:
// the text between pairs of backticks (the engine quotes names so) becomes
// a code span, and everything else is literal: the characters that start
// inline markup (emphasis, links, images, HTML, entities, strikethrough,
// escapes) are backslash-escaped, autolinks (scheme://, www.) are broken
// up, line breaks folded. Text with an odd number of backticks has no code
// spans.
func mdText(s string) string { return mdInline(s, false) }

// mdCell is mdText for a table cell: pipes are escaped as well, in code
// spans too.
func mdCell(s string) string { return mdInline(s, true) }

// mdInline is mdText (cell false) or mdCell (cell true).
func mdInline(s string, cell bool) string {
	s = foldLines(s)
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		return mdEscape(s)
	}
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(mdEscape(p))
		case strings.TrimSpace(p) == "" || cell && strings.Contains(p, `\`):
			// Not a code span: an empty one does not exist, and in a
			// cell a backslash before a pipe would end the cell.
			b.WriteString(mdEscape("`" + p + "`"))
		default:
			b.WriteString(codeSpan(p, cell))
		}
	}
	return b.String()
}

// mdEscaped are the characters mdEscape escapes with a backslash.
const mdEscaped = "\\`*_[]<>~&|"

// mdEscape backslash-escapes the characters of s that start inline
// Markdown, and pipes (needed in a table cell, harmless elsewhere), and
// breaks autolinks: "http://x" becomes "http\\://x", "www.x" "www\\.x".
func mdEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]):
			// Inside a word (reserve_seat) an underscore starts no
			// emphasis.
		case strings.IndexByte(mdEscaped, c) >= 0:
			b.WriteByte('\\')
		case c == ':' && strings.HasPrefix(s[i:], "://"):
			b.WriteByte('\\')
		case c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mdCode writes s as a Markdown code span outside a table: fenced with
// more backticks than it holds, line breaks folded.
func mdCode(s string) string { return codeSpan(foldLines(s), false) }

// mdCodeCell is mdCode for a table cell: pipes escaped; a name holding a
// backslash is written as escaped text instead (in a cell, a backslash
// before a pipe would end the cell).
func mdCodeCell(s string) string {
	s = foldLines(s)
	if strings.Contains(s, `\`) {
		return mdEscape(s)
	}
	return codeSpan(s, true)
}

// codeSpan fences s (no line breaks) as a code span; in a cell, pipes are
// escaped (GitHub's tables unescape them in code spans too).
func codeSpan(s string, cell bool) string {
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// foldLines removes carriage returns and turns line feeds into spaces.
func foldLines(s string) string {
	return strings.NewReplacer("\r", "", "\n", " ").Replace(s)
}

// verdictWord is PASS or FAIL.
func verdictWord(passed bool) string {
	if passed {
		return "PASS"
	}
	return "FAIL"
}

// flip is "PASS → FAIL" when the verdict changed, else "".
func flip(old, cur bool) string {
	if old == cur {
		return ""
	}
	return verdictWord(old) + " → " + verdictWord(cur)
}

// statusWord is a check status in capitals.
func statusWord(s engine.CheckStatus) string { return strings.ToUpper(string(s)) }

// num formats a number in its shortest exact form ("0.9").
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// safetyGateFailure names the safety checks that failed the verdict
// although the score passed ("credentials"), "" otherwise.
func safetyGateFailure(res *engine.EvaluationResult) string {
	if !res.SafetyGate || res.Passed || !engine.PassesMinScore(res.Score, res.MinScore) {
		return ""
	}
	return strings.Join(safetyFailures(res.Checks.Items), " and ")
}

// MetricRow is one line of the metrics table.
type MetricRow struct {
	Name, Value, Weight, Detail string
}

// MetricRows are the metrics table of a result: the composite's metrics
// with their effective weights, then the metrics outside it (weight "-"),
// as the CLI prints them.
func MetricRows(res *engine.EvaluationResult) []MetricRow {
	m := res.Metrics
	w := m.Weights
	return []MetricRow{
		{"selection_accuracy", Score(m.SelectionAccuracy), Score(w.SelectionAccuracy), ""},
		{"argument_f1", Score(m.Arguments.F1), Score(w.ArgumentF1),
			fmt.Sprintf("precision %s, recall %s", Score(m.Arguments.Precision), Score(m.Arguments.Recall))},
		{"sequence_accuracy", Score(m.Sequence.SequenceAccuracy), Score(w.SequenceAccuracy), "edit distance " + num(m.Sequence.EditDistance)},
		{"1 - redundant_rate", Score(1 - m.Efficiency.RedundantRate), Score(w.RedundantRate),
			fmt.Sprintf("%d redundant of %d scored call%s", m.Efficiency.RedundantCount, m.Efficiency.TotalCalls, plural(m.Efficiency.TotalCalls))},
		{"required_call_recall", Score(m.RequiredCallRecall), Score(w.RequiredCallRecall), ""},
		{"invocation_accuracy", Score(m.InvocationAccuracy), "-", ""},
		{"tool_correctness", Score(m.ToolCorrectness.ToolCorrectness), "-", ToolDiff(m.ToolCorrectness)},
	}
}

// ToolDiff names the missing and extra tools, "" when there are none.
func ToolDiff(tc engine.ToolCorrectnessMetrics) string {
	var parts []string
	if len(tc.MissingTools) > 0 {
		parts = append(parts, "missing "+strings.Join(tc.MissingTools, ", "))
	}
	if len(tc.ExtraTools) > 0 {
		parts = append(parts, "extra "+strings.Join(tc.ExtraTools, ", "))
	}
	return strings.Join(parts, "; ")
}

// AlternativesView is a contract's alternatives as the reports show them.
type AlternativesView struct {
	// Groups are the groups' names.
	Groups []string
	// Chosen is the option chosen per group.
	Chosen []ChosenView
	// Rows are the combinations in enumeration order.
	Rows []CombinationRow
}

// ChosenView is the option chosen for one group.
type ChosenView struct{ Group, Option string }

// CombinationRow is one combination: its options' labels and score.
type CombinationRow struct {
	Index   int
	Options []string
	Score   float64
	Chosen  bool
}

// Alternatives returns the alternatives of a contract's result, nil for a
// gold file or a contract without alternatives groups.
func Alternatives(c *engine.Contract, res *engine.EvaluationResult) *AlternativesView {
	cm := res.Metrics.Contract
	if cm == nil || c == nil {
		return nil
	}
	var gs []*engine.Group
	for _, st := range c.Required {
		if st.Group != nil {
			gs = append(gs, st.Group)
		}
	}
	if len(gs) == 0 {
		return nil
	}
	v := &AlternativesView{}
	for i, g := range gs {
		v.Groups = append(v.Groups, GroupName(g, i))
	}
	chosen := make([]int, len(gs))
	for i, ch := range cm.Alternatives.Chosen {
		if i < len(gs) {
			chosen[i] = ch.Option
			v.Chosen = append(v.Chosen, ChosenView{GroupName(gs[i], i), OptionLabel(gs[i], ch.Option)})
		}
	}
	for n, combo := range cm.Alternatives.Combinations {
		row := CombinationRow{Index: n, Score: combo.Score, Chosen: len(combo.Options) == len(chosen)}
		for k, o := range combo.Options {
			if k < len(gs) {
				row.Options = append(row.Options, OptionLabel(gs[k], o))
			}
			if row.Chosen && chosen[k] != o {
				row.Chosen = false
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// GroupName is a group's id, or "group N" (0-based among groups).
func GroupName(g *engine.Group, i int) string {
	if g.ID != "" {
		return g.ID
	}
	return "group " + strconv.Itoa(i)
}

// OptionLabel is "[i] tool → tool" for option i of a group.
func OptionLabel(g *engine.Group, i int) string {
	if i < 0 || i >= len(g.Options) {
		return "[" + strconv.Itoa(i) + "]"
	}
	tools := make([]string, len(g.Options[i]))
	for k, c := range g.Options[i] {
		tools[k] = c.Tool
	}
	return "[" + strconv.Itoa(i) + "] " + strings.Join(tools, " → ")
}
