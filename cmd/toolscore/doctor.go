package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/report"
)

// doctorFlags are the flags of `toolscore doctor`. Exactly one target is
// checked per run.
type doctorFlags struct {
	contract string
	suite    string // see runDoctorSuite in harness.go
}

// newDoctorCmd builds `toolscore doctor (--contract FILE | --suite FILE)`.
func newDoctorCmd(s stdio) *cobra.Command {
	var f doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor (--contract FILE | --suite FILE)",
		Short: "Validate a contract, gold file or harness suite and describe it",
		Long: `Validate a contract (or a gold file) without grading anything.
With --suite, validate a harness suite and every contract in it, and list
its tasks.

Prints the number of required, optional and forbidden entries, each
alternatives group with its options, and the number of combinations that
eval will score. When the file is invalid, every problem is listed on
stderr, one per line, with its JSON pointer, and the exit status is 2.

A valid file may still hold what cannot do what its author meant: a
warning on stderr names each with its JSON pointer and line:column (a
gold file's repeated key or empty list, an alternatives group with one
option, a $one_of with no candidates, a tool name with invalid UTF-8);
the exit status stays 0.`,
		Example: "  toolscore doctor --contract examples/contracts/contract.json\n  toolscore doctor --suite examples/harness/suite.json",
		Args:    exactArgs(),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			switch {
			case f.contract != "" && f.suite != "":
				return errors.New("doctor checks one of --contract and --suite at a time")
			case f.suite != "":
				return runDoctorSuite(s, f.suite)
			case f.contract == "":
				return errors.New("doctor needs --contract FILE or --suite FILE")
			}
			return runDoctorContract(s, f.contract)
		}),
	}
	cmd.Flags().StringVar(&f.contract, "contract", "", "the contract or gold `FILE` to check (- for standard input)")
	cmd.Flags().StringVar(&f.suite, "suite", "", "the harness suite `FILE` (JSON or YAML) to check, every contract in it too")
	return cmd
}

// runDoctorContract validates the contract at path and describes it on
// s.out. An invalid contract is a runError with one line per problem.
func runDoctorContract(s stdio, path string) error {
	data, err := readInput(s, path)
	if err != nil {
		return err
	}
	name := displayName(path)
	c, err := engine.ParseContract(data)
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) && len(ve.Errors) > 0 {
			lines := fieldErrorLines(ve)
			for i, l := range lines {
				lines[i] = name + ": " + l
			}
			return &runError{lines: lines}
		}
		return failf("%s: %s", name, describeError(err))
	}
	if doc, err := jsondoc.Parse(data); err == nil { // ParseContract read it: always
		if c.Gold {
			warnRepeatedKeys(s, name, doc)
		}
		for _, w := range contractWarnings(doc, c.Gold) {
			fmt.Fprintf(s.err, "toolscore: %s: warning: %s\n", name, oneLine(w))
		}
	}
	return describeContract(s.text(), painter(s.color), name, c)
}

// warnRepeatedKeys writes a warning on s.err for each key a valid gold
// file repeats (its calls, a call's tool, args or an ignored key, inside
// args), which is read as Python Toolscore reads it, the last one
// counting.
func warnRepeatedKeys(s stdio, name string, doc jsondoc.Value) {
	for _, rk := range doc.AppendRepeatedKeys(nil) {
		line, col := jsondoc.LineCol(doc.Doc().Source(), rk.Offset)
		fline, fcol := jsondoc.LineCol(doc.Doc().Source(), rk.First)
		msg := fmt.Sprintf("%s: repeated key %q at line %d:%d (first at line %d:%d): the last one counts, as in Python Toolscore",
			rk.Value.Pointer(), rk.Key, line, col, fline, fcol)
		fmt.Fprintf(s.err, "toolscore: %s: warning: %s\n", name, oneLine(msg))
	}
}

