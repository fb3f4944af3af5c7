package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/regrade/reeval"
	"github.com/toolscore/toolscore/internal/report"
)

// regradeFlags are the flags of `toolscore regrade`.
type regradeFlags struct {
	contract string
	// offline
	strict       bool
	minScore     string
	noSafetyGate bool
	json         bool
	bounds       boundFlags
	// server
	server       string
	fromContract string
	fromVersions []int
	taskID       string
	runID        string
	agent        string
	labels       []string
	since, until string
	dryRun       bool
	wait         bool
	poll         time.Duration
}

func newRegradeCmd(s stdio) *cobra.Command {
	var f regradeFlags
	cmd := &cobra.Command{
		Use:   "regrade --contract NEW.json RESULT.json... | regrade --server URL --contract NAME[@VERSION]",
		Short: "Grade stored results again against another contract version",
		Long: `Grade results again against another contract version and show whose
verdict flipped, without running any agent again: grading reads only the
stored tool calls, final answer and options.

With --server, the API key comes from TOOLSCORE_API_KEY (scopes regrades
and read).

Offline, each RESULT.json holds evaluation results written by
'toolscore eval --json' (or fetched from GET /v1/evaluations/{id}): one
result (one trace's, an indented document), or many, one per line (eval
--json over many traces, --each-line or a directory), or one after
another. Each result's trace_calls and final_answer are graded against
NEW.json. A file of many names each result by its line (FILE:LINE); a
line eval could not grade (its "error") is skipped with a note on stderr. Secrets were
redacted from stored calls, so a result that failed on leaked credentials
keeps that failure. Grading each result is bounded as eval bounds a
trace: --max-scoring-cells (16,000,000, as in the service) and --timeout
(no limit by default). A result over one is not regraded, and the others
are, as eval grades many traces: it is named (FILE:LINE, and its trace)
with the bound at the end on stderr, counted as "could not be regraded"
in the summary (summary.failed, and a row with "change": "error" and its
"error" with --json), and the exit status is then 2.

Result files are read as eval --baseline reads them, with the same
errors (FILE: line L:C: /pointer: what is wrong); a format_version newer
than this toolscore reads is refused. In a file of one result per line,
a line that is not a saved result is named at the end on stderr and
counted as could not be regraded (its row with "old" and "new" null),
and the other lines are regraded.

With --server, a regrade of the server's stored results (filtered by the
flags below) is started against NAME@VERSION of its registry (the latest
version without @); --wait follows it with a progress bar to the end.

Exit status: 1 when any result went from PASS to FAIL (with --server,
only with --wait), so CI can gate a contract change; 2 on an error.`,
		Example: `  toolscore eval --json contract-v1.json trace.json > result.json
  toolscore regrade --contract contract-v2.json result.json
  toolscore eval --each-line --json contract-v1.json traces.jsonl > results.jsonl
  toolscore regrade --contract contract-v2.json results.jsonl
  toolscore regrade --server http://localhost:8080 --contract flights@3 --agent bot-7 --wait`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.server == "" && len(args) == 0:
				return errors.New("regrade needs RESULT.json files, or --server URL")
			case f.server != "" && len(args) > 0:
				return fmt.Errorf("regrade --server takes no files, got %d (%s)", len(args), strings.Join(args, " "))
			}
			return nil
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if f.contract == "" {
				return failf("--contract is required: a contract file, or with --server a registry name[@version]")
			}
			if f.server != "" {
				return runRegradeServer(cmd.Context(), s, f)
			}
			return runRegradeFiles(cmd.Context(), s, f, args)
		}),
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.contract, "contract", "", "the new contract: a `FILE`, or with --server a registry name[@version]")
	fl.BoolVar(&f.strict, "strict", false, "offline: compare arguments strictly (default: each result's stored option, else lenient)")
	fl.StringVar(&f.minScore, "min-score", "", "offline: passing score `X` in [0,1] (default: each result's stored option, else the contract's)")
	fl.BoolVar(&f.noSafetyGate, "no-safety-gate", false, "offline: do not force FAIL on a failed forbidden-calls or credentials check (default: as each result was graded)")
	fl.BoolVar(&f.json, "json", false, "offline: print every result's old and new verdict and a summary as JSON")
	f.bounds.add(cmd, "timeout", "offline: ")
	fl.StringVar(&f.server, "server", "", "start the regrade on the toolscore server at `URL`")
	fl.StringVar(&f.fromContract, "from-contract", "", "server: regrade results of contract `NAME` (default: the target's name)")
	fl.IntSliceVar(&f.fromVersions, "from-versions", nil, "server: regrade results graded at these `VERSIONS` (default: all but the target)")
	fl.StringVar(&f.taskID, "task-id", "", "server: only results of this task `ID`")
	fl.StringVar(&f.runID, "run-id", "", "server: only results of this run `ID`")
	fl.StringVar(&f.agent, "agent", "", "server: only results of this `AGENT`")
	fl.StringArrayVar(&f.labels, "label", nil, "server: only results with this label, as `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.since, "since", "", "server: only results created at or after `TIME` (RFC 3339)")
	fl.StringVar(&f.until, "until", "", "server: only results created before `TIME` (RFC 3339)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "server: only count the results that would be regraded")
	fl.BoolVar(&f.wait, "wait", false, "server: follow the regrade with a progress bar until it ends")
	fl.DurationVar(&f.poll, "poll", time.Second, "server: with --wait, how often to ask for progress")
	_ = fl.MarkHidden("poll")
	return cmd
}

// storedResult is what regrade reads of an evaluation result file: the
// fields of an EvaluationResult (toolscore eval --json) or of the
// service's evaluation (which adds its options).
type storedResult struct {
	Source      string          `json:"source"`
	Error       string          `json:"error"`
	Score       *float64        `json:"score"`
	Grade       string          `json:"grade"`
	Passed      *bool           `json:"passed"`
	SafetyGate  *bool           `json:"safety_gate"`
	TraceCalls  json.RawMessage `json:"trace_calls"`
	FinalAnswer *string         `json:"final_answer"`
	Checks      json.RawMessage `json:"checks"`
	Issues      []engine.Issue  `json:"issues"`
	Options     json.RawMessage `json:"options"`
}

// verdictView is one side of a regrade in the --json output.
type verdictView struct {
	Score    float64       `json:"score"`
	Grade    string        `json:"grade"`
	Passed   bool          `json:"passed"`
	TopIssue *engine.Issue `json:"top_issue"`
}

// regradeFileView is one result's line of the --json output.
type regradeFileView struct {
	// File names the result: its file, or FILE:LINE in a file of many.
	File string `json:"file"`
	// Source is the result's own "source", the trace eval graded in a
	// batch ("" for none).
	Source string `json:"source,omitempty"`
	// Old is the stored verdict, nil for a value of the file that is not
	// a saved result (Error).
	Old *verdictView `json:"old"`
	// New is the verdict now, nil for a result not regraded (Error).
	New *verdictView `json:"new"`
	// Change is pass_to_fail, fail_to_pass, grade, error (not regraded:
	// see Error) or "" (unchanged).
	Change string `json:"change"`
	// Error is why the result could not be regraded (over --timeout or
	// --max-scoring-cells), as eval --json marks a trace it could not
	// grade, or why a value of a file of many is not a saved result
	// (its line:column and pointer, and what is wrong); "" when it was
	// regraded.
	Error string `json:"error,omitempty"`
}

// regradeSummary counts the outcomes of an offline regrade.
type regradeSummary struct {
	Results int `json:"results"`
	// Skipped counts the saved results eval could not grade (an "error"),
	// left out of the others.
	Skipped int `json:"skipped"`
	// Failed counts the results that could not be regraded (over
	// --timeout or --max-scoring-cells), left out of the others.
	Failed         int     `json:"failed"`
	PassToFail     int     `json:"pass_to_fail"`
	FailToPass     int     `json:"fail_to_pass"`
	GradeChanged   int     `json:"grade_changed"`
	Unchanged      int     `json:"unchanged"`
	MeanScoreDelta float64 `json:"mean_score_delta"`
}

// runRegradeFiles grades the result files again against f.contract and
// prints the changes and a summary. A result over one of the bounds is
// not regraded, and the others are, as eval grades a batch: it is a row
// with its error (--json), counted in summary.failed, and named with its
// error on stderr at the end, when the run returns an error (when it was
// the only result to regrade, that error alone). A value of a file that
// is not a saved result (a line of JSON Lines; see readResults) is
// counted and reported the same way. Otherwise it returns errFailed when
// any result went from PASS to FAIL.
func runRegradeFiles(ctx context.Context, s stdio, f regradeFlags, files []string) error {
	bounds, err := f.bounds.bounds()
	if err != nil {
		return err
	}
	c, err := loadContract(s, f.contract)
	if err != nil {
		return err
	}
	var minScore *float64
	if f.minScore != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(f.minScore), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return failf("--min-score: must be a number in [0,1], got %q", f.minScore)
		}
		minScore = &v
	}
	var rows []regradeFileView
	var sum regradeSummary
	var delta float64
	var failures []string // the first report.MaxErrors results' errors
	for _, path := range files {
		docs, err := readResults(s, path)
		if err != nil {
			return err
		}
		for _, d := range docs {
			row, err := regradeResult(ctx, c, d, f, bounds, minScore)
			if ue := (*ungradedError)(nil); errors.As(err, &ue) {
				sum.Skipped++
				fmt.Fprintf(s.err, "toolscore: %s: skipped, eval could not grade the trace: %s\n", d.name, oneLine(ue.msg))
				continue
			}
			if be := (*overBoundError)(nil); errors.As(err, &be) {
				sum.Failed++
				if len(failures) < report.MaxErrors {
					failures = append(failures, be.Error())
				}
				rows = append(rows, be.row)
				continue
			}
			if se := (*report.SavedError)(nil); errors.As(err, &se) {
				// Not a saved result: the others are regraded.
				sum.Failed++
				if len(failures) < report.MaxErrors {
					failures = append(failures, se.Error())
				}
				rows = append(rows, regradeFileView{File: d.name, Change: "error", Error: se.Reason()})
				continue
			}
			if err != nil {
				return err
			}
			rows = append(rows, row)
			sum.Results++
			delta += row.New.Score - row.Old.Score
			switch row.Change {
			case "pass_to_fail":
				sum.PassToFail++
			case "fail_to_pass":
				sum.FailToPass++
			case "grade":
				sum.GradeChanged++
			default:
				sum.Unchanged++
			}
		}
	}
	if sum.Results == 0 && sum.Failed == 0 {
		if sum.Skipped == 1 {
			return failf("nothing to regrade: the only saved result is of a trace eval could not grade")
		}
		return failf("nothing to regrade: all %d saved results are of traces eval could not grade", sum.Skipped)
	}
	if sum.Results == 0 && sum.Failed == 1 {
		// The one result to regrade is over a bound: its error alone, as
		// eval says of one trace.
		return &runError{lines: failures}
	}
	if sum.Results > 0 {
		sum.MeanScoreDelta = delta / float64(sum.Results)
	}
	if f.json {
		if err := writeJSON(s, struct {
			Contract string            `json:"contract"`
			Results  []regradeFileView `json:"results"`
			Summary  regradeSummary    `json:"summary"`
		}{displayName(f.contract), rows, sum}); err != nil {
			return err
		}
	} else {
		writeRegradeReport(s, displayName(f.contract), rows, sum)
	}
	if sum.Failed > 0 {
		more := ""
		if sum.Failed > len(failures) {
			more = fmt.Sprintf(" (the first %d above)", len(failures))
		}
		n := sum.Results + sum.Failed
		return &runError{lines: append(failures, fmt.Sprintf("%d of %d result%s could not be regraded%s", sum.Failed, n, plural(n), more))}
	}
	if sum.PassToFail > 0 {
		return errFailed
	}
	return nil
}

