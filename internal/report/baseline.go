package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// DefaultMaxDrop is the score drop (in [0,1]) a comparison with a baseline
// tolerates before it counts as a regression.
const DefaultMaxDrop = 0.05

// dropSlack absorbs floating-point noise when comparing a drop with the
// allowed one.
const dropSlack = 1e-9

// safetyChecks are the evidence checks whose failure fails the verdict
// (the safety gate): one newly failing is a regression.
var safetyChecks = []string{"forbidden-calls", "credentials"}

// BaselineError is a baseline that cannot be used: saved results graded
// against another expectation or of another kind (one trace's result for
// many, or the other way round), or a harness report that does not read
// or is of another suite. Its text names the file and says why. Saved
// results that do not read as such are a *SavedError instead, which
// places what is wrong.
type BaselineError struct {
	// File names the baseline.
	File string
	// Reason says why it cannot be used.
	Reason string
}

func (e *BaselineError) Error() string { return e.File + ": " + e.Reason }

// Saved is one saved result read back from a file.
type Saved struct {
	Header
	// Doc is the result's 1-based position among the file's JSON
	// documents (its line, in a file of one result per line).
	Doc int
	// Result is the evaluation result; nil when Error is set.
	Result *engine.EvaluationResult
}

// savedDoc is the JSON shape of a saved result (its header is read by
// ReadSavedValues).
type savedDoc struct {
	engine.EvaluationResult
}

// ReadSaved reads every saved result of r (one JSON document, or many: one
// per line as `eval --json` writes many traces, or concatenated; see
// ReadSavedValues) and calls fn with each in order. name names the file
// in errors, which are *SavedError (placing the value in the file) or
// fn's.
func ReadSaved(r io.Reader, name string, fn func(*Saved) error) error {
	n := 0
	return ReadSavedValues(r, name, func(v *SavedValue) error {
		if v.Err != nil {
			return v.Err
		}
		n++
		var d savedDoc
		if err := v.Decode(&d); err != nil {
			return err
		}
		s := &Saved{Header: v.Header, Doc: n}
		if s.Error == "" {
			if !slices.Contains(Grades, d.Grade) || d.Metrics.Weights == (engine.Weights{}) {
				return v.Errorf(jsondoc.Value{}, false, "not a saved result: no grade and metrics (want the output of toolscore eval --json)")
			}
			res := d.EvaluationResult
			s.Result = &res
		}
		return fn(s)
	})
}

// CheckExpectation reports (as a *BaselineError naming file) when s was
// graded against another expectation than c, whose identity is sha
// (ExpectationSHA256) and whose name is expName. A result saved before
// expectation_sha256 existed is checked as far as it tells: gold file or
// contract, the contract's version and counts, the gold file's tools.
func CheckExpectation(file string, s *Saved, sha string, c *engine.Contract, expName string) error {
	fp := fingerprint{sha: s.ExpectationSHA256}
	if s.Result != nil {
		fp = newFingerprint(s.ExpectationSHA256, s.Result.Metrics.Contract, s.Result.ExpectedCalls)
	}
	return fp.check(file, sha, c, expName)
}

// fingerprint is what a saved result tells of the expectation that
// graded it.
type fingerprint struct {
	sha string
	// known is false when the result tells nothing more (an error line).
	known                       bool
	contract                    bool
	version, required, optional int
	tools                       []string // a gold file's expected tools
}

func newFingerprint(sha string, cm *engine.ContractMetrics, expected []engine.ExpectedCall) fingerprint {
	fp := fingerprint{sha: sha, known: true, contract: cm != nil}
	if cm != nil {
		fp.version, fp.required, fp.optional = cm.ContractVersion, cm.RequiredCount, cm.OptionalCount
	}
	for _, e := range expected {
		fp.tools = append(fp.tools, e.Tool)
	}
	return fp
}