// contractWarnings returns doctor's warnings for a valid contract or
// gold file (gold), read as doc, each "POINTER: WHAT at line L:C: WHY",
// section by section (required, alternatives, optional, forbidden), for
// what is accepted but cannot do what its author meant:
//
//   - a gold file with no calls ([] or {"calls": []}), which expects
//     nothing;
//   - an alternatives group with one option, which is no choice;
//   - a $one_of matcher with no candidates, which matches nothing;
//   - a tool name holding invalid UTF-8 or a lone surrogate escape,
//     which reads as U+FFFD (as encoding/json reads it).
func contractWarnings(doc jsondoc.Value, gold bool) []string {
	w := warner{src: doc.Doc().Source()}
	if gold {
		list := doc
		if doc.Kind() == jsondoc.Object {
			list = doc.Get("calls")
		}
		if list.Len() == 0 {
			w.add(list, list.Offset(), "gold file with no expected calls",
				"it expects nothing, so a trace without calls scores 100% and any call makes it 0% with the default weights (every call is extra)")
		}
		for _, el := range list.Elems() {
			w.call(el, argsNeverMatch)
		}
		return w.out
	}
	for _, el := range doc.Get("required").Elems() {
		if g := el.Get("alternatives"); g.Exists() && !g.IsNull() {
			w.group(el)
		} else {
			w.call(el, argsNeverMatch)
		}
	}
	for _, el := range doc.Get("alternatives").Elems() {
		w.group(el)
	}
	for _, el := range doc.Get("optional").Elems() {
		w.call(el, "the optional entry never matches: a call of it is never left out of the score")
	}
	for _, el := range doc.Get("forbidden").Elems() {
		w.call(el, "the rule never applies")
	}
	return w.out
}

// argsNeverMatch is what an empty $one_of does to an expected call.
const argsNeverMatch = "the expected call's arguments never match"

// warner collects contractWarnings' warnings for the document text src.
type warner struct {
	src string
	out []string
}

// add records the warning "POINTER: what at line L:C: why" for the value
// v, located at the byte offset off of the text.
func (w *warner) add(v jsondoc.Value, off int, what, why string) {
	ptr := v.Pointer()
	if ptr == "" {
		ptr = "/"
	}
	line, col := jsondoc.LineCol(w.src, off)
	w.out = append(w.out, fmt.Sprintf("%s: %s at line %d:%d: %s", ptr, what, line, col, why))
}

// group checks an alternatives group and its options' calls.
func (w *warner) group(g jsondoc.Value) {
	opts := g.Get("alternatives")
	if opts.Len() == 1 {
		what := "alternatives group with one option"
		switch id := g.Get("id"); id.Kind() {
		case jsondoc.String:
			what = fmt.Sprintf("alternatives group %q with one option", id.Text())
		case jsondoc.Number:
			what = "alternatives group " + id.Raw() + " with one option"
		}
		w.add(opts, opts.Offset(), what, "it is no choice, its calls are simply required steps")
	}
	for _, opt := range opts.Elems() {
		if opt.Kind() != jsondoc.Array {
			w.call(opt, argsNeverMatch)
			continue
		}
		for _, el := range opt.Elems() {
			w.call(el, argsNeverMatch)
		}
	}
}

// call checks an expected call (or a forbidden rule): its tool name, and
// its args' matchers, an empty $one_of having the effect never.
func (w *warner) call(c jsondoc.Value, never string) {
	if tool := c.Get("tool"); tool.Kind() == jsondoc.String {
		if i, what, ok := replacedAt(tool.Raw()); ok {
			w.add(tool, tool.Offset()+i, "tool name with "+what,
				"it reads as U+FFFD (as encoding/json reads it), so it matches a trace's tool name with U+FFFD or any invalid UTF-8 there")
		}
	}
	if args := c.Get("args"); args.Kind() == jsondoc.Object {
		w.args(args, never, false)
	}
}

// args checks the expected arguments v (at any depth) for a $one_of
// with no candidates: never is what that does to the call, unless it is
// itself a candidate of a $one_of (candidate).
func (w *warner) args(v jsondoc.Value, never string, candidate bool) {
	switch v.Kind() {
	case jsondoc.Object:
		if v.Len() == 1 && v.HasKeyPrefix("$") {
			for op, arg := range v.Members() {
				if op != "$one_of" || arg.Kind() != jsondoc.Array {
					w.args(arg, never, candidate)
					continue
				}
				if arg.Len() == 0 {
					why := "it matches no value, so " + never
					if candidate {
						why = "it matches no value, a candidate that never counts"
					}
					w.add(arg, arg.Offset(), "$one_of with no candidates", why)
				}
				for _, el := range arg.Elems() {
					w.args(el, never, true)
				}
			}
			return
		}
		for _, m := range v.Members() {
			w.args(m, never, candidate)
		}
	case jsondoc.Array:
		for _, el := range v.Elems() {
			w.args(el, never, candidate)
		}
	}
}

