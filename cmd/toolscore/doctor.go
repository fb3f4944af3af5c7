package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

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
stderr, one per line, with its JSON pointer, and the exit status is 2.`,
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
	if c.Gold {
		warnRepeatedKeys(s, name, data)
	}
	return describeContract(s.text(), painter(s.color), name, c)
}

// warnRepeatedKeys writes a warning on s.err for each key a valid gold
// file repeats (its calls, a call's tool, args or an ignored key, inside
// args), which is read as Python Toolscore reads it, the last one
// counting.
func warnRepeatedKeys(s stdio, name string, data []byte) {
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return // ParseContract read it: cannot happen
	}
	for _, rk := range doc.AppendRepeatedKeys(nil) {
		line, col := jsondoc.LineCol(doc.Doc().Source(), rk.Offset)
		fline, fcol := jsondoc.LineCol(doc.Doc().Source(), rk.First)
		msg := fmt.Sprintf("%s: repeated key %q at line %d:%d (first at line %d:%d): the last one counts, as in Python Toolscore",
			rk.Value.Pointer(), rk.Key, line, col, fline, fcol)
		fmt.Fprintf(s.err, "toolscore: %s: warning: %s\n", name, oneLine(msg))
	}
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