func (fp *fingerprint) check(file, sha string, c *engine.Contract, expName string) error {
	other := func(why string) error {
		return &BaselineError{file, fmt.Sprintf("was graded against another expectation than %s (%s); save a new baseline with toolscore eval --json", expName, why)}
	}
	if fp.sha != "" {
		if fp.sha != sha {
			return other(fmt.Sprintf("sha256 %s, %s has %s", short(fp.sha), expName, short(sha)))
		}
		return nil
	}
	if !fp.known {
		return nil
	}
	switch {
	case c.Gold && fp.contract:
		return other("a contract, not a gold file")
	case !c.Gold && !fp.contract:
		return other("a gold file, not a contract")
	case fp.contract && fp.version != c.Version:
		return other(fmt.Sprintf("contract v%d, not v%d", fp.version, c.Version))
	case fp.contract && fp.required != c.RequiredCount():
		return other(fmt.Sprintf("%d required entries, not %d", fp.required, c.RequiredCount()))
	case fp.contract && fp.optional != len(c.Optional):
		return other(fmt.Sprintf("%d optional entries, not %d", fp.optional, len(c.Optional)))
	case c.Gold:
		var is []string
		for _, st := range c.Required {
			if st.Call != nil {
				is = append(is, st.Call.Tool)
			}
		}
		if !slices.Equal(fp.tools, is) {
			return other(fmt.Sprintf("expected calls %s, not %s", strings.Join(fp.tools, ", "), strings.Join(is, ", ")))
		}
	}
	return nil
}

// short is the first 12 characters of a hex digest.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Side is one side of a comparison: a result's score, grade and verdict.
type Side struct {
	Score  float64      `json:"score"`
	Grade  engine.Grade `json:"grade"`
	Passed bool         `json:"passed"`
}

// MetricDelta is one metric before and after.
type MetricDelta struct {
	Name  string  `json:"name"`
	Old   float64 `json:"old"`
	New   float64 `json:"new"`
	Delta float64 `json:"delta"`
}

// Trend is "up" when the metric got better by more than rounding, "down"
// when it got worse, else "" (a lower redundant_rate is better).
func (m MetricDelta) Trend() string {
	d := m.Delta
	if m.Name == "redundant_rate" {
		d = -d
	}
	switch {
	case d > 5e-4:
		return "up"
	case d < -5e-4:
		return "down"
	}
	return ""
}

// CheckChange is an evidence check whose status changed.
type CheckChange struct {
	Name string             `json:"name"`
	Old  engine.CheckStatus `json:"old"`
	New  engine.CheckStatus `json:"new"`
}

// Diff compares one trace's result with its baseline.
type Diff struct {
	// Baseline names the baseline file.
	Baseline string `json:"baseline"`
	// MaxDrop is the tolerated score drop.
	MaxDrop float64 `json:"max_drop"`
	// Old and New are the baseline's and the current result's verdicts.
	Old Side `json:"old"`
	New Side `json:"new"`
	// Metrics are the score and every metric, old and new.
	Metrics []MetricDelta `json:"metrics"`
	// Checks are the evidence checks whose status changed.
	Checks []CheckChange `json:"checks"`
	// Appeared and Disappeared are the calls (tool and arguments, as
	// CallText writes them) made now and not in the baseline, and the
	// other way round, in trace order.
	Appeared    []string `json:"appeared"`
	Disappeared []string `json:"disappeared"`
	// NewIssues are issues of the current result the baseline did not
	// have; FixedIssues those of the baseline that are gone.
	NewIssues   []engine.Issue `json:"new_issues"`
	FixedIssues []engine.Issue `json:"fixed_issues"`
	// Regressions say why the result regressed; empty when it did not.
	Regressions []string `json:"regressions"`
}

// Regressed reports whether the current result is a regression from the
// baseline: its score dropped by more than MaxDrop, its verdict went from
// PASS to FAIL, or a safety check (forbidden-calls, credentials) newly
// fails.
func (d *Diff) Regressed() bool { return len(d.Regressions) > 0 }

// Compare compares result cur with the baseline result old.
func Compare(baseline string, old, cur *engine.EvaluationResult, maxDrop float64) *Diff {
	d := &Diff{
		Baseline: baseline, MaxDrop: maxDrop,
		Old:         Side{old.Score, old.Grade, old.Passed},
		New:         Side{cur.Score, cur.Grade, cur.Passed},
		Metrics:     metricDeltas(old, cur),
		Checks:      []CheckChange{},
		Appeared:    []string{},
		Disappeared: []string{},
		NewIssues:   []engine.Issue{},
		FixedIssues: []engine.Issue{},
	}
	oldChecks := map[string]engine.CheckStatus{}
	for _, c := range old.Checks.Items {
		oldChecks[c.Name] = c.Status
	}
	for _, c := range cur.Checks.Items {
		if was, ok := oldChecks[c.Name]; ok && was != c.Status {
			d.Checks = append(d.Checks, CheckChange{c.Name, was, c.Status})
		}
	}
	d.Disappeared, d.Appeared = callDiff(old.TraceCalls, cur.TraceCalls)
	d.FixedIssues, d.NewIssues = issueDiff(old.Issues, cur.Issues)
	d.Regressions = regressions(Side{old.Score, old.Grade, old.Passed}, Side{cur.Score, cur.Grade, cur.Passed},
		safetyFailures(old.Checks.Items), safetyFailures(cur.Checks.Items), maxDrop)
	return d
}