// replacedAt finds the first place in the JSON string literal raw that
// reads as U+FFFD without saying so: a byte that is not UTF-8, or a
// \u escape of a surrogate outside a pair. It returns its offset in raw
// and what it is ("invalid UTF-8 (byte 0xff)", "a lone surrogate
// (\ud800)").
func replacedAt(raw string) (int, string, bool) {
	hex := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range raw[i+2 : i+6] {
			switch {
			case '0' <= c && c <= '9':
				r = r<<4 | (c - '0')
			case 'a' <= c && c <= 'f':
				r = r<<4 | (c - 'a' + 10)
			case 'A' <= c && c <= 'F':
				r = r<<4 | (c - 'A' + 10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			r, ok := hex(i)
			if !ok {
				i += 2 // a one-character escape
				continue
			}
			if utf16.IsSurrogate(r) {
				if lo, ok := hex(i + 6); ok && r < 0xdc00 && 0xdc00 <= lo && lo <= 0xdfff {
					i += 12 // a pair
					continue
				}
				return i, "a lone surrogate (" + raw[i:i+6] + ")", true
			}
			i += 6
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(raw[i:])
			if r == utf8.RuneError && size == 1 {
				return i, fmt.Sprintf("invalid UTF-8 (byte %#02x)", c), true
			}
			i += size
		default:
			i++
		}
	}
	return 0, "", false
}

// describeContract prints what doctor knows about a valid contract.
func describeContract(w io.Writer, p painter, name string, c *engine.Contract) error {
	var b strings.Builder
	gs := groups(c)
	if c.Gold {
		fmt.Fprintf(&b, "%s: %s\n", name, p.paint("valid gold file", sgrGreen))
	} else {
		fmt.Fprintf(&b, "%s: %s\n", name, p.paint(fmt.Sprintf("valid contract v%d", c.Version), sgrGreen))
	}
	if c.Description != "" {
		fmt.Fprintf(&b, "%-13s %s\n", "Description", c.Description)
	}
	if len(c.IgnoredKeys) > 0 {
		fmt.Fprintf(&b, "%-13s %s\n", "Ignored", ignoredKeys(c.IgnoredKeys))
		for _, k := range c.IgnoredKeys {
			fmt.Fprintf(&b, "  %s\n", k)
		}
	}
	required := fmt.Sprintf("%d", c.RequiredCount())
	if len(gs) > 0 {
		required += fmt.Sprintf(" (%d alternatives group%s)", len(gs), plural(len(gs)))
	}
	fmt.Fprintf(&b, "%-13s %s\n", "Required", required)
	fmt.Fprintf(&b, "%-13s %d\n", "Optional", len(c.Optional))
	fmt.Fprintf(&b, "%-13s %d\n", "Forbidden", len(c.Forbidden))
	fmt.Fprintf(&b, "%-13s %d\n", "Combinations", c.Combinations())
	if c.MinScore != nil {
		fmt.Fprintf(&b, "%-13s %s\n", "Min score", fmtNum(*c.MinScore))
	} else {
		fmt.Fprintf(&b, "%-13s %s (default)\n", "Min score", fmtNum(engine.DefaultMinScore))
	}
	if len(c.Weights) > 0 {
		keys := make([]string, 0, len(c.Weights))
		for k := range c.Weights {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + fmtNum(c.Weights[k])
		}
		fmt.Fprintf(&b, "%-13s %s (merged over the defaults)\n", "Weights", strings.Join(keys, ", "))
	}
	for i, g := range gs {
		label := report.GroupName(g, i)
		if g.ID != "" {
			label = fmt.Sprintf("%s (group %d)", g.ID, i)
		}
		fmt.Fprintf(&b, "\n%s %s: %d option%s\n", p.bold("Alternatives"), label, len(g.Options), plural(len(g.Options)))
		for k := range g.Options {
			fmt.Fprintf(&b, "  %s\n", report.OptionLabel(g, k))
		}
	}
	if len(c.Forbidden) > 0 {
		fmt.Fprintf(&b, "\n%s\n", p.bold("Forbidden"))
		for _, f := range c.Forbidden {
			line := "  " + f.Tool
			if f.Reason != "" {
				line += "  " + p.dim(f.Reason)
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
