package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
)

// maxValueRunes bounds how much of a result or argument text inspect's
// human output shows per call; --json shows everything.
const maxValueRunes = 200

// maxSecretsListed bounds how many redacted secrets the human output names;
// --json lists them all.
const maxSecretsListed = 5

// inspectFlags are the flags of `toolscore inspect`.
type inspectFlags struct {
	format      string
	json        bool
	keepSecrets bool
}

// newInspectCmd builds `toolscore inspect [--format F] [--json]
// [--keep-secrets] TRACE`.
func newInspectCmd(s stdio) *cobra.Command {
	var f inspectFlags
	cmd := &cobra.Command{
		Use:   "inspect TRACE",
		Short: "Show how a trace is read: its format, why, and the normalised calls",
		Long: `Read TRACE (a file, or - for standard input) as eval would and print the
detected format, why it was chosen, the normalised tool calls (tool,
arguments, id, result, error) and the final answer.

Secrets that eval's credentials check finds are replaced by
[REDACTED:<rule>], as in eval's output, and listed; --keep-secrets shows
them (local debugging only).

--json prints {"format", "reason", "calls": [{"tool", "args", "id",
"result", "error", "args_raw"?, "args_error"?}], "final_answer",
"secrets"?}: args_raw and args_error are present for calls whose
arguments could not be read (args is then null), secrets (the credentials
check's findings, values masked) when something was redacted.`,
		Example: "  toolscore inspect examples/contracts/trace.json\n  toolscore inspect --json --format anthropic run.json",
		Args:    exactArgs("TRACE"),
		RunE: runE(func(c *cobra.Command, args []string) error {
			return runInspect(c.Context(), s, args[0], f)
		}),
	}
	cmd.Flags().StringVar(&f.format, "format", "auto", "trace format: "+strings.ReplaceAll(formatList(), ", ", "|"))
	cmd.Flags().BoolVar(&f.json, "json", false, "print the normalised trace as JSON")
	cmd.Flags().BoolVar(&f.keepSecrets, "keep-secrets", false, "do not redact detected secrets in the output (local debugging only)")
	return cmd
}

// inspectCall is one normalised call in `inspect --json` output. Absent
// id, result and error are null; args_raw and args_error are present only
// for a call whose arguments could not be read.
type inspectCall struct {
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"`
	ID        *string        `json:"id"`
	Result    any            `json:"result"`
	Error     *string        `json:"error"`
	ArgsRaw   string         `json:"args_raw,omitempty"`
	ArgsError string         `json:"args_error,omitempty"`
}

// inspectOutput is the `inspect --json` document.
type inspectOutput struct {
	Format string `json:"format"`
	Reason string `json:"reason"`
	// Warning says that the trace has no calls although the document
	// holds what looks like tool calls (format.Parsed.Warning); absent
	// otherwise.
	Warning     string        `json:"warning,omitempty"`
	Calls       []inspectCall `json:"calls"`
	FinalAnswer *string       `json:"final_answer"`
	// Secrets are the redacted secrets (masked), absent when none was.
	Secrets []engine.Finding `json:"secrets,omitempty"`
}

// runInspect reads the trace at path and prints how it was read.
func runInspect(ctx context.Context, s stdio, path string, f inspectFlags) error {
	if err := checkFormat(f.format); err != nil {
		return err
	}
	p, err := loadTrace(s, path, f.format)
	if err != nil {
		return err
	}
	var secrets []engine.Finding
	if !f.keepSecrets {
		p.Trace, secrets, err = engine.RedactTrace(ctx, p.Trace, secretScanner())
		if err != nil {
			return failf("secret scan: %v", err)
		}
	}
	if f.json {
		return writeJSON(s, newInspectOutput(p, secrets))
	}
	return writeInspect(s.text(), painter(s.color), p, secrets)
}

