package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Exit statuses.
const (
	exitOK    = 0 // PASS, or the command succeeded
	exitFail  = 1 // the verdict is FAIL
	exitError = 2 // bad usage or bad input
)

// stdio is what a command reads and writes. Tests build one over buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	// color enables ANSI colours on out; set only when out is a terminal
	// and NO_COLOR is unset or empty (https://no-color.org).
	color bool
	// now reads the clock for the durations a command reports; nil means
	// time.Now.
	now func() time.Time
	// getenv reads the environment (DATABASE_URL, TOOLSCORE_API_KEY);
	// nil reads nothing.
	getenv func(string) string
}

// clock returns the current time from s.now, else time.Now.
func (s stdio) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// env returns the environment variable name, "" when unset.
func (s stdio) env(name string) string {
	if s.getenv == nil {
		return ""
	}
	return s.getenv(name)
}

// newStdio wraps the process's streams; noColor is the NO_COLOR variable.
func newStdio(in *os.File, out, errw *os.File, noColor string) stdio {
	return stdio{
		in:     in,
		out:    out,
		err:    errw,
		color:  colorEnabled(term.IsTerminal(int(out.Fd())), noColor),
		getenv: os.Getenv,
	}
}

// colorEnabled decides whether to colour the output: only on a terminal,
// and never when NO_COLOR is set to a non-empty value.
func colorEnabled(terminal bool, noColor string) bool {
	return terminal && noColor == ""
}

// secretScanner returns the process's secret scanner (the default one,
// gitleaks' rules), made on first use: every evaluation a command runs
// shares it, and the rules it builds.
var secretScanner = sync.OnceValue(func() engine.SecretScanner { return secrets.New() })

// warmSecretScanner has the secret scanner build what its first scan of
// any text builds (its keyword automaton, a few milliseconds on one core
// that every grading goroutine would wait for), by scanning one text that
// holds no keyword (so no rule is built): a batch calls it on a goroutine
// of its own while it reads the expectation and the first traces, and
// waits for it before it returns.
func warmSecretScanner() {
	sc := secretScanner()
	n := 32
	if m, ok := sc.(secretscan.MinTextLen); ok {
		n = max(n, m.MinTextLen())
	}
	_, _ = sc.ScanSecrets(context.Background(), []string{strings.Repeat("-", n)})
}

// errFailed is returned by a command whose verdict is FAIL: exit status 1,
// nothing printed on stderr.
var errFailed = errors.New("verdict FAIL")

// runError is an error raised while a command ran (bad input, bad flag
// values) or a flag cobra could not parse, as opposed to a usage error
// found by cobra before it ran (wrong number of arguments, unknown
// command), which also prints the usage. Each line is printed on stderr prefixed with "toolscore: ".
type runError struct {
	lines []string
}

func (e *runError) Error() string { return strings.Join(e.lines, "\n") }

// failf returns a one-line runError.
func failf(format string, args ...any) error {
	return &runError{lines: []string{fmt.Sprintf(format, args...)}}
}

// oneLine is s as one line of printable text: line breaks and other
// control characters (which may come from a trace: a key, a tool name)
// are written as Go escapes (\n, \r, \t, \x1b, \u0085), so a message
// stays one line on stderr, and a CI log or terminal reads no command or
// escape sequence in it.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // '\n', '\x1b', '\u0085'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// run executes the toolscore command line args (without the program name)
// and returns the exit status. It never panics on bad input and never
// calls os.Exit, so tests run it in-process.
func run(ctx context.Context, args []string, s stdio) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errFailed) {
		return exitFail
	}
	var re *runError
	if errors.As(err, &re) {
		for _, l := range re.lines {
			fmt.Fprintf(s.err, "toolscore: %s\n", oneLine(l))
		}
		return exitError
	}
	// A usage error: say what is wrong, then how to call the command.
	fmt.Fprintf(s.err, "toolscore: %v\n\n%s", err, cmd.UsageString())
	return exitError
}

// newRootCmd builds the command tree writing to s.
func newRootCmd(s stdio) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolscore",
		Short: "Grade an LLM agent's tool calls against a gold file or a Contract v2",
		Long: `toolscore grades the tool calls of an LLM agent (a trace, in any common
format) against a gold file or a Contract v2 and gives a score, a grade,
a PASS/FAIL verdict, evidence checks and the top issues to fix.

Exit status: 0 PASS (or success), 1 FAIL, 2 error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// No shell-completion command: nothing in toolscore needs it yet.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	// A flag cobra cannot parse (a bad value, an unknown flag, a missing
	// value), on any command, is one line naming the flag and a hint,
	// not the whole usage: the error is a runError, which run prints
	// without the usage.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &runError{lines: []string{err.Error(), "see " + cmd.CommandPath() + " --help"}}
	})
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.AddCommand(newEvalCmd(s), newDoctorCmd(s), newInspectCmd(s), newHarnessCmd(s), newRegradeCmd(s), newContractCmd(s), newKeysCmd(s), newVersionCmd(s))
	return root
}

// runE adapts a command body to cobra: every error it returns, except
// errFailed, is a runError (printed without the usage).
func runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := f(cmd, args)
		var re *runError
		if err == nil || errors.Is(err, errFailed) || errors.As(err, &re) {
			return err
		}
		return &runError{lines: []string{err.Error()}}
	}
}

// exactArgs is a cobra.PositionalArgs that wants exactly the named
// arguments and says which ones are missing.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == len(names) {
			return nil
		}
		if len(names) == 0 {
			return fmt.Errorf("%s takes no arguments, got %d (%s)", cmd.Name(), len(args), strings.Join(args, " "))
		}
		return fmt.Errorf("%s takes %d argument%s (%s), got %d",
			cmd.Name(), len(names), plural(len(names)), strings.Join(names, " "), len(args))
	}
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// reportFile is a report flag and the file it names ("" when the flag is
// not given).
type reportFile struct{ flag, path string }

// distinctReportFiles returns an error naming both flags when two of the
// given report flags name the same file (the same path once made
// absolute, or an existing file reached by two paths): the second report
// would overwrite the first.
func distinctReportFiles(files ...reportFile) error {
	for i, a := range files {
		if a.path == "" {
			continue
		}
		for _, b := range files[i+1:] {
			if b.path != "" && sameFile(a.path, b.path) {
				return failf("%s and %s name the same file %q: each report needs its own file", a.flag, b.flag, b.path)
			}
		}
	}
	return nil
}

// sameFile reports whether paths a and b name one file: equal absolute
// paths, or two existing paths to the same file (os.SameFile).
func sameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