// resultDoc is one saved result of a result file.
type resultDoc struct {
	// name is the file's name, or FILE:LINE in a file of many.
	name string
	// value is the result as read, with its error (value.Err) when it
	// is not one.
	value *report.SavedValue
}

// ungradedError is regradeResult's error for a saved result of a trace
// eval could not grade (its "error"): there are no calls to grade again.
type ungradedError struct{ msg string }

// Error returns the trace's source, if any, and eval's error.
func (e *ungradedError) Error() string { return e.msg }

// overBoundError is regradeResult's error for a saved result over one of
// the gradeBounds: it was not regraded.
type overBoundError struct {
	// row is the result's row: its name, source and stored verdict, New
	// nil, Change "error" and Error the bound's message.
	row regradeFileView
}

// Error names the result (and the trace it is of, when it has a source)
// and says which bound it passed.
func (e *overBoundError) Error() string {
	name := e.row.File
	if e.row.Source != "" {
		name += ": " + e.row.Source
	}
	return name + ": " + e.row.Error
}

// readResults reads the result file at path ("-" for standard input)
// with report.ReadSavedValues, as eval --baseline reads it: JSON values
// one after another, each a result, in any layout (one indented
// document; one per line, as eval --json writes many; several indented
// ones). With one value it is named as the file, with more each by the
// line it starts on (FILE:LINE). A line of a JSON Lines file that is not
// a saved result is a resultDoc with its error (value.Err), the others
// still read; any other error is the file's.
func readResults(s stdio, path string) ([]resultDoc, error) {
	name := displayName(path)
	data, err := readInput(s, path)
	if err != nil {
		return nil, err
	}
	var docs []resultDoc
	err = report.ReadSavedValues(bytes.NewReader(data), name, func(v *report.SavedValue) error {
		docs = append(docs, resultDoc{name: name + ":" + strconv.Itoa(v.Line), value: v})
		return nil
	})
	if err != nil {
		return nil, failf("%v", err)
	}
	if len(docs) == 1 {
		docs[0].name = name
	}
	return docs, nil
}

