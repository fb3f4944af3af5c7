package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/report"
)

// harnessFlags are the flags of `toolscore harness`, as given on the
// command line (checked by options).
type harnessFlags struct {
	agentURL    string
	agentCmd    string
	traces      string
	concurrency int
	timeout     time.Duration
	retries     int
	server      string
	runID       string
	agentName   string
	json        bool
	junit       string
	markdown    string
	html        string
	baseline    string
	maxDrop     string
	// grading bounds grading each trace locally (--grade-timeout,
	// --max-scoring-cells).
	grading boundFlags
}

func newHarnessCmd(s stdio) *cobra.Command {
	var f harnessFlags
	cmd := &cobra.Command{
		Use:   "harness SUITE (--agent-url URL | --agent-cmd CMD | --traces DIR)",
		Short: "Run an agent over a suite of tasks and grade each task with its contract",
		Long: `Run an agent over every task of SUITE (JSON or YAML, see
schemas/suite.schema.json) and grade each answer with the task's contract,
gold file or registry contract.

The agent is reached in one of three ways:
  --agent-url URL  POST {"task_id", "input", "tools"} to URL; the response
                   body is the trace, in any format eval reads, or
                   {"trace": ..., "final_answer": "..."}
  --agent-cmd CMD  run CMD with sh -c per task, the same JSON on stdin;
                   stdout is the trace (TOOLSCORE_TASK_ID is set)
  --traces DIR     grade recorded traces offline: DIR/ID.json, ID.jsonl
                   or ID.sse per task id

Tasks run --concurrency at a time, each attempt bounded by --timeout.
Transport failures (connection refused or reset, timeout, 429, 5xx) are
retried with exponential backoff; an agent that answered is never asked
again. A task whose agent failed is an ERROR with the reason, and the run
goes on. The report lists the tasks in suite order, then the pass rate,
mean score, grade mix, failing tasks with their top issue and the
slowest tasks. --junit, --markdown and --html write reports to files as
well.

With --baseline REPORT.json (a report saved by harness --json), every
task is compared with its baseline: a task regressed when it passed and
now fails or errors, when its score dropped by more than --max-drop, or
when a safety check newly fails. The exit status is then 1 only for a
regression.

Grading a trace locally is bounded as eval bounds it: a trace whose
expected calls times its calls pass --max-scoring-cells (16,000,000, as
in the service) is refused before scoring, and with --grade-timeout
grading stops after that long (no limit by default); the task is then an
ERROR with the reason.

With --server, every trace is graded and stored by that toolscore service
(with the API key in TOOLSCORE_API_KEY, scope ingest)
under one run_id (needed for contract_ref tasks).

Exit status: 0 every task passed, 1 a task failed or errored (with
--baseline: a task regressed), 2 usage, suite or baseline error.`,
		Example: `  toolscore harness examples/harness/suite.json --agent-url http://127.0.0.1:8089/
  toolscore harness suite.yaml --agent-cmd "python agent.py" --junit report.xml
  toolscore harness suite.json --traces runs/2026-11-29 --json`,
		Args: exactArgs("SUITE"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return runHarness(cmd.Context(), s, args[0], f)
		}),
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.agentURL, "agent-url", "", "POST each task to the agent at `URL`")
	fl.StringVar(&f.agentCmd, "agent-cmd", "", "run `CMD` (with sh -c) per task, the task as JSON on stdin")
	fl.StringVar(&f.traces, "traces", "", "grade recorded traces from `DIR` (ID.json, ID.jsonl or ID.sse)")
	fl.IntVar(&f.concurrency, "concurrency", harness.DefaultConcurrency, "tasks in flight at once")
	fl.DurationVar(&f.timeout, "timeout", harness.DefaultTimeout, "time allowed for each attempt at a task")
	fl.IntVar(&f.retries, "retries", harness.DefaultAttempts-1, "retries of a task after a transport failure")
	fl.StringVar(&f.server, "server", "", "grade and store every result in the toolscore service at `URL`")
	fl.StringVar(&f.runID, "run-id", "", "the run's `ID` (default: a new UUID)")
	fl.StringVar(&f.agentName, "agent-name", "", "the agent's `NAME` in results stored with --server")
	fl.BoolVar(&f.json, "json", false, "print the whole report as JSON")
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.StringVar(&f.markdown, "markdown", "", "also write a Markdown report to `FILE`")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to `FILE`")
	fl.StringVar(&f.baseline, "baseline", "", "compare every task with the report saved in `FILE` by harness --json; exit 1 only on a regression")
	fl.StringVar(&f.maxDrop, "max-drop", "", "with --baseline, the score drop `X` in [0,1] that is a regression (default 0.05)")
	f.grading.add(cmd, "grade-timeout", "grading locally: ")
	return cmd
}

