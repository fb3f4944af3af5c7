package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/engine"
)

// contractInitFlags are the flags of `toolscore contract init`.
type contractInitFlags struct {
	format   string
	optional []string
	loose    bool
	output   string
}

// newContractCmd builds `toolscore contract` and its subcommand init.
func newContractCmd(s stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "contract",
		Short: "Write contracts",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("contract needs a subcommand: init")
		},
	}
	var f contractInitFlags
	initCmd := &cobra.Command{
		Use:   "init TRACE",
		Short: "Write a Contract v2 from a good run's trace",
		Long: `Write a Contract v2 from TRACE (a file in any supported format, or -
for standard input): every call as a required entry, in the trace's order,
with its arguments. Review it, commit it, and grade every later run
against it: the snapshot workflow.

  --optional TOOL  calls of TOOL become one optional entry (any arguments)
                   instead of required ones (repeatable)
  --loose          arguments as the matchers a person would write instead
                   of exact values: {"$type": "string"} for ids, UUIDs and
                   timestamps, {"$regex": "^FL-\\d+$"} for codes like
                   FL-204, {"$approx": x} for fractional numbers,
                   {"$type": "integer"} or "number" for numeric ids

A secret found in the arguments (the credentials check's rules) is never
written: it becomes {"$type": "string"}, and a note on stderr says where.
A call whose arguments could not be read, or hold a key starting with $
(a contract would read the object as a matcher), is required without
arguments; a call without a tool name is an error.

The contract goes to standard output, or to --output FILE; toolscore
doctor --contract accepts it. A trace with no calls cannot seed a
contract: exit status 2.`,
		Example: `  toolscore contract init examples/contracts/trace.json --optional get_weather > contract.json
  toolscore contract init --loose run.json -o contract.json && toolscore doctor --contract contract.json`,
		Args: exactArgs("TRACE"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return runContractInit(cmd.Context(), s, args[0], f)
		}),
	}
	fl := initCmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.format, "format", "auto", "trace format: "+strings.ReplaceAll(formatList(), ", ", "|"))
	fl.StringArrayVar(&f.optional, "optional", nil, "make calls of `TOOL` one optional entry (repeatable)")
	fl.BoolVar(&f.loose, "loose", false, "write arguments as matchers ($type, $regex, $approx) instead of exact values")
	fl.StringVarP(&f.output, "output", "o", "", "write the contract to `FILE` instead of standard output")
	cmd.AddCommand(initCmd)
	return cmd
}

// seedContract is the JSON shape contract init writes, members in the
// order a reader expects.
type seedContract struct {
	ContractVersion int            `json:"contract_version"`
	Description     string         `json:"description"`
	Required        []seedCall     `json:"required"`
	Optional        []seedOptional `json:"optional,omitempty"`
	MinScore        float64        `json:"min_score"`
}

type seedCall struct {
	Tool string `json:"tool"`
	// Args is the arguments object (a map, empty for a call without
	// arguments); nil, and left out, when they could not be recorded.
	Args any `json:"args,omitempty"`
}

type seedOptional struct {
	Tool string `json:"tool"`
}