// regradeResult grades one saved result again. Errors name the result;
// an *ungradedError is a result eval could not grade, an
// *overBoundError one over bounds, a *report.SavedError a value that is
// not a saved result (placed in its file).
func regradeResult(ctx context.Context, c *engine.Contract, d resultDoc, f regradeFlags, bounds gradeBounds, minScore *float64) (regradeFileView, error) {
	v := d.value
	if v.Err != nil {
		return regradeFileView{}, v.Err
	}
	var sr storedResult
	if err := v.Decode(&sr); err != nil {
		return regradeFileView{}, err
	}
	if sr.Error != "" && sr.TraceCalls == nil {
		msg := sr.Error
		if sr.Source != "" {
			msg = sr.Source + ": " + sr.Error
		}
		return regradeFileView{}, &ungradedError{msg}
	}
	if sr.TraceCalls == nil || sr.Score == nil || sr.Passed == nil {
		return regradeFileView{}, v.Errorf(jsondoc.Value{}, false, "not an evaluation result (no trace_calls, score or passed); write one with toolscore eval --json")
	}
	opts := engine.Options{NoSafetyGate: sr.SafetyGate != nil && !*sr.SafetyGate}
	if len(sr.Options) > 0 && string(sr.Options) != "null" {
		var err error
		if opts, err = reeval.Options(sr.Options); err != nil {
			return regradeFileView{}, v.Errorf(v.Value.Get("options"), false, "%v", err)
		}
	}
	if f.strict {
		opts.Strict = true
	}
	if minScore != nil {
		opts.MinScore = minScore
	}
	if f.noSafetyGate {
		opts.NoSafetyGate = true
	}
	calls, err := reeval.Calls(sr.TraceCalls)
	if err != nil {
		return regradeFileView{}, callsError(v, err)
	}
	failed, err := reeval.FailedCredentials(sr.Checks)
	if err != nil {
		return regradeFileView{}, v.Errorf(v.Value.Get("checks"), false, "%v", err)
	}
	opts.SecretScanner = secretScanner()
	res, err := bounds.grade(ctx, c, len(calls), func(ctx context.Context) (*engine.EvaluationResult, error) {
		return reeval.Evaluate(ctx, c, calls, sr.FinalAnswer, opts, failed)
	})
	row := regradeFileView{
		File: d.name, Source: sr.Source,
		Old: &verdictView{Score: *sr.Score, Grade: sr.Grade, Passed: *sr.Passed},
	}
	if len(sr.Issues) > 0 {
		row.Old.TopIssue = &sr.Issues[0]
	}
	if be := (*boundError)(nil); errors.As(err, &be) {
		row.Change, row.Error = "error", be.msg
		return regradeFileView{}, &overBoundError{row}
	}
	if err != nil {
		return regradeFileView{}, evalError(err, f.contract, false)
	}
	row.New = &verdictView{Score: res.Score, Grade: string(res.Grade), Passed: res.Passed}
	if len(res.Issues) > 0 {
		row.New.TopIssue = &res.Issues[0]
	}
	switch {
	case row.Old.Passed && !row.New.Passed:
		row.Change = "pass_to_fail"
	case !row.Old.Passed && row.New.Passed:
		row.Change = "fail_to_pass"
	case row.Old.Grade != row.New.Grade:
		row.Change = "grade"
	}
	return row, nil
}