// maxConcurrency bounds --concurrency.
const maxConcurrency = 1024

// check validates the flags. Errors name the flag.
func (f *harnessFlags) check() error {
	n := 0
	for _, v := range []string{f.agentURL, f.agentCmd, f.traces} {
		if v != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return failf("harness needs one of --agent-url URL, --agent-cmd CMD and --traces DIR")
	case n > 1:
		return failf("harness takes only one of --agent-url, --agent-cmd and --traces")
	case f.concurrency < 1 || f.concurrency > maxConcurrency:
		return failf("--concurrency: must be from 1 to %d, got %d", maxConcurrency, f.concurrency)
	case f.timeout <= 0:
		return failf("--timeout: must be positive, got %s", f.timeout)
	case f.retries < 0 || f.retries > 10:
		return failf("--retries: must be from 0 to 10, got %d", f.retries)
	}
	return distinctReportFiles(reportFile{"--junit", f.junit}, reportFile{"--markdown", f.markdown}, reportFile{"--html", f.html})
}

// runner builds the agent runner the flags name.
func (f *harnessFlags) runner() (harness.Runner, error) {
	switch {
	case f.agentURL != "":
		r, err := harness.NewHTTPRunner(f.agentURL, f.concurrency)
		if err != nil {
			return nil, failf("--agent-url: %v", err)
		}
		return r, nil
	case f.agentCmd != "":
		r, err := harness.NewCommandRunner(f.agentCmd)
		if err != nil {
			return nil, failf("--agent-cmd: %v", err)
		}
		return r, nil
	}
	r, err := harness.NewRecordedRunner(f.traces)
	if err != nil {
		return nil, failf("--traces: %v", err)
	}
	return r, nil
}

// runHarness loads the suite at path, runs it and prints the report. It
// returns errFailed when a task failed or errored.
func runHarness(ctx context.Context, s stdio, path string, f harnessFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	bounds, err := f.grading.bounds()
	if err != nil {
		return err
	}
	suite, err := loadSuite(s, path)
	if err != nil {
		return err
	}
	maxDrop := report.DefaultMaxDrop
	if f.maxDrop != "" {
		if f.baseline == "" {
			return failf("--max-drop needs --baseline FILE")
		}
		if maxDrop, err = parseMaxDrop(f.maxDrop); err != nil {
			return err
		}
	}
	var base *report.HarnessBaseline
	if f.baseline != "" {
		fh, err := os.Open(f.baseline)
		if err != nil {
			return failf("--baseline: %s", pathErrorText(err))
		}
		base, err = report.ReadHarnessBaseline(fh, f.baseline, suite.Name)
		fh.Close()
		if err != nil {
			return failf("--baseline: %v", err)
		}
	}
	runner, err := f.runner()
	if err != nil {
		return err
	}
	opts := harness.Options{
		Concurrency:   f.concurrency,
		Timeout:       f.timeout,
		Attempts:      f.retries + 1,
		RunID:         f.runID,
		Agent:         f.agentName,
		SecretScanner: secretScanner(),
		Grade:         bounds.evaluate,
	}
	if f.server != "" {
		svc, err := harness.NewServiceClient(f.server, f.concurrency)
		if err != nil {
			return failf("--server: %v", err)
		}
		svc.APIKey = s.env("TOOLSCORE_API_KEY")
		opts.Service = svc
	}
	bar := newProgress(s.err, len(suite.Tasks))
	if bar != nil {
		opts.OnResult = func(*harness.TaskResult) { _ = bar.Add(1) }
	}
	rep, runErr := harness.Run(ctx, suite, runner, opts)
	if bar != nil {
		_ = bar.Clear()
	}
	var se *harness.SuiteError
	if errors.As(runErr, &se) {
		return suiteErrorLines(displayName(path), se)
	}
	if rep == nil {
		return runErr
	}
	var diff *report.HarnessDiff
	if base != nil {
		diff = report.CompareHarness(base, rep, maxDrop)
	}
	if err := writeReports(s, rep, diff, f); err != nil {
		return err
	}
	if runErr != nil {
		return failf("run interrupted: %v", runErr)
	}
	if diff != nil {
		if diff.Regressed > 0 {
			return errFailed
		}
		return nil
	}
	if !rep.AllPassed() {
		return errFailed
	}
	return nil
}

// loadSuite reads and validates the suite at path ("-" for standard
// input). Every problem is a line of the runError, naming the file.
func loadSuite(s stdio, path string) (*harness.Suite, error) {
	data, err := readInput(s, path)
	if err != nil {
		return nil, err
	}
	name := displayName(path)
	suite, err := harness.ParseSuite(data, filepath.Ext(path))
	if err != nil {
		var se *harness.SuiteError
		if errors.As(err, &se) {
			return nil, suiteErrorLines(name, se)
		}
		var syn *engine.SyntaxError
		if errors.As(err, &syn) {
			return nil, failf("%s: %s", name, syn.Error())
		}
		return nil, failf("%s: %s", name, strings.TrimPrefix(err.Error(), harness.ErrInvalidSuite.Error()+": "))
	}
	return suite, nil
}

