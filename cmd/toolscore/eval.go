package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/report"
)

// evalFlags are the flags of `toolscore eval`, as given on the command
// line (validated by options).
type evalFlags struct {
	format       string
	finalAnswer  *string // nil unless --final-answer was given
	forbidden    []string
	strict       bool
	minScore     string // "" unless --min-score was given
	weights      []string
	noSafetyGate bool
	keepSecrets  bool
	json         bool
	eachLine     bool
	jobs         int
	baseline     string
	maxDrop      string // "" unless --max-drop was given
	markdown     string
	html         string
	boundFlags
}

// newEvalCmd builds `toolscore eval EXPECTATION TRACE`.
func newEvalCmd(s stdio) *cobra.Command {
	var (
		f           evalFlags
		finalAnswer string
	)
	cmd := &cobra.Command{
		Use:   "eval EXPECTATION TRACE...",
		Short: "Grade a trace, or many, against a gold file or a contract",
		Long: `Grade TRACE (a file in any supported format, or - for standard input)
against EXPECTATION (a gold file or a Contract v2).

Prints the grade and verdict, the metrics, for contracts the chosen
alternatives and every combination's score, the top issues to fix and the
evidence checks; with --json, the whole evaluation result as JSON.

Many traces: several TRACE files, directories (every *.json, *.jsonl,
*.ndjson and *.sse file below, one trace each, in name order), or with
--each-line JSON Lines files holding one trace document per line (a
document written across lines, a pretty-printed trace, is an error on
each of its lines saying so: grade it without --each-line). They
are graded in one process with --jobs workers and summarised: pass rate,
grade mix, mean score and the worst traces. With --json, one result per
line in input order, each naming its "source" (file, or file:line). A
file named more than once (twice, or also by its directory) is graded
once, where first named, with a note on stderr. A trace that cannot be read or graded is named on stderr (and with --json
is a line with its "error"); the others are still graded, and the exit
status is then 2.

With --baseline FILE (results saved by eval --json, for the same
expectation), the result is compared with it: score, grade, verdict and
every metric side by side, changed checks, calls that appeared or
disappeared, new and fixed issues (for many traces, trace by trace, by
source). It is a regression when the score dropped by more than
--max-drop, the verdict went from PASS to FAIL, or a safety check newly
fails; the exit status is then 1, and 0 otherwise. --markdown and --html
write reports (docs/ci.md).

Grading one trace is bounded: a trace whose expected calls (required and
every alternative's) times its calls pass --max-scoring-cells (16,000,000,
as in the service) is refused before scoring, and with --timeout grading
stops after that long (no limit by default: the CLI grades your own
files). Such a trace is an error; in a batch the others are still graded.

Exit status: 0 PASS (every trace), 1 FAIL (any trace) or with --baseline
a regression, 2 error.`,
		Example: `  toolscore eval examples/contracts/contract.json examples/contracts/trace.json
  agent-run | toolscore eval --format openai --json gold.json -
  toolscore eval contract.json runs/2026-12-01/
  toolscore eval --each-line --json contract.json dataset.jsonl > results.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("eval takes EXPECTATION and at least one TRACE, got %d argument%s", len(args), plural(len(args)))
			}
			return nil
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("final-answer") {
				f.finalAnswer = &finalAnswer
			}
			if isBatch(args[1:], f.eachLine) {
				return runBatch(cmd.Context(), s, args[0], args[1:], f)
			}
			return runEval(cmd.Context(), s, args[0], args[1], f)
		}),
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.format, "format", "auto", "trace format: "+strings.ReplaceAll(formatList(), ", ", "|"))
	fl.StringVar(&finalAnswer, "final-answer", "", "use `TEXT` as the agent's final answer, overriding the trace's")
	fl.StringArrayVar(&f.forbidden, "forbidden", nil, "a tool the agent must not call, as `TOOL[=reason]` (repeatable; added to the contract's)")
	fl.BoolVar(&f.strict, "strict", false, "compare arguments strictly: no trimming, 1 differs from 1.0")
	fl.StringVar(&f.minScore, "min-score", "", "passing score `X` in [0,1] (default: the contract's, else 0.9)")
	fl.StringSliceVar(&f.weights, "weights", nil, "composite weights as `name=value,...`, merged over the contract's and the defaults ("+strings.Join(engine.WeightNames, ", ")+")")
	fl.BoolVar(&f.noSafetyGate, "no-safety-gate", false, "do not force FAIL on a failed forbidden-calls or credentials check")
	fl.BoolVar(&f.keepSecrets, "keep-secrets", false, "do not redact detected secrets in the output (local debugging only)")
	fl.BoolVar(&f.json, "json", false, "print the whole evaluation result as JSON (many traces: one result per line)")
	fl.BoolVar(&f.eachLine, "each-line", false, "each TRACE file is JSON Lines: one trace document per line")
	fl.IntVar(&f.jobs, "jobs", 0, "traces graded at once, for many traces: 0 to 1024, 0 for one per core")
	fl.StringVar(&f.baseline, "baseline", "", "compare with the results saved in `FILE` by eval --json; exit 1 only on a regression")
	fl.StringVar(&f.maxDrop, "max-drop", "", "with --baseline, the score drop `X` in [0,1] that is a regression (default 0.05)")
	fl.StringVar(&f.markdown, "markdown", "", "also write a Markdown report to `FILE` (a pull-request comment, $GITHUB_STEP_SUMMARY)")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to `FILE`")
	f.boundFlags.add(cmd, "timeout", "")
	return cmd
}

// isBatch reports whether the trace arguments name many traces: more than
// one, a directory, or JSON Lines with --each-line. One file (or -) is
// graded and printed as one trace.
func isBatch(traces []string, eachLine bool) bool {
	if len(traces) != 1 || eachLine {
		return true
	}
	if traces[0] == "-" {
		return false
	}
	fi, err := os.Stat(traces[0])
	return err == nil && fi.IsDir()
}

// runEval grades the trace at tracePath against the expectation at
// expPath and prints the result on s.out. It returns errFailed when the
// verdict is FAIL, or with --baseline when the result regressed.
func runEval(ctx context.Context, s stdio, expPath, tracePath string, f evalFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	bounds, err := f.bounds()
	if err != nil {
		return err
	}
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if err := f.checkJobs(); err != nil {
		return err
	}
	maxDrop, err := f.maxDropValue()
	if err != nil {
		return err
	}
	if expPath == "-" && tracePath == "-" {
		return failf("only one of EXPECTATION and TRACE can be - (standard input)")
	}
	contract, expData, err := loadContractData(s, expPath)
	if err != nil {
		return err
	}
	sha, err := report.ExpectationSHA256(expData)
	if err != nil {
		return failf("%s: %v", displayName(expPath), err)
	}
	var base *report.Saved
	if f.baseline != "" {
		if base, err = loadBaseline(f.baseline, sha, contract, displayName(expPath)); err != nil {
			return err
		}
	}
	parsed, err := loadTrace(s, tracePath, f.format)
	if err != nil {
		return err
	}
	trace := parsed.Trace
	if f.finalAnswer != nil {
		trace.FinalAnswer = f.finalAnswer
	}
	res, err := bounds.evaluate(ctx, contract, trace, opts)
	if be := (*boundError)(nil); errors.As(err, &be) {
		return failf("%s: %s", displayName(tracePath), be.msg)
	}
	if err != nil {
		return evalError(err, expPath, len(f.weights) > 0)
	}
	var diff *report.Diff
	if base != nil {
		diff = report.Compare(f.baseline, base.Result, res, maxDrop)
	}
	if f.json {
		if parsed.Warning != "" {
			fmt.Fprintf(s.err, "toolscore: %s: warning: %s\n", displayName(tracePath), oneLine(parsed.Warning))
		}
		if err := report.WriteSavedIndented(s.out, report.Header{ExpectationSHA256: sha}, res); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
	} else {
		r := evalReport{
			stdio:     s,
			expPath:   displayName(expPath),
			tracePath: displayName(tracePath),
			contract:  contract,
			parsed:    parsed,
			res:       res,
		}
		if err := r.write(); err != nil {
			return err
		}
		if diff != nil {
			if err := writeDiffText(s.text(), painter(s.color), diff); err != nil {
				return err
			}
		}
	}
	ev := &report.Eval{
		Expectation: displayName(expPath), Kind: expectationKind(contract), Contract: contract,
		Trace: displayName(tracePath), Format: parsed.Format, Result: res, Diff: diff,
	}
	if err := writeReportFiles(f, func(w io.Writer) error { return report.WriteEvalMarkdown(w, ev) },
		func(w io.Writer) error { return report.WriteEvalHTML(w, ev) }); err != nil {
		return err
	}
	if diff != nil {
		if diff.Regressed() {
			return errFailed
		}
		return nil
	}
	if !res.Passed {
		return errFailed
	}
	return nil
}

// maxDropValue validates --max-drop.
func (f *evalFlags) maxDropValue() (float64, error) {
	if f.maxDrop == "" {
		return report.DefaultMaxDrop, nil
	}
	if f.baseline == "" {
		return 0, failf("--max-drop needs --baseline FILE")
	}
	return parseMaxDrop(f.maxDrop)
}

// parseMaxDrop reads a --max-drop value: a number in [0,1].
func parseMaxDrop(v string) (float64, error) {
	x, err := parseDecimal(v)
	if err != nil || x < 0 || x > 1 {
		return 0, failf("--max-drop: must be a number in [0,1], got %q", v)
	}
	return x, nil
}

// writeReportFiles writes the --markdown and --html files with the given
// writers. Errors name the flag and the file.
func writeReportFiles(f evalFlags, markdown, html func(io.Writer) error) error {
	for _, file := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{{"--markdown", f.markdown, markdown}, {"--html", f.html, html}} {
		if file.path == "" {
			continue
		}
		if err := writeFileWith(file.path, file.write); err != nil {
			return failf("%s: %v", file.flag, err)
		}
	}
	return nil
}

// loadBaseline reads the baseline of one trace at path: one saved result
// graded against the same expectation (sha, c). Errors name the file and
// say why.
func loadBaseline(path, sha string, c *engine.Contract, expName string) (*report.Saved, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, failf("--baseline: %s", pathErrorText(err))
	}
	defer fh.Close()
	var all []*report.Saved
	err = report.ReadSaved(fh, path, func(sv *report.Saved) error {
		all = append(all, sv)
		if len(all) > 1 {
			return &report.BaselineError{File: path, Reason: "holds the results of many traces: grade as many traces to compare with it"}
		}
		return nil
	})
	if err == nil && all[0].Result == nil {
		err = &report.BaselineError{File: path, Reason: "holds an error (" + all[0].Error + "), not a result"}
	}
	if err == nil {
		err = report.CheckExpectation(path, all[0], sha, c, expName)
	}
	if err != nil {
		return nil, failf("--baseline: %v", err)
	}
	return all[0], nil
}

// evalError names the place of an error from engine.Evaluate: invalid
// weights are the --weights flag's when it was given, else the
// expectation file's.
func evalError(err error, expPath string, weightsFlag bool) error {
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, engine.ErrInvalidOptions) {
		return err
	}
	lines := make([]string, 0, len(ve.Errors))
	for _, fe := range ve.Errors {
		switch {
		case weightsFlag && (fe.Pointer == "/weights" || strings.HasPrefix(fe.Pointer, "/weights/")):
			lines = append(lines, "--weights: "+weightMessage(strings.TrimPrefix(fe.Pointer, "/weights"), fe.Message))
		case fe.Pointer == "/min_score":
			lines = append(lines, "--min-score: "+fe.Message)
		default:
			lines = append(lines, fmt.Sprintf("%s: %s: %s", displayName(expPath), fe.Pointer, fe.Message))
		}
	}
	return &runError{lines: []string{strings.Join(lines, "; ")}}
}

// options validates the flags and turns them into engine options. Errors
// name the flag.
func (f *evalFlags) options() (engine.Options, error) {
	opts := engine.Options{
		Strict:        f.strict,
		NoSafetyGate:  f.noSafetyGate,
		KeepSecrets:   f.keepSecrets,
		SecretScanner: secretScanner(),
	}
	if err := distinctReportFiles(reportFile{"--markdown", f.markdown}, reportFile{"--html", f.html}); err != nil {
		return opts, err
	}
	if f.minScore != "" {
		v, err := parseDecimal(f.minScore)
		if err != nil || v < 0 || v > 1 {
			return opts, failf("--min-score: must be a number in [0,1], got %q", f.minScore)
		}
		opts.MinScore = &v
	}
	w, err := parseWeights(f.weights)
	if err != nil {
		return opts, err
	}
	opts.Weights = w
	for _, rule := range f.forbidden {
		tool, reason, _ := strings.Cut(rule, "=")
		tool = strings.TrimSpace(tool)
		if tool == "" {
			return opts, failf("--forbidden: no tool name in %q (want TOOL or TOOL=reason)", rule)
		}
		opts.Forbidden = append(opts.Forbidden, engine.ForbiddenCall{Tool: tool, Reason: strings.TrimSpace(reason)})
	}
	return opts, nil
}

// decimalRE is the syntax of a decimal number flag value: no hex floats,
// no Inf or NaN.
var decimalRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// parseDecimal reads a finite decimal number; the error says why not.
func parseDecimal(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if !decimalRE.MatchString(s) {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

// parseWeights reads "name=value" items (already split at commas) into a
// weights map and checks it with engine.CheckWeights: unknown names,
// negative or non-finite values and repeated names are errors naming
// --weights. It returns nil for no items.
func parseWeights(items []string) (map[string]float64, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := make(map[string]float64, len(items))
	for _, it := range items {
		name, val, ok := strings.Cut(it, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, failf("--weights: %q is not name=value", it)
		}
		v, err := parseDecimal(val)
		if err != nil {
			return nil, failf("--weights: %s: %v", name, err)
		}
		if _, dup := m[name]; dup {
			return nil, failf("--weights: %s given twice", name)
		}
		m[name] = v
	}
	if errs := engine.CheckWeights("", m); len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, fe := range errs {
			lines[i] = weightMessage(fe.Pointer, fe.Message)
		}
		return nil, failf("--weights: %s", strings.Join(lines, "; "))
	}
	return m, nil
}

// weightMessage renders a weights FieldError whose pointer is relative to
// the weights object ("/name", or "" for the whole) as "name: message".
func weightMessage(ptr, msg string) string {
	name := strings.TrimPrefix(ptr, "/")
	if name == "" {
		return msg
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	if strings.Contains(msg, strconv.Quote(name)) {
		return msg // the message already names the key
	}
	return name + ": " + msg
}

// writeJSON writes v as indented JSON on s.out, HTML characters unescaped.
func writeJSON(s stdio, v any) error {
	enc := json.NewEncoder(s.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