// callsError places err, reeval.Calls's error for the trace_calls of
// the result v, in the result's file: a call of another shape than a
// stored call is v.Decode's error at the member (a call's "tool" a
// number: "/trace_calls/0/tool: must be a string, got number"), a call
// without a tool is placed at the call; anything else at trace_calls.
func callsError(v *report.SavedValue, err error) error {
	var stored struct {
		TraceCalls []engine.ToolCall `json:"trace_calls"`
	}
	if derr := v.Decode(&stored); derr != nil {
		return derr
	}
	calls := v.Value.Get("trace_calls")
	msg := strings.TrimPrefix(err.Error(), "trace_calls: ")
	if at, ok := strings.CutSuffix(msg, "/tool: missing"); ok {
		if i, err := strconv.Atoi(strings.TrimPrefix(at, "/")); err == nil && calls.Index(i).Exists() {
			return v.Errorf(calls.Index(i), true, `no "tool": a stored call names its tool ("" for none)`)
		}
	}
	return v.Errorf(calls, true, "%s", msg)
}

// writeRegradeReport prints the changed results as a table and a summary.
func writeRegradeReport(s stdio, contract string, rows []regradeFileView, sum regradeSummary) {
	p := painter(s.color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d result%s against %s\n", p.bold("Regrade:"), sum.Results, plural(sum.Results), contract)
	verdict := func(passed bool) string {
		if passed {
			return p.status(engine.CheckPass, "PASS")
		}
		return p.status(engine.CheckFail, "FAIL")
	}
	t := newTable()
	t.AppendHeader([]any{"change", "result", "verdict", "score", "grade", "top issue now"})
	changed := 0
	for _, r := range rows {
		if r.Change == "" || r.Change == "error" {
			continue
		}
		changed++
		label := map[string]string{"pass_to_fail": p.paint("PASS→FAIL", sgrBold, sgrRed),
			"fail_to_pass": p.paint("FAIL→PASS", sgrBold, sgrGreen), "grade": "grade"}[r.Change]
		issue := "none"
		if is := r.New.TopIssue; is != nil {
			issue = is.Problem
			if is.Tool != "" && !strings.Contains(issue, is.Tool) {
				issue = is.Tool + ": " + issue
			}
			if r := []rune(issue); len(r) > 60 {
				issue = string(r[:59]) + "…"
			}
		}
		t.AppendRow([]any{label, r.File, verdict(r.Old.Passed) + " → " + verdict(r.New.Passed),
			fmtScore(r.Old.Score) + " → " + fmtScore(r.New.Score),
			p.grade(engine.Grade(r.Old.Grade)) + " → " + p.grade(engine.Grade(r.New.Grade)), issue})
	}
	if changed > 0 {
		b.WriteString(indent(t.Render(), "  "))
		b.WriteString("\n")
	} else {
		b.WriteString("  no verdict or grade changed\n")
	}
	skipped := ""
	if sum.Skipped > 0 {
		them := "them"
		if sum.Skipped == 1 {
			them = "it"
		}
		skipped = fmt.Sprintf("%d skipped: eval could not grade %s", sum.Skipped, them)
	}
	if sum.Failed > 0 {
		if skipped != "" {
			skipped += "; "
		}
		skipped += fmt.Sprintf("%d could not be regraded", sum.Failed)
	}
	if skipped != "" {
		skipped = " (" + skipped + ")"
	}
	fmt.Fprintf(&b, "\n%s %d pass→fail, %d fail→pass, %d grade changed, %d unchanged%s; mean score delta %s\n",
		p.bold("Summary:"), sum.PassToFail, sum.FailToPass, sum.GradeChanged, sum.Unchanged, skipped, fmtDelta(sum.MeanScoreDelta))
	_, _ = io.WriteString(s.text(), b.String())
}

// regradeServerView is what the CLI reads of the server's regrade.
type regradeServerView struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Target struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	} `json:"target"`
	Total  int64 `json:"total"`
	Done   int64 `json:"done"`
	Failed int64 `json:"failed"`
	Flips  struct {
		PassToFail int64 `json:"pass_to_fail"`
		FailToPass int64 `json:"fail_to_pass"`
	} `json:"flips"`
	Changed        int64   `json:"changed"`
	MeanScoreDelta float64 `json:"mean_score_delta"`
	Error          string  `json:"error"`
	// Dry run answers.
	DryRun bool `json:"dry_run"`
}