// suiteErrorLines is a runError with one "FILE: /pointer: message" line
// per problem.
func suiteErrorLines(name string, se *harness.SuiteError) error {
	lines := make([]string, len(se.Errors))
	for i, fe := range se.Errors {
		p := fe.Pointer
		if p == "" {
			p = "/"
		}
		lines[i] = fmt.Sprintf("%s: %s: %s", name, p, fe.Message)
	}
	return &runError{lines: lines}
}

// writeReports prints the report on s.out (a table, or JSON with --json)
// and writes the --junit and --markdown files.
func writeReports(s stdio, rep *harness.Report, diff *report.HarnessDiff, f harnessFlags) error {
	files := []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"--junit", f.junit, func(w io.Writer) error { return harness.WriteJUnit(w, rep) }},
		{"--markdown", f.markdown, func(w io.Writer) error { return report.WriteHarnessMarkdown(w, rep, diff) }},
		{"--html", f.html, func(w io.Writer) error { return report.WriteHarnessHTML(w, rep, diff) }},
	}
	for _, file := range files {
		if file.path == "" {
			continue
		}
		if err := writeFileWith(file.path, file.write); err != nil {
			return failf("%s: %v", file.flag, err)
		}
	}
	if f.json {
		return harness.WriteJSON(s.out, rep)
	}
	if err := harness.WriteText(s.text(), rep, harness.TextOptions{Color: s.color}); err != nil {
		return err
	}
	if diff != nil {
		if err := writeHarnessDiffText(s.text(), painter(s.color), diff); err != nil {
			return err
		}
	}
	if f.server != "" {
		stored := 0
		for _, t := range rep.Tasks {
			if t.EvaluationID != "" {
				stored++
			}
		}
		_, err := fmt.Fprintf(s.out, "\n%d of %d results stored in %s under run_id %s\n", stored, len(rep.Tasks), f.server, rep.RunID)
		return err
	}
	return nil
}

// writeFileWith creates path and writes it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// newProgress returns a progress bar over n tasks on w when w is a
// terminal, else nil.
func newProgress(w io.Writer, n int) *progressbar.ProgressBar {
	fd, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(fd.Fd())) {
		return nil
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("tasks"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// runDoctorSuite validates the suite at path, every embedded contract
// included, and describes it on s.out. An invalid suite is a runError
// with one line per problem.
func runDoctorSuite(s stdio, path string) error {
	suite, err := loadSuite(s, path)
	if err != nil {
		return err
	}
	p := painter(s.color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", displayName(path), p.paint(fmt.Sprintf("valid suite %q, %d task%s", suite.Name, len(suite.Tasks), plural(len(suite.Tasks))), sgrGreen))
	if suite.Description != "" {
		fmt.Fprintf(&b, "%-13s %s\n", "Description", suite.Description)
	}
	min := engine.DefaultMinScore
	if suite.MinScore != nil {
		min = *suite.MinScore
	}
	fmt.Fprintf(&b, "%-13s %s (gold tasks)\n\n", "Min score", fmtNum(min))
	width := 0
	for _, t := range suite.Tasks {
		width = max(width, len(t.ID))
	}
	refs := 0
	for _, t := range suite.Tasks {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, t.ID, describeTask(t, min))
		if t.ContractRef != "" {
			refs++
		}
	}
	if refs > 0 {
		fmt.Fprintf(&b, "\n%d task%s grade%s with a registry contract: run with --server URL.\n", refs, plural(refs), verbS(refs))
	}
	_, err = io.WriteString(s.text(), b.String())
	return err
}

// describeTask is one line about a task's grading.
func describeTask(t *harness.Task, suiteMin float64) string {
	c := t.Contract
	switch {
	case t.ContractRef != "":
		return "registry contract " + t.ContractRef
	case c.Gold:
		return fmt.Sprintf("gold file, %d call%s, min score %s", len(c.Required), plural(len(c.Required)), fmtNum(suiteMin))
	}
	min := fmtNum(engine.DefaultMinScore) + " (default)"
	if c.MinScore != nil {
		min = fmtNum(*c.MinScore)
	}
	return fmt.Sprintf("contract v%d, %d required, %d optional, %d forbidden, %d combination%s, min score %s",
		c.Version, c.RequiredCount(), len(c.Optional), len(c.Forbidden), c.Combinations(), plural(c.Combinations()), min)
}

// verbS is "s" when n is 1 (a verb agreeing with a singular subject).
func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}
