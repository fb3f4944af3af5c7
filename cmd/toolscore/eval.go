package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/engine"
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
--each-line JSON Lines files holding one trace document per line. They
are graded in one process with --jobs workers and summarised: pass rate,
grade mix, mean score and the worst traces. With --json, one result per
line in input order, each naming its "source" (file, or file:line). A
trace that cannot be read or graded is named on stderr (and with --json
is a line with its "error"); the others are still graded, and the exit
status is then 2.

Exit status: 0 PASS (every trace), 1 FAIL (any trace), 2 error.`,
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
	fl.IntVar(&f.jobs, "jobs", 0, "traces graded at once, for many traces (default: one per core)")
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
// verdict is FAIL.
func runEval(ctx context.Context, s stdio, expPath, tracePath string, f evalFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if expPath == "-" && tracePath == "-" {
		return failf("only one of EXPECTATION and TRACE can be - (standard input)")
	}
	contract, err := loadContract(s, expPath)
	if err != nil {
		return err
	}
	parsed, err := loadTrace(s, tracePath, f.format)
	if err != nil {
		return err
	}
	trace := parsed.Trace
	if f.finalAnswer != nil {
		trace.FinalAnswer = f.finalAnswer
	}
	res, err := engine.Evaluate(ctx, contract, trace, opts)
	if err != nil {
		return evalError(err, expPath, len(f.weights) > 0)
	}
	if f.json {
		if err := writeJSON(s, res); err != nil {
			return err
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
	}
	if !res.Passed {
		return errFailed
	}
	return nil
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
		Strict:       f.strict,
		NoSafetyGate: f.noSafetyGate,
		KeepSecrets:  f.keepSecrets,
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