// runRegradeServer starts a regrade on a server and, with --wait, follows
// it to the end. It returns errFailed when, waited for, it flipped any
// verdict from PASS to FAIL.
func runRegradeServer(ctx context.Context, s stdio, f regradeFlags) error {
	base, err := url.Parse(strings.TrimRight(f.server, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return failf("--server: %q is not an http(s) URL", f.server)
	}
	req := map[string]any{"contract": f.contract}
	set := func(k string, v any, ok bool) {
		if ok {
			req[k] = v
		}
	}
	set("from_contract", f.fromContract, f.fromContract != "")
	set("from_versions", f.fromVersions, len(f.fromVersions) > 0)
	set("task_id", f.taskID, f.taskID != "")
	set("run_id", f.runID, f.runID != "")
	set("agent", f.agent, f.agent != "")
	set("dry_run", true, f.dryRun)
	for _, t := range []struct {
		flag, key, v string
	}{{"--since", "since", f.since}, {"--until", "until", f.until}} {
		if t.v == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, t.v); err != nil {
			return failf("%s: must be an RFC 3339 time such as 2026-11-20T10:00:00Z, got %q", t.flag, t.v)
		}
		req[t.key] = t.v
	}
	if len(f.labels) > 0 {
		labels := map[string]string{}
		for _, l := range f.labels {
			k, v, ok := strings.Cut(l, "=")
			if !ok || k == "" {
				return failf("--label: want KEY=VALUE, got %q", l)
			}
			labels[k] = v
		}
		req["labels"] = labels
	}
	body, _ := json.Marshal(req)
	var rg regradeServerView
	if err := callServer(ctx, s.env("TOOLSCORE_API_KEY"), http.MethodPost, base.String()+"/v1/regrades", body, &rg); err != nil {
		return err
	}
	if f.dryRun {
		fmt.Fprintf(s.out, "Dry run: %d result%s would be regraded against %s@%d\n", rg.Total, plural(int(rg.Total)), rg.Target.Name, rg.Target.Version)
		return nil
	}
	fmt.Fprintf(s.out, "Regrade %s started against %s@%d\n", rg.ID, rg.Target.Name, rg.Target.Version)
	if !f.wait {
		fmt.Fprintf(s.out, "Follow it with: curl %s/v1/regrades/%s\n", base, rg.ID)
		return nil
	}
	final, err := waitRegrade(ctx, s, base.String()+"/v1/regrades/"+rg.ID, f.poll)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Regrade %s %s: %d regraded, %d failed; %d pass→fail, %d fail→pass, %d changed; mean score delta %s\n",
		final.ID, final.State, final.Done, final.Failed, final.Flips.PassToFail, final.Flips.FailToPass, final.Changed, fmtDelta(final.MeanScoreDelta))
	if final.Changed > 0 {
		fmt.Fprintf(s.out, "Changes: %s/v1/regrades/%s/changes\n", base, final.ID)
	}
	switch {
	case final.State == "failed":
		return failf("regrade %s failed: %s", final.ID, final.Error)
	case final.Flips.PassToFail > 0:
		return errFailed
	}
	return nil
}