// runContractInit writes the contract seeded by the trace at path.
func runContractInit(ctx context.Context, s stdio, path string, f contractInitFlags) error {
	if err := checkFormat(f.format); err != nil {
		return err
	}
	for _, t := range f.optional {
		if strings.TrimSpace(t) == "" {
			return failf("--optional: a tool name cannot be empty")
		}
	}
	parsed, err := loadTrace(s, path, f.format)
	if err != nil {
		return err
	}
	name := displayName(path)
	calls := parsed.Trace.Calls
	if len(calls) == 0 {
		return failf("%s: the trace has no tool calls (%s): there is nothing to seed a contract with", name, parsed.Format)
	}
	for i := range calls {
		if calls[i].Tool == "" {
			return failf("%s: call #%d has no tool name: a contract cannot require it", name, i)
		}
	}
	redacted, findings, err := engine.RedactTrace(ctx, parsed.Trace, secretScanner())
	if err != nil {
		return failf("%s: secret scan: %v", name, err)
	}
	secretAt := map[int][]string{}
	for _, fd := range findings {
		if fd.Call >= 0 {
			secretAt[fd.Call] = append(secretAt[fd.Call], fd.Path)
		}
	}
	c := seedContract{ContractVersion: 2, MinScore: engine.DefaultMinScore}
	var notes, required, optional []string
	for i := range redacted.Calls {
		call := &redacted.Calls[i]
		if slices.Contains(f.optional, call.Tool) {
			if !slices.Contains(optional, call.Tool) {
				optional = append(optional, call.Tool)
			}
			continue
		}
		required = append(required, call.Tool)
		sc := seedCall{Tool: call.Tool}
		var dollar []string
		for k := range call.Args.Members() {
			if strings.HasPrefix(k, "$") {
				dollar = append(dollar, k)
			}
		}
		switch {
		case call.ArgsError != "":
			notes = append(notes, fmt.Sprintf("call #%d %s: its arguments could not be read (%s): required without arguments", i, call.Tool, call.ArgsError))
		case len(dollar) > 0:
			// A contract reads an object with such a key as a matcher, and
			// args cannot be one.
			notes = append(notes, fmt.Sprintf("call #%d %s: its arguments have a key starting with $ (%s), which a contract would read as a matcher: required without arguments", i, call.Tool, strings.Join(dollar, ", ")))
		default:
			args := map[string]any{}
			for k, v := range call.Args.Members() {
				args[k] = seedValue(k, v.Any(), f.loose)
			}
			sc.Args = args
		}
		for _, p := range secretAt[i] {
			notes = append(notes, fmt.Sprintf("call #%d %s %s: a secret, written as {\"$type\": \"string\"}", i, call.Tool, p))
		}
		c.Required = append(c.Required, sc)
	}
	for _, t := range f.optional {
		if !slices.Contains(optional, t) {
			optional = append(optional, t)
			notes = append(notes, fmt.Sprintf("--optional %s: the trace does not call it; it is optional all the same", t))
		}
	}
	for _, t := range optional {
		c.Optional = append(c.Optional, seedOptional{Tool: t})
	}
	if len(c.Required) == 0 {
		return failf("%s: every call is --optional: a contract needs a required call to grade a run against", name)
	}
	n := len(calls)
	c.Description = fmt.Sprintf("Recorded from %s (%s, %d call%s): %s required in this order", baseName(name), parsed.Format, n, plural(n), strings.Join(required, ", "))
	if len(optional) > 0 {
		c.Description += "; " + strings.Join(optional, ", ") + " optional"
	}
	if f.loose {
		c.Description += "; arguments as loose matchers"
	} else {
		c.Description += "; arguments exact"
	}
	c.Description += ". Review it before committing it."
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode the contract: %w", err)
	}
	if _, err := engine.ParseContract(buf.Bytes()); err != nil {
		return fmt.Errorf("the written contract does not parse (a bug): %s", describeError(err))
	}
	for _, note := range notes {
		fmt.Fprintf(s.err, "toolscore: note: %s\n", oneLine(note))
	}
	if f.output != "" {
		if err := writeFileWith(f.output, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return failf("--output: %v", err)
		}
		return nil
	}
	_, err = s.out.Write(buf.Bytes())
	return err
}

// baseName is the last element of a slash-separated path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Shapes that --loose recognises.
var (
	// codeRE is a code such as FL-204, INV_12 or A123: a capital prefix,
	// an optional separator, digits.
	codeRE      = regexp.MustCompile(`^([A-Z]{1,6})([-_]?)\d+$`)
	uuidRE      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$`)
	hexIDRE     = regexp.MustCompile(`^[0-9a-f]{16,}$`)
	idKeyRE     = regexp.MustCompile(`(^|_)(id|uuid|guid)$|[a-z]I[dD]$`)
)

// redactedMarker starts a value the engine redacted.
const redactedMarker = "[REDACTED:"

// seedValue is argument key's value v as the contract expects it: exact,
// or with loose a matcher for values that change from run to run. A
// redacted secret is always {"$type": "string"}.
func seedValue(key string, v any, loose bool) any {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, redactedMarker) {
			return map[string]any{"$type": "string"}
		}
		if !loose {
			return x
		}
		if m := codeRE.FindStringSubmatch(x); m != nil {
			return map[string]any{"$regex": "^" + regexp.QuoteMeta(m[1]+m[2]) + `\d+$`}
		}
		if uuidRE.MatchString(x) || timestampRE.MatchString(x) || hexIDRE.MatchString(x) || idKeyRE.MatchString(key) {
			return map[string]any{"$type": "string"}
		}
		return x
	case json.Number:
		if !loose {
			return x
		}
		integer := !strings.ContainsAny(string(x), ".eE")
		switch f, _ := strconv.ParseFloat(string(x), 64); {
		case idKeyRE.MatchString(key) && integer:
			return map[string]any{"$type": "integer"}
		case idKeyRE.MatchString(key):
			return map[string]any{"$type": "number"}
		case integer || math.IsInf(f, 0):
			// $approx takes a finite number: one beyond float64 stays
			// exact, as written.
			return x
		}
		return map[string]any{"$approx": x}
	case float64:
		if loose {
			return map[string]any{"$approx": x}
		}
		return x
	case map[string]any:
		if isMatcherLike(x) {
			// An argument object that reads as a matcher would be taken
			// for one: match it with $any instead of a wrong matcher.
			return map[string]any{"$any": true}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = seedValue(k, e, loose)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = seedValue(key, e, loose)
		}
		return out
	}
	return v
}

// isMatcherLike reports whether an object has a key starting with "$",
// which a contract reads as a matcher.
func isMatcherLike(m map[string]any) bool {
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}