// regressions lists why cur regressed from old (see Diff.Regressed).
func regressions(old, cur Side, oldSafety, curSafety []string, maxDrop float64) []string {
	out := []string{}
	if drop := old.Score - cur.Score; drop > maxDrop+dropSlack {
		out = append(out, fmt.Sprintf("score dropped by %.3f (%s → %s), more than the %s allowed",
			drop, Score(old.Score), Score(cur.Score), strconv.FormatFloat(maxDrop, 'f', -1, 64)))
	}
	if old.Passed && !cur.Passed {
		out = append(out, "verdict went from PASS to FAIL")
	}
	for _, name := range curSafety {
		if !slices.Contains(oldSafety, name) {
			out = append(out, "the "+name+" check newly fails")
		}
	}
	return out
}

// safetyFailures names the safety checks that failed.
func safetyFailures(items []engine.Check) []string {
	var out []string
	for _, c := range items {
		if c.Status == engine.CheckFail && slices.Contains(safetyChecks, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// metricDeltas lists the score and every metric of SPEC section 3, old
// and new.
func metricDeltas(old, cur *engine.EvaluationResult) []MetricDelta {
	pick := func(r *engine.EvaluationResult) []float64 {
		m := &r.Metrics
		return []float64{
			r.Score, m.SelectionAccuracy, m.Arguments.F1, m.Arguments.Precision, m.Arguments.Recall,
			m.Sequence.SequenceAccuracy, m.Efficiency.RedundantRate, m.RequiredCallRecall,
			m.InvocationAccuracy, m.ToolCorrectness.ToolCorrectness,
		}
	}
	names := []string{
		"score", "selection_accuracy", "argument_f1", "argument_precision", "argument_recall",
		"sequence_accuracy", "redundant_rate", "required_call_recall",
		"invocation_accuracy", "tool_correctness",
	}
	a, b := pick(old), pick(cur)
	out := make([]MetricDelta, len(names))
	for i, n := range names {
		out[i] = MetricDelta{n, a[i], b[i], b[i] - a[i]}
	}
	return out
}

// CallText is a call as the reports show it: the tool and its arguments
// as compact JSON (`reserve_seat {"flight_id":"FL-204"}`), or the
// unreadable argument text.
func CallText(c *engine.ToolCall) string {
	switch {
	case c.ArgsError != "":
		return c.Tool + " " + c.ArgsRaw
	case c.Args.Len() == 0:
		return c.Tool + " {}"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.Args.Any()); err != nil {
		return c.Tool + " {?}"
	}
	return c.Tool + " " + strings.TrimSuffix(buf.String(), "\n")
}

// callDiff returns the calls of old not matched by a call of cur (same
// tool and arguments), and those of cur not matched by one of old, each
// in trace order. Numbers compare by their decimal text, so 1 and 1.0
// differ.
func callDiff(old, cur []engine.ToolCall) (gone, added []string) {
	left := map[string]int{}
	for i := range old {
		left[CallText(&old[i])]++
	}
	added = []string{}
	for i := range cur {
		k := CallText(&cur[i])
		if left[k] > 0 {
			left[k]--
			continue
		}
		added = append(added, k)
	}
	gone = []string{}
	for i := range old {
		k := CallText(&old[i])
		if left[k] > 0 {
			left[k]--
			gone = append(gone, k)
		}
	}
	return gone, added
}

// issueKey identifies an issue across two results.
func issueKey(is *engine.Issue) string { return is.Kind + "\x00" + is.Tool + "\x00" + is.Problem }

// issueDiff returns the issues of old that cur does not have (fixed) and
// those of cur that old did not have (new), in their ranked order.
func issueDiff(old, cur []engine.Issue) (fixed, added []engine.Issue) {
	had := map[string]bool{}
	for i := range old {
		had[issueKey(&old[i])] = true
	}
	has := map[string]bool{}
	added = []engine.Issue{}
	for i := range cur {
		has[issueKey(&cur[i])] = true
		if !had[issueKey(&cur[i])] {
			added = append(added, cur[i])
		}
	}
	fixed = []engine.Issue{}
	for i := range old {
		if !has[issueKey(&old[i])] {
			fixed = append(fixed, old[i])
		}
	}
	return fixed, added
}