// newInspectOutput converts a parsed trace (and the secrets redacted in
// it) to the --json shape.
func newInspectOutput(p *format.Parsed, secrets []engine.Finding) inspectOutput {
	out := inspectOutput{
		Format:      p.Format,
		Reason:      p.Reason,
		Warning:     p.Warning,
		Calls:       make([]inspectCall, len(p.Trace.Calls)),
		FinalAnswer: p.Trace.FinalAnswer,
		Secrets:     secrets,
	}
	for i := range p.Trace.Calls {
		c := &p.Trace.Calls[i]
		args, _ := c.Args.Any().(map[string]any)
		ic := inspectCall{Tool: c.Tool, Args: args, Result: c.Result.Any(), ArgsRaw: c.ArgsRaw, ArgsError: c.ArgsError}
		if c.ID != "" {
			ic.ID = &c.ID
		}
		if c.Error != "" {
			e := string(c.Error)
			ic.Error = &e
		}
		out.Calls[i] = ic
	}
	return out
}

// writeInspect prints a parsed trace (and the secrets redacted in it) for
// a person.
func writeInspect(w io.Writer, p painter, pt *format.Parsed, secrets []engine.Finding) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %s\n", "Format", p.bold(pt.Format))
	fmt.Fprintf(&b, "%-13s %s\n", "Reason", pt.Reason)
	fmt.Fprintf(&b, "%-13s %d\n", "Calls", len(pt.Trace.Calls))
	if len(secrets) > 0 {
		where := make([]string, len(secrets))
		for i, f := range secrets {
			switch {
			case f.Call < 0:
				where[i] = f.Rule + " in the final answer"
			case f.Path != "":
				where[i] = fmt.Sprintf("%s in #%d %s", f.Rule, f.Call, f.Path)
			default:
				where[i] = fmt.Sprintf("%s in #%d args_raw", f.Rule, f.Call)
			}
		}
		list := strings.Join(where, ", ")
		if len(where) > maxSecretsListed {
			list = fmt.Sprintf("%s and %d more", strings.Join(where[:maxSecretsListed], ", "), len(where)-maxSecretsListed)
		}
		fmt.Fprintf(&b, "%-13s %s\n", "Secrets", p.paint(fmt.Sprintf("%d redacted (%s); --keep-secrets shows them", len(secrets), list), sgrRed))
	}
	for i := range pt.Trace.Calls {
		c := &pt.Trace.Calls[i]
		head := fmt.Sprintf("\n#%d %s", i, p.bold(flat(c.Tool)))
		if c.ID != "" {
			head += "  " + p.dim("id "+c.ID)
		}
		b.WriteString(head + "\n")
		switch {
		case c.ArgsError != "":
			fmt.Fprintf(&b, "  %-10s %s\n", "args", p.paint("unreadable: "+c.ArgsError, sgrRed))
			fmt.Fprintf(&b, "  %-10s %s\n", "args_raw", clip(c.ArgsRaw))
		default:
			fmt.Fprintf(&b, "  %-10s %s\n", "args", clip(compactJSON(argsOrEmpty(c))))
		}
		if c.HasResult() {
			fmt.Fprintf(&b, "  %-10s %s\n", "result", clip(resultText(c.Result.Any())))
		}
		if c.Failed() {
			fmt.Fprintf(&b, "  %-10s %s\n", "error", p.paint(clip(string(c.Error)), sgrRed))
		}
	}
	if pt.Trace.FinalAnswer != nil {
		fmt.Fprintf(&b, "\n%-13s %s\n", "Final answer", clip(*pt.Trace.FinalAnswer))
	} else {
		fmt.Fprintf(&b, "\n%-13s %s\n", "Final answer", p.dim("none"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// resultText shows a string result as it is (most formats carry tool
// output as text) and any other result as compact JSON.
func resultText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

// argsOrEmpty is the call's arguments, {} when it has none (SPEC section 1).
func argsOrEmpty(c *engine.ToolCall) any {
	if !c.Args.Exists() {
		return map[string]any{}
	}
	return c.Args.Any()
}

// compactJSON encodes v on one line; a value that cannot be encoded is
// shown with %v.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// clip shortens s to about maxValueRunes runes, on one line, saying how
// much was left out (never cutting less than the note would take).
func clip(s string) string {
	s = strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎").Replace(s)
	const slack = 24 // about the length of the note
	if utf8.RuneCountInString(s) <= maxValueRunes+slack {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (%d more characters)", string(r[:maxValueRunes]), len(r)-maxValueRunes)
}