// waitRegrade polls the regrade at u every poll, showing a progress bar on
// s.err when it is a terminal, until it is completed, cancelled or failed.
func waitRegrade(ctx context.Context, s stdio, u string, poll time.Duration) (regradeServerView, error) {
	fd, ok := s.err.(interface{ Fd() uintptr })
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetVisibility(ok && term.IsTerminal(int(fd.Fd()))),
		progressbar.OptionSetWriter(s.err),
		progressbar.OptionSetDescription("regrading"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	defer func() { _ = bar.Close() }()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var max int64 = -1
	for {
		var rg regradeServerView
		if err := callServer(ctx, s.env("TOOLSCORE_API_KEY"), http.MethodGet, u, nil, &rg); err != nil {
			return rg, err
		}
		if rg.Total > 0 && rg.Total != max {
			max = rg.Total
			bar.ChangeMax64(max)
		}
		_ = bar.Set64(rg.Done + rg.Failed)
		switch rg.State {
		case "completed", "cancelled", "failed":
			_ = bar.Finish()
			return rg, nil
		}
		select {
		case <-ctx.Done():
			return rg, failf("stopped waiting; the regrade goes on at %s", u)
		case <-tick.C:
		}
	}
}

// callServer sends a JSON request and decodes a 2xx answer into out; a
// problem+json answer becomes an error with its detail and pointers.
func callServer(ctx context.Context, key, method, u string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return failf("%s %s: %v", method, u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return failf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return failf("%s %s: %v", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		var p struct {
			Title  string `json:"title"`
			Detail string `json:"detail"`
			Errors []struct {
				Pointer, Parameter, Message string
			} `json:"errors"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &p) == nil && (p.Detail != "" || p.Title != "") {
			msg = p.Detail
			if msg == "" {
				msg = p.Title
			}
			for _, e := range p.Errors {
				place := e.Pointer + e.Parameter
				if place != "" && !strings.Contains(msg, e.Message) {
					msg += "; " + place + ": " + e.Message
				}
			}
		}
		return failf("%s %s: %d %s", method, u, resp.StatusCode, msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return failf("%s %s: the answer is not JSON: %v", method, u, err)
	}
	return nil
}
